"""What the capture scripts' reports share (queue-, push-queue- and
replication-captures.sh): each TCP connection's bytes, each side's in
order, as tshark reads the capture segment by segment.

    conns = tcp_streams.read(pcap, port)

gives, per tcp.stream, the client's and the server's bytes ("c", "s":
a list of (byte, frame, ms) each, the frame and time of the segment that
carried it), the client's SYN (frame, ms) and every FIN and RST (side,
frame, ms). The server is the side whose source port is `port`. A
re-sent segment's bytes are taken once; the bytes of a segment the
capture missed are not there (the scripts check for drops).
"""
import subprocess

FIELDS = ["frame.number", "frame.time_relative", "tcp.stream", "tcp.srcport", "tcp.seq",
          "tcp.len", "tcp.flags.syn", "tcp.flags.fin", "tcp.flags.reset", "tcp.payload"]


def read(pcap, port, options=()):
    """The connections of `pcap` (tshark's preferences `options` first:
    a TLS key log)."""
    fields = [arg for f in FIELDS for arg in ("-e", f)]
    rows = subprocess.run(
        ["tshark", "-r", pcap, *options, "-o", "tcp.desegment_tcp_streams:FALSE",
         "-T", "fields", *fields],
        check=True, capture_output=True, text=True).stdout.splitlines()
    conns = {}
    for row in rows:
        frame, t, stream, sport, seq, _, syn, fin, rst, payload = \
            (row.split("\t") + [""] * len(FIELDS))[:len(FIELDS)]
        c = conns.setdefault(int(stream), {"c": [], "s": [], "next": {}, "syn": None,
                                           "fins": [], "rsts": []})
        side = "s" if int(sport) == port else "c"
        t, frame = float(t) * 1000, int(frame)
        if syn in ("1", "True") and side == "c":
            c["syn"] = (frame, t)
        if fin in ("1", "True"):
            c["fins"].append((side, frame, t))
        if rst in ("1", "True"):
            c["rsts"].append((side, frame, t))
        if not payload:
            continue
        seq, data = int(seq), bytes.fromhex(payload.replace(":", ""))
        start = c["next"].get(side, seq)
        if seq + len(data) <= start:
            continue  # a retransmission of what was had
        data = data[max(0, start - seq):]
        c["next"][side] = max(start, seq) + len(data)
        for b in data:
            c[side].append((b, frame, t))
    return conns
