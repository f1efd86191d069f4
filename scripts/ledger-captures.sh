#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/idle_ledger.rs
# (tests/data/ledger/*.pcap.gz): time a connection spent that nobody lost
# to the network. Real Linux TCP and nginx, tcpdump in the client's
# namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   client-pause.pcap   a client that writes the first lines of a request,
#                       pauses 1.5 s (a person typing, an application
#                       building the rest), then ends it: nginx answers
#                       once the request is whole; the same connection
#                       then asks again without a pause
#   answer-whole.pcap   curl fetches a 64 KB file (the control)
#   answer-missed.pcap  the same capture, from which editcap removes
#                       the answer's first flight (its initial window of
#                       ten segments) from the capture, the client's ACKs
#                       of it kept (what a capture that drops packets, or
#                       one filtered to the packets with PSH, shows): the
#                       answer began where the capture cannot time it, and
#                       its first captured segment came a round trip later
#
# Needs root, ip, tcpdump, nginx, curl, editcap, tshark, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
extra_cleanup() {
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
}
relay_lab rtled$$ /tmp/rttdoc-ledger

mkdir -p "$work/www"
echo "hello from rttdoc's ledger fixture" > "$work/www/index.html"
head -c 65536 /dev/zero | tr '\0' 'q' > "$work/www/file-64k.bin"
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
  server { listen 10.81.2.1:8080; root $work/www; }
}
CONF
ip netns exec $S nginx -c "$work/nginx.conf"


# The client: a request's first lines, a pause, its end; then a second
# request at once, on the same connection (python's socket: the kernel's
# TCP, Nagle off so that each write leaves when written).
cat > "$work/pause.py" <<'PY'
import socket, sys, time
s = socket.create_connection(("10.81.2.1", 8080), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def answer():
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data
s.sendall(b"GET /index.html HTTP/1.1\r\nHost: rttdoc.test\r\n")
time.sleep(1.5)
s.sendall(b"Accept: */*\r\n\r\n")
answer()
s.sendall(b"GET /index.html HTTP/1.1\r\nHost: rttdoc.test\r\n\r\n")
answer()
s.close()
PY
relay_capture client-pause python3 "$work/pause.py"
gzip -9 -n -c "$work/client-pause.pcap" > "$out/client-pause.pcap.gz"

relay_capture answer-whole curl -s http://10.81.2.1:8080/file-64k.bin
gzip -9 -n -c "$work/answer-whole.pcap" > "$out/answer-whole.pcap.gz"
# The answer's first flight (its initial window, sent at once): the data
# segments that left within 5 ms of its first; the client's ACKs stay.
frames=$(tshark -r "$work/answer-whole.pcap" -Y 'tcp.srcport == 8080 && tcp.len > 0' \
  -T fields -e frame.number -e frame.time_relative |
  awk 'NR == 1 { t0 = $2 } $2 - t0 < 0.005 { printf "%s ", $1 }')
# shellcheck disable=SC2086
editcap "$work/answer-whole.pcap" "$work/answer-missed.pcap" $frames
gzip -9 -n -c "$work/answer-missed.pcap" > "$out/answer-missed.pcap.gz"
echo "removed the answer's first flight: frames $frames"
