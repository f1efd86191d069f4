#!/usr/bin/env bash
# Makes the certificate files the audit tests read (tests/data/audit/certs):
# their sizes and key types are what the chain checks measure. Test keys
# only; they protect nothing.
#   small-ec.pem      one self-signed P-256 certificate (flight < 4 KB)
#   mid-chain.pem     P-256 leaf with 40 names + RSA-4096 intermediate + root
#                     (flight > 4096 bytes: OpenSSL's first write, so Nagle can hold its tail)
#   big-chain.pem     the same leaf with 600 names (flight > 10 x 1448 bytes)
#   rsa4096.pem       one self-signed RSA-4096 certificate
#   leaf-only.pem     mid-chain.pem's leaf alone (its intermediate missing: chain_incomplete)
#   *.key             their keys; haproxy-*.pem: certificate chain + key in one file
set -euo pipefail
out=${1:-"$(dirname "$0")/../tests/data/audit/certs"}
mkdir -p "$out"
cd "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
days=36500
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout small-ec.key \
  -out small-ec.pem -days $days -subj /CN=small.test -addext subjectAltName=DNS:small.test 2>/dev/null
openssl req -x509 -newkey rsa:4096 -nodes -keyout rsa4096.key -out rsa4096.pem -days $days \
  -subj /CN=rsa.test -addext subjectAltName=DNS:rsa.test 2>/dev/null
openssl req -x509 -newkey rsa:4096 -nodes -keyout "$tmp/root.key" -out "$tmp/root.pem" -days $days \
  -subj "/CN=rttdoc audit test root" 2>/dev/null
openssl req -newkey rsa:4096 -nodes -keyout "$tmp/int.key" -out "$tmp/int.csr" \
  -subj "/CN=rttdoc audit test intermediate" 2>/dev/null
printf 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n' >"$tmp/ca.ext"
openssl x509 -req -in "$tmp/int.csr" -CA "$tmp/root.pem" -CAkey "$tmp/root.key" -CAcreateserial \
  -out "$tmp/int.pem" -days $days -extfile "$tmp/ca.ext" 2>/dev/null
leaf() { # name, number of DNS names
  local names
  names=$(seq 1 "$2" | sed 's/.*/DNS:host&.audit.test/' | paste -sd, -)
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" -out "$tmp/$1.csr" \
    -subj "/CN=$1.audit.test" 2>/dev/null
  printf 'subjectAltName=%s\n' "$names" >"$tmp/$1.ext"
  openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/int.pem" -CAkey "$tmp/int.key" -CAcreateserial \
    -out "$tmp/$1.pem" -days $days -extfile "$tmp/$1.ext" 2>/dev/null
  cat "$tmp/$1.pem" "$tmp/int.pem" "$tmp/root.pem" >"$1.pem"
}
leaf mid-chain 40
leaf big-chain 600
awk '/BEGIN/{n++} n==1' mid-chain.pem > leaf-only.pem
for c in small-ec mid-chain big-chain; do cat "$c.pem" "$c.key" >"haproxy-$c.pem"; done
ls -l
