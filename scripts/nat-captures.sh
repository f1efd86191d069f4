#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/translated_copies.rs
# (tests/data/nat/*.pcap.gz): `tcpdump -i any` on a container host, where
# each packet of a container's connection passes the capture three times:
# on the container's veth and the bridge with the container's address, and
# on the uplink after the host masqueraded it (nftables, as Docker and
# Kubernetes' bridge plugins do). The first two are the same packet (a
# copy); the third is the same connection under other addresses, which
# Wireshark shows as a second tcp.stream. Real Linux TCP, nginx and curl,
# across a path of 20 ms each way:
#
#   container ns --veth-- [bridge, NAT] host ns --veth-- router ns --veth-- server ns
#                                                          |
#                                  TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   download-any.pcap   curl in the container: a 1 MB file over HTTP
#   wwr-any.pcap        curl: three keep-alive requests for a 3000-byte page
#                       to nginx with `tcp_nodelay off` (write-write-read:
#                       the field notes' case 5, Nagle and delayed ACK)
#   tls-any.pcap        curl: two requests on one TLS 1.3 connection
#
# Needs root, ip, nft, tcpdump, nginx, curl, openssl, python3.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
tag=rtnat$$
H=$tag-h S=$tag-s M=$tag-m K=$tag-k
work=$(mktemp -d /tmp/rttdoc-nat.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for pid in "$work/nginx.pid" "$work/nagle.pid"; do
    [[ -f $pid ]] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  for n in $H $S $M $K; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for n in $H $S $M $K; do ip netns add $n; ip -n $n link set lo up; done
relay_path 10.79 $H $S $M h0
ip link add k0 netns $K type veth peer name veth-k netns $H
# The container host: a bridge with the container's veth, masquerading
# what leaves by its uplink h0.
ip -n $H link add br0 type bridge
ip -n $H link set veth-k master br0
ip -n $H addr add 172.30.0.1/24 dev br0
for l in br0 veth-k; do ip -n $H link set $l up; done
ip netns exec $H sysctl -qw net.ipv4.ip_forward=1
printf 'table ip nat {\n chain post {\n  type nat hook postrouting priority 100;\n  ip saddr 172.30.0.0/24 oifname "h0" masquerade\n }\n}\n' > "$work/nat.nft"
ip netns exec $H nft -f "$work/nat.nft"
ip -n $K addr add 172.30.0.2/24 dev k0; ip -n $K link set k0 up
ip -n $K route add default via 172.30.0.1

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
mkdir -p "$work/www"
echo "hello from rttdoc's NAT fixture" > "$work/www/index.html"
head -c 16000 /dev/zero | tr '\0' 'x' > "$work/www/page.html"
head -c 3000 /dev/zero | tr '\0' 'w' > "$work/www/w3000.html"
head -c 1000000 /dev/zero | tr '\0' 'z' > "$work/www/file-1m.bin"
cat > "$work/nginx.conf" <<CONF
user root;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
  ssl_protocols TLSv1.3;
  server { listen 10.79.2.1:8080; listen 10.79.2.1:8443 ssl; root $work/www; }
}
CONF
ip netns exec $S nginx -c "$work/nginx.conf"
cat > "$work/nagle.conf" <<CONF
user root;
worker_processes 1;
pid $work/nagle.pid;
error_log $work/nagle-error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  sendfile on; tcp_nopush off; tcp_nodelay off; keepalive_requests 1000;
  server { listen 10.79.2.1:8082; root $work/www; }
}
CONF
ip netns exec $S nginx -c "$work/nagle.conf"

# One workload with the relay up and the container host capturing on
# every interface: $1 name, then the curl arguments.
capture() {
  local name=$1; shift
  ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 25 0 8080 & pids+=($!)
  timeout 30 ip netns exec $H tcpdump -i any -s 0 -U -w "$work/$name.pcap" tcp 2>/dev/null & pids+=($!)
  sleep 1
  timeout 20 ip netns exec $K curl -s -k "$@" > /dev/null
  sleep 1
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}

capture download-any http://10.79.2.1:8080/file-1m.bin
capture wwr-any http://10.79.2.1:8082/w3000.html http://10.79.2.1:8082/w3000.html http://10.79.2.1:8082/w3000.html
capture tls-any https://10.79.2.1:8443/ https://10.79.2.1:8443/page.html
