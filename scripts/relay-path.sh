# Sourced by the capture scripts (offload-, nat-, pageload-captures.sh):
# the path they share; `routed_path` below is the same path without the
# relay (icmp-, close-captures.sh).
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

# Sourced too, by the scripts whose captures take one relay path:
#
#   relay_lab TAG WORKDIR_PREFIX
#
# Makes the client, server and router namespaces ($C, $S, $M: TAG-c,
# TAG-s, TAG-m) on relay_path 10.81 (the client's interface c0), with
# wire-sized segments at both ends (TSO, GSO and GRO off: what a NIC's
# capture shows), and a work directory $work (mktemp WORKDIR_PREFIX.XXXXXX).
# On exit it kills the processes in $pids, runs the caller's
# `extra_cleanup` when there is one, deletes the namespaces and the work
# directory.
relay_lab() {
  C=$1-c S=$1-s M=$1-m
  work=$(mktemp -d "$2.XXXXXX")
  pids=()
  trap relay_lab_cleanup EXIT
  # A failing command ends the script (set -e) without a word when it
  # is silent (curl -sf, timeout): name it, for the test that ran it.
  set -E
  trap 'echo "${BASH_SOURCE[0]##*/}:$LINENO: exit $? from: $BASH_COMMAND" >&2' ERR
  local n
  for n in "$C" "$S" "$M"; do ip netns add "$n"; done
  relay_path 10.81 "$C" "$S" "$M" c0
  ip netns exec "$C" ethtool -K c0 tso off gso off gro off 2>/dev/null || true
  ip netns exec "$S" ethtool -K s0 tso off gso off gro off 2>/dev/null || true
}

relay_lab_cleanup() {
  local p n
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if declare -F extra_cleanup >/dev/null; then extra_cleanup; fi
  # (A namespace deleted with processes in it lives on with them.)
  relay_stop_servers
  wait 2>/dev/null || true
  if [[ -n ${relay_resolver:-} ]]; then
    rm -rf "/etc/netns/$S" "/etc/netns/$C"
    if [[ -n ${relay_made_netns_dir:-} ]]; then rmdir /etc/netns 2>/dev/null || true; fi
  fi
  for n in "$C" "$S" "$M"; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}

# Sourced too, by the capture scripts whose workloads are one command:
#
#   relay_capture NAME COMMAND...
#
# On relay_lab's path, with the relay up (20 ms each way, for at most
# 25 s) and tcpdump on the client's interface writing $work/NAME.pcap,
# runs COMMAND in the client's namespace (at most 20 s, its output
# dropped), then stops the relay and tcpdump. tcpdump's filter is
# $relay_filter when set (`tcp or udp port 53`), else `tcp`; it listens
# where $relay_tap says (`NAMESPACE INTERFACE`: a proxy's host on `any`,
# a backend on its link), else on the client's c0. With $relay_loss
# (`DROP_EVERY PORT`, tun-delay.py's) the relay drops every that-many-th
# data packet from that source port.
relay_capture() {
  local name=$1 tap_ns tap_if; shift
  read -r tap_ns tap_if <<< "${relay_tap:-$C c0}"
  # (Word-split on purpose: two arguments, or none.)
  # shellcheck disable=SC2086
  ip netns exec "$M" python3 "$(dirname "${BASH_SOURCE[0]}")/tun-delay.py" ta tb 20 25 ${relay_loss:-} &
  pids+=($!)
  timeout 30 ip netns exec "$tap_ns" tcpdump -i "$tap_if" -s 0 -U --immediate-mode \
    -w "$work/$name.pcap" "${relay_filter:-tcp}" 2>/dev/null &
  pids+=($!)
  relay_run_and_stop "$@"
}

# Sourced too, by the scripts that capture at both ends at once:
#
#   relay_capture_both NAME COMMAND...
#
# On relay_lab's path, with the relay up (20 ms each way, for at most
# 25 s) and tcpdump on the client's c0 and on the server's s0 (filter
# $relay_filter, else `tcp`), runs COMMAND in the client's namespace (at
# most 20 s, its output dropped), then stops what $pids holds (the relay,
# tcpdump, and what the caller started for this capture) and writes
# $out/NAME-client.pcap.gz and $out/NAME-server.pcap.gz (gzip -n).
relay_capture_both() {
  local name=$1 p; shift
  ip netns exec "$M" python3 "$(dirname "${BASH_SOURCE[0]}")/tun-delay.py" ta tb 20 25 & pids+=($!)
  timeout 30 ip netns exec "$C" tcpdump -i c0 -s 0 -U --immediate-mode \
    -w "$work/$name-client.pcap" "${relay_filter:-tcp}" 2>/dev/null & pids+=($!)
  timeout 30 ip netns exec "$S" tcpdump -i s0 -s 0 -U --immediate-mode \
    -w "$work/$name-server.pcap" "${relay_filter:-tcp}" 2>/dev/null & pids+=($!)
  relay_run_and_stop "$@"
  for p in client server; do
    [[ -f $work/$name-$p.pcap ]] && gzip -9 -n -c "$work/$name-$p.pcap" > "$out/$name-$p.pcap.gz"
  done
  return 0
}

