#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/upstream.rs
# (tests/data/proxy/*.pcap.gz): a reverse proxy's host, captured there
# with `tcpdump -i any` (both of its sides in one capture, as people take
# them on a proxy), real Linux TCP, nginx, HAProxy, curl and a python
# upstream that works 150 ms on /slow and answers /fast at once:
#
#   client ns --veth-- router ns --veth-- proxy ns --veth-- upstream ns
#                         |                (nginx, HAProxy)  (python)
#      TUN <-> scripts/tun-delay.py (20 ms each way) <-> TUN
#
#   nginx-new-conn    nginx's default proxy_pass (HTTP/1.0 upstream): one
#                     new upstream connection per request, its handshake
#                     inside the client's wait; curl asks /slow, /fast,
#                     /slow on one keep-alive connection
#   nginx-keepalive   an upstream block with keepalive (HTTP/1.1, the
#                     Connection header cleared): the upstream connection
#                     is reused, no handshake in the later waits
#   nginx-tls         TLS to nginx (the requests unreadable at the proxy),
#                     a new upstream connection per request
#   haproxy           HAProxy in mode http, the same three requests
#   nginx-parallel    four requests at once on four connections (curl
#                     --parallel), /slow/1 to /slow/4: four calls in each
#                     wait, each request's own told by its resource
#   nginx-tls-parallel  the same over TLS: the requests unreadable, four
#                     calls in each wait, none certain to be a request's
#   direct-slow       the control: the python server itself answers the
#                     client (no proxy) 150 ms late, while the same host
#                     fetches an unrelated page from the upstream inside
#                     that wait: the server's time, not an upstream's
#
# Needs root, ip, tcpdump, nginx, haproxy, curl, openssl, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
tag=rtpx$$
C=$tag-c P=$tag-p M=$tag-m U=$tag-u
work=$(mktemp -d /tmp/rttdoc-proxy.XXXXXX)
pids=()
servers=()
cleanup() {
  for p in "${pids[@]}" "${servers[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  for n in $C $P $M $U; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for n in $C $P $M $U; do ip netns add "$n"; done
relay_path 10.78 $C $P $M c0
# The upstream: behind the proxy, on a network of its own.
behind_server 10.78 $P $U u0

cat > "$work/upstream.py" <<'PY'
import http.server, sys, time
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if self.path.startswith("/slow"):
            time.sleep(0.15)
        body = b"u" * 3000
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer((sys.argv[1], int(sys.argv[2])), Handler).serve_forever()
PY
timeout 300 ip netns exec $U python3 "$work/upstream.py" 10.78.3.2 8080 & servers+=($!)
# The control's server, on the proxy's host, answering clients itself.
timeout 300 ip netns exec $P python3 "$work/upstream.py" 10.78.2.1 8090 & servers+=($!)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
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
  upstream kept { server 10.78.3.2:8080; keepalive 8; }
  server {
    listen 10.78.2.1:8080;
    location / { proxy_pass http://10.78.3.2:8080; }
  }
  server {
    listen 10.78.2.1:8081;
    location / {
      proxy_pass http://kept;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
  server {
    listen 10.78.2.1:8443 ssl;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    location / { proxy_pass http://10.78.3.2:8080; }
  }
}
CONF
ip netns exec $P nginx -c "$work/nginx.conf"
cat > "$work/haproxy.cfg" <<CONF
global
  maxconn 64
defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s
frontend front
  bind 10.78.2.1:8082
  default_backend upstream
backend upstream
  server u1 10.78.3.2:8080
CONF
timeout 300 ip netns exec $P haproxy -f "$work/haproxy.cfg" -db & servers+=($!)

# One workload with the relay up and the proxy's host capturing on every
# interface (relay_capture): $1
# name, then the command run in the client's namespace.
relay_tap="$P any"
capture() {
  relay_capture "$@"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}

three() { # SCHEME://HOST:PORT
  curl -sk "$1/slow/a" "$1/fast/b" "$1/slow/c"
}
# Warm up: nginx and HAProxy resolve and connect once before the captures.
ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 10 & warm=$!
relay_ready http://10.78.2.1:8080/fast/w
relay_ready http://10.78.2.1:8082/fast/w
relay_ready http://10.78.2.1:8090/fast/w
kill $warm 2>/dev/null || true
wait $warm 2>/dev/null || true

capture nginx-new-conn bash -c "$(declare -f three); three http://10.78.2.1:8080"
capture nginx-keepalive bash -c "$(declare -f three); three http://10.78.2.1:8081"
capture nginx-tls bash -c "$(declare -f three); three https://10.78.2.1:8443"
capture haproxy bash -c "$(declare -f three); three http://10.78.2.1:8082"
four() { # SCHEME://HOST:PORT
  curl -sk --no-progress-meter --parallel --parallel-immediate --parallel-max 4 "$1/slow/1" "$1/slow/2" "$1/slow/3" "$1/slow/4"
}
capture nginx-parallel bash -c "$(declare -f four); four http://10.78.2.1:8080"
capture nginx-tls-parallel bash -c "$(declare -f four); four https://10.78.2.1:8443"
# The control: the proxy's host fetches /fast/unrelated from the upstream
# 60 ms into the client's 150 ms wait for /slow/direct.
capture direct-slow bash -c "(sleep 0.08; ip netns exec $P curl -s -o /dev/null http://10.78.3.2:8080/fast/unrelated) &
  curl -s http://10.78.2.1:8090/slow/direct; wait"
ls -l "$out" >&2
