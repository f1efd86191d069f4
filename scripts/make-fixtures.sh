#!/usr/bin/env bash
# Regenerates the lab fixtures: every catalog scenario, client-side,
# server-side and mid-path captures (gzip), labels.json and the key log. The 36 ms set lives in
# tests/data/lab/ (the README's sample is one of them), the others in
# tests/data/lab-<RTT>ms/. Needs root, nginx, haproxy, curl, openssl, iproute2.
#   scripts/make-fixtures.sh             # 36 ms
#   RTT=5 scripts/make-fixtures.sh       # tests/data/lab-5ms
#   ONLY="tls13-nagle-builtin" RTT=120 scripts/make-fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
# A copy: rebuilding while this runs must not swap the binary under it.
bin=$(mktemp -d)/rttdoc; cp target/release/rttdoc "$bin"
runs=${RUNS:-2}
rtt=${RTT:-36}
if [[ $rtt == 36 ]]; then dest=tests/data/lab; else dest=tests/data/lab-${rtt}ms; fi
export RTTDOC_LAB_CERTS=${RTTDOC_LAB_CERTS:-$(mktemp -d)}
for name in ${ONLY:-$($bin lab list | awk '{print $1}')}; do
  out=$dest/$name
  rm -rf "$out"; mkdir -p "$out"
  tmp=$(mktemp -d)
  # A run whose emulator released packets late (a busy machine: labels.json
  # "warnings") is not the path asked for: make it again (bounded).
  for attempt in 1 2 3 4 5 6; do
    $bin lab run "$name" --rtt "${rtt}ms" --runs "$runs" --out "$tmp" >/dev/null
    python3 -c 'import json,sys; sys.exit(1 if json.load(open(sys.argv[1])).get("warnings") else 0)' "$tmp/labels.json" && break
    echo "$name: emulator late (attempt $attempt), again" >&2
  done
  gzip -9c "$tmp/client.pcapng" > "$out/client.pcapng.gz"
  gzip -9c "$tmp/server.pcapng" > "$out/server.pcapng.gz"
  gzip -9c "$tmp/middle.pcapng" > "$out/middle.pcapng.gz"
  cp "$tmp/labels.json" "$out/labels.json"
  if [[ -s $tmp/keylog.txt ]]; then cp "$tmp/keylog.txt" "$out/keylog.txt"; fi
  rm -rf "$tmp"
  echo "$name -> $out"
done
