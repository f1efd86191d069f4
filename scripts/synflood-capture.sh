#!/usr/bin/env bash
# Captures a SYN flood: COUNT lone SYNs (random source addresses, as a flood
# spoofs them) that nobody answers, made by hping3 inside a private network
# namespace, so nothing leaves the machine.
#
#   scripts/synflood-capture.sh OUT.pcap [COUNT]    # default 200000
#
# The SYNs go to 10.9.0.2, routed onto the namespace's loopback; no address
# there is 10.9.0.2 and forwarding is off, so the kernel drops each SYN on
# receipt: no SYN-ACK, no RST. tcpdump -c COUNT on lo ends the capture, then
# hping3 is stopped.
#
# Needs root, unshare, ip, tcpdump, hping3 (apt-get install hping3).
set -euo pipefail
out=$(realpath -m "$1"); count=${2:-200000}
if [[ "${RTTDOC_IN_NETNS:-}" != 1 ]]; then
  exec env RTTDOC_IN_NETNS=1 unshare --net --mount -- "$0" "$@"
fi
work=$(mktemp -d /tmp/rttdoc-synflood.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip link set lo up mtu 1500
ip route add 10.9.0.0/24 dev lo
tcpdump -i lo -s 0 -B 65536 -U -c "$count" -w "$out" 'tcp dst port 443' 2>"$work/tcpdump.err" &
dump=$!
pids+=("$dump")
for _ in $(seq 50); do [[ -s "$out" ]] && break; sleep 0.1; done
sleep 0.3
# --flood sends as fast as it can until stopped; timeout bounds a capture
# that never fills.
timeout 300 hping3 -q -S -p 443 --flood --rand-source 10.9.0.2 >/dev/null 2>&1 &
flood=$!
pids+=("$flood")
wait "$dump" || true
kill "$flood" 2>/dev/null || true
wait "$flood" 2>/dev/null || true
pids=()
grep -E 'captured|dropped' "$work/tcpdump.err" >&2 || true
