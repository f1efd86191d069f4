#!/usr/bin/env bash
# Makes tests/data/grpc/apache-h2c-upgrade.pcap.gz: HTTP/2 in cleartext
# reached by the HTTP/1.1 Upgrade (h2c, RFC 7540 3.2), real Linux TCP,
# tcpdump in the client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   apache-h2c-upgrade.pcap  curl (`--http2`, not prior knowledge, on
#                   http:// URLs) and Apache httpd (mod_http2, `Protocols
#                   h2c http/1.1`, mpm_event, its own configuration in the
#                   work directory) on 10.81.2.1:8080. Apache serves
#                   /small.txt (18 bytes) from disk and /cgi-bin/slow, a
#                   CGI script that sleeps 100 ms and prints 2000 bytes.
#                   Each connection's first request is an HTTP/1.1 GET
#                   with `Connection: Upgrade, HTTP2-Settings`, `Upgrade:
#                   h2c` and `HTTP2-Settings`; the server answers `101
#                   Switching Protocols` at once, then the client's preface
#                   and both SETTINGS, and the upgraded request's answer
#                   on stream 1 (HEADERS, DATA), then the close. Two
#                   connections, one curl each, 1 s apart:
#                     1  /cgi-bin/slow: the 101 at once, stream 1's
#                        HEADERS 100 ms later (the server's think time)
#                     2  /small.txt: stream 1's HEADERS right after the
#                        101
#
# Needs root, ip, tcpdump, python3, curl (with nghttp2) and Apache httpd
# (Debian's apache2, with mod_http2; installed here when missing, kept
# from starting a host service).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v apache2 > /dev/null; then
  # policy-rc.d 101 = "not allowed": the package must not start a service.
  policy=/usr/sbin/policy-rc.d
  [[ -e $policy ]] || { printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; added_policy=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends apache2 > /dev/null
  if [[ -n ${added_policy:-} ]]; then rm -f "$policy"; fi
fi
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rth2cup$$ /tmp/rttdoc-h2c-upgrade
chmod 755 "$work"
extra_cleanup() {
  relay_stop_servers
  ip netns pids "$C" 2>/dev/null | xargs -r kill 2>/dev/null || true
}

# Like relay_capture, but keeps tcpdump's report (packets captured and

# --- apache-h2c-upgrade -----------------------------------------------
mkdir -p "$work/htdocs" "$work/cgi-bin" "$work/logs"
echo "small and at once" > "$work/htdocs/small.txt"
cat > "$work/cgi-bin/slow" <<'SH'
#!/bin/sh
sleep 0.1
printf 'Content-Type: text/plain\r\n\r\n'
head -c 2000 /dev/zero | tr '\0' 's'
SH
chmod 755 "$work/htdocs" "$work/cgi-bin" "$work/cgi-bin/slow"
chmod 644 "$work/htdocs/small.txt"
chown www-data: "$work/logs"
mods=/usr/lib/apache2/modules
# Self-contained: nothing from /etc/apache2 or its envvars. mod_http2 does
# not serve HTTP/2 under mpm_prefork, hence mpm_event (and mod_cgid).
cat > "$work/httpd.conf" <<CONF
ServerRoot $work
ServerName 10.81.2.1
DefaultRuntimeDir $work/logs
PidFile $work/logs/httpd.pid
Mutex file:$work/logs default
ErrorLog $work/logs/error.log
LogLevel warn http2:info
User www-data
Group www-data
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule mime_module $mods/mod_mime.so
LoadModule dir_module $mods/mod_dir.so
LoadModule alias_module $mods/mod_alias.so
LoadModule cgid_module $mods/mod_cgid.so
LoadModule http2_module $mods/mod_http2.so
StartServers 1
ServerLimit 1
ThreadsPerChild 8
MaxRequestWorkers 8
Listen 10.81.2.1:8080
Protocols h2c http/1.1
H2Upgrade on
KeepAlive On
ScriptSock $work/logs/cgid.sock
TypesConfig /etc/mime.types
DocumentRoot $work/htdocs
ScriptAlias /cgi-bin/ $work/cgi-bin/
<Directory />
  Require all denied
  AllowOverride None
</Directory>
<Directory $work/htdocs>
  Require all granted
</Directory>
<Directory $work/cgi-bin>
  Require all granted
  Options +ExecCGI
</Directory>
CONF
ip netns exec "$S" apache2 -t -f "$work/httpd.conf"
# In the foreground, outside $pids (capture stops those); relay_stop_servers
# stops it.
ip netns exec "$S" apache2 -f "$work/httpd.conf" -D FOREGROUND > "$work/apache.log" 2>&1 &
relay_listening 8080
# One curl per connection, one URL each: the upgraded request (stream 1).
# Debian 12's curl (7.88.1) cannot go on over a connection it upgraded
# (a second URL fails with "Error in the HTTP2 framing layer" and sends
# nothing, like its prior knowledge: curl/curl#10634, fixed in 8.0).
# Each transfer's protocol and status land in $work/curl.out, checked below.
cat > "$work/curl.sh" <<SH
set -e
u=http://10.81.2.1:8080
w='%{url_effective} %{http_version} %{response_code} %{size_download}\n'
curl -sS --noproxy '*' --http2 -o /dev/null -w "\$w" \$u/cgi-bin/slow >> "$work/curl.out"
sleep 1
curl -sS --noproxy '*' --http2 -o /dev/null -w "\$w" \$u/small.txt >> "$work/curl.out"
SH
relay_capture_checked apache-h2c-upgrade bash "$work/curl.sh"
relay_stop_servers
sleep 0.5
cat "$work/curl.out" >&2
# Both answers came over HTTP/2 (upgraded, not a 200 over HTTP/1.1).
expected="http://10.81.2.1:8080/cgi-bin/slow 2 200 2000
http://10.81.2.1:8080/small.txt 2 200 18"
if [[ $(cat "$work/curl.out") != "$expected" ]]; then
  rm -f "$out/apache-h2c-upgrade.pcap.gz"
  echo "curl did not get both answers over HTTP/2:" >&2
  cat "$work/logs/error.log" >&2
  exit 1
fi
ls -l "$out"
