#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/irc.rs
# (tests/data/irc/ngircd.pcap.gz): the ngircd server and two suckless
# clients, real Linux TCP, tcpdump in the clients' namespace, across a
# path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# ii registers and joins #c, then only listens (answering the server's
# PINGs, every 3 s here); sic registers, joins #c at once (ngircd
# throttles it: the JOIN's answer comes a second later, after sic's first
# message), says six things 1.3 s apart, asks WHOIS, sends a command the
# server does not know, and quits.
#
# Needs root, ip, tcpdump, python3, ngircd, ii and sic.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtirc$$ /tmp/rttdoc-irc
chmod 755 "$work"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
}

cat > "$work/ngircd.conf" <<CONF
[Global]
Name = irc.test
Info = test
Listen = 10.81.2.1
Ports = 6667
PidFile = $work/ngircd.pid
MotdPhrase = hello
[Limits]
PingTimeout = 3
PongTimeout = 5
[Options]
DNS = no
Ident = no
PAM = no
CONF
ip netns exec "$S" ngircd -n -f "$work/ngircd.conf" > "$work/ngircd.log" 2>&1 &
relay_listening 6667

ip netns exec "$M" python3 "$here/tun-delay.py" ta tb 20 30 & pids+=($!)
timeout 35 ip netns exec "$C" tcpdump -i c0 -s 0 -U -w "$work/ngircd.pcap" tcp 2>/dev/null & pids+=($!)
sleep 1
mkdir -p "$work/ii"
ip netns exec "$C" ii -s 10.81.2.1 -p 6667 -n bob -i "$work/ii" > /dev/null 2>&1 & pids+=($!)
sleep 1.5
echo "/j #c" > "$work/ii/10.81.2.1/in"
sleep 1
{
  echo ":j #c"
  for i in 1 2 3 4 5 6; do sleep 1.3; echo ":m #c hello $i"; done
  sleep 1; echo ":WHOIS bob"
  sleep 1; echo ":q"
  sleep 1; echo ":QUIT :bye"
  sleep 1
} | timeout 20 ip netns exec "$C" sic -h 10.81.2.1 -p 6667 -n al > /dev/null 2>&1 || true
sleep 3
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
gzip -9 -n -c "$work/ngircd.pcap" > "$out/ngircd.pcap.gz"
ls -l "$out"
