#!/usr/bin/env bash
# Makes the captures behind tests/data/push-queues/: two protocols whose
# servers push, or hold an answer until another client acts (real
# servers, real clients, real Linux TCP), tcpdump in the clients'
# namespace, across a path of 20 ms each way (scripts/relay-path.sh):
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# Each server is Debian's package (bookworm), started by hand in the
# server's namespace (no systemd) with its configuration, data, pid file
# and logs in the work directory, and stopped after its capture:
# gearmand 1.1.20 (gearman-job-server; its builtin queue, no persistent
# one), Prosody 0.12.3 (Lua 5.4, LuaSec 1.2.0; run as its prosody user).
# The clients are Python (Debian's python3 3.11, OpenSSL 3.0): Gearman's
# binary protocol by hand (4-byte magic \0REQ/\0RES, type, size,
# NUL-separated arguments; each packet its own write, TCP_NODELAY as
# libgearman sets), and Debian's python3-slixmpp 1.8.3; one program per
# capture, each printing what it did and when. Every connection opens
# (its SYN) and closes (both FINs) inside its capture. Times below are
# from the captures (client side, from the first SYN); "fN" is frame N.
#
#   gearman.pcap  gearmand -L 10.81.2.1 -p 4730, 75 frames. Two
#     connections: a worker (SYN f1) and, 40.9 ms later, a client (f4).
#     The worker sends CAN_DO lab (f7, 87.5 ms; no answer) and GRAB_JOB
#     (f8, 0.1 ms later), answered NO_JOB after 40.6 ms (f11), then
#     PRE_SLEEP (f13, 128.3 ms): asleep. 1000.3 ms after that PRE_SLEEP
#     left, the client sends ECHO_REQ ('are you there', 25 bytes; f15
#     1128.6 ms), answered at once: gearmand's bare ACK (f16) and
#     ECHO_RES (25 bytes, f17) 42.9 ms later. The client then submits
#     its jobs (SUBMIT_JOB lab, unique job-N, 20 bytes of data: 42
#     bytes) at irregular spacing: 1900.3 ms after the worker's first
#     PRE_SLEEP left, then 699.9 ms and 1300.1 ms apart (f19 2028.6 ms,
#     f36 2728.5, f53 4028.6); gearmand answers each with JOB_CREATED
#     (H:vm:N, 18 bytes; "vm" is the capturing host's name) after
#     40.7-43.0 ms (f20, f38, f54) and in the same moment (within 0.2
#     ms of it) wakes the worker with NOOP (f22 2071.5, f37 2769.2, f56
#     4071.8): 1943.2, 561.4 and 1170.7 ms after the worker's PRE_SLEEP
#     (f13, f34, f51), waits the server had nothing for it, none within
#     5% of another. The worker grabs 0.1-0.2 ms after each NOOP (f23,
#     f40, f57), gets JOB_ASSIGN (43 bytes) after 40.5-43.8 ms (f25,
#     f42, f59), works 50 ms, sends WORK_COMPLETE (39 bytes: f27, f44,
#     f61) and at once GRAB_JOB (f28, f45, f62), answered NO_JOB after
#     40.6-41.6 ms (f30, f47, f66), and sleeps again 0.2-4.1 ms later
#     (PRE_SLEEP f34, f51, f68). gearmand passes each WORK_COMPLETE on to
#     the client 40.7-41.8 ms after the worker's left (f32 2207.7 ms,
#     f49 2900.9, f64 4203.4): 172.3-179.1 ms after the SUBMIT_JOB,
#     131.6-136.3 ms after its JOB_CREATED, the client asking nothing in
#     between. The worker's last PRE_SLEEP (f68) is never answered. 0.5 s
#     after its third WORK_COMPLETE the client closes (FIN f70 4707.7 ms,
#     the server's f71 40.6 ms later), 0.5 s after that the worker (f73,
#     f74).
#   xmpp.pcap  Prosody with c2s on 10.81.2.1:5222 alone (no s2s; no TLS
#     module: no STARTTLS offered; c2s_require_encryption false,
#     allow_unencrypted_plain_auth, authentication internal_plain,
#     internal storage), the VirtualHost rttdoc.test, its users alice and
#     bob registered with prosodyctl before the capture; 76 frames. Two
#     slixmpp clients, each its own connection, connecting to the
#     address (no DNS), STARTTLS disabled and not forced, SASL PLAIN in
#     the clear: alice (SYN f1), then bob (f17, 282.2 ms) once alice's
#     presence has left. Each: stream header (130 bytes) answered by the
#     server's XML declaration, stream header and features (mechanisms
#     SCRAM-SHA-1, PLAIN, SCRAM-SHA-256, in one segment); auth PLAIN
#     answered success; the stream restart answered by header and
#     features (bind, session, ...); the bind iq set and the roster iq
#     get, each answered by its iq result; presence, answered by the
#     server's copy of it to the sender (RFC 6121's initial presence);
#     each of these 6 round trips 40.7-44.8 ms, the client's next
#     message 0.4-3.8 ms after each answer (alice f4-f18, 41.3-296.4 ms;
#     bob f21-f35, 323.4-581.6 ms). bob then sends alice 3 chat messages
#     (149 bytes) 1003.1 ms after his presence left, then 1199.2 and
#     1200.0 ms apart (f37 1543.5 ms, f45 2742.7, f52 3942.7); Prosody
#     delivers each to alice (176 bytes, f38 1587.5, f47 2783.4, f54
#     3984.3) 40.7-44.0 ms after bob's left, and alice replies to each
#     (a chat message to bob's full JID, 149 bytes) 0.6-0.7 ms after it
#     arrived (f40 1588.2, f48 2784.0, f55 3985.0); Prosody delivers the
#     replies to bob (178 bytes, f42 1628.8, f50 2827.6, f57 4025.8)
#     40.6-43.6 ms after alice's left: 83.1-85.2 ms after bob's message
#     left, two legs of 1 RTT each (bob's, alice's), the server holding
#     nothing. 662.9 ms after her third reply alice pings the server
#     (XEP-0199: iq get to rttdoc.test, f59 4647.9 ms), answered by an
#     empty iq result after 40.8 ms (f61). 0.6 s later bob closes his
#     stream (</stream:stream> f63 5290.2 ms, the server's f65 40.9 ms
#     later, then its FIN f67 and bob's f68), then alice (f69 5331.8 ms,
#     the server's f71 44.3 ms later, her FIN f73, the server's f74).
#   xmpp-starttls.pcap  The same conversation with Prosody requiring
#     STARTTLS on c2s (mod_tls; c2s_require_encryption true, Prosody's
#     default; ssl = { certificate, key }: a self-signed EC P-256
#     certificate for rttdoc.test made here with openssl), slixmpp
#     forcing STARTTLS and taking that certificate as it is (its
#     ssl_context: check_hostname False, verify_mode CERT_NONE; the
#     secrets written to a key log in the work directory, which the
#     report decrypts with and which is deleted with it); SASL PLAIN
#     inside TLS. TLS 1.3, TLS_AES_256_GCM_SHA384, x25519, on both
#     connections; 99 frames. alice (SYN f1): stream header (f4) answered
#     by header and features offering only starttls, required (f6, 41.2
#     ms); <starttls/> (52 bytes, f8) answered <proceed/> (50 bytes, f9)
#     after 40.7 ms; the ClientHello (517 bytes, f10) 22.9 ms after the
#     proceed arrived (slixmpp's own work: it loads the system's
#     trusted certificates into its TLS context then,
#     set_default_verify_paths); the server's
#     ServerHello to Finished (785 bytes, f11) 42.2 ms later; the
#     client's ChangeCipherSpec and Finished (f12) 1.7 ms after, and its
#     new stream header (the first application data, f13 190.8 ms) 0.3
#     ms after that. The server's first NewSessionTicket (79 bytes, f14)
#     comes 40.9 ms after f13; the client delays its ACK of it (f15,
#     43.9 ms later: Linux's delayed ACK), and the server's next segment,
#     its second NewSessionTicket with its stream header and features
#     (mechanisms; 495 bytes, f16 316.2 ms), leaves only when that ACK
#     reaches it (40.6 ms after f15): Nagle's algorithm on Prosody's
#     socket (server_epoll leaves it on: network_settings nagle = true
#     by default), with the first ticket unacknowledged. The stream's answer
#     came 125.4 ms after the stream header, 3 RTTs where 1 was due.
#     Then auth PLAIN (f18) -> success (f19), the restart (f20) ->
#     header and features (f21), bind (f22 -> f23), roster (f24 -> f25),
#     presence (f26 -> f28), each 40.8-42.9 ms. bob (SYN f27, 519.5 ms)
#     the same: stream header f31, proceed f37, ClientHello f38 25.8 ms
#     after it, server's flight f39, Finished f40, stream header f41,
#     first ticket f42, delayed ACK f43 (42.1 ms), f44 40.5 ms after it
#     (123.0 ms after f41), presence f54 -> f55 (1053.2 ms). bob's
#     messages (TLS records of 171 bytes) f57 2015.2 ms, f65 3214.3, f72
#     4414.9 (1199.1 and 1200.6 ms apart), delivered to alice (f58, f67,
#     f74) after 40.7-44.6 ms, alice's replies 0.6-0.7 ms after each
#     (f60, f68, f75), delivered to bob (f62, f70, f77) 40.6-44.1 ms
#     after they left: 82.5-85.9 ms after bob's message. alice's ping
#     f79 (5116.2 ms) answered f81 40.8 ms later. 0.6 s later bob closes
#     his stream (f83 5758.5 ms), the server answers with its own (f85,
#     41.1 ms later), its close_notify alert and FIN (f87); bob's
#     close_notify (f88) and FIN (f89) reach a socket Prosody has closed:
#     it answers each with a RST (f91, f92). Then alice the same (f90
#     5800.5 ms; f93, f95; f96, f97; RSTs f98, f99).
#
# After each capture, push_report.py (written below) cuts each
# connection's payloads into the protocol's messages with tshark, prints
# them with frame numbers and the time since the other side's last
# message, prints tshark's own dissection (gearman on 4730, xmpp on 5222;
# for Gearman checked to give the same packet types in the same order)
# and checks what the capture must hold (for Gearman also that the
# worker's 3 waits for a NOOP differ by more than 5%; for XMPP that
# alice's replies leave within 20 ms of bob's messages reaching her).
# After STARTTLS, it reads the TLS records with tshark and the clients'
# key log: their handshake messages, and the XMPP they carry decrypted.
#
# Needs root, ip, tcpdump, tshark, setpriv, openssl and Debian's
# gearman-job-server, prosody (with lua-sec) and python3-slixmpp.
set -euo pipefail
command -v tshark > /dev/null || { echo "needs tshark" >&2; exit 1; }
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# The Python that has Debian's slixmpp (python3-slixmpp): the first
# python3 on PATH may be another one. The gearman clients need only its
# standard library.
py=
for p in python3 /usr/bin/python3; do
  if "$p" -c 'import slixmpp' 2> /dev/null; then py=$(command -v "$p"); break; fi
