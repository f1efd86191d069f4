#!/usr/bin/env bash
# Makes tests/data/nats/jetstream-pull.pcap.gz: NATS JetStream pull
# consumers from a real nats-server and the nats-py client library
# (installed into a virtualenv in the work directory), real Linux TCP,
# tcpdump in the clients' namespace, across a path of 20 ms each way
# (scripts/relay-path.sh):
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# nats-server 2.9.10 (Debian's), JetStream on (-js, its store in the
# work directory), listening on 10.81.2.1:4222, its defaults otherwise;
# nats-py 2.16.0. Before the capture, over the server's loopback (a setup
# client in the server's namespace, not captured): the stream LAB
# (subjects lab.>, file storage), one warm-up message on lab.warmup (its
# stream seq 1), then the durable pull consumer `worker` (explicit ack,
# deliver policy new: not the warm-up message); and the responder to
# svc.slow (core NATS: 150 ms of work, then its answer), also over the
# server's loopback.
#
#   jetstream-pull.pcap  71 frames, 2 connections, both opened and closed
#     inside it. Times are the capture's (client side; request sent ->
#     answer arrived, so the server's time is that minus the 40 ms RTT).
#     tcp.stream 0, the worker (SYN frame 1 at 0 s): INFO frame 7,
#     CONNECT and PING 9-10, PONG 17; `js.pull_subscribe("lab.jobs",
#     durable="worker", stream="LAB")` is SUB _INBOX.<id>.* (nats-py's
#     request inbox, sid 1) and PUB $JS.API.CONSUMER.INFO.LAB.worker
#     (frame 18), answered frame 22, 41.3 ms. Then 6 `sub.fetch(1,
#     timeout=2)`, each PUB $JS.API.CONSUMER.MSG.NEXT.LAB.worker with the
#     reply subject _INBOX.<id> (one for all the fetches: SUB sid 2, sent
#     with the first) and the body {"batch": 1, "expires": 1999900000}
#     (the timeout less 0.1 ms, in ns; no no_wait, no idle_heartbeat: no
#     100 heartbeats and no 404 in the capture). A message comes as MSG
#     lab.jobs 2 $JS.ACK.LAB.worker.1.<stream seq>.<consumer seq>.<ns>.0
#     (its own subject and the inbox's sid, not the reply subject); the
#     worker acks it (PUB $JS.ACK... with no reply subject, empty) in the
#     segment of its next fetch:
#       fetch 1 frame 23 (0.167 s) -> job 0, frame 29, 1043.6 ms later
#       fetch 2 frame 30 (1.212 s) -> job 1, frame 42, 1497.8 ms later
#       fetch 3 frame 43 (2.711 s) -> job 2, frame 47, 1499.4 ms later
#       fetch 4 frame 50 (4.211 s) -> HMSG _INBOX.<id> 2 "NATS/1.0 408
#         Request Timeout" (Nats-Pending-Messages: 1, Nats-Pending-Bytes:
#         0, no payload), frame 56, 2041.5 ms later
#       fetch 5 frame 55 (6.214 s) -> 408, frame 60, 2041.0 ms later
#       fetch 6 frame 59 (8.217 s) -> 408, frame 63, 2041.4 ms later
#     Each 408 comes after nats-py has given up on its fetch: it times out
#     after 2 s on its own clock, 0.1 ms after the expiry it asked the
#     server for, while the server's 408 is one round trip later; so
#     fetch 5 and 6 leave 38 ms before the 408s of fetch 4 and 5
#     (nats-py drops those), and the last 408 arrives 38 ms after it gave
#     up. 0.5 s after that (the worker's choice: the 408 in) PUB svc.slow
#     with a reply subject in _INBOX.<id>.* (frame 65, 10.721 s), answered
#     frame 67, 192.5 ms later (the responder's 150 ms); the worker's FIN
#     frame 69. nats-server's own PING frame 36 (2.454 s), the worker's
#     PONG 37.
#     tcp.stream 1, the publisher (SYN frame 2 at 0.032 s): INFO 11,
#     CONNECT and PING 13-14, PONG 21; the server's PING frame 32 (2.170
#     s), its PONG 34. 1.0, 2.5 and 4.0 s after the worker's first fetch
#     `js.publish("lab.jobs", b"job N")`, each PUB lab.jobs with a reply
#     subject in _INBOX.<id>.* (the first with its SUB): frames 26 (1.169
#     s), 39 (2.668 s) and 46 (4.169 s), each answered by the server's
#     PubAck ({"stream":"LAB", "seq":2..4}) after 41.3, 41.1 and 41.1 ms
#     (frames 27, 41, 48); the worker's delivery arrives at the same moment
#     (frames 29, 42, 47). Its FIN frame 51 (4.211 s).
#
# After the capture nats_report.py (written below) reads its payloads as
# NATS (tshark 4.0 has no NATS dissector), lists every operation and
# each of the clients' requests with what answered it, and checks the
# capture holds what it should.
#
# Needs root, ip, tcpdump, python3 (with venv and network access to PyPI
# for nats-py), nats-server (2.2 or later: JetStream) and tshark (to read
# what the capture holds).
set -euo pipefail
command -v tshark > /dev/null || { echo "needs tshark" >&2; exit 1; }
command -v nats-server > /dev/null || { echo "needs nats-server" >&2; exit 1; }
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtjs$$ /tmp/rttdoc-jetstream
chmod 755 "$work"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
}
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q nats-py
py=$work/venv/bin/python
echo "$(nats-server --version), nats-py $("$py" -c 'import importlib.metadata as m; print(m.version("nats-py"))')" >&2

