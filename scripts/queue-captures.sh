#!/usr/bin/env bash
# Makes the captures behind tests/data/queues/: three queue and
# coordination protocols whose servers push, or hold an answer on
# purpose (real servers, real clients, real Linux TCP), tcpdump in the
# clients' namespace, across a path of 20 ms each way
# (scripts/relay-path.sh):
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# Each server is Debian's package, started by hand in the server's
# namespace (no systemd) with its configuration and data in the work
# directory, and stopped after its capture: ZooKeeper 3.8.0 (OpenJDK
# 17), beanstalkd 1.12, RabbitMQ 3.10.8 (Erlang/OTP 25, through
# relay_rabbitmq: its node, database, logs, cookie and plugins file in
# the work directory; the epmd it starts runs in the namespace and is
# stopped with it). The clients are Python (Debian's python3 with
# python3-kazoo 2.8.0 and python3-qpid-proton 0.37.0; beanstalkd's text
# protocol by hand), one program per capture, each printing what it did
# and when. Every connection opens (its SYN) and closes (its FINs) inside
# its capture. Times below are from the captures (client side, from the
# first SYN); "fN" is frame N.
#
#   zookeeper.pcap  ZooKeeper standalone (zoo.cfg: tickTime 2000,
#     clientPort 2181 on 10.81.2.1, admin server off; a first session
#     and write made before the capture, over the server's loopback).
#     Two kazoo clients, each its own connection: A (session timeout
#     6000 ms: kazoo pings after 1.6-2.0 s with nothing read) connects,
#     then B (10000 ms, kazoo's default); A creates /lab and watches its
#     data (kazoo's DataWatch: getData with the watch flag, armed again
#     with a new getData each time it fires); B sets /lab 3 times, 1.0,
#     2.5 and 4.0 s after A's watch was set; A waits until 6 s after it,
#     then B closes (closeSession), then A. Every request answered after
#     41.8-45.7 ms (ZooKeeper has no dissector in tshark 4.0: the jute
#     frames are read from the payloads). On A's connection the server
#     pushes a NodeDataChanged notification (xid -1, 36 bytes: f22
#     1300.4 ms, f30 2800.3 ms, f40 4300.4 ms), each 43.2-43.4 ms after
#     B's setData left (f21, f29, f37), A asking nothing: A's last
#     request before each (a getData, f18/f24/f34) was answered (f19/f27/
#     f35) 1.04-1.46 s before. A's getData that re-arms the watch follows
#     0.5-0.6 ms after each notification. One ping, A's (f45, 1.73 s
#     after A's last answer; the notifications kept A from idling
#     longer), answered after 45.7 ms; B sends none.
#   beanstalkd.pcap  beanstalkd -l 10.81.2.1 -p 11300, its binlog in the
#     work directory. Two connections: a producer (`use jobs`) and a
#     worker (`watch jobs`); the worker reserves (f15, 164.5 ms) and the
#     server holds the reserve until a job comes: the producer puts one
#     (20-byte body, line and body in one segment) 1.2, 2.4 and 3.6 s
#     after the worker's first reserve left (f17, f26, f35); each
#     RESERVED (f20, f29, f38) arrives 0.1 ms after the producer's
#     INSERTED, 1252.3, 1147.9 and 1159.4 ms after its reserve; the
#     worker deletes each job (40.4-41.0 ms) and reserves again at once.
#     Then `reserve-with-timeout 1` (f42): TIMED_OUT after 1041.0 ms (f44).
#     Then the worker and then the producer send `quit` (no answer: the
#     server's FIN). The first put is answered after 51.9 ms (the
#     binlog's first write), the others after 41.2-41.3 ms.
#   amqp10.pcap  RabbitMQ with rabbitmq_amqp1_0 on 10.81.2.1:5672 (SASL
#     ANONYMOUS, the plugin's default user guest; loopback_users none;
#     the queue `lab` declared by a first attach to /queue/lab before the
#     capture, over the server's loopback). One Qpid Proton container,
#     two connections opened at once: a receiver on /queue/lab with
#     MessagingHandler's defaults (flow: link credit 10; each message
#     accepted at once, settled: disposition settled=true) and a sender
#     to /queue/lab. Three round trips each (40.7-40.9 ms): the SASL
#     header (answered by the broker's and sasl-mechanisms), sasl-init
#     (sasl-outcome), then the AMQP header, open, begin, attach (and the
#     receiver's flow) in one segment, answered by the broker's header,
#     open, begin, attach and flow spread over 3.4-3.7 ms. From 1 s after
#     the receiver's attach came back the sender sends 4 messages (83-84
#     bytes) 1.2 s apart (f38, f44, f54, f61), each awaited until the
#     broker settles it (disposition accepted after 41.3-52.1 ms); the
#     broker pushes each to the receiver 0.1 ms after that disposition
#     (f40, f47, f57, f64): nothing the receiver sent asks for them; the
#     receiver's last frames before them were its attach and flow (f24,
#     1.09 s before f40), its disposition of the message before (f41,
#     1.20 s before f47; f59, 1.19 s before f64) and a flow already
#     answered (f51, 1.17 s before f57). After every second message
#     Proton's receiver tops its credit up with a flow (credit 9 then
#     10, f48 with the disposition, f51; f65, f68), and RabbitMQ answers
#     each flow with one of its own 41 ms later (f50, f52; f67, f69).
#     0.5 s after the 4th both close (close, answered after 41.1 ms);
#     each client's FIN draws an RST from the broker 40.8-41.0 ms later,
#     and no FIN.
#
# After each capture, queue_report.py (written below) cuts each
# connection's payloads into the protocol's messages with tshark,
# prints them with frame numbers and checks what the capture must hold.
#
# Needs root, ip, tcpdump, tshark, java and Debian's zookeeper,
# beanstalkd, rabbitmq-server, python3-kazoo and python3-qpid-proton.
set -euo pipefail
command -v tshark > /dev/null || { echo "needs tshark" >&2; exit 1; }
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# The Python that has Debian's kazoo and proton (python3-kazoo,
# python3-qpid-proton): the first python3 on PATH may be another one.
py=
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import kazoo, proton' 2> /dev/null; then py=$(command -v "$p"); break; fi
done
[[ -n $py ]] || { echo "needs python3-kazoo and python3-qpid-proton" >&2; exit 1; }
for t in java beanstalkd rabbitmq-server; do
  command -v "$t" > /dev/null || { echo "needs $t" >&2; exit 1; }
