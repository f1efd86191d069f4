#!/usr/bin/env bash
# Makes tests/data/h2-window/: transfers held by HTTP/2's flow control,
# with the kernel, HAProxy, nginx, curl and Node.js as producers, real
# Linux TCP, tcpdump in the client's namespace, across a path of 20 ms
# each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# nginx (one worker) on 10.81.2.1 stores PUTs (WebDAV) on 8080 and serves
# a file over HTTP/2 in the clear on 8081 and over TLS on 8443; HAProxy
# 2.6 speaks HTTP/2 to clients and passes requests to nginx's 8080
# (tests/data/audit/haproxy/h2-upload*.cfg).
#
#   haproxy-upload-h2c.pcap   curl --http2-prior-knowledge -T 1 MB to
#                             HAProxy's 8090 (no tune.h2.initial-window-size:
#                             65,535 bytes of credit a stream)
#   haproxy-upload-h2.pcapng  400 KB the same way over TLS 1.3 (ALPN h2)
#                             on 8453, curl's key log in the file (editcap
#                             --inject-secrets)
#   haproxy-upload-h2c-server.pcap  haproxy-upload-h2c's upload again,
#                             captured on the server's interface (s0)
#   haproxy-upload-wide.pcap  control: the same as haproxy-upload-h2c to
#                             HAProxy's 8091, with 8 MB of credit a stream
#   nginx-upload-h2.pcapng    curl --http2 -T 400 KB to nginx's TLS 8443
#                             (its own window: http2_body_preread_size)
#   node-upload-h2c.pcap      curl --http2-prior-knowledge -T 1 MB to a
#                             Node.js http2 server on 8092 (Node's default
#                             windows: 65,535 bytes, stream and connection)
#   node-download-h2c.pcap    Node.js's http2 client (its default 65,535
#                             byte windows, given back by halves) GETs 1 MB
#                             from nginx's 8081
#   node-download-long.pcap   the same client GETs 4 MB: a connection past
#                             rttdoc's 2,048-segment timeline, diagnosed in
#                             windows
#   curl-download-h2c.pcap    control: curl GETs the same (its stream
#                             window is 32 MB)
#
#   scripts/h2-window-captures.sh [OUTDIR]
#
# Needs root, ip, tcpdump, python3, nginx (with the DAV module), haproxy,
# curl, node (Node.js 18 or later), openssl, editcap, gzip.
# Everything it creates is removed on exit, also on failure; every wait is
# bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/h2-window}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rth2w$$ /tmp/rttdoc-h2-window
chmod 755 "$work"
mkdir -p "$work/www/up" "$work/body"
chmod 777 "$work/www/up" "$work/body"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test \
  >/dev/null 2>&1
chmod 644 "$work/key.pem"
cat "$work/cert.pem" "$work/key.pem" > "$work/both.pem"
head -c 1000000 /dev/zero > "$work/body.bin"
head -c 400000 /dev/zero > "$work/small.bin"
head -c 1000000 /dev/zero > "$work/www/zeros.bin"
head -c 4000000 /dev/zero > "$work/www/long.bin"
chmod -R a+rX "$work/www"

relay_nginx "server {
    listen 10.81.2.1:8080;
    listen 10.81.2.1:8081 http2;
    listen 10.81.2.1:8443 ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    location /up/ {
      dav_methods PUT;
      client_max_body_size 0;
      client_body_temp_path $work/body;
    }
  }"
for cfg in h2-upload h2-upload-wide; do
  ip netns exec "$S" env RTTDOC_H2_PEM="$work/both.pem" haproxy -db \
    -f "$here/../tests/data/audit/haproxy/$cfg.cfg" > "$work/$cfg.log" 2>&1 &
done
ip netns exec "$S" node "$here/h2-window-server.js" 10.81.2.1 8092 > "$work/node.log" 2>&1 &
for port in 8080 8081 8443 8090 8091 8453 8092; do relay_listening "$port"; done

# (curl -f: a PUT nginx did not store fails the script.)
put=(curl -sSf -o /dev/null -H 'Expect:' -T "$work/body.bin")
# (Up to twice more when the workload fails: on a loaded machine curl
# has seen an HTTP/2 stream error, exit 92, from HAProxy once in a dozen
# runs, and twice in a row with three busy loops on two cores; six runs
# of that upload with HAProxy's log on, under the same load, all went
# through.)
capture() { # NAME COMMAND...
  local name=$1 try; shift
  for try in 1 2 3; do
    relay_capture "$name" "$@" && break
    (( try < 3 )) || { echo "$name: failed three times" >&2; exit 1; }
    echo "$name: made again" >&2
  done
  [[ -s $work/$name.pcap ]] || { echo "$name: nothing captured" >&2; exit 1; }
}
capture haproxy-upload-h2c "${put[@]}" --http2-prior-knowledge http://10.81.2.1:8090/up/a.bin
relay_tap="$S s0" capture haproxy-upload-h2c-server "${put[@]}" --http2-prior-knowledge \
  http://10.81.2.1:8090/up/a2.bin
put_small=(curl -sSf -o /dev/null -H 'Expect:' -T "$work/small.bin")
SSLKEYLOGFILE=$work/keys capture haproxy-upload-h2 "${put_small[@]}" --http2 -k \
  https://10.81.2.1:8453/up/b.bin
capture haproxy-upload-wide "${put[@]}" --http2-prior-knowledge http://10.81.2.1:8091/up/c.bin
SSLKEYLOGFILE=$work/keys-nginx capture nginx-upload-h2 "${put_small[@]}" --http2 -k \
  https://10.81.2.1:8443/up/d.bin
capture node-upload-h2c "${put[@]}" --http2-prior-knowledge http://10.81.2.1:8092/up/e.bin
capture node-download-h2c node "$here/h2-window-client.js" http://10.81.2.1:8081 /zeros.bin
capture node-download-long node "$here/h2-window-client.js" http://10.81.2.1:8081 /long.bin
capture curl-download-h2c curl -sSf -o /dev/null --http2-prior-knowledge \
  http://10.81.2.1:8081/zeros.bin
editcap --inject-secrets "tls,$work/keys" "$work/haproxy-upload-h2.pcap" "$work/haproxy-upload-h2.pcapng"
editcap --inject-secrets "tls,$work/keys-nginx" "$work/nginx-upload-h2.pcap" "$work/nginx-upload-h2.pcapng"
for name in haproxy-upload-h2.pcapng nginx-upload-h2.pcapng haproxy-upload-h2c.pcap \
  haproxy-upload-h2c-server.pcap \
  haproxy-upload-wide.pcap node-upload-h2c.pcap node-download-h2c.pcap node-download-long.pcap \
  curl-download-h2c.pcap; do
  gzip -9n -c "$work/$name" > "$out/$name.gz"
done
echo "made $out"
