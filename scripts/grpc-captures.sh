#!/usr/bin/env bash
# Makes the captures behind tests/data/grpc/*.pcap.gz: HTTP/2 in cleartext
# with prior knowledge (h2c: the client's preface `PRI * HTTP/2.0` straight
# after the TCP handshake, no TLS, no Upgrade), real Linux TCP, tcpdump in
# the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   grpc-h2c.pcap   Python grpcio (installed into a virtualenv in the work
#                   directory), client and server, over one channel (one
#                   TCP connection) to 10.81.2.1:50051, grpc's defaults
#                   kept (its BDP PINGs and WINDOW_UPDATEs), the service
#                   rttdoc.Lab defined with generic handlers and raw bytes
#                   (no protoc). One call after the other:
#                     Fast      unary, answered at once (a reply of 50
#                               bytes): one round trip of the path
#                     Slow      unary, the handler sleeps 100 ms before
#                               answering: the server's think time
#                     Feed      server streaming: five messages of 100
#                               bytes, the first at once, then 0.6, 0.9,
#                               0.7 and 1.1 s apart, and the trailers
#                               (END_STREAM) 0.8 s after the last: pushes
#                               the client did not ask for one by one
#                     Upload    unary with a request of 200 KB and a reply
#                               of 20 bytes: the client's flow-control
#                               window and the server's WINDOW_UPDATEs
#                     Download  unary with a request of 20 bytes and a
#                               reply of 300 KB: the client's
#                               WINDOW_UPDATEs and BDP PINGs
#                   then 2 s idle with the channel open, and the channel
#                   closed (GOAWAY, FIN).
#   nginx-h2c.pcap  curl (`--http2-prior-knowledge`) and nginx
#                   (`listen ... http2;` without ssl) on 10.81.2.1:8080;
#                   nginx serves /small.txt (18 bytes) and /big.bin
#                   (300 KB) from disk, and /slow/ through a Python backend
#                   in the server's namespace that works 100 ms and answers
#                   2000 bytes. One curl fetches /small.txt, /slow/a,
#                   /big.bin and /slow/b one after the other over one
#                   connection; 1 s later a second curl (`--parallel
#                   --parallel-max 3`) fetches /slow/c, /slow/d and
#                   /small.txt at once, multiplexed over one connection.
#
# Needs root, ip, tcpdump, python3 (with venv and network access to PyPI
# for grpcio), nginx (with the http_v2 module) and curl (with nghttp2).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtgrpc$$ /tmp/rttdoc-grpc
chmod 755 "$work"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
}
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q grpcio pycurl
py=$work/venv/bin/python

# Like relay_capture, but keeps tcpdump's report (packets captured and

# --- grpc-h2c ---------------------------------------------------------
cat > "$work/grpc_server.py" <<'PY'
import time
from concurrent import futures
import grpc

def fast(request, context):
    return b"f" * 50

def slow(request, context):
    time.sleep(0.1)
    return b"s" * 50

def feed(request, context):
    yield b"0" * 100
    for i, pause in enumerate([0.6, 0.9, 0.7, 1.1]):
        time.sleep(pause)
        yield (b"%d" % (i + 1)) * 100
    time.sleep(0.8)

def upload(request, context):
    return b"got %d bytes" % len(request)

def download(request, context):
    return b"d" * 300_000

handlers = {
    "Fast": grpc.unary_unary_rpc_method_handler(fast),
    "Slow": grpc.unary_unary_rpc_method_handler(slow),
    "Feed": grpc.unary_stream_rpc_method_handler(feed),
    "Upload": grpc.unary_unary_rpc_method_handler(upload),
    "Download": grpc.unary_unary_rpc_method_handler(download),
}
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("rttdoc.Lab", handlers),))
server.add_insecure_port("10.81.2.1:50051")
server.start()
server.wait_for_termination(60)
PY
cat > "$work/grpc_client.py" <<'PY'
import time
import grpc

# No proxy from the environment: the one connection goes to the server.
channel = grpc.insecure_channel("10.81.2.1:50051", options=[("grpc.enable_http_proxy", 0)])
def unary(name, body):
    return channel.unary_unary("/rttdoc.Lab/" + name)(body, timeout=10)
