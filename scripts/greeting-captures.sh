#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/greeting.rs
# (tests/data/greeting/*.pcap.gz): a server that speaks first, MariaDB,
# whose greeting (the handshake packet) waits for what it does on a new
# connection. Real Linux TCP, the mariadb client and server, tcpdump in
# the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   mariadb-name-resolve.pcap       three connections (`mariadb -e
#                                   "select N"`) to a server that looks
#                                   up each client's name before it
#                                   greets, against a resolver that never
#                                   answers (`options timeout:1
#                                   attempts:1`): each greeting leaves
#                                   about a second after the connection
#                                   opened
#   mariadb-skip-name-resolve.pcap  the same with --skip-name-resolve
#                                   (the control: greetings at once)
#   proftpd-reverse-dns.pcap        ProFTPD (UseReverseDNS on, its
#                                   default) and python's ftplib: two
#                                   anonymous sessions fetching a file
#                                   (passive data connections), each
#                                   greeting held by the same lookup
#   mariadb-ssl-name-resolve.pcap   the same lookups, the client asking
#                                   for TLS (`mariadb --ssl`): the greeting
#                                   opens MySQL's SSL preamble (the
#                                   client's SSL request, then its
#                                   ClientHello when its TLS library is
#                                   ready)
#   mariadb-ssl-skip-name-resolve.pcap  the same with --skip-name-resolve
#                                   (the control: greetings at once)
#   mariadb-stunnel.pcap            implicit TLS: stunnel in front of the
#                                   server that looks names up (stunnel
#                                   connects from the server's own
#                                   address, which the lookup cannot
#                                   name), two connections of a python
#                                   TLS client that reads the greeting
#                                   and answers it at once (a malformed
#                                   login, answered with an error)
#
# The server's namespace gets a resolver that never answers
# (relay_dead_resolver in relay-path.sh: removed on exit).
#
# Needs root, ip, tcpdump, python3, openssl, stunnel4, proftpd-core,
# mariadb-server and mariadb-client (mariadb-install-db, mariadbd,
# mariadb).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
extra_cleanup() {
  [[ -f $work/proftpd.pid ]] && kill "$(cat "$work/proftpd.pid")" 2>/dev/null || true
  if [[ -f $work/mariadb.pid ]]; then
    kill "$(cat "$work/mariadb.pid")" 2>/dev/null || true
    for _ in $(seq 50); do [[ -e $work/mariadb.sock ]] || break; sleep 0.2; done
  fi
}
relay_lab rtgreet$$ /tmp/rttdoc-greeting
relay_dead_resolver

mariadb-install-db --no-defaults --datadir="$work/db" --user=root --skip-test-db \
  > "$work/install.log" 2>&1
# The server in its namespace, with the options given; waits for its socket.
start() {
  ip netns exec $S mariadbd --no-defaults --datadir="$work/db" --socket="$work/mariadb.sock" \
    --port=3307 --bind-address=10.81.2.1 --user=root --pid-file="$work/mariadb.pid" \
    --skip-log-bin "$@" > "$work/mariadb.log" 2>&1 &
  for _ in $(seq 100); do [[ -S $work/mariadb.sock ]] && return; sleep 0.2; done
  echo "mariadbd did not start:" >&2; cat "$work/mariadb.log" >&2; exit 1
}
stop() {
  kill "$(cat "$work/mariadb.pid")"
  for _ in $(seq 100); do [[ -e $work/mariadb.sock ]] || break; sleep 0.2; done
  rm -f "$work/mariadb.pid"
}
# Three connections with the relay up and tcpdump on the client's
# interface, into OUTDIR/$1.pcap.gz.
# The connections (relay_capture), kept gzipped: $1 name, then the
# command that makes them.
capture() {
  relay_capture "$@"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}
# Three connections of the mariadb client, one query each.
cat > "$work/three-queries.sh" <<'SH'
for i in 1 2 3; do
  timeout 6 mariadb --no-defaults --skip-ssl -h 10.81.2.1 -P 3307 -u rtt -e "select $i"
done
SH
start
mariadb --no-defaults -S "$work/mariadb.sock" -u root \
  -e "CREATE USER 'rtt'@'%'; GRANT ALL ON *.* TO 'rtt'@'%';"
capture mariadb-name-resolve bash "$work/three-queries.sh"

# MySQL's SSL preamble: the server with a certificate, the client asking
# for TLS.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout "$work/db.key" -out "$work/db.crt" -subj /CN=db.rttdoc.test 2>/dev/null
ssl=(--ssl-cert="$work/db.crt" --ssl-key="$work/db.key")
sed 's/--skip-ssl/--ssl/' "$work/three-queries.sh" > "$work/three-tls-queries.sh"
stop
start "${ssl[@]}"
capture mariadb-ssl-name-resolve bash "$work/three-tls-queries.sh"

# Implicit TLS: stunnel on 3308 in front of the server.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout "$work/stunnel.key" -out "$work/stunnel.crt" -subj /CN=db.rttdoc.test 2>/dev/null
cat > "$work/stunnel.conf" <<CONF
foreground = yes
pid =
[mariadb]
accept = 10.81.2.1:3308
connect = 10.81.2.1:3307
cert = $work/stunnel.crt
key = $work/stunnel.key
CONF
ip netns exec $S stunnel "$work/stunnel.conf" > "$work/stunnel.log" 2>&1 &
stunnel_pid=$!
cat > "$work/tls-client.py" <<'PY'
import socket, ssl
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
for _ in range(2):
    s = ctx.wrap_socket(socket.create_connection(("10.81.2.1", 3308), timeout=10))
    s.recv(4096)  # the server's greeting
    s.sendall(b"\x05\x00\x00\x01\x00\x00\x00\x00\x00")  # no login: an error back
    s.recv(4096)
    s.close()
PY
sleep 1
capture mariadb-stunnel python3 "$work/tls-client.py"
kill "$stunnel_pid" 2>/dev/null || true
wait "$stunnel_pid" 2>/dev/null || true
stop

# ProFTPD, anonymous sessions into $work/ftp, behind the same resolver.
mkdir -p "$work/ftp"
echo "hello over ftp" > "$work/ftp/hello.txt"
cat > "$work/proftpd.conf" <<CONF
ServerType standalone
DefaultServer on
Port 2121
DefaultAddress 10.81.2.1
User root
Group root
PidFile $work/proftpd.pid
ScoreboardFile $work/proftpd.scoreboard
DelayTable none
WtmpLog off
UseReverseDNS on
RootLogin on
UseFtpUsers off
RequireValidShell off
<Anonymous $work/ftp>
  User root
  Group root
  UserAlias anonymous root
</Anonymous>
CONF
ip netns exec $S proftpd -n -c "$work/proftpd.conf" > "$work/proftpd.log" 2>&1 &
proftpd_pid=$!
cat > "$work/ftp-client.py" <<'PY'
import ftplib
for _ in range(2):
    f = ftplib.FTP()
    f.connect("10.81.2.1", 2121, timeout=15)
    f.login("anonymous", "rttdoc@example.com")
    f.retrbinary("RETR hello.txt", lambda data: None)
    f.quit()
PY
sleep 1
capture proftpd-reverse-dns python3 "$work/ftp-client.py"
kill "$proftpd_pid" 2>/dev/null || true
wait "$proftpd_pid" 2>/dev/null || true
start --skip-name-resolve
capture mariadb-skip-name-resolve bash "$work/three-queries.sh"
stop
start --skip-name-resolve "${ssl[@]}"
capture mariadb-ssl-skip-name-resolve bash "$work/three-tls-queries.sh"
ls -l "$out"
