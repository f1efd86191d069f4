#!/usr/bin/env bash
# Makes the host captures behind crates/rttdoc/tests/real_offload.rs
# (tests/data/offload/*.pcap.gz): what `tcpdump -i eth0` on a client or a
# server shows with the kernel's segmentation offloads on, as they are on
# nearly every host. A sender's capture holds TSO/GSO super-segments (one
# "packet" of up to 64 KB that the NIC cuts into MSS-sized ones after the
# capture point); a receiver's holds GRO-merged segments. Real Linux TCP,
# nginx and curl, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#              TUN <-> scripts/tun-delay.py <-> TUN   (20 ms, in order)
#
# The router sends what arrives from either side into a TUN device (policy
# routing); tun-delay.py writes it to the other TUN 20 ms later, and the
# router forwards it on. Offloads stay at the kernel's defaults on the
# client's and the server's veth, with GRO turned on where the kernel can
# (veth GRO), as a NIC driver has it. Each capture is tcpdump -s 0 on the
# host's own interface:
#
#   NAME-client.pcap, NAME-server.pcap for NAME in
#     download   curl: one 1 MB file over HTTP
#     keepalive  curl: four requests on one TLS 1.3 connection (small, 16 KB,
#                200 KB, small)
#     upload     curl: a 1 MB PUT over HTTP (nginx's WebDAV module stores it: 201)
#     loss       the download with every 40th server data packet dropped by
#                the relay: real retransmissions of super-segments' pieces
#     expect     curl: a 2 MB POST (curl sends `Expect: 100-continue` for
#                bodies over 1 MB) to an HTTP/1.0 server (python's
#                http.server, reading the body) that never answers the
#                expectation: curl holds the body for its 1 s timer
#     continue   the same upload as a PUT to nginx, which answers
#                `100 Continue`: no wait
#     nagle-tls  curl: TLS 1.3 to nginx with `tcp_nodelay off` and a >4 KB
#                chain (RSA-4096 root and intermediate, P-256 leaf): the
#                response waits in Nagle behind the session tickets for
#                the client's delayed ACK (field notes, case 1)
#     wwr        curl: three keep-alive requests for a 3000-byte page to
#                nginx with `tcp_nodelay off` (sendfile: headers, then the
#                body): write-write-read (field notes, case 5)
#
# With NO_TIMESTAMPS=1 both hosts run without TCP timestamps
# (net.ipv4.tcp_timestamps=0: Windows' default), and only the loss,
# nagle-tls and wwr workloads are captured, as NAME-nots-SIDE.pcap.gz.
#
# Congestion control is the namespaces' default, the host's (BBR on the
# machine that made tests/data/offload: the loss capture's recovery is
# BBR's).
#
# Needs root, ip, tcpdump, nginx, curl, openssl, python3, ethtool.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
tag=rtoff$$
C=$tag-c S=$tag-s M=$tag-m
work=$(mktemp -d /tmp/rttdoc-offload.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}" ${post_server:-}; do kill "$p" 2>/dev/null || true; done
  for pid in "$work/nginx.pid" "$work/nagle.pid"; do
    [[ -f $pid ]] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  for n in $C $S $M; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add $C; ip netns add $S; ip netns add $M
relay_path 10.78 $C $S $M c0
suffix=
if [[ -n ${NO_TIMESTAMPS:-} ]]; then
  suffix=-nots
  for n in $C $S; do ip netns exec $n sysctl -qw net.ipv4.tcp_timestamps=0; done
fi
# A receiving host's NIC merges segments (GRO); veth does when asked.
ip netns exec $C ethtool -K c0 gro on >/dev/null 2>&1 || true
ip netns exec $S ethtool -K s0 gro on >/dev/null 2>&1 || true
ip netns exec $C ethtool -k c0 | grep -E '^(tcp-segmentation-offload|generic-receive-offload):' >&2

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
mkdir -p "$work/www/upload"
echo "hello from rttdoc's offload fixture" > "$work/www/index.html"
head -c 16000 /dev/zero | tr '\0' 'x' > "$work/www/page.html"
head -c 200000 /dev/zero | tr '\0' 'y' > "$work/www/file-200k.bin"
head -c 1000000 /dev/zero | tr '\0' 'z' > "$work/www/file-1m.bin"
head -c 1000000 /dev/zero | tr '\0' 'u' > "$work/upload.bin"
cat > "$work/nginx.conf" <<CONF
# root: the workers write the upload into this private work directory
user root;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
  ssl_protocols TLSv1.3;
  server {
    listen 10.78.2.1:8080; listen 10.78.2.1:8443 ssl; root $work/www;
    location /upload/ { dav_methods PUT; client_max_body_size 20m; }
  }
}
CONF
ip netns exec $S nginx -c "$work/nginx.conf"
# An HTTP/1.0 server that reads POST bodies and never sends 100 Continue.
cat > "$work/post-server.py" <<'PY'
import http.server
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        left = int(self.headers.get("Content-Length", 0))
        while left > 0:
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                break
            left -= len(chunk)
        self.send_response(200)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")
    def log_message(self, *args):
        pass
