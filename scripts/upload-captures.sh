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

# (curl -f: a PUT nginx did not store fails the script.)
relay_loss="2400 45000" relay_capture put-loss \
  curl -sf -o /dev/null --local-port 45000 -H 'Expect:' -T "$work/body.bin" \
  http://10.81.2.1/up/body.bin
gzip -9 -n -c "$work/put-loss.pcap" > "$out/put-loss.pcap.gz"
