#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/tls_start.rs's proxy test
# (tests/data/tls-start/http-connect-slow-dns.pcap.gz): curl through
# tinyproxy to a TLS origin whose name the proxy must look up, real Linux
# TCP, tcpdump in the client's namespace, 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns (tinyproxy)
#                 |      (origin: openssl s_server on 10.81.2.2:4433,
#                 |       a DNS responder on 10.81.2.2:53)
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# The proxy's resolver list starts with a server that never answers
# (`options timeout:1 attempts:1`), then the router's responder: each
# CONNECT is answered once the first has timed out, a second after it
# came. Two connections (`curl -p -x`), one request each.
#
# Needs root, ip, tcpdump, python3, openssl, curl, tinyproxy.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$M" 2>/dev/null | xargs -r kill 2>/dev/null || true
}
relay_lab rtpdns$$ /tmp/rttdoc-proxy-dns
relay_dead_resolver
# The working resolver second: glibc tries the dead one first, each time.
printf 'nameserver 10.81.2.53\nnameserver 10.81.2.2\noptions timeout:1 attempts:1\n' \
  > "/etc/netns/$S/resolv.conf"
chmod 755 "$work"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=origin.rttdoc.test >/dev/null 2>&1
ip netns exec $M openssl s_server -quiet -www -accept 10.81.2.2:4433 \
  -cert "$work/cert.pem" -key "$work/key.pem" > /dev/null 2>&1 &
cat > "$work/dns.py" <<'PY'
# Answers every A query with 10.81.2.2, every other with no records.
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.81.2.2", 53))
while True:
    q, peer = s.recvfrom(512)
    end = 12
    while q[end]:
        end += q[end] + 1
    question = q[12:end + 5]
    qtype = q[end + 1:end + 3]
    a = qtype == b"\x00\x01"
    head = q[:2] + b"\x81\x80" + b"\x00\x01" + (b"\x00\x01" if a else b"\x00\x00") + b"\x00\x00\x00\x00"
    answer = b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04" + bytes([10, 81, 2, 2]) if a else b""
    s.sendto(head + question + answer, peer)
PY
ip netns exec $M python3 "$work/dns.py" &
cat > "$work/tinyproxy.conf" <<CONF
Port 8888
Listen 10.81.2.1
Timeout 30
MaxClients 10
ConnectPort 4433
CONF
ip netns exec $S tinyproxy -d -c "$work/tinyproxy.conf" > "$work/tinyproxy.log" 2>&1 &
relay_listening 8888
cat > "$work/two.sh" <<'SH'
for _ in 1 2; do
  curl -sk -p -x http://10.81.2.1:8888 https://origin.rttdoc.test:4433/ -o /dev/null
done
SH
relay_capture http-connect-slow-dns bash "$work/two.sh"
gzip -9 -n -c "$work/http-connect-slow-dns.pcap" > "$out/http-connect-slow-dns.pcap.gz"
ls -l "$out"
