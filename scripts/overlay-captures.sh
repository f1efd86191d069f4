#!/usr/bin/env bash
# Makes tests/data/semantics/overlay-any.pcap.gz (crates/rttdoc/tests/
# real_semantics.rs): `tcpdump -i any` on a Kubernetes-style node of a
# VXLAN overlay (flannel's or Calico's layout), where every packet of a
# pod's connection to a pod on another node is seen four times: on the
# pod's veth, on the bridge (cni0), on the VXLAN device (vx0), and inside
# the VXLAN datagram on the node's underlay link (UDP 4789, which tshark
# and rttdoc open; flannel's default 8472 is not opened by either).
#
#   scripts/overlay-captures.sh OUTDIR
#
# Two "nodes" (namespaces joined by a veth underlay), each with a pod
# namespace behind a bridge and a VXLAN device routing the other node's
# pod network (a /24 via the other node's vx0 address, onlink: flannel's
# routes). Three downloads of 200 KB by curl from a Python server in the
# other node's pod:
#
#   overlay-any.pcap         the pods' MTU 1450, as CNI plugins set it
#                            under VXLAN; captured on the client's node
#   overlay-mtu-server.pcap  the pods' MTU 1500 over the VXLAN's 1450 (the
#                            classic overlay misconfiguration); captured on
#                            the server's node, where the node answers the
#                            server pod's too-large packets with ICMP
#                            "fragmentation needed" and the pod re-sends
#                            (its GSO blocks: the capture is above the
#                            segmentation offload)
#
# Needs root, ip, tcpdump, curl, python3, gzip.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
tag=rtovl$$
N1=$tag-n1 N2=$tag-n2 PA=$tag-pa PB=$tag-pb
work=$(mktemp -d /tmp/rttdoc-overlay.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for n in $N1 $N2 $PA $PB; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# A node: its namespace, its pod's namespace, its underlay address, the
# other node's, its index (pod network 10.244.I.0/24, vx0 address
# 10.99.I.0), the other's, the pod's MTU.
node() {
  local ns=$1 pod=$2 me=$3 peer=$4 i=$5 j=$6 mtu=$7
  ip -n "$ns" link add vx0 type vxlan id 1 local "$me" remote "$peer" dstport 4789 dev u0
  ip -n "$ns" addr add "10.99.$i.0/32" dev vx0; ip -n "$ns" link set vx0 up
  ip -n "$ns" route add "10.244.$j.0/24" via "10.99.$j.0" dev vx0 onlink
  ip -n "$ns" link add cni0 type bridge
  ip -n "$ns" addr add "10.244.$i.1/24" dev cni0; ip -n "$ns" link set cni0 up
  ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1
  ip link add eth0 netns "$pod" type veth peer name veth0 netns "$ns"
  ip -n "$ns" link set veth0 master cni0 up
  ip -n "$pod" link set eth0 mtu "$mtu"
  ip -n "$pod" addr add "10.244.$i.2/24" dev eth0; ip -n "$pod" link set eth0 up
  ip -n "$pod" route add default via "10.244.$i.1"
  ip netns exec "$pod" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
}

# One overlay: the pods' MTU, the node to capture on, the capture's name.
overlay() {
  local mtu=$1 at=$2 name=$3
  for n in $N1 $N2 $PA $PB; do ip netns add "$n"; ip -n "$n" link set lo up; done
  ip link add u0 netns $N1 type veth peer name u0 netns $N2
  ip -n $N1 addr add 192.168.77.1/24 dev u0; ip -n $N1 link set u0 up
  ip -n $N2 addr add 192.168.77.2/24 dev u0; ip -n $N2 link set u0 up
  node $N1 $PA 192.168.77.1 192.168.77.2 1 2 "$mtu"
  node $N2 $PB 192.168.77.2 192.168.77.1 2 1 "$mtu"
  (cd "$work" && exec ip netns exec $PB python3 -m http.server 8080 --bind 10.244.2.2) >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 50); do
    ip netns exec $PA curl -s -o /dev/null --max-time 1 http://10.244.2.2:8080/ && break
    sleep 0.1
  done
  timeout 30 ip netns exec "$at" tcpdump -i any -s 0 -U -w "$work/$name.pcap" \
    'tcp port 8080 or udp port 4789 or icmp' 2>/dev/null &
  local td=$!
  sleep 1
  for _ in 1 2 3; do
    ip netns exec $PA curl -s -o /dev/null --max-time 5 http://10.244.2.2:8080/200k.bin
  done
  sleep 1
  kill "$td"; wait "$td" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  for n in $N1 $N2 $PA $PB; do ip netns del "$n"; done
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}

head -c 200000 /dev/zero > "$work/200k.bin"
overlay 1450 $N1 overlay-any
overlay 1500 $N2 overlay-mtu-server
