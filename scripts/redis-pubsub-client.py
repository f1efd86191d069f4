"""The Redis clients of scripts/redis-captures.sh's pub/sub capture: a
subscriber that subscribes, pings in pub/sub mode and unsubscribes, and
a publisher (another connection) whose messages Redis pushes to it."""
import socket
import threading
import time

H = ("10.81.2.1", 6379)


def command(*words):
    out = b"*%d\r\n" % len(words)
    for w in words:
        out += b"$%d\r\n%s\r\n" % (len(w), w)
    return out


def ask(s, data, until):
    s.sendall(data)
    buf = b""
    while until not in buf:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    return buf


def publisher():
    s = socket.create_connection(H)
    for i in range(3):
        time.sleep(0.7)
        ask(s, command(b"PUBLISH", b"news", b"item %d" % i), b"\r\n")
    ask(s, command(b"QUIT"), b"\r\n")
    s.close()


sub = socket.create_connection(H)
ask(sub, command(b"SUBSCRIBE", b"news"), b"news\r\n:1\r\n")
t = threading.Thread(target=publisher)
t.start()
time.sleep(1.0)
ask(sub, command(b"PING"), b"pong")
t.join()
time.sleep(0.3)
ask(sub, command(b"UNSUBSCRIBE", b"news"), b":0\r\n")
ask(sub, command(b"GET", b"k"), b"\r\n")
ask(sub, command(b"QUIT"), b"+OK\r\n")
sub.close()