done
# Debian's zookeeper package: the server's jar (its manifest names the
# jars it needs) and, when there, slf4j's simple logger for its log.
zk_jars=/usr/share/java/zookeeper.jar
[[ -f $zk_jars ]] || { echo "needs Debian's zookeeper package" >&2; exit 1; }
[[ -f /usr/share/java/slf4j-simple.jar ]] && zk_jars+=:/usr/share/java/slf4j-simple.jar
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtqueue$$ /tmp/rttdoc-queues
chmod 755 "$work"
# Every server runs in the server's namespace outside $pids (Java for
# ZooKeeper; beanstalkd; RabbitMQ's shell wrapper, its Erlang VM and the
# epmd it starts): relay_stop_servers sends them SIGTERM; what is still
# there 10 s later gets SIGKILL, so nothing outlives the namespace.
stop_servers() {
  relay_stop_servers
  for _ in $(seq 100); do
    [[ -z $(ip netns pids "$S" 2>/dev/null) ]] && return 0
    sleep 0.1
  done
  ip netns pids "$S" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
}
extra_cleanup() {
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
  stop_servers
}
cd "$work"

# --- what a capture holds: its messages, from tshark's TCP payloads ----
cat > "$work/queue_report.py" <<'PY'
"""Reads the TCP payloads of a capture with tshark, cuts each direction
of each connection into the protocol's messages, prints them (the frame
that carries a message's first byte, its time) with each request's
answer, and checks what the capture must hold:

    queue_report.py zookeeper|beanstalkd|amqp10 PCAP

ZooKeeper (no dissector in tshark 4.0): jute frames, 4-byte length;
beanstalkd: text lines (a put's and a RESERVED's body after its line);
AMQP 1.0: its frames (8-byte header), the protocol headers, the
performatives by descriptor code.
"""
import struct
import sys

