#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/tickets.rs
# (tests/data/tickets/*.pcap.gz): a TLS 1.3 server that writes its two
# session tickets one at a time with Nagle on, as OpenSSL does for a
# server without TCP_NODELAY (Python's ssl module here; many small
# servers and embedded ones alike). The second ticket waits for the
# client's delayed ACK of the first. Real Linux TCP, Python's
# http.server behind ssl, curl, tcpdump in the client's namespace, across
# a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   python-ssl-slow.pcap  two connections (curl, one GET each) to a
#                         handler that takes 200 ms: the answer is
#                         written long after the held ticket left
#   python-ssl-fast.pcap  the same with a handler that answers at once
#                         (the control: the answer goes with the ticket)
#
# Needs root, ip, tcpdump, python3, openssl and curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rttick$$ /tmp/rttdoc-tickets
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout "$work/key.pem" -out "$work/cert.pem" -subj /CN=tickets.rttdoc.test 2>/dev/null
# HTTP/1.0 (one request per connection, closed by the server); the
# handler sleeps THINK seconds. server_bind is TCPServer's: HTTPServer's
# looks the host's name up, against a resolver the namespace lacks.
cat > "$work/server.py" <<'PY'
import http.server, os, socketserver, ssl, sys, time
think = float(os.environ["THINK"])
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        time.sleep(think)
        body = b"hello\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
class Server(http.server.HTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "tickets.rttdoc.test", 8443
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
server = Server(("10.81.2.1", 8443), Handler)
server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
# $1 name, $2 the handler's time in seconds.
capture() {
  THINK=$2 ip netns exec "$S" python3 "$work/server.py" "$work/cert.pem" "$work/key.pem" &
  local server=$!
  for _ in $(seq 50); do
    ip netns exec "$S" ss -Hltn 'sport = :8443' | grep -q . && break
    sleep 0.1
  done
  relay_capture "$1" bash -c 'for i in 1 2; do curl -sk --tlsv1.3 https://10.81.2.1:8443/; done'
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}
capture python-ssl-slow 0.2
capture python-ssl-fast 0
ls -l "$out"
