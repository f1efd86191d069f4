#!/usr/bin/env bash
# Makes tests/data/reuse/: a client that asks a server again soon after a
# connection to it ended, with the kernel, nginx and curl as producers,
# real Linux TCP, tcpdump in the client's namespace, across a path of
# 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# nginx (one worker) on 10.81.2.1 serves a1.txt, a2.txt, a3.txt (600
# bytes each) on four ports: 8080 with keepalive_timeout 0 (it answers
# `Connection: close` and closes), 8081 with keepalive_timeout 1s, 8082
# with its default (75 s), 8443 over TLS 1.3 with keepalive_timeout 0.
#
#   server-close.pcap   one curl, three URLs on 8080: the server closes
#                       after each answer, curl opens the next connection
#   client-close.pcap   three curls one after another (0.3 s apart) on
#                       8082: each curl closes its connection as it exits
#   server-idle.pcap    one curl, three URLs on 8081 at most one transfer
#                       per 2 s (--rate 30/m): the server closes each
#                       connection after 1 s idle, curl opens another
#   tls-close.pcap      one curl, two URLs on 8443: a TCP and a TLS
#                       handshake per request (the second resumes)
#   reused.pcap         control: one curl, three URLs on 8082: one
#                       connection carries all three
#   parallel.pcap       control: one curl, three URLs on 8082 at once
#                       (--parallel --parallel-immediate): three
#                       connections open together, none ended before
#                       another began
#   http10-close.pcap   one curl speaking HTTP/1.0 (-0: no Connection
#                       header), three URLs on 8082: nginx keeps
#                       connections alive, but an HTTP/1.0 request
#                       without keep-alive ends its connection
#   asked-close.pcap    one curl, three URLs on 8082 with `Connection:
#                       close`: nginx closes after each answer as asked
#   tls12-refused.pcap  one curl, two URLs on 8444 over TLS 1.2 (no
#                       tickets, nginx's `ssl_session_cache none`: a
#                       session ID issued, no session kept): the second
#                       connection offers the first's session ID back
#                       and gets a full handshake
#   tls12-resumed.pcap  control: the same on 8445, nginx's session cache
#                       on: the second connection resumes
#
# Needs root, ip, tcpdump, python3, nginx, curl, openssl. Everything it
# creates is removed on exit, also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/reuse}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtreuse$$ /tmp/rttdoc-reuse
chmod 755 "$work"
extra_cleanup() {
  [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  relay_stop_servers
}

for i in 1 2 3; do head -c 600 /dev/zero | tr '\0' "$i" > "$work/a$i.txt"; done
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 64; }
http {
  access_log off;
  root $work;
  server { listen 10.81.2.1:8080; keepalive_timeout 0; }
  server { listen 10.81.2.1:8081; keepalive_timeout 1s; }
  server { listen 10.81.2.1:8082; }
  server {
    listen 10.81.2.1:8443 ssl;
    keepalive_timeout 0;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
  }
  server {
    listen 10.81.2.1:8444 ssl;
    keepalive_timeout 0;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2;
    ssl_session_tickets off;
    ssl_session_cache none;
  }
  server {
    listen 10.81.2.1:8445 ssl;
    keepalive_timeout 0;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2;
    ssl_session_tickets off;
    ssl_session_cache shared:reuse:1m;
  }
}
CONF
ip netns exec "$S" nginx -c "$work/nginx.conf"
relay_listening 8443
relay_listening 8445

u=http://10.81.2.1
relay_capture server-close curl -s "$u:8080/a1.txt" "$u:8080/a2.txt" "$u:8080/a3.txt"
relay_capture client-close sh -c "for i in 1 2 3; do curl -s $u:8082/a\$i.txt; sleep 0.3; done"
relay_capture server-idle curl -s --rate 30/m "$u:8081/a[1-3].txt"
relay_capture tls-close curl -sk https://10.81.2.1:8443/a1.txt https://10.81.2.1:8443/a2.txt
relay_capture reused curl -s "$u:8082/a1.txt" "$u:8082/a2.txt" "$u:8082/a3.txt"
relay_capture tls12-refused curl -sk https://10.81.2.1:8444/a1.txt https://10.81.2.1:8444/a2.txt
relay_capture tls12-resumed curl -sk https://10.81.2.1:8445/a1.txt https://10.81.2.1:8445/a2.txt
relay_capture parallel curl -s --parallel --parallel-immediate "$u:8082/a1.txt" "$u:8082/a2.txt" "$u:8082/a3.txt"
relay_capture http10-close curl -0 -s "$u:8082/a1.txt" "$u:8082/a2.txt" "$u:8082/a3.txt"
relay_capture asked-close curl -s -H "Connection: close" "$u:8082/a1.txt" "$u:8082/a2.txt" "$u:8082/a3.txt"

for name in server-close client-close server-idle tls-close reused parallel http10-close asked-close tls12-refused tls12-resumed; do
  gzip -9n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
echo "made $out: server-close client-close server-idle tls-close reused parallel http10-close asked-close tls12-refused tls12-resumed"