import tcp_streams  # scripts/tcp_streams.py (PYTHONPATH)

proto, pcap = sys.argv[1], sys.argv[2]
port = {"zookeeper": 2181, "beanstalkd": 11300, "amqp10": 5672}[proto]
conns = tcp_streams.read(pcap, port)


def cut(buf, parse):
    """parse(bytes) -> (length, what) or None when incomplete; yields
    (frame, t, what) with the frame and time of each message's first byte."""
    i, raw = 0, bytes(b for b, _, _ in buf)
    while i < len(raw):
        got = parse(raw[i:], i == 0)
        if got is None:
            yield buf[i][1], buf[i][2], f"(incomplete: {len(raw) - i} bytes)"
            return
        n, what = got
        yield buf[i][1], buf[i][2], what
        i += n


# --- ZooKeeper ---------------------------------------------------------
OPS = {1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData", 8: "getChildren",
       9: "sync", 11: "ping", 12: "getChildren2", 14: "multi", 15: "create2", 100: "auth",
       101: "setWatches", 105: "setWatches2", -11: "closeSession"}
EVENTS = {1: "NodeCreated", 2: "NodeDeleted", 3: "NodeDataChanged", 4: "NodeChildrenChanged"}


def zk_request(b, first):
    if len(b) < 4 or len(b) < 4 + struct.unpack(">i", b[:4])[0]:
        return None
    n = struct.unpack(">i", b[:4])[0]
    if first:
        timeout = struct.unpack(">i", b[16:20])[0]
        return 4 + n, ("connect", None, f"ConnectRequest timeout {timeout} ms ({4 + n} bytes)")
    xid, op = struct.unpack(">ii", b[4:12])
    return 4 + n, ("req", xid, f"{OPS.get(op, op)} xid {xid} ({4 + n} bytes)")


def zk_answer(b, first):
    if len(b) < 4 or len(b) < 4 + struct.unpack(">i", b[:4])[0]:
        return None
    n = struct.unpack(">i", b[:4])[0]
    if first:
        timeout = struct.unpack(">i", b[8:12])[0]
        return 4 + n, ("connect", None, f"ConnectResponse timeout {timeout} ms ({4 + n} bytes)")
    xid, zxid, err = struct.unpack(">iqi", b[4:20])
    if xid == -1:
        etype, state, plen = struct.unpack(">iii", b[20:32])
        path = b[32:32 + plen].decode()
        return 4 + n, ("push", xid, f"notification {EVENTS.get(etype, etype)} {path} ({4 + n} bytes)")
    return 4 + n, ("ans", xid, f"reply xid {xid} err {err} ({4 + n} bytes)")


# --- beanstalkd ----------------------------------------------------------
def bs_request(b, first):
    end = b.find(b"\r\n")
    if end < 0:
        return None
    line = b[:end].decode()
    n = end + 2
    if line.startswith("put "):
        n += int(line.split()[4]) + 2
        if len(b) < n:
            return None
    return n, ("noanswer" if line == "quit" else "req", None, f"{line!r} ({n} bytes)")


def bs_answer(b, first):
    end = b.find(b"\r\n")
    if end < 0:
        return None
    line = b[:end].decode()
    n = end + 2
    if line.split()[0] in ("RESERVED", "FOUND", "OK"):
        n += int(line.split()[2 if line.startswith(("RESERVED", "FOUND")) else 1]) + 2
        if len(b) < n:
            return None
    return n, ("ans", None, f"{line!r} ({n} bytes)")


