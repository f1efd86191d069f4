#!/usr/bin/env bash
# Makes tests/data/dns/: a client that looks its server's name up before
# it connects, with the kernel, glibc's resolver (curl calls getaddrinfo),
# dnsmasq and nginx as producers, real Linux TCP and UDP, tcpdump in the
# client's namespace (`tcp or udp port 53`), across a path of 20 ms each
# way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# The server's namespace runs dnsmasq on 10.81.2.1:53, the only source of
# the names under test. and local. (no upstream: other names there do not
# exist), with api.rttdoc.test -> 10.81.2.1 (no IPv6 address: its AAAA is
# answered empty), and nginx on 10.81.2.1:8082 serving a1.txt (600
# bytes), on IPv4 and IPv6. The client has an IPv6 address too
# (2001:db8:81:1::1), so that glibc asks for AAAA beside A (AI_ADDRCONFIG),
# both from one socket, at once. Its
# resolver is /etc/netns/<client ns>/resolv.conf (which `ip netns exec`
# mounts over /etc/resolv.conf):
#
#   search-list.pcap   `search default.svc.cluster.local svc.cluster.local
#                      cluster.local`, `options ndots:5` (a Kubernetes
#                      pod's): curl http://api.rttdoc.test:8082/a1.txt
#                      asks the three longer names first, each answered
#                      "no such name", then the name itself
#   lost-query.pcap    `options timeout:2`, no search list: the server's
#                      namespace drops the second query that reaches it
#                      (nftables: the AAAA of glibc's pair), and glibc
#                      waits 2 s before it sends it again
#   plain.pcap         control: no search list, nothing dropped: one A
#                      and one AAAA, answered at once, then the SYN
#   search-hit.pcap    control: the same search list, curl asks for
#                      api (no dot): the first name tried,
#                      api.rttdoc.test via `search rttdoc.test`, answers
#   v6-blackhole.pcap  dual.rttdoc.test has an A and an AAAA record; the
#                      router drops TCP to the server's IPv6 address:
#                      curl tries IPv6 first (RFC 6724: a global IPv6
#                      address), Happy Eyeballs starts IPv4 200 ms later
#   dead-address.pcap  two.rttdoc.test has two A records, the first
#                      (10.81.2.9) dropped by the router: curl
#                      (--connect-timeout 4) gives it half and moves on
#   v6-works.pcap      control: dual.rttdoc.test with IPv6 passing (the
#                      router forwards it without the relay's delay)
#
# Needs root, ip, tcpdump, python3, dnsmasq, nft, nginx, curl. Everything
# it creates is removed on exit, also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/dns}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtdns$$ /tmp/rttdoc-dns
chmod 755 "$work"
extra_cleanup() {
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  relay_stop_servers
}
[[ -d /etc/netns ]] || relay_made_netns_dir=1
relay_resolver=1
mkdir -p "/etc/netns/$C"
# IPv6 beside IPv4, not through the relay: the router forwards it at
# once (or drops it, for the captures that need a dead address).
ip -n "$C" addr add 2001:db8:81:1::1/64 dev c0 nodad
ip -n "$C" -6 route add default via 2001:db8:81:1::2
ip -n "$M" addr add 2001:db8:81:1::2/64 dev mc nodad
ip -n "$M" addr add 2001:db8:81:2::2/64 dev ms nodad
ip -n "$S" addr add 2001:db8:81:2::1/64 dev s0 nodad
ip -n "$S" -6 route add default via 2001:db8:81:2::2
ip netns exec "$M" sysctl -qw net.ipv6.conf.all.forwarding=1

head -c 600 /dev/zero | tr '\0' 1 > "$work/a1.txt"
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  root $work;
  server { listen 10.81.2.1:8082; listen [2001:db8:81:2::1]:8082; }
}
CONF
ip netns exec "$S" nginx -c "$work/nginx.conf"
ip netns exec "$S" dnsmasq --keep-in-foreground --no-resolv --no-hosts --no-poll \
  --listen-address=10.81.2.1 --bind-interfaces --port 53 --user=root \
  --pid-file="$work/dnsmasq.pid" --local=/test/ --local=/local/ \
  --host-record=api.rttdoc.test,10.81.2.1 --host-record=dual.rttdoc.test,10.81.2.1,2001:db8:81:2::1 \
  --host-record=two.rttdoc.test,10.81.2.9 --host-record=two.rttdoc.test,10.81.2.1 \
  --log-facility="$work/dnsmasq.log" &
pids_dnsmasq=$!
relay_listening 8082
for _ in $(seq 100); do
  ip netns exec "$S" ss -Hlun 'sport = :53' | grep -q . && break
  sleep 0.1
done

resolver() { printf '%s\n' "$@" > "/etc/netns/$C/resolv.conf"; }
relay_filter='tcp or udp port 53'
url=http://api.rttdoc.test:8082/a1.txt

resolver 'nameserver 10.81.2.1' 'search default.svc.cluster.local svc.cluster.local cluster.local' 'options ndots:5'
relay_capture search-list curl -s "$url"

resolver 'nameserver 10.81.2.1' 'options timeout:2 attempts:2'
ip netns exec "$S" nft -f - <<'NFT'
table inet rttdoc_dns {
  chain input {
    type filter hook input priority 0;
    udp dport 53 numgen inc mod 1000 == 1 drop
  }
}
NFT
relay_capture lost-query curl -s "$url"
ip netns exec "$S" nft delete table inet rttdoc_dns

resolver 'nameserver 10.81.2.1'
relay_capture plain curl -s "$url"

resolver 'nameserver 10.81.2.1' 'search rttdoc.test' 'options ndots:5'
relay_capture search-hit curl -s http://api:8082/a1.txt

# The router drops what goes to the name's other address: IPv6 to the
# server, or the A record no host owns.
resolver 'nameserver 10.81.2.1'
ip netns exec "$M" nft -f - <<'NFT'
table inet rttdoc_dead {
  chain forward {
    type filter hook forward priority 0;
    ip6 daddr 2001:db8:81:2::1 tcp dport 8082 drop
    ip daddr 10.81.2.9 drop
  }
}
NFT
relay_capture v6-blackhole curl -s "http://dual.rttdoc.test:8082/a1.txt"
relay_capture dead-address curl -s --connect-timeout 4 "http://two.rttdoc.test:8082/a1.txt"
ip netns exec "$M" nft delete table inet rttdoc_dead
relay_capture v6-works curl -s "http://dual.rttdoc.test:8082/a1.txt"

kill "$pids_dnsmasq" 2>/dev/null || true
for name in search-list lost-query plain search-hit v6-blackhole dead-address v6-works; do
  gzip -9n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
echo "made $out: search-list lost-query plain search-hit v6-blackhole dead-address v6-works"
