#!/usr/bin/env bash
# Makes tests/data/pmtu/ with the kernel as the producer: TLS connections
# over a path whose MTU is below the one both ends have, the classic
# "path MTU black hole".
#
#   scripts/pmtu-captures.sh [OUTDIR]
#
# Three namespaces: a client (curl, 10.68.1.1), a router, and a server
# (nginx, TLS 1.3 with a 4096-bit RSA certificate: its first flight is
# more than one full segment; 10.68.2.2). Both ends have MTU 1500 and
# agree on an MSS of 1460; the router's link to the client has MTU 1280,
# so the server's full-size segments (1500 bytes, DF set) cannot pass
# it. Each capture is one `curl https://.../body.bin` (20 KB):
#   icmp.pcap        the router's "fragmentation needed" reaches the
#                    server, which sends again at once in smaller
#                    segments (path MTU discovery working);
#   probing.pcap     the narrow hop is a link layer that drops what it
#                    cannot carry and tells no one: the router's link
#                    to the client stays at 1500 and the client's end of
#                    it is at 1280 (the client's route advertises MSS
#                    1460: an MTU mismatch on one segment of a path, as
#                    behind a switch or an L2 tunnel; a firewall that
#                    drops ICMP "fragmentation needed" makes the same
#                    hole); the server has net.ipv4.tcp_mtu_probing=1,
#                    so after its retransmission timer fired
#                    tcp_retries1 (3) times it takes the path for a
#                    black hole and sends smaller;
#   blackhole.pcap   the same with tcp_mtu_probing=0 (Linux's default):
#                    the server re-sends its full-size segments until the
#                    client (curl -m 6) gives up.
# Each is captured by tcpdump on the router's server link
# (NAME-server.pcap: everything the server sent, and the ICMP it got) and
# on the client's own interface (NAME-client.pcap: what got through).
#
# Needs root, ip, tcpdump, nginx, curl, openssl. Everything it
# creates is removed on exit, also on failure; every wait is bounded.
set -euo pipefail
. "$(dirname "$0")/relay-path.sh"

OUT=${1:-$(dirname "$0")/../tests/data/pmtu}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TAG=pm$$
C=${TAG}c; R=${TAG}r; S=${TAG}s
WORK=$(mktemp -d)
chmod 755 "$WORK"  # nginx's worker (nobody) reads the body
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
    for ns in "$C" "$R" "$S"; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

openssl req -x509 -newkey rsa:4096 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" \
    -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
head -c 20000 /dev/zero > "$WORK/body.bin"
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/error.log;
events { worker_connections 64; }
http {
  access_log off;
  ssl_session_cache off;
  ssl_session_tickets off;
  server {
    listen 10.68.2.2:443 ssl;
    ssl_certificate $WORK/cert.pem;
    ssl_certificate_key $WORK/key.pem;
    ssl_protocols TLSv1.3;
    root $WORK;
  }
}
CONF

# One path per capture: a path MTU the server learned stays in its route
# cache, and would shape the next capture's first segments.
capture() { # NAME HOP(router|link) PROBING(0|1) CURL_SECONDS
    local name=$1 hop=$2 probing=$3 secs=$4 ns
    for ns in "$C" "$R" "$S"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
    routed_path "$TAG" "$C" "$R" "$S" 10.68.1.1 10.68.1.254 10.68.2.254 10.68.2.2
    if [ "$hop" = router ]; then
        ip -n "$R" link set "${TAG}b" mtu 1280
    else
        # A veth drops frames longer than its receiving end's MTU.
        ip -n "$C" link set "${TAG}a" mtu 1280
        ip -n "$C" route replace default via 10.68.1.254 advmss 1460
    fi
    ip netns exec "$S" sysctl -qw net.ipv4.tcp_mtu_probing="$probing"
    ip netns exec "$S" nginx -c "$WORK/nginx.conf"
    local up=no
    for _ in $(seq 100); do
        ip netns exec "$S" ss -Hltn 'sport = :443' | grep -q . && { up=yes; break; }
        sleep 0.1
    done
    [ $up = yes ] || { echo "nginx did not start" >&2; exit 1; }
    ip netns exec "$R" tcpdump -i "${TAG}d" -s 0 -U --immediate-mode \
        -w "$WORK/$name-server.pcap" tcp or icmp >/dev/null 2>&1 &
    local d1=$!; PIDS+=($d1)
    ip netns exec "$C" tcpdump -i "${TAG}a" -s 0 -U --immediate-mode \
        -w "$WORK/$name-client.pcap" tcp or icmp >/dev/null 2>&1 &
    local d2=$!; PIDS+=($d2)
    sleep 1
    ip netns exec "$C" curl -sk -m "$secs" -o /dev/null https://10.68.2.2/body.bin || true
    sleep 1
    kill "$d1" "$d2" 2>/dev/null || true
    wait "$d1" "$d2" 2>/dev/null || true
    kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
    for _ in $(seq 50); do [ -f "$WORK/nginx.pid" ] || break; sleep 0.1; done
    for ns in "$C" "$R" "$S"; do ip netns del "$ns"; done
    for side in server client; do
        gzip -9n -c "$WORK/$name-$side.pcap" > "$OUT/$name-$side.pcap.gz"
    done
    echo "made $OUT/$name-server.pcap.gz $OUT/$name-client.pcap.gz"
}

capture icmp router 0 10
capture probing link 1 15
capture blackhole link 0 6
