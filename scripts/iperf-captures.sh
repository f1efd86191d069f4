#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/iperf.rs
# (tests/data/iperf/*.pcap.gz): iperf3, real Linux TCP, tcpdump in the
# client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   iperf3-reverse.pcap  `iperf3 -R -n 256K`: the server sends. On the
#                        control connection the server writes each state
#                        as one byte (Nagle on): CREATE_STREAMS, then
#                        TEST_START once the test's data connection has
#                        sent its cookie, which reaches it just after the
#                        client's delayed ACK of CREATE_STREAMS
#   iperf3-upload.pcap   `iperf3 -n 256K -P 2`: two data connections
#                        upload
#
# Needs root, ip, tcpdump, python3, iperf3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
extra_cleanup() { relay_stop_servers; }
relay_lab rtiperf$$ /tmp/rttdoc-iperf
ip netns exec $S iperf3 -s -B 10.81.2.1 > "$work/iperf3.log" 2>&1 &
relay_listening 5201
# A workload with the relay up, kept gzipped: $1 name, then the command.
capture() {
  relay_capture "$@"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}
capture iperf3-reverse iperf3 -c 10.81.2.1 -R -n 256K
capture iperf3-upload iperf3 -c 10.81.2.1 -n 256K -P 2
ls -l "$out"