done
[[ -n $py ]] || { echo "needs python3-slixmpp" >&2; exit 1; }
for t in gearmand prosody prosodyctl setpriv openssl; do
  command -v "$t" > /dev/null || { echo "needs $t" >&2; exit 1; }
done
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtpushq$$ /tmp/rttdoc-push-queues
# Prosody runs as its own user (prosody): it must reach its
# configuration, data and logs in the work directory.
chmod 755 "$work"
# Every server runs in the server's namespace outside $pids (gearmand,
# prosody): relay_stop_servers sends them SIGTERM; what is still there
# 10 s later gets SIGKILL, so nothing outlives the namespace.
stop_servers() {
  relay_stop_servers
  for _ in $(seq 100); do
    [[ -z $(ip netns pids "$S" 2>/dev/null) ]] && return 0
    sleep 0.1
  done
  ip netns pids "$S" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
}
extra_cleanup() {
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
  stop_servers
  return 0
}
cd "$work"

# --- what a capture holds: its messages, from tshark's TCP payloads ----
cat > "$work/push_report.py" <<'PY'
"""Reads the TCP payloads of a capture with tshark, cuts each direction
of each connection into the protocol's messages, prints them (the frame
that carries a message's first byte, its time from the capture's start)
with, for each message, the time since the other side's last one on
that connection; prints tshark's own dissection of the frames; checks
what the capture must hold:

    push_report.py gearman|xmpp PCAP
    push_report.py xmpp-starttls PCAP KEYLOG

Gearman: binary packets (4-byte magic \\0REQ or \\0RES, 4-byte type,
4-byte size, NUL-separated arguments), checked against tshark's gearman
dissector (the packet types, in order, each way of each connection).
XMPP: the top-level elements of each XML stream (stream headers with
their XML declaration, stanzas, SASL and stream features; an iq result
is paired with its get or set by id). After STARTTLS the TCP payloads
are TLS records: tshark reads them with the clients' key log (KEYLOG,
NSS format, written by Python's ssl), each frame's handshake messages
are shown as one line, and the application data it decrypts is cut
into XMPP elements the same way (shown "[TLS]", at the frame whose
record carries their first byte).
"""
import base64
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

