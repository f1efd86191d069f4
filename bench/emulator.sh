#!/usr/bin/env bash
# Accuracy and throughput of the lab's WAN emulator, measured, not assumed
# (these VMs preempt). Needs root.
#
# 1. Delay accuracy: for several requested RTTs, the RTT rttdoc measures on
#    the lab's own captures (median / max over 20 connections) and the
#    emulator's per-packet lateness (actual minus planned release).
# 2. Throughput: one 30 MB transfer between the built-in peers over the
#    emulator (no delay, no rate limit), against the same transfer over a
#    plain veth pair between two namespaces (the kernel's own forwarding),
#    run in the same script.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$(pwd)/target/release/rttdoc
out=bench/out/emulator; rm -rf "$out"; mkdir -p "$out"

echo "requested RTT | measured RTT median | max | emulator lateness p50 / p99 / max (us, server->client)"
for rtt in 10 36 120; do
  $bin lab run wwr-joined-builtin --rtt ${rtt}ms --runs 20 --out "$out/rtt$rtt" >/dev/null
  $bin analyze --json "$out/rtt$rtt/client.pcapng" > "$out/rtt$rtt/analysis.json"
  python3 - "$rtt" "$out/rtt$rtt" <<'PY'
import json, sys, statistics
rtt, d = sys.argv[1], sys.argv[2]
a = json.load(open(f"{d}/analysis.json"))
l = json.load(open(f"{d}/labels.json"))
r = sorted(c["rtt_ms"] for c in a["connections"])
late = l["emulator"]["server_to_client"]["lateness_us_p50_p99_max"]
print(f"{rtt:>10} ms | {statistics.median(r):9.3f} ms | {max(r):7.3f} ms | {late[0]:.1f} / {late[1]:.1f} / {late[2]:.1f}")
PY
done

body=30000000
server="$bin lab peer http-server --listen \$RTTDOC_SERVER_IP:8080 --body $body --nodelay"
client="$bin lab peer http-client --connect \$RTTDOC_SERVER_IP:8080"
emu=$($bin lab run --server-cmd "$server" --client-cmd "$client" --rtt 0ms --runs 3 --json --out "$out/tput")
emu_ms=$(echo "$emu" | python3 -c "import json,sys; print(json.load(sys.stdin)['timings_ms']['total']['median_ms'])")

# The same transfer over a veth pair, no emulator.
a=rttdoc-bench-$$-a; b=rttdoc-bench-$$-b
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$a"; ip netns add "$b"
ip link add vb$$a type veth peer name vb$$b
ip link set vb$$a netns "$a"; ip link set vb$$b netns "$b"
ip -n "$a" addr add 10.78.0.1/24 dev vb$$a; ip -n "$b" addr add 10.78.0.2/24 dev vb$$b
ip -n "$a" link set vb$$a up mtu 1500; ip -n "$b" link set vb$$b up mtu 1500
ip -n "$a" link set lo up; ip -n "$b" link set lo up
ip netns exec "$b" $bin lab peer http-server --listen 10.78.0.2:8080 --body $body --nodelay & srv=$!
sleep 0.5
veth_ms=$(for i in 1 2 3; do ip netns exec "$a" $bin lab peer http-client --connect 10.78.0.2:8080; done | awk '{print $4*1000}' | sort -n | sed -n 2p)
kill $srv 2>/dev/null || true
python3 - "$body" "$emu_ms" "$veth_ms" <<'PY' | tee "$out/throughput.txt"
import sys
body, emu, veth = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
mbit = lambda ms: body * 8 / (ms / 1000) / 1e6
print(f"30 MB transfer: emulator {mbit(emu):.0f} Mbit/s, veth {mbit(veth):.0f} Mbit/s; emulator / veth = {mbit(emu)/mbit(veth):.2f}")
PY
