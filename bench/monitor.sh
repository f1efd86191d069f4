#!/usr/bin/env bash
# Does live capture keep up? Replays a corpus (default: bench/run.sh's churn,
# one TLS handshake per request) through a veth pair between two private
# network namespaces with tcpreplay, while `rttdoc monitor` captures on the
# far end; every INTERVAL seconds it prints what the monitor read (packets/s),
# what the kernel dropped for it (rttdoc_capture_dropped_packets_total), the
# connections it finished, the flows it holds and its resident memory.
#
#   bench/monitor.sh                       # 60 s at tcpreplay's top speed
#   SECS=600 bench/monitor.sh              # the 10-minute memory run
#   PPS=200000 bench/monitor.sh            # a fixed rate instead of top speed
#   CORPUS=path.pcap RTTDOC=path/to/rttdoc INTERVAL=5 bench/monitor.sh
#
# The replay cycles through VARIANTS copies of the corpus whose addresses
# tcprewrite --pnat moved (127.0.0.1 -> 10.N.0.1, both directions alike), so
# a pass is new connections, not late packets of connections seen less than
# a tombstone's 30 s before. (tcpreplay --unique-ip would not do: it moves
# source and destination opposite ways, splitting every connection's two
# directions.) Timestamps are the receiving kernel's: the monitor sees the
# replay's pace, not the recording's.
#
# Needs root, ip, tcpreplay and tcprewrite (apt-get install tcpreplay), curl, bc, and the
# corpus (bench/run.sh churn makes it). Not run by the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${SECS:-60}
interval=${INTERVAL:-10}
corpus=${CORPUS:-bench/out/corpora-1000000-200000/churn.pcap}
[[ -f $corpus ]] || { echo "no corpus $corpus (make it with: bench/run.sh churn)" >&2; exit 1; }
for tool in ip tcpreplay tcprewrite curl bc; do
  command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 1; }
done
if [[ -z ${RTTDOC:-} ]]; then
  cargo build --release -q -p rttdoc
  RTTDOC=${CARGO_TARGET_DIR:-target}/release/rttdoc
fi
variants=${VARIANTS:-6}
vdir=bench/out/monitor-variants/$(basename "$corpus" .pcap)
mkdir -p "$vdir"
for v in $(seq "$variants"); do
  [[ -s $vdir/$v.pcap ]] && continue
  echo "making $vdir/$v.pcap (addresses 10.$v.0.1)" >&2
  tcprewrite --pnat=127.0.0.1/32:10.$v.0.1/32 -i "$corpus" -o "$vdir/$v.pcap.tmp"
  mv "$vdir/$v.pcap.tmp" "$vdir/$v.pcap"
done
tag=$$
a=rttdoc-bench-$tag-a b=rttdoc-bench-$tag-b
pids=()
cleanup() {
  for p in "${pids[@]}"; do pkill -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add rtb"$tag"a netns "$a" type veth peer name rtb"$tag"b netns "$b"
# MTU above the corpus' frames (loopback at 1500 plus the 14-byte header).
ip -n "$a" link set rtb"$tag"a up mtu 9000
ip -n "$b" link set rtb"$tag"b up mtu 9000
ip -n "$b" link set lo up
# The monitor on its own core's worth: the replay runs on the other.
ip netns exec "$b" "$RTTDOC" monitor --interface rtb"$tag"b --listen 127.0.0.1:9464 \
  2>/tmp/rttdoc-bench-monitor-$tag.log &
mon=$!
pids+=("$mon")
for _ in $(seq 50); do
  ip netns exec "$b" curl -sf 127.0.0.1:9464/metrics >/dev/null && break
  sleep 0.1
done
rate=(--topspeed)
[[ -n ${PPS:-} ]] && rate=(--pps="$PPS")
(
  while :; do
    for v in $(seq "$variants"); do
      ip netns exec "$a" tcpreplay -q "${rate[@]}" -i rtb"$tag"a "$vdir/$v.pcap" || exit
    done
  done
) >/tmp/rttdoc-bench-tcpreplay-$tag.log 2>&1 &
pids+=("$!")

metric() { # sum of a family's samples in the exposition on stdin
  awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $NF } END { printf "%.0f", s }'
}
echo "corpus: $corpus ($(du -h "$corpus" | cut -f1)); replay: ${rate[*]}; ${secs}s; rttdoc: $RTTDOC"
echo "cores: $(nproc); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %12s %10s %10s %10s %12s %10s %8s %6s\n' t_s packets/s dropped/s dropped conn/s open_flows evicted rss_MB cpu%
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$mon"/stat; }
prev_cpu=$(cpu_ticks)
prev_pk=0 prev_dr=0 prev_cn=0 prev_t=$(date +%s.%N) start=$(date +%s)
peak_rss=0 min_rss=0 sum_pps=0 n=0
while (( $(date +%s) - start < secs )); do
  sleep "$interval"
  m=$(ip netns exec "$b" curl -s 127.0.0.1:9464/metrics)
  now=$(date +%s.%N)
  pk=$(metric rttdoc_capture_packets_total <<<"$m")
  dr=$(metric rttdoc_capture_dropped_packets_total <<<"$m")
  cn=$(metric rttdoc_connections_total <<<"$m")
  of=$(metric rttdoc_open_flows <<<"$m")
  ev=$(metric rttdoc_flows_evicted_total <<<"$m")
  rss=$(awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' /proc/"$mon"/status)
  dt=$(echo "$now - $prev_t" | bc -l)
  pps=$(echo "($pk - $prev_pk) / $dt" | bc -l)
  dps=$(echo "($dr - $prev_dr) / $dt" | bc -l)
  cps=$(echo "($cn - $prev_cn) / $dt" | bc -l)
  cpu=$(cpu_ticks)
  cpct=$(echo "100 * ($cpu - $prev_cpu) / $hz / $dt" | bc -l)
  printf '%6d %12.0f %10.0f %10d %10.0f %12d %10d %8s %6.0f\n' $(( $(date +%s) - start )) "$pps" "$dps" "$dr" "$cps" "$of" "$ev" "$rss" "$cpct"
  prev_pk=$pk prev_dr=$dr prev_cn=$cn prev_t=$now prev_cpu=$cpu
  sum_pps=$(echo "$sum_pps + $pps" | bc -l); n=$((n + 1))
  if (( $(echo "$rss > $peak_rss" | bc) )); then peak_rss=$rss; fi
  if [[ $min_rss == 0 ]] || (( $(echo "$rss < $min_rss" | bc) )); then min_rss=$rss; fi
done
total=$(echo "$prev_pk + $prev_dr" | bc)
printf 'summary: %.0f packets/s read on average; %d of %d packets dropped (%.2f%%); RSS %s-%s MB\n' \
  "$(echo "$sum_pps / $n" | bc -l)" "$prev_dr" "$total" "$(echo "100 * $prev_dr / ($total + ($total == 0))" | bc -l)" "$min_rss" "$peak_rss"
