#!/usr/bin/env bash
# Makes captures of database REPLICATION (tests/data/replication/): a
# primary in the server's namespace, its replica in the client's (the
# replica is the TCP client of replication), real servers, real Linux
# TCP, tcpdump in the client's namespace, across a path of 20 ms each
# way (scripts/relay-path.sh):
#
#   replica (client ns) --veth-- router ns --veth-- primary (server ns)
#                                   |
#                TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# In replication the replica asks once (START_REPLICATION, a binlog
# dump) and the primary then sends data whenever a transaction commits;
# what the replica sends after that (PostgreSQL's standby status
# updates, MariaDB's semi-sync acknowledgments) reports progress and asks
# nothing. Each transaction here is written on the primary over its own
# Unix socket (not captured): 4 INSERTs at 0, 0.8, 2.6 and 3.5 s from the
# first, gaps of 0.8, 1.8 and 0.9 s. The gaps are irregular on purpose:
# with commits evenly spaced, a reading that took a replica's
# acknowledgment for a request "answered" by the next transaction's data
# would find the same wait every time, which looks like a server's
# periodic timer (a heartbeat, a flush interval) and hides the misreading;
# irregular gaps, which are what production has (transactions commit when
# their clients do), make such "answers" take times no timer explains.
#
# Versions: PostgreSQL 15.18 and MariaDB 10.11.19 (Debian 12's), tshark
# 4.0.17. Every replication connection opens (its SYN) and closes (its
# FINs) inside its capture. Times below are from the captures (client
# side, from the first frame, the replication connection's SYN); "fN" is
# frame N; a message's frame is the one with its first byte.
#
#   postgres-streaming.pcap  physical streaming replication. The primary
#     (initdb; wal_level replica, max_wal_senders 4; pg_hba: `host
#     replication repl 10.81.1.1/32 scram-sha-256`) listens on
#     10.81.2.1:5432; the replica is pg_basebackup's copy of it (over the
#     primary's socket, before the capture) with standby.signal,
#     primary_conninfo (user repl, sslmode and gssencmode disable) and
#     wal_receiver_status_interval = 1s (not the default 10 s, so that
#     status messages come between the commits), started (pg_ctl) inside
#     the capture. Its walreceiver: StartupMessage (user=repl
#     database=replication replication=true, f4), SCRAM in two round
#     trips (f8/f9, f10/f11: AuthenticationSASLFinal, AuthenticationOk,
#     13 ParameterStatus, BackendKeyData, ReadyForQuery), IDENTIFY_SYSTEM
#     (f12, answered by f13 after 40.7 ms), START_REPLICATION 0/3000000
#     TIMELINE 1 (f14, 215.0 ms), answered by CopyBothResponse (f15, 42.1
#     ms) and no ReadyForQuery: from there both sides send CopyData (`d`)
#     on their own. The replica's first status update 'r' and its hot
#     standby feedback 'h' (f17, f18, 357.5 ms). The primary sends
#     XLogData 'w' when a transaction commits: 4 INSERTs (psql over the
#     primary's socket) at 0, 0.8, 2.6 and 3.5 s; the WAL left the primary
#     (its frame's time less the relay's 20 ms) 1.5-3.8 ms before psql
#     returned (asynchronous replication: the commit waits for no one):
#     f21 (1427.9 ms, 8384 bytes of WAL, a full-page image, in 6 segments
#     f21-f31), f38 (2221.0 ms), f47 (4019.7 ms), f54 (4935.3 ms; 184
#     bytes each), 793.1, 1798.7 and 915.6 ms apart. Each 'w' came 67.5,
#     760.0, 789.9 and 910.4 ms after the replica's last status update
#     (f20, f35, f45, f50), answering none of them. The replica
#     sends three 'r' after each 'w' (write, then flush, then apply
#     positions at its end): f33-f35 19.0-33.1 ms after the first (8 kB),
#     f39-f41 and f48-f50 0.1-5.2 ms after theirs; after the 4th, write
#     (f55, 0.1 ms), then flush and apply together (f56, 0.6 ms), then one
#     with nothing moved (f57). With nothing new it sends one more 1.0 s
#     after its last (f20, f45, f61, f63: 1002.1-1005.3 ms after it; none
#     between the 1st and 2nd commits or the 3rd and 4th, less than 1 s
#     apart); the primary sends no keepalive 'k' (it would after
#     wal_sender_timeout/2, 30 s, without a reply). 2 s after the 4th
#     commit the replica has the 4 rows and is stopped (fast): Terminate
#     (f64, 6982.0 ms), its FIN (f65); the primary's FIN f68.
#   mariadb-semisync.pcap  semi-synchronous replication. The primary
#     (mariadb-install-db; server-id 1, log-bin, binlog_format MIXED,
#     binlog_checksum CRC32, rpl_semi_sync_master_enabled=1 with its
#     defaults: wait point AFTER_COMMIT, timeout 10 s; user
#     repl@10.81.1.1 with REPLICATION SLAVE, mysql_native_password) on
#     10.81.2.1:3306; the replica (server-id 2, skip-networking,
#     rpl_semi_sync_slave_enabled=1, skip-slave-start) has the same table
#     and the primary's gtid_binlog_pos (0-1-4) as its gtid_slave_pos;
#     CHANGE MASTER ... MASTER_USE_GTID=slave_pos before the capture,
#     START SLAVE inside it. Its IO thread: the server's greeting (f4,
#     81.5 ms: 1 RTT after the handshake's ACK), login (f6/f8), 10
#     queries of its own (f9-f28: SELECT UNIX_TIMESTAMP(), SHOW VARIABLES
#     LIKE 'SERVER_ID', SET @master_heartbeat_period= 30000001024 (30 s:
#     no heartbeat in the capture), @master_binlog_checksum,
#     @mariadb_slave_capability=4, @slave_connect_state='0-1-4', ...),
#     COM_REGISTER_SLAVE (f29/f30), SHOW VARIABLES LIKE
#     'rpl_semi_sync_master_enabled' and SET @rpl_semi_sync_slave= 1
#     (f31-f34), each answered after 40.5-41.1 ms, one at a time; then
#     COM_BINLOG_DUMP (f35, 653.1 ms), answered 40.8 ms later by the fake
#     ROTATE, FORMAT_DESCRIPTION, GTID_LIST, BINLOG_CHECKPOINT and
#     GTID_LIST events in one segment (f36). From there the primary sends
#     each event behind two bytes (0xef, then 1 when the replica must
#     acknowledge it): per INSERT (the mariadb client over the primary's
#     socket, at 0, 0.8, 2.6 and 3.5 s) GTID, INTVAR, QUERY and XID (ack
#     requested on the XID) in one segment, f38 (1761.3 ms), f42 (2560.6
#     ms), f45 (4364.0 ms), f48 (5260.8 ms), 799.3, 1803.4 and 896.8 ms
#     apart; f42, f45 and f48 came 799.1, 1803.3 and 896.7 ms after the
#     replica's last packet (its ack of the transaction before), f38
#     1108.2 ms after the dump request. The replica's semi-sync ack (0xef,
#     the XID's end position 1254, 1467, 1680, 1893, the file name) leaves
#     0.1-0.2 ms after each (f40, f43, f46, f49), and asks for nothing.
#     The primary's semi-sync was OFF until the first ack came
#     (Rpl_semi_sync_master_status OFF with one client, before the first
#     INSERT): the first INSERT committed without waiting (14.4 ms in the
#     client), the other three waited for their ack (55.2-59.3 ms in the
#     client), which reached the primary a round trip of the path (40.4
#     ms from the KILL connection's SYN f52 to its SYN-ACK f53) and the
#     replica's 0.1-0.2 ms after their events left
#     (Rpl_semi_sync_master_yes_tx 3, no_tx 5 counting the 4 setup
#     transactions, tx_avg_wait_time 42217 us). 2 s after the 4th commit
#     the replica has the 4 rows; STOP SLAVE: the replica's FIN (f51,
#     7324.7 ms) and, the semi-sync replica's way of ending its dump
#     thread, a second connection (SYN f52) that logs in and sends `KILL
#     8` (f61; the primary's dump thread) and COM_QUIT (f65); the
#     primary's FIN on the replication connection comes only then (f62,
#     163.0 ms after the replica's).
#
# tshark's dissectors: pgsql reads every message (CopyData as `d`, its
# contents undissected); mysql reads the dump's first events as binlog
# events (f36, f38), then takes the later events for OK packets (f42,
# f45, f48) and the acks for an unknown command 239.
#
# After each capture, repl_report.py (written below) cuts each direction
# into the protocol's messages from the TCP payloads, prints them (the
# frame of each message's first byte, its time from the capture's
# first frame) beside tshark's dissector's reading of the frame (pgsql
# on 5432, mysql on 3306), and checks what the capture must hold.
#
# Needs root, ip, tcpdump, tshark, python3, runuser and Debian's
# postgresql (15: initdb, postgres, pg_ctl, pg_basebackup, psql) and
# mariadb-server (10.11: mariadb-install-db, mariadbd, mariadb,
# mariadb-admin; semi-sync is built in). The servers run as their
# users (postgres, mysql), their data in the work directory.
set -euo pipefail
for t in tshark tcpdump python3 runuser mariadb-install-db mariadb mariadb-admin; do
  command -v "$t" > /dev/null || { echo "needs $t" >&2; exit 1; }
