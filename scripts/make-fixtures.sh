#!/usr/bin/env bash
# Regenerates the lab fixtures in tests/data/lab/: every catalog scenario run
# over a 36 ms path, client- and server-side captures (gzip) and labels.json.
# Needs root, nginx, curl, openssl, iproute2.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=target/release/rttdoc
runs=${RUNS:-2}
for name in $($bin lab list | awk '{print $1}'); do
  out=tests/data/lab/$name
  rm -rf "$out"; mkdir -p "$out"
  tmp=$(mktemp -d)
  $bin lab run "$name" --rtt 36ms --runs "$runs" --out "$tmp" >/dev/null
  gzip -9c "$tmp/client.pcapng" > "$out/client.pcapng.gz"
  gzip -9c "$tmp/server.pcapng" > "$out/server.pcapng.gz"
  cp "$tmp/labels.json" "$out/labels.json"
  rm -rf "$tmp"
  echo "$name -> $out"
done