# --- before the capture, over the server's loopback --------------------
# The stream LAB (subjects lab.>, file storage in $work/jetstream), one
# warm-up message (the stream's first write), then the durable pull
# consumer worker (explicit ack, delivering only what is published after
# it: not the warm-up message).
cat > "$work/setup.py" <<'PY'
import asyncio, nats
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
async def main():
    nc = await nats.connect("nats://10.81.2.1:4222")
    js = nc.jetstream()
    await js.add_stream(name="LAB", subjects=["lab.>"])
    await js.publish("lab.warmup", b"warm-up")
    await js.add_consumer("LAB", ConsumerConfig(durable_name="worker", ack_policy=AckPolicy.EXPLICIT,
                                                deliver_policy=DeliverPolicy.NEW))
    info = await js.consumer_info("LAB", "worker")
    print(f"consumer {info.name}: ack {info.config.ack_policy}, pending {info.num_pending}", flush=True)
    await nc.close()
asyncio.run(main())
PY
# The responder to svc.slow (core NATS): 150 ms of work, then the answer;
# in the server's namespace, over its loopback (not captured). It says
# it is subscribed in $work/svc.ready.
cat > "$work/svc.py" <<'PY'
import asyncio, sys, nats
async def main():
    nc = await nats.connect("nats://10.81.2.1:4222")
    async def cb(msg):
        await asyncio.sleep(0.15)
        await msg.respond(b"slow answer")
    await nc.subscribe("svc.slow", cb=cb)
    await nc.flush()
    open(sys.argv[1], "w").close()
    await asyncio.sleep(40)
asyncio.run(main())
PY

# --- the capture's clients, in the client's namespace -----------------
# The worker: binds to LAB/worker (pull_subscribe: CONSUMER.INFO), 6
# fetches of one message with a 2 s timeout, acking what it gets; 0.5 s
# after the last (its 408 then in), one core NATS request to svc.slow.
# It writes the wall-clock time of its first fetch to $work/first-fetch.
cat > "$work/worker.py" <<'PY'
import asyncio, os, sys, time, nats
T0 = time.monotonic()
def say(what):
    print(f"{(time.monotonic() - T0) * 1000:8.1f} ms  {what}", flush=True)
