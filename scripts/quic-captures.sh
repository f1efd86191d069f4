#!/usr/bin/env bash
# Makes tests/data/quic/: QUIC handshakes by a real QUIC stack, quic-go
# (scripts/quic-peer, built here with Go) as client and server on kernel
# UDP, tcpdump in the client's namespace (`udp`, whole packets), across a
# path of 20 ms each way (40 ms round trip):
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# The server listens on 10.81.2.1:443 (the port tshark decodes as QUIC),
# ALPN "rttdoc"; the client opens one stream, sends "GET /\n", reads the
# 10000-byte answer to its end and closes the connection (an application
# CONNECTION_CLOSE, code 0). Go's TLS offers an X25519MLKEM768 key share,
# so the client's ClientHello (about 1.5 KB) takes two Initial datagrams,
# each padded to 1280 bytes. Every capture is one or two such connections:
#
#   plain.pcap               control: QUIC v1, a small self-signed ECDSA
#                            P-256 certificate, nothing lost: the
#                            handshake takes one round trip
#   retry.pcap               the server validates the client's address
#                            first (quic-go's VerifySourceAddress): it
#                            answers the first Initials with a Retry (one
#                            for each of the two datagrams; the client
#                            acts on the first), the client sends its
#                            Initials again with the token: one more
#                            round trip
#   amplification.pcap       the server's certificate file is an RSA-4096
#                            leaf and two RSA-4096 intermediates (more
#                            than 4 KB of certificates): its first flight
#                            is larger than three times what the client
#                            sent, so it stops at that limit (RFC 9000
#                            8.1, anti-amplification) until the client's
#                            next datagram (its ACK) arrives a round trip
#                            later; no Retry. The client runs with
#                            GODEBUG=tlsmlkem=0 (X25519 only): a
#                            ClientHello in one datagram, as before Go
#                            1.24; two would allow the server 7680 bytes
#   version-negotiation.pcap the server accepts only QUIC v1, the client
#                            offers v2 first (0x6b3343cf, then v1): the
#                            server answers with a Version Negotiation
#                            packet (one for each v2 datagram) and the
#                            client starts over with v1, on the same port
#   lost-initial.pcap        nftables in the server's namespace drops the
#                            first two datagrams from each client address
#                            and port: the client's first flight (both
#                            Initial datagrams) is lost; the client sends
#                            it again when its probe timeout (PTO) expires,
#                            200 ms later (quic-go: 2 x its initial RTT of
#                            100 ms). Dropping only the first datagram
#                            would let the server ACK the second, and the
#                            client would resend the first at once (loss
#                            detection's time threshold, not its PTO)
#   zero-rtt.pcap            the server accepts 0-RTT, the client makes two
#                            connections sharing a TLS session cache: the
#                            second resumes the first's session and sends
#                            its request in 0-RTT packets
#
# Usage: quic-captures.sh [OUTDIR] (tests/data/quic unless given).
# Needs root, ip, tcpdump, python3, nft, openssl, Go (go on PATH or in
# /usr/local/go/bin; quic-go from the module cache or GOPROXY), and tshark
# for the checks at the end. Everything it creates is removed on exit,
# also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/quic}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/local/go/bin
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtquic$$ /tmp/rttdoc-quic
extra_cleanup() {
  relay_stop_servers
}
(cd "$here/quic-peer" && go build -o "$work/quicpeer" .)

# The control's certificate: small (ECDSA P-256, self-signed), so the
# server's whole first flight fits in its amplification allowance.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 \
  -subj /CN=quic.rttdoc.test -keyout "$work/small.key" -out "$work/small.pem" 2>/dev/null
# The large chain: root -> int1 -> int2 -> leaf, all RSA-4096 (512-byte
# keys and signatures); the server sends leaf, int2, int1 (not the root).
rsa_cert() { # NAME SUBJECT ISSUER(or -) EXTENSIONS
  openssl req -new -newkey rsa:4096 -nodes -subj "/O=rttdoc/OU=test captures/CN=$2" \
    -keyout "$work/$1.key" -out "$work/$1.csr" 2>/dev/null
  local sign=(-signkey "$work/$1.key")
  if [[ $3 != - ]]; then sign=(-CA "$work/$3.pem" -CAkey "$work/$3.key" -CAcreateserial); fi
  openssl x509 -req -days 30 -in "$work/$1.csr" "${sign[@]}" \
    -extfile <(printf '%s\n' "$4") -out "$work/$1.pem" 2>/dev/null
}
ca='basicConstraints=critical,CA:true
keyUsage=critical,keyCertSign,cRLSign'
rsa_cert root "rttdoc test root" - "$ca"
rsa_cert int1 "rttdoc test intermediate 1" root "$ca"
rsa_cert int2 "rttdoc test intermediate 2" int1 "$ca"
rsa_cert leaf quic.rttdoc.test int2 'basicConstraints=CA:false
subjectAltName=DNS:quic.rttdoc.test'
cat "$work/leaf.pem" "$work/int2.pem" "$work/int1.pem" > "$work/chain.pem"
chain_bytes=0
for c in leaf int2 int1; do
  chain_bytes=$((chain_bytes + $(openssl x509 -in "$work/$c.pem" -outform der | wc -c)))
