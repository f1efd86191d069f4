#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/interactive.rs
# (tests/data/interactive/*.pcap.gz): software that writes small messages
# without TCP_NODELAY, where Nagle's algorithm and the peer's delayed ACK
# meet. Real Linux TCP, tcpdump in the client's namespace, across a path
# of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   telnet-inetutils.pcap  inetutils' telnetd (under inetutils-inetd, a
#                          shell instead of login) and the telnet client
#                          on a pty, typed at: a command a character at a
#                          time, `ls -l /usr/bin | head -50`, a line typed
#                          fast (5 ms a key), then `exit`
#   bgp-bird.pcap          two BIRD 2 routers peering (AS 65001 and
#                          65002, keepalive 3 s): the server's side
#                          announces 600 routes, then keepalives until the
#                          client's side stops after 14 s
#
# Needs root, ip, tcpdump, python3, inetutils-telnetd, inetutils-inetd,
# telnet and bird2.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtinter$$ /tmp/rttdoc-interactive
chmod 755 "$work"
# The servers are not in $pids (relay_capture stops those after each
# capture): they go with the namespace.
extra_cleanup() { relay_stop_servers; }
# The capture ($1) of the workload script $2, kept gzipped.
capture() {
  relay_capture "$1" bash "$2"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}

# telnet: telnetd runs bash for the connection (-E), no host banner (-h).
echo "2323 stream tcp nowait root /usr/sbin/telnetd telnetd -h -E /bin/bash" > "$work/inetd.conf"
ip netns exec "$S" /usr/sbin/inetutils-inetd -d "$work/inetd.conf" > "$work/inetd.log" 2>&1 &
relay_listening 2323
cat > "$work/typist.py" <<'PY'
# Types at the telnet client on a pty, key by key, reading what comes back.
import os, pty, select, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("telnet", ["telnet", "10.81.2.1", "2323"])
def drain(seconds):
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], max(0, end - time.time()))
        if ready:
            try:
                os.read(fd, 65536)
            except OSError:
                return
drain(2)
for gap, line in ((0.15, "echo hello"), (0.03, "ls -l /usr/bin | head -50"),
                  (0.005, "echo fast typing here"), (0.15, "exit")):
    for key in line + "\r":
        os.write(fd, key.encode())
        drain(gap)
    drain(1.5)
os.waitpid(pid, 0)
PY
cat > "$work/telnet.sh" <<SH
python3 $work/typist.py
SH
capture telnet-inetutils "$work/telnet.sh"
relay_stop_servers
sleep 1

# BGP: BIRD in both namespaces; the client's side connects.
python3 - > "$work/routes.conf" <<'PY'
for i in range(600):
    print(f"  route 172.{16 + i // 256}.{i % 256}.0/24 blackhole;")
PY
cat > "$work/bird-s.conf" <<CONF
router id 10.81.2.1;
protocol device {}
protocol static { ipv4;
$(cat "$work/routes.conf")
}
protocol bgp peer { local 10.81.2.1 as 65002; neighbor 10.81.1.1 as 65001; multihop;
  hold time 9; keepalive time 3; ipv4 { import all; export all; }; }
CONF
cat > "$work/bird-c.conf" <<CONF
router id 10.81.1.1;
protocol device {}
protocol bgp peer { local 10.81.1.1 as 65001; neighbor 10.81.2.1 as 65002; multihop;
  hold time 9; keepalive time 3; connect delay time 1; ipv4 { import all; export none; }; }
CONF
ip netns exec "$S" bird -f -c "$work/bird-s.conf" -s "$work/bird-s.ctl" > "$work/bird-s.log" 2>&1 &
# (BIRD listens only once its protocols start: up to two minutes here.)
relay_listening 179 1200
cat > "$work/bgp.sh" <<SH
timeout 14 bird -f -c $work/bird-c.conf -s $work/bird-c.ctl || true
SH
capture bgp-bird "$work/bgp.sh"
ls -l "$out"
