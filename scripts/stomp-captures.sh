#!/usr/bin/env bash
# Makes the capture behind crates/rttdoc/tests/stomp.rs
# (tests/data/stomp/rabbitmq-stomp.pcap.gz): RabbitMQ's STOMP plugin and
# the stomp.py client library (installed into a virtualenv in the work
# directory), real Linux TCP, tcpdump in the clients' namespace, across a
# path of 20 ms each way (scripts/relay-path.sh). A subscriber with 1 s
# heart-beats both ways acknowledges each message (client-individual);
# a sender sends five messages 0.7-1.2 s apart, each asking for a
# receipt; both disconnect asking for one.
#
# Needs root, ip, tcpdump, python3 (with venv and network access to PyPI
# for stomp.py) and rabbitmq-server.
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtstomp$$ /tmp/rttdoc-stomp
chmod 755 "$work"
extra_cleanup() { relay_stop_servers; }
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q stomp.py
py=$work/venv/bin/python

relay_rabbitmq '[rabbitmq_stomp]' 'stomp.listeners.tcp.1 = 61613'
relay_listening 61613 900

cat > "$work/subscriber.py" <<'PY'
import stomp, time
got = []
class Listener(stomp.ConnectionListener):
    def on_message(self, frame):
        got.append(frame.body)
        conn.ack(frame.headers["message-id"], frame.headers["subscription"])
conn = stomp.Connection([("10.81.2.1", 61613)], heartbeats=(1000, 1000))
conn.set_listener("l", Listener())
conn.connect("guest", "guest", wait=True)
conn.subscribe("/queue/test", id=1, ack="client-individual")
start = time.time()
while len(got) < 5 and time.time() - start < 15:
    time.sleep(0.05)
conn.disconnect(receipt="bye")
PY
cat > "$work/sender.py" <<'PY'
import stomp, time
conn = stomp.Connection([("10.81.2.1", 61613)])
conn.connect("guest", "guest", wait=True)
for i, pause in enumerate([0.7, 1.0, 0.8, 1.2, 0.9]):
    conn.send("/queue/test", "message %d" % i, headers={"receipt": "r%d" % i})
    time.sleep(pause)
conn.disconnect(receipt="done")
PY
cat > "$work/workload.sh" <<SH
$py $work/subscriber.py &
sub=\$!
sleep 1
$py $work/sender.py
wait \$sub
SH
relay_capture rabbitmq-stomp bash "$work/workload.sh"
relay_stop_servers
sleep 0.5
gzip -9 -n -c "$work/rabbitmq-stomp.pcap" > "$out/rabbitmq-stomp.pcap.gz"
ls -l "$out/rabbitmq-stomp.pcap.gz"
