#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/protocols.rs
# (tests/data/protocols/*.pcap.gz): request-answer protocols whose turns
# are all the network's, with nothing slow on either host: controls, on
# which nothing may be found. Real servers and clients, real Linux TCP,
# tcpdump in the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   ldap-slapd.pcap     OpenLDAP's slapd and ldapsearch: two searches for
#                       one entry, then one for all 200 (a 75 KB answer
#                       of one message per entry), each a connection
#                       (bind, search, unbind)
#   dns-unbound.pcap    DNS over TCP, unbound and kdig: one query on a
#                       connection, then three on one kept open (+keepopen)
#   smb-samba.pcap      SMB2/3, Samba's smbd and smbclient: a listing, a
#                       small and a 300 KB file fetched, then a file
#                       stored; smbclient also opens port 139 and drops it
#
# Needs root, ip, tcpdump, python3, slapd and ldap-utils, unbound,
# knot-dnsutils (kdig), samba (smbd) and smbclient.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtproto$$ /tmp/rttdoc-protocols
chmod 755 "$work"
# The capture ($1) of the workload script $2, kept gzipped.
capture() {
  relay_capture "$1" bash "$2"
  gzip -9 -n -c "$work/$1.pcap" > "$out/$1.pcap.gz"
}
# Stops the servers started since the last capture (smbd signals its
# whole process group when it stops: it runs in a session of its own).
stop_servers() {
  relay_stop_servers
  sleep 1
}

# OpenLDAP: a directory of 200 people.
mkdir -p "$work/ldap"
cat > "$work/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile $work/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
suffix "dc=rttdoc,dc=test"
rootdn "cn=admin,dc=rttdoc,dc=test"
rootpw secret
directory $work/ldap
CONF
ip netns exec "$S" slapd -d 0 -f "$work/slapd.conf" -h ldap://10.81.2.1:3389/ \
  > "$work/slapd.log" 2>&1 &
relay_listening 3389
python3 - > "$work/people.ldif" <<'PY'
print("dn: dc=rttdoc,dc=test\nobjectClass: dcObject\nobjectClass: organization\no: rttdoc\ndc: rttdoc\n")
for i in range(200):
    print(f"dn: uid=user{i},dc=rttdoc,dc=test\nobjectClass: inetOrgPerson\nuid: user{i}\n"
          f"cn: User {i}\nsn: {i}\nmail: user{i}@rttdoc.test\ndescription: {'x' * 200}\n")
PY
ip netns exec "$S" ldapadd -x -H ldap://10.81.2.1:3389 -D cn=admin,dc=rttdoc,dc=test -w secret \
  -f "$work/people.ldif" > /dev/null
cat > "$work/ldap.sh" <<'SH'
for i in 1 2; do
  ldapsearch -x -H ldap://10.81.2.1:3389 -b dc=rttdoc,dc=test "(uid=user$i)"
done
ldapsearch -x -H ldap://10.81.2.1:3389 -D cn=admin,dc=rttdoc,dc=test -w secret \
  -b dc=rttdoc,dc=test "(objectClass=inetOrgPerson)"
SH
capture ldap-slapd "$work/ldap.sh"
stop_servers

# unbound, answering from its own zone.
cat > "$work/unbound.conf" <<CONF
server:
  interface: 10.81.2.1@5353
  port: 5353
  do-tcp: yes
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "$work"
  pidfile: ""
  use-syslog: no
  access-control: 0.0.0.0/0 allow
  local-zone: "rttdoc.test." static
  local-data: "a.rttdoc.test. A 10.0.0.1"
  local-data: "b.rttdoc.test. A 10.0.0.2"
  local-data: "c.rttdoc.test. TXT \"$(printf 'x%.0s' $(seq 200))\""
CONF
ip netns exec "$S" unbound -d -c "$work/unbound.conf" > "$work/unbound.log" 2>&1 &
relay_listening 5353
cat > "$work/dns.sh" <<'SH'
kdig +tcp @10.81.2.1 -p 5353 a.rttdoc.test
kdig +tcp +keepopen @10.81.2.1 -p 5353 a.rttdoc.test b.rttdoc.test c.rttdoc.test TXT
SH
capture dns-unbound "$work/dns.sh"
stop_servers

# Samba: a guest share.
mkdir -p "$work/share" "$work/samba"/{state,lock,cache,private,run}
head -c 300000 /dev/zero | tr '\0' 'r' > "$work/share/big.txt"
echo small > "$work/share/small.txt"
chmod -R 777 "$work/share"
cat > "$work/smb.conf" <<CONF
[global]
  workgroup = RTTDOC
  server role = standalone server
  map to guest = bad user
  interfaces = 10.81.2.1/24
  bind interfaces only = yes
  smb ports = 445
  state directory = $work/samba/state
  lock directory = $work/samba/lock
  cache directory = $work/samba/cache
  private dir = $work/samba/private
  pid directory = $work/samba/run
  log file = $work/samba/smbd.log
  disable netbios = yes
  load printers = no
  printing = bsd
  printcap name = /dev/null
[share]
  path = $work/share
  guest ok = yes
  read only = no
CONF
setsid ip netns exec "$S" smbd -F --no-process-group -s "$work/smb.conf" > "$work/smbd.out" 2>&1 &
relay_listening 445
cat > "$work/smb.sh" <<SH
smbclient //10.81.2.1/share -N -s /dev/null -c 'ls; get small.txt /dev/null; get big.txt /dev/null'
smbclient //10.81.2.1/share -N -s /dev/null -c 'put $work/share/small.txt stored.txt'
SH
capture smb-samba "$work/smb.sh"
stop_servers
ls -l "$out"