import tcp_streams  # scripts/tcp_streams.py (PYTHONPATH)

proto, pcap = sys.argv[1], sys.argv[2]
keylog = sys.argv[3] if len(sys.argv) > 3 else None
tls_opts = ["-o", f"tls.keylog_file:{keylog}"] if keylog else []
port = {"gearman": 4730, "xmpp": 5222, "xmpp-starttls": 5222}[proto]
dissector = "gearman" if proto == "gearman" else "xmpp"


def tshark(*args):
    return subprocess.run(["tshark", "-r", pcap, *tls_opts, *args],
                          check=True, capture_output=True, text=True).stdout.splitlines()


conns = tcp_streams.read(pcap, port, tls_opts)


def cut(buf, parse):
    """parse(bytes) -> (length, (name, text)) or None when incomplete;
    yields (frame, t, name, text) of each message's first byte."""
    i, raw = 0, bytes(b for b, _, _ in buf)
    while i < len(raw):
        got = parse(raw, i)
        if got is None:
            yield buf[i][1], buf[i][2], "incomplete", f"(incomplete: {len(raw) - i} bytes)"
            return
        n, (name, text) = got
        if name is not None:
            yield buf[i][1], buf[i][2], name, text
        i += n


# --- Gearman -------------------------------------------------------------
GEARMAN = {1: "CAN_DO", 2: "CANT_DO", 3: "RESET_ABILITIES", 4: "PRE_SLEEP", 6: "NOOP",
           7: "SUBMIT_JOB", 8: "JOB_CREATED", 9: "GRAB_JOB", 10: "NO_JOB", 11: "JOB_ASSIGN",
           12: "WORK_STATUS", 13: "WORK_COMPLETE", 14: "WORK_FAIL", 15: "GET_STATUS",
           16: "ECHO_REQ", 17: "ECHO_RES", 18: "SUBMIT_JOB_BG", 19: "ERROR", 20: "STATUS_RES",
           21: "SUBMIT_JOB_HIGH", 22: "SET_CLIENT_ID", 23: "CAN_DO_TIMEOUT", 24: "ALL_YOURS",
           25: "WORK_EXCEPTION", 26: "OPTION_REQ", 27: "OPTION_RES", 28: "WORK_DATA",
           29: "WORK_WARNING", 30: "GRAB_JOB_UNIQ", 31: "JOB_ASSIGN_UNIQ", 39: "GRAB_JOB_ALL",
           40: "JOB_ASSIGN_ALL"}


def gearman(raw, i):
    b = raw[i:i + 12]
    if len(b) < 12:
        return None
    ptype, size = struct.unpack(">II", b[4:12])
    if len(raw) < i + 12 + size:
        return None
    args = raw[i + 12:i + 12 + size].split(b"\0") if size else []
    name = GEARMAN.get(ptype, str(ptype))
    shown = " ".join(repr(a.decode(errors="replace")) for a in args)
    return 12 + size, (name, f"{b[1:4].decode()} {name} {shown} ({12 + size} bytes)".replace("  ", " "))


# --- XMPP ----------------------------------------------------------------
TAG = re.compile(rb"""<(?:[^>"']|"[^"]*"|'[^']*')*>""")
WRAP = b"<w xmlns:stream='http://etherx.jabber.org/streams'>"


def local(tag):
    return tag.rsplit("}", 1)[-1]


def summary(element):
    try:
        e = ET.fromstring(WRAP + element + b"</w>")[0]
    except ET.ParseError:
        return "?", f"unparsed {element[:60]!r}"
    name = local(e.tag)
    parts = [name] + [f"{a}={e.attrib[a]}" for a in ("type", "id", "to", "from", "mechanism") if a in e.attrib]
    if name == "auth" and e.attrib.get("mechanism") == "PLAIN" and e.text:
        parts.append("user " + base64.b64decode(e.text).split(b"\0")[1].decode())
    kids = [local(k.tag) for k in e]
    if kids:
        parts.append("[" + " ".join(kids) + "]")
    for k in e.iter():
        if local(k.tag) == "body" and k.text:
            parts.append(repr(k.text[:24]))
    if name == "features":
        def shown(k):
            texts = "/".join(m.text for m in k if m.text)
            if texts:
                return ":" + texts
            return "[" + " ".join(local(m.tag) for m in k) + "]" if len(k) else ""
        parts[1:] = ["[" + " ".join(local(k.tag) + shown(k) for k in e) + "]"]
    key = name
    if name == "iq":
        key = f"iq-{e.attrib.get('type')}-{e.attrib.get('id')}"
    return key, " ".join(parts) + f" ({len(element)} bytes)"


