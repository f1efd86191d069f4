#!/usr/bin/env bash
# Makes tests/data/cert-fetch/: clients that fetch what they need to
# check a server's certificate inside the TLS handshake, with the kernel,
# nginx, OpenSSL's OCSP responder, headless Chromium and GnuTLS'
# gnutls-cli as producers, real Linux TCP, tcpdump in the client's
# namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# A private PKI made here: a root, an intermediate it signed, and a
# certificate for www.rttdoc.test the intermediate signed, whose
# Authority Information Access names the intermediate at
# http://ca.rttdoc.test:8080/int.crt (CA Issuers) and an OCSP responder
# at http://ocsp.rttdoc.test:8088/. The server's namespace runs nginx
# (one worker: https on 8443, the intermediate in DER on 8080 as
# `application/pkix-cert`) and `openssl ocsp` on 8088. Chromium trusts
# the root through an NSS database of its own ($HOME/.pki/nssdb) and maps
# the names to the server (--host-resolver-rules: no DNS); gnutls-cli
# trusts it by --x509cafile and asks dnsmasq, in the server's namespace,
# for the names (its name lookups are captured: `tcp or udp port 53`).
#
#   aia.pcap             Chromium loads https://www.rttdoc.test:8443/ from
#                        nginx sending the certificate alone (TLS 1.2,
#                        nginx 1.22's default): Chromium's verifier finds
#                        no issuer and GETs /int.crt from the AIA URL on a
#                        connection of its own before it sends its key
#                        exchange (both of its connections to the page
#                        wait for it)
#   aia-tls13.pcap       the same with `ssl_protocols TLSv1.3`: the fetch
#                        holds the client's Finished
#   full-chain.pcap      control: nginx sends the chain (the certificate,
#                        then the intermediate): no fetch
#   ocsp.pcap            `gnutls-cli --ocsp` to nginx sending the chain:
#                        its verification looks ocsp.rttdoc.test up and
#                        POSTs an OCSP request (its head and its body in
#                        two writes: Nagle holds the body a round trip)
#                        before it sends its key exchange
#   ocsp-stapled.pcap    control: nginx staples the responder's answer
#                        (ssl_stapling_file, fetched beforehand):
#                        gnutls-cli reads the status from the handshake
#                        and fetches nothing
#   ocsp-tls13.pcap      ocsp.pcap with `ssl_protocols TLSv1.3`: whether
#                        the server stapled is inside the encrypted
#                        Certificate (it did not)
#   ocsp-unasked.pcap    ocsp.pcap from a client that sends no TLS
#                        extension (GnuTLS' %NO_EXTENSIONS), so no
#                        status_request: TLS 1.2 with RSA key exchange,
#                        an RSA certificate for the same name (no
#                        signature_algorithms: OpenSSL's @SECLEVEL=0)
#
# Needs root, ip, tcpdump, python3, nginx, openssl, chromium, certutil
# (libnss3-tools), gnutls-cli (gnutls-bin), dnsmasq.
# Everything it creates is removed on exit, also on failure; every wait is
# bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/cert-fetch}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtcrt$$ /tmp/rttdoc-cert-fetch
chmod 755 "$work"
mkdir -p "$work/www" "$work/pki"
pki=$work/pki

