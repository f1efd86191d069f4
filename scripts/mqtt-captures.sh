#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/mqtt.rs
# (tests/data/mqtt/*.pcap.gz): the Mosquitto broker and its own clients
# (mosquitto_sub, mosquitto_pub), real Linux TCP, tcpdump in the clients'
# namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   mqtt-pubsub.pcap    Mosquitto as installed (Nagle's algorithm on):
#                       a subscriber at QoS 1 with a 5 s keep-alive; one
#                       publisher after another, each its own connection:
#                       QoS 0, 1 and 2 messages 0.7-1 s apart, then after
#                       5 s a retained message, a 200 KB message, a last
#                       one; then a second subscriber to the retained
#                       message's topic, which the broker sends right
#                       after the SUBACK
#   mqtt-nodelay.pcap   the same workload with set_tcp_nodelay true
#
# Needs root, ip, tcpdump, python3 and mosquitto (with mosquitto-clients).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtmqtt$$ /tmp/rttdoc-mqtt
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }

head -c 200000 /dev/zero | tr '\0' x > "$work/big"
chmod 644 "$work/big"
cat > "$work/pubsub.sh" <<SH
H=10.81.2.1
mosquitto_sub -h \$H -t 'feed/#' -q 1 -k 5 -C 6 > /dev/null &
sub=\$!
sleep 0.5
mosquitto_pub -h \$H -t feed/a -m hello -q 0
sleep 0.7
mosquitto_pub -h \$H -t feed/b -m world -q 1
sleep 0.9
mosquitto_pub -h \$H -t feed/c -m exactly-once -q 2
sleep 5
mosquitto_pub -h \$H -t feed/r -m retained -q 1 -r
mosquitto_pub -h \$H -t feed/big -f $work/big -q 1
sleep 0.3
mosquitto_pub -h \$H -t feed/z -m last -q 1
wait \$sub || true
mosquitto_sub -h \$H -t feed/r -C 1 > /dev/null
SH

# The capture ($1) of the workload against Mosquitto with the settings
# $2, kept gzipped.
capture() {
  printf 'listener 1883 10.81.2.1\nallow_anonymous true\npersistence false\n%s\n' "$2" \
    > "$work/$1.conf"
  chmod 644 "$work/$1.conf"
  ip netns exec "$S" mosquitto -c "$work/$1.conf" > "$work/$1.log" 2>&1 &
  # (Not in $pids: relay_capture stops those after each capture.)
  relay_listening 1883
  relay_capture "$1" bash "$work/pubsub.sh"
  relay_stop_servers
  sleep 0.5
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}

capture mqtt-pubsub ''
capture mqtt-nodelay 'set_tcp_nodelay true'
ls -l "$out"
