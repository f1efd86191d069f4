#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/imap.rs
# (tests/data/imap/dovecot-idle.pcap.gz): Dovecot's IMAP server and a
# client speaking IMAP over real Linux TCP (scripts/imap-idle-client.py),
# tcpdump in the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   dovecot-idle.pcap  one session logs in, selects INBOX and IDLEs; a
#                      second session APPENDs a message a second later,
#                      and Dovecot tells the first (`* 1 EXISTS`); the
#                      first ends its IDLE (DONE), fetches, logs out
#
# Needs root, ip, tcpdump, python3 and dovecot (dovecot-imapd).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtimap$$ /tmp/rttdoc-imap
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }

# One user (u, password p) whose mail is a maildir in $work, served under
# Dovecot's unprivileged users.
mkdir -p "$work/mail" "$work/run"
chmod 777 "$work/mail" "$work/run"
echo "u:{PLAIN}p:$(id -u dovenull):$(id -g dovenull)::$work/mail" > "$work/passwd"
chmod 644 "$work/passwd"
cat > "$work/dovecot.conf" <<CONF
protocols = imap
listen = 10.81.2.1
base_dir = $work/run
state_dir = $work/run
log_path = $work/dovecot.log
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain
passdb {
  driver = passwd-file
  args = $work/passwd
}
userdb {
  driver = passwd-file
  args = $work/passwd
}
mail_location = maildir:$work/mail
default_internal_user = dovecot
default_login_user = dovenull
first_valid_uid = 1
CONF
chmod 644 "$work/dovecot.conf"
ip netns exec "$S" dovecot -F -c "$work/dovecot.conf" &
# (Not in $pids: relay_capture stops those after each capture.)
relay_listening 143
relay_capture dovecot-idle python3 "$here/imap-idle-client.py"
gzip -9 -n -c "$work/dovecot-idle.pcap" > "$out/dovecot-idle.pcap.gz"
ls -l "$out"