# The PKI: ECDSA P-256 throughout, valid for the days the captures take.
ca_ext() { printf 'basicConstraints=critical,CA:TRUE%s\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n' "$1"; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3 \
  -keyout "$pki/root.key" -out "$pki/root.pem" -subj "/CN=rttdoc test root" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
  2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$pki/int.key" \
  -out "$pki/int.csr" -subj "/CN=rttdoc test intermediate" 2>/dev/null
openssl x509 -req -in "$pki/int.csr" -CA "$pki/root.pem" -CAkey "$pki/root.key" \
  -CAcreateserial -days 3 -out "$pki/int.pem" \
  -extfile <(ca_ext ,pathlen:0; echo authorityKeyIdentifier=keyid) 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$pki/leaf.key" \
  -out "$pki/leaf.csr" -subj "/CN=www.rttdoc.test" 2>/dev/null
openssl x509 -req -in "$pki/leaf.csr" -CA "$pki/int.pem" -CAkey "$pki/int.key" \
  -CAcreateserial -days 2 -out "$pki/leaf.pem" -extfile <(cat <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=DNS:www.rttdoc.test
authorityKeyIdentifier=keyid
authorityInfoAccess=caIssuers;URI:http://ca.rttdoc.test:8080/int.crt,OCSP;URI:http://ocsp.rttdoc.test:8088/
EXT
) 2>/dev/null
openssl x509 -in "$pki/int.pem" -outform der -out "$work/www/int.crt"
cat "$pki/leaf.pem" "$pki/int.pem" > "$pki/chain.pem"
# The RSA certificate for the same name (ocsp-unasked.pcap).
openssl req -newkey rsa:2048 -nodes -keyout "$pki/rsa.key" -out "$pki/rsa.csr" \
  -subj "/CN=www.rttdoc.test" 2>/dev/null
openssl x509 -req -in "$pki/rsa.csr" -CA "$pki/int.pem" -CAkey "$pki/int.key" \
  -CAcreateserial -days 2 -out "$pki/rsa.pem" -extfile <(cat <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:www.rttdoc.test
authorityKeyIdentifier=keyid
authorityInfoAccess=OCSP;URI:http://ocsp.rttdoc.test:8088/
EXT
) 2>/dev/null
cat "$pki/rsa.pem" "$pki/int.pem" > "$pki/rsa-chain.pem"
chmod 644 "$pki"/*
echo hello > "$work/www/index.html"

# The responder: the certificate is good.
for cert in leaf rsa; do
  serial=$(openssl x509 -in "$pki/$cert.pem" -noout -serial | cut -d= -f2)
  printf 'V\t301231000000Z\t\t%s\tunknown\t/CN=www.rttdoc.test\n' "$serial"
done > "$pki/index.txt"
# (Two certificates for one name: the index must allow it.)
echo 'unique_subject = no' > "$pki/index.txt.attr"
(cd "$pki" && exec ip netns exec "$S" openssl ocsp -index index.txt -port 8088 \
  -rsigner int.pem -rkey int.key -CA int.pem -ignore_err > "$work/ocsp.log" 2>&1) &
ip netns exec "$S" dnsmasq --keep-in-foreground --no-resolv --no-hosts --no-poll \
  --listen-address=10.81.2.1 --bind-interfaces --port 53 --user=root \
  --pid-file="$work/dnsmasq.pid" --local=/test/ \
  --host-record=www.rttdoc.test,10.81.2.1 --host-record=ca.rttdoc.test,10.81.2.1 \
  --host-record=ocsp.rttdoc.test,10.81.2.1 --log-facility="$work/dnsmasq.log" &

# nginx_with CERT EXTRA [KEY]: (re)starts nginx with https on 8443
# sending CERT (the certificate alone, or the chain; its key KEY, the
# ECDSA one by default) and EXTRA in its server block, and the
# intermediate on 8080.
nginx_with() {
  [[ -f $work/nginx.pid ]] && ip netns exec "$S" nginx -c "$work/nginx.conf" -s stop 2>/dev/null || true
  for _ in $(seq 50); do [[ -f $work/nginx.pid ]] || break; sleep 0.1; done
  relay_nginx "$(cat <<CONF
  types { application/pkix-cert crt; text/html html; }
  server { listen 10.81.2.1:8080; }
  server {
    listen 10.81.2.1:8443 ssl;
    ssl_certificate $1;
    ssl_certificate_key ${3:-$pki/leaf.key};
    $2
  }
CONF
)"
  relay_listening 8443
  relay_listening 8080
}
relay_listening 8088
for _ in $(seq 100); do
  ip netns exec "$S" ss -Hlun 'sport = :53' | grep -q . && break
  sleep 0.1
done

# Chromium's trust: the root in an NSS database under its $HOME.
mkdir -p "$work/home/.pki/nssdb"
certutil -d "sql:$work/home/.pki/nssdb" -N --empty-password
certutil -d "sql:$work/home/.pki/nssdb" -A -t C,, -n rttdoc-root -i "$pki/root.pem"
chmod -R a+rX "$work/home"

# browse NAME: headless Chromium loads the page in a fresh profile, for
# at most 15 s; the page's text checked (the certificate was trusted).
browse() {
  local try
  for try in 1 2; do
    rm -rf "$work/profile"
    relay_capture "$1" env HOME="$work/home" bash -c 'exec timeout -k 2 15 chromium --headless \
      --no-sandbox --disable-gpu --user-data-dir="$1" --no-first-run --no-default-browser-check \
      --disable-background-networking --disable-component-update --disable-sync \
      --disable-default-apps --disable-extensions --no-pings --disable-breakpad --disable-quic \
      --host-resolver-rules="MAP *.rttdoc.test 10.81.2.1" \
      --dump-dom https://www.rttdoc.test:8443/ > "$2" 2> "$3"' \
      _ "$work/profile" "$work/$1.dom" "$work/$1.chromium" || true
    ip netns pids "$C" | xargs -r kill -9 2>/dev/null || true
    grep -q hello "$work/$1.dom" && return
    echo "$1: the page did not load (try $try)" >&2
    grep -v dbus "$work/$1.chromium" | tail -5 >&2
  done
  exit 1
}

# gnutls NAME [PRIORITY]: gnutls-cli checks the certificate's status
# (--ocsp), completes the handshake and closes; its verdict checked.
gnutls() {
  relay_filter='tcp or udp port 53' relay_capture "$1" bash -c \
    'echo | timeout 10 gnutls-cli --ocsp --priority "$3" --x509cafile "$1" -p 8443 www.rttdoc.test > "$2" 2>&1' \
    _ "$pki/root.pem" "$work/$1.gnutls" "${2:-NORMAL}" || true
  if ! grep -q 'Handshake was completed' "$work/$1.gnutls"; then
    echo "$1: gnutls-cli did not complete its handshake" >&2
    tail -5 "$work/$1.gnutls" >&2
    exit 1
  fi
}

nginx_with "$pki/leaf.pem" ""
browse aia
nginx_with "$pki/leaf.pem" "ssl_protocols TLSv1.3;"
browse aia-tls13
nginx_with "$pki/chain.pem" ""
browse full-chain

[[ -d /etc/netns ]] || relay_made_netns_dir=1
relay_resolver=1
mkdir -p "/etc/netns/$C"
printf 'nameserver 10.81.2.1\n' > "/etc/netns/$C/resolv.conf"
gnutls ocsp
nginx_with "$pki/chain.pem" "ssl_protocols TLSv1.3;"
gnutls ocsp-tls13
nginx_with "$pki/rsa-chain.pem" "ssl_protocols TLSv1.2; ssl_ciphers DEFAULT:@SECLEVEL=0;" "$pki/rsa.key"
gnutls ocsp-unasked 'NORMAL:%NO_EXTENSIONS'
for name in ocsp ocsp-tls13 ocsp-unasked; do
  grep -q 'OCSP: verified' "$work/$name.gnutls" || { echo "$name: no OCSP check" >&2; exit 1; }
done
# The staple: the responder's answer, fetched beforehand (from the
# server's own namespace: the path's relay runs only while capturing).
ip netns exec "$S" openssl ocsp -issuer "$pki/int.pem" -cert "$pki/leaf.pem" \
  -url http://10.81.2.1:8088/ -noverify -respout "$pki/staple.der" > /dev/null 2>&1
chmod 644 "$pki/staple.der"
nginx_with "$pki/chain.pem" "ssl_stapling on; ssl_stapling_file $pki/staple.der;"
gnutls ocsp-stapled

names="aia aia-tls13 full-chain ocsp ocsp-stapled ocsp-tls13 ocsp-unasked"
for name in $names; do
  gzip -9n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
echo "made $out: $names"
