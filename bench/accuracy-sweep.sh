#!/usr/bin/env bash
# Diagnosis accuracy over the whole lab catalog at several RTTs, from the
# client and the server side: a recall / control-false-positive table per
# detector and RTT. Needs root, nginx, haproxy, curl, openssl. Long (~15 min):
# the CI test (crates/rttdoc/tests/diagnosis_accuracy.rs) uses the committed
# 36 ms fixtures instead.
#   bench/accuracy-sweep.sh            # RTTs 5 36 120 ms
#   RTTS="20 80" bench/accuracy-sweep.sh
#   ANALYZE_ONLY=1 bench/accuracy-sweep.sh   # same captures, current analyzer
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bin=$(pwd)/target/release/rttdoc
out=bench/out/sweep
# ANALYZE_ONLY=1: re-analyse the last sweep's captures (after a detector change).
[[ -n ${ANALYZE_ONLY:-} ]] || { rm -rf "$out"; mkdir -p "$out"; }
export RTTDOC_LAB_CERTS=$out/certs
for rtt in ${RTTS:-5 36 120}; do
  for name in $($bin lab list | awk '{print $1}'); do
    [[ -n ${ANALYZE_ONLY:-} ]] || $bin lab run "$name" --rtt "${rtt}ms" --runs 2 --out "$out/$rtt/$name" >/dev/null 2>&1 || echo "FAILED $name at $rtt ms" >&2
    for side in client server middle; do
      keylog=(); [[ -s "$out/$rtt/$name/keylog.txt" ]] && keylog=(--keylog "$out/$rtt/$name/keylog.txt")
      [[ -f "$out/$rtt/$name/$side.pcapng" ]] && $bin analyze --json "${keylog[@]}" "$out/$rtt/$name/$side.pcapng" > "$out/$rtt/$name/$side.json" || true
    done
  done
done
python3 - "$out" <<'PY'
import json, os, sys, collections
root = sys.argv[1]
for rtt in sorted((d for d in os.listdir(root) if d.isdigit()), key=int):
    labels = {}
    for name in os.listdir(f"{root}/{rtt}"):
        p = f"{root}/{rtt}/{name}/labels.json"
        if os.path.exists(p):
            labels[name] = json.load(open(p))
    tp, fn, fp = collections.Counter(), collections.Counter(), collections.Counter()
    for name, l in labels.items():
        for side in ("client", "server", "middle"):
            p = f"{root}/{rtt}/{name}/{side}.json"
            if not os.path.exists(p):
                continue
            found = collections.defaultdict(set)
            for c in json.load(open(p))["connections"]:
                for x in c["findings"]:
                    found[x["kind"]].add(c["stream"])
            # A labelled Nagle hold may surface as its delayed-ACK variant
            # (as in crates/rttdoc/tests/diagnosis_accuracy.rs).
            # A mechanism without a detector of its own is found as the
            # finding its label names (seen_as), as in the Rust test.
            meets = lambda pa: [pa["seen_as"]] if "seen_as" in pa else (["nagle_hold", "nagle_delayed_ack"] if pa["kind"] == "nagle_hold" else [pa["kind"]])
            for pa in l["pathologies"]:
                if side not in pa.get("visible_from", [side]):
                    continue
                for s in pa.get("streams", []):
                    hit = any(s in found[k] for k in meets(pa))
                    (tp if hit else fn)[pa["kind"]] += 1
            if l["control_of"] and l["control_of"] in labels:
                own = {pa["kind"] for pa in l["pathologies"]}
                for pa in labels[l["control_of"]]["pathologies"]:
                    if pa["kind"] in own:
                        continue
                    fp[pa["kind"]] += sum(len(found.get(k, ())) for k in meets(pa))
    print(f"\nRTT {rtt} ms")
    print(f"{'detector':24} {'found':>6} {'missed':>6} {'controls':>9} {'precision':>9} {'recall':>7}")
    for k in sorted(set(tp) | set(fn) | set(fp)):
        r = tp[k] / max(tp[k] + fn[k], 1)
        pr = tp[k] / max(tp[k] + fp[k], 1)
        print(f"{k:24} {tp[k]:6} {fn[k]:6} {fp[k]:9} {pr:9.2f} {r:7.2f}")
PY
