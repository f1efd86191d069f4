#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/pipelining.rs
# (tests/data/pipelining/nginx-pipelined.pcap.gz): HTTP/1.1 pipelining
# against nginx (sendfile and tcp_nopush on), real Linux TCP, tcpdump in
# the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# A Python client writes four GETs in one segment (20 KB, 6 bytes, 400 KB,
# then 6 bytes with `Connection: close`) and reads until nginx closes;
# then curl fetches three files one after another on one connection.
#
# Needs root, ip, tcpdump, python3, nginx and curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtpipe$$ /tmp/rttdoc-pipeline
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }
mkdir -p "$work/www"
head -c 20000 /dev/zero | tr '\0' p > "$work/www/a.txt"
echo small > "$work/www/b.txt"
head -c 400000 /dev/zero | tr '\0' q > "$work/www/c.txt"
cat > "$work/nginx.conf" <<CONF
daemon off; master_process off; pid $work/nginx.pid; error_log $work/nginx.err;
events {}
http { access_log off; sendfile on; tcp_nopush on; keepalive_timeout 5;
  server { listen 10.81.2.1:8080; root $work/www; } }
CONF
ip netns exec "$S" nginx -c "$work/nginx.conf" &
relay_listening 8080
cat > "$work/pipe.py" <<'PY'
import socket
s = socket.create_connection(("10.81.2.1", 8080))
heads = b"".join(b"GET /%s HTTP/1.1\r\nHost: x\r\n\r\n" % p for p in (b"a.txt", b"b.txt", b"c.txt"))
s.sendall(heads + b"GET /b.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
while s.recv(65536):
    pass
s.close()
PY
cat > "$work/http.sh" <<SH
python3 $work/pipe.py
curl -s -o /dev/null -o /dev/null -o /dev/null http://10.81.2.1:8080/c.txt http://10.81.2.1:8080/a.txt http://10.81.2.1:8080/b.txt
SH
relay_capture nginx-pipelined bash "$work/http.sh"
gzip -9 -n -c "$work/nginx-pipelined.pcap" > "$out/nginx-pipelined.pcap.gz"
ls -l "$out"
