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
# Two more, of HTTP/3 the way the web finds it: Chromium is not told to
# speak QUIC but learns it from the server's Alt-Svc header, over TCP. The
# server (quicpeer -h3 -tcp) also serves the pages over TLS on TCP at the
# same address and port (HTTP/2), every response saying
# `Alt-Svc: h3=":443"; ma=86400`. Each capture takes two Chromium runs
# with one profile. The first (not kept) loads /text.html, a page with
# nothing else to load, over TCP: one request; Chromium keeps the
# alternative service in the profile ("Network Persistent State") and has
# never tried QUIC (so it does not hold TCP back for it either: it delays
# TCP only where QUIC has worked before). The second, captured, starts
# on a data: page that navigates to https://quic.rttdoc.test/ a second
# later (away from Chromium's start-up, when a late change of its
# certificate verifier drops the connections it has begun), and is
# stopped (TERM) 8 s after its start: the page stays open meanwhile, as
# a reader's would. Chromium opens QUIC (the navigation's preconnect,
# which for an origin with HTTP/3 tries QUIC alone) and a few
# milliseconds later TCP (the request's own job: QUIC and TCP race), one
# connection each. Chromium still needs --origin-to-force-quic-on, for a
# port nothing listens on (quic.rttdoc.test:4433: QUIC is forced on no
# origin it loads): that flag's host names are the only ones its QUIC
# accepts a certificate for that no public root issued (without it the
# QUIC handshake fails, CERTIFICATE_VERIFY_FAILED, and the alternative
# service is marked broken).
#
#   chromium-udp-blocked.pcap   QUIC blocked: nftables in the router's
#                               namespace drops all UDP to port 443,
#                               silently. Chromium's two Initial datagrams
#                               go unanswered; its TCP SYN follows a few
#                               milliseconds later, and the page and its
#                               images come over HTTP/2 on that one
#                               connection. QUIC goes on meanwhile: its
#                               probe timeouts resend the first datagram
#                               0.3, 0.9 and 2.1 s after the first flight
#                               (300 ms, doubled each time), and 4 s after
#                               it Chromium gives up (no network activity
#                               for 4 s, its handshake's idle timeout) with
#                               a CONNECTION_CLOSE in one more Initial
#   chromium-alt-svc.pcap       control, nothing dropped: QUIC and TCP
#                               race as above; the QUIC handshake takes one
#                               round trip and the page and its images
#                               come over HTTP/3; the TCP connection
#                               completes its TLS handshake (two round
#                               trips) and then idles, unused, until
#                               Chromium closes it
#
# Usage: quic-browser-captures.sh [OUTDIR [WHICH]] (OUTDIR tests/data/quic
# unless given; WHICH: all, the default; forced, chromium-h3 and
# chromium-lost-initial only; alt-svc, chromium-udp-blocked and
# chromium-alt-svc only).
# Needs root, ip, tcpdump, python3, nft, openssl, chromium, Go (go on PATH
# or in /usr/local/go/bin; quic-go from the module cache or GOPROXY), and
# tshark for the checks at the end. Everything it creates is removed on
# exit, also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/quic}")
which=${2:-all}
case $which in
  all | forced | alt-svc) ;;
  *) echo "WHICH is all, forced or alt-svc, not $which" >&2; exit 2 ;;
esac
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

made=()
if [[ $which != alt-svc ]]; then
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
made+=(chromium-h3 chromium-lost-initial)
fi

