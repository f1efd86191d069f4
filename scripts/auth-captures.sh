#!/usr/bin/env bash
# Makes tests/data/auth/: clients answering HTTP authentication
# challenges, with the kernel, nginx, tinyproxy and curl as producers, real
# Linux TCP, tcpdump in the client's namespace, across a path of 20 ms
# each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
# In the server's namespace (10.81.2.1): nginx on 8080 with `auth_basic`
# on /private/ (user u, password p); a Python HTTP/1.1 server on 8081
# that asks for NTLM (it checks nothing: it answers an NTLM negotiate
# message with a challenge message, and serves the request that carries
# the authenticate message, all on one connection); tinyproxy on 8888
# with `BasicAuth u p`, in front of nginx; Apache httpd on 8082 with
# `AuthType Digest` on /private/ (mod_auth_digest: MD5, qop=auth).
#
#   basic-anyauth.pcap   curl --anyauth: asks without credentials, is
#                        challenged (401 Basic), asks again with them
#   ntlm-anyauth.pcap    curl --anyauth against NTLM: 401 NTLM, then the
#                        negotiate message and a second 401, then the
#                        authenticate message, served
#   ntlm.pcap            curl --ntlm: the negotiate message with the first
#                        request, one 401, served
#   proxy-anyauth.pcap   curl --proxy-anyauth through tinyproxy: 407
#                        Basic, then the request with Proxy-Authorization
#   basic-anyauth-tls.pcapng  the same as basic-anyauth over TLS 1.3
#                        (nginx on 8443, curl --http1.1), curl's key log
#                        (SSLKEYLOGFILE) in the file's Decryption Secrets
#                        Block (editcap --inject-secrets), as Wireshark users
#                        keep it
#   basic-anyauth-tls12.pcapng  the same over TLS 1.2 (curl --tls-max 1.2:
#                        ECDHE-ECDSA-AES256-GCM-SHA384), its key log's
#                        CLIENT_RANDOM line injected
#   basic-anyauth-tls12-chacha.pcapng  the same with
#                        ECDHE-ECDSA-CHACHA20-POLY1305
#   digest.pcap          curl --digest against Apache: asks without
#                        credentials (curl has no nonce yet), is challenged
#                        (401 Digest with a nonce), asks again answering it
#   basic-anyauth-h2.pcapng  the same as basic-anyauth-tls in HTTP/2
#                        (curl --http2): the 401 on stream 1, the request
#                        again with credentials on stream 3
#   basic-rejected-h2.pcapng  control: the same with a wrong password: 401
#                        on both streams, nothing served
#   basic-preemptive.pcap  control: curl -u sends Basic with the first
#                        request: never challenged
#   basic-rejected.pcap  control: curl --anyauth with a wrong password: 401,
#                        the request again, 401 again: nothing served
#   basic-later.pcap     control: a 401, and the same request with
#                        credentials 3 s later (a person typing)
#
# Needs root, ip, tcpdump, python3, nginx, tinyproxy, apache2, curl,
# openssl, editcap. Everything it
# creates is removed on exit, also on failure; every wait is bounded.
set -euo pipefail
out=$(realpath -m "${1:-$(dirname "$0")/../tests/data/auth}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtauth$$ /tmp/rttdoc-auth
chmod 755 "$work"
mkdir -p "$work/www/private"
head -c 600 /dev/zero | tr '\0' a > "$work/www/a.txt"
head -c 600 /dev/zero | tr '\0' p > "$work/www/private/report.txt"
printf 'u:{PLAIN}p\n' > "$work/htpasswd"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 -subj /CN=rttdoc.test >/dev/null 2>&1
relay_nginx "$(cat <<CONF
  server {
    listen 10.81.2.1:8080;
    listen 10.81.2.1:8443 ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    location /private/ {
      auth_basic "rttdoc";
      auth_basic_user_file $work/htpasswd;
    }
  }
CONF
)"

cat > "$work/ntlm.py" <<'PY'
import base64, http.server, struct

# An NTLM challenge message (type 2): signature, type, an empty target
# name at offset 32, flags (Unicode, NTLM, NTLM2 key), the server's
# challenge, a reserved context.
CHALLENGE = (b"NTLMSSP\0" + struct.pack("<I", 2) + struct.pack("<HHI", 0, 0, 32)
             + struct.pack("<I", 0x00088201) + b"\x01\x23\x45\x67\x89\xab\xcd\xef" + b"\0" * 8)

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, header=None, body=b""):
        self.send_response(status)
        if header:
            self.send_header("WWW-Authenticate", header)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("NTLM "):
            return self.answer(401, "NTLM")
        message = base64.b64decode(auth[5:])
        kind = struct.unpack("<I", message[8:12])[0]
        if kind == 1:
            return self.answer(401, "NTLM " + base64.b64encode(CHALLENGE).decode())
        self.answer(200, body=b"n" * 600)

http.server.HTTPServer(("10.81.2.1", 8081), Handler).serve_forever()
PY
ip netns exec "$S" python3 "$work/ntlm.py" &

