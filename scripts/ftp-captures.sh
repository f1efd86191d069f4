#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/ftp.rs
# (tests/data/ftp/*.pcap.gz): vsftpd serving small files to python's
# ftplib, real Linux TCP, tcpdump in the client's namespace, across a
# path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   vsftpd-active.pcap   one anonymous session fetching three files in
#                        active mode (PORT): for each RETR the server
#                        opens the data connection back to the client and
#                        answers 150 once it is up
#   vsftpd-passive.pcap  the same in passive mode (PASV): the client opens
#                        each data connection before it sends RETR
#
# Needs root, ip, tcpdump, python3 and vsftpd.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtftp$$ /tmp/rttdoc-ftp
chmod 755 "$work"
mkdir -p "$work/ftp/empty" "$work/ftp/anon"
for i in 1 2 3; do echo "file $i" > "$work/ftp/anon/f$i.txt"; done
# vsftpd refuses an anonymous root it may write to.
chmod 555 "$work/ftp/anon"
cat > "$work/vsftpd.conf" <<CONF
listen=YES
listen_address=10.81.2.1
listen_port=2121
background=NO
anonymous_enable=YES
anon_root=$work/ftp/anon
no_anon_password=YES
local_enable=NO
write_enable=NO
secure_chroot_dir=$work/ftp/empty
seccomp_sandbox=NO
pasv_enable=YES
port_enable=YES
connect_from_port_20=NO
CONF
# $1 name, $2 passive (True) or active (False). The server starts anew
# for each capture (relay_capture stops what $pids holds).
capture() {
  # (vsftpd writes its errors to fd 0.)
  ip netns exec "$S" vsftpd "$work/vsftpd.conf" 0> "$work/vsftpd.err" &
  pids+=($!)
  for _ in $(seq 50); do
    ip netns exec "$S" ss -Hltn 'sport = :2121' | grep -q . && break
    sleep 0.1
  done
  cat > "$work/$1.py" <<PY
import ftplib
f = ftplib.FTP()
f.connect("10.81.2.1", 2121, timeout=15)
f.login()
f.set_pasv($2)
for i in (1, 2, 3):
    f.retrbinary(f"RETR f{i}.txt", lambda data: None)
f.quit()
PY
  relay_capture "$1" python3 "$work/$1.py"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}
capture vsftpd-active False
capture vsftpd-passive True
ls -l "$out"
