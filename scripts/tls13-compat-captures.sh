#!/usr/bin/env bash
# Makes tests/data/tls13-compat/: TLS 1.3 clients that write the
# middlebox-compatibility ChangeCipherSpec (RFC 8446 D.4, a 6-byte record
# that carries nothing) alone, the moment the server's flight comes, and
# their Finished after it; real Linux TCP, nginx (TLS 1.3 only, one
# worker), 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   gnutls-client.pcap,   gnutls-cli (GnuTLS 3.7) GETs a page, captured at
#   gnutls-server.pcap    both ends: it writes the record, then at once its
#                         Finished, which Nagle holds (the record is
#                         unacknowledged, gnutls-cli sets no TCP_NODELAY)
#                         until the server's delayed ACK of the record
#   wget-client.pcap      wget (GnuTLS) GETs the page: the same hold
#   nocompat-client.pcap  control: gnutls-cli with the priority
#                         %DISABLE_TLS13_COMPAT_MODE sends no record, and
#                         its Finished leaves on the flight's arrival
#   curl-client.pcap      control: curl (OpenSSL) writes the record with
#                         its Finished, and sets TCP_NODELAY
#
# Needs root, ip, tcpdump, python3, nginx, openssl, gnutls-cli
# (gnutls-bin), wget, curl. Everything it creates is removed on exit,
# also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/tls13-compat}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtccs$$ /tmp/rttdoc-tls13-compat
chmod 755 "$work"
mkdir -p "$work/www"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout "$work/key.pem" -out "$work/cert.pem" -subj /CN=www.rttdoc.test \
  -addext subjectAltName=DNS:www.rttdoc.test 2>/dev/null
chmod 644 "$work"/*.pem
head -c 4000 /dev/zero | tr '\0' x > "$work/www/index.html"
chmod -R a+rX "$work/www"
relay_nginx "$(cat <<CONF
  server {
    listen 10.81.2.1:8443 ssl;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
  }
CONF
)"
relay_listening 8443
# The name, for the clients that check it against the certificate.
[[ -d /etc/netns ]] || relay_made_netns_dir=1
relay_resolver=1
mkdir -p "/etc/netns/$C"
printf '10.81.2.1 www.rttdoc.test\n' > "/etc/netns/$C/hosts"

url=https://www.rttdoc.test:8443/index.html
request='GET /index.html HTTP/1.1\r\nHost: www.rttdoc.test\r\nConnection: close\r\n\r\n'
# gnutls NAME PRIORITY: gnutls-cli GETs the page and reads the answer.
gnutls_get() {
  printf "$request" | gnutls-cli --x509cafile "$work/cert.pem" --priority "$2" \
    -p 8443 www.rttdoc.test > "$work/$1.out" 2>&1
}
export -f gnutls_get
export request work

relay_capture_both gnutls bash -c 'gnutls_get gnutls NORMAL'
relay_capture nocompat bash -c 'gnutls_get nocompat NORMAL:%DISABLE_TLS13_COMPAT_MODE'
gzip -9n -c "$work/nocompat.pcap" > "$out/nocompat-client.pcap.gz"
relay_capture wget wget -q --ca-certificate="$work/cert.pem" -O "$work/wget.out" "$url"
gzip -9n -c "$work/wget.pcap" > "$out/wget-client.pcap.gz"
relay_capture curl curl -sS --cacert "$work/cert.pem" -o "$work/curl.out" "$url"
gzip -9n -c "$work/curl.pcap" > "$out/curl-client.pcap.gz"
for name in gnutls nocompat; do
  grep -q 'HTTP/1.1 200' "$work/$name.out" || { echo "$name: no page" >&2; tail -5 "$work/$name.out" >&2; exit 1; }
done
for name in wget curl; do
  cmp -s "$work/$name.out" "$work/www/index.html" || { echo "$name: no page" >&2; exit 1; }
done
echo "made $out: gnutls-client gnutls-server nocompat-client wget-client curl-client"