# --- AMQP 1.0 ------------------------------------------------------------
PERFORMATIVES = {0x10: "open", 0x11: "begin", 0x12: "attach", 0x13: "flow", 0x14: "transfer",
                 0x15: "disposition", 0x16: "detach", 0x17: "end", 0x18: "close",
                 0x40: "sasl-mechanisms", 0x41: "sasl-init", 0x42: "sasl-challenge",
                 0x43: "sasl-response", 0x44: "sasl-outcome"}


def amqp_frame(b, first):
    if b[:4] == b"AMQP":
        if len(b) < 8:
            return None
        return 8, ("header", None, f"protocol header {'SASL' if b[4] == 3 else 'AMQP'} {b[5]}.{b[6]}.{b[7]}")
    if len(b) < 8 or len(b) < struct.unpack(">I", b[:4])[0]:
        return None
    size, doff, ftype, channel = struct.unpack(">IBBH", b[:8])
    if size == 8:
        return 8, ("empty", None, "empty frame (heartbeat)")
    body = b[doff * 4:size]
    code = body[2] if body[:2] == b"\x00\x53" else body[2:10]
    name = PERFORMATIVES.get(code, f"descriptor {code!r}")
    return size, (name, None, f"{name} ch {channel} ({size} bytes)")


PARSE = {"zookeeper": (zk_request, zk_answer), "beanstalkd": (bs_request, bs_answer),
         "amqp10": (amqp_frame, amqp_frame)}[proto]
summary = {}
for stream, c in sorted(conns.items()):
    syn = "SYN at frame %d (%.1f ms)" % c["syn"] if c["syn"] else "no SYN in the capture"
    print(f"connection {stream}: {syn}")
    events = []
    for side in "cs":
        for frame, t, what in cut(c[side], PARSE[0 if side == "c" else 1]):
            events.append((t, frame, side, what))
    events.sort(key=lambda e: (e[1], e[2]))
    waiting = []  # requests awaiting their answer: (t, frame, key)
    for t, frame, side, what in events:
        if isinstance(what, str):
            print(f"  frame {frame:4d} {t:9.1f} ms  {'->' if side == 'c' else '<-'} {what}")
            continue
        kind, key, text = what
        summary.setdefault((stream, side, kind), []).append(text)
        after = ""
        if proto != "amqp10" and side == "c" and kind in ("req", "connect"):
            waiting.append((t, frame, key))
        elif proto != "amqp10" and side == "s" and kind in ("ans", "connect"):
            for i, (t0, f0, k0) in enumerate(waiting):
                if proto == "beanstalkd" or k0 == key:
                    after = f"   [answers frame {f0}, {t - t0:.1f} ms after it]"
                    del waiting[i]
                    break
        print(f"  frame {frame:4d} {t:9.1f} ms  {'->' if side == 'c' else '<-'} {text}{after}")
    for side, frame, t in c["fins"]:
        print(f"  frame {frame:4d} {t:9.1f} ms  FIN from the {'client' if side == 'c' else 'server'}")
    for side, frame, t in c["rsts"]:
        print(f"  frame {frame:4d} {t:9.1f} ms  RST from the {'client' if side == 'c' else 'server'}")


def count(side, kind, contains=""):
    return sum(1 for (s, sd, k), texts in summary.items() if sd == side and k == kind
               for x in texts if contains in x)


