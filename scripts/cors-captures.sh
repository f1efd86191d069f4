#!/usr/bin/env bash
# Makes tests/data/cors/: a browser's CORS preflights, with the kernel,
# nginx and headless Chromium as producers, real Linux TCP, tcpdump in the
# client's namespace, across a path of 20 ms each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# nginx (one worker) on 10.81.2.1 serves a page at
# http://page.rttdoc.test:8080/NAME.html and an API at
# http://api.rttdoc.test:8081/items/ (another origin: another port), in
# HTTP/1.1; over TLS 1.3 with HTTP/2, the page at
# https://page.rttdoc.test:8443/ and the API at
# https://api.rttdoc.test:8444/items/. Chromium maps both names to the
# server (--host-resolver-rules: no DNS), loads the page and dumps its DOM
# once loaded (--dump-dom): the page's script makes its requests with
# synchronous XMLHttpRequests, one after another, so all are done by then.
# The API answers an OPTIONS with 204 and the CORS headers that allow the
# page's origin, its PUT and its `Content-Type`, and a PUT with 200.
#
#   preflight.pcap        PUT /items/1, PUT /items/2, PUT /items/2 again,
#                         each with `Content-Type: application/json` (not a
#                         CORS-safelisted type: a preflight is needed). The
#                         answers carry no Access-Control-Max-Age: Chromium
#                         asks OPTIONS before the first two (a preflight is
#                         cached per URL) and sends the third at once (its
#                         URL's preflight, 5 s old at most, is cached)
#   preflight-credentials.pcap  the same two first PUTs with cookies
#                         (withCredentials, Access-Control-Allow-Credentials),
#                         answers with Access-Control-Max-Age: 600. Chromium
#                         sends a preflight without credentials, so on a
#                         connection of its own: the PUT opens another
#   preflight-h2.pcapng   preflight.pcap's page over HTTP/2 inside TLS 1.3,
#                         Chromium's key log (SSLKEYLOGFILE) in the file's
#                         Decryption Secrets Block (editcap
#                         --inject-secrets): preflight and PUT are streams of
#                         one connection
#   preflight-haproxy.pcap  preflight.pcap's first two PUTs to an API behind
#                         HAProxy on 8091 (tests/data/audit/haproxy/cors.cfg),
#                         which answers the preflights itself (`http-request
#                         return`, no max age) and passes the PUTs to
#                         nginx's API
#   simple.pcap           control: a cross-origin GET and a POST with
#                         `Content-Type: text/plain` (simple requests: no
#                         preflight), and a PUT to the page's own origin
#   rejected.pcap         control: the API answers the preflight 403:
#                         Chromium never sends the PUT
#
# Needs root, ip, tcpdump, python3, nginx, haproxy, chromium, openssl,
# editcap.
# Everything it creates is removed on exit, also on failure; every wait is
# bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/cors}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtcors$$ /tmp/rttdoc-cors
chmod 755 "$work"
mkdir -p "$work/www"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=rttdoc.test -addext "subjectAltName=DNS:page.rttdoc.test,DNS:api.rttdoc.test" \
  >/dev/null 2>&1
chmod 644 "$work/key.pem"
# Chromium is told to trust this certificate's key by its SPKI's SHA-256.
spki=$(openssl x509 -in "$work/cert.pem" -pubkey -noout | openssl pkey -pubin -outform der |
  openssl dgst -sha256 -binary | base64)

# page NAME API BODY: $work/www/NAME.html, whose script runs BODY with
# `api` the API's origin and `send(method, url, type, credentials)` a
# synchronous request.
page() {
  cat > "$work/www/$1.html" <<HTML
<!doctype html><title>$1</title><body><pre id=o></pre><script>
var api = "$2";
function send(method, url, type, credentials) {
  var x = new XMLHttpRequest();
  x.open(method, url, false);
  x.withCredentials = !!credentials;
  if (type) x.setRequestHeader("Content-Type", type);
  try { x.send(method == "GET" ? null : '{"n":1}'); } catch (e) {}
  document.getElementById("o").textContent += method + " " + url + " " + x.status + "\n";
}
$3
</script></body>
HTML
}
http_api=http://api.rttdoc.test:8081
page preflight "$http_api" '
send("PUT", api + "/items/1", "application/json");
send("PUT", api + "/items/2", "application/json");
send("PUT", api + "/items/2", "application/json");'
page preflight-credentials "$http_api" '
send("PUT", api + "/cookie/1", "application/json", true);
send("PUT", api + "/cookie/2", "application/json", true);'
page preflight-h2 https://api.rttdoc.test:8444 '
send("PUT", api + "/items/1", "application/json");
send("PUT", api + "/items/2", "application/json");
send("PUT", api + "/items/2", "application/json");'
page preflight-haproxy http://api.rttdoc.test:8091 '
send("PUT", api + "/items/1", "application/json");
send("PUT", api + "/items/2", "application/json");'
page simple "$http_api" '
send("GET", api + "/items/1");
send("POST", api + "/items/2", "text/plain");
send("PUT", "/same/1", "application/json");'
page rejected "$http_api" '
send("PUT", api + "/closed/1", "application/json");'

