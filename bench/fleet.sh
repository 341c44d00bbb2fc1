#!/bin/bash
# bench/fleet.sh - a simulated fleet into a two-shard ClickHouse cluster:
# N node traces (`gpuperf demo --machines N`) exported J at a time, as the
# nodes of a job would each export their own window.
#
#   bench/fleet.sh [NODES] [JOBS...]
#
# NODES defaults to 64 (demo --gpus 8 --steps 50 each), JOBS to "1 2 4":
# for each J, a fresh database on two local clickhouse-server processes
# (Debian's; loopback ports, data in a temporary folder, stopped by their
# PIDs at the end), every trace exported with `--cluster`, J exports at a
# time (xargs -P). Prints per J the wall time, the rows in ClickHouse
# and rows per second (the import of every trace included), the
# connections the servers saw (distinct client ports in
# system.query_log), and the balance: each shard's share of the GPU
# slices and of the traces.
set -eu
G=${GPUPERF:-build/gpuperf}
NODES=${1:-64}
shift || true
JOBS=${*:-1 2 4}
[ -x "$G" ] || { echo "bench/fleet.sh: $G is not built (make)" >&2; exit 1; }
command -v clickhouse-server >/dev/null && command -v clickhouse-client >/dev/null || {
  echo "bench/fleet.sh: needs clickhouse-server and clickhouse-client (Debian)" >&2
  exit 1
}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-fleet.XXXXXX")
PIDS=""
cleanup() {
  for p in $PIDS; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in $PIDS; do
    for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  rm -rf "$DIR"
}
trap cleanup EXIT INT TERM
# free ports: bind to 0 and read back (python3 is installed with the tests)
read -r H0 T0 H1 T1 < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
cat >"$DIR/users.xml" <<EOF
<yandex><profiles><default><log_queries>1</log_queries></default></profiles>
<users><default><password></password><networks><ip>127.0.0.1</ip></networks>
<profile>default</profile><quota>default</quota></default></users>
<quotas><default/></quotas></yandex>
EOF
for i in 0 1; do
  eval "H=\$H$i T=\$T$i"
  mkdir -p "$DIR/s$i/tmp" "$DIR/s$i/files"
  cat >"$DIR/server$i.xml" <<EOF
<yandex>
 <logger><level>warning</level><log>$DIR/s$i/log</log><errorlog>$DIR/s$i/err</errorlog></logger>
 <http_port>$H</http_port><tcp_port>$T</tcp_port><listen_host>127.0.0.1</listen_host>
 <path>$DIR/s$i/</path><tmp_path>$DIR/s$i/tmp/</tmp_path><user_files_path>$DIR/s$i/files/</user_files_path>
 <users_config>$DIR/users.xml</users_config>
 <default_profile>default</default_profile><default_database>default</default_database>
 <mark_cache_size>67108864</mark_cache_size>
 <query_log><database>system</database><table>query_log</table><flush_interval_milliseconds>500</flush_interval_milliseconds></query_log>
 <remote_servers><gp>
  <shard><replica><host>127.0.0.1</host><port>$T0</port></replica></shard>
  <shard><replica><host>127.0.0.1</host><port>$T1</port></replica></shard>
 </gp></remote_servers>
</yandex>
EOF
  clickhouse-server --config-file="$DIR/server$i.xml" >"$DIR/s$i.out" 2>&1 &
  PIDS="$PIDS $!"
done
q() { clickhouse-client --port "$1" -q "$2"; }
for T in "$T0" "$T1"; do
  for _ in $(seq 1 300); do q "$T" "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
  q "$T" "SELECT 1" >/dev/null || { echo "bench/fleet.sh: a server did not start" >&2; exit 1; }
done
echo "bench/fleet.sh: making $NODES node traces (demo --machines $NODES --gpus 8 --steps 50)"
"$G" demo --machines "$NODES" --gpus 8 --steps 50 -o "$DIR/job.pftrace" >/dev/null
ls "$DIR"/job-node*.pftrace >"$DIR/list"
MB=$(du -cm $(cat "$DIR/list") | tail -n 1 | cut -f1)
echo "  $(wc -l <"$DIR/list") traces, $MB MB"
k=0
for J in $JOBS; do
  k=$((k + 1))
  DB=fleet_${k}_j$J
  for T in "$T0" "$T1"; do q "$T" "CREATE DATABASE $DB"; done
  URL="clickhouse://127.0.0.1:$H0,127.0.0.1:$H1/$DB"
  sleep 1 # (query_log's times are in seconds)
  since=$(date +%s)
  t0=$(date +%s.%N)
  xargs -P "$J" -I{} "$G" export {} --to "$URL" --cluster gp -q <"$DIR/list"
  t1=$(date +%s.%N)
  rows=0
  for tb in gpu_slice counter track slice flow gpu machine process; do
    n=$(q "$T0" "SELECT count() FROM $DB.$tb")
    rows=$((rows + n))
  done
  s0=$(q "$T0" "SELECT count() FROM $DB.gpu_slice_local")
  s1=$(q "$T1" "SELECT count() FROM $DB.gpu_slice_local")
  n0=$(q "$T0" "SELECT uniqExact(trace) FROM $DB.gpu_slice_local")
  conn=0
  for T in "$T0" "$T1"; do
    q "$T" "SYSTEM FLUSH LOGS"
    c=$(q "$T" "SELECT uniqExact(port) FROM system.query_log WHERE http_user_agent LIKE 'gpuperf-export/%' AND event_time >= toDateTime($since)")
    conn=$((conn + c))
  done
  awk -v j="$J" -v w="$(echo "$t1 - $t0" | bc)" -v r="$rows" -v s0="$s0" -v s1="$s1" \
    -v n0="$n0" -v n="$NODES" -v c="$conn" 'BEGIN {
    printf "  -j %d: %.1f s, %d rows (%.0f rows/s); %s connections; shard 0 holds %d of %d GPU slices (%.1f%%, %d of %d traces)\n",
      j, w, r, r / w, c, s0, s0 + s1, 100 * s0 / (s0 + s1), n0, n }'
done