async def main():
    mark = sys.argv[1]
    nc = await nats.connect("nats://10.81.2.1:4222")
    js = nc.jetstream()
    sub = await js.pull_subscribe("lab.jobs", durable="worker", stream="LAB")
    say("bound to LAB/worker")
    for i in range(1, 7):
        if i == 1:
            with open(mark + ".tmp", "w") as f:
                f.write(repr(time.time()))
            os.replace(mark + ".tmp", mark)
        start = time.monotonic()
        say(f"fetch {i}")
        try:
            msgs = await sub.fetch(1, timeout=2)
        except asyncio.TimeoutError:  # nats' TimeoutError is one
            say(f"fetch {i}: no message, timed out after {(time.monotonic() - start) * 1000:.1f} ms")
            continue
        for m in msgs:
            say(f"fetch {i}: {m.data.decode()} (stream seq {m.metadata.sequence.stream})"
                f" after {(time.monotonic() - start) * 1000:.1f} ms")
            await m.ack()
    await asyncio.sleep(0.5)
    start = time.monotonic()
    r = await nc.request("svc.slow", b"q", timeout=2)
    say(f"svc.slow: {r.data.decode()} after {(time.monotonic() - start) * 1000:.1f} ms")
    await nc.close()
    say("closed")
asyncio.run(main())
PY
# The publisher: connects at once, waits for the worker's first fetch,
# publishes 3 messages to lab.jobs 1.0, 2.5 and 4.0 s after it (each
# js.publish a request answered by the server's PubAck), then closes.
cat > "$work/pub.py" <<'PY'
import asyncio, os, sys, time, nats
T0 = time.monotonic()
def say(what):
    print(f"{(time.monotonic() - T0) * 1000:8.1f} ms  {what}", flush=True)
async def main():
    mark = sys.argv[1]
    nc = await nats.connect("nats://10.81.2.1:4222")
    js = nc.jetstream()
    for _ in range(1500):
        if os.path.exists(mark):
            break
        await asyncio.sleep(0.01)
    else:
        sys.exit("no first fetch in 15 s")
    first = float(open(mark).read())
    for i, at in enumerate([1.0, 2.5, 4.0]):
        await asyncio.sleep(max(0.0, first + at - time.time()))
        ack = await js.publish("lab.jobs", b"job %d" % i)
        say(f"published job {i}: stream {ack.stream} seq {ack.seq}")
    await nc.close()
    say("closed")
asyncio.run(main())
PY

# Outside $pids (relay_capture_checked stops those after the capture):
# relay_stop_servers stops it.
ip netns exec "$S" nats-server -a 10.81.2.1 -p 4222 -js -sd "$work/jetstream" > "$work/nats.log" 2>&1 &
relay_listening 4222
ip netns exec "$S" "$py" "$work/setup.py" >&2
ip netns exec "$S" "$py" "$work/svc.py" "$work/svc.ready" & pids+=($!)
for _ in $(seq 100); do [[ -e $work/svc.ready ]] && break; sleep 0.1; done
[[ -e $work/svc.ready ]] || { echo "the svc.slow responder did not start" >&2; exit 1; }

relay_capture_checked jetstream-pull sh -c \
  "'$py' '$work/pub.py' '$work/first-fetch' > '$work/pub.out' 2>&1 & p=\$!;
   '$py' '$work/worker.py' '$work/first-fetch' > '$work/worker.out' 2>&1; w=\$?; wait \$p; exit \$w"
sed 's/^/  worker: /' "$work/worker.out" >&2
sed 's/^/  publisher: /' "$work/pub.out" >&2

# --- what the capture holds: its payloads, read as NATS ---------------
# tshark 4.0 has no NATS dissector: nats_report.py rebuilds each
# direction of each connection from tcp.payload and reads the protocol's
# operations; each PUB/HPUB with a reply subject is paired with the first
# MSG/HMSG on that subject that no earlier one took (a pull consumer's
# fetches share one inbox: the server answers them in order). Checks:
# at least 6 fetches, 3 of them answered by a message 300-1800 ms after,
# at least 2 by a 408; 3 PubAcks; svc.slow answered 150-400 ms after.
cat > "$work/nats_report.py" <<'PY'
import json, re, subprocess, sys

