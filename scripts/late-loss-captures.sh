#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/late_loss.rs
# (tests/data/semantics/late-loss.pcap.gz): a 4 MB download from nginx
# (a file of zeros, so the capture compresses) across a path of 20 ms each
# way whose relay drops every 300th data packet from port 80
# (scripts/tun-delay.py): real Linux TCP recovering real losses, most of
# them past the first 2048 segments rttdoc keeps of a connection, some
# inside them.
#
# Needs root, ip, tcpdump, python3, nginx, curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtloss$$ /tmp/rttdoc-late-loss
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }
mkdir -p "$work/www"
head -c 4000000 /dev/zero > "$work/www/zeros.bin"
chmod -R a+rX "$work/www"
cat > "$work/nginx.conf" <<EOF
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
EOF
ip netns exec "$S" nginx -c "$work/nginx.conf"
relay_listening 80
ip netns exec "$M" python3 "$here/tun-delay.py" ta tb 20 25 300 80 &
pids+=($!)
timeout 30 ip netns exec "$C" tcpdump -i c0 -s 0 -U -w "$work/late-loss.pcap" tcp 2>/dev/null &
pids+=($!)
sleep 1
timeout 20 ip netns exec "$C" curl -s -o /dev/null http://10.81.2.1/zeros.bin
sleep 1
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
gzip -9 -n -c "$work/late-loss.pcap" > "$out/late-loss.pcap.gz"
ls -l "$out/late-loss.pcap.gz"
