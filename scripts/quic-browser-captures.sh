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
# other name to nothing (--host-resolver-rules: no DNS query at all, and
# its background requests fail before sending anything), trusts the
# certificate's key (--ignore-certificate-errors-spki-list; its QUIC does
# not heed --ignore-certificate-errors) and prints the page's DOM once it
# has loaded (--dump-dom), then exits: GET / and the page's three images,
# /a.png, /b.png and /c.png (about 20 KB each), four requests on one QUIC
# connection. Chromium's TLS offers an X25519MLKEM768 key share: its
# ClientHello (about 2 KB) takes two Initial datagrams, each padded to
# 1250 bytes, its CRYPTO frames cut up and shuffled across both (its
# "chaos protection"); the server's answer fills its first round trip.
#
#   chromium-h3.pcap            control: the page over QUIC v1, nothing
#                               lost: the handshake takes one round trip,
#                               the requests and the images go in 1-RTT
#                               packets (opaque without the keys)
#   chromium-lost-initial.pcap  nftables in the server's namespace drops
#                               the client's whole first flight: the first
#                               datagrams of each client address and port,
#                               as many as the control's ClientHello took
#                               (counted there: two). Chromium's probe
#                               timeout (PTO) expires 300 ms later (its
#                               initial RTT of 100 ms, plus 4 x half of
#                               it) and it resends only the first of the
#                               two datagrams; the server acknowledges it
#                               (an Initial with only an ACK), and on that
#                               ACK Chromium sends the second again: the
#                               handshake takes the PTO and two round trips
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

# All UDP and TCP: QUIC, and whatever else Chromium might send (DNS, TCP
# to port 443 or any other), which the checks below refuse.
relay_filter='udp or tcp'
# One capture: NAME. The server runs in $pids, which relay_capture stops
# after the capture; Chromium gets 15 s (then TERM, and KILL 2 s later;
# what is left of it in the client's namespace is killed after), with a
# profile of its own, its DOM in $work/NAME.dom, its log in
# $work/NAME.chromium.
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
  relay_capture "$name" bash -c 'exec timeout -k 2 15 chromium --headless --no-sandbox \
    --disable-gpu --user-data-dir="$1" --no-first-run --no-default-browser-check \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-default-apps --disable-extensions --no-pings --disable-breakpad \
    --enable-quic --origin-to-force-quic-on=quic.rttdoc.test:443 \
    --host-resolver-rules="MAP quic.rttdoc.test 10.81.2.1, MAP * ~NOTFOUND" \
    --ignore-certificate-errors-spki-list="$4" --dump-dom https://quic.rttdoc.test/ > "$2" 2> "$3"' \
    _ "$work/$name.profile" "$work/$name.dom" "$work/$name.chromium" "$spki" || true
  ip netns pids "$C" | xargs -r kill -9 2>/dev/null || true
}

capture chromium-h3

# What each capture shows, read by tshark's QUIC dissector (port 443): one
# line a datagram: time, source, UDP length, then the versions and
# long-header packet types of its packets (comma-separated: packets
# coalesce; none for a datagram of 1-RTT packets, short headers).
datagrams() {
  tshark -n -r "$work/$1.pcap" -T fields -E separator=' ' -E aggregator=, \
    -e frame.time_relative -e ip.src -e udp.length -e quic.version -e quic.long.packet_type 2>/dev/null
}
# The datagrams of Chromium's first flight: those it sends before the
# server's first (its ClientHello, in Initial packets).
flight=$(datagrams chromium-h3 | awk -v s=10.81.2.1 '$2 == s { exit } { n++ } END { print n + 0 }')
echo "Chromium's ClientHello took $flight datagrams" >&2
if ((flight < 1 || flight > 4)); then
  echo "unexpected first flight of $flight datagrams" >&2
  exit 1
fi

