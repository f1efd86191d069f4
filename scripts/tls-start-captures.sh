#!/usr/bin/env bash
# Captures TLS that starts after a plaintext preamble, made by real clients
# and servers on the loopback of a private network namespace (so nothing
# touches the host's ports), one gzipped pcap per case in OUTDIR:
#
#   http-connect-tinyproxy   curl -p -x http://proxy  -> tinyproxy -> openssl s_server
#   socks5-microsocks        curl --socks5-hostname   -> microsocks -> openssl s_server
#   socks5-auth-microsocks   the same with username/password (RFC 1929)
#   socks4-dante             curl --socks4            -> danted     -> openssl s_server
#   socks4a-dante-refused    curl --socks4a -> danted, which answers 91 (request rejected:
#                            it resolves no host names here): a real SOCKS failure reply
#   smtp-starttls-exim       curl smtp:// --ssl-reqd  -> exim4 (STARTTLS)
#   ftp-auth-tls-vsftpd      curl ftp:// --ssl-reqd   -> vsftpd (AUTH SSL -> 234; control connection)
#   imap-starttls-dovecot    curl imap:// --ssl-reqd  -> dovecot
#   pop3-stls-dovecot        curl pop3:// --ssl-reqd  -> dovecot
#   postgres-sslrequest      psql sslmode=require     -> postgres (ssl=on)
#   tls-port-4433            curl https://:4433       -> openssl s_server (TLS from byte 0)
#   tls-port-25              curl https://:25         -> openssl s_server (implicit TLS on 25)
#
#   scripts/tls-start-captures.sh tests/data/tls-start
#
# Needs root, unshare, tcpdump, curl, openssl, tinyproxy, microsocks,
# danted (dante-server), exim4-daemon-light, vsftpd, dovecot-imapd, dovecot-pop3d,
# postgres + initdb (postgresql) and psql.
set -euo pipefail
out=$(realpath -m "$1")
if [[ "${RTTDOC_IN_NETNS:-}" != 1 ]]; then
  exec env RTTDOC_IN_NETNS=1 unshare --net --mount -- "$0" "$@"
