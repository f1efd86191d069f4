#!/usr/bin/env python3
"""Regenerates the malformed-capture corpus (committed; run by tests/malformed.rs).

Each file is a valid capture damaged in one way. The expectations live in
crates/rttdoc/tests/malformed.rs next to the file names.
Files named fuzz-* are what a fuzz target found, kept as they are (not
made here).
"""
import gzip, os, struct, subprocess

HERE = os.path.dirname(os.path.abspath(__file__))

def tcp_ip(src, dst, sport, dport, seq, ack, flags, payload=b""):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    total = 20 + len(tcp)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, total, 1, 0x4000, 64, 6, 0, bytes(src), bytes(dst))
    return ip + tcp

def eth(ip):
    return b"\x02\0\0\0\0\x01\x02\0\0\0\0\x02\x08\x00" + ip

C, S = [10, 0, 0, 1], [10, 0, 0, 2]
GOOD = [
    eth(tcp_ip(C, S, 40000, 80, 100, 0, 0x02)),
    eth(tcp_ip(S, C, 80, 40000, 500, 101, 0x12)),
    eth(tcp_ip(C, S, 40000, 80, 101, 501, 0x10)),
    eth(tcp_ip(C, S, 40000, 80, 101, 501, 0x18, b"GET / HTTP/1.1\r\n\r\n")),
    eth(tcp_ip(S, C, 80, 40000, 501, 119, 0x18, b"HTTP/1.1 200 OK\r\n\r\n")),
    eth(tcp_ip(C, S, 40000, 80, 119, 520, 0x11)),
    eth(tcp_ip(S, C, 80, 40000, 520, 120, 0x11)),
    eth(tcp_ip(C, S, 40000, 80, 120, 521, 0x10)),
]

def pcap_header(snaplen=262144, linktype=1):
    return struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)

def record(i, data, caplen=None, origlen=None):
    caplen = len(data) if caplen is None else caplen
    origlen = len(data) if origlen is None else origlen
    return struct.pack("<IIII", 1700000000, i * 20000, caplen, origlen) + data

def pcap(packets):
    return pcap_header() + b"".join(record(i, p) for i, p in enumerate(packets))

def block(kind, body):
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", kind, n) + body + struct.pack("<I", n)

def pcapng(packets, if_id=0):
    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", 1, 0, 262144))
    for i, p in enumerate(packets):
        ts = 1700000000_000000 + i * 20000
        out += block(6, struct.pack("<IIIII", if_id, ts >> 32, ts & 0xFFFFFFFF, len(p), len(p)) + p)
    return out

def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)

good = pcap(GOOD)
write("empty.pcap", b"")
write("wrong-magic.pcap", b"this is not a capture file, it is text\n" * 3)
write("header-cut.pcap", pcap_header()[:10])
# cut in the middle of the 6th record
cut = len(pcap_header()) + sum(16 + len(p) for p in GOOD[:5]) + 20
write("truncated-record.pcap", good[:cut])
write("absurd-caplen.pcap", pcap(GOOD[:4]) + struct.pack("<IIII", 1700000001, 0, 0xFFFFFF00, 60) + b"\0" * 64)
write("oversized-record.pcap", pcap(GOOD[:4]) + record(9, b"\0" * 300000)[:1000])
write("zero-length-records.pcap", pcap_header() + record(0, b"") + b"".join(record(i + 1, p) for i, p in enumerate(GOOD)) + record(99, b""))
# broken IP / TCP headers between good packets: counted as damaged, skipped
bad_ihl = bytearray(GOOD[3]); bad_ihl[14] = 0x43
bad_tcp_off = bytearray(GOOD[3]); bad_tcp_off[14 + 20 + 12] = 0x20
short_ip = GOOD[3][:14 + 12]
short_total = bytearray(GOOD[3]); short_total[14 + 2:14 + 4] = struct.pack(">H", 30)
write("damaged-headers.pcap", pcap(GOOD[:3] + [bytes(bad_ihl), bytes(bad_tcp_off), short_ip, bytes(short_total)] + GOOD[3:]))
# A name lookup before the connection, its DNS messages damaged in the
# ways a decoder can go wrong, then a good query and answer (the server's
# address) and the good connection.
def udp_ip(src, dst, sport, dport, payload):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    return struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 2, 0x4000, 64, 17, 0, bytes(src), bytes(dst)) + udp

R = [10, 0, 0, 53]
def dns(qid, flags, qname, answers=b"", ancount=0):
    return struct.pack(">HHHHHH", qid, flags, 1, ancount, 0, 0) + qname + b"\0\x01\0\x01" + answers
