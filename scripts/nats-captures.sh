#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/nats.rs
# (tests/data/nats/nats-pubsub.pcap.gz): nats-server and the nats-py
# client library (installed into a virtualenv in the work directory),
# real Linux TCP, tcpdump in the clients' namespace, across a path of
# 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# The server pings its clients every 2 s. A subscriber (client host)
# subscribes to `feed`; a publisher (client host) publishes five messages
# 0.7-1.2 s apart, each followed by a PING to flush it; then the
# subscriber sends a request to `svc`, whose responder (on the server's
# host, not captured) answers after 100 ms.
#
# Needs root, ip, tcpdump, python3 (with venv and network access to PyPI
# for nats-py) and nats-server.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtnats$$ /tmp/rttdoc-nats
chmod 755 "$work"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
}
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q nats-py
py=$work/venv/bin/python

cat > "$work/sub.py" <<'PY'
import asyncio, nats
async def main():
    nc = await nats.connect("nats://10.81.2.1:4222", ping_interval=60)
    done = asyncio.Event()
    got = []
    async def cb(msg):
        got.append(msg.data)
        if len(got) == 5:
            done.set()
    await nc.subscribe("feed", cb=cb)
    await nc.flush()
    await asyncio.wait_for(done.wait(), 20)
    await nc.request("svc", b"q", timeout=2)
    await nc.drain()
asyncio.run(main())
PY
cat > "$work/pub.py" <<'PY'
import asyncio, nats
async def main():
    nc = await nats.connect("nats://10.81.2.1:4222")
    for i, pause in enumerate([0.7, 1.0, 0.8, 1.2, 0.9]):
        await nc.publish("feed", b"message %d" % i)
        await nc.flush()
        await asyncio.sleep(pause)
    await nc.drain()
asyncio.run(main())
PY
cat > "$work/svc.py" <<'PY'
import asyncio, nats
async def main():
    nc = await nats.connect("nats://10.81.2.1:4222")
    async def cb(msg):
        await asyncio.sleep(0.1)
        await msg.respond(b"answer")
    await nc.subscribe("svc", cb=cb)
    await asyncio.sleep(25)
asyncio.run(main())
PY

printf 'listen: 10.81.2.1:4222\nping_interval: "2s"\n' > "$work/nats.conf"
ip netns exec "$S" nats-server -c "$work/nats.conf" > "$work/nats.log" 2>&1 &
relay_listening 4222
ip netns exec "$S" "$py" "$work/svc.py" & pids+=($!)
ip netns exec "$M" python3 "$here/tun-delay.py" ta tb 20 30 & pids+=($!)
timeout 35 ip netns exec "$C" tcpdump -i c0 -s 0 -U -w "$work/nats-pubsub.pcap" tcp 2>/dev/null & pids+=($!)
sleep 1
timeout 25 ip netns exec "$C" "$py" "$work/sub.py" & sub=$!
sleep 1
timeout 20 ip netns exec "$C" "$py" "$work/pub.py"
wait "$sub"
sleep 1
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
gzip -9 -n -c "$work/nats-pubsub.pcap" > "$out/nats-pubsub.pcap.gz"
ls -l "$out"
