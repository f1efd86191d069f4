#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/websocket.rs
# (tests/data/websocket/websockets.pcap.gz): python's `websockets` server
# and clients (scripts/websocket-peers.py), real Linux TCP, tcpdump in
# the clients' namespace, across a path of 20 ms each way
# (scripts/relay-path.sh):
#
#   websockets.pcap  the server pings each client every second; an RPC
#                    client's four questions answered 100 ms after they
#                    arrive; a feed's reader, pushed messages at random
#                    times; a chat's listener, passed the talker's
#                    messages
#
# Needs root, ip, tcpdump, python3 with websockets (python3-websockets).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# The python that has websockets (Debian's, when another is first on PATH).
py=python3
$py -c 'import websockets' 2>/dev/null || py=/usr/bin/python3
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtws$$ /tmp/rttdoc-websocket
chmod 755 "$work"
ip netns exec "$S" $py "$here/websocket-peers.py" server > "$work/server.log" 2>&1 &
# (Not in $pids: relay_capture stops those after each capture.)
extra_cleanup() { relay_stop_servers; }
relay_listening 8765
relay_capture websockets $py "$here/websocket-peers.py" clients
gzip -9 -n -c "$work/websockets.pcap" > "$out/websockets.pcap.gz"
ls -l "$out/websockets.pcap.gz"
