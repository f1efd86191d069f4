#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/smtp.rs
# (tests/data/smtp/*.pcap.gz): Exim 4.96 receiving mail from swaks, real
# Linux TCP, tcpdump in the client's namespace, across a path of 20 ms
# each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# Each capture holds two sessions of one message each (swaks: EHLO, MAIL,
# RCPT, DATA, the message, QUIT, waiting for each reply):
#
#   exim-plain.pcap       plain SMTP. Exim answers QUIT only after it
#                         waited up to 200 ms for the client to close
#                         first (TCP_CORK, then poll on the socket): the
#                         client, waiting for the 221, waits those 200 ms
#   exim-pipelining.pcap  the same with PIPELINING used (swaks
#                         --pipeline: MAIL, RCPT and DATA in one write)
#   exim-starttls.pcap    STARTTLS (TLS 1.3, GnuTLS): swaks writes its
#                         EHLO right behind its Finished, and Nagle holds
#                         it until Exim's delayed ACK of the Finished
#   exim-ident.pcap       Exim asking the client's ident server (RFC 1413,
#                         `rfc1413_hosts = *`, a 2 s timeout) before it
#                         greets, and the client's host dropping port 113:
#                         each greeting waits 2 s, and the capture shows
#                         the server's unanswered SYNs to port 113
#
# The server's namespace gets a resolver that never answers
# (relay_dead_resolver; Exim looks up no names here: host_lookup is
# empty).
#
# Needs root, ip, nft, tcpdump, openssl, exim4 (exim4-daemon-light) and
# swaks.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtsmtp$$ /tmp/rttdoc-smtp
relay_dead_resolver
# Exim drops to its own user (Debian-exim) for each connection: the work
# directory, spool and log must be its to use.
chmod 755 "$work"
mkdir -p "$work/spool" "$work/log"
chown Debian-exim:Debian-exim "$work/spool" "$work/log"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout "$work/tls.key" -out "$work/tls.crt" -subj /CN=mail.rttdoc.test 2>/dev/null
chmod 644 "$work/tls.key"
# The configuration: $1 is extra main-section settings. Every message is
# accepted and thrown away.
configure() {
  cat > "$work/exim.conf" <<CONF
primary_hostname = mail.rttdoc.test
daemon_smtp_ports = 2525
local_interfaces = 10.81.2.1
spool_directory = $work/spool
log_file_path = $work/log/%slog
exim_user = Debian-exim
exim_group = Debian-exim
never_users =
host_lookup =
acl_smtp_rcpt = accept_all
acl_smtp_data = accept_all
$1
begin acl
accept_all:
  accept
begin routers
drop:
  driver = redirect
  data = :blackhole:
begin transports
CONF
}
# $1 name, $2 Exim's extra settings, then swaks' extra options.
capture() {
  local name=$1 settings=$2 exim
  shift 2
  configure "$settings"
  ip netns exec "$S" exim4 -C "$work/exim.conf" -bd -oX 2525 > "$work/exim.log" 2>&1 &
  exim=$!
  for _ in $(seq 50); do
    ip netns exec "$S" ss -Hltn 'sport = :2525' | grep -q . && break
    sleep 0.1
  done
  printf 'for i in 1 2; do swaks --server 10.81.2.1 --port 2525 --to rcpt$i@example.com --from me@example.com --timeout 15 %s; done\n' "$*" \
    > "$work/client.sh"
  relay_capture "$name" bash "$work/client.sh"
  # The daemon runs in the background (-bd forks): stop it by its pid file
  # or by name in the server's namespace.
  kill "$exim" 2>/dev/null || true
  relay_stop_servers
  wait "$exim" 2>/dev/null || true
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}
capture exim-plain 'tls_advertise_hosts ='
capture exim-pipelining 'tls_advertise_hosts =' --pipeline
capture exim-starttls "tls_advertise_hosts = *
tls_certificate = $work/tls.crt
tls_privatekey = $work/tls.key" -tls
# The client's host drops what comes to port 113 (a firewall's default).
ip netns exec "$C" nft -f - <<'NFT'
table inet rttdoc_ident {
  chain input {
    type filter hook input priority 0; policy accept;
    tcp dport 113 drop
  }
}
NFT
capture exim-ident 'tls_advertise_hosts =
rfc1413_hosts = *
rfc1413_query_timeout = 2s'
ls -l "$out"
