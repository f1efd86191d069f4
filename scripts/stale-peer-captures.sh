#!/usr/bin/env bash
# Makes tests/data/stale-peer/: a client's SYN that meets a connection the
# server still holds on the same port pair, with the kernel, nginx and
# curl as producers, real Linux TCP, tcpdump at both ends, across a path
# of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# The server's kernel answers a SYN for an established connection with a
# challenge ACK (RFC 5961 4.2), and a SYN that TIME-WAIT cannot accept
# with an ACK of the old connection too; the client, in SYN-SENT, answers
# an ACK that does not acknowledge its SYN with a RST (RFC 793 3.4), which
# ends the server's old connection, and its SYN timer (1 s) sends the SYN
# again, which opens the new one.
#
# nginx (one worker) on 10.81.2.1:8080 serves a.txt (600 bytes), keeping
# an idle connection open for its default 75 s.
#
#   stale-{client,server}.pcap   a client on port 40000 asks for a.txt
#       and keeps the connection (a Python socket), then vanishes without a
#       word: its host drops what it sends from the port (nftables) while
#       it closes with SO_LINGER 0, as a host that crashed or a container
#       that was replaced sends nothing; 0.3 s later curl --local-port
#       40000 asks again
#   stale-unseen-{client,server}.pcap   the same, the capture begun after
#       the first connection: only the second is in it
#   tw-{client,server}.pcap   the server's TIME-WAIT: on a direct veth
#       (no relay: a LAN), a client with TCP timestamps off uploads 16 MB
#       (curl -T, no `Expect: 100-continue`) to a Python server on
#       10.82.0.1:8081 that answers and closes first (its side of the
#       connection goes to TIME-WAIT), then curl --local-port 40001 asks
#       again at once: the new SYN's sequence number (Linux's ISN clock
#       runs 16 M a second) is below what TIME-WAIT expects after 16 MB (a
#       second of that clock: time for a busy machine's curl to start),
#       and without a timestamp TIME-WAIT cannot take it. Captured with a
#       128-byte snap length.
#   reuse-{client,server}.pcap   control: the first connection closed by
#       the client (curl exits), then curl --local-port 40000 again: the
#       client's TIME-WAIT is its own, the server's socket is gone, the SYN
#       is answered
#
# Needs root, ip, nft, tcpdump, python3, nginx, curl. Everything it creates
# is removed on exit, also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/stale-peer}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtstale$$ /tmp/rttdoc-stale
chmod 755 "$work"
C2=rtstale$$-c2 S2=rtstale$$-s2
extra_cleanup() {
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  relay_stop_servers
  ip netns pids "$S2" 2>/dev/null | xargs -r kill 2>/dev/null || true
  ip netns del "$C2" 2>/dev/null || true
  ip netns del "$S2" 2>/dev/null || true
}
mkdir -p "$work/www"
head -c 600 /dev/zero | tr '\0' a > "$work/www/a.txt"
relay_nginx "  server { listen 10.81.2.1:8080; }"
relay_listening 8080
# The client keeps no TIME-WAIT (each run binds port 40000 again at once;
# its own TIME-WAIT is not what the server holds).
ip netns exec "$C" sysctl -qw net.ipv4.tcp_max_tw_buckets=0

# A client that asks once on port 40000, keeps the connection, and then
# vanishes: its own host drops what it sends from the port while the
# socket is aborted, so the server never hears of it.
cat > "$work/vanish.py" <<'PY'
import socket, struct, subprocess, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.81.1.1", 40000))
s.settimeout(5)
s.connect(("10.81.2.1", 8080))
s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: rttdoc.test\r\n\r\n")
got = b""
while not (b"\r\n\r\n" in got and len(got.split(b"\r\n\r\n", 1)[1]) >= 600):
    chunk = s.recv(4096)
    if not chunk:
        sys.exit("the server closed")
    got += chunk
