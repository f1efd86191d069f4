#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/reordering.rs
# (tests/data/reorder/): a 2 MB download from nginx across a path of 20 ms
# each way whose relay holds every 40th data packet from port 80 back by
# 12 ms, then 70 ms, in turn (scripts/tun-delay.py, HOLD_EVERY): the
# packets behind each overtake it, as on a path that balances packets over
# links of unequal delay. Real Linux TCP at both ends, captured at the
# client by tcpdump. sent.txt is the relay's record of every data packet
# the server sent, in its order (IPv4 identification, raw sequence
# number, hold in ms, `original` or `resend`): the truth a capture at the
# client must be read back to. The held originals arrive late, and no
# analysis may call them re-sends; the kernel's own re-sends (a 70 ms hold
# is longer than the round trip, so the client's duplicate ACKs make the
# server send the bytes again) carry the same sequence numbers under new
# identifications.
#
# Needs root, ip, tcpdump, python3, nginx, curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtreo$$ /tmp/rttdoc-reorder
extra_cleanup() { relay_stop_servers; }
HOLD_EVERY=40 HOLD_PORT=80 HOLD_MS=12,70 HOLD_LOG="$work/sent.txt" relay_download 2000000 reorder
gzip -9 -n -c "$work/reorder.pcap" > "$out/reorder.pcap.gz"
gzip -9 -n -c "$work/sent.txt" > "$out/sent.txt.gz"
ls -l "$out/reorder.pcap.gz" "$out/sent.txt.gz"
