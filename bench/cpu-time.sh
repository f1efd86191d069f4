#!/usr/bin/env bash
# CPU time (user + sys, best of 2), wall time (best of 2) and peak RSS of rttdoc against cat and
# tshark on the corpora bench/run.sh makes: for a machine too busy for wall
# times to mean anything (docs/benchmarks.md, "after the crate split").
#
#   bench/cpu-time.sh                      # corpora in bench/out/corpora-1000000-200000
#   CORPORA=dir RTTDOC=path bench/cpu-time.sh
set -euo pipefail
cd "$(dirname "$0")/.."
corpora=${CORPORA:-bench/out/corpora-1000000-200000}
rttdoc=${RTTDOC:-target/release/rttdoc}
[[ -x $rttdoc ]] || cargo build --release -q -p rttdoc
tm=$(mktemp)
trap 'rm -f "$tm"' EXIT
measure() { # corpus label runs cmd...
  local corpus=$1 label=$2 runs=$3 best="" wall="" rss=0
  shift 3
  for ((i = 0; i < runs; i++)); do
    /usr/bin/time -f "%U %S %M %e" -o "$tm" "$@" >/dev/null 2>&1
    read -r u s m e <"$tm"
    t=$(echo "$u + $s" | bc)
    if [[ -z $best ]] || (($(echo "$t < $best" | bc))); then best=$t rss=$m; fi
    if [[ -z $wall ]] || (($(echo "$e < $wall" | bc))); then wall=$e; fi
  done
  printf "%-10s %-12s cpu %6.2fs wall %6.2fs rss %7.1fMB\n" "$corpus" "$label" "$best" "$wall" "$(echo "$rss / 1024" | bc -l)"
}
for corpus in churn keepalive bulk synflood; do
  f=$corpora/$corpus.pcap
  [[ -f $f ]] || { echo "$f missing: bench/run.sh makes it" >&2; continue; }
  measure "$corpus" cat 2 cat "$f"
  measure "$corpus" rttdoc 2 "$rttdoc" analyze "$f"
  measure "$corpus" json 2 "$rttdoc" analyze --json "$f"
  measure "$corpus" no-findings 2 "$rttdoc" analyze --no-findings "$f"
  measure "$corpus" threads-1 2 "$rttdoc" analyze --threads 1 "$f"
  measure "$corpus" first-1/4 2 "$rttdoc" analyze "$corpora/$corpus.q1.pcap"
  measure "$corpus" tshark 1 tshark -n -r "$f" -q -z conv,tcp
done
