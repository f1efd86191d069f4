#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/upstream.rs's cache test
# (tests/data/proxy/varnish-miss-hit.pcap.gz): a caching reverse proxy
# (Varnish, its default VCL: answers kept for its default TTL) in front of
# scripts/slow-backend.py (100 ms per request), captured on the client's
# side only (the proxy's port: its calls to the origin are not in the
# capture, as when a client's host captures its traffic to a CDN). curl
# asks /page twice on one keep-alive connection: the first a miss (the
# proxy fetches it from the origin: 100 ms), the second a hit. Each answer
# carries Varnish's `Via: 1.1 varnish (Varnish/7.1)`. All on the loopback
# of a private network namespace, removed at the end.
#
# Needs root, ip, tcpdump, varnishd, curl, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
ns=rtcache$$
work=$(mktemp -d)
cleanup() {
  ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
  sleep 0.3
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns"
run() { ip netns exec "$ns" "$@"; }
run ip link set lo up
run python3 "$here/slow-backend.py" 8099 &
run varnishd -a 127.0.0.1:6081 -b 127.0.0.1:8099 -n "$work/varnish" -P "$work/varnish.pid" \
  -s malloc,16m -p thread_pools=1 -p thread_pool_min=5
for _ in $(seq 50); do
  run curl -s -o /dev/null http://127.0.0.1:8099/ready && break
  sleep 0.1
done
run tcpdump -i lo -s 0 -U -w "$work/varnish-miss-hit.pcap" 'tcp port 6081' 2>/dev/null &
sleep 1
run curl -s -o /dev/null -o /dev/null http://127.0.0.1:6081/page http://127.0.0.1:6081/page
sleep 1
run pkill -INT tcpdump || true
sleep 0.5
gzip -9 -c "$work/varnish-miss-hit.pcap" >"$out/varnish-miss-hit.pcap.gz"
echo "wrote $out/varnish-miss-hit.pcap.gz"
