#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/reordering.rs
# (tests/data/reorder/): a 2 MB download from nginx across a path of 20 ms
# each way whose relay holds every 40th data packet from port 80 back by
# 12 ms, then 70 ms, in turn (scripts/tun-delay.py, HOLD_EVERY): the
# packets behind each overtake it, as on a path that balances packets over
# links of unequal delay. Real Linux TCP at both ends, captured at the
# client by tcpdump. sent.txt is the relay's record of every data packet
# the server sent, in its order (IPv4 identification, raw sequence
# number, hold in ms, `original` or `resend`): the truth a capture at the
# client must be read back to. The held originals arrive late, and no
# analysis may call them re-sends; the kernel's own re-sends (a 70 ms hold
# is longer than the round trip, so the client's duplicate ACKs make the
# server send the bytes again) carry the same sequence numbers under new
# identifications.
#
# Needs root, ip, tcpdump, python3, nginx, curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtreo$$ /tmp/rttdoc-reorder
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }
mkdir -p "$work/www"
head -c 2000000 /dev/zero > "$work/www/zeros.bin"
chmod -R a+rX "$work/www"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  server {
    listen 10.81.2.1:80;
    root $work/www;
  }
}
CONF
ip netns exec "$S" nginx -c "$work/nginx.conf"
relay_listening 80
HOLD_EVERY=40 HOLD_PORT=80 HOLD_MS=12,70 HOLD_LOG="$work/sent.txt" \
  ip netns exec "$M" python3 "$here/tun-delay.py" ta tb 20 25 &
pids+=($!)
timeout 30 ip netns exec "$C" tcpdump -i c0 -s 0 -U -w "$work/reorder.pcap" tcp 2>/dev/null &
pids+=($!)
sleep 1
timeout 20 ip netns exec "$C" curl -s -o /dev/null http://10.81.2.1/zeros.bin
sleep 1
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
gzip -9 -n -c "$work/reorder.pcap" > "$out/reorder.pcap.gz"
gzip -9 -n -c "$work/sent.txt" > "$out/sent.txt.gz"
ls -l "$out/reorder.pcap.gz" "$out/sent.txt.gz"
