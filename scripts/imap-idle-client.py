"""The IMAP client of scripts/imap-captures.sh: one session IDLEs while a
second APPENDs a message, which Dovecot pushes to the first."""
import socket, time, threading
H = ("10.81.2.1", 143)
def conv(s, line, until):
    s.sendall(line)
    buf = b""
    while until not in buf:
        d = s.recv(65536)
        if not d: break
        buf += d
    return buf
def session():
    s = socket.create_connection(H)
    s.recv(4096)
    conv(s, b"a1 LOGIN u p\r\n", b"a1 ")
    return s
idler = session()
conv(idler, b"a2 SELECT INBOX\r\n", b"a2 ")
conv(idler, b"a3 IDLE\r\n", b"+ ")
def appender():
    time.sleep(1.0)
    s = session()
    msg = b"From: a@b\r\nSubject: hi\r\n\r\nhello\r\n"
    conv(s, b"b2 APPEND INBOX {%d}\r\n" % len(msg), b"+ ")
    conv(s, msg + b"\r\n", b"b2 ")
    conv(s, b"b3 LOGOUT\r\n", b"b3 ")
    s.close()
t = threading.Thread(target=appender); t.start()
buf = b""
while b"EXISTS" not in buf:
    buf += idler.recv(4096)
time.sleep(0.5)
conv(idler, b"DONE\r\n", b"a3 ")
conv(idler, b"a4 FETCH 1:* (FLAGS BODY[])\r\n", b"a4 ")
conv(idler, b"a5 LOGOUT\r\n", b"a5 ")
t.join()
