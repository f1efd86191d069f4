#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/http2.rs
# (tests/data/http2/*.pcap.gz): curl asking nginx for three URLs over one
# HTTP/2 connection (`--http2`, TLS), on loopback; nginx answers /slow/
# through a Python backend that works 100 ms per request, and /small.txt
# from disk at once.
#
#   curl-nginx-tls13.pcap  TLS 1.3: nginx sends its SETTINGS as its
#                          handshake ends, acknowledges curl's with an
#                          empty frame, and ends each answer's stream with
#                          an empty DATA frame (END_STREAM) written when the
#                          backend's body is done, often after curl's next
#                          request has come in
#   curl-nginx-tls12.pcap  the same over TLS 1.2
#
# Needs root (tcpdump), nginx, curl, openssl, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/rttdoc-h2.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
echo "small and at once" > "$work/small.txt"
backend=18381
python3 "$here/slow-backend.py" $backend &
pids+=($!)

capture() { # NAME PROTOCOL PORT
  local name=$1 protocol=$2 port=$3
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  upstream slow { server 127.0.0.1:$backend; keepalive 4; }
  server {
    listen 127.0.0.1:$port ssl http2;
    ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
    ssl_protocols $protocol;
    location /slow/ { proxy_pass http://slow; proxy_http_version 1.1; proxy_set_header Connection ""; }
    location / { root $work; }
  }
}
CONF
  nginx -c "$work/nginx.conf"
  sleep 0.5
  tcpdump -q -i lo -s 0 -w "$work/$name.pcap" "tcp port $port" 2>/dev/null &
  local dump=$!
  sleep 1
  curl -sk --http2 -o /dev/null -o /dev/null -o /dev/null \
    "https://127.0.0.1:$port/slow/a" "https://127.0.0.1:$port/small.txt" "https://127.0.0.1:$port/slow/b"
  sleep 1
  kill "$dump"; wait "$dump" 2>/dev/null || true
  kill "$(cat "$work/nginx.pid")"; sleep 0.5
  gzip -9n < "$work/$name.pcap" > "$out/$name.pcap.gz"
  echo "$out/$name.pcap.gz"
}

capture curl-nginx-tls13 TLSv1.3 18443
capture curl-nginx-tls12 TLSv1.2 18444
