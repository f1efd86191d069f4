#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/redis.rs
# (tests/data/redis/*.pcap.gz): Redis's server and its own clients
# (redis-cli, redis-benchmark), real Linux TCP, tcpdump in the client's
# namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   redis-commands.pcap  commands one by one (redis-cli fed from a pipe),
#                        a 300 KB value stored and read back, then
#                        redis-benchmark pipelining 16 commands at a time
#                        and one at a time: a control, nothing slow
#   redis-blocking.pcap  commands that ask the server to wait: BLPOP
#                        ending at its 2 s timeout, BLPOP answered when
#                        another client pushes 1.5 s later, XREAD BLOCK
#                        answered by another client's XADD, BLPOP between
#                        two GETs on one connection; and DEBUG SLEEP 0.3,
#                        the server's own 300 ms
#
# Needs root, ip, tcpdump, python3 and redis-server (redis-tools).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtredis$$ /tmp/rttdoc-redis
chmod 755 "$work"
# The capture ($1) of the workload script $2, kept gzipped.
capture() {
  relay_capture "$1" bash "$2"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}

ip netns exec "$S" redis-server --bind 10.81.2.1 --port 6379 --save '' --appendonly no \
  --protected-mode no --enable-debug-command yes --daemonize no > "$work/redis.log" 2>&1 &
# (Not in $pids: relay_capture stops those after each capture.)
extra_cleanup() { relay_stop_servers; }
relay_listening 6379

head -c 300000 /dev/zero | tr '\0' b > "$work/big"
cat > "$work/commands.sh" <<SH
printf 'SET a 1\nGET a\nINCR a\nGET a\nLPUSH l x y z\nLRANGE l 0 -1\n' | redis-cli -h 10.81.2.1
redis-cli -h 10.81.2.1 -x SET big < $work/big
redis-cli -h 10.81.2.1 GET big
redis-benchmark -h 10.81.2.1 -n 400 -c 2 -P 16 -t set,get -q
redis-benchmark -h 10.81.2.1 -n 100 -c 1 -t get -q
SH
capture redis-commands "$work/commands.sh"

cat > "$work/blocking.sh" <<'SH'
cli() { redis-cli -h 10.81.2.1 "$@"; }
cli SET warm 1
cli BLPOP nothing 2
(sleep 1.5; cli LPUSH jobs j1) &
cli BLPOP jobs 5
wait
(sleep 0.8; cli XADD events '*' k v) &
cli XREAD BLOCK 3000 STREAMS events '$'
wait
printf 'GET warm\nBLPOP nothing 1\nGET warm\n' | cli
cli DEBUG SLEEP 0.3
SH
capture redis-blocking "$work/blocking.sh"
ls -l "$out"
