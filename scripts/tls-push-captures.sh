#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/tls_push.rs
# (tests/data/mqtt/mqtt-tls.pcap.gz): Mosquitto's TLS listener (8883, a
# P-256 certificate made here) and its own clients, real Linux TCP,
# tcpdump in the clients' namespace, across a path of 20 ms each way
# (scripts/relay-path.sh). A subscriber at QoS 1 over TLS; five
# publishers over TLS from the same host, 0.7-1.2 s apart, each its own
# connection (CONNECT, PUBLISH at QoS 1, DISCONNECT): the broker pushes
# each message to the subscriber inside TLS, where its acknowledgments
# and the pushes are records of a size and a time, nothing more.
#
# Needs root, ip, tcpdump, python3, openssl and mosquitto (with
# mosquitto-clients).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rttlspush$$ /tmp/rttdoc-tls-push
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/key.pem" -out "$work/cert.pem" -days 30 -subj "/CN=10.81.2.1" \
  -addext "subjectAltName=IP:10.81.2.1" 2>/dev/null
chmod 644 "$work/key.pem" "$work/cert.pem"
printf 'listener 8883 10.81.2.1\ncertfile %s\nkeyfile %s\nallow_anonymous true\npersistence false\n' \
  "$work/cert.pem" "$work/key.pem" > "$work/mosquitto.conf"
chmod 644 "$work/mosquitto.conf"
ip netns exec "$S" mosquitto -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
# (Not in $pids: relay_capture stops those after the capture.)
relay_listening 8883

cat > "$work/workload.sh" <<SH
tls="-h 10.81.2.1 -p 8883 --cafile $work/cert.pem"
mosquitto_sub \$tls -t 'feed/#' -q 1 -C 5 > /dev/null &
sub=\$!
sleep 0.5
for pause in 0.7 1 0.8 1.2 0.9; do
  mosquitto_pub \$tls -t feed/a -m "after \$pause s" -q 1
  sleep \$pause
done
wait \$sub
SH
relay_capture mqtt-tls bash "$work/workload.sh"
relay_stop_servers
sleep 0.5
gzip -9 -n -c "$work/mqtt-tls.pcap" > "$out/mqtt-tls.pcap.gz"
ls -l "$out/mqtt-tls.pcap.gz"