# What relay_capture and relay_capture_both end with: a second after
# what $pids started, runs COMMAND in the client's namespace (at most 20
# s, its output dropped), and a second later stops what $pids holds;
# returns COMMAND's status (saying so when it failed).
relay_run_and_stop() { # COMMAND...
  local p rc=0
  sleep 1
  timeout 20 ip netns exec "$C" "$@" > /dev/null || rc=$?
  if ((rc != 0)); then echo "exit $rc from: $*" >&2; fi
  sleep 1
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  return "$rc"
}

# Sourced too, by the scripts that wait for their servers through the
# relay:
#
#   relay_ready URL
#
# Waits until URL answers curl in the client's namespace ($C), trying
# 50 times a tenth of a second apart; returns 1, saying so, if it never
# does.
relay_ready() {
  local i
  for i in $(seq 50); do
    ip netns exec "$C" curl -sk --max-time 1 -o /dev/null "$1" && return 0
    sleep 0.1
  done
  echo "$1 never answered" >&2
  return 1
}

# Sourced too, by the scripts whose servers look their clients up:
#
#   relay_dead_resolver
#
# After relay_lab: gives the server's namespace a resolver that never
# answers (/etc/netns/$S/resolv.conf, which `ip netns exec` mounts over
# /etc/resolv.conf: a nameserver on its own subnet that no host answers
# for, one try of a second). relay_lab's cleanup removes it, and
# /etc/netns when this made it.
relay_dead_resolver() {
  [[ -d /etc/netns ]] || relay_made_netns_dir=1
  relay_resolver=1
  mkdir -p "/etc/netns/$S"
  printf 'nameserver 10.81.2.53\noptions timeout:1 attempts:1\n' > "/etc/netns/$S/resolv.conf"
}

# Sourced too, by the scripts that start servers in the server's namespace:
#
#   relay_listening PORT [TENTHS]
#
# Waits until something in $S listens on PORT, for at most TENTHS tenths
# of a second (300 unless given); exits the script when nothing does.
relay_listening() {
  local tries=${2:-300}
  for _ in $(seq "$tries"); do
    ip netns exec "$S" ss -Hltn "sport = :$1" | grep -q . && return
    sleep 0.1
  done
  echo "nothing listens on $1" >&2
  exit 1
}

#   relay_stop_servers
#
# Stops every process in the server's namespace (servers a script started
# outside $pids, which relay_capture stops after each capture).
relay_stop_servers() {
  ip netns pids "$S" 2>/dev/null | xargs -r kill 2>/dev/null || true
}

# Sourced too, by the scripts whose server is nginx:
#
#   relay_nginx HTTP_BLOCK
#
# After relay_lab: writes $work/nginx.conf (one worker, its pid and error
# log in $work, no access log, root $work/www) with HTTP_BLOCK (server
# blocks) inside its `http {}`, and starts nginx in the server's namespace
# (outside $pids: relay_lab's cleanup stops it with the namespace's other
# servers).
relay_nginx() {
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  root $work/www;
$1
}
CONF
  ip netns exec "$S" nginx -c "$work/nginx.conf"
}

# Sourced too, by the scripts whose server is RabbitMQ:
#
#   relay_rabbitmq PLUGINS CONF
#
# Starts a broker of its own in the server's namespace (outside $pids:
# relay_capture stops those after each capture; relay_stop_servers this):
# its node, database, logs and Erlang cookie in $work/rabbitmq, the
# plugins PLUGINS (an Erlang list: `[]`, `[rabbitmq_stomp]`) and the
# lines CONF added to rabbitmq.conf (guest may log in from other hosts).
# Debian's rabbitmq-server runs the broker as the rabbitmq user.
relay_rabbitmq() {
  local rmq=$work/rabbitmq
  mkdir -p "$rmq"
  printf 'loopback_users = none\nlisteners.tcp.default = 5672\n%s\n' "$2" > "$rmq/rabbitmq.conf"
  echo "$1." > "$rmq/enabled_plugins"
  chown -R rabbitmq: "$rmq" 2>/dev/null || true
  ip netns exec "$S" env HOME="$rmq" RABBITMQ_NODENAME=rabbit@localhost \
    RABBITMQ_MNESIA_BASE="$rmq/mnesia" RABBITMQ_LOG_BASE="$rmq/log" \
    RABBITMQ_CONFIG_FILE="$rmq/rabbitmq" RABBITMQ_ENABLED_PLUGINS_FILE="$rmq/enabled_plugins" \
    RABBITMQ_PID_FILE="$rmq/pid" rabbitmq-server > "$work/rabbitmq.log" 2>&1 &
}

