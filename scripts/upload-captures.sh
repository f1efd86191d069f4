#!/usr/bin/env bash
# Makes tests/data/upload/: an upload longer than rttdoc's per-connection
# timeline (2,048 segments), with losses the client repairs, captured at
# the client. The kernel, nginx and curl as producers, real Linux TCP,
# tcpdump in the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms; the 2400th
#                                                  data packet from the
#                                                  client's port dropped)
#
#   put-loss.pcap   curl -T of 3.5 MB (zeros) to nginx's WebDAV PUT
#                   (`dav_methods PUT`, answered 201 once the body is
#                   stored), from port 45000, no `Expect: 100-continue`.
#                   The request's repairs end after its last new byte:
#                   nginx answers only when the last of them arrived.
#
#   scripts/upload-captures.sh OUTDIR
#
# Needs root, ip, ethtool, tcpdump, nginx (with the DAV module), curl,
# python3, gzip.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
source "$(dirname "$0")/relay-path.sh"
relay_lab rtup$$ /tmp/rttdoc-upload
mkdir -p "$work/www/up" "$work/body"
# (nginx's workers run as nobody: the body and the stored file are theirs.)
chmod 755 "$work"
chmod 777 "$work/www/up" "$work/body"
relay_nginx "server {
    listen 10.81.2.1:80;
    location /up/ {
      dav_methods PUT;
      client_max_body_size 0;
      client_body_temp_path $work/body;
    }
  }"
relay_listening 80
head -c 3500000 /dev/zero > "$work/body.bin"

ip netns exec "$M" python3 "$(dirname "$0")/tun-delay.py" ta tb 20 25 2400 45000 &
pids+=($!)
timeout 30 ip netns exec "$C" tcpdump -i c0 -s 0 -U --immediate-mode \
  -w "$work/put-loss.pcap" tcp 2>/dev/null &
pids+=($!)
sleep 1
code=$(timeout 20 ip netns exec "$C" curl -s -o /dev/null -w '%{http_code}' \
  --local-port 45000 -H 'Expect:' -T "$work/body.bin" http://10.81.2.1/up/body.bin)
sleep 1
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
[[ $code == 201 ]] || { echo "PUT answered $code" >&2; exit 1; }
gzip -9 -n -c "$work/put-loss.pcap" > "$out/put-loss.pcap.gz"