checks = {
    "zookeeper": [("two connections", len(conns) == 2),
                  ("three notifications", count("s", "push", "NodeDataChanged") == 3),
                  ("three setData", count("c", "req", "setData") == 3),
                  ("four getData (the watch and its re-arming)", count("c", "req", "getData") == 4),
                  ("a ping", count("c", "req", "ping") >= 1),
                  ("two closeSession", count("c", "req", "closeSession") == 2)],
    "beanstalkd": [("two connections", len(conns) == 2),
                   ("three puts", count("c", "req", "'put ") == 3),
                   ("three RESERVED", count("s", "ans", "RESERVED") == 3),
                   ("one TIMED_OUT", count("s", "ans", "TIMED_OUT") == 1),
                   ("two quits", count("c", "noanswer", "quit") == 2)],
    "amqp10": [("two connections", len(conns) == 2),
               ("eight transfers", count("c", "transfer") + count("s", "transfer") == 8),
               ("two closes each way", count("c", "close") == 2 and count("s", "close") == 2)],
}[proto]
# Each connection opens and closes inside: its SYN, the client's FIN and
# the server's FIN (or RST: RabbitMQ answers a FIN after its close with one).
checks.append(("every connection's SYN, the client's FIN and the server's FIN or RST inside",
               all(c["syn"] and "c" in {s for s, _, _ in c["fins"]}
                   and "s" in {s for s, _, _ in c["fins"] + c["rsts"]} for c in conns.values())))