done
echo "large chain: $chain_bytes bytes of certificates (DER)" >&2
# Beyond 4 KB, the certificates alone exceed the server's allowance of
# 3 x 1280 bytes (quic-go pads the client's Initial datagrams to 1280).
if ((chain_bytes <= 4096)); then
  echo "the chain is too small to hit the amplification limit" >&2
  exit 1
fi

relay_filter=udp
# One capture: NAME, the server's options, `--`, the client's options;
# $client_env (VAR=value) goes into the client's environment. The server
# runs in $pids, which relay_capture stops after the capture.
capture() {
  local name=$1 server=() client=()
  shift
  while (($#)) && [[ $1 != -- ]]; do server+=("$1"); shift; done
  shift
  client=("$@")
  ip netns exec "$S" "$work/quicpeer" -server 10.81.2.1:443 "${server[@]}" \
    > "$work/$name.server.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    ip netns exec "$S" ss -Hlun 'sport = :443' | grep -q . && break
    sleep 0.1
  done
  echo "$name:" >&2
  relay_capture "$name" env ${client_env:-} "$work/quicpeer" -client 10.81.2.1:443 "${client[@]}"
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}
small=(-cert "$work/small.pem" -key "$work/small.key")

capture plain "${small[@]}" --
capture retry "${small[@]}" -retry --
# Go's TLS offers an X25519MLKEM768 key share by default: its ClientHello
# (about 1.5 KB) takes two 1280-byte Initial datagrams, which allow the
# server 3 x 2560 bytes, more than even this chain's flight. Without
# ML-KEM (GODEBUG tlsmlkem=0) the ClientHello fits in one datagram: an
# allowance of 3 x 1280 bytes, which the chain exceeds.
client_env=GODEBUG=tlsmlkem=0 capture amplification -cert "$work/chain.pem" -key "$work/leaf.key" --
capture version-negotiation "${small[@]}" -versions 1 -- -versions 2,1

# Drops the client's whole first flight: the first two datagrams of each
# client address and port (the ClientHello's two Initial datagrams). The
# first rule lets later ones pass; the second drops a flow's second
# datagram, the third its first, each remembered in a set.
ip netns exec "$S" nft -f - <<'NFT'
table inet rttdoc_quic {
  set once {
    type ipv4_addr . inet_service
    flags dynamic
    timeout 1m
  }
  set twice {
    type ipv4_addr . inet_service
    flags dynamic
    timeout 1m
  }
  chain input {
    type filter hook input priority 0;
    udp dport 443 ip saddr . udp sport @twice accept
    udp dport 443 ip saddr . udp sport @once add @twice { ip saddr . udp sport } drop
    udp dport 443 add @once { ip saddr . udp sport } drop
  }
}
NFT
capture lost-initial "${small[@]}" --
ip netns exec "$S" nft delete table inet rttdoc_quic

capture zero-rtt "${small[@]}" -0rtt -- -n 2 -0rtt

# What each capture must show, read by tshark's QUIC dissector (port 443):
# one line a datagram: time, source, then the versions and long-header
# packet types of its packets (comma-separated: packets coalesce).
datagrams() {
  tshark -n -r "$work/$1.pcap" -T fields -E separator=' ' -E aggregator=, \
    -e frame.time_relative -e ip.src -e quic.version -e quic.long.packet_type 2>/dev/null
}
check() { # NAME AWK-PROGRAM (exits 0 when the capture shows it)
  if ! datagrams "$1" | awk -v s=10.81.2.1 "$2"; then
    echo "$1 does not show what it should" >&2
    datagrams "$1" | head -20 >&2
    exit 1
  fi
}
check plain '$2 == s && $3 ~ /^0x00000001/ { ok = 1 } $4 ~ /^3/ { retry = 1 } END { exit !(ok && !retry) }'
check retry '$2 == s && $4 ~ /^3/ { retry = 1 } END { exit !retry }'
# A pause of 30 ms or more between the server's datagrams carrying long
# headers (its Initial and Handshake packets), with a client's in between.
check amplification '$2 == s && $3 != "" { if (last && $1 - last > 0.03 && client) pause = 1; last = $1; client = 0 }
  $2 != s && last { client = 1 } END { exit !pause }'
# The client starts with v2, the server answers 0 (Version Negotiation),
# the client starts again with v1.
check version-negotiation 'NR == 1 && $3 ~ /^0x6b3343cf/ { v2 = 1 } v2 && $2 == s && $3 ~ /^0x00000000/ { vn = 1 }
  vn && $2 != s && $3 ~ /^0x00000001/ { v1 = 1 } END { exit !(v2 && vn && v1) }'
# The client's third Initial datagram (its first resent) comes before the
# server's first, 100 ms or more after its second.
check lost-initial '$2 == s && !first_server { first_server = $1 } $2 != s && $4 ~ /^0/ { n++; t[n] = $1 }
  END { exit !(n >= 3 && t[3] - t[2] > 0.1 && t[3] < first_server) }'
check zero-rtt '$2 != s && $4 ~ /(^|,)1(,|$)/ { zero = 1 } END { exit !zero }'
echo "made $out: plain retry amplification version-negotiation lost-initial zero-rtt" >&2
ls -l "$out"
