#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/server_timer.rs
# (tests/data/push/*.pcap.gz): a server that sends on its own timer, and
# the controls a detector must not confuse with it. Real Linux TCP
# (python's sockets, Nagle off on both ends), tcpdump in the client's
# namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   feed.pcap          the server sends a 61-byte tick every 500 ms (a
#                      feed, a game's state); the client sends a 41-byte
#                      message at random times (0.2-1.3 s apart) that the
#                      server reads and never answers
#   poll.pcap          the client asks every 500 ms and the server answers
#                      each request 100 ms after it arrives (its work):
#                      the server's messages keep a period too, each one
#                      asked for
#   feed-answers.pcap  the feed's ticks, and the client's requests (at
#                      random times) each answered 150 ms after arrival:
#                      answers and ticks on one connection
#
# Needs root, ip, tcpdump, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtpush$$ /tmp/rttdoc-push

# The server: its first argument `ticks` sends a tick every 500 ms
# (anything else, none); its second answers each line starting with GET
# that many ms after it arrives (0: never).
cat > "$work/server.py" <<'PY'
import socket, sys, threading, time
ticks, answer_ms = sys.argv[1] == "ticks", float(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.81.2.1", 9100))
s.listen(1)
c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
lock, done = threading.Lock(), threading.Event()
def send(data):
    with lock:
        c.sendall(data)
def reader():
    buf = b""
    while True:
        d = c.recv(4096)
        if not d:
            done.set()
            return
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.startswith(b"GET") and answer_ms > 0:
                threading.Timer(answer_ms / 1000, send, [b"ANSWER " + b"a" * 90 + b"\n"]).start()
threading.Thread(target=reader, daemon=True).start()
n = 0
while ticks and not done.is_set() and n < 40:
    time.sleep(0.5)
    n += 1
    try:
        send(b"TICK %04d " % n + b"p" * 50 + b"\n")
    except OSError:
        break
done.wait(30)
PY
# The client: `random` sends a message at random times (GET lines when
# asked to); `every` sends a GET every 500 ms. It reads whatever comes.
cat > "$work/client.py" <<'PY'
import random, socket, sys, threading, time
mode, word = sys.argv[1], sys.argv[2].encode()
random.seed(7)
s = socket.create_connection(("10.81.2.1", 9100))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def reader():
    while s.recv(4096):
        pass
threading.Thread(target=reader, daemon=True).start()
t0 = time.time()
while time.time() - t0 < 8:
    time.sleep(random.uniform(0.2, 1.3) if mode == "random" else 0.5)
    s.sendall(word + b" " + b"x" * (36 - len(word)) + b"\n")
time.sleep(0.5)
s.close()
PY

# $1 name, $2 $3 the server's arguments, $4 $5 the client's. The relay
# lives 25 s: one for each capture.
capture() {
  local name=$1
  ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 25 & local relay=$!
  ip netns exec $S python3 "$work/server.py" "$2" "$3" & local server=$!
  sleep 0.5
  timeout 30 ip netns exec $C tcpdump -i c0 -s 0 -U -w "$work/$name.pcap" tcp 2>/dev/null & local td=$!
  sleep 1
  ip netns exec $C python3 "$work/client.py" "$4" "$5"
  sleep 1
  kill -TERM $td $server $relay 2>/dev/null || true
  wait $td $server $relay 2>/dev/null || true
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}
capture feed ticks 0 random SUBSCRIBE
capture poll quiet 100 every GET
capture feed-answers ticks 150 random GET
ls -l "$out"
