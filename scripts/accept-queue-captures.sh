#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/accept_queue.rs
# (tests/data/accept-queue/*.pcap.gz): a server whose application drains
# its listener's accept queue more slowly than connections come (real
# Linux TCP, scripts/accept-queue-peer.py: backlog 1, one connection at a
# time, 300 ms of work each), across a path of 20 ms each way
# (scripts/relay-path.sh), captured by tcpdump at both ends at once:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# With the queue full, Linux drops a new SYN (the client re-sends it after
# 1 s, 2 s ...) and drops the handshake's last ACK and any data behind it
# (net.ipv4.tcp_abort_on_overflow 0, the default): the connection stays
# half-open at the server, which re-sends its SYN-ACK on its own timer
# (1 s, 2 s ...); the client, open since the SYN-ACK, re-sends its data
# on its retransmission timer and answers each SYN-ACK again with an ACK.
# The first ACK or data that comes when the queue has room opens it.
#
#   http-{client,server}.pcap      8 curl GETs at once (HTTP/1.1,
#                                  Connection: close)
#   greeting-{client,server}.pcap  6 clients at once of a server that
#                                  speaks first (a greeting line; each
#                                  client answers it with a line)
#   defer-{client,server}.pcap     the greeting server alone, one client
#                                  at a time (the queue never full), its
#                                  listener with TCP_DEFER_ACCEPT 2 s:
#                                  the kernel holds the handshake's ACK
#                                  of a client that sends nothing
#   defer-http-client.pcap         the control: TCP_DEFER_ACCEPT with 3
#                                  HTTP clients one at a time (they send
#                                  at once: nothing held)
#   http-abort-{client,server}.pcap  as http-nocookies, with
#                                  net.ipv4.tcp_abort_on_overflow=1: a
#                                  handshake's ACK that finds the queue
#                                  full is reset (RST without ACK), and
#                                  the request behind it too
#   restart-{client,server}.pcap   the peer's `restart` mode, a listener
#                                  closed and opened again every 0.65 s,
#                                  curl every 20 ms: handshakes whose ACK
#                                  came after the close reset
#
# ONLY=NAME makes that capture alone (the others stay as committed).
#
# Needs root, ip, tcpdump, python3, curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rttdoc-aq /tmp/rttdoc-aq

# capture NAME SERVER_ARGS CLIENT_COMMAND: the server, then the relay,
# tcpdump on both ends and the clients; writes NAME-client and
# NAME-server.
relay_filter='tcp port 8080'
capture() {
  local name=$1 server=$2; shift 2
  [[ -z ${ONLY:-} || $ONLY == "$name" ]] || return 0
  # shellcheck disable=SC2086
  ip netns exec "$S" python3 "$here/accept-queue-peer.py" 10.81.2.1 8080 $server & pids+=($!)
  relay_listening 8080
  relay_capture_both "$name" bash -c "$1"
}

greet='import socket,sys
s=socket.create_connection(("10.81.2.1",8080),timeout=10)
s.recv(100); s.sendall(b"QUIT\r\n"); s.recv(100)'

capture http "1 http 18" \
  'for i in $(seq 8); do curl -s -o /dev/null --max-time 15 http://10.81.2.1:8080/ & done; wait'
capture greeting "1 greeting 18" \
  "for i in \$(seq 6); do python3 -c '$greet' & done; wait"
# Without SYN cookies the server keeps every half-open connection and
# re-sends its SYN-ACK on its timer. A first batch fills the queue
# (backlog 4: five wait), a second comes half a second later.
ip netns exec "$S" sysctl -qw net.ipv4.tcp_syncookies=0
capture http-nocookies "4 http 18" \
  'for i in $(seq 5); do curl -s -o /dev/null --max-time 15 http://10.81.2.1:8080/ & done
   sleep 0.5
   for i in $(seq 4); do curl -s -o /dev/null --max-time 15 http://10.81.2.1:8080/ & done; wait'
capture greeting-nocookies "4 greeting 18" \
  "for i in \$(seq 5); do python3 -c '$greet' & done
   sleep 0.5
   for i in \$(seq 4); do python3 -c '$greet' & done; wait"
# With tcp_abort_on_overflow=1 the listener resets a handshake's ACK
# that finds its accept queue full instead of dropping it.
ip netns exec "$S" sysctl -qw net.ipv4.tcp_abort_on_overflow=1
capture http-abort "4 http 8" \
  'for i in $(seq 5); do curl -s -o /dev/null --max-time 15 http://10.81.2.1:8080/ & done
   sleep 0.5
   for i in $(seq 4); do curl -s -o /dev/null --max-time 15 http://10.81.2.1:8080/ & done; wait'
ip netns exec "$S" sysctl -qw net.ipv4.tcp_abort_on_overflow=0
ip netns exec "$S" sysctl -qw net.ipv4.tcp_syncookies=1
capture restart "16 restart 4" \
  'for i in $(seq 60); do curl -s -o /dev/null --max-time 5 http://10.81.2.1:8080/ & sleep 0.02; done; wait'
capture defer "1 greeting 18 2" \
  "for i in 1 2; do python3 -c '$greet'; sleep 0.5; done"
capture defer-http "1 http 18 2" \
  'for i in 1 2 3; do curl -s -o /dev/null --max-time 15 http://10.81.2.1:8080/; sleep 0.2; done'
[[ -n ${ONLY:-} ]] || rm -f "$out/defer-http-server.pcap.gz"
ls -l "$out"
