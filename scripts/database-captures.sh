#!/usr/bin/env bash
# Makes the captures behind crates/rttdoc/tests/database.rs
# (tests/data/database/*.pcap.gz): PostgreSQL and its own clients, real
# Linux TCP, tcpdump in the client's namespace, across a path of 20 ms
# each way:
#
#   client ns --veth-- router ns --veth-- server ns
#                         |
#          TUN <-> scripts/tun-delay.py <-> TUN   (20 ms)
#
#   psql-sleep.pcap        psql runs three statements on one connection,
#                          the second `select pg_sleep(0.3)`: 300 ms of the
#                          server's, the others answered at once
#   pgbench-pipeline.pcap  pgbench (extended protocol) sends four SELECTs
#                          in a pipeline, one of them `pg_sleep(0.05)`, and
#                          a Sync, again and again for 3 s: each pipeline's
#                          results leave once all four ran (50 ms of the
#                          server's each)
#   pgbench-select.pcap    pgbench's select-only load, two clients, simple
#                          protocol (the control: the server answers at
#                          once)
#   pg-listen.pcap         a psycopg2 client LISTENs on a channel for 4.5 s
#                          while psql sessions from the same host NOTIFY
#                          it four times, 0.7 s apart: the server pushes
#                          each notification to the listener, which then
#                          runs one more query
#
# Needs root, ip, tcpdump, python3 (and python3-psycopg2 from Debian:
# /usr/bin/python3), postgresql (initdb, postgres, psql, pgbench).
set -euo pipefail
out=$(realpath -m "${1:?usage: $0 OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=relay-path.sh
. "$here/relay-path.sh"
relay_lab rtdb$$ /tmp/rttdoc-database
chmod 755 "$work"

# Debian keeps postgres and initdb out of PATH, under /usr/lib/postgresql/N/bin.
pg_bin=$(dirname "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb | tail -1)")
mkdir -p "$work/pg"
chown nobody "$work/pg"
runuser -u nobody -- "$pg_bin/initdb" -A trust -U nobody -D "$work/pg/data" >/dev/null
echo "host all all 10.81.0.0/16 trust" >> "$work/pg/data/pg_hba.conf"
ip netns exec $S runuser -u nobody -- "$pg_bin/postgres" -D "$work/pg/data" -k "$work/pg" \
  -h 10.81.2.1 -p 5433 > "$work/postgres.log" 2>&1 & pids+=($!)
ip netns exec $M python3 "$here/tun-delay.py" ta tb 20 90 & pids+=($!)
for _ in $(seq 50); do
  ip netns exec $C "$pg_bin/pg_isready" -q -h 10.81.2.1 -p 5433 && break
  sleep 0.2
done

cat > "$work/pipeline.sql" <<'SQL'
\startpipeline
SELECT 1;
SELECT pg_sleep(0.05);
SELECT 3;
SELECT 4;
\endpipeline
SQL
chmod 644 "$work/pipeline.sql"

# One workload with tcpdump on the client's interface: $1 name, then the
# command run in the client's namespace as nobody.
capture() {
  local name=$1; shift
  timeout 60 ip netns exec $C tcpdump -i c0 -s 0 -U -w "$work/$name.pcap" tcp 2>/dev/null & local td=$!
  sleep 1
  timeout 40 ip netns exec $C runuser -u nobody -- "$@" > /dev/null
  sleep 1
  kill -TERM $td
  wait $td 2>/dev/null || true
  gzip -9 -n -c "$work/$name.pcap" > "$out/$name.pcap.gz"
}
db="host=10.81.2.1 port=5433 user=nobody dbname=postgres sslmode=disable"
pgbench=(pgbench -h 10.81.2.1 -p 5433 -U nobody)
# pgbench's tables (for its select-only load), before any capture.
ip netns exec $C runuser -u nobody -- "${pgbench[@]}" -i -s 1 -q postgres > /dev/null 2>&1
capture psql-sleep psql "$db" -c "select 1" -c "select pg_sleep(0.3)" -c "select 2"
capture pgbench-pipeline "${pgbench[@]}" -f "$work/pipeline.sql" -T 3 -c 1 -M extended postgres
capture pgbench-select "${pgbench[@]}" -S -T 3 -c 2 postgres
cat > "$work/listen.py" <<'PY'
import select, subprocess, sys, time
import psycopg2
db = sys.argv[1]
c = psycopg2.connect(db)
c.set_isolation_level(0)
cur = c.cursor()
cur.execute("LISTEN feed")
notify = "for i in 1 2 3 4; do sleep 0.7; psql -q '%s' -c \"NOTIFY feed, 'n$i'\"; done" % db
n = subprocess.Popen(["bash", "-c", notify])
end = time.time() + 4.5
while time.time() < end:
    if select.select([c], [], [], 0.5)[0]:
        c.poll()
        c.notifies.clear()
cur.execute("SELECT 1")
n.wait()
PY
chmod 644 "$work/listen.py"
capture pg-listen /usr/bin/python3 "$work/listen.py" "$db"
ls -l "$out"
