#!/usr/bin/env bash
# Makes the kernel captures behind crates/rttdoc/tests/real_semantics.rs
# (tests/data/semantics/*.pcap.gz): real Linux TCP between two network
# namespaces joined by a bridge in a third, so that nothing touches the
# host's interfaces.
#
#   scripts/semantics-captures.sh OUTDIR
#
#   bridge-any.pcap    `tcpdump -i any` in the bridge namespace: every packet
#                      seen on the client's veth, the bridge and the server's
#                      veth (capture copies), 200 KB download
#   merged.pcap        mergecap of the client's and the server's own captures
#                      of that download (each packet twice)
#   missing.pcap       the client's capture of that download with one server
#                      data segment deleted (editcap): a capture drop
#   keepalive.pcap     SO_KEEPALIVE with TCP_KEEPIDLE=1 s: the kernel's probes
#                      on an idle connection, then the client closes
#   doubled.pcap       keepalive.pcap appended to itself (mergecap -a)
#   zero-window.pcap   a client with a 4 KB receive buffer that does not read
#                      for 1.5 s: zero windows and the server's probes
#   refused.pcap       a connect to a closed port: the kernel's RST
#   loss.pcap          a 300 KB download through a small token-bucket queue
#                      that drops bursts: real retransmissions
#
# Needs root, ip, tc (tbf), tcpdump, mergecap, editcap, tshark, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
py=$(command -v python3)
tag=rtsem$$
C=$tag-c S=$tag-s B=$tag-b
work=$(mktemp -d /tmp/rttdoc-semantics.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for n in $C $S $B; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add $C; ip netns add $S; ip netns add $B
ip link add c0 netns $C type veth peer name cb netns $B
ip link add s0 netns $S type veth peer name sb netns $B
ip -n $B link add br0 type bridge
ip -n $B link set cb master br0; ip -n $B link set sb master br0
for l in cb sb br0 lo; do ip -n $B link set $l up; done
ip -n $C addr add 10.77.0.1/24 dev c0; ip -n $C link set c0 up; ip -n $C link set lo up
ip -n $S addr add 10.77.0.2/24 dev s0; ip -n $S link set s0 up; ip -n $S link set lo up
# Wire-sized packets, as a NIC's capture shows them.
if command -v ethtool >/dev/null; then
  ip netns exec $C ethtool -K c0 tso off gso off gro off >/dev/null 2>&1 || true
  ip netns exec $S ethtool -K s0 tso off gso off gro off >/dev/null 2>&1 || true
fi

cat > "$work/server.py" <<'PY'
import socket, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("10.77.0.2", port)); l.listen(8)
c, _ = l.accept()
c.recv(100)
if mode == "bulk":
    c.sendall(b"x" * int(sys.argv[3]))
elif mode == "small":
    c.sendall(b"ok\n")
    c.recv(100)  # until the client closes
c.close()
PY
cat > "$work/client.py" <<'PY'
import socket, sys, time
mode, port = sys.argv[1], int(sys.argv[2])
s = socket.socket()
if mode == "keepalive":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 9)
if mode == "slowreader":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
try:
    s.connect(("10.77.0.2", port))
except ConnectionRefusedError:
    sys.exit(0)
s.sendall(b"GET\n")
if mode == "keepalive":
    s.recv(100)
    time.sleep(3.5)  # idle: the kernel probes every second
    s.shutdown(socket.SHUT_WR)
elif mode == "slowreader":
    time.sleep(1.5)  # not reading: the window closes
while s.recv(65536):
    pass
s.close()
PY

# Runs one exchange with captures: $1 name, $2 server mode, $3 client mode,
# $4 port, then extra server arguments. Captures at both ends and with -i any
# on the bridge; each capture is bounded by timeout.
exchange() {
  local name=$1 smode=$2 cmode=$3 port=$4; shift 4
  local f="port $port"
  timeout 20 ip netns exec $B tcpdump -i any -s 0 -U -w "$work/$name-any.pcap" "$f" 2>/dev/null & pids+=($!)
  timeout 20 ip netns exec $C tcpdump -i c0 -s 0 -U -w "$work/$name-client.pcap" "$f" 2>/dev/null & pids+=($!)
  timeout 20 ip netns exec $S tcpdump -i s0 -s 0 -U -w "$work/$name-server.pcap" "$f" 2>/dev/null & pids+=($!)
  sleep 1
  if [[ $smode != none ]]; then
    timeout 15 ip netns exec $S "$py" "$work/server.py" "$smode" "$port" "$@" & pids+=($!)
    sleep 0.3
  fi
  timeout 15 ip netns exec $C "$py" "$work/client.py" "$cmode" "$port"
  sleep 1
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

exchange dl bulk plain 18001 200000
cp "$work/dl-any.pcap" "$out/bridge-any.pcap"
mergecap -F pcap -w "$out/merged.pcap" "$work/dl-client.pcap" "$work/dl-server.pcap"

# A capture that dropped one packet (the path did not): the server's 10th
# data segment deleted from the client's capture.
gone=$(tshark -r "$work/dl-client.pcap" -Y 'ip.src==10.77.0.2 && tcp.len>0' -T fields -e frame.number 2>/dev/null | sed -n 10p)
editcap -F pcap "$work/dl-client.pcap" "$out/missing.pcap" "$gone"

exchange ka small keepalive 18002
cp "$work/ka-client.pcap" "$out/keepalive.pcap"
# The same trace appended to itself: the clock goes back to the start.
mergecap -a -F pcap -w "$out/doubled.pcap" "$out/keepalive.pcap" "$out/keepalive.pcap"

exchange zw bulk slowreader 18003 300000
cp "$work/zw-client.pcap" "$out/zero-window.pcap"

exchange rf none plain 18004
cp "$work/rf-client.pcap" "$out/refused.pcap"

# Loss on the path: a small token-bucket queue on the bridge's port toward
# the client drops the tail of the server's bursts (the server's stack does
# not see these drops: it must retransmit).
ip netns exec $B tc qdisc add dev cb root tbf rate 20mbit burst 8kb limit 12kb
exchange ls bulk plain 18005 300000
cp "$work/ls-client.pcap" "$out/loss.pcap"

for f in "$out"/*.pcap; do echo "$(basename "$f"): $(tcpdump -r "$f" 2>/dev/null | wc -l) packets"; done