assert len(unary("Fast", b"fast")) == 50
assert len(unary("Slow", b"slow")) == 50
got = list(channel.unary_stream("/rttdoc.Lab/Feed")(b"feed", timeout=15))
assert len(got) == 5, got
print(unary("Upload", b"u" * 200_000))
assert len(unary("Download", b"download please")) == 300_000
time.sleep(2)
channel.close()
PY
# The servers run outside $pids (capture stops those); relay_stop_servers
# stops them.
ip netns exec "$S" "$py" "$work/grpc_server.py" > "$work/grpc_server.log" 2>&1 &
relay_listening 50051
relay_capture_checked grpc-h2c "$py" "$work/grpc_client.py"
relay_stop_servers
sleep 0.5

# --- nginx-h2c --------------------------------------------------------
echo "small and at once" > "$work/small.txt"
head -c 300000 /dev/zero | tr '\0' 'b' > "$work/big.bin"
backend=18381
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
    listen 10.81.2.1:8080 http2;
    location /slow/ { proxy_pass http://slow; proxy_http_version 1.1; proxy_set_header Connection ""; }
    location / { root $work; }
  }
}
CONF
ip netns exec "$S" python3 "$here/slow-backend.py" $backend > "$work/slow.log" 2>&1 &
relay_listening $backend
ip netns exec "$S" nginx -e "$work/error.log" -c "$work/nginx.conf"
relay_listening 8080
# Debian 12's curl (7.88.1) cannot reuse a connection it opened with
# --http2-prior-knowledge (curl/curl#10634, fixed in 8.0: each further URL
# fails with "Error in the HTTP2 framing layer" and sends nothing), so
# libcurl 8 (bundled with the pycurl wheel) makes the requests as curl's
# tool does: one transfer after the other on one handle, then `--parallel
# --parallel-max 3`'s way, transfers on one multi handle that wait for the
# connection to multiplex on (CURLOPT_PIPEWAIT).
cat > "$work/h2c_client.py" <<'PY'
import sys
import pycurl

def handle(url):
    c = pycurl.Curl()
    c.setopt(pycurl.URL, url)
    c.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
    c.setopt(pycurl.NOPROXY, "*")
    c.setopt(pycurl.USERAGENT, "curl/" + pycurl.version_info()[1])
    c.setopt(pycurl.WRITEFUNCTION, lambda data: None)
    return c

def check(c):
    code = c.getinfo(pycurl.RESPONSE_CODE)
    version = c.getinfo(pycurl.INFO_HTTP_VERSION)
    assert code == 200 and version == pycurl.CURL_HTTP_VERSION_2_0, (code, version)
    return c.getinfo(pycurl.NUM_CONNECTS)

mode, urls = sys.argv[1], sys.argv[2:]
connects = 0
if mode == "serial":
    c = handle(urls[0])
    for url in urls:
        c.setopt(pycurl.URL, url)
        c.perform()
        connects += check(c)
    c.close()
else:
    m = pycurl.CurlMulti()
    m.setopt(pycurl.M_MAX_TOTAL_CONNECTIONS, 3)
    handles = [handle(url) for url in urls]
    for c in handles:
        c.setopt(pycurl.PIPEWAIT, 1)
        m.add_handle(c)
    running = len(handles)
    while running:
        running = m.perform()[1]
        if running:
            m.select(0.1)
    for c in handles:
        connects += check(c)
        m.remove_handle(c)
        c.close()
    m.close()
assert connects == 1, connects
PY
cat > "$work/curl.sh" <<SH
u=http://10.81.2.1:8080
"$py" "$work/h2c_client.py" serial \$u/small.txt \$u/slow/a \$u/big.bin \$u/slow/b
sleep 1
"$py" "$work/h2c_client.py" parallel \$u/slow/c \$u/slow/d \$u/small.txt
SH
relay_capture_checked nginx-h2c bash "$work/curl.sh"
relay_stop_servers
sleep 0.5
ls -l "$out"