rows = subprocess.run(
    ["tshark", "-r", sys.argv[1], "-Y", "tcp.len>0", "-T", "fields", "-e", "frame.number",
     "-e", "frame.time_relative", "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tcp.seq",
     "-e", "tcp.payload"], check=True, capture_output=True, text=True).stdout.splitlines()
flows = {}  # (stream, from_server) -> dict(buf, marks=[(offset, frame, t)], next_seq)
for row in rows:
    frame, t, stream, sport, seq, payload = row.split("\t")
    key = (int(stream), sport == "4222")
    f = flows.setdefault(key, dict(buf=bytearray(), marks=[], next_seq=None))
    data, seq = bytes.fromhex(payload), int(seq)
    if f["next_seq"] is not None and seq < f["next_seq"]:
        data = data[f["next_seq"] - seq:]  # a retransmission: only what is new
        seq = f["next_seq"]
    if not data:
        continue
    f["marks"].append((len(f["buf"]), int(frame), float(t)))
    f["buf"] += data
    f["next_seq"] = seq + len(data)

def where(f, offset):
    best = f["marks"][0]
    for m in f["marks"]:
        if m[0] <= offset:
            best = m
    return best[1], best[2]

ops = []  # dict(stream, server, frame, t, op, args, head, body)
for (stream, server), f in flows.items():
    buf, i = bytes(f["buf"]), 0
    while i < len(buf):
        end = buf.find(b"\r\n", i)
        if end < 0:
            break
        line = buf[i:end].decode(errors="replace")
        frame, t = where(f, i)
        words = line.split()
        op, args = words[0].upper(), words[1:]
        j, head, body = end + 2, b"", b""
        if op in ("PUB", "MSG"):
            n = int(args[-1])
            body, j = buf[j:j + n], j + n + 2
        elif op in ("HPUB", "HMSG"):
            h, n = int(args[-2]), int(args[-1])
            head, body, j = buf[j:j + h], buf[j + h:j + n], j + n + 2
        ops.append(dict(stream=stream, server=server, frame=frame, t=t, op=op, args=args,
                        head=head, body=body, line=line))
        i = j
ops.sort(key=lambda o: o["frame"])

def subject_reply(o):
    a = o["args"]
    if o["op"] == "PUB":
        return a[0], (a[1] if len(a) == 3 else None)
    if o["op"] == "HPUB":
        return a[0], (a[1] if len(a) == 4 else None)
    if o["op"] == "MSG":
        return a[0], (a[2] if len(a) == 4 else None)
    if o["op"] == "HMSG":
        return a[0], (a[2] if len(a) == 5 else None)
    return None, None

def what(o):
    subj, reply = subject_reply(o)
    if o["op"] in ("HMSG", "HPUB"):
        status = " | ".join(h.decode() for h in o["head"].split(b"\r\n") if h)
        sid = f" sid {o['args'][1]}" if o["op"] == "HMSG" else ""
        return f"{o['op']} {subj}{sid} [{status}] {o['body'][:60].decode(errors='replace')!r}"
    if o["op"] in ("MSG", "PUB"):
        r = f" reply {reply}" if reply else ""
        sid = f" sid {o['args'][1]}" if o["op"] == "MSG" else ""
        return f"{o['op']} {subj}{sid}{r} {o['body'][:70].decode(errors='replace')!r}"
    return o["line"][:100]

def matches(pattern, subject):
    p, s = pattern.split("."), subject.split(".")
    for k, tok in enumerate(p):
        if tok == ">":
            return len(s) > k
        if k >= len(s) or (tok != "*" and tok != s[k]):
            return False
    return len(p) == len(s)