def xmpp(raw, i):
    j = i
    while j < len(raw) and raw[j:j + 1] in b" \t\r\n":
        j += 1
    if j > i:
        return j - i, (None, "")  # whitespace between elements
    if raw[i] in (20, 21, 22, 23) and raw[i + 1:i + 2] == b"\3":
        # A TLS record (after STARTTLS): tshark reads these (below).
        if len(raw) < i + 5:
            return None
        n = 5 + struct.unpack(">H", raw[i + 3:i + 5])[0]
        return (n, (None, "")) if len(raw) >= i + n else None
    k = i
    if raw.startswith(b"<?xml", i):
        end = raw.find(b"?>", i)
        if end < 0:
            return None
        k = end + 2
        while k < len(raw) and raw[k:k + 1] in b" \t\r\n":
            k += 1
    m = TAG.match(raw, k)
    if m is None:
        return None
    tag = m.group()
    if tag.startswith(b"<stream:stream"):
        attrs = dict((a.decode(), v.decode()) for a, v in re.findall(rb"""\s([\w:]+)=['"]([^'"]*)['"]""", tag))
        shown = " ".join(f"{a}={attrs[a]}" for a in ("to", "from", "id") if a in attrs)
        decl = "xml declaration + " if k > i else ""
        return m.end() - i, ("stream-header", f"{decl}stream header {shown} ({m.end() - i} bytes)")
    if tag == b"</stream:stream>":
        return m.end() - i, ("stream-end", "</stream:stream>")
    depth, pos = 0, k
    while True:
        m = TAG.search(raw, pos)
        if m is None:
            return None
        t = m.group()
        if t.startswith(b"</"):
            depth -= 1
        elif not t.endswith(b"/>"):
            depth += 1
        pos = m.end()
        if depth == 0:
            return pos - i, summary(raw[k:pos])


# --- TLS (after STARTTLS), read by tshark with the key log ---------------
HANDSHAKE = {1: "ClientHello", 2: "ServerHello", 4: "NewSessionTicket", 8: "EncryptedExtensions",
             11: "Certificate", 12: "ServerKeyExchange", 13: "CertificateRequest", 14: "ServerHelloDone",
             15: "CertificateVerify", 16: "ClientKeyExchange", 20: "Finished"}