failed = [what for what, ok in checks if not ok]
for what in failed:
    print(f"check failed: {what}", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
report() { # PROTO NAME
  if ! PYTHONPATH="$here" "$py" "$work/queue_report.py" "$1" "$out/$2.pcap.gz" > "$work/$2.report"; then
    cat "$work/$2.report" >&2
    echo "$2 does not hold what it should" >&2
    exit 1
  fi
  sed "s/^/  /" "$work/$2.report" >&2
}

# Runs `$py SCRIPT` in the client's namespace for the capture NAME, its
# output (times of what it did) kept in $work/NAME.out and shown after.
lab() { # NAME SCRIPT
  relay_capture_checked "$1" sh -c \
    "'$py' '$2' > '$1.out' 2>&1 || { cat '$1.out' >&2; exit 1; }"
  sed "s/^/  $1: /" "$work/$1.out" >&2
}

# --- zookeeper ---------------------------------------------------------
mkdir -p "$work/zookeeper/data"
cat > "$work/zookeeper/zoo.cfg" <<CFG
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$work/zookeeper/data
clientPort=2181
clientPortAddress=10.81.2.1
admin.enableServer=false
CFG
ip netns exec "$S" java -Xmx256m -cp "$zk_jars" org.apache.zookeeper.server.quorum.QuorumPeerMain \
  "$work/zookeeper/zoo.cfg" > "$work/zookeeper.log" 2>&1 &
relay_listening 2181 300
cat > "$work/zk_setup.py" <<'PY'
"""Before the capture, in the server's namespace: a first session and a
first write (the server's first transaction log), then closes."""
import logging

from kazoo.client import KazooClient

logging.basicConfig(level=logging.ERROR)
c = KazooClient(hosts="10.81.2.1:2181", timeout=6.0)
c.start(timeout=30)
c.create("/warm-up", b"")
c.stop()
c.close()
PY
ip netns exec "$S" "$py" "$work/zk_setup.py"
cat > "$work/zookeeper.py" <<'PY'
"""Two kazoo clients, each its own connection: A (session timeout 6 s)
creates /lab and watches its data (kazoo's DataWatch: getData with a
watch, armed again each time it fires); B (session timeout 10 s, kazoo's
default) sets /lab 3 times 1.5 s apart from 1 s after A's watch is set;
A waits until 6 s after its watch was set; B closes, then A."""
import logging
import sys
import time

from kazoo.client import KazooClient

logging.basicConfig(level=logging.WARNING)
T0 = time.monotonic()


def say(what):
    print(f"{(time.monotonic() - T0) * 1000:7.1f} ms  {time.time():.3f}  {what}", flush=True)


HOSTS = "10.81.2.1:2181"
a = KazooClient(hosts=HOSTS, timeout=6.0)
a.start(timeout=10)
say(f"A connected, session timeout {a._session_timeout} ms")
b = KazooClient(hosts=HOSTS, timeout=10.0)
b.start(timeout=10)
say(f"B connected, session timeout {b._session_timeout} ms")
a.create("/lab", b"v0")
say("A created /lab")
fired = []


@a.DataWatch("/lab")
def changed(data, stat, event):
    fired.append(event)
    say(f"A watch: event {event.type if event else None}, data {data!r}, version {stat.version}")


watched = time.monotonic()
say("A watching /lab")
for i in range(3):
    time.sleep(max(0.0, watched + 1.0 + 1.5 * i - time.monotonic()))
    stat = b.set("/lab", f"v{i + 1}".encode())
    say(f"B set /lab to v{i + 1}, version {stat.version}")
time.sleep(max(0.0, watched + 6.0 - time.monotonic()))
b.stop()
b.close()
say("B closed")
a.stop()
a.close()
say("A closed")
if len(fired) != 4:
    sys.exit(f"the watch fired {len(fired) - 1} times, not 3")
PY
lab zookeeper "$work/zookeeper.py"
report zookeeper zookeeper
stop_servers

# --- beanstalkd ----------------------------------------------------------
mkdir -p "$work/beanstalkd"
ip netns exec "$S" beanstalkd -l 10.81.2.1 -p 11300 -b "$work/beanstalkd" > "$work/beanstalkd.log" 2>&1 &
relay_listening 11300
cat > "$work/beanstalkd.py" <<'PY'
"""beanstalkd's text protocol by hand, two connections: a producer
(`use jobs`) and a worker (`watch jobs`, then reserve, delete, 3 times,
then `reserve-with-timeout 1`, which times out); the producer puts a job
1.2, 2.4 and 3.6 s after the worker's first reserve left; both quit."""
import socket
import sys
import threading
import time

ADDR = ("10.81.2.1", 11300)
T0 = time.monotonic()


def say(what):
    print(f"{(time.monotonic() - T0) * 1000:7.1f} ms  {time.time():.3f}  {what}", flush=True)


class Conn:
    def __init__(self, name):
        self.name = name
        self.sock = socket.create_connection(ADDR, timeout=10)
        self.file = self.sock.makefile("rb")

    def send(self, line, body=None):
        data = line.encode() + b"\r\n" + (b"" if body is None else body + b"\r\n")
        self.sock.sendall(data)  # one write: a put's line and body together
        say(f"{self.name} -> {line}")

    def answer(self):
        line = self.file.readline().rstrip(b"\r\n").decode()
        body = None
        if line.startswith("RESERVED "):
            body = self.file.read(int(line.split()[2]) + 2)[:-2]
        say(f"{self.name} <- {line}" + ("" if body is None else f" {body!r}"))
        return line, body

    def cmd(self, line, body=None):
        self.send(line, body)
        return self.answer()

    def quit(self):
        self.send("quit")
        self.sock.shutdown(socket.SHUT_WR)
        rest = self.sock.recv(1)  # the server's FIN
        self.sock.close()
        say(f"{self.name} closed" + (f" (got {rest!r})" if rest else ""))


producer = Conn("producer")
assert producer.cmd("use jobs")[0] == "USING jobs"
worker = Conn("worker")
assert worker.cmd("watch jobs")[0] == "WATCHING 2"
first_reserve = threading.Event()
result = []


def work():
    for i in range(3):
        worker.send("reserve")
        first_reserve.set()
        line, body = worker.answer()
        assert line.startswith("RESERVED "), line
        assert worker.cmd(f"delete {line.split()[1]}")[0] == "DELETED"
    result.append(worker.cmd("reserve-with-timeout 1")[0])


t = threading.Thread(target=work)
t.start()
if not first_reserve.wait(10):
    sys.exit("no reserve")
start = time.monotonic()
for i in range(3):
    time.sleep(max(0.0, start + 1.2 * (i + 1) - time.monotonic()))
    line, _ = producer.cmd("put 1024 0 60 20", f"job {i + 1} {'x' * 14}".encode())
    assert line.startswith("INSERTED "), line
t.join(10)
if result != ["TIMED_OUT"]:
    sys.exit(f"the worker got {result}")
worker.quit()
producer.quit()
PY
lab beanstalkd "$work/beanstalkd.py"
report beanstalkd beanstalkd
stop_servers

# --- amqp10 --------------------------------------------------------------
relay_rabbitmq '[rabbitmq_amqp1_0]' ''
relay_listening 5672 900
cat > "$work/amqp10_lab.py" <<'PY'
"""AMQP 1.0 with Qpid Proton's python binding (its reactor, one
Container, each link on a connection of its own). `setup`: attaches a
receiver to /queue/lab (the plugin declares the queue) and closes.
Otherwise: a receiver on /queue/lab (MessagingHandler's defaults:
credit 10, each message accepted as it comes) and a sender to it that
sends 4 messages 1.2 s apart from 1 s after the receiver's attach was
answered, each awaited until the broker accepts it (settled); 0.5 s
after the receiver has the 4th, both connections close."""
import sys
import time

from proton import Message
from proton.handlers import MessagingHandler
from proton.reactor import Container

URL, ADDRESS = "amqp://10.81.2.1:5672", "/queue/lab"
T0 = time.monotonic()


def say(what):
    print(f"{(time.monotonic() - T0) * 1000:7.1f} ms  {time.time():.3f}  {what}", flush=True)


class Setup(MessagingHandler):
    def on_start(self, event):
        self.conn = event.container.connect(URL)
        event.container.create_receiver(self.conn, ADDRESS)

    def on_link_opened(self, event):
        say("setup: attached")
        self.conn.close()


class Lab(MessagingHandler):
    def __init__(self):
        super().__init__()  # prefetch 10, auto_accept
        self.sent = self.accepted = self.received = 0
        self.first_send = None

    def on_start(self, event):
        self.container = event.container
        self.rconn = event.container.connect(URL)
        self.receiver = event.container.create_receiver(self.rconn, ADDRESS)
        self.sconn = event.container.connect(URL)
        self.sender = event.container.create_sender(self.sconn, ADDRESS)

    def on_link_opened(self, event):
        if event.link == self.receiver:
            say(f"receiver attached, credit {self.receiver.credit}")
            self.container.schedule(1.0, self)
        else:
            say("sender attached")

    def on_timer_task(self, event):
        if self.accepted == self.received == 4:
            say("closing")
            self.rconn.close()
            self.sconn.close()
            return
        if self.sender.credit < 1:
            sys.exit("no credit to send")
        if self.first_send is None:
            self.first_send = time.monotonic()
        self.sender.send(Message(body=f"message {self.sent + 1} " + "x" * 40))
        self.sent += 1
        say(f"sent message {self.sent}")

    def on_accepted(self, event):
        self.accepted += 1
        say(f"message {self.accepted} accepted (settled)")
        if self.accepted < 4:
            due = self.first_send + 1.2 * self.accepted
            self.container.schedule(max(0.0, due - time.monotonic()), self)
        self.maybe_done()

    def on_message(self, event):
        self.received += 1
        say(f"received {event.message.body[:9]!r}")
        self.maybe_done()

    def maybe_done(self):
        if self.accepted == self.received == 4:
            self.container.schedule(0.5, self)

    def on_connection_closed(self, event):
        say("a connection closed")


if sys.argv[1:] == ["setup"]:
    Container(Setup()).run()
else:
    lab = Lab()
    Container(lab).run()
    if (lab.sent, lab.accepted, lab.received) != (4, 4, 4):
        sys.exit(f"sent {lab.sent}, accepted {lab.accepted}, received {lab.received}")
PY
ip netns exec "$S" timeout 30 "$py" "$work/amqp10_lab.py" setup
lab amqp10 "$work/amqp10_lab.py"
report amqp10 amqp10
stop_servers
ls -l "$out"/zookeeper.pcap.gz "$out"/beanstalkd.pcap.gz "$out"/amqp10.pcap.gz
