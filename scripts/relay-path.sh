# Sourced by the capture scripts (offload-, nat-, pageload-captures.sh):
# the path they share.
#
#   relay_path NET CLIENT_NS SERVER_NS ROUTER_NS CLIENT_IF
#
# The client namespace's CLIENT_IF (NET.1.1/24) and the server namespace's
# s0 (NET.2.1/24) are veths to the router namespace (NET.1.2, NET.2.2; its
# ends are m<CLIENT_IF without the 0> and ms), which passes what comes
# from the client into the TUN device ta and what comes from the server
# into tb (policy routing): scripts/tun-delay.py relays between them, and
# what it writes back takes the main table onward. The namespaces must
# exist; they are the caller's to delete.
relay_path() {
  local net=$1 c=$2 s=$3 m=$4 cif=$5
  local mc=m${cif%0}
  ip link add "$cif" netns "$c" type veth peer name "$mc" netns "$m"
  ip link add s0 netns "$s" type veth peer name ms netns "$m"
  ip -n "$c" addr add "$net.1.1/24" dev "$cif"
  ip -n "$c" link set "$cif" up
  ip -n "$c" link set lo up
  ip -n "$c" route add default via "$net.1.2"
  ip -n "$s" addr add "$net.2.1/24" dev s0
  ip -n "$s" link set s0 up
  ip -n "$s" link set lo up
  ip -n "$s" route add default via "$net.2.2"
  ip -n "$m" addr add "$net.1.2/24" dev "$mc"
  ip -n "$m" addr add "$net.2.2/24" dev ms
  local l
  for l in "$mc" ms lo; do ip -n "$m" link set "$l" up; done
  ip netns exec "$m" sysctl -qw net.ipv4.ip_forward=1
  ip netns exec "$m" sysctl -qw net.ipv4.conf.all.rp_filter=0
  ip netns exec "$m" sysctl -qw net.ipv4.conf.default.rp_filter=0
  ip -n "$m" tuntap add dev ta mode tun
  ip -n "$m" tuntap add dev tb mode tun
  for l in ta tb; do
    ip -n "$m" link set "$l" up
    ip netns exec "$m" sysctl -qw "net.ipv4.conf.$l.rp_filter=0"
  done
  ip -n "$m" rule add iif "$mc" lookup 100
  ip -n "$m" route add default dev ta table 100
  ip -n "$m" rule add iif ms lookup 200
  ip -n "$m" route add default dev tb table 200
}
