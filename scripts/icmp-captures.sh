#!/usr/bin/env bash
# Makes tests/data/icmp/ with the kernel as the producer: TCP connections
# whose packets draw ICMP errors from a router, captured at the client.
#
#   scripts/icmp-captures.sh [OUTDIR]
#
# Three namespaces: a client, a router (forwarding, with a "prohibit"
# route to 10.66.0.0/16 and an MTU of 1280 towards the server) and a
# server (python3 -m http.server). The client (curl)
#   1. connects to 10.66.0.1:80: its SYN draws ICMP "administratively
#      prohibited" quoting it (a 4-tuple nothing else of the capture has);
#   2. downloads 20 KB from the server over an established connection
#      whose 1500-byte segments the router cannot forward: its ICMP
#      "fragmentation needed" errors quote the server's data (the client
#      side sees them only when captured at the router's client link:
#      they go to the server; the capture is on the server's link).
# Captured by tcpdump on the router's two links (client.pcap: the
# client's link; server.pcap: the server's link).
#
# Needs root, ip, tcpdump, curl, python3. Everything it creates is removed
# on exit, also on failure; every wait is bounded.
set -euo pipefail
. "$(dirname "$0")/relay-path.sh"

OUT=${1:-$(dirname "$0")/../tests/data/icmp}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TAG=ic$$
C=${TAG}c; R=${TAG}r; S=${TAG}s
WORK=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
    for ns in "$C" "$R" "$S"; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

for ns in "$C" "$R" "$S"; do ip netns add "$ns"; ip -n "$ns" link set lo up; done
routed_path "$TAG" "$C" "$R" "$S" 10.65.1.2 10.65.1.1 10.65.2.1 10.65.2.2
ip -n "$R" route add prohibit 10.66.0.0/16
# The client's link narrower than the server's: the server's full-size
# segments need "fragmentation needed" (its DF set) at the router.
ip -n "$R" link set ${TAG}b mtu 1280

head -c 20000 /dev/zero | tr '\0' 'x' > "$WORK/body.txt"
(cd "$WORK" && exec ip netns exec "$S" python3 -m http.server 80 --bind 10.65.2.2 >/dev/null 2>&1) &
PIDS+=($!)
ip netns exec "$R" tcpdump -i ${TAG}b -s 0 -U --immediate-mode -w "$OUT/client.pcap" >/dev/null 2>&1 &
PIDS+=($!); TD1=$!
ip netns exec "$R" tcpdump -i ${TAG}d -s 0 -U --immediate-mode -w "$OUT/server.pcap" >/dev/null 2>&1 &
PIDS+=($!); TD2=$!
up=no
for _ in $(seq 300); do
    if ip netns exec "$S" ss -ltn 2>/dev/null | grep -q ':80' && [ -e "$OUT/client.pcap" ] && [ -e "$OUT/server.pcap" ]; then up=yes; break; fi
    sleep 0.1
done
[ $up = yes ] || { echo "server or tcpdump did not start" >&2; exit 1; }
sleep 0.5
# 1. A SYN the router refuses with an ICMP error (curl gives up at once
#    or after its connect timeout).
ip netns exec "$C" curl -s -m 3 -o /dev/null http://10.66.0.1/ || true
# 2. A download whose segments the router cannot forward whole: the
#    server's first full-size segments draw "fragmentation needed", its
#    path MTU drops, it sends again smaller.
ip netns exec "$C" curl -s -m 10 -o /dev/null http://10.65.2.2/body.txt
sleep 0.5
kill "$TD1" "$TD2" 2>/dev/null || true
wait "$TD1" "$TD2" 2>/dev/null || true
echo "made $OUT/client.pcap $OUT/server.pcap"
