#!/usr/bin/env bash
# Makes the captures behind tests/data/scada/*.pcap.gz: SCADA protocols
# whose outstations report on their own, between real stacks on real
# Linux TCP, across a path of 20 ms each way, tcpdump at the master's
# host:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   iec104.pcap  IEC 60870-5-104 with c104 2.2.1 (PyPI: the Python
#                binding of MZ Automation's lib60870-C), both ends
#                (scripts/iec104-peers.py): an outstation (common
#                address 47) on 10.81.2.1:2404 whose link test runs
#                after 2 s of silence (t3), and a controlling station
#                that acknowledges what it received 1 s later (t2). The
#                master starts data transfer, interrogates the station
#                (its confirmation, two points, its termination), sends
#                a single command (C_SC_NA_1: the outstation's handler
#                takes 150 ms) and a read (C_RD_NA_1), while the
#                outstation reports its breaker's changes spontaneously
#                0.7, 2.5, 4.4 and 5.6 s after the interrogation: the
#                later ones each behind one of the master's S-frames,
#                which asked nothing. Then silence until the
#                outstation's TESTFR act and the master's con.
#
# Prints tshark's dissection of each capture's data segments.
#
# Needs root, ip, tcpdump, tshark, python3 with venv and network access
# to PyPI (c104 is installed into a virtualenv in the work directory).
set -euo pipefail
command -v tshark > /dev/null || { echo "needs tshark" >&2; exit 1; }
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtscada$$ /tmp/rttdoc-scada
chmod 755 "$work"
extra_cleanup() {
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
  relay_stop_servers
  return 0
}
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q c104==2.2.1
py=$work/venv/bin/python
export IEC104_STARTED=$work/iec104-started

# --- iec104 -----------------------------------------------------------
ip netns exec "$S" "$py" "$here/iec104-peers.py" server 10.81.2.1 > "$work/iec104-server.log" 2>&1 &
relay_listening 2404
relay_capture_checked iec104 "$py" "$here/iec104-peers.py" client 10.81.2.1
relay_stop_servers

for name in iec104; do
  echo "== $name"
  tshark -r "$out/$name.pcap.gz" -Y 'tcp.len > 0' \
    -T fields -e frame.number -e frame.time_relative -e tcp.srcport -e tcp.len -e _ws.col.Info
done
