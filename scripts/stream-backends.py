#!/usr/bin/env python3
"""Streaming HTTP backends for scripts/stream-captures.sh.

    stream-backends.py sse ADDRESS PORT
        python's http.server (Nagle on, as it leaves sockets): each GET
        waits 300 ms (a first token's time), then answers with a
        text/event-stream in chunked encoding, the head in one write and
        then 30 events, one write each, 80 ms apart.

    stream-backends.py tokens ADDRESS PORT
        asyncio (TCP_NODELAY on, as asyncio sets it): each GET waits
        250 ms, then streams 120 events at irregular gaps of 12-60 ms (a
        language model's tokens; the gaps fixed by a seed).

    stream-backends.py upload ADDRESS PORT
        python's http.server taking a chunked PUT (answering its
        `Expect: 100-continue` with a `100 Continue`), reading every chunk,
        then answering how many bytes came: head and body in two writes.
"""
import asyncio
import http.server
import random
import socketserver
import sys
import time


def event(i):
    data = b'data: {"token": "w%d"}\n\n' % i
    return b"%x\r\n%s\r\n" % (len(data), data)


class Sse(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        time.sleep(0.3)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i in range(30):
            self.wfile.write(event(i))
            self.wfile.flush()
            time.sleep(0.08)
        self.wfile.write(b"0\r\n\r\n")


class Upload(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_PUT(self):
        got = 0
        while True:
            size = int(self.rfile.readline().split(b";")[0], 16)
            if size == 0:
                self.rfile.readline()
                break
            got += len(self.rfile.read(size))
            self.rfile.readline()
        body = b"got %d bytes\n" % got
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Threading(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


GAPS = [random.Random(7).uniform(0.012, 0.06) for _ in range(120)]


async def tokens(reader, writer):
    while (await reader.readline()) not in (b"\r\n", b"\n", b""):
        pass
    await asyncio.sleep(0.25)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n")
    for i, gap in enumerate(GAPS):
        writer.write(event(i))
        await writer.drain()
        await asyncio.sleep(gap)
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    writer.close()


async def serve_tokens(address, port):
    server = await asyncio.start_server(tokens, address, port)
    await server.serve_forever()


def main():
    mode, address, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode in ("sse", "upload"):
        handler = Sse if mode == "sse" else Upload
        Threading((address, port), handler).serve_forever()
    else:
        asyncio.run(serve_tokens(address, port))


if __name__ == "__main__":
    main()