API = b"\x03api\x07example\x03com\0"
A_RECORD = b"\xc0\x0c\0\x01\0\x01\0\0\0\x1e\0\x04" + bytes(S)
lookup = [
    # A question whose name points at itself.
    eth(udp_ip(C, R, 5000, 53, struct.pack(">HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\xc0\x0c\0\x01\0\x01")),
    # A name with an extended label type (0x40).
    eth(udp_ip(C, R, 5000, 53, struct.pack(">HHHHHH", 2, 0x0100, 1, 0, 0, 0) + b"\x41abc\0\0\x01\0\x01")),
    # A header alone, cut short.
    eth(udp_ip(C, R, 5000, 53, b"\0\x03\x01")),
    eth(udp_ip(C, R, 5001, 53, dns(4, 0x0100, API))),
    # Answers: one whose data runs past the message, one cut in its
    # fixed part, then the good one.
    eth(udp_ip(R, C, 53, 5001, dns(4, 0x8180, API, b"\xc0\x0c\0\x01\0\x01\0\0\0\x1e\xff\xff\x0a", 1))),
    eth(udp_ip(R, C, 53, 5001, dns(4, 0x8180, API, b"\xc0\x0c\0\x01\0", 1))),
    eth(udp_ip(R, C, 53, 5001, dns(4, 0x8180, API, A_RECORD, 1))),
]
write("dns-damaged.pcap", pcap(lookup + GOOD))

ng = pcapng(GOOD)
mid = len(pcapng(GOOD[:4]))
write("garbage-middle.pcapng", ng[:mid] + bytes(range(256)) * 2 + ng[mid:])
write("unknown-interface.pcapng", pcapng(GOOD[:3]) + pcapng(GOOD[3:4], if_id=5)[len(pcapng([])):])
write("block-length-zero.pcapng", pcapng(GOOD[:4]) + struct.pack("<II", 6, 0) + b"\0" * 40)
gz = gzip.compress(good, mtime=0)
write("truncated.pcap.gz", gz[: len(gz) * 2 // 3])
# zstd and lz4 as their command-line tools write them, in two frames (as
# pzstd or `cat` make): the first holds four whole records and part of the
# fifth, the second (the rest) is cut in half.
def compressed(tool, data):
    return subprocess.run([tool, "-q", "-c"], input=data, capture_output=True, check=True).stdout
four = len(pcap_header()) + sum(16 + len(p) for p in GOOD[:4]) + 10
for tool, ext in [("zstd", "zst"), ("lz4", "lz4")]:
    rest = compressed(tool, good[four:])
    write(f"truncated.pcap.{ext}", compressed(tool, good[:four]) + rest[: len(rest) // 2])

# pcapng as Wireshark's tools write it: a Section Header Block with long
# options (shb_hardware, shb_os, shb_userappl), damaged in the new places.
def option(code, value):
    return struct.pack("<HH", code, len(value)) + value + b"\0" * (-len(value) % 4)

def long_shb(extra=b""):
    opts = option(2, b"x86_64 " * 40) + option(3, b"Linux 6.1 " * 40) + option(4, b"Dumpcap (Wireshark) 4.0 " * 40)
    return block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) + opts + extra + option(0, b""))

def section(packets, shb):
    out = shb + block(1, struct.pack("<HHI", 1, 0, 262144))
    for i, p in enumerate(packets):
        ts = 1700000000_000000 + i * 20000
        out += block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(p), len(p)) + p)
    return out

shb = long_shb()
write("long-shb-truncated.pcapng", section(GOOD, shb)[: len(shb) // 2])
# an option declaring 2000 bytes inside a block that holds far fewer
bad_opt = bytearray(long_shb(option(1, b"comment")))
at = bad_opt.rindex(struct.pack("<HH", 1, 7))
bad_opt[at + 2:at + 4] = struct.pack("<H", 2000)
write("shb-bad-option-length.pcapng", bytes(bad_opt) + block(1, struct.pack("<HHI", 1, 0, 262144)))
# a Decryption Secrets Block declaring 2 GB after four packets
write("dsb-absurd-length.pcapng", section(GOOD[:4], shb) + struct.pack("<IIII", 0x0A, 0x7FFFFF00, 0x544C534B, 0x7FFFFEF0) + b"CLIENT_RANDOM " * 8)
# a second section (in the same file, as cat or a ring buffer makes) cut
# inside its third packet
second = section(GOOD[:5], long_shb())
cut = len(section(GOOD[:2], long_shb())) + 30
write("second-section-cut.pcapng", section(GOOD[:4], shb) + second[:cut])

# QUIC datagrams damaged in the ways a header reader can go wrong, then a
# real QUIC connection (tests/data/quic/plain.pcap.gz, quic-go's, its
# frames as tcpdump wrote them).
def real_frames(path):
    data = gzip.open(path).read()
    at, out = 24, []
    while at + 16 <= len(data):
        caplen = struct.unpack("<I", data[at + 8:at + 12])[0]
        out.append(data[at + 16:at + 16 + caplen])
        at += 16 + caplen
    return out

def quic_long(first, version, dcid, scid, rest):
    return bytes([first]) + struct.pack(">I", version) + bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid + rest

def padded(b, n=1200):
    return b + b"\0" * (n - len(b))

Q = [10, 81, 2, 1]
Q_CLIENT = [10, 81, 1, 1]
quic_bad = [
    # A 21-byte connection ID.
    eth(udp_ip(Q_CLIENT, Q, 6001, 443, padded(quic_long(0xc0, 1, b"\x01" * 21, b"", b"\0\x44\x00")))),
    # An Initial whose Length runs past its (whole) datagram.
    eth(udp_ip(Q_CLIENT, Q, 6002, 443, padded(quic_long(0xc0, 1, b"\x01" * 8, b"", b"\0\x7f\xff")))),
    # A token length of 2^62 - 1.
    eth(udp_ip(Q_CLIENT, Q, 6003, 443, padded(quic_long(0xc0, 1, b"\x01" * 8, b"", b"\xff" * 8)))),
    # A Version Negotiation whose list is not 4-byte versions.
    eth(udp_ip(Q, Q_CLIENT, 443, 6004, quic_long(0x80, 0, b"\x02" * 8, b"\x03" * 8, b"\0\0\x01"))),
    # A short header of one byte, to a port no connection has.
    eth(udp_ip(Q, Q_CLIENT, 443, 6005, b"\x40")),
    # A well-formed Initial whose protected payload is noise: a
    # connection, its ClientHello unreadable.
    eth(udp_ip(Q_CLIENT, Q, 6006, 443, quic_long(0xc0, 1, b"\x01" * 8, b"", b"\0\x44\x9e" + (bytes(range(256)) * 5)[:1182]))),
]
write("quic-damaged.pcap", pcap(quic_bad + real_frames(os.path.join(HERE, "../quic/plain.pcap.gz"))))

# HTTP/2 in the clear whose header blocks end inside a representation
# (an index's continuation byte missing, a literal without its strings):
# HPACK's decoder must refuse them, not read past them. Then Go's client
# following nginx's 301 (tests/data/redirect/slash-h2c), untouched.
def h2_frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0, b"")
GET_DOCS = b"\x82\x86\x41\x0bexample.com\x44\x05/docs"
H2C_C, H2C_S = [10, 0, 0, 3], [10, 0, 0, 4]
def h2c(src, dst, sport, dport, seq, ack, flags, payload=b""):
    return eth(tcp_ip(src, dst, sport, dport, seq, ack, flags, payload))
c_first = H2_PREFACE + h2_frame(1, 0x5, 1, GET_DOCS)
s_first = h2_frame(4, 0, 0, b"") + h2_frame(1, 0x4, 1, b"\xff")
c_next = h2_frame(1, 0x5, 3, b"\x40")
s_next = h2_frame(1, 0x5, 3, b"\x88")
c0, s0 = 1000, 5000
h2c_bad = [
    h2c(H2C_C, H2C_S, 40100, 8081, c0, 0, 0x02),
    h2c(H2C_S, H2C_C, 8081, 40100, s0, c0 + 1, 0x12),
    h2c(H2C_C, H2C_S, 40100, 8081, c0 + 1, s0 + 1, 0x10),
    h2c(H2C_C, H2C_S, 40100, 8081, c0 + 1, s0 + 1, 0x18, c_first),
    h2c(H2C_S, H2C_C, 8081, 40100, s0 + 1, c0 + 1 + len(c_first), 0x18, s_first),
    h2c(H2C_C, H2C_S, 40100, 8081, c0 + 1 + len(c_first), s0 + 1 + len(s_first), 0x18, c_next),
    h2c(H2C_S, H2C_C, 8081, 40100, s0 + 1 + len(s_first), c0 + 1 + len(c_first) + len(c_next), 0x18, s_next),
]
write("h2c-damaged.pcap", pcap(h2c_bad + real_frames(os.path.join(HERE, "../redirect/slash-h2c.pcap.gz"))))

# snoop (RFC 1761; snoop.rs), as Solaris's snoop and Check Point's fw
# monitor write it: big-endian, each record padded to four bytes, damaged
# in the ways its framing can be.
def snoop_header(version=2, network=4):
    return b"snoop\0\0\0" + struct.pack(">II", version, network)

def snoop_record(i, data, caplen=None, rec_len=None):
    caplen = len(data) if caplen is None else caplen
    pad = b"\0" * (-len(data) % 4)
    rec_len = 24 + len(data) + len(pad) if rec_len is None else rec_len
    return struct.pack(">IIIIII", len(data), caplen, rec_len, 0, 1700000000, i * 20000) + data + pad

def snoop(packets):
    return snoop_header() + b"".join(snoop_record(i, p) for i, p in enumerate(packets))

write("snoop-header-cut.snoop", snoop_header()[:12])
# a record whose length is shorter than its header and packet
write("snoop-record-shorter-than-packet.snoop", snoop(GOOD[:4]) + snoop_record(4, GOOD[4], rec_len=60) + snoop(GOOD[5:])[16:])
# a record whose padding declares 2 GB
write("snoop-absurd-padding.snoop", snoop(GOOD[:4]) + snoop_record(4, GOOD[4], rec_len=0x7FFFFF00) + b"\0" * 64)
# cut inside the sixth record's packet
whole = snoop(GOOD)
write("snoop-truncated-record.snoop", whole[: len(snoop(GOOD[:5])) + 40])
