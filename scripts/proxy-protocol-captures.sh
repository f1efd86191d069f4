#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/proxy_protocol.rs
# (tests/data/proxy-protocol/*.pcap.gz): a backend behind a TCP load
# balancer that speaks the PROXY protocol, captured on the backend (where
# the balancer's header is the client's first bytes), real Linux TCP,
# HAProxy (mode tcp, `send-proxy` and `send-proxy-v2`), nginx (`listen
# ... proxy_protocol`) and curl 40 ms from the balancer:
#
#   client ns --veth-- router ns --veth-- balancer ns --veth-- backend ns
#                         |                (HAProxy)           (nginx)
#      TUN <-> scripts/tun-delay.py (20 ms each way) <-> TUN
#
# HAProxy connects to the backend as soon as it accepts the client, and
# writes the header at once; the client's first bytes (its ClientHello,
# its request) reach the backend a round trip of the client's later.
#
#   v1-tls    send-proxy (text), TLS 1.3 to nginx, two requests
#   v2-tls12  send-proxy-v2 (binary), TLS 1.2 (a 2-RTT handshake)
#   v1-http   send-proxy, plain HTTP: GET /a then GET /b on one connection
#   v2-late-hello  send-proxy-v2, a client that connects and sends its
#             ClientHello 300 ms later: the backend has the header at once
#             and waits for the client, not for the network or itself
#
# Needs root, ip, tcpdump, nginx, haproxy, curl, openssl, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
tag=rtpp$$
C=$tag-c P=$tag-p M=$tag-m B=$tag-b
work=$(mktemp -d /tmp/rttdoc-pp.XXXXXX)
pids=()
servers=()
cleanup() {
  for p in "${pids[@]}" "${servers[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  for n in $C $P $M $B; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for n in $C $P $M $B; do ip netns add "$n"; done
relay_path 10.79 $C $P $M c0
# The backend: behind the balancer, on a network of its own.
behind_server 10.79 $P $B b0
# Wire-sized segments, as a NIC's capture shows them.
ip netns exec $B ethtool -K b0 tso off gso off gro off >/dev/null 2>&1 || true

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
mkdir -p "$work/www"
head -c 3000 /dev/zero | tr '\0' 'p' > "$work/www/a"
cp "$work/www/a" "$work/www/b"
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
  root $work/www;
  ssl_certificate $work/cert.pem;
  ssl_certificate_key $work/key.pem;
  ssl_protocols TLSv1.2 TLSv1.3;
  server { listen 10.79.3.2:8443 ssl proxy_protocol; }
  server { listen 10.79.3.2:8444 ssl proxy_protocol; }
  server { listen 10.79.3.2:8080 proxy_protocol; }
}
CONF
ip netns exec $B nginx -c "$work/nginx.conf"
cat > "$work/haproxy.cfg" <<CONF
global
  maxconn 64
defaults
  mode tcp
  timeout connect 2s
  timeout client 10s
  timeout server 10s
listen v1tls
  bind 10.79.2.1:9443
  server b 10.79.3.2:8443 send-proxy
listen v2tls
  bind 10.79.2.1:9444
  server b 10.79.3.2:8444 send-proxy-v2
listen v1http
  bind 10.79.2.1:9080
  server b 10.79.3.2:8080 send-proxy
CONF
timeout 300 ip netns exec $P haproxy -f "$work/haproxy.cfg" -db & servers+=($!)

# One workload with the relay up and the backend capturing on its link to
# the balancer (relay_capture): $1
# name, then the command run in the client's namespace.
relay_tap="$B b0"
capture() {
  relay_capture "$@"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}

ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 10 & warm=$!
relay_ready https://10.79.2.1:9443/a
relay_ready http://10.79.2.1:9080/a
kill $warm 2>/dev/null || true
wait $warm 2>/dev/null || true

capture v1-tls curl -sk --tlsv1.3 https://10.79.2.1:9443/a https://10.79.2.1:9443/b
capture v2-tls12 curl -sk --tlsv1.2 --tls-max 1.2 https://10.79.2.1:9444/a
capture v1-http curl -s http://10.79.2.1:9080/a http://10.79.2.1:9080/b
cat > "$work/late.py" <<'PY'
import socket, ssl, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
time.sleep(0.3)
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
t = ctx.wrap_socket(s, server_hostname="rttdoc.test")
t.sendall(b"GET /a HTTP/1.1\r\nHost: rttdoc.test\r\nConnection: close\r\n\r\n")
while t.recv(65536):
    pass
PY
capture v2-late-hello python3 "$work/late.py" 10.79.2.1 9444
ls -l "$out" >&2