fi
mkdir -p "$out"
work=$(mktemp -d /tmp/rttdoc-tls-start.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip link set lo up mtu 1500
if command -v ethtool >/dev/null; then ethtool -K lo tso off gso off gro off >/dev/null 2>&1 || true; fi
# Debian keeps postgres and initdb out of PATH, under /usr/lib/postgresql/N/bin.
pg_bin=$(dirname "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb | tail -1)")

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=localhost >/dev/null 2>&1
chmod 644 "$work/key.pem" "$work/cert.pem"

wait_port() { # port: bounded wait for a listener
  for _ in $(seq 100); do
    if (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "nothing listens on $1" >&2; return 1
}
start() { "$@" & pids+=($!); }

# capture NAME FILTER CMD...: runs CMD while tcpdump records FILTER on lo.
capture() {
  local name=$1 filter=$2; shift 2
  tcpdump -Z root -i lo -U --immediate-mode -s 0 -w "$work/$name.pcap" "$filter" 2>"$work/$name.log" & local td=$!
  # tcpdump says "listening" once its filter is attached; then a moment
  # more, as packets sent right after that were seen to be missed.
  for _ in $(seq 100); do grep -q listening "$work/$name.log" && break; sleep 0.05; done
  sleep 1
  "$@" >/dev/null 2>&1 || echo "($name: client exited $?)" >&2
  sleep 0.5
  kill -INT $td; wait $td 2>/dev/null || true
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
  echo "$name: $(tcpdump -r "$work/$name.pcap" 2>/dev/null | wc -l) packets"
}

# The TLS origin server.
start openssl s_server -quiet -www -accept 127.0.0.1:4433 -cert "$work/cert.pem" -key "$work/key.pem"
start openssl s_server -quiet -www -accept 127.0.0.1:25 -cert "$work/cert.pem" -key "$work/key.pem"
wait_port 4433; wait_port 25

# HTTP CONNECT proxy.
cat > "$work/tinyproxy.conf" <<CONF
Port 8888
Listen 127.0.0.1
Timeout 30
MaxClients 10
Allow 127.0.0.1
LogLevel Error
CONF
start tinyproxy -d -c "$work/tinyproxy.conf"
wait_port 8888
capture http-connect-tinyproxy "tcp port 8888" \
  curl -sk -p -x http://127.0.0.1:8888 https://127.0.0.1:4433/

# SOCKS5 (without and with username/password).
start microsocks -i 127.0.0.1 -p 1080
start microsocks -i 127.0.0.1 -p 1082 -u rttdoc -P secret
wait_port 1080; wait_port 1082
capture socks5-microsocks "tcp port 1080" \
  curl -sk --socks5-hostname 127.0.0.1:1080 https://127.0.0.1:4433/
capture socks5-auth-microsocks "tcp port 1082" \
  curl -sk --socks5 rttdoc:secret@127.0.0.1:1082 https://127.0.0.1:4433/

# SOCKS4 and 4a.
cat > "$work/danted.conf" <<CONF
logoutput: stderr
internal: 127.0.0.1 port = 1081
external: 127.0.0.1
clientmethod: none
socksmethod: none
user.privileged: root
user.unprivileged: nobody
client pass { from: 127.0.0.1/32 to: 0.0.0.0/0 }
socks pass { from: 127.0.0.1/32 to: 0.0.0.0/0 }
CONF
start danted -f "$work/danted.conf" -N 1
wait_port 1081
capture socks4-dante "tcp port 1081" \
  curl -sk --socks4 127.0.0.1:1081 https://127.0.0.1:4433/
capture socks4a-dante-refused "tcp port 1081" \
  curl -sk --socks4a 127.0.0.1:1081 https://localhost:4433/

# SMTP STARTTLS: exim4 as a daemon on 2525 with a certificate.
mkdir -p "$work/exim/spool"
cat > "$work/exim.conf" <<CONF
primary_hostname = localhost
spool_directory = $work/exim/spool
log_file_path = $work/exim/%slog
exim_user = root
exim_group = root
never_users =
daemon_smtp_ports = 2525
local_interfaces = 127.0.0.1
tls_advertise_hosts = *
tls_certificate = $work/cert.pem
tls_privatekey = $work/key.pem
acl_smtp_rcpt = acl_check_rcpt
begin acl
acl_check_rcpt:
  deny
begin routers
begin transports
CONF
start exim -C "$work/exim.conf" -bdf -oX 2525
wait_port 2525
capture smtp-starttls-exim "tcp port 2525" \
  curl -sk --ssl-reqd --mail-from a@localhost --mail-rcpt b@localhost -T /dev/null smtp://127.0.0.1:2525/

# FTP AUTH TLS: vsftpd, anonymous, TLS allowed; only the control connection.
mkdir -p "$work/ftp/empty" "$work/ftp/anon"; chmod 555 "$work/ftp/anon"
cat > "$work/vsftpd.conf" <<CONF
listen=YES
listen_address=127.0.0.1
listen_port=2121
background=NO
anonymous_enable=YES
anon_root=$work/ftp/anon
no_anon_password=YES
local_enable=NO
write_enable=NO
secure_chroot_dir=$work/ftp/empty
ssl_enable=YES
allow_anon_ssl=YES
force_anon_logins_ssl=NO
force_anon_data_ssl=NO
require_ssl_reuse=NO
rsa_cert_file=$work/cert.pem
rsa_private_key_file=$work/key.pem
seccomp_sandbox=NO
CONF
# (vsftpd writes its errors to fd 0)
start vsftpd "$work/vsftpd.conf" </dev/null
wait_port 2121
capture ftp-auth-tls-vsftpd "tcp port 2121" \
  curl -sk --ssl-reqd ftp://127.0.0.1:2121/

# IMAP STARTTLS and POP3 STLS: dovecot.
mkdir -p "$work/dovecot/run"
cat > "$work/dovecot.conf" <<CONF
base_dir = $work/dovecot/run
protocols = imap pop3
listen = 127.0.0.1
default_login_user = nobody
default_internal_user = nobody
default_internal_group = nogroup
ssl = yes
ssl_cert = <$work/cert.pem
ssl_key = <$work/key.pem
disable_plaintext_auth = yes
passdb {
  driver = static
  args = password=secret
}
userdb {
  driver = static
  args = uid=nobody gid=nogroup home=$work/dovecot/home
}
log_path = $work/dovecot/log
service imap-login {
  inet_listener imap {
    port = 1143
  }
  inet_listener imaps {
    port = 0
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 1110
  }
  inet_listener pop3s {
    port = 0
  }
}
CONF
start dovecot -F -c "$work/dovecot.conf"
wait_port 1143; wait_port 1110
capture imap-starttls-dovecot "tcp port 1143" \
  curl -sk --ssl-reqd -u rttdoc:secret imap://127.0.0.1:1143/
capture pop3-stls-dovecot "tcp port 1110" \
  curl -sk --ssl-reqd -u rttdoc:secret pop3://127.0.0.1:1110/

# PostgreSQL SSLRequest: a throwaway cluster owned by nobody.
mkdir -p "$work/pg"; chown nobody "$work/pg"
cp "$work/key.pem" "$work/pg-key.pem"; chown nobody "$work/pg-key.pem"; chmod 600 "$work/pg-key.pem"
runuser -u nobody -- "$pg_bin/initdb" -A trust -U nobody -D "$work/pg/data" >/dev/null
runuser -u nobody -- "$pg_bin/postgres" -D "$work/pg/data" -k "$work/pg" -h 127.0.0.1 -p 5433 \
  -c ssl=on -c ssl_cert_file="$work/cert.pem" -c ssl_key_file="$work/pg-key.pem" >/dev/null 2>&1 &
pids+=($!)
wait_port 5433
capture postgres-sslrequest "tcp port 5433" \
  psql "host=127.0.0.1 port=5433 user=nobody dbname=postgres sslmode=require gssencmode=disable" -c "select 1"

# TLS from the first byte, on ports no TLS list names.
capture tls-port-4433 "tcp port 4433" curl -sk https://127.0.0.1:4433/
capture tls-port-25 "tcp port 25" curl -sk https://127.0.0.1:25/