# The API's answers: CORS headers for the page's origin ($http_origin, the
# page's scheme and port); `always` puts them on a 403 too.
cors='add_header Access-Control-Allow-Origin $http_origin always;
      add_header Access-Control-Allow-Methods "GET, PUT, POST" always;
      add_header Access-Control-Allow-Headers "Content-Type" always;'
relay_nginx "$(cat <<CONF
  server {
    listen 10.81.2.1:8080;
    listen 10.81.2.1:8443 ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    location /same/ { return 200 "ok\n"; }
  }
  server {
    listen 10.81.2.1:8081;
    listen 10.81.2.1:8444 ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    location /items/ {
      $cors
      if (\$request_method = OPTIONS) { return 204; }
      return 200 "ok\n";
    }
    location /cookie/ {
      $cors
      add_header Access-Control-Allow-Credentials true always;
      add_header Access-Control-Max-Age 600 always;
      if (\$request_method = OPTIONS) { return 204; }
      add_header Set-Cookie "s=1; SameSite=None; Secure";
      return 200 "ok\n";
    }
    location /closed/ {
      if (\$request_method = OPTIONS) { return 403; }
      return 200 "ok\n";
    }
  }
CONF
)"
ip netns exec "$S" haproxy -db -f "$here/../tests/data/audit/haproxy/cors.cfg" \
  > "$work/haproxy.log" 2>&1 &
for port in 8080 8081 8443 8444 8091; do relay_listening "$port"; done

# browse NAME URL STATUSES: headless Chromium loads URL in a fresh
# profile, for at most 15 s; its DOM in $work/NAME.dom, its log in
# $work/NAME.chromium. A browser whose page's requests did not end with
# STATUSES (each request's, in order, 0 for one refused) is given another
# try, the capture made again: on a loaded machine Chromium may not get
# as far as the requests, and once reset the connection its first
# request was to go on before sending it (the XHR failed, status 0).
browse() {
  local try got
  for try in 1 2 3; do
    rm -rf "$work/$1.profile"
    relay_capture "$1" bash -c 'exec timeout -k 2 15 chromium --headless --no-sandbox \
      --disable-gpu --user-data-dir="$1" --no-first-run --no-default-browser-check \
      --disable-background-networking --disable-component-update --disable-sync \
      --disable-default-apps --disable-extensions --no-pings --disable-breakpad \
      --disable-quic --host-resolver-rules="MAP *.rttdoc.test 10.81.2.1" \
      --ignore-certificate-errors-spki-list="$4" --dump-dom "$5" > "$2" 2> "$3"' \
      _ "$work/$1.profile" "$work/$1.dom" "$work/$1.chromium" "$spki" "$2" || true
    ip netns pids "$C" | xargs -r kill -9 2>/dev/null || true
    # (The page's script wrote each request's status; none when Chromium
    # did not get as far: grep finds nothing, which is a try to make
    # again, not the script's end.)
    got=$(grep -o ' [0-9]\+$' "$work/$1.dom" | tr -d ' ' | paste -sd ' ' || true)
    [[ $got == "$3" ]] && return
    echo "$1: the page's requests ended with '$got', not '$3' (try $try)" >&2
    cat "$work/$1.dom" >&2
    grep -v dbus "$work/$1.chromium" | tail -5 >&2
  done
  exit 1
}
browse preflight http://page.rttdoc.test:8080/preflight.html "200 200 200"
browse preflight-credentials http://page.rttdoc.test:8080/preflight-credentials.html "200 200"
browse preflight-haproxy http://page.rttdoc.test:8080/preflight-haproxy.html "200 200"
browse simple http://page.rttdoc.test:8080/simple.html "200 200 200"
browse rejected http://page.rttdoc.test:8080/rejected.html "0"
SSLKEYLOGFILE=$work/keys browse preflight-h2 https://page.rttdoc.test:8443/preflight-h2.html "200 200 200"
editcap --inject-secrets "tls,$work/keys" "$work/preflight-h2.pcap" "$work/preflight-h2.pcapng"
gzip -9n -c "$work/preflight-h2.pcapng" > "$out/preflight-h2.pcapng.gz"
for name in preflight preflight-credentials preflight-haproxy simple rejected; do
  gzip -9n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
for name in preflight preflight-credentials preflight-h2 preflight-haproxy simple rejected; do
  echo "== $name"
  cat "$work/$name.dom" | grep ' [0-9]\+$' || true
done
echo "made $out: preflight preflight-credentials preflight-h2 preflight-haproxy simple rejected"