done
# Debian keeps postgres and initdb out of PATH, under
# /usr/lib/postgresql/N/bin (initdb may be a link on PATH to there).
pg_bin=$(dirname "$(readlink -f "$(command -v initdb 2> /dev/null || ls /usr/lib/postgresql/*/bin/initdb | tail -1)")")
[[ -x $pg_bin/postgres && -x $pg_bin/pg_basebackup ]] || { echo "needs postgresql" >&2; exit 1; }
mariadbd=$(command -v mariadbd || command -v /usr/sbin/mariadbd || true)
[[ -n $mariadbd ]] || { echo "needs mariadb-server (mariadbd)" >&2; exit 1; }
id postgres > /dev/null && id mysql > /dev/null
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtrepl$$ /tmp/rttdoc-replication
# The servers run as postgres and mysql: they must reach the work directory.
chmod 755 "$work"
# Every server runs outside $pids (relay_capture_checked stops those after
# each capture): the primaries in the server's namespace, the replicas in
# the client's. Each is shut down by hand after its capture; on the way
# out (a failure too) whatever is left in either namespace gets SIGTERM
# (a fast shutdown for mariadbd, a smart one for postgres, whose every
# process gets it too), and what is still there 10 s later SIGKILL.
stop_ns() { # NAMESPACE
  ip netns pids "$1" 2> /dev/null | xargs -r kill 2> /dev/null || true
  for _ in $(seq 100); do
    [[ -z $(ip netns pids "$1" 2> /dev/null) ]] && return 0
    sleep 0.1
  done
  ip netns pids "$1" 2> /dev/null | xargs -r kill -KILL 2> /dev/null || true
  return 0
}
extra_cleanup() {
  stop_ns "$C"
  stop_ns "$S"
  return 0
}
cd "$work"

# --- what a capture holds: its messages, from tshark's TCP payloads ----
cat > "$work/repl_report.py" <<'PY'
"""Reads a replication capture with tshark, cuts each direction of each
connection into the protocol's messages, prints them (the frame that
carries a message's first byte, its time from the first frame, and
tshark's dissector's Info for that frame) and checks what the capture
must hold:

    repl_report.py postgres|mariadb PCAP

PostgreSQL (5432): the start-up, typed messages (type, 32-bit length);
CopyData's contents by their first byte: the primary's XLogData (`w`)
and keepalives (`k`), the standby's status updates (`r`) and hot
standby feedback (`h`). MariaDB (3306): packets (24-bit length,
sequence number); after COM_BINLOG_DUMP the primary's packets are binlog
events (with semi-sync, two bytes 0xef and a flag before each event's
header; flag 1: acknowledge this one), the replica's semi-sync
acknowledgments (0xef, a binlog position and file name).
"""
import struct
import subprocess
import sys

import tcp_streams  # scripts/tcp_streams.py (PYTHONPATH)

proto, pcap = sys.argv[1], sys.argv[2]
port = {"postgres": 5432, "mariadb": 3306}[proto]


def tshark(*args):
    return subprocess.run(["tshark", "-r", pcap, *args], check=True, capture_output=True,
                          text=True).stdout.splitlines()


# The dissector's reading (reassembling messages across segments, as it
# does by default): its Info column for each frame.
info = {}
for row in tshark("-d", f"tcp.port=={port},{'pgsql' if proto == 'postgres' else 'mysql'}",
                  "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Info"):
    f, _, text = row.partition("\t")
    info[int(f)] = text

conns = tcp_streams.read(pcap, port)


NUL = b"\0"


def lsn(v):
    return f"{v >> 32:X}/{v & 0xFFFFFFFF:X}"


# --- PostgreSQL ------------------------------------------------------------
AUTH = {0: "AuthenticationOk", 3: "AuthenticationCleartextPassword", 5: "AuthenticationMD5Password",
        10: "AuthenticationSASL", 11: "AuthenticationSASLContinue", 12: "AuthenticationSASLFinal"}


def pg_messages(raw, client):
    """(offset, length, kind, text, fields) for each whole message."""
    i, startup = 0, client
    while i < len(raw):
        b = raw[i:]
        if startup:
            if len(b) < 8 or len(b) < struct.unpack(">I", b[:4])[0]:
                return
            n, code = struct.unpack(">II", b[:8])
            if code == 80877103:
                yield i, n, "SSLRequest", "SSLRequest", {}
            else:
                params = b[8:n].split(b"\0")
                kv = dict(zip(params[0::2], params[1::2]))
                text = " ".join(f"{k.decode()}={v.decode()}" for k, v in kv.items() if k)
                yield i, n, "startup", f"StartupMessage {text}", {}
                startup = False
            i += n
            continue
        if not client and i == 0 and b[:1] == b"N" and (len(b) == 1 or b[1] != 0):
            yield i, 1, "ssl-refused", "N (no SSL)", {}
            i += 1
            continue
        if len(b) < 5:
            return
        kind, n = chr(b[0]), 1 + struct.unpack(">I", b[1:5])[0]
        if len(b) < n:
            return
        body = b[5:n]
        yield (i, n, *pg_describe(kind, body, client))
        i += n


def pg_describe(kind, body, client):
    if kind == "d" and body[:1] == b"w":
        start, end, _ = struct.unpack(">QQQ", body[1:25])
        wal = len(body) - 25
        return "w", f"CopyData XLogData 'w' WAL {lsn(start)}+{wal} bytes", {"start": start,
                                                                          "end": start + wal}
    if kind == "d" and body[:1] == b"k":
        end, _, reply = struct.unpack(">QQB", body[1:18])
        return "k", f"CopyData keepalive 'k' end {lsn(end)} reply requested {reply}", {}
    if kind == "d" and body[:1] == b"r":
        w, f, a, _, reply = struct.unpack(">QQQQB", body[1:34])
        return "r", (f"CopyData status update 'r' write {lsn(w)} flush {lsn(f)} apply {lsn(a)} "
                     f"reply requested {reply}"), {"write": w, "flush": f, "apply": a}
    if kind == "d" and body[:1] == b"h":
        return "h", "CopyData hot standby feedback 'h'", {}
    if kind == "d":
        return "d", f"CopyData ({len(body)} bytes)", {}
    if client:
        name = {"Q": "Query", "p": "SASL/password", "X": "Terminate", "c": "CopyDone",
                "S": "Sync", "P": "Parse", "B": "Bind", "E": "Execute"}.get(kind, kind)
        if kind == "Q":
            return "Q", f"Query {body.rstrip(NUL).decode()!r}", {}
        if kind == "p":
            return "p", f"SASLInitialResponse/Response ({len(body)} bytes)", {}
        return kind, name, {}
    if kind == "R":
        code = struct.unpack(">I", body[:4])[0]
        return "R", AUTH.get(code, f"Authentication {code}"), {}
    if kind == "S":
        k, v = body.split(b"\0")[:2]
        return "S", f"ParameterStatus {k.decode()}={v.decode()}", {}
    if kind == "D":
        cols, vals, j = struct.unpack(">H", body[:2])[0], [], 2
        for _ in range(cols):
            m = struct.unpack(">i", body[j:j + 4])[0]
            j += 4
            vals.append(None if m < 0 else body[j:j + m].decode())
            j += max(m, 0)
        return "D", f"DataRow {vals}", {}
    if kind == "C":
        return "C", f"CommandComplete {body.rstrip(NUL).decode()!r}", {}
    if kind == "Z":
        return "Z", f"ReadyForQuery {body.decode()}", {}
    if kind in "EN":
        fields = dict((f[:1].decode(), f[1:].decode()) for f in body.split(b"\0") if f)
        return kind, f"{'Error' if kind == 'E' else 'Notice'} {fields.get('M', '')!r}", {}
    name = {"K": "BackendKeyData", "T": "RowDescription", "W": "CopyBothResponse",
            "c": "CopyDone", "H": "CopyOutResponse", "G": "CopyInResponse"}.get(kind, kind)
    return kind, name, {}


# --- MariaDB ---------------------------------------------------------------
COMMANDS = {0x01: "COM_QUIT", 0x03: "COM_QUERY", 0x0e: "COM_PING", 0x12: "COM_BINLOG_DUMP",
            0x15: "COM_REGISTER_SLAVE", 0x1e: "COM_BINLOG_DUMP_GTID"}
EVENTS = {2: "QUERY", 4: "ROTATE", 5: "INTVAR", 15: "FORMAT_DESCRIPTION", 16: "XID",
          19: "TABLE_MAP", 23: "WRITE_ROWS_v1", 27: "HEARTBEAT", 160: "ANNOTATE_ROWS",
          161: "BINLOG_CHECKPOINT", 162: "GTID", 163: "GTID_LIST", 164: "START_ENCRYPTION"}


def my_packets(raw):
    i = 0
    while len(raw) - i >= 4:
        n = raw[i] | raw[i + 1] << 8 | raw[i + 2] << 16
        if len(raw) - i < 4 + n:
            return
        yield i, 4 + n, raw[i + 3], raw[i + 4:i + 4 + n]
        i += 4 + n


def my_event(p, state):
    """A binlog event packet after the dump: (kind, text, fields)."""
    if p[:1] == b"\xff":
        return "err", f"ERR {p[3:].decode(errors='replace')!r}", {}
    if p[:1] == b"\xfe" and len(p) < 9:
        return "eof", "EOF (end of the binlog stream)", {}
    j, ack = 1, None
    if state["semisync"] and p[1:2] == b"\xef":
        ack, j = p[2], 3
    ts, etype, sid, size, pos, flags = struct.unpack("<IBIIIH", p[j:j + 19])
    name = EVENTS.get(etype, f"event {etype}")
    if etype == 15:  # FORMAT_DESCRIPTION: its checksum algorithm (1: CRC32) 5 bytes from its end
        state["checksum"] = p[j + size - 5] == 1
    checksum = state["checksum"]
    body = p[j + 19:j + size - (4 if checksum else 0)]
    extra = ""
    if etype == 2:  # QUERY: thread id, exec time, db length, error, status length
        dbl, stl = body[8], struct.unpack("<H", body[11:13])[0]
        q = body[13 + stl + dbl + 1:]
        extra = f" {q.decode(errors='replace')[:60]!r}"
    elif etype == 162:  # GTID: sequence number, domain, flags
        seqno, domain = struct.unpack("<QI", body[:12])
        extra = f" {domain}-{sid}-{seqno}"
    elif etype == 4:  # ROTATE: a position, the file name (the fake one's checksum unknown yet)
        to = body[8:]
        if not all(32 <= ch < 127 for ch in to):
            to = to[:-4]
        extra = f" to {to.decode(errors='replace')}"
    semi = "" if ack is None else f" [semi-sync, ack requested {ack}]"
    return "event", f"binlog {name} end pos {pos}{extra}{semi}", {"pos": pos, "ack": ack}


def my_describe(side, seq, p, state):
    if side == "s" and state["greeting"]:
        state["greeting"] = False
        version = p[1:p.index(b"\0", 1)].decode()
        return "greeting", f"server greeting (handshake v{p[0]}, {version})", {}
    if side == "c" and state["login"]:
        state["login"] = False
        user = p[32:p.index(b"\0", 32)].decode()
        return "login", f"login request (user {user})", {}
    if side == "c":
        if state["dump"] and p[:1] == b"\xef":
            pos = struct.unpack("<Q", p[1:9])[0]
            return "ack", f"semi-sync ACK pos {pos} file {p[9:].decode()}", {"pos": pos}
        cmd = COMMANDS.get(p[0], f"command 0x{p[0]:02x}")
        if p[0] == 0x03:
            q = p[1:].decode(errors="replace")
            if "rpl_semi_sync_slave" in q and "SET" in q.upper():
                state["semisync"] = True
            return "query", f"COM_QUERY {q!r}", {}
        if p[0] in (0x12, 0x1e):
            state["dump"] = True
        return "cmd", cmd, {}
    if state["dump"]:
        return my_event(p, state)
    first = p[:1]
    if first == b"\x00":
        return "ok", "OK", {}
    if first == b"\xff":
        return "err", f"ERR {p[9:].decode(errors='replace')!r}", {}
    if first == b"\xfe" and len(p) < 9:
        return "eof", "EOF", {}
    if first == b"\xfe":
        return "authswitch", f"auth switch request ({p[1:p.index(NUL, 1)].decode()})", {}
    return "data", f"result packet #{seq} ({len(p)} bytes)", {}


def cut(c, side, state):
    """(frame, t, side, kind, text, fields) for each whole message on a side."""
    buf = c[side]
    raw = bytes(b for b, _, _ in buf)
    out = []
    if proto == "postgres":
        for i, n, kind, text, fields in pg_messages(raw, side == "c"):
            out.append((buf[i][1], buf[i][2], side, kind, text, fields))
    else:
        return out  # MariaDB's packets are read in order of the frames (both sides).
    return out


def mariadb_events(c):
    """MariaDB's packets on both sides in frame order: the state (login,
    the dump, semi-sync) is set by what the replica sent before."""
    state = {"greeting": True, "login": True, "dump": False, "semisync": False,
             "checksum": False}
    per = {}
    for side in "cs":
        buf = c[side]
        raw = bytes(b for b, _, _ in buf)
        per[side] = [(buf[i][1], buf[i][2], side, seq, p) for i, n, seq, p in my_packets(raw)]
    merged = sorted(per["c"] + per["s"], key=lambda e: (e[0], e[2] == "s"))
    out = []
    for frame, t, side, seq, p in merged:
        kind, text, fields = my_describe(side, seq, p, state)
        out.append((frame, t, side, kind, text, fields))
    return out


summary = []
for stream, c in sorted(conns.items()):
    syn = "SYN at frame %d (%.1f ms)" % c["syn"] if c["syn"] else "no SYN in the capture"
    print(f"connection {stream}: {syn}")
    if proto == "postgres":
        events = sorted(cut(c, "c", None) + cut(c, "s", None), key=lambda e: (e[0], e[2] == "s"))
    else:
        events = mariadb_events(c)
    last_client = None  # (frame, t, kind) of the replica's last message
    open_request = None  # a request not yet answered: (frame, t)
    wal = []  # PostgreSQL: (frame, t, end) of each XLogData
    events_sent = []  # MariaDB: (frame, t, pos) of each event asking for an ack
    last_status = {"write": 0, "flush": 0, "apply": 0}  # PostgreSQL: the replica's last 'r'
    shown = set()
    for frame, t, side, kind, text, fields in events:
        note = ""
        if side == "c":
            if kind in ("startup", "SSLRequest", "Q", "p", "login", "query", "cmd"):
                open_request = (frame, t)
            if kind == "r":
                moved = [k for k in ("write", "flush", "apply") if fields[k] > last_status[k]]
                ends = [w for w in wal if w[2] == fields[moved[-1]]] if moved else []
                if ends:
                    note = (f"   [{'/'.join(moved)} now at the end of the WAL of frame "
                            f"{ends[-1][0]}, {t - ends[-1][1]:.1f} ms after it]")
                elif not moved and last_status["write"]:
                    gap = t - last_status["t"]
                    note = (f"   [no position moved since frame {last_status['frame']}, "
                            f"{gap:.1f} ms before{': the 1 s status interval' if gap > 900 else ''}]")
                last_status = {**fields, "frame": frame, "t": t}
            if kind == "ack":
                for f0, t0, pos in events_sent:
                    if pos == fields["pos"]:
                        note = f"   [acknowledges the event of frame {f0}, {t - t0:.1f} ms after it]"
            last_client = (frame, t, kind)
        else:
            if open_request and kind not in ("w", "k", "event"):
                note = f"   [answers frame {open_request[0]}, {t - open_request[1]:.1f} ms after it]"
                open_request = None
            elif kind in ("w", "k", "event") and last_client:
                note = (f"   [{t - last_client[1]:.1f} ms after the replica's last message "
                        f"(frame {last_client[0]}, {last_client[2]})]")
                open_request = None
            if kind == "w":
                wal.append((frame, t, fields["end"]))
            if kind == "event" and fields.get("ack") == 1:
                events_sent.append((frame, t, fields["pos"]))
        summary.append((side, kind, text))
        dissector = ""
        if frame not in shown:
            shown.add(frame)
            dissector = f"\n{'':30}tshark: {info.get(frame, '')}"
        arrow = "->" if side == "c" else "<-"
        print(f"  frame {frame:4d} {t:9.1f} ms  {arrow} {text}{note}{dissector}")
    for side, frame, t in c["fins"]:
        print(f"  frame {frame:4d} {t:9.1f} ms  FIN from the {'replica' if side == 'c' else 'primary'}")
    for side, frame, t in c["rsts"]:
        print(f"  frame {frame:4d} {t:9.1f} ms  RST from the {'replica' if side == 'c' else 'primary'}")


def count(side, kind, contains=""):
    return sum(1 for s, k, text in summary if s == side and k == kind and contains in text)


checks = {
    "postgres": [
        ("one connection", len(conns) == 1),
        ("START_REPLICATION", count("c", "Q", "START_REPLICATION") == 1),
        ("CopyBothResponse", count("s", "W") == 1),
        ("XLogData from the primary (4 commits)", count("s", "w") >= 4),
        ("status updates from the replica", count("c", "r") >= 4),
    ],
    "mariadb": [
        # (The second: at STOP SLAVE, the semi-sync replica connects again
        # to KILL its dump thread on the primary.)
        ("two connections", len(conns) == 2),
        ("the replica KILLs its dump thread", count("c", "query", "'KILL ") == 1),
        ("COM_REGISTER_SLAVE", count("c", "cmd", "COM_REGISTER_SLAVE") == 1),
        ("COM_BINLOG_DUMP", count("c", "cmd", "COM_BINLOG_DUMP") == 1),
        ("semi-sync asked for", count("c", "query", "rpl_semi_sync_slave") >= 1),
        ("4 events asking for an ack", count("s", "event", "ack requested 1") == 4),
        ("4 acks", count("c", "ack") == 4),
    ],
}[proto]
checks.append(("each connection's SYN, the replica's FIN and the primary's FIN or RST inside",
               all(c["syn"] and "c" in {s for s, _, _ in c["fins"]}
                   and "s" in {s for s, _, _ in c["fins"] + c["rsts"]} for c in conns.values())))
failed = [what for what, ok in checks if not ok]
for what in failed:
    print(f"check failed: {what}", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
report() { # PROTO NAME
  if ! PYTHONPATH="$here" python3 "$work/repl_report.py" "$1" "$out/$2.pcap.gz" > "$work/$2.report"; then
    cat "$work/$2.report" >&2
    echo "$2 does not hold what it should" >&2
    exit 1
  fi
  sed "s/^/  /" "$work/$2.report" >&2
}

# Runs `python3 SCRIPT ARGS...` in the client's namespace for the capture
# NAME, its output (times of what it did) kept in $work/NAME.out and
# shown after.
lab() { # NAME SCRIPT ARGS...
  local name=$1; shift
  relay_capture_checked "$name" sh -c \
    "python3 \"\$@\" > '$name.out' 2>&1 || { cat '$name.out' >&2; exit 1; }" sh "$@"
  sed "s/^/  $name: /" "$work/$name.out" >&2
}

# A workload's clock: each line says the time since the workload began
# and the wall clock (to find it in the capture).
cat > "$work/say.py" <<'PY'
import subprocess
import sys
import time

T0 = time.monotonic()


def say(what):
    print(f"{(time.monotonic() - T0) * 1000:7.1f} ms  {time.time():.6f}  {what}", flush=True)


def run(*cmd, check=True):
    """Runs a command, returns its output (stripped)."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    if check and r.returncode != 0:
        sys.exit(f"{cmd}: {r.returncode}: {r.stderr.strip()}")
    return r.stdout.strip()


def until(what, test, tenths=150):
    """Waits (at most TENTHS tenths of a second) until test() is true."""
    for _ in range(tenths):
        if test():
            return
        time.sleep(0.1)
    sys.exit(f"gave up waiting: {what}")
PY

# --- PostgreSQL: physical streaming replication ----------------------------
pg=$work/pg
mkdir -p "$pg/sock" "$pg/sock-replica"
chown -R postgres: "$pg"
as_pg() { runuser -u postgres -- "$@"; }
as_pg "$pg_bin/initdb" --auth-local=trust --auth-host=scram-sha-256 -U postgres \
  -D "$pg/primary" > "$work/initdb.log"
cat >> "$pg/primary/postgresql.conf" <<CONF
listen_addresses = '10.81.2.1'
port = 5432
unix_socket_directories = '$pg/sock'
wal_level = replica
max_wal_senders = 4
CONF
echo "host replication repl 10.81.1.1/32 scram-sha-256" >> "$pg/primary/pg_hba.conf"
ip netns exec "$S" runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg/primary" \
  -l "$pg/primary.log" -w -t 60 start > /dev/null
relay_listening 5432
psql_primary=(ip netns exec "$S" runuser -u postgres -- "$pg_bin/psql" -h "$pg/sock" -p 5432
  -U postgres -X -q -v ON_ERROR_STOP=1 postgres)
"${psql_primary[@]}" -c "CREATE ROLE repl WITH REPLICATION LOGIN PASSWORD 'repl-secret'" \
  -c "CREATE TABLE lab (id serial PRIMARY KEY, note text, at timestamptz DEFAULT now())"
# The replica: a base backup of the primary (over its socket, before any
# capture), then a standby of its own in the client's namespace, which
# streams from the primary over the relay; it is started inside the
# capture, so its walreceiver's connection opens there.
ip netns exec "$S" runuser -u postgres -- "$pg_bin/pg_basebackup" -h "$pg/sock" -p 5432 \
  -U postgres -D "$pg/replica" -X stream -c fast
cat >> "$pg/replica/postgresql.conf" <<CONF
# The replica's own (after the primary's, copied by pg_basebackup).
listen_addresses = ''
unix_socket_directories = '$pg/sock-replica'
hot_standby = on
primary_conninfo = 'host=10.81.2.1 port=5432 user=repl password=repl-secret application_name=replica sslmode=disable gssencmode=disable'
wal_receiver_status_interval = 1s
CONF
touch "$pg/replica/standby.signal"
chown postgres: "$pg/replica/standby.signal"
cat > "$work/pg_lab.py" <<'PY'
"""In the client's namespace: starts the replica (its walreceiver
connects to the primary), waits until the primary says it streams, then
4 INSERT transactions on the primary (over its socket) at 0, 0.8, 2.6
and 3.5 s (irregular gaps: see the script's header), each with the WAL
position after its commit; 2 s later the primary's view of the replica,
the replica's row count; then stops the replica (fast)."""
import sys
import time

from say import run, say, until

pg_bin, pg, server_ns = sys.argv[1:4]
as_pg = ["runuser", "-u", "postgres", "--"]
primary = ["ip", "netns", "exec", server_ns, *as_pg, f"{pg_bin}/psql", "-h", f"{pg}/sock",
           "-p", "5432", "-U", "postgres", "-X", "-A", "-t", "-q", "postgres"]
replica = [*as_pg, f"{pg_bin}/psql", "-h", f"{pg}/sock-replica", "-p", "5432", "-U", "postgres",
           "-X", "-A", "-t", "-q", "postgres"]
say("starting the replica")
run(*as_pg, f"{pg_bin}/pg_ctl", "-D", f"{pg}/replica", "-l", f"{pg}/replica.log", "-w", "-t", "20",
    "start")
say("replica started")
until("the primary streams to the replica",
      lambda: run(*primary, "-c", "SELECT state FROM pg_stat_replication") == "streaming")
say("primary: " + run(*primary, "-c", "SELECT application_name, client_addr, state, sync_state "
                      "FROM pg_stat_replication"))
time.sleep(1.0)
start = time.monotonic()
for i in range(1, 5):
    time.sleep(max(0.0, start + [0, 0.8, 2.6, 3.5][i - 1] - time.monotonic()))
    say(f"INSERT {i} ...")
    at = run(*primary, "-c", f"INSERT INTO lab (note) VALUES ('row {i}')",
             "-c", "SELECT pg_current_wal_lsn()")
    say(f"INSERT {i} committed, WAL at {at}")
time.sleep(2.0)
say("primary: " + run(*primary, "-c", "SELECT sent_lsn, write_lsn, flush_lsn, replay_lsn "
                      "FROM pg_stat_replication"))
rows = run(*replica, "-c", "SELECT count(*) FROM lab")
say(f"replica has {rows} rows")
run(*as_pg, f"{pg_bin}/pg_ctl", "-D", f"{pg}/replica", "-m", "fast", "-w", "-t", "20", "stop")
say("replica stopped")
if rows != "4":
    sys.exit(f"the replica has {rows} rows, not 4")
PY
lab postgres-streaming "$work/pg_lab.py" "$pg_bin" "$pg" "$S"
report postgres postgres-streaming
ip netns exec "$S" runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg/primary" -m fast -w -t 60 stop > /dev/null
stop_ns "$C"
stop_ns "$S"

# --- MariaDB: semi-synchronous replication ----------------------------------
my=$work/my
mkdir -p "$my"
chown mysql: "$my"
mariadb-install-db --no-defaults --user=mysql --datadir="$my/primary" --skip-test-db > "$work/install-db-primary.log" 2>&1
mariadb-install-db --no-defaults --user=mysql --datadir="$my/replica" --skip-test-db > "$work/install-db-replica.log" 2>&1
common=(--no-defaults --user=mysql --skip-name-resolve --innodb-buffer-pool-size=32M)
ip netns exec "$S" "$mariadbd" "${common[@]}" --datadir="$my/primary" --socket="$my/primary.sock" \
  --pid-file="$my/primary.pid" --log-error="$my/primary.err" \
  --bind-address=10.81.2.1 --port=3306 --server-id=1 --log-bin=primary-bin \
  --rpl-semi-sync-master-enabled=1 > /dev/null 2>&1 &
ip netns exec "$C" "$mariadbd" "${common[@]}" --datadir="$my/replica" --socket="$my/replica.sock" \
  --pid-file="$my/replica.pid" --log-error="$my/replica.err" \
  --skip-networking --server-id=2 --relay-log=replica-relay --skip-slave-start \
  --rpl-semi-sync-slave-enabled=1 > /dev/null 2>&1 &
relay_listening 3306 600
for _ in $(seq 600); do
  ip netns exec "$C" mariadb-admin --socket="$my/replica.sock" ping > /dev/null 2>&1 && break
  sleep 0.1
done
my_primary=(ip netns exec "$S" mariadb --socket="$my/primary.sock" -u root -N -B)
my_replica=(ip netns exec "$C" mariadb --socket="$my/replica.sock" -u root -N -B)
setup="CREATE DATABASE lab; CREATE TABLE lab.t (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(40),
  at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB;"
"${my_primary[@]}" -e "CREATE USER 'repl'@'10.81.1.1' IDENTIFIED BY 'repl-secret';
  GRANT REPLICATION SLAVE ON *.* TO 'repl'@'10.81.1.1'; $setup"
# The replica starts as a copy of the primary: the same table, and the
# primary's binlog position as the one it has applied.
gtid=$("${my_primary[@]}" -e "SELECT @@gtid_binlog_pos")
"${my_replica[@]}" -e "$setup SET GLOBAL gtid_slave_pos = '$gtid';
  CHANGE MASTER TO MASTER_HOST='10.81.2.1', MASTER_PORT=3306, MASTER_USER='repl',
  MASTER_PASSWORD='repl-secret', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1;"
cat > "$work/mariadb_lab.py" <<'PY'
"""In the client's namespace: START SLAVE on the replica (its IO thread
connects to the primary), waits until the primary counts a semi-sync
replica, then 4 INSERT transactions on the primary (over its socket)
at 0, 0.8, 2.6 and 3.5 s (irregular gaps: see the script's header), each
waiting for the replica's acknowledgment (semi-sync); 2 s later the
primary's semi-sync counters and the replica's rows; then STOP SLAVE."""
import sys
import time

from say import run, say, until

my, server_ns = sys.argv[1:3]
primary = ["ip", "netns", "exec", server_ns, "mariadb", f"--socket={my}/primary.sock", "-u", "root",
           "-N", "-B", "-e"]
replica = ["mariadb", f"--socket={my}/replica.sock", "-u", "root", "-N", "-B", "-e"]


def status(*names):
    like = " OR ".join(f"VARIABLE_NAME = '{n}'" for n in names)
    return run(*primary, f"SELECT VARIABLE_NAME, VARIABLE_VALUE FROM "
                         f"information_schema.GLOBAL_STATUS WHERE {like}").replace("\n", ", ")


say("START SLAVE")
run(*replica, "START SLAVE")
until("the primary counts a semi-sync replica",
      lambda: run(*primary, "SHOW STATUS LIKE 'Rpl_semi_sync_master_clients'").split()[-1] == "1")
say("primary: " + status("RPL_SEMI_SYNC_MASTER_CLIENTS", "RPL_SEMI_SYNC_MASTER_STATUS"))
say("replica: " + run(*replica, "SHOW STATUS LIKE 'Rpl_semi_sync_slave_status'").replace("\t", " "))
time.sleep(1.0)
start = time.monotonic()
for i in range(1, 5):
    time.sleep(max(0.0, start + [0, 0.8, 2.6, 3.5][i - 1] - time.monotonic()))
    say(f"INSERT {i} ...")
    at = run(*primary, f"INSERT INTO lab.t (note) VALUES ('row {i}'); SELECT @@gtid_binlog_pos, "
                       f"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE "
                       f"VARIABLE_NAME = 'BINLOG_SNAPSHOT_POSITION')")
    say(f"INSERT {i} committed (acknowledged), gtid and binlog position {at.split()}")
time.sleep(2.0)
say("primary: " + status("RPL_SEMI_SYNC_MASTER_YES_TX", "RPL_SEMI_SYNC_MASTER_NO_TX",
                         "RPL_SEMI_SYNC_MASTER_TX_AVG_WAIT_TIME"))
until("the replica applied 4 rows", lambda: run(*replica, "SELECT count(*) FROM lab.t") == "4", 50)
say("replica has 4 rows")
run(*replica, "STOP SLAVE")
say("STOP SLAVE done")
PY
lab mariadb-semisync "$work/mariadb_lab.py" "$my" "$S"
report mariadb mariadb-semisync
ip netns exec "$C" mariadb-admin --socket="$my/replica.sock" shutdown
ip netns exec "$S" mariadb-admin --socket="$my/primary.sock" shutdown
stop_ns "$C"
stop_ns "$S"
ls -l "$out"/postgres-streaming.pcap.gz "$out"/mariadb-semisync.pcap.gz
