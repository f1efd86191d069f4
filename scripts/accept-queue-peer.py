#!/usr/bin/env python3
"""The server of scripts/accept-queue-captures.sh: a listener whose
application drains its accept queue slowly.

    accept-queue-peer.py ADDR PORT BACKLOG MODE SECONDS [DEFER]

It listens with a backlog of BACKLOG (Linux keeps BACKLOG + 1 finished
connections waiting for accept()) and serves one connection at a time,
each taking 300 ms of work, for SECONDS at most (bounded). MODE `http`
reads a request to its blank line, works, answers 200 and closes; MODE
`greeting` works, sends a greeting line (a server that speaks first, as
SMTP and MySQL do), reads one line and closes. With DEFER, the listener
sets TCP_DEFER_ACCEPT to that many seconds (nginx's `deferred`): the
kernel holds a connection whose client sent no data. MODE `restart` is
`http` answered at once by a listener closed for 0.15 s every 0.5 s (a
server restarting: a handshake its listener answered before it closed
finds no socket when its ACK comes, and is reset; a SYN while it is
closed is refused).
"""
import socket
import sys
import time

addr, port, backlog, mode, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
defer = int(sys.argv[6]) if len(sys.argv) > 6 else None
work = 0.0 if mode == "restart" else 0.3


def listen():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if defer is not None:
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, defer)
    listener.bind((addr, port))
    listener.listen(backlog)
    listener.settimeout(0.05 if mode == "restart" else 0.5)
    return listener


listener = listen()
open_until = time.monotonic() + 0.5
end = time.monotonic() + seconds
while time.monotonic() < end:
    if mode == "restart" and time.monotonic() >= open_until:
        listener.close()
        time.sleep(0.15)
        listener = listen()
        open_until = time.monotonic() + 0.5
    try:
        conn, _ = listener.accept()
    except socket.timeout:
        continue
    conn.settimeout(5)
    try:
        if mode in ("http", "restart"):
            buf = b""
            while b"\r\n\r\n" not in buf:
                got = conn.recv(4096)
                if not got:
                    break
                buf += got
            time.sleep(work)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
        else:
            time.sleep(work)
            conn.sendall(b"220 ready\r\n")
            conn.recv(4096)
    except OSError:
        pass
    conn.close()
