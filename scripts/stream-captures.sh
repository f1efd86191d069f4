#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/stream.rs
# (tests/data/stream/*.pcap.gz): responses a server streams as it has
# them (server-sent events, a language model's tokens) from the backends
# of scripts/stream-backends.py, directly and behind nginx (proxy_buffering
# off, which passes each piece on at once with TCP_NODELAY), curl -N as
# the client; real Linux TCP, tcpdump on the client's interface, across a
# path of 20 ms each way (scripts/relay-path.sh):
#
#   sse-python.pcap    http.server (Nagle on): 300 ms before the head,
#                      then 30 events 80 ms apart, the first written
#                      right behind the head
#   sse-nginx.pcap     the same backend behind nginx
#   tokens-nginx.pcap  asyncio (Nagle off) behind nginx: 250 ms, then 120
#                      events at irregular gaps of 12-60 ms
#   tokens-tls.pcap    the same through nginx over TLS 1.3
#   upload-curl.pcap   the other way: curl -T - uploads what a shell loop
#                      writes to its pipe, 20 lines 100 ms apart, as a
#                      chunked PUT to http.server (its `Expect:
#                      100-continue` answered)
#
# Needs root, ip, tcpdump, python3, nginx, curl, openssl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtstream$$ /tmp/rttdoc-stream
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
cat > "$work/nginx.conf" <<EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  proxy_http_version 1.1;
  proxy_buffering off;
  server {
    listen 10.81.2.1:80;
    location /sse { proxy_pass http://127.0.0.1:8001; }
    location /tokens { proxy_pass http://127.0.0.1:8002; }
  }
  server {
    listen 10.81.2.1:443 ssl;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    location /tokens { proxy_pass http://127.0.0.1:8002; }
  }
}
EOF
ip netns exec "$S" python3 "$here/stream-backends.py" sse 127.0.0.1 8001 &
ip netns exec "$S" python3 "$here/stream-backends.py" sse 10.81.2.1 8000 &
ip netns exec "$S" python3 "$here/stream-backends.py" tokens 127.0.0.1 8002 &
ip netns exec "$S" python3 "$here/stream-backends.py" upload 10.81.2.1 8003 &
ip netns exec "$S" nginx -c "$work/nginx.conf"
for port in 8000 8001 8002 8003 80 443; do relay_listening "$port"; done
relay_capture sse-python curl -sN http://10.81.2.1:8000/sse -o /dev/null
relay_capture sse-nginx curl -sN http://10.81.2.1/sse -o /dev/null
relay_capture tokens-nginx curl -sN http://10.81.2.1/tokens -o /dev/null
relay_capture tokens-tls curl -skN https://10.81.2.1/tokens -o /dev/null
cat > "$work/upload.sh" <<'EOF'
for i in $(seq 20); do echo "line $i of a live upload"; sleep 0.1; done |
  curl -s -T - -H 'Transfer-Encoding: chunked' http://10.81.2.1:8003/upload
EOF
relay_capture upload-curl bash "$work/upload.sh"
for name in sse-python sse-nginx tokens-nginx tokens-tls upload-curl; do
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
ls -l "$out"