# Like relay_capture, but keeps tcpdump's report (packets captured and
# dropped), shows it, fails when tcpdump dropped any packet, and writes
# $out/NAME.pcap.gz (gzip -n: the same bytes for the same capture).
# tcpdump runs in immediate mode: otherwise what arrives in its last
# second is lost when it is stopped, and not counted as dropped.
relay_capture_checked() { # NAME COMMAND...
  local name=$1 p; shift
  ip netns exec "$M" python3 "$(dirname "${BASH_SOURCE[0]}")/tun-delay.py" ta tb 20 30 & pids+=($!)
  timeout 35 ip netns exec "$C" tcpdump -i c0 -s 0 -U --immediate-mode -w "$work/$name.pcap" tcp \
    2> "$work/$name.tcpdump" & pids+=($!)
  sleep 1
  timeout 25 ip netns exec "$C" "$@" > /dev/null
  sleep 1
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  echo "$name:" >&2
  grep -E 'captured|dropped' "$work/$name.tcpdump" >&2
  if ! grep -q '^0 packets dropped by kernel' "$work/$name.tcpdump"; then
    echo "tcpdump dropped packets in $name" >&2
    exit 1
  fi
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}

# Sourced too, by the scripts whose router only forwards (and may refuse
# or black-hole what it forwards):
#
#   routed_path TAG CLIENT_NS ROUTER_NS SERVER_NS CLIENT ROUTER_C ROUTER_S SERVER
#
# Joins the client namespace (TAGa, address CLIENT/24) to the router's
# TAGb (ROUTER_C/24), and the router's TAGd (ROUTER_S/24) to the server's
# TAGe (SERVER/24); each end routes by default through the router, which
# forwards; TSO, GSO and GRO off everywhere (wire-sized packets, as a
# NIC's capture shows them). The namespaces must exist; they are the
# caller's to delete.
routed_path() {
  local t=$1 c=$2 r=$3 s=$4
  ip link add "${t}a" type veth peer name "${t}b"
  ip link add "${t}d" type veth peer name "${t}e"
  ip link set "${t}a" netns "$c"; ip link set "${t}b" netns "$r"
  ip link set "${t}d" netns "$r"; ip link set "${t}e" netns "$s"
  ip -n "$c" addr add "$5/24" dev "${t}a"; ip -n "$c" link set "${t}a" up
  ip -n "$r" addr add "$6/24" dev "${t}b"; ip -n "$r" link set "${t}b" up
  ip -n "$r" addr add "$7/24" dev "${t}d"; ip -n "$r" link set "${t}d" up
  ip -n "$s" addr add "$8/24" dev "${t}e"; ip -n "$s" link set "${t}e" up
  ip -n "$c" route add default via "$6"
  ip -n "$s" route add default via "$7"
  ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
  local pair
  for pair in "$c ${t}a" "$r ${t}b" "$r ${t}d" "$s ${t}e"; do
    set -- $pair
    ip netns exec "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
  done
}

# Sourced too, by the scripts whose capture is one download from nginx
# (late-loss-, reorder-captures.sh):
#
#   relay_download BYTES NAME [RELAY_ARGS...]
#
# After relay_lab: nginx (one worker) in the server's namespace serving
# BYTES of zeros (a file that compresses), the relay (tun-delay.py ta tb
# 20 25 RELAY_ARGS...: 20 ms each way; the caller's environment passes
# through to it), tcpdump on the client's interface writing
# $work/NAME.pcap, and one curl of the file; then the relay and tcpdump
# are stopped and the servers with them (extra_cleanup need not).
relay_download() {
  local bytes=$1 name=$2 p; shift 2
  chmod 755 "$work"
  mkdir -p "$work/www"
  head -c "$bytes" /dev/zero > "$work/www/zeros.bin"
  chmod -R a+rX "$work/www"
  cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  server {
    listen 10.81.2.1:80;
    root $work/www;
  }
}
CONF
  ip netns exec "$S" nginx -c "$work/nginx.conf"
  relay_listening 80
  ip netns exec "$M" python3 "$(dirname "${BASH_SOURCE[0]}")/tun-delay.py" ta tb 20 25 "$@" &
  pids+=($!)
  timeout 30 ip netns exec "$C" tcpdump -i c0 -s 0 -U -w "$work/$name.pcap" tcp 2>/dev/null &
  pids+=($!)
  sleep 1
  timeout 20 ip netns exec "$C" curl -s -o /dev/null http://10.81.2.1/zeros.bin
  sleep 1
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait "${pids[@]}" 2>/dev/null || true
  pids=()
  relay_stop_servers
}

# Sourced too, by the scripts with a host behind the server namespace (a
# proxy's upstream, a balancer's backend: proxy-captures.sh,
# proxy-protocol-captures.sh):
#
#   behind_server NET SERVER_NS BACK_NS BACK_IF
#
# A network of its own between them: SERVER_NS's p1 is NET.3.1/24,
# BACK_NS's BACK_IF NET.3.2/24 (its loopback up too).
behind_server() {
  local net=$1 s=$2 b=$3 bif=$4
  ip link add p1 netns "$s" type veth peer name "$bif" netns "$b"
  ip -n "$s" addr add "$net.3.1/24" dev p1
  ip -n "$s" link set p1 up
  ip -n "$b" addr add "$net.3.2/24" dev "$bif"
  ip -n "$b" link set "$bif" up
  ip -n "$b" link set lo up
}