# Drops the client's whole first flight: the first $flight datagrams of
# each client address and port. A flow's first datagram goes into set
# seen1 and is dropped, its k-th (from seen k-1) into seen k and is
# dropped, up to the $flight-th; later ones (in seen $flight) pass.
{
  echo 'table inet rttdoc_quic_browser {'
  for ((k = 1; k <= flight; k++)); do
    echo "  set seen$k { type ipv4_addr . inet_service; flags dynamic; timeout 1m; }"
  done
  echo '  chain input {'
  echo '    type filter hook input priority 0;'
  echo "    udp dport 443 ip saddr . udp sport @seen$flight accept"
  for ((k = flight - 1; k >= 1; k--)); do
    echo "    udp dport 443 ip saddr . udp sport @seen$k add @seen$((k + 1)) { ip saddr . udp sport } drop"
  done
  echo '    udp dport 443 add @seen1 { ip saddr . udp sport } drop'
  echo '  }'
  echo '}'
} > "$work/drop.nft"
ip netns exec "$S" nft -f "$work/drop.nft"
capture chromium-lost-initial
ip netns exec "$S" nft delete table inet rttdoc_quic_browser

check() { # NAME AWK-PROGRAM (exits 0 when the capture shows it)
  if ! datagrams "$1" | awk -v s=10.81.2.1 -v flight="$flight" "$2"; then
    echo "$1 does not show what it should" >&2
    datagrams "$1" | head -20 >&2
    exit 1
  fi
}
for name in chromium-h3 chromium-lost-initial; do
  # Nothing but the one page load: QUIC between the two hosts, port 443
  # (no DNS, no TCP, no other host).
  other=$(tshark -n -r "$work/$name.pcap" -Y '!(udp.port == 443 && ip.addr == 10.81.1.1 && ip.addr == 10.81.2.1)' \
    2>/dev/null | wc -l)
  flows=$(tshark -n -r "$work/$name.pcap" -T fields -e udp.srcport -Y 'ip.src == 10.81.1.1' 2>/dev/null | sort -u | wc -l)
  if ((other || flows != 1)); then
    echo "$name: $other datagrams besides QUIC to 10.81.2.1:443, $flows client ports" >&2
    exit 1
  fi
  # The ClientHello (tshark decrypts Initials): the server name and h3.
  if ! tshark -n -r "$work/$name.pcap" -Y 'tls.handshake.type == 1' -T fields \
    -e tls.handshake.extensions_server_name -e tls.handshake.extensions_alpn_str 2>/dev/null |
    grep -q '^quic.rttdoc.test	h3'; then
    echo "$name: no ClientHello for quic.rttdoc.test offering h3" >&2
    exit 1
  fi
  # The server answered the page and its three images over HTTP/3 (inside
  # 1-RTT packets, which the capture cannot open), and Chromium got them.
  if [[ $(grep -c 'HTTP/3.0 GET /\(\|[abc].png\) ' "$work/$name.server.log") != 4 ]] ||
    ! grep -q '<img src="/c.png"' "$work/$name.dom"; then
    echo "$name: not the page and its three images over HTTP/3" >&2
    cat "$work/$name.server.log" "$work/$name.dom" "$work/$name.chromium" >&2
    exit 1
  fi
done
# The handshake: the server's Initial and Handshake packets, then the
# client's Handshake packet, then 1-RTT packets both ways carrying more
# than 60 KB from the server (the three images, 20 KB each).
handshake='$2 == s && $5 ~ /(^|,)0(,|$)/ { si = 1 } $2 == s && $5 ~ /(^|,)2(,|$)/ { sh = 1 }
  si && sh && $2 != s && $5 ~ /(^|,)2(,|$)/ { ch = 1 }
  ch && $4 == "" { if ($2 == s) { sb += $3 } else { c1 = 1 } }'
check chromium-h3 "$handshake"'
  $2 != s && $5 ~ /^0/ && !si { n++ }
  END { exit !(ch && c1 && sb > 60000 && n == flight) }'
# The client's Initial datagrams after its first flight (the first resent)
# come before the server's first datagram, 100 ms or more after the last
# of the first flight.
check chromium-lost-initial "$handshake"'
  $2 != s && $5 ~ /^0/ && !si { n++; t[n] = $1 }
  END { exit !(ch && c1 && sb > 60000 && n > flight && t[flight + 1] - t[flight] > 0.1) }'
for name in chromium-h3 chromium-lost-initial; do
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
echo "made $out: chromium-h3 chromium-lost-initial" >&2
ls -l "$out"/chromium-*.pcap.gz