VERSIONS = {0x0304: "TLS 1.3", 0x0303: "TLS 1.2"}
ALERTS = {"0": "close_notify"}
SUITES = {0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384",
          0x1303: "TLS_CHACHA20_POLY1305_SHA256", 0xC02B: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
          0xC02C: "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          0xCCA9: "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"}
tls_events = {}  # stream -> [(frame, side, t, name, text)]
clear = {}  # (stream, side) -> decrypted application data [(byte, frame, t)]
tls_version = {}  # stream -> (version, suite)
if keylog:
    # The bytes tshark decrypts, frame by frame ("Decrypted TLS" in its
    # hex dump; one such block for each record it decrypted, in order).
    blocks, frame, section = {}, None, None
    for line in tshark("-Y", "tls", "-P", "-x", "-o", 'gui.column.format:"No.","%m"'):
        if m := re.fullmatch(r"\s*(\d+)\s*", line):
            frame, section = int(m.group(1)), None
        elif m := re.fullmatch(r"(\S.*) \((\d+) bytes\):", line):
            section = m.group(1)
            if section == "Decrypted TLS":
                blocks.setdefault(frame, []).append(bytearray())
        elif (m := re.match(r"[0-9a-f]{4}  ((?:[0-9a-f]{2} ){1,16})", line)) and section == "Decrypted TLS":
            blocks[frame][-1] += bytes.fromhex(m.group(1).replace(" ", ""))
    for row in tshark("-Y", "tls", "-T", "fields", "-e", "frame.number", "-e", "frame.time_relative",
                      "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tls.record.content_type",
                      "-e", "tls.handshake.type", "-e", "tls.handshake.extensions.supported_version",
                      "-e", "tls.handshake.version", "-e", "tls.handshake.ciphersuite", "-e", "tls.record.length",
                      "-e", "tls.alert_message.desc"):
        frame, t, stream, sport, types, hs, sv, hv, suite, lengths, alert = (row.split("\t") + [""] * 11)[:11]
        frame, t, stream = int(frame), float(t) * 1000, int(stream)
        side = "s" if int(sport) == port else "c"
        types = types.split(",")
        got = blocks.get(frame, [])
        # The records tshark decrypted are a frame's last ones (what comes
        # before them is in the clear: ClientHello, ServerHello,
        # ChangeCipherSpec); their types are the inner ones.
        inner = types[len(types) - len(got):] if got else []
        names = [HANDSHAKE.get(int(x), x) for x in hs.split(",") if x]
        if "20" in types:
            # In the order sent: after a ServerHello, else before Finished.
            at = names.index("ServerHello") + 1 if "ServerHello" in names else \
                names.index("Finished") if "Finished" in names else len(names)
            names.insert(at, "ChangeCipherSpec")
        if "21" in types:
            names.append("Alert " + ALERTS.get(alert, alert))
        if names:
            records = [int(x) + 5 for x, ty in zip(lengths.split(","), types) if ty != "23"]
            tls_events.setdefault(stream, []).append(
                (frame, side, t, "tls", f"TLS {', '.join(names)} ({len(records)} records, {sum(records)} bytes)"))
        for block, ty in zip(got, inner):
            if ty == "23":
                clear.setdefault((stream, side), []).extend((b, frame, t) for b in block)
        if side == "s" and "2" in hs.split(","):
            v = int((sv or hv).split(",")[0], 16)
            s = int(suite.split(",")[0], 16)
            tls_version[stream] = (VERSIONS.get(v, hex(v)), SUITES.get(s, hex(s)))

PARSE = {"gearman": gearman, "xmpp": xmpp, "xmpp-starttls": xmpp}[proto]
sent = {}  # (stream, side) -> [name, ...]
sent_clear = {}  # the same, in the clear only
timeline = {}  # stream -> [(frame, side, t, name, text)]
features = {}  # stream -> the text of the server's first features
names = {}
print("messages, from the payloads (frame of each message's first byte; ms from the capture's start):")
for stream, c in sorted(conns.items()):
    events = []
    for side in "cs":
        for frame, t, name, text in cut(c[side], PARSE):
            events.append((frame, side, t, name, text))
            sent.setdefault((stream, side), []).append(name)
            sent_clear.setdefault((stream, side), []).append(name)
            if name == "features":
                features.setdefault(stream, text)
        for frame, t, name, text in cut(clear.get((stream, side), []), PARSE):
            events.append((frame, side, t, name, "[TLS] " + text))
            sent.setdefault((stream, side), []).append(name)
    events += tls_events.get(stream, [])
    # In a frame, TLS's handshake records come before the application
    # data, an alert after it.
    events.sort(key=lambda e: (e[0], e[1], 0 if e[3] == "tls" and "Alert" not in e[4] else 1))
    timeline[stream] = events
    if proto == "gearman":
        who = "worker" if "CAN_DO" in sent.get((stream, "c"), []) else "client"
    else:
        who = next((x.split("user ")[1].split()[0] for _, s, _, n, x in events if n == "auth"), "?")
    names[stream] = who
    syn = "SYN at frame %d (%.1f ms)" % c["syn"] if c["syn"] else "no SYN in the capture"
    tls = "; %s, %s" % tls_version[stream] if stream in tls_version else ""
    print(f"connection {stream} ({who}): {syn}{tls}")
    last = {}
    iqs = {}
    for frame, side, t, name, text in events:
        other = last.get("s" if side == "c" else "c")
        note = f"   [{t - other[1]:.1f} ms after f{other[0]} {other[2]}]" if other else ""
        if name.startswith("iq-get-") or name.startswith("iq-set-"):
            iqs[(side, name.split("-", 2)[2])] = (frame, t)
        if name.startswith("iq-result-") or name.startswith("iq-error-"):
            asked = iqs.get(("c" if side == "s" else "s", name.split("-", 2)[2]))
            if asked:
                note += f"   [answers the iq of f{asked[0]}, {t - asked[1]:.1f} ms after it]"
        print(f"  f{frame:<4d} {t:9.1f} ms  {'->' if side == 'c' else '<-'} {text}{note}")
        last[side] = (frame, t, name)
    for side, frame, t in c["fins"]:
        print(f"  f{frame:<4d} {t:9.1f} ms  FIN from the {'client' if side == 'c' else 'server'}")
    for side, frame, t in c["rsts"]:
        print(f"  f{frame:<4d} {t:9.1f} ms  RST from the {'client' if side == 'c' else 'server'}")

# tshark's own reading of the frames (its dissector: gearman on 4730 by
# its port table, given again here; xmpp on 5222, and with the key log
# what TLS carries after STARTTLS).
tshark_rows = tshark("-d", "tcp.port==4730,gearman", "-Y", dissector, "-T", "fields",
                     "-e", "frame.number", "-e", "frame.time_relative", "-e", "tcp.stream", "-e", "tcp.srcport",
                     "-e", "gearman.pkt_type" if proto == "gearman" else "tcp.len", "-e", "_ws.col.Info")
print(f"tshark's {dissector} dissector (frame, ms, connection, direction, Info):")
tshark_types = {}
for row in tshark_rows:
    frame, t, stream, sport, types, info = (row.split("\t") + [""] * 6)[:6]
    side = "s" if int(sport) == port else "c"
    print(f"  f{int(frame):<4d} {float(t) * 1000:9.1f} ms  conn {stream} {'->' if side == 'c' else '<-'} {info}")
    if proto == "gearman":
        tshark_types.setdefault((int(stream), side), []).extend(
            GEARMAN.get(int(x), x) for x in types.split(",") if x)


def count(side, name, who=None):
    return sum(1 for (s, sd), got in sent.items() for n in got
               if sd == side and n == name and (who is None or names[s] == who))


def of(who):
    return next(s for s, w in names.items() if w == who)


def times(stream, side, name):
    return [t for _, sd, t, n, _ in timeline[stream] if sd == side and n == name]


checks = []
if proto == "gearman":
    worker = of("worker")
    waits = []  # each PRE_SLEEP of the worker to the NOOP that wakes it
    for _, side, t, name, _ in timeline[worker]:
        if name == "PRE_SLEEP":
            slept = t
        elif name == "NOOP":
            waits.append(t - slept)
    print("the worker's waits, PRE_SLEEP to NOOP: " + ", ".join(f"{w:.1f} ms" for w in waits))
    checks = [("two connections, a worker and a client", sorted(names.values()) == ["client", "worker"]),
              ("the worker: CAN_DO, 7 GRAB_JOB, 4 PRE_SLEEP, 3 WORK_COMPLETE",
               (count("c", "CAN_DO"), count("c", "GRAB_JOB"), count("c", "PRE_SLEEP"),
                count("c", "WORK_COMPLETE", "worker")) == (1, 7, 4, 3)),
              ("to the worker: 4 NO_JOB, 3 NOOP, 3 JOB_ASSIGN",
               (count("s", "NO_JOB"), count("s", "NOOP"), count("s", "JOB_ASSIGN")) == (4, 3, 3)),
              ("the client: ECHO_REQ answered by ECHO_RES, then 3 SUBMIT_JOB each answered by "
               "JOB_CREATED and WORK_COMPLETE",
               sent[(of("client"), "c")] == ["ECHO_REQ"] + ["SUBMIT_JOB"] * 3
               and sent[(of("client"), "s")] == ["ECHO_RES"] + ["JOB_CREATED", "WORK_COMPLETE"] * 3),
              ("the worker's 3 waits for a NOOP, none within 5% of another",
               len(waits) == 3 and all(abs(a - b) > 0.05 * max(a, b)
                                       for i, a in enumerate(waits) for b in waits[i + 1:])),
              ("tshark's packet types, each way of each connection, are these",
               tshark_types == {k: v for k, v in sent.items() if v})]
else:
    alice, bob = of("alice"), of("bob")
    # alice's replies: each sent as soon as bob's message reached her.
    got = times(alice, "s", "message")
    replies = times(alice, "c", "message")
    lags = [r - g for g, r in zip(got, replies)]
    print("alice's replies, after bob's message reached her: " + ", ".join(f"{x:.1f} ms" for x in lags))
    checks = [("two connections, alice's and bob's", sorted(names.values()) == ["alice", "bob"]),
              ("each authenticates with PLAIN and succeeds",
               count("c", "auth") == 2 and count("s", "success") == 2),
              ("bob sends 3 messages, alice gets 3",
               count("c", "message", "bob") == 3 and count("s", "message", "alice") == 3),
              ("alice replies to each (3 messages), bob gets 3",
               count("c", "message", "alice") == 3 and count("s", "message", "bob") == 3),
              ("each reply leaves alice within 20 ms of bob's message reaching her",
               len(lags) == 3 and all(0 <= x < 20 for x in lags)),
              ("alice's ping (an iq get) answered by an iq result",
               any(n.startswith("iq-get-") for n in sent[(alice, "c")])
               and any(n.startswith("iq-result-") for n in sent[(alice, "s")])),
              ("each stream closed both ways", count("c", "stream-end") == 2 and count("s", "stream-end") == 2)]
    if proto == "xmpp":
        checks.append(("all in the clear: no STARTTLS offered or asked",
                       sent == sent_clear and count("c", "starttls") == 0
                       and not any("starttls" in f for f in features.values())))
    else:
        print("negotiated: " + "; ".join(f"connection {s} ({names[s]}) {v}, {x}"
                                         for s, (v, x) in sorted(tls_version.items())))
        checks += [("in the clear, each: stream header, features offering STARTTLS as required, "
                    "starttls, proceed; nothing else",
                    all(sent_clear.get((s, "c")) == ["stream-header", "starttls"]
                        and sent_clear.get((s, "s")) == ["stream-header", "features", "proceed"]
                        and "starttls[required]" in features.get(s, "") for s in conns)),
                   ("TLS on both connections, the same version and suite",
                    len(tls_version) == 2 and len(set(tls_version.values())) == 1)]
checks.append(("every connection's SYN and both FINs inside",
               all(c["syn"] and {"c", "s"} <= {s for s, _, _ in c["fins"]} for c in conns.values())))
checks.append(("no message cut short", count("c", "incomplete") + count("s", "incomplete") == 0))
failed = [what for what, ok in checks if not ok]
for what in failed:
    print(f"check failed: {what}", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
report() { # PROTO NAME [KEYLOG]
  if ! PYTHONPATH="$here" "$py" "$work/push_report.py" "$1" "$out/$2.pcap.gz" ${3:+"$3"} > "$work/$2.report"; then
    cat "$work/$2.report" >&2
    echo "$2 does not hold what it should" >&2
    exit 1
  fi
  sed "s/^/  /" "$work/$2.report" >&2
}

# Runs `$py SCRIPT ARG...` in the client's namespace for the capture
# NAME, its output (times of what it did) kept in $work/NAME.out and
# shown after.
lab() { # NAME SCRIPT [ARG...]
  local name=$1; shift
  relay_capture_checked "$name" sh -c \
    'o=$1; shift; "$@" > "$o" 2>&1 || { cat "$o" >&2; exit 1; }' sh "$name.out" "$py" "$@"
  sed "s/^/  $name: /" "$work/$name.out" >&2
}

# --- gearman -------------------------------------------------------------
# gearmand's builtin queue (no persistent queue), its log and pid file in
# the work directory.
ip netns exec "$S" gearmand -L 10.81.2.1 -p 4730 --log-file "$work/gearmand.log" --verbose INFO \
  --pid-file "$work/gearmand.pid" > "$work/gearmand.out" 2>&1 &
relay_listening 4730
cat > "$work/gearman_lab.py" <<'PY'
"""Gearman's binary protocol by hand, two connections (TCP_NODELAY, as
libgearman sets; each packet its own write). A worker: CAN_DO lab, then
GRAB_JOB; NO_JOB -> PRE_SLEEP and wait for the server's NOOP, then
GRAB_JOB again; JOB_ASSIGN -> 50 ms of work -> WORK_COMPLETE, then
GRAB_JOB again. A client (its connection opened after the worker's)
sends ECHO_REQ (answered at once by ECHO_RES) 1.0 s after the worker's
first PRE_SLEEP left, then submits a job (SUBMIT_JOB, answered
JOB_CREATED, then the WORK_COMPLETE the server passes on) at irregular
spacing: 1.9 s after that PRE_SLEEP, 0.7 s later, 1.3 s after that.
After its 3rd job the worker grabs, gets NO_JOB and sleeps once more;
0.5 s after the client's 3rd WORK_COMPLETE the client closes, 0.5 s
after that the worker."""
import socket
import struct
import sys
import threading
import time

ADDR = ("10.81.2.1", 4730)
T0 = time.monotonic()
CAN_DO, PRE_SLEEP, NOOP, SUBMIT_JOB, JOB_CREATED, GRAB_JOB, NO_JOB, JOB_ASSIGN, WORK_COMPLETE = \
    1, 4, 6, 7, 8, 9, 10, 11, 13
ECHO_REQ, ECHO_RES = 16, 17
NAMES = {1: "CAN_DO", 4: "PRE_SLEEP", 6: "NOOP", 7: "SUBMIT_JOB", 8: "JOB_CREATED", 9: "GRAB_JOB",
         10: "NO_JOB", 11: "JOB_ASSIGN", 13: "WORK_COMPLETE", 16: "ECHO_REQ", 17: "ECHO_RES",
         19: "ERROR"}
ECHO_AT = 1.0  # s after the worker's first PRE_SLEEP
SUBMIT_AT = (1.9, 2.6, 3.9)  # the same: 1.9 s, then 0.7 s and 1.3 s apart


def say(what):
    print(f"{(time.monotonic() - T0) * 1000:7.1f} ms  {time.time():.3f}  {what}", flush=True)


class Conn:
    def __init__(self, name):
        self.name = name
        self.sock = socket.create_connection(ADDR, timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, ptype, *args):
        body = b"\0".join(args)
        self.sock.sendall(b"\0REQ" + struct.pack(">II", ptype, len(body)) + body)
        say(f"{self.name} -> {NAMES[ptype]} {args}")

    def exact(self, n):
        data = b""
        while len(data) < n:
            got = self.sock.recv(n - len(data))
            if not got:
                sys.exit(f"{self.name}: the server closed")
            data += got
        return data

    def recv(self):
        magic, ptype, size = struct.unpack(">4sII", self.exact(12))
        assert magic == b"\0RES", magic
        args = self.exact(size).split(b"\0") if size else []
        say(f"{self.name} <- {NAMES.get(ptype, ptype)} {args}")
        return ptype, args

    def close(self):
        self.sock.shutdown(socket.SHUT_WR)
        rest = self.sock.recv(1)  # the server's FIN
        self.sock.close()
        say(f"{self.name} closed" + (f" (got {rest!r})" if rest else ""))


worker = Conn("worker")
client = Conn("client")
asleep = threading.Event()
done = []


def work():
    worker.send(CAN_DO, b"lab")
    while True:
        worker.send(GRAB_JOB)
        ptype, args = worker.recv()
        if ptype == NO_JOB:
            worker.send(PRE_SLEEP)
            asleep.set()
            if len(done) == 3:
                return  # asleep for good: the main thread closes
            ptype, _ = worker.recv()
            assert ptype == NOOP, ptype
            continue
        assert ptype == JOB_ASSIGN, ptype
        handle, function, data = args
        time.sleep(0.05)
        worker.send(WORK_COMPLETE, handle, data.upper())
        done.append(handle)


t = threading.Thread(target=work)
t.start()
if not asleep.wait(10):
    sys.exit("the worker never slept")
slept = time.monotonic()
time.sleep(max(0.0, slept + ECHO_AT - time.monotonic()))
client.send(ECHO_REQ, b"are you there")
ptype, args = client.recv()
assert ptype == ECHO_RES and args == [b"are you there"], (ptype, args)
for i, at in enumerate(SUBMIT_AT):
    time.sleep(max(0.0, slept + at - time.monotonic()))
    client.send(SUBMIT_JOB, b"lab", f"job-{i + 1}".encode(), f"job {i + 1} {'x' * 14}".encode())
    ptype, args = client.recv()
    assert ptype == JOB_CREATED, ptype
    ptype, args = client.recv()
    assert ptype == WORK_COMPLETE and args[1] == f"JOB {i + 1} {'X' * 14}".encode(), (ptype, args)
t.join(10)
if len(done) != 3 or t.is_alive():
    sys.exit(f"the worker did {len(done)} jobs")
time.sleep(0.5)
client.close()
time.sleep(0.5)
worker.close()
PY
lab gearman "$work/gearman_lab.py"
report gearman gearman
stop_servers

# --- xmpp ------------------------------------------------------------------
# Prosody with its configuration, data (internal storage, passwords in
# the clear: internal_plain), pid file and logs in $work/prosody; c2s on
# 10.81.2.1:5222 alone (no s2s). Two configurations over the same data:
# prosody.cfg.lua with no TLS module (no STARTTLS offered) and PLAIN
# allowed in the clear; prosody-tls.cfg.lua with mod_tls, STARTTLS
# required on c2s (c2s_require_encryption, Prosody's default) and the
# self-signed certificate for rttdoc.test made here (EC P-256, its name
# in CN and subjectAltName).
mkdir -p "$work/prosody/data" "$work/prosody/certs"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
  -keyout "$work/prosody/certs/rttdoc.test.key" -out "$work/prosody/certs/rttdoc.test.crt" \
  -subj /CN=rttdoc.test -addext subjectAltName=DNS:rttdoc.test > /dev/null 2>&1
prosody_config() { # TLS(0|1)
  local modules='"roster"; "saslauth"; "disco"; "ping"; "posix"' ssl=
  if [[ $1 == 1 ]]; then
    modules+='; "tls"'
    ssl="ssl = { certificate = \"$work/prosody/certs/rttdoc.test.crt\"; key = \"$work/prosody/certs/rttdoc.test.key\" }"
  fi
  cat <<CFG
pidfile = "$work/prosody/prosody.pid"
data_path = "$work/prosody/data"
certificates = "$work/prosody/certs"
$ssl
log = { info = "$work/prosody/prosody.log"; error = "$work/prosody/prosody.err" }
modules_enabled = { $modules }
modules_disabled = { "s2s" }
interfaces = { "10.81.2.1" }
c2s_interfaces = { "10.81.2.1" }
c2s_ports = { 5222 }
c2s_require_encryption = $([[ $1 == 1 ]] && echo true || echo false)
allow_unencrypted_plain_auth = $([[ $1 == 1 ]] && echo false || echo true)
authentication = "internal_plain"
storage = "internal"
VirtualHost "rttdoc.test"
CFG
}
prosody_config 0 > "$work/prosody/prosody.cfg.lua"
prosody_config 1 > "$work/prosody/prosody-tls.cfg.lua"
chown -R prosody: "$work/prosody" 2>/dev/null || true
ip netns exec "$S" prosodyctl --config "$work/prosody/prosody.cfg.lua" register alice rttdoc.test alice-lab
ip netns exec "$S" prosodyctl --config "$work/prosody/prosody.cfg.lua" register bob rttdoc.test bob-lab
# The daemon runs as the prosody user from its start (as Debian's unit
# starts it): run as root, its mod_posix may refuse to start.
start_prosody() { # CONFIG
  ip netns exec "$S" setpriv --reuid=prosody --regid=prosody --init-groups \
    prosody --config "$1" -F >> "$work/prosody.out" 2>&1 &
  relay_listening 5222
}
cat > "$work/xmpp_lab.py" <<'PY'
"""Two slixmpp clients, each its own connection to 10.81.2.1:5222:

    xmpp_lab.py plain
    xmpp_lab.py starttls KEYLOG

plain: no TLS (STARTTLS disabled and not forced), SASL PLAIN in the
clear. starttls: STARTTLS forced (the server requires it), the server's
self-signed certificate accepted (no hostname check, no verification),
the TLS secrets written to KEYLOG (NSS key log format), then SASL PLAIN
inside TLS. alice connects, fetches her roster, sends her presence;
then bob does the same; bob sends alice 3 chat messages 1.2 s apart
from 1 s after his presence, and alice replies to each (a chat message
back to bob) as soon as it reaches her; 0.6 s after bob has her 3rd
reply alice pings the server (XEP-0199: an iq get to rttdoc.test),
answered by an iq result; 0.6 s later bob disconnects (closes his
stream, awaits the server's), then alice."""
import asyncio
import logging
import ssl
import sys
import time

import slixmpp

logging.basicConfig(level=logging.WARNING)
ADDR = ("10.81.2.1", 5222)
MODE = sys.argv[1]
KEYLOG = sys.argv[2] if MODE == "starttls" else None
T0 = time.monotonic()


def say(what):
    print(f"{(time.monotonic() - T0) * 1000:7.1f} ms  {time.time():.3f}  {what}", flush=True)


class Lab(slixmpp.ClientXMPP):
    def __init__(self, name, password):
        super().__init__(f"{name}@rttdoc.test/lab", password, sasl_mech="PLAIN")
        self.name = name
        if MODE == "plain":
            self["feature_mechanisms"].unencrypted_plain = True
        else:
            # The server's certificate is self-signed (made by the script):
            # taken as it is. Python's ssl writes the secrets to KEYLOG.
            self.ssl_context.check_hostname = False
            self.ssl_context.verify_mode = ssl.CERT_NONE
            self.ssl_context.keylog_filename = KEYLOG
            self.add_event_handler("ssl_cert", lambda _: say(f"{self.name}: TLS up"))
        self.register_plugin("xep_0199")  # its keepalive off: slixmpp's default
        self.whitespace_keepalive = False
        self.ready = asyncio.get_running_loop().create_future()
        self.got = []
        self.add_event_handler("session_start", self.start)
        self.add_event_handler("message", self.message)
        self.add_event_handler("failed_auth", lambda _: self.ready.set_exception(RuntimeError("auth")))

    async def start(self, event):
        say(f"{self.name}: session started as {self.boundjid}")
        await self.get_roster()
        say(f"{self.name}: roster")
        self.send_presence()
        say(f"{self.name}: presence sent")
        self.ready.set_result(True)

    def message(self, msg):
        if msg["type"] not in ("chat", "normal"):
            return
        self.got.append(msg["body"])
        say(f"{self.name} <- message from {msg['from']}: {msg['body']!r}")
        if self.name == "alice":
            n = len(self.got)
            self.send_message(mto=msg["from"], mbody=f"reply {n} " + "y" * 20, mtype="chat")
            say(f"alice -> reply {n}")

    async def get_dns_records(self, domain, port=None):
        # The address is given: no DNS (slixmpp would look the JID's
        # domain up first, and wait out a resolver that isn't there).
        return [(ADDR[0], ADDR[0], ADDR[1])]

    def go(self):
        if MODE == "plain":
            self.connect(ADDR, use_ssl=False, force_starttls=False, disable_starttls=True)
        else:
            self.connect(ADDR, use_ssl=False, force_starttls=True, disable_starttls=False)


async def main():
    alice = Lab("alice", "alice-lab")
    alice.go()
    await asyncio.wait_for(alice.ready, 10)
    bob = Lab("bob", "bob-lab")
    bob.go()
    await asyncio.wait_for(bob.ready, 10)
    start = time.monotonic() + 1.0
    for i in range(3):
        await asyncio.sleep(max(0.0, start + 1.2 * i - time.monotonic()))
        bob.send_message(mto="alice@rttdoc.test", mbody=f"message {i + 1} " + "x" * 20, mtype="chat")
        say(f"bob -> message {i + 1}")
    for _ in range(50):
        if len(bob.got) == 3:
            break
        await asyncio.sleep(0.1)
    if len(alice.got) != 3 or len(bob.got) != 3:
        sys.exit(f"alice got {len(alice.got)} messages, bob {len(bob.got)} replies")
    await asyncio.sleep(0.6)
    rtt = await alice["xep_0199"].ping(jid="rttdoc.test", timeout=5)
    say(f"alice: ping answered, {rtt * 1000:.1f} ms")
    await asyncio.sleep(0.6)
    for c in (bob, alice):
        await c.disconnect(wait=5)
        say(f"{c.name}: disconnected")


asyncio.run(main())
PY
start_prosody "$work/prosody/prosody.cfg.lua"
lab xmpp "$work/xmpp_lab.py" plain
report xmpp xmpp
stop_servers
start_prosody "$work/prosody/prosody-tls.cfg.lua"
lab xmpp-starttls "$work/xmpp_lab.py" starttls "$work/xmpp-starttls.keys"
report xmpp-starttls xmpp-starttls "$work/xmpp-starttls.keys"
stop_servers
ls -l "$out"/gearman.pcap.gz "$out"/xmpp.pcap.gz "$out"/xmpp-starttls.pcap.gz
