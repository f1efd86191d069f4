#!/usr/bin/env bash
# Makes the captures behind downlink_queue.rs's stalled page loads
# (tests/data/pageload/stalled-N-{client,server}.pcapng.gz): the lab's
# `pageload-nginx` (curl --parallel, 12 files of 80 KB over four keep-alive
# connections to nginx, through a 4 Mbit/s downlink with a 400 KB queue,
# 50 ms round trip; two runs) while busy loops keep every core loaded.
# The lab's WAN emulator then hands the bottleneck's deliveries over late
# and in bunches (its labels.json reports each packet's lateness: ms at the
# 99th percentile), as an emulator or a VM short of CPU, a capture host's
# poll or a Wi-Fi aggregate does: pauses of a few packets' time, then
# several packets at once. nginx still answers at once (its own capture
# shows it); at the client the answers queue behind the other
# connections' data. Snapped to 400 bytes (the HTTP heads kept) and
# gzipped.
#
# A run is kept when the emulator was late by at least MIN_P99_MS at its
# 99th percentile (default 5), up to TRIES runs (default 6) for COUNT
# captures (default 2).
#
# Needs root, ip, nginx, curl, editcap, python3 and a built rttdoc
# (RTTDOC, default target/release/rttdoc).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
rttdoc=${RTTDOC:-$here/../target/release/rttdoc}
count=${COUNT:-2} tries=${TRIES:-6} min_p99=${MIN_P99_MS:-5}
work=$(mktemp -d /tmp/rttdoc-stalled.XXXXXX)
loads=()
cleanup() {
  for p in "${loads[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1 "$(( $(nproc) + 1 ))"); do
  timeout 600 sh -c 'while :; do :; done' &
  loads+=($!)
done

kept=0
for try in $(seq 1 "$tries"); do
  (( kept < count )) || break
  run=$work/run$try
  "$rttdoc" lab run pageload-nginx --rtt 50ms --runs 2 --out "$run" > /dev/null
  late=$(python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["emulator"]["server_to_client"]
print(round(e["lateness_us_p50_p99_max"][1] / 1000, 2))' "$run/labels.json")
  if python3 -c "import sys; sys.exit(0 if $late >= $min_p99 else 1)"; then
    kept=$((kept + 1))
    for side in client server; do
      editcap -s 400 "$run/$side.pcapng" "$work/$side.pcapng"
      gzip -9 -c "$work/$side.pcapng" > "$out/stalled-$kept-$side.pcapng.gz"
    done
    echo "run $try: emulator late by $late ms at p99: stalled-$kept"
  else
    echo "run $try: emulator late by only $late ms at p99: not kept"
  fi
done
(( kept == count )) || { echo "only $kept of $count runs stalled" >&2; exit 1; }
