#!/usr/bin/env bash
# Makes tests/data/quic/chromium-*.pcap.gz: a real browser's QUIC, headless
# Chromium loading a page over HTTP/3 from quic-go's HTTP/3 server
# (scripts/quic-peer -h3), on kernel UDP, tcpdump in the client's namespace
# (`udp or tcp port 443`, whole packets), across the path of
# quic-captures.sh, 20 ms each way (40 ms round trip):
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# The server listens on 10.81.2.1:443, ALPN "h3", with a small self-signed
# ECDSA P-256 certificate for quic.rttdoc.test. Chromium is told to speak
# QUIC to that origin from the start (--origin-to-force-quic-on: no TCP
# first, no Alt-Svc), resolves quic.rttdoc.test to 10.81.2.1 and every
# other name to nothing (--host-resolver-rules: no DNS query leaves it),
# runs with its background networking off, accepts the certificate
# (--ignore-certificate-errors) and prints the page's DOM once it has
# loaded (--dump-dom): GET / and the page's three images, /a.png, /b.png
# and /c.png (20 KB each), four requests on one QUIC connection. Chromium's
# TLS offers an X25519MLKEM768 key share: its ClientHello (about 1.8 KB)
# takes two Initial datagrams, which it pads to its full packet size.
#
#   chromium-h3.pcap            control: the page over QUIC, nothing lost:
#                               the handshake takes one round trip, the
#                               requests go in 1-RTT packets (opaque to a
#                               capture without keys)
#   chromium-lost-initial.pcap  nftables in the server's namespace drops
#                               the client's whole first flight (its first
#                               datagrams of each client address and port,
#                               as many as the control's ClientHello took):
#                               Chromium sends it again when its probe
#                               timeout (PTO) expires
#
# Usage: quic-browser-captures.sh [OUTDIR] (tests/data/quic unless given).
# Needs root, ip, tcpdump, python3, nft, openssl, chromium, Go (go on PATH
# or in /usr/local/go/bin; quic-go from the module cache or GOPROXY), and
# tshark for the checks at the end. Everything it creates is removed on
# exit, also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/quic}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/local/go/bin
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtqb$$ /tmp/rttdoc-quic-browser
extra_cleanup() {
  relay_stop_servers
  # Whatever of Chromium outlived its time (its renderer, network and
  # utility processes run in the client's namespace too).
  ip netns pids "$C" | xargs -r kill -9 2>/dev/null || true
}
(cd "$here/quic-peer" && go build -o "$work/quicpeer" .)

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
  -subj /CN=quic.rttdoc.test -addext subjectAltName=DNS:quic.rttdoc.test \
  -keyout "$work/small.key" -out "$work/small.pem" 2>/dev/null
# Chromium's QUIC ignores --ignore-certificate-errors (the certificate
# fails verification and Chromium closes the connection in the handshake):
# it is told to trust this certificate's key by its SPKI's SHA-256 instead.
spki=$(openssl x509 -in "$work/small.pem" -pubkey -noout | openssl pkey -pubin -outform der |
  openssl dgst -sha256 -binary | base64)
export spki

export CHROMIUM_EXTRA
relay_filter='udp or tcp port 443'
# One capture: NAME. The server runs in $pids, which relay_capture stops
# after the capture; Chromium gets 15 s (then TERM, and KILL 2 s later),
# its DOM in $work/NAME.dom, its log in $work/NAME.chromium.
capture() {
  local name=$1
  ip netns exec "$S" "$work/quicpeer" -server 10.81.2.1:443 -h3 \
    -cert "$work/small.pem" -key "$work/small.key" > "$work/$name.server.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    ip netns exec "$S" ss -Hlun 'sport = :443' | grep -q . && break
    sleep 0.1
  done
  echo "$name:" >&2
  rm -rf "$work/profile"
  relay_capture "$name" bash -c 'exec timeout -k 2 15 chromium --headless --no-sandbox \
    --disable-gpu --user-data-dir="$1" --no-first-run --no-default-browser-check \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-default-apps --disable-extensions --no-pings --disable-breakpad \
    --disable-features=OptimizationHints,MediaRouter,DialMediaRouteProvider,Translate,InterestFeedContentSuggestions,CertificateTransparencyComponentUpdater,AutofillServerCommunication \
    --enable-quic --origin-to-force-quic-on=quic.rttdoc.test:443 \
    --host-resolver-rules="MAP quic.rttdoc.test 10.81.2.1, MAP * ~NOTFOUND" \
    --ignore-certificate-errors-spki-list="$spki" ${CHROMIUM_EXTRA:-} --dump-dom https://quic.rttdoc.test/ > "$2" 2> "$3"' \
    _ "$work/profile" "$work/$name.dom" "$work/$name.chromium" || true
  ip netns pids "$C" | xargs -r kill -9 2>/dev/null || true
  cat "$work/$name.server.log" >&2
}

capture chromium-h3
cp "$work/chromium-h3.pcap" /tmp/qb-h3.pcap
cat "$work/chromium-h3.dom" >&2
tail -5 "$work/chromium-h3.chromium" >&2