cat > "$work/tinyproxy.conf" <<CONF
Port 8888
Listen 10.81.2.1
Timeout 30
MaxClients 10
BasicAuth u p
CONF
ip netns exec "$S" tinyproxy -d -c "$work/tinyproxy.conf" > "$work/tinyproxy.log" 2>&1 &

# Apache httpd with Digest authentication (its own configuration: only
# the modules it needs; `htdigest`'s line written here: user:realm:MD5).
printf 'u:rttdoc:%s\n' "$(printf 'u:rttdoc:p' | md5sum | cut -d' ' -f1)" > "$work/htdigest"
mods=/usr/lib/apache2/modules
cat > "$work/apache.conf" <<CONF
ServerName rttdoc.test
ServerRoot $work
Listen 10.81.2.1:8082
PidFile $work/apache.pid
ErrorLog $work/apache-error.log
Mutex file:$work default
LoadModule mpm_event_module $mods/mod_mpm_event.so
LoadModule authn_core_module $mods/mod_authn_core.so
LoadModule authn_file_module $mods/mod_authn_file.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule authz_user_module $mods/mod_authz_user.so
LoadModule auth_digest_module $mods/mod_auth_digest.so
User nobody
Group nogroup
DocumentRoot $work/www
<Directory $work/www>
  Require all granted
</Directory>
<Location /private/>
  AuthType Digest
  AuthName "rttdoc"
  AuthDigestProvider file
  AuthUserFile $work/htdigest
  Require valid-user
</Location>
CONF
chmod 644 "$work/htdigest"
ip netns exec "$S" apache2 -f "$work/apache.conf" -k start
relay_listening 8080
relay_listening 8443
relay_listening 8081
relay_listening 8888
relay_listening 8082

r="--resolve rttdoc.test:8080:10.81.2.1 --resolve rttdoc.test:8081:10.81.2.1"
r="$r --resolve rttdoc.test:8082:10.81.2.1"
r="$r --resolve rttdoc.test:8443:10.81.2.1"
u=http://rttdoc.test:8080/private/report.txt
cat > "$work/later.sh" <<SH
curl -s $r "$u" -o /dev/null
sleep 3
curl -s $r -u u:p "$u" -o /dev/null
SH
# shellcheck disable=SC2086
{
  relay_capture basic-anyauth curl -s $r --anyauth -u u:p "$u"
  relay_capture ntlm-anyauth curl -s $r --anyauth -u u:p http://rttdoc.test:8081/report
  relay_capture ntlm curl -s $r --ntlm -u u:p http://rttdoc.test:8081/report
  relay_capture proxy-anyauth curl -s $r -x http://10.81.2.1:8888 --proxy-anyauth -U u:p \
    http://10.81.2.1:8080/a.txt
  SSLKEYLOGFILE=$work/keys relay_capture basic-anyauth-tls curl -sk $r --http1.1 --anyauth -u u:p \
    https://rttdoc.test:8443/private/report.txt
  SSLKEYLOGFILE=$work/keys12 relay_capture basic-anyauth-tls12 curl -sk $r --http1.1 --tls-max 1.2 \
    --anyauth -u u:p https://rttdoc.test:8443/private/report.txt
  SSLKEYLOGFILE=$work/keys12c relay_capture basic-anyauth-tls12-chacha curl -sk $r --http1.1 \
    --tls-max 1.2 --ciphers ECDHE-ECDSA-CHACHA20-POLY1305 --anyauth -u u:p \
    https://rttdoc.test:8443/private/report.txt
  SSLKEYLOGFILE=$work/keysh2 relay_capture basic-anyauth-h2 curl -sk $r --http2 --anyauth -u u:p \
    https://rttdoc.test:8443/private/report.txt
  SSLKEYLOGFILE=$work/keysh2r relay_capture basic-rejected-h2 curl -sk $r --http2 --anyauth \
    -u u:wrong https://rttdoc.test:8443/private/report.txt
  relay_capture digest curl -s $r --digest -u u:p http://rttdoc.test:8082/private/report.txt
  relay_capture basic-preemptive curl -s $r -u u:p "$u"
  relay_capture basic-rejected curl -s $r --anyauth -u u:wrong "$u"
  relay_capture basic-later bash "$work/later.sh"
}

for tls in anyauth-tls:keys anyauth-tls12:keys12 anyauth-tls12-chacha:keys12c \
  anyauth-h2:keysh2 rejected-h2:keysh2r; do
  name=basic-${tls%%:*}
  editcap --inject-secrets "tls,$work/${tls##*:}" "$work/$name.pcap" "$work/$name.pcapng"
  gzip -9n -c "$work/$name.pcapng" > "$out/$name.pcapng.gz"
done
names="basic-anyauth ntlm-anyauth ntlm proxy-anyauth digest basic-preemptive basic-rejected"
names="$names basic-later"
for name in $names; do
  gzip -9n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
done
echo "made $out: $names basic-anyauth-tls basic-anyauth-tls12 basic-anyauth-tls12-chacha" \
  "basic-anyauth-h2 basic-rejected-h2"
