#!/usr/bin/env bash
# Makes the pub/sub capture behind crates/rttdoc/tests/redis.rs
# (tests/data/redis/redis-pubsub.pcap.gz): Redis's server, and a
# subscriber and a publisher speaking RESP over real Linux TCP
# (scripts/redis-pubsub-client.py), tcpdump in the clients' namespace,
# across a path of 20 ms each way (scripts/relay-path.sh):
#
#   redis-pubsub.pcap  a subscriber SUBSCRIBEs to a channel; another
#                      connection PUBLISHes three messages 0.7 s apart,
#                      which Redis pushes to it; the subscriber PINGs in
#                      pub/sub mode between them, UNSUBSCRIBEs, GETs, QUITs
#
# Needs root, ip, tcpdump, python3 and redis-server (redis-tools).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtredisps$$ /tmp/rttdoc-redis-pubsub
chmod 755 "$work"
ip netns exec "$S" redis-server --bind 10.81.2.1 --port 6379 --save '' --appendonly no \
  --protected-mode no --daemonize no > "$work/redis.log" 2>&1 &
# (Not in $pids: relay_capture stops those after each capture.)
extra_cleanup() { relay_stop_servers; }
relay_listening 6379
relay_capture redis-pubsub python3 "$here/redis-pubsub-client.py"
gzip -9 -n -c "$work/redis-pubsub.pcap" > "$out/redis-pubsub.pcap.gz"
ls -l "$out/redis-pubsub.pcap.gz"
