#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/amqp.rs
# (tests/data/amqp/rabbitmq-consume.pcap.gz): RabbitMQ and librabbitmq's
# tools (amqp-tools), real Linux TCP, tcpdump in the clients' namespace,
# across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# The workload, each tool its own connection: amqp-declare-queue;
# amqp-consume acknowledging each message, with 1 s heartbeats, while
# amqp-publish sends five messages 0.7-1 s apart; amqp-get of the empty
# queue (Basic.Get-Empty), a publish, amqp-get again (Basic.Get-Ok and the
# message); amqp-consume in no-ack mode for two more messages.
#
# Needs root, ip, tcpdump, python3, rabbitmq-server and amqp-tools.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtamqp$$ /tmp/rttdoc-amqp
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }

relay_rabbitmq '[]' ''
relay_listening 5672 900

cat > "$work/workload.sh" <<'SH'
H=10.81.2.1
amqp-declare-queue -s $H -q test > /dev/null
amqp-consume -s $H -q test -c 5 --heartbeat 1 cat > /dev/null &
consumer=$!
sleep 0.5
for pause in 0.7 1 0.8 1 0.9; do
  amqp-publish -s $H -r test -b "message after $pause s"
  sleep $pause
done
wait $consumer
amqp-get -s $H -q test || true
amqp-publish -s $H -r test -b "to get"
amqp-get -s $H -q test
amqp-consume -s $H -q test -A -c 2 cat > /dev/null &
consumer=$!
sleep 0.5
amqp-publish -s $H -r test -b one
sleep 0.6
amqp-publish -s $H -r test -b two
wait $consumer
SH
relay_capture rabbitmq-consume bash "$work/workload.sh"
relay_stop_servers
sleep 0.5
gzip -9 -n -c "$work/rabbitmq-consume.pcap" > "$out/rabbitmq-consume.pcap.gz"
ls -l "$out"
