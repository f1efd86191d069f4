#!/usr/bin/env python3
"""A Multipath TCP request/answer peer for scripts/mptcp-captures.sh.

  mptcp-peer.py serve ADDR PORT THINK_MS SIZE   answer each request line
      after THINK_MS with SIZE bytes (one connection, then exit)
  mptcp-peer.py ask ADDR PORT COUNT SIZE        send COUNT request lines,
      each when the previous answer (SIZE bytes) is in, then close

Both use IPPROTO_MPTCP sockets: the kernel's path manager opens the
subflows, its scheduler picks one for each piece of data.
"""
import socket
import sys
import time

IPPROTO_MPTCP = 262


def serve(addr, port, think_ms, size):
    lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind((addr, port))
    lst.listen(1)
    lst.settimeout(30)
    conn, _ = lst.accept()
    conn.settimeout(30)
    pending = b""
    while True:
        data = conn.recv(4096)
        if not data:
            break
        pending += data
        while b"\n" in pending:
            _, pending = pending.split(b"\n", 1)
            time.sleep(think_ms / 1000)
            conn.sendall(b"a" * size)
    conn.close()


def ask(addr, port, count, size):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    s.settimeout(30)
    s.connect((addr, port))
    # Let the path manager join the second subflow before the first request.
    time.sleep(0.3)
    for n in range(count):
        s.sendall(b"GET %d\n" % n)
        got = 0
        while got < size:
            chunk = s.recv(65536)
            if not chunk:
                return
            got += len(chunk)
        time.sleep(0.05)
    s.close()


if __name__ == "__main__":
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "serve":
        serve(addr, port, int(sys.argv[4]), int(sys.argv[5]))
    else:
        ask(addr, port, int(sys.argv[4]), int(sys.argv[5]))
