#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/downlink_queue.rs
# (tests/data/pageload/*.pcap.gz): a client whose downlink is a slow
# bottleneck with a deep queue (4 Mbit/s, 400 KB: 0.8 s of "bufferbloat"),
# 20 ms each way, at the client's and at the server's host (tcpdump on each
# host's own interface, the kernel's offloads as they are). Real Linux TCP,
# nginx, curl and python:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#      TUN <-> scripts/tun-delay.py (20 ms; 4 Mbit/s to the client) <-> TUN
#
#   pageload-SIDE   curl --parallel: 18 files of 60 KB over six keep-alive
#                   connections to nginx, as a browser loads a page. nginx
#                   answers each request at once; the answers queue at the
#                   bottleneck behind the other connections' data, so at
#                   the client each request waits seconds for its first
#                   byte: the client's own downlink, not the server.
#   think-SIDE      the control: one connection on the same path, three
#                   requests to a python server that works 150 ms before
#                   each 20 KB answer: the link is not saturated, and the
#                   wait is the server's.
#
# Needs root, ip, tcpdump, nginx, curl, python3, ethtool.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
tag=rtpl$$
C=$tag-c S=$tag-s M=$tag-m
work=$(mktemp -d /tmp/rttdoc-pageload.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}" ${slow_server:-}; do kill "$p" 2>/dev/null || true; done
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  for n in $C $S $M; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add $C; ip netns add $S; ip netns add $M
# tun-delay.py's B side is the server's: its traffic to the client passes
# the bottleneck.
relay_path 10.77 $C $S $M c0

mkdir -p "$work/www"
for i in $(seq 1 18); do head -c 60000 /dev/zero | tr '\0' 'a' > "$work/www/r$i.js"; done
cat > "$work/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  keepalive_requests 1000;
  server { listen 10.77.2.1:8080; root $work/www; }
}
CONF
ip netns exec $S nginx -c "$work/nginx.conf"
cat > "$work/slow-server.py" <<'PY'
import http.server, time
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        time.sleep(0.15)
        body = b"s" * 20000
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("10.77.2.1", 8081), Handler).serve_forever()
PY
timeout 120 ip netns exec $S python3 "$work/slow-server.py" & slow_server=$!

# One workload with the relay up and both hosts capturing: $1 name, then
# the curl arguments.
capture() {
  local name=$1; shift
  ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 40 0 0 4000 400000 & pids+=($!)
  timeout 40 ip netns exec $C tcpdump -i c0 -s 0 -U -w "$work/$name-client.pcap" tcp 2>/dev/null & pids+=($!)
  timeout 40 ip netns exec $S tcpdump -i s0 -s 0 -U -w "$work/$name-server.pcap" tcp 2>/dev/null & pids+=($!)
  sleep 1
  timeout 30 ip netns exec $C curl -s "$@" > /dev/null
  sleep 1
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  for side in client server; do
    gzip -9 -n -c "$work/$name-$side.pcap" > "$out/$name-$side.pcap.gz"
  done
}

urls=()
for i in $(seq 1 18); do urls+=("http://10.77.2.1:8080/r$i.js"); done
capture pageload --parallel --parallel-max 6 "${urls[@]}"
capture think http://10.77.2.1:8081/a http://10.77.2.1:8081/b http://10.77.2.1:8081/c
ls -l "$out" >&2
