#!/usr/bin/env bash
# Captures HTTP through Linux's netfilter log, the way a
# firewall's logged traffic is captured (`tcpdump -i nflog:N` behind a
# `log group N` rule; LINKTYPE_NFLOG), inside a private network namespace,
# for crates/rttdoc/tests/capture_formats.rs (tests/data/nflog/).
#
#   scripts/nflog-capture.sh OUT.pcap
#
# Needs root, unshare, ip, nft (nftables), tcpdump, python3, curl, ethtool, gzip.
set -euo pipefail
out=$(realpath -m "$1")
if [[ "${RTTDOC_IN_NETNS:-}" != 1 ]]; then
  exec env RTTDOC_IN_NETNS=1 unshare --net --mount -- "$0" "$@"
fi
work=$(mktemp -d /tmp/rttdoc-nflog.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip link set lo up mtu 1500
# Wire-sized packets, as a firewall logs them off a NIC.
ethtool -K lo tso off gso off gro off >/dev/null 2>&1 || true
# Every packet to or from port 8080 as it leaves. (IPv4 only: IPv6 traffic
# the same rule logs never reached tcpdump's nflog socket in this kernel.)
nft add table inet capture
nft add chain inet capture out '{ type filter hook output priority 0; }'
nft add rule inet capture out tcp dport 8080 log group 5
nft add rule inet capture out tcp sport 8080 log group 5
head -c 200000 /dev/zero | tr '\0' 'x' > "$work/file-200k.bin"
echo hello > "$work/index.html"
tcpdump -i nflog:5 -s 0 -B 16384 -U -w "$work/nflog.pcap" 2>"$work/tcpdump.err" & pids+=($!)
for _ in $(seq 50); do [[ -s "$work/nflog.pcap" ]] && break; sleep 0.1; done
timeout 20 python3 -m http.server 8080 --bind 127.0.0.1 -d "$work" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:8080/index.html && break; sleep 0.1; done
curl -s -o /dev/null http://127.0.0.1:8080/file-200k.bin
curl -s -o /dev/null http://127.0.0.1:8080/index.html -o /dev/null http://127.0.0.1:8080/missing
sleep 2
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()
grep -E 'captured' "$work/tcpdump.err" >&2 || true
gzip -9 -n -c "$work/nflog.pcap" > "$out"
