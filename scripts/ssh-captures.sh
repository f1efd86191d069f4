#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/ssh.rs
# (tests/data/ssh/*.pcap.gz): OpenSSH's client and server, real Linux TCP,
# tcpdump in the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   scp-download.pcap   scp fetches a 256 KB file over SFTP (no terminal:
#                       OpenSSH leaves Nagle on for the whole connection)
#   ssh-typing.pcap     `ssh -tt` with keystrokes typed 150 ms apart and
#                       echoed (a terminal: OpenSSH sets TCP_NODELAY once
#                       the session is interactive)
#
# Needs root, ip, tcpdump, python3, openssh-server (sshd), openssh-client.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
extra_cleanup() {
  [[ -f $work/sshd.pid ]] && kill "$(cat "$work/sshd.pid")" 2>/dev/null || true
}
relay_lab rtssh$$ /tmp/rttdoc-ssh
chmod 755 "$work"
ssh-keygen -q -t ed25519 -N '' -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/user_key"
cat > "$work/sshd_config" <<CONF
Port 2222
ListenAddress 10.81.2.1
HostKey $work/host_key
PermitRootLogin yes
AuthorizedKeysFile $work/user_key.pub
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PidFile $work/sshd.pid
Subsystem sftp internal-sftp
CONF
# sshd checks for its privilege-separation directory.
mkdir -p /run/sshd
ip netns exec $S /usr/sbin/sshd -f "$work/sshd_config" -E "$work/sshd.log"
head -c 262144 /dev/urandom > "$work/file.bin"
ssh_options=(-i "$work/user_key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
  -o LogLevel=ERROR -o BatchMode=yes)

# One session (relay_capture), kept gzipped: $1 name, then the command.
capture() {
  relay_capture "$@"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}
capture scp-download scp -q "${ssh_options[@]}" -P 2222 root@10.81.2.1:"$work/file.bin" "$work/copy.bin"
cmp "$work/file.bin" "$work/copy.bin"
# Keystrokes 150 ms apart, a pause after each line.
cat > "$work/typing.py" <<'PY'
import sys, time
for line in ["echo hello", "uname -s", "exit"]:
    for ch in line + "\n":
        sys.stdout.write(ch)
        sys.stdout.flush()
        time.sleep(0.15)
    time.sleep(0.5)
PY
capture ssh-typing bash -c "python3 '$work/typing.py' | ssh -tt ${ssh_options[*]} -p 2222 root@10.81.2.1"
ls -l "$out"
