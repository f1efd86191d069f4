#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/late_loss.rs
# (tests/data/semantics/late-loss.pcap.gz): a 4 MB download from nginx
# (a file of zeros, so the capture compresses) across a path of 20 ms each
# way whose relay drops every 300th data packet from port 80
# (scripts/tun-delay.py): real Linux TCP recovering real losses, most of
# them past the first 2048 segments rttdoc keeps of a connection, some
# inside them.
#
# Needs root, ip, tcpdump, python3, nginx, curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtloss$$ /tmp/rttdoc-late-loss
extra_cleanup() { relay_stop_servers; }
relay_download 4000000 late-loss 300 80
gzip -9 -n -c "$work/late-loss.pcap" > "$out/late-loss.pcap.gz"
ls -l "$out/late-loss.pcap.gz"
