#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/handshake_turns.rs
# (tests/data/handshake-turns/*.pcap.gz): TLS handshakes on loopback in
# which one host's own work sits between two flights, and their controls.
#
#   rsa-kx-8192-tls12.pcap    curl -> nginx, TLS 1.2 with the RSA key
#                             exchange (AES128-GCM-SHA256) and an 8192-bit
#                             RSA key: the server decrypts the client's
#                             secret with it (~25 ms) between the client's
#                             key exchange and its own Finished
#   ecdhe-8192-tls12.pcap     the same key with ECDHE-RSA: the server signs
#                             (~25 ms) before its ServerHello instead, and
#                             its Finished follows the client's at once
#   crl-download-tls13.pcap   openssl s_client -crl_check -crl_download:
#                             verifying nginx's certificate, the client
#                             fetches the CRL its distribution point names
#                             from a local HTTP server that answers 200 ms
#                             late, before it sends its Finished
#   no-crl-download-tls13.pcap  the same client and server, no CRL fetch
#
# Needs root (tcpdump), nginx, curl, openssl, python3. Generating the
# 8192-bit key takes about 30 s.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
work=$(mktemp -d /tmp/rttdoc-turns.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

crl_port=18391
# A CA, and a server certificate whose CRL distribution point is the slow
# local server; an 8192-bit self-signed certificate for the key exchange.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ca.key" \
  -out "$work/ca.pem" -days 2 -subj /CN=rttdoc-test-ca >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/ec.key" \
  -out "$work/ec.csr" -subj /CN=rttdoc.test >/dev/null 2>&1
printf 'subjectAltName=DNS:rttdoc.test\ncrlDistributionPoints=URI:http://127.0.0.1:%s/ca.crl\n' \
  "$crl_port" > "$work/ext.cnf"
openssl x509 -req -in "$work/ec.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
  -days 2 -extfile "$work/ext.cnf" -out "$work/ec.pem" >/dev/null 2>&1
openssl genrsa -out "$work/rsa.key" 8192 >/dev/null 2>&1
openssl req -x509 -key "$work/rsa.key" -out "$work/rsa.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
echo "small and at once" > "$work/small.txt"

cat > "$work/crl.py" <<'PY'
import http.server, sys, time
class Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(0.2)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Slow).serve_forever()
PY
python3 "$work/crl.py" $crl_port &
pids+=($!)

cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  ssl_session_cache off;
  ssl_session_tickets off;
  server {
    listen 127.0.0.1:18392 ssl;
    ssl_certificate $work/rsa.pem;
    ssl_certificate_key $work/rsa.key;
    ssl_protocols TLSv1.2;
    ssl_ciphers AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256;
    root $work;
  }
  server {
    listen 127.0.0.1:18393 ssl;
    ssl_certificate $work/ec.pem;
    ssl_certificate_key $work/ec.key;
    ssl_protocols TLSv1.3;
    root $work;
  }
}
CONF
nginx -c "$work/nginx.conf"
for _ in $(seq 50); do
  curl -sk --max-time 2 -o /dev/null https://127.0.0.1:18393/small.txt && break
  sleep 0.1
done

capture() { # NAME PORT COMMAND...
  local name=$1 port=$2
  shift 2
  tcpdump -i lo -s 0 -U --immediate-mode -w "$work/$name.pcap" "tcp port $port" 2>/dev/null &
  local dump=$!
  sleep 1
  "$@" >"$work/$name.log" 2>&1 || { echo "$name: $* failed:"; tail -3 "$work/$name.log"; }
  # libpcap hands packets over in blocks: give it time before the kill.
  sleep 1.5
  kill "$dump"
  wait "$dump" 2>/dev/null || true
  gzip -9n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}

capture rsa-kx-8192-tls12 18392 curl -sk --max-time 5 --tls-max 1.2 \
  --ciphers AES128-GCM-SHA256 -o /dev/null https://127.0.0.1:18392/small.txt
capture ecdhe-8192-tls12 18392 curl -sk --max-time 5 --tls-max 1.2 \
  --ciphers ECDHE-RSA-AES128-GCM-SHA256 -o /dev/null https://127.0.0.1:18392/small.txt
request() { printf 'GET /small.txt HTTP/1.0\r\nHost: rttdoc.test\r\n\r\n'; sleep 0.5; }
sclient() { request | timeout 5 openssl s_client -connect 127.0.0.1:18393 -servername rttdoc.test \
  -CAfile "$work/ca.pem" "$@"; }
capture crl-download-tls13 18393 sclient -crl_check -crl_download
capture no-crl-download-tls13 18393 sclient
ls -l "$out"