# A MSG/HMSG names the subscription it is for by its sid: a pull
# consumer's deliveries carry the message's own subject (lab.jobs) and
# the inbox subscription's sid, an answer to a request the reply subject.
subs = {}  # (stream, sid) -> the subscription's subject
taken = set()
pairs = []
for k, o in enumerate(ops):
    if o["server"]:
        continue
    if o["op"] == "SUB":
        subs[o["stream"], o["args"][-1]] = o["args"][0]
    if o["op"] in ("PUB", "HPUB"):
        subj, reply = subject_reply(o)
        answer = None
        if reply:
            for a in ops[k + 1:]:
                if not (a["server"] and a["stream"] == o["stream"] and a["op"] in ("MSG", "HMSG")) \
                        or id(a) in taken:
                    continue
                sub = subs.get((a["stream"], a["args"][1]))
                if sub is None or not matches(sub, reply):
                    continue
                if sub != reply and subject_reply(a)[0] != reply:
                    continue  # a wildcard inbox: the answer names the reply subject
                taken.add(id(a))
                answer = a
                break
        pairs.append((o, answer))
    elif o["op"] == "PING":
        answer = next((a for a in ops[k + 1:] if a["server"] and a["stream"] == o["stream"]
                       and a["op"] == "PONG" and id(a) not in taken), None)
        if answer:
            taken.add(id(answer))
        pairs.append((o, answer))
    else:
        pairs.append((o, None))

print("every operation, in frame order (C = a client's, S = the server's):")
for o in ops:
    print(f"  {o['frame']:4} {o['t']:8.3f} s  conn {o['stream']}  {'S' if o['server'] else 'C'}  {what(o)}")
print("the clients' requests and what answered them:")
fetch, timeouts, held, pubacks, svc = 0, 0, 0, 0, []
for o, a in pairs:
    subj, reply = subject_reply(o)
    if o["op"] not in ("PUB", "HPUB", "PING"):
        continue
    if o["op"] in ("PUB", "HPUB") and not reply:
        print(f"  {o['frame']:4} {o['t']:8.3f} s  conn {o['stream']}  {what(o)}: asks nothing")
        continue
    if a is None:
        print(f"  {o['frame']:4} {o['t']:8.3f} s  conn {o['stream']}  {what(o)}: no answer")
        continue
    ms = (a["t"] - o["t"]) * 1000
    late = next((n for n in ops if not n["server"] and n["stream"] == o["stream"] and n is not o
                 and n["op"] in ("PUB", "HPUB") and reply and subject_reply(n)[1] == reply
                 and o["frame"] <= n["frame"] <= a["frame"] and n["t"] > o["t"]), None)
    late = f" (after the client's next request on {reply}, frame {late['frame']})" if late else ""
    print(f"  {o['frame']:4} {o['t']:8.3f} s  conn {o['stream']}  {what(o)}\n"
          f"       -> frame {a['frame']:4} {ms:8.1f} ms later: {what(a)}{late}")
    if subj and subj.startswith("$JS.API.CONSUMER.MSG.NEXT."):
        fetch += 1
        status = a["head"].split(b"\r\n")[0].decode() if a["op"] == "HMSG" else ""
        if " 408" in status:
            timeouts += 1
        elif not status and 300 <= ms < 1800:
            held += 1
    elif subj == "lab.jobs" and b'"seq"' in a["body"]:
        pubacks += 1
    elif subj == "svc.slow":
        svc.append(ms)
checks = [("fetches", fetch, 6), ("fetches answered by a message after 300-1800 ms", held, 3),
          ("fetches answered 408", timeouts, 2), ("PubAcks", pubacks, 3),
          ("svc.slow answered after 150-400 ms", sum(1 for x in svc if 150 <= x < 400), 1)]
failed = False
for name, got, want in checks:
    print(f"  {name}: {got}")
    if got < want:
        print(f"check failed: {name}: {got} < {want}", file=sys.stderr)
        failed = True
sys.exit(1 if failed else 0)
PY
if ! python3 "$work/nats_report.py" "$out/jetstream-pull.pcap.gz" > "$work/jetstream-pull.report"; then
  cat "$work/jetstream-pull.report" >&2
  echo "jetstream-pull does not hold what it should" >&2
  exit 1
fi
cat "$work/jetstream-pull.report" >&2
relay_stop_servers
ls -l "$out/jetstream-pull.pcap.gz"
