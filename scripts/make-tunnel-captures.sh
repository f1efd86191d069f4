#!/usr/bin/env bash
# Makes the tunnel captures under tests/data/tunnels/ with the kernel as the
# producer: two network namespaces joined by a veth pair (the underlay), a
# tunnel device of the given type in each, an HTTP GET over the tunnel
# (curl -> python3 -m http.server), captured on the underlay veth by tcpdump.
#
#   scripts/make-tunnel-captures.sh [OUTDIR] [KIND...]
#
# Kinds: vxlan4 vxlan6 vxlan4-frag gretap gre geneve erspan1
# erspan2 ipip sit ip6gre (default: all). A kind whose device type the
# running kernel lacks is skipped with a message (the kernel this was first
# run on, 6.18 "fc", has only VXLAN built in).
#
# vxlan4-frag shrinks the underlay MTU below the tunnel's so that the kernel
# fragments the outer (VXLAN/UDP over IPv4, DF clear) packets. Over IPv6 the
# kernel does not fragment them: it answers "packet too big" and inner TCP
# lowers its MSS, so there is no IPv6 counterpart.
#
# Needs root, ip, tcpdump, curl, python3. Everything it creates is removed
# on exit, also on failure; every wait is bounded.
set -euo pipefail

OUT=${1:-$(dirname "$0")/../tests/data/tunnels}
shift || true
KINDS=("$@")
[ ${#KINDS[@]} -eq 0 ] && KINDS=(vxlan4 vxlan6 vxlan4-frag gretap gre geneve erspan1 erspan2 ipip sit ip6gre)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

TAG=rtt$$
NS_A=${TAG}a
NS_B=${TAG}b
WORK=$(mktemp -d)
PIDS=()

cleanup() {
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

a() { ip netns exec "$NS_A" "$@"; }
b() { ip netns exec "$NS_B" "$@"; }

# A 6000-byte file: several full-size segments, so the -frag kinds fragment.
head -c 6000 /dev/zero | tr '\0' 'x' > "$WORK/body.txt"

underlay() { # $1: 4 or 6
    ip netns add "$NS_A"
    ip netns add "$NS_B"
    ip link add ua type veth peer name ub
    ip link set ua netns "$NS_A"
    ip link set ub netns "$NS_B"
    a ip link set lo up
    b ip link set lo up
    a ip addr add 10.99.0.1/24 dev ua
    b ip addr add 10.99.0.2/24 dev ub
    a ip -6 addr add fd99::1/64 dev ua nodad
    b ip -6 addr add fd99::2/64 dev ub nodad
    a ip link set ua up
    b ip link set ub up
}

# tunnel KIND: adds device t0 in both namespaces, returns 1 if unsupported.
tunnel() {
    local kind=$1 la lb
    for side in A B; do
        if [ $side = A ]; then la=1; lb=2; else la=2; lb=1; fi
        local ns=$NS_A; [ $side = B ] && ns=$NS_B
        local dev=ua; [ $side = B ] && dev=ub
        local args
        case $kind in
            vxlan4|vxlan4-frag) args="type vxlan id 42 local 10.99.0.$la remote 10.99.0.$lb dstport 4789 dev $dev" ;;
            vxlan6) args="type vxlan id 42 local fd99::$la remote fd99::$lb dstport 4789 dev $dev" ;;
            gretap) args="type gretap local 10.99.0.$la remote 10.99.0.$lb key 7" ;;
            gre) args="type gre local 10.99.0.$la remote 10.99.0.$lb seq" ;;
            geneve) args="type geneve id 42 remote 10.99.0.$lb" ;;
            erspan1) args="type erspan local 10.99.0.$la remote 10.99.0.$lb seq key 9 erspan_ver 1 erspan 12" ;;
            erspan2) args="type erspan local 10.99.0.$la remote 10.99.0.$lb seq key 9 erspan_ver 2 erspan_dir ingress erspan_hwid 7" ;;
            ipip) args="type ipip local 10.99.0.$la remote 10.99.0.$lb" ;;
            sit) args="type sit local 10.99.0.$la remote 10.99.0.$lb" ;;
            ip6gre) args="type ip6gre local fd99::$la remote fd99::$lb" ;;
            *) echo "unknown kind $kind" >&2; return 1 ;;
        esac
        # shellcheck disable=SC2086
        if ! ip netns exec "$ns" ip link add t0 $args 2>"$WORK/err"; then
            echo "SKIPPED $kind: the kernel cannot make it ($(cat "$WORK/err"))" >&2
            return 1
        fi
        ip netns exec "$ns" ip link set t0 up
    done
}

overlay_addresses() { # $1 kind
    case $1 in
        sit|ip6gre|vxlan6) FAMILY=6 ;;
        *) FAMILY=4 ;;
    esac
    if [ "$FAMILY" = 6 ]; then
        a ip -6 addr add fd98::1/64 dev t0 nodad
        b ip -6 addr add fd98::2/64 dev t0 nodad
        SERVER="[fd98::2]"; BIND=fd98::2
    else
        a ip addr add 10.98.0.1/24 dev t0
        b ip addr add 10.98.0.2/24 dev t0
        SERVER=10.98.0.2; BIND=10.98.0.2
    fi
}

make_one() {
    local kind=$1 file=$OUT/$1.pcap
    underlay
    if ! tunnel "$kind"; then
        ip netns del "$NS_A"; ip netns del "$NS_B"
        return 0
    fi
    overlay_addresses "$kind"
    case $kind in
        *-frag)
            # The tunnel keeps the 1450-byte MTU it got from a 1500-byte
            # underlay; the underlay then gets less,
            # so every full-size inner segment leaves as outer fragments.
            a ip link set ua mtu 1280; b ip link set ub mtu 1280
            ;;
    esac
    (cd "$WORK" && exec ip netns exec "$NS_B" python3 -m http.server 8080 --bind "$BIND" >/dev/null 2>&1) &
    PIDS+=($!)
    # Not through a shell function: $! must be tcpdump itself (ip netns exec
    # execs it), so that the kill below makes it flush and exit before gzip.
    # Immediate mode: packets still in the ring buffer at the kill are lost.
    ip netns exec "$NS_A" tcpdump -i ua -s 0 -U --immediate-mode -w "$file" >/dev/null 2>&1 &
    PIDS+=($!)
    local tcpdump_pid=$!
    # Wait (bounded: 30 s, python starts slowly on a busy machine) for the
    # server to listen and tcpdump to start.
    local up=no
    for _ in $(seq 300); do
        if b ss -ltn 2>/dev/null | grep -q ':8080' && [ -e "$file" ]; then
            up=yes
            break
        fi
        sleep 0.1
    done
    [ $up = yes ] || { echo "$kind: server or tcpdump did not start" >&2; exit 1; }
    sleep 0.5
    # Two connections, so the capture has two tcp.stream numbers.
    for _ in 1 2; do
        a curl -s -m 10 -o /dev/null "http://$SERVER:8080/body.txt" \
            || { echo "$kind: curl failed" >&2; exit 1; }
    done
    sleep 0.5
    kill "$tcpdump_pid" 2>/dev/null || true
    wait "$tcpdump_pid" 2>/dev/null || true
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    PIDS=()
    ip netns del "$NS_A"; ip netns del "$NS_B"
    gzip -9 -n -f "$file"
    echo "made $file.gz"
}

for kind in "${KINDS[@]}"; do
    make_one "$kind"
done
