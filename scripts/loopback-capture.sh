#!/usr/bin/env bash
# Captures real nginx + curl traffic on the loopback of a private network
# namespace (MTU 1500), so nothing touches the host's ports or interfaces.
#
#   scripts/loopback-capture.sh OUT.pcap               # a small mixed sample
#   scripts/loopback-capture.sh OUT.pcap wrk SECS      # keep-alive load from wrk
#   scripts/loopback-capture.sh OUT.pcap churn N       # the benchmark's corpora:
#   scripts/loopback-capture.sh OUT.pcap keepalive N   #   N packets each (tcpdump -c N;
#   scripts/loopback-capture.sh OUT.pcap bulk N        #   wrk is stopped when N are in)
#   scripts/loopback-capture.sh OUT.pcap curls N       # N curl processes, 8 at a time,
#                                                      #   their TLS keys in OUT.pcap.keylog
#
# churn:     wrk -t1 -c20 -H "Connection: close": one TLS handshake per request
#            of a 4 KB page (the shape of API traffic without connection reuse);
# keepalive: wrk -t1 -c20 on the same page over long-lived TLS connections;
# bulk:      wrk -t1 -c4 cycling through 200 KB, 1 MB, 4 MB and 10 MB files on
#            keep-alive TLS connections (downloads).
#
# Needs root, unshare, ip, nginx, curl, tcpdump, openssl (and wrk for load;
# ethtool to turn off segmentation offloads, for wire-sized packets).
set -euo pipefail
out=$(realpath -m "$1"); mode=${2:-sample}; secs=${3:-5}
if [[ "${RTTDOC_IN_NETNS:-}" != 1 ]]; then
  exec env RTTDOC_IN_NETNS=1 unshare --net --mount -- "$0" "$@"
fi
work=$(mktemp -d /tmp/rttdoc-loopback.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f "$work/nginx.pid" ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip link set lo up mtu 1500
# Segmentation offloads would hand tcpdump 64 KB super-packets; a real NIC's
# capture shows wire-sized packets, so turn them off where ethtool exists.
if command -v ethtool >/dev/null; then ethtool -K lo tso off gso off gro off >/dev/null 2>&1 || true; fi
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
mkdir -p "$work/www"
echo "hello from rttdoc's loopback fixture" > "$work/www/index.html"
head -c 16000 /dev/zero | tr '\0' 'x' > "$work/www/page.html"
head -c 4000 /dev/zero | tr '\0' 'y' > "$work/www/small.html"
for kb in 200 1000 4000 10000; do
  head -c "${kb}000" /dev/urandom > "$work/www/file-${kb}k.bin"
done
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work; proxy_temp_path $work; fastcgi_temp_path $work;
  uwsgi_temp_path $work; scgi_temp_path $work;
  keepalive_requests 100000;
  ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
  ssl_session_cache shared:S:1m; ssl_protocols TLSv1.2 TLSv1.3;
  server { listen 127.0.0.1:18080; root $work/www; }
  server { listen 127.0.0.1:18443 ssl; root $work/www; }
}
CONF
nginx -c "$work/nginx.conf"
filter='tcp port 18080 or tcp port 18443'
case "$mode" in
  churn | keepalive | bulk)
    # Stop after exactly $secs packets (here a packet count, not seconds):
    # tcpdump -c ends the capture, then wrk is stopped. wrk's own duration
    # (10 minutes) only bounds a run whose capture never fills.
    count=$secs
    tcpdump -i lo -s 0 -B 262144 -U -c "$count" -w "$out" "$filter" 2>"$work/tcpdump.err" &
    dump=$!
    pids+=("$dump")
    for _ in $(seq 50); do [[ -s "$out" ]] && break; sleep 0.1; done
    sleep 0.5
    url=https://127.0.0.1:18443
    case "$mode" in
      churn) wrk -t1 -c20 -d600s -H "Connection: close" "$url/small.html" >/dev/null & ;;
      keepalive) wrk -t1 -c20 -d600s "$url/small.html" >/dev/null & ;;
      bulk)
        cat > "$work/bulk.lua" <<'LUA'
-- each request asks for the next file size in turn
local sizes = { "200k", "1000k", "4000k", "10000k" }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/file-" .. sizes[(i % #sizes) + 1] .. ".bin")
end
LUA
        wrk -t1 -c4 -d600s -s "$work/bulk.lua" "$url/" >/dev/null &
        ;;
    esac
    load=$!
    pids+=("$load")
    wait "$dump" || true
    kill "$load" 2>/dev/null || true
    wait "$load" 2>/dev/null || true
    pids=()
    grep -E 'captured|dropped' "$work/tcpdump.err" >&2 || true
    exit 0
    ;;
esac
tcpdump -i lo -s 0 -B 262144 -U -w "$out" "$filter" 2>/dev/null &
pids+=($!)
for _ in $(seq 50); do [[ -s "$out" ]] && break; sleep 0.1; done
sleep 0.5
c="curl -s -o /dev/null"
if [[ "$mode" == curls ]]; then
  # One TLS connection per curl process (TLS 1.3, every third TLS 1.2),
  # eight at once on the machine's cores: the hosts' turnarounds (nginx's
  # one worker signing, each curl verifying) are what the connections
  # take beyond their microsecond round trips.
  export SSLKEYLOGFILE="$out.keylog"
  seq "$secs" | xargs -P 8 -I{} sh -c 'case $(({} % 3)) in
      0) curl -s -k -o /dev/null --tlsv1.2 --tls-max 1.2 https://127.0.0.1:18443/index.html ;;
      *) curl -s -k -o /dev/null --tlsv1.3 https://127.0.0.1:18443/index.html ;;
    esac'
elif [[ "$mode" == wrk ]]; then
  wrk -t1 -c16 -d"${secs}s" https://127.0.0.1:18443/page.html >/dev/null
else
  # keep-alive HTTP/1.1: two requests on one connection
  $c http://127.0.0.1:18080/index.html -o /dev/null http://127.0.0.1:18080/page.html
  # TLS 1.3 and TLS 1.2 full handshakes
  $c -k --tlsv1.3 https://127.0.0.1:18443/index.html
  $c -k --tlsv1.2 --tls-max 1.2 https://127.0.0.1:18443/page.html
  # two connections in one curl: the second resumes the TLS 1.2 session
  $c -k --tlsv1.2 --tls-max 1.2 -H 'Connection: close' https://127.0.0.1:18443/index.html \
     -o /dev/null https://127.0.0.1:18443/index.html
  # the same for TLS 1.3 (PSK resumption)
  $c -k --tlsv1.3 -H 'Connection: close' https://127.0.0.1:18443/index.html \
     -o /dev/null https://127.0.0.1:18443/index.html
  # a refused connection (RST) and an HTTP request that gets a 404
  $c http://127.0.0.1:18081/ || true
  $c http://127.0.0.1:18080/missing
fi
sleep 0.5
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true
pids=()
