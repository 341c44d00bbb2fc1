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
awk -v bytes="$BYTES" -v load="$(cut -d" " -f1-3 /proc/loadavg)" \
    -v rows="$(($(wc -l <"$DIR/one.csv") - 1))" -v cpus="$(nproc)" '
function sort(a, n,   i, j, t) {
  for (i = 2; i <= n; i++)
    for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
}
function spread(a, n, fmt,   m) {
  sort(a, n)
  m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  return sprintf(fmt " [" fmt ".." fmt "]", m, a[1], a[n])
}
{ n++; one[n] = $2 - $1; two[n] = $3 - $2; up[n] = one[n] / two[n];
  r1[n] = bytes / 1048576 / one[n]; r2[n] = bytes / 1048576 / two[n] }
END {
  printf "batch query: 32 traces, %.1f MiB, %d result rows, %d CPUs online, load %s; %d interleaved rounds, median [min..max]\n",
         bytes / 1048576, rows, cpus, load, n;
  printf "  -j 1: %s s (%s MiB/s)\n", spread(one, n, "%.3f"), spread(r1, n, "%.1f");
  printf "  -j 2: %s s (%s MiB/s)\n", spread(two, n, "%.3f"), spread(r2, n, "%.1f");
  printf "  speed-up 1 -> 2 workers, per round: %sx\n", spread(up, n, "%.2f");
}' "$DIR/times"
