#!/usr/bin/env bash
# Makes tests/data/redirect/: a client that follows HTTP redirects, with
# the kernel, nginx and curl as producers, real Linux TCP, tcpdump in the
# client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# nginx (one worker) on 10.81.2.1, named rttdoc.test (curl --resolve):
# on 8080 in the clear, a directory docs/ (nginx answers /docs with its
# own `301` to /docs/) and /old (`return 302` to
# https://rttdoc.test:8443/a.txt); on 8443 TLS 1.3 (HTTP/1.1 and
# HTTP/2) serving a.txt, and /away (`return 302` to
# https://www.rttdoc.test:8443/a.txt: another host, the same server); on
# 8081 HTTP/2 in the clear (h2c with prior knowledge).
#
#   slash.pcap          curl -L /docs: nginx's 301 to /docs/, followed on
#                       the same connection
#   https.pcap          curl -L /old: a 302 to https://, followed on a new
#                       TLS connection (its ClientHello names rttdoc.test)
#   slash-tls.pcapng    curl -L --http1.1 https://.../docs: the same 301
#                       inside TLS 1.3, curl's key log (SSLKEYLOGFILE) in the
#                       file's Decryption Secrets Block (editcap
#                       --inject-secrets)
#   slash-h2.pcapng     curl -L --http2 https://.../docs: the 301 in
#                       HTTP/2, followed on the same connection (stream 3),
#                       curl's key log in the file
#   away-h2.pcapng      curl -L --http2 https://.../away: a 302 to another
#                       host, followed on a new TLS connection whose HTTP/2
#                       request the key log reads
#   slash-h2c.pcap      Go's net/http client (h2c with prior knowledge,
#                       Protocols.SetUnencryptedHTTP2; built here from the
#                       standard library) GETs /docs on 8081 and follows
#                       the 301 on the same connection (curl 7.88's `-L`
#                       over h2c fails as it reuses the connection, "Error
#                       in the HTTP2 framing layer"). Made when `go` (1.24
#                       or later) is there, skipped with a note otherwise.
#   direct.pcap         control: curl asks /docs/ and then the https URL
#                       itself, no redirect
#   direct-h2.pcapng    control: the same in HTTP/2 (/docs/, then a.txt on
#                       the same connection)
#   not-followed.pcap   control: curl without -L asks /docs: the 301 comes,
#                       nobody follows it
#
# Needs root, ip, tcpdump, python3, nginx, curl, openssl, editcap; go for
# slash-h2c. Everything it
# creates is removed on exit, also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/redirect}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtredir$$ /tmp/rttdoc-redirect
chmod 755 "$work"
mkdir -p "$work/www/docs"
head -c 600 /dev/zero | tr '\0' d > "$work/www/docs/index.html"
head -c 600 /dev/zero | tr '\0' a > "$work/www/a.txt"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
relay_nginx "$(cat <<CONF
  server {
    listen 10.81.2.1:8080;
    location = /old { return 302 https://rttdoc.test:8443/a.txt; }
  }
  server {
    listen 10.81.2.1:8443 ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    location = /away { return 302 https://www.rttdoc.test:8443/a.txt; }
  }
  server {
    listen 10.81.2.1:8081 http2;
  }

CONF
)"
relay_listening 8443
relay_listening 8081
h2c_client=
if command -v go >/dev/null; then
  mkdir "$work/h2c"
  cat > "$work/h2c/main.go" <<'GO'
// h2c-get ADDR URL: GETs URL over HTTP/2 in the clear with prior
// knowledge (Go's net/http), following redirects on the same connection
// as Go's client does; every host name dials ADDR.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

func main() {
	addr, url := os.Args[1], os.Args[2]
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	dialer := &net.Dialer{}
	transport := &http.Transport{
		Protocols: &protocols,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
	}
	resp, err := (&http.Client{Transport: transport}).Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	transport.CloseIdleConnections()
}
GO
  (cd "$work/h2c" && go build -o h2c-get main.go)
  h2c_client=$work/h2c/h2c-get
else
  echo "SKIPPED slash-h2c: no Go toolchain" >&2
fi

r="--resolve rttdoc.test:8080:10.81.2.1 --resolve rttdoc.test:8443:10.81.2.1"
r="$r --resolve www.rttdoc.test:8443:10.81.2.1"
u=http://rttdoc.test:8080
# shellcheck disable=SC2086
{
  relay_capture slash curl -sL $r "$u/docs"
  relay_capture https curl -sLk $r "$u/old"
  SSLKEYLOGFILE=$work/keys relay_capture slash-tls curl -sLk --http1.1 $r https://rttdoc.test:8443/docs
  SSLKEYLOGFILE=$work/keys-slash-h2 relay_capture slash-h2 curl -sLk --http2 $r https://rttdoc.test:8443/docs
  SSLKEYLOGFILE=$work/keys-away-h2 relay_capture away-h2 curl -sLk --http2 $r https://rttdoc.test:8443/away
  if [[ -n $h2c_client ]]; then
    relay_capture slash-h2c "$h2c_client" 10.81.2.1:8081 http://rttdoc.test:8081/docs
  fi
  relay_capture direct curl -sk $r "$u/docs/" https://rttdoc.test:8443/a.txt
  SSLKEYLOGFILE=$work/keys-direct-h2 relay_capture direct-h2 curl -sk --http2 $r \
    https://rttdoc.test:8443/docs/ https://rttdoc.test:8443/a.txt
  relay_capture not-followed curl -s $r "$u/docs"
}

editcap --inject-secrets "tls,$work/keys" "$work/slash-tls.pcap" "$work/slash-tls.pcapng"
gzip -9n -c "$work/slash-tls.pcapng" > "$out/slash-tls.pcapng.gz"
for name in slash-h2 away-h2 direct-h2; do
  editcap --inject-secrets "tls,$work/keys-$name" "$work/$name.pcap" "$work/$name.pcapng"
  gzip -9n -c "$work/$name.pcapng" > "$out/$name.pcapng.gz"
done
for name in slash https direct not-followed ${h2c_client:+slash-h2c}; do
  gzip -9n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
echo "made $out: slash slash-tls https direct not-followed slash-h2 away-h2 direct-h2 ${h2c_client:+slash-h2c}"
