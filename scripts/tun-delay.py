#!/usr/bin/env python3
"""A fixed-delay link between two TUN devices, for captures made by
scripts/offload-captures.sh: every IP packet read from one device is
written to the other DELAY_MS later, in order (a path of that one-way
delay and no bandwidth limit). With DROP_EVERY=N, the Nth, 2Nth, ...
packet carrying TCP data from source port PORT is dropped: real losses,
which the kernels repair. With RATE_KBPS, what goes from TUN_B to TUN_A
passes a bottleneck of that rate with a drop-tail queue of QUEUE_BYTES (a
client's downlink, B being the server's side), before the delay.

    tun-delay.py TUN_A TUN_B DELAY_MS SECONDS [DROP_EVERY PORT [RATE_KBPS QUEUE_BYTES]]

With HOLD_EVERY=N in the environment (and HOLD_PORT, HOLD_MS, HOLD_LOG),
the Nth, 2Nth, ... packet carrying TCP data from HOLD_PORT is held back
longer than the rest by the next of HOLD_MS's comma-separated
milliseconds, in turn, so the packets behind it overtake it: a path that
reorders (per-packet load balancing over links of unequal delay). Every
data packet from HOLD_PORT goes to HOLD_LOG, a line each, in the order
the sender sent it: its IPv4 identification, raw TCP sequence number,
hold in ms (0: not held) and kind, `original` when it carries bytes
beyond all its connection sent before it, else `resend` (the relay is
next to the sender, and sees what it sent in the order it sent it).

The devices must exist (ip tuntap add ... mode tun); the relay attaches to
them, runs for SECONDS at most (bounded), and exits.
"""
import fcntl
import heapq
import os
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000


def attach(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def server_data(packet, port):
    """Whether this IPv4 packet is a TCP segment with data from PORT."""
    if len(packet) < 20 or packet[0] >> 4 != 4 or packet[9] != 6:
        return False
    ihl = (packet[0] & 0xF) * 4
    total = struct.unpack("!H", packet[2:4])[0]
    if len(packet) < ihl + 20:
        return False
    sport = struct.unpack("!H", packet[ihl : ihl + 2])[0]
    doff = (packet[ihl + 12] >> 4) * 4
    return sport == port and total - ihl - doff > 0


def data_segment(packet):
    """(identification, raw sequence number, end, flow) of an IPv4 TCP
    packet with data."""
    ihl = (packet[0] & 0xF) * 4
    ident = struct.unpack("!H", packet[4:6])[0]
    seq = struct.unpack("!I", packet[ihl + 4 : ihl + 8])[0]
    total = struct.unpack("!H", packet[2:4])[0]
    doff = (packet[ihl + 12] >> 4) * 4
    flow = bytes(packet[12:20]) + bytes(packet[ihl : ihl + 4])
    return ident, seq, (seq + total - ihl - doff) % (1 << 32), flow


def seq_after(a, b):
    """Sequence number a is beyond b (modulo 2^32)."""
    return 0 < (a - b) % (1 << 32) < (1 << 31)


def main():
    a, b = attach(sys.argv[1]), attach(sys.argv[2])
    delay = float(sys.argv[3]) / 1000.0
    deadline = time.monotonic() + float(sys.argv[4])
    drop_every = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    port = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    rate = float(sys.argv[7]) * 1000.0 if len(sys.argv) > 7 else 0.0
    limit = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    link_free = 0.0  # when the bottleneck has sent what it holds
    backlog = []  # (departure time, size) of what it holds
    other = {a: b, b: a}
    queue = []  # (release time, order, fd to write, packet)
    order = 0
    data_seen = 0
    hold_every = int(os.environ.get("HOLD_EVERY", "0"))
    hold_port = int(os.environ.get("HOLD_PORT", "0"))
    holds = [float(ms) / 1000.0 for ms in os.environ.get("HOLD_MS", "0").split(",")]
    hold_log = open(os.environ["HOLD_LOG"], "w") if hold_every else None
    hold_seen = 0
    held = 0
    sent_end = {}  # per flow, the end of the highest byte sent so far
    while time.monotonic() < deadline:
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, fd, packet = heapq.heappop(queue)
            try:
                os.write(fd, packet)
            except OSError:
                pass
        timeout = max(0.0, queue[0][0] - now) if queue else 0.2
        ready, _, _ = select.select([a, b], [], [], min(timeout, 0.2))
        for fd in ready:
            packet = os.read(fd, 65536)
            if drop_every and server_data(packet, port):
                data_seen += 1
                if data_seen % drop_every == 0:
                    continue
            order += 1
            now = time.monotonic()
            depart = now
            if rate and fd == b:
                while backlog and backlog[0][0] <= now:
                    backlog.pop(0)
                if sum(n for _, n in backlog) + len(packet) > limit:
                    continue
                depart = max(now, link_free) + len(packet) * 8 / rate
                link_free = depart
                backlog.append((depart, len(packet)))
            extra = 0.0
            if hold_every and server_data(packet, hold_port):
                ident, seq, end, flow = data_segment(packet)
                before = sent_end.get(flow)
                fresh = before is None or seq_after(end, before)
                if fresh:
                    sent_end[flow] = end
                hold_seen += 1
                if hold_seen % hold_every == 0:
                    extra = holds[held % len(holds)]
                    held += 1
                kind = "original" if fresh else "resend"
                hold_log.write(f"{ident} {seq} {extra * 1000:.0f} {kind}\n")
            heapq.heappush(queue, (depart + delay + extra, order, other[fd], packet))
        if hold_log:
            hold_log.flush()


if __name__ == "__main__":
    main()
