#!/bin/sh
# bench/batch.sh - batch queries: the same SQL on 32 demo traces with one
# worker, then with two, in ROUNDS interleaved rounds; prints both times
# and the speed-up as median [min..max].
#
#   bench/batch.sh [GPUPERF] [STEPS] [ROUNDS]
#
# GPUPERF defaults to build/gpuperf, STEPS (training steps per trace) to
# 200, ROUNDS to 5. The traces are made in a temporary folder and removed. The speed-up
# is bounded by the cores free: on a loaded machine it is lower.
set -eu
. "$(dirname "$0")/stats.sh"
G=${1:-build/gpuperf}
STEPS=${2:-200}
ROUNDS=${3:-5}
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
# ROUNDS rounds, each -j 1 then -j 2 (interleaved, so that the machine's
# load falls on both alike); the figures are medians with [min..max].
r=0
: >"$DIR/times"
while [ $r -lt "$ROUNDS" ]; do
  t0=$(now)
  "$G" query "$DIR/*.pftrace" "$SQL" -j 1 -q --format csv >"$DIR/one.csv"
  t1=$(now)
  "$G" query "$DIR/*.pftrace" "$SQL" -j 2 -q --format csv >"$DIR/two.csv"
  t2=$(now)
  cmp -s "$DIR/one.csv" "$DIR/two.csv" || { echo "results differ" >&2; exit 1; }
  echo "$t0 $t1 $t2" >>"$DIR/times"
  r=$((r + 1))
done
BYTES=$(cat "$DIR"/run*.pftrace | wc -c)
MIB=$(awk -v b="$BYTES" 'BEGIN { print b / 1048576 }')
# col EXPR: EXPR of each round's "t0 t1 t2" ($1 $2 $3), one a line.
col() { awk "{ print $1 }" "$DIR/times"; }
printf "batch query: 32 traces, %.1f MiB, %d result rows, %d CPUs online, load %s; %d interleaved rounds, median [min..max]\n" \
  "$MIB" "$(($(wc -l <"$DIR/one.csv") - 1))" "$(nproc)" \
  "$(cut -d" " -f1-3 /proc/loadavg)" "$ROUNDS"
printf "  -j 1: %s s (%s MiB/s)\n" "$(col '$2 - $1' | spread %.3f)" \
  "$(col "$MIB / (\$2 - \$1)" | spread %.1f)"
printf "  -j 2: %s s (%s MiB/s)\n" "$(col '$3 - $2' | spread %.3f)" \
  "$(col "$MIB / (\$3 - \$2)" | spread %.1f)"
printf "  speed-up 1 -> 2 workers, per round: %sx\n" \
  "$(col '($2 - $1) / ($3 - $2)' | spread %.2f)"