if [[ $which != forced ]]; then
# The Alt-Svc captures. Each Chromium run: its profile $work/NAME.profile
# (the second run reuses the first's), its output and log in
# $work/RUN.dom and $work/RUN.chromium; every other flag as above, but
# --origin-to-force-quic-on for a port nothing listens on (see the top).
alt_chromium() { # RUN PROFILE SECONDS URL [--dump-dom]
  timeout -k 2 "$3" chromium --headless --no-sandbox \
    --disable-gpu --user-data-dir="$2" --no-first-run --no-default-browser-check \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-default-apps --disable-extensions --no-pings --disable-breakpad \
    --enable-quic --origin-to-force-quic-on=quic.rttdoc.test:4433 \
    --host-resolver-rules="MAP quic.rttdoc.test 10.81.2.1, MAP * ~NOTFOUND" \
    --ignore-certificate-errors-spki-list="$spki" "${@:5}" "$4" > "$work/$1.dom" 2> "$work/$1.chromium"
}
export -f alt_chromium
export work spki
# quicpeer -h3 -tcp in the server's namespace, its log $work/RUN.server.log
# (in $pids: relay_capture stops it).
alt_server() { # RUN
  ip netns exec "$S" "$work/quicpeer" -server 10.81.2.1:443 -h3 -tcp \
    -cert "$work/small.pem" -key "$work/small.key" > "$work/$1.server.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    ip netns exec "$S" ss -Hlun 'sport = :443' | grep -q . &&
      ip netns exec "$S" ss -Hltn 'sport = :443' | grep -q . && break
    sleep 0.1
  done
}
# One capture: NAME [block]. The first run, NAME-learn (its capture not
# kept), loads /text.html over TCP; the second, NAME, is captured; with
# `block`, nftables in the router's namespace drops all UDP to port 443
# during it.
alt_capture() {
  local name=$1 block=${2:-}
  # Chromium takes an address that changes under it (the client's IPv6
  # link-local address, tentative for a second or two after the link came
  # up) for a new network, and fails its loads (ERR_NETWORK_CHANGED).
  for _ in $(seq 50); do
    [[ -z $(ip -n "$C" addr show tentative) ]] && break
    sleep 0.1
  done
  alt_server "$name-learn"
  echo "$name-learn:" >&2
  relay_capture "$name-learn" bash -c 'alt_chromium "$1" "$2" 15 https://quic.rttdoc.test/text.html --dump-dom' \
    _ "$name-learn" "$work/$name.profile" || true
  ip netns pids "$C" | xargs -r kill -9 2>/dev/null || true
  # One request over TCP (HTTP/2), no QUIC, and the alternative service
  # kept in the profile.
  if [[ $(grep -c ' GET ' "$work/$name-learn.server.log") != 1 ]] ||
    ! grep -q 'HTTP/2.0 GET /text.html ' "$work/$name-learn.server.log" ||
    [[ $(tshark -n -r "$work/$name-learn.pcap" -Y udp 2>/dev/null | wc -l) != 0 ]] ||
    ! grep -q '"advertised_alpns":\["h3"\],[^]]*"port":443,"protocol_str":"quic"' \
      "$work/$name.profile/Default/Network Persistent State"; then
    echo "$name-learn: not one request over TCP, its Alt-Svc kept" >&2
    cat "$work/$name-learn.server.log" "$work/$name.profile/Default/Network Persistent State" >&2
    exit 1
  fi
  if [[ -n $block ]]; then
    printf '%s\n' 'table inet rttdoc_udp_blocked {' '  chain forward {' \
      '    type filter hook forward priority 0;' '    udp dport 443 drop' '  }' '}' |
      ip netns exec "$M" nft -f -
  fi
  alt_server "$name"
  echo "$name:" >&2
  relay_capture "$name" bash -c 'alt_chromium "$1" "$2" 8 "$3"' _ "$name" "$work/$name.profile" \
    "data:text/html,<script>setTimeout(()=>location='https://quic.rttdoc.test/',1000)</script>" || true
  ip netns pids "$C" | xargs -r kill -9 2>/dev/null || true
  if [[ -n $block ]]; then ip netns exec "$M" nft delete table inet rttdoc_udp_blocked; fi
}

alt_capture chromium-udp-blocked block
alt_capture chromium-alt-svc

