#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/openvpn.rs
# (tests/data/openvpn/*.pcap.gz): an OpenVPN tunnel over TCP (TLS mode,
# certificates made here), curl fetching pages from nginx through it,
# tcpdump on the client's outer interface, across a path of 20 ms each
# way:
#
#   client ns --veth-- router ns --veth-- server ns
#   (tun9 10.9.0.1)       |               (tun9 10.9.0.2, nginx)
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   openvpn-tcp.pcap          OpenVPN's defaults: Nagle on at both ends
#                             of the tunnel's TCP connection
#   openvpn-tcp-nodelay.pcap  the same with --tcp-nodelay (the control)
#
# Each: the tunnel comes up, then three times (0.7 s apart) curl asks for
# a small page and a 30 KB file on one connection inside the tunnel.
#
# Needs root, ip, tcpdump, python3, openvpn, openssl, nginx, curl.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
extra_cleanup() {
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
}
relay_lab rtovpn$$ /tmp/rttdoc-openvpn
chmod 755 "$work"

# A CA, and a certificate for each end (P-256; OpenVPN's
# --remote-cert-tls checks key usage and extended key usage).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout "$work/ca.key" -out "$work/ca.crt" -subj /CN=rttdoc-ca 2>/dev/null
for end in server client; do
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$work/$end.key" -out "$work/$end.csr" -subj "/CN=$end" 2>/dev/null
  printf 'keyUsage=digitalSignature,keyAgreement\nextendedKeyUsage=%s\n' \
    "$([[ $end == server ]] && echo serverAuth || echo clientAuth)" > "$work/$end.ext"
  openssl x509 -req -in "$work/$end.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" \
    -CAcreateserial -days 2 -out "$work/$end.crt" -extfile "$work/$end.ext" 2>/dev/null
done

mkdir -p "$work/www"
echo "hello through the tunnel" > "$work/www/index.html"
head -c 30000 /dev/zero | tr '\0' 'q' > "$work/www/file-30k.bin"
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
  server { listen 8080; root $work/www; }
}
CONF
ip netns exec $S nginx -c "$work/nginx.conf"

# One tunnel's life, captured on the client's outer interface: $1 name,
# then options for both ends.
capture() {
  local name=$1 p; shift
  local both=(--dev tun9 --dev-type tun --ca "$work/ca.crt" --data-ciphers AES-128-GCM
    --verb 1 "$@")
  ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 30 & pids+=($!)
  ip netns exec $S openvpn --proto tcp-server --local 10.81.2.1 --lport 1194 \
    --ifconfig 10.9.0.2 10.9.0.1 --tls-server --dh none \
    --cert "$work/server.crt" --key "$work/server.key" "${both[@]}" > "$work/server-$name.log" 2>&1 &
  pids+=($!)
  timeout 40 ip netns exec $C tcpdump -i c0 -s 0 -U -w "$work/$name.pcap" tcp 2>/dev/null &
  pids+=($!)
  sleep 1
  ip netns exec $C openvpn --proto tcp-client --remote 10.81.2.1 1194 \
    --ifconfig 10.9.0.1 10.9.0.2 --tls-client --remote-cert-tls server \
    --cert "$work/client.crt" --key "$work/client.key" "${both[@]}" > "$work/client-$name.log" 2>&1 &
  pids+=($!)
  local up=
  for _ in $(seq 60); do
    if ip netns exec $C curl -s -m 1 -o /dev/null http://10.9.0.2:8080/index.html; then up=1; break; fi
    sleep 0.3
  done
  [[ -n $up ]] || { echo "the tunnel did not come up:" >&2; cat "$work/client-$name.log" >&2; exit 1; }
  for _ in 1 2 3; do
    sleep 0.7
    ip netns exec $C curl -s -m 10 \
      http://10.9.0.2:8080/index.html http://10.9.0.2:8080/file-30k.bin > /dev/null
  done
  sleep 1
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}
capture openvpn-tcp
capture openvpn-tcp-nodelay --tcp-nodelay
ls -l "$out"
