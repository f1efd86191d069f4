"""An HTTP/1.1 backend that works 100 ms per request, then answers 2000
bytes: the slow upstream behind nginx in scripts/http2-captures.sh and
scripts/grpc-captures.sh. Usage: slow-backend.py PORT (on 127.0.0.1)."""
import http.server, sys, time
class Slow(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        time.sleep(0.1)
        body = b"s" * 2000
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Slow).serve_forever()
