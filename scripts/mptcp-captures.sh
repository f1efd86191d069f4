#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/mptcp.rs
# (tests/data/mptcp/*.pcap.gz): Linux's Multipath TCP (IPPROTO_MPTCP
# sockets, the in-kernel path manager) between two namespaces joined by two
# veth pairs, captured by `tcpdump -i any` at the client, which sees every
# subflow:
#
#   client ns  c1 10.81.1.2 ---- s1 10.81.1.1  server ns
#              c2 10.81.2.2 ---- s2 10.81.2.1
#
# Each path's server side sends at most 10 Mbit/s (tbf), so an answer
# of 300 KB fills a subflow and the kernel's scheduler spreads it over
# both. The server (scripts/mptcp-peer.py) answers each request line after
# 150 ms with 300 KB; the client sends the next request when the answer is
# in.
#
#   two-paths-think.pcap  the client's second address is a `subflow`
#                         endpoint: a second subflow joins (MP_JOIN) and
#                         the answers go over both, a request on one
#                         subflow answered on the other
#   one-path-think.pcap   the same without the second endpoint: one
#                         subflow carries everything (its request ->
#                         answer times are the application's)
#
# Needs root, ip, tc (tbf), tcpdump, python3, a kernel with net.mptcp.enabled.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
tag=rtmp$$
C=$tag-c S=$tag-s
work=$(mktemp -d /tmp/rttdoc-mptcp.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for n in $C $S; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for n in $C $S; do
  ip netns add $n
  ip -n $n link set lo up
  ip netns exec $n sysctl -qw net.mptcp.enabled=1
done
for i in 1 2; do
  ip link add c$i netns $C type veth peer name s$i netns $S
  ip -n $C addr add 10.81.$i.2/24 dev c$i
  ip -n $S addr add 10.81.$i.1/24 dev s$i
  ip -n $C link set c$i up
  ip -n $S link set s$i up
  ip netns exec $S tc qdisc add dev s$i root tbf rate 10mbit burst 16k latency 200ms
done
# The second path's route, so a subflow from 10.81.2.2 reaches the server's
# address on the first path.
ip -n $C route add 10.81.1.0/24 dev c1 2>/dev/null || true
ip -n $C rule add from 10.81.2.2 table 102
ip -n $C route add default dev c2 table 102
ip -n $S route add 10.81.2.0/24 dev s2 2>/dev/null || true
for n in $C $S; do ip -n $n mptcp limits set subflow 2 add_addr_accepted 2; done

capture() { # NAME PORT SECOND_PATH(yes|no)
  local name=$1 port=$2 second=$3
  ip -n $C mptcp endpoint flush
  if [[ $second == yes ]]; then
    ip -n $C mptcp endpoint add 10.81.2.2 dev c2 subflow
  fi
  ip netns exec $S python3 "$here/mptcp-peer.py" serve 10.81.1.1 "$port" 150 300000 &
  pids+=($!)
  ip netns exec $C tcpdump -q -i any -s 0 -w "$work/$name.pcap" "tcp port $port" 2>/dev/null &
  local dump=$!
  sleep 1
  ip netns exec $C python3 "$here/mptcp-peer.py" ask 10.81.1.1 "$port" 8 300000
  sleep 1
  kill "$dump"; wait "$dump" 2>/dev/null || true
  gzip -9n < "$work/$name.pcap" > "$out/$name.pcap.gz"
  echo "$out/$name.pcap.gz: $(tcpdump -r "$work/$name.pcap" 2>/dev/null | wc -l) packets"
}

capture two-paths-think 7401 yes
capture one-path-think 7402 no
