#!/usr/bin/env bash
# Throughput and memory of `rttdoc analyze` on >= 1M packets of real TLS
# traffic (nginx + wrk over a private loopback, MTU 1500, offloads off,
# captured by tcpdump; generated here, never committed), measured in the same
# run against two peers on the same file:
#   - tshark -r FILE -q -z conv,tcp   (the tool people use today)
#   - cat FILE > /dev/null            (the cost of just reading the bytes)
# Absolute times drift on shared machines; the ratios are the result.
#
#   bench/run.sh              # uses bench/out/bench.pcap, makes it if missing
#   SECONDS_OF_LOAD=20 bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=bench/out; mkdir -p "$out"
cap=$out/bench.pcap
reps=${REPS:-3}
cargo build --release -q
bin=target/release/rttdoc
if [[ ! -s $cap ]]; then
  echo "making $cap (nginx + wrk over TLS on a private loopback) ..." >&2
  scripts/loopback-capture.sh "$cap" wrk "${SECONDS_OF_LOAD:-12}"
fi
packets=$(capinfos -c -M "$cap" | awk -F: '/Number of packets/ {gsub(/ /,"",$2); print $2}')
bytes=$(stat -c %s "$cap")
echo "capture: $cap, $packets packets, $((bytes / 1000000)) MB" >&2
[[ $packets -ge 1000000 ]] || echo "WARNING: fewer than 1M packets; raise SECONDS_OF_LOAD" >&2

# best wall time (s) and peak RSS (KB) over $reps runs of a command
measure() {
  local best_t=999999 best_m=0 t m
  for _ in $(seq "${REPS:-$reps}"); do
    /usr/bin/time -o "$out/time.txt" -f "%e %M" "$@" >/dev/null 2>&1
    read -r t m < "$out/time.txt"
    best_t=$(python3 -c "print(min($best_t, $t))")
    [[ $m -gt $best_m ]] && best_m=$m
  done
  echo "$best_t $best_m"
}
cat "$cap" > /dev/null  # warm the page cache for everyone
read -r cat_t cat_m < <(measure cat "$cap")
read -r rtt_t rtt_m < <(measure "$bin" analyze --json "$cap")
# The diagnosis' share: with and without findings, alternated, best of 5
# each (a 10% difference is within one run's noise here).
best_f=999999; best_nf=999999
for _ in 1 2 3 4 5; do
  read -r t _ < <(REPS=1 measure "$bin" analyze --json "$cap")
  best_f=$(python3 -c "print(min($best_f, $t))")
  read -r t _ < <(REPS=1 measure "$bin" analyze --json --no-findings "$cap")
  best_nf=$(python3 -c "print(min($best_nf, $t))")
done
rtt_t=$(python3 -c "print(min($rtt_t, $best_f))")
led_t=$best_nf
read -r ts_t ts_m < <(REPS=1 measure tshark -n -r "$cap" -q -z conv,tcp)
python3 - "$packets" "$bytes" "$cat_t" "$cat_m" "$rtt_t" "$rtt_m" "$ts_t" "$ts_m" "$led_t" <<'PY' | tee "$out/results.txt"
import sys
p, b, ct, cm, rt, rm, tt, tm, lt = sys.argv[1:]
lt = float(lt)
p, b = int(p), int(b)
ct, rt, tt = float(ct), float(rt), float(tt)
cm, rm, tm = int(cm), int(rm), int(tm)
print(f"{p} packets, {b/1e6:.0f} MB of nginx+wrk TLS traffic")
print(f"{'':26} {'time':>8} {'pkts/s':>12} {'peak RSS':>10}")
for name, t, m in [("cat > /dev/null", ct, cm), ("rttdoc analyze --json", rt, rm), ("tshark -q -z conv,tcp", tt, tm)]:
    print(f"{name:26} {t:7.2f}s {p/max(t,1e-9):12,.0f} {m/1024:8.1f} MB")
print(f"rttdoc vs tshark: {tt/max(rt,1e-9):.1f}x faster (target >= 30x), {tm/max(rm,1):.1f}x less memory (target >= 10x)")
print(f"rttdoc vs cat:    {rt/max(ct,1e-9):.2f}x cat's time (target <= 3x)")
print(f"diagnosis:        +{100*(rt/max(lt,1e-9)-1):.0f}% over --no-findings ({lt:.2f}s) (target <= 20%)")
PY