nft = ["nft", "-f", "-"]
subprocess.run(nft, check=True, text=True, input=(
    "table inet rttdoc_vanish {\n"
    "  chain out { type filter hook output priority 0; tcp sport 40000 drop; }\n"
    "}\n"))
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
subprocess.run(["nft", "delete", "table", "inet", "rttdoc_vanish"], check=True)
PY

# Waits until the server holds no connection from port 40000 (nginx's
# 75 s are not waited for: each run's stale connection is reset by the
# run itself).
settled() {
  for _ in $(seq 50); do
    ip netns exec "$S" ss -Htn state established "dport = :40000" | grep -q . || return 0
    sleep 0.1
  done
  echo "the server still holds a connection from port 40000" >&2
  exit 1
}

curl_again="curl -s --local-port 40000 http://10.81.2.1:8080/a.txt"
relay_capture_both stale sh -c "python3 $work/vanish.py && sleep 0.3 && $curl_again"
settled
# (The first connection before the capture: the relay runs outside it.)
ip netns exec "$M" python3 "$here/tun-delay.py" ta tb 20 5 & relay=$!
ip netns exec "$C" python3 "$work/vanish.py"
# (The client's last ACK of the answer may still be in the relay's 20 ms
# queue when vanish.py returns: killed with it, the server re-sends its
# answer into the next capture, the client's host resets the connection,
# and the SYN finds no stale peer. Let the queue drain first.)
sleep 0.3
kill "$relay"; wait "$relay" 2>/dev/null || true
relay_capture_both stale-unseen sh -c "$curl_again"
settled
relay_capture_both reuse sh -c "$curl_again && sleep 0.3 && $curl_again"

# The server's TIME-WAIT, on a LAN.
ip netns add "$C2"
ip netns add "$S2"
ip link add tw0 netns "$C2" type veth peer name tw1 netns "$S2"
ip -n "$C2" addr add 10.82.0.2/24 dev tw0
ip -n "$S2" addr add 10.82.0.1/24 dev tw1
for n in "$C2:tw0" "$S2:tw1"; do
  ip -n "${n%%:*}" link set "${n#*:}" up
  ip -n "${n%%:*}" link set lo up
  ip netns exec "${n%%:*}" ethtool -K "${n#*:}" tso off gso off gro off 2>/dev/null || true
done
ip netns exec "$C2" sysctl -qw net.ipv4.tcp_timestamps=0
# A server that reads a request and its body, answers and closes first.
cat > "$work/closer.py" <<'PY'
import socket
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("10.82.0.1", 8081))
l.listen(8)
l.settimeout(20)
for _ in range(2):
    c, _ = l.accept()
    c.settimeout(10)
    got = b""
    while b"\r\n\r\n" not in got:
        got += c.recv(65536)
    head, body = got.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    while len(body) < length:
        chunk = c.recv(1 << 20)
        if not chunk:
            break
        body += chunk
    # (No length: curl reads to the end, so the server's FIN comes first.)
    c.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
    c.close()
PY
head -c 16000000 /dev/zero > "$work/upload.bin"
ip netns exec "$S2" python3 "$work/closer.py" & pids+=($!)
for _ in $(seq 50); do
  ip netns exec "$S2" ss -Hltn "sport = :8081" | grep -q . && break
  sleep 0.1
done
for p in client:"$C2":tw0 server:"$S2":tw1; do
  IFS=: read -r side ns dev <<< "$p"
  timeout 30 ip netns exec "$ns" tcpdump -i "$dev" -s 128 -U --immediate-mode \
    -w "$work/tw-$side.pcap" tcp 2>/dev/null & pids+=($!)
done
sleep 1
timeout 20 ip netns exec "$C2" sh -c "curl -s -H Expect: --local-port 40001 -T $work/upload.bin http://10.82.0.1:8081/up \
  && curl -s --local-port 40001 http://10.82.0.1:8081/again" > /dev/null
sleep 1
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
for p in client server; do gzip -9 -n -c "$work/tw-$p.pcap" > "$out/tw-$p.pcap.gz"; done
ls -l "$out"
