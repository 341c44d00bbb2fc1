#!/bin/sh
# bench/batch.sh - batch queries: the same SQL on 32 demo traces with one
# worker, then with two, in one run; prints both times and the speed-up.
#
#   bench/batch.sh [GPUPERF] [STEPS]
#
# GPUPERF defaults to build/gpuperf, STEPS (training steps per trace) to
# 200. The traces are made in a temporary folder and removed. The speed-up
# is bounded by the cores free: on a loaded machine it is lower.
set -eu
G=${1:-build/gpuperf}
STEPS=${2:-200}
[ -x "$G" ] || { echo "bench/batch.sh: $G is not built (make all)" >&2; exit 1; }
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-batch.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM
i=0
while [ $i -lt 32 ]; do
  "$G" demo --steps "$STEPS" -o "$DIR/run$i.pftrace" >/dev/null
  i=$((i + 1))
done
SQL="SELECT name, count(*) AS n, sum(dur) AS busy FROM gpu_slice GROUP BY name"
now() { date +%s.%N; }
t0=$(now)
"$G" query "$DIR/*.pftrace" "$SQL" -j 1 -q --format csv >"$DIR/one.csv"
t1=$(now)
"$G" query "$DIR/*.pftrace" "$SQL" -j 2 -q --format csv >"$DIR/two.csv"
t2=$(now)
cmp -s "$DIR/one.csv" "$DIR/two.csv" || { echo "results differ" >&2; exit 1; }
BYTES=$(cat "$DIR"/run*.pftrace | wc -c)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v bytes="$BYTES" \
    -v load="$(cut -d" " -f1-3 /proc/loadavg)" -v rows="$(($(wc -l <"$DIR/one.csv") - 1))" -v cpus="$(nproc)" 'BEGIN {
  one = b - a; two = c - b;
  printf "batch query: 32 traces, %.1f MiB, %d result rows, %d CPUs online, load %s\n",
         bytes / 1048576, rows, cpus, load;
  printf "  -j 1: %.3f s (%.1f MiB/s)\n", one, bytes / 1048576 / one;
  printf "  -j 2: %.3f s (%.1f MiB/s)\n", two, bytes / 1048576 / two;
  printf "  speed-up 1 -> 2 workers: %.2fx\n", one / two;
}'