# What an Alt-Svc capture shows, one line a packet (tab-separated): time,
# source, UDP length (none for TCP), QUIC long-header packet types and
# frame types (comma-separated), TCP SYN and ACK flags, TCP payload length.
packets() {
  tshark -n -r "$work/$1.pcap" -T fields -E separator=/t -E aggregator=, \
    -e frame.time_relative -e ip.src -e udp.length -e quic.long.packet_type -e quic.frame_type \
    -e tcp.flags.syn -e tcp.flags.ack -e tcp.len 2>/dev/null
}
# The client's QUIC Initial datagrams (ni; their times after the first;
# late: those 200 ms or more after it, without a CONNECTION_CLOSE; cc: the
# time of the one with it), its TCP SYN (nsyn, syn) and the server's
# SYN-ACK (synack), and what each side sent (sudp: the server's datagrams,
# s1: bytes in the server's 1-RTT datagrams, c1: the client's 1-RTT
# datagrams, stcp: the server's TCP payload bytes): checked by the awk
# condition given, and shown.
alt_check() { # NAME AWK-CONDITION
  local summary rc=0
  summary=$(packets "$1" | awk -F'\t' -v s=10.81.2.1 '
    $3 != "" && $2 != s && $4 ~ /(^|,)0(,|$)/ {
      if (!ni++) { t0 = $1 } else { later = later sprintf(" %.3f", $1 - t0) }
      if ($5 ~ /(^|,)28(,|$)/) { cc = $1 - t0 } else if ($1 - t0 >= 0.2) { late++ } }
    $3 != "" && $2 == s { sudp++; if ($4 == "") { s1 += $3 } }
    $3 != "" && $2 != s && $4 == "" { c1++ }
    $3 == "" && $6 == 1 && $7 == 0 { if (!nsyn++) { syn = $1 } }
    $3 == "" && $6 == 1 && $7 == 1 { synack++ }
    $3 == "" && $2 == s { stcp += $8 }
    END {
      printf "%d client Initial datagrams (the later ones at%s s), CONNECTION_CLOSE %s; ", ni, later, cc == "" ? "none" : sprintf("at %.3f s", cc)
      printf "TCP SYN %.1f ms after the first Initial; server: %d datagrams (%d bytes in 1-RTT), %d bytes over TCP\n", (syn - t0) * 1000, sudp, s1, stcp
      exit !('"$2"')
    }') || rc=1
  echo "$1: $summary" >&2
  if ((rc)); then
    echo "$1 does not show what it should" >&2
    exit 1
  fi
  # The page and its images over HTTP/2 or HTTP/3, every request by the
  # one protocol.
  local proto=HTTP/3.0
  [[ $1 == chromium-udp-blocked ]] && proto=HTTP/2.0
  if [[ $(grep -c "$proto GET /\(\|[abc].png\) " "$work/$1.server.log") != 4 ||
    $(grep -c ' GET ' "$work/$1.server.log") != 4 ]]; then
    echo "$1: not the page and its three images over $proto" >&2
    cat "$work/$1.server.log" >&2
    exit 1
  fi
}
for name in chromium-udp-blocked chromium-alt-svc; do
  # Nothing but QUIC and TCP between the two hosts, port 443: one QUIC
  # connection (one client port) and one TCP connection.
  other=$(tshark -n -r "$work/$name.pcap" 2>/dev/null \
    -Y '!((udp.port == 443 || tcp.port == 443) && ip.addr == 10.81.1.1 && ip.addr == 10.81.2.1)' | wc -l)
  uflows=$(tshark -n -r "$work/$name.pcap" -T fields -e udp.srcport -Y 'udp && ip.src == 10.81.1.1' 2>/dev/null | sort -u | wc -l)
  tflows=$(tshark -n -r "$work/$name.pcap" -T fields -e tcp.srcport -Y 'tcp && ip.src == 10.81.1.1' 2>/dev/null | sort -u | wc -l)
  if ((other || uflows != 1 || tflows != 1)); then
    echo "$name: $other packets besides port 443 between the hosts, $uflows QUIC and $tflows TCP client ports" >&2
    exit 1
  fi
  # Both ClientHellos: QUIC's (tshark decrypts Initials) offering h3, TCP's
  # offering h2 first.
  hellos=$(tshark -n -r "$work/$name.pcap" -Y 'tls.handshake.type == 1' -T fields -e udp.srcport -e tcp.srcport \
    -e tls.handshake.extensions_server_name -e tls.handshake.extensions_alpn_str 2>/dev/null)
  if ! grep -qP '^\d+\t\tquic.rttdoc.test\th3(,|$)' <<< "$hellos" ||
    ! grep -qP '^\t\d+\tquic.rttdoc.test\th2,' <<< "$hellos"; then
    echo "$name: no ClientHellos for quic.rttdoc.test offering h3 over QUIC and h2 over TCP" >&2
    echo "$hellos" >&2
    exit 1
  fi
done
# Blocked: the client's Initials only, never answered: resent (at least
# one 200 ms or more after the first), and the CONNECTION_CLOSE 3 s or
# more after the first; the TCP SYN after the first Initial, within
# 100 ms (before any resend); the page and images (more than 60 KB) over
# TCP.
alt_check chromium-udp-blocked 'sudp == 0 && late >= 1 && cc >= 3 &&
  nsyn == 1 && synack == 1 && syn > t0 && syn - t0 < 0.1 && stcp > 60000'
# Control: the QUIC handshake answered, no CONNECTION_CLOSE in an Initial,
# 1-RTT packets both ways, more than 60 KB from the server; the TCP SYN
# after the first Initial, within 100 ms; little over TCP (the server's
# TLS handshake and HTTP/2 preface, under 5 KB).
alt_check chromium-alt-svc 'sudp > 0 && cc == "" && c1 > 0 && s1 > 60000 &&
  nsyn == 1 && synack == 1 && syn > t0 && syn - t0 < 0.1 && stcp < 5000'
for name in chromium-udp-blocked chromium-alt-svc; do
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
made+=(chromium-udp-blocked chromium-alt-svc)
fi
echo "made $out: ${made[*]}" >&2
for name in "${made[@]}"; do ls -l "$out/$name.pcap.gz"; done