http.server.HTTPServer(("10.78.2.1", 8081), Handler).serve_forever()
PY
timeout 120 ip netns exec $S python3 "$work/post-server.py" & post_server=$!
# nginx with Nagle left on (tcp_nodelay off), as the field notes' cases 1
# and 5 had it, and a chain larger than a 4 KB write.
chain=$work/chain
mkdir -p "$chain"
openssl req -x509 -newkey rsa:4096 -nodes -keyout "$chain/root.key" -out "$chain/root.pem" \
  -days 2 -subj /CN=rttdoc-root -addext basicConstraints=critical,CA:TRUE >/dev/null 2>&1
openssl req -newkey rsa:4096 -nodes -keyout "$chain/int.key" -out "$chain/int.csr" \
  -subj /CN=rttdoc-intermediate >/dev/null 2>&1
printf 'basicConstraints=critical,CA:TRUE\n' > "$chain/ca.ext"
openssl x509 -req -in "$chain/int.csr" -CA "$chain/root.pem" -CAkey "$chain/root.key" \
  -CAcreateserial -out "$chain/int.pem" -days 2 -extfile "$chain/ca.ext" >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$chain/leaf.key" \
  -out "$chain/leaf.csr" -subj /CN=rttdoc.test >/dev/null 2>&1
openssl x509 -req -in "$chain/leaf.csr" -CA "$chain/int.pem" -CAkey "$chain/int.key" \
  -CAcreateserial -out "$chain/leaf.pem" -days 2 >/dev/null 2>&1
cat "$chain/leaf.pem" "$chain/int.pem" "$chain/root.pem" > "$chain/chain.pem"
head -c 3000 /dev/zero | tr '\0' 'w' > "$work/www/w3000.html"
cat > "$work/nagle.conf" <<CONF
user root;
worker_processes 1;
pid $work/nagle.pid;
error_log $work/nagle-error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  sendfile on; tcp_nopush off; tcp_nodelay off; keepalive_requests 1000;
  server {
    listen 10.78.2.1:8444 ssl; root $work/www;
    ssl_certificate $chain/chain.pem; ssl_certificate_key $chain/leaf.key;
    ssl_protocols TLSv1.3; ssl_session_tickets off; ssl_session_cache off;
  }
  server { listen 10.78.2.1:8082; root $work/www; }
}
CONF
ip netns exec $S nginx -c "$work/nagle.conf"
head -c 2000000 /dev/zero | tr '\0' 'p' > "$work/upload-2m.bin"

# Runs one workload with the relay up and both hosts capturing:
# $1 name, $2 drop-every (0: none), then the curl arguments.
capture() {
  local base=$1 name=$1$suffix drop=$2; shift 2
  if [[ -n $suffix && ! $base =~ ^(loss|nagle-tls|wwr)$ ]]; then return; fi
  ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 25 "$drop" 8080 & pids+=($!)
  timeout 30 ip netns exec $C tcpdump -i c0 -s 0 -U -w "$work/$name-client.pcap" tcp 2>/dev/null & pids+=($!)
  timeout 30 ip netns exec $S tcpdump -i s0 -s 0 -U -w "$work/$name-server.pcap" tcp 2>/dev/null & pids+=($!)
  sleep 1
  timeout 20 ip netns exec $C curl -s -k -o /dev/null "$@"
  sleep 1
  # TERM: a background job ignores INT in a script (tcpdump and the relay
  # both end cleanly on TERM).
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  # (Its own jobs only: the upload server runs across captures.)
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  for side in client server; do
    gzip -9 -n -c "$work/$name-$side.pcap" > "$out/$name-$side.pcap.gz"
  done
}

capture download 0 http://10.78.2.1:8080/file-1m.bin
capture keepalive 0 --tlsv1.3 https://10.78.2.1:8443/index.html -o /dev/null \
  https://10.78.2.1:8443/page.html -o /dev/null https://10.78.2.1:8443/file-200k.bin \
  -o /dev/null https://10.78.2.1:8443/index.html
capture upload 0 -H 'Expect:' -T "$work/upload.bin" http://10.78.2.1:8080/upload/file.bin
capture loss 40 http://10.78.2.1:8080/file-1m.bin
capture expect 0 --data-binary "@$work/upload-2m.bin" http://10.78.2.1:8081/upload
capture continue 0 -T "$work/upload-2m.bin" http://10.78.2.1:8080/upload/file-2m.bin
capture nagle-tls 0 --tlsv1.3 https://10.78.2.1:8444/index.html
capture wwr 0 http://10.78.2.1:8082/w3000.html -o /dev/null http://10.78.2.1:8082/w3000.html \
  -o /dev/null http://10.78.2.1:8082/w3000.html
# The PUT must have been stored (201), not refused after its body.
[[ -n $suffix ]] || cmp -s "$work/upload.bin" "$work/www/upload/file.bin" || {
  cat "$work/error.log" >&2
  exit 1
}
ls -l "$out" >&2
