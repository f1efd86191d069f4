#!/usr/bin/env bash
# Makes tests/data/close/ with the kernel as the producer: a client whose
# last message is lost on a black-holed path, and which closes while its
# kernel keeps re-sending it.
#
#   scripts/close-captures.sh [OUTDIR]
#
# Three namespaces: a client (10.67.1.1), a router and a server
# (10.67.2.2), the two ends small python3 programs. The server sends a
# 50-byte greeting; the client reads it, then the router black-holes the
# path both ways (blackhole routes to both ends: nothing gets through,
# the client's packets are captured and then dropped). The client
# writes 8 bytes, waits 0.1 s (its FIN leaves before the first timer
# re-send, as macOS's did in nDPI's skype.pcap) and then
#   closed.pcap:      close()s: its kernel keeps re-sending the 8 bytes
#                     and its FIN; the path heals, the server sends 55
#                     bytes, and the client's orphaned socket answers them
#                     with an RST (Linux's TCPAbortOnData);
#   halfclosed.pcap:  shutdown(SHUT_WR)s and goes on reading: the same
#                     re-sends, but it reads the server's 55 bytes and the
#                     server's FIN, and closes without an RST.
# Captured by tcpdump on the client's end of the veth.
#
# Needs root, ip, tcpdump, python3. Everything it creates is removed on
# exit, also on failure; every wait is bounded.
set -euo pipefail
. "$(dirname "$0")/relay-path.sh"

OUT=${1:-$(dirname "$0")/../tests/data/close}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TAG=cl$$
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
routed_path "$TAG" "$C" "$R" "$S" 10.67.1.1 10.67.1.254 10.67.2.254 10.67.2.2

cat > "$WORK/server.py" <<'EOF'
import os, socket, sys, time
work = sys.argv[1]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("10.67.2.2", 7000))
srv.listen(4)
open(os.path.join(work, "listening"), "w").close()
for _ in range(2):
    c, _ = srv.accept()
    c.sendall(b"g" * 50)
    # The reply after the path heals (the orchestrator's "healed" file).
    for _ in range(200):
        if os.path.exists(os.path.join(work, "healed")):
            break
        time.sleep(0.05)
    os.unlink(os.path.join(work, "healed"))
    time.sleep(1.0)
    try:
        c.sendall(b"r" * 55)
        # Read to the client's FIN, so that the close is a FIN, not an
        # RST for unread bytes.
        c.settimeout(3)
        while c.recv(4096):
            pass
    except OSError:
        pass
    c.close()
EOF
cat > "$WORK/client.py" <<'EOF'
import os, socket, sys, time
work, how = sys.argv[1], sys.argv[2]
s = socket.create_connection(("10.67.2.2", 7000), timeout=10)
got = b""
while len(got) < 50:
    got += s.recv(50 - len(got))
open(os.path.join(work, "greeted"), "w").close()
time.sleep(0.5)  # the orchestrator black-holes the path meanwhile
s.sendall(b"m" * 8)
# Before the first timer re-send (200 ms): the FIN leaves at once (a
# window of 10 segments, one in flight) and the re-sends follow it.
time.sleep(0.1)
if how == "close":
    s.close()
else:
    s.shutdown(socket.SHUT_WR)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()
EOF

(exec ip netns exec "$S" python3 "$WORK/server.py" "$WORK") &
PIDS+=($!)
for _ in $(seq 100); do [ -e "$WORK/listening" ] && break; sleep 0.1; done
[ -e "$WORK/listening" ] || { echo "server did not start" >&2; exit 1; }

for how in close shutdown; do
    name=closed; [ "$how" = shutdown ] && name=halfclosed
    rm -f "$WORK/greeted"
    ip netns exec "$C" tcpdump -i ${TAG}a -s 0 -U --immediate-mode -w "$OUT/$name.pcap" tcp >/dev/null 2>&1 &
    TD=$!; PIDS+=($TD)
    for _ in $(seq 100); do [ -e "$OUT/$name.pcap" ] && break; sleep 0.1; done
    sleep 0.5
    ip netns exec "$C" timeout 20 python3 "$WORK/client.py" "$WORK" "$how" &
    CL=$!; PIDS+=($CL)
    for _ in $(seq 100); do [ -e "$WORK/greeted" ] && break; sleep 0.05; done
    [ -e "$WORK/greeted" ] || { echo "client did not connect" >&2; exit 1; }
    ip -n "$R" route add blackhole 10.67.1.1/32
    ip -n "$R" route add blackhole 10.67.2.2/32
    # The client writes 0.5 s after its greeting; its timer re-sends at
    # +0.2, +0.6, +1.4 and +3.0 s, and it closes at +0.1 s: heal at +2.5 s.
    sleep 3.0
    ip -n "$R" route del blackhole 10.67.1.1/32
    ip -n "$R" route del blackhole 10.67.2.2/32
    touch "$WORK/healed"
    wait "$CL" || true
    sleep 2.5
    kill "$TD" 2>/dev/null || true
    wait "$TD" 2>/dev/null || true
done
echo "made $OUT/closed.pcap $OUT/halfclosed.pcap"
