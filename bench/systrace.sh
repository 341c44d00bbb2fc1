#!/bin/bash
# bench/systrace.sh - importing a system trace (sched, thread_state,
# processes, ftrace events, system counters): gpuperf's trace processor
# beside Perfetto's own, interleaved, on the same trace and query.
#
#   bench/systrace.sh [TRACE] [RUNS]
#
# TRACE defaults to tests/data/systrace/sys_30s.pftrace (30 s recorded with
# Perfetto's traced_probes), RUNS to 7. Each run is one process that
# imports the trace and counts the sched rows: wall time and CPU time
# (user + system; bash's time, to the ms) and peak resident memory
# (/usr/bin/time), printed as median [min..max]. GPUPERF_PERFETTO_TP names Perfetto's
# trace_processor_shell; without it, only gpuperf's figures are printed.
# Targets (issue 37): at least 2x faster, at most half the memory.
set -eu
. "$(dirname "$0")/stats.sh"
G=${GPUPERF:-build/gpuperf}
TRACE=${1:-tests/data/systrace/sys_30s.pftrace}
RUNS=${2:-7}
[ -x "$G" ] || { echo "bench/systrace.sh: $G is not built (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/systrace.sh: needs /usr/bin/time" >&2; exit 1; }
[ -r "$TRACE" ] || { echo "bench/systrace.sh: no $TRACE" >&2; exit 1; }
TP=${GPUPERF_PERFETTO_TP:-}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-systrace.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM
SQL="select count(*) from sched"
echo "$SQL" >"$DIR/q.sql"
i=0
TIMEFORMAT="%3R %3U %3S"
# measure NAME CMD...: one run; "wall user sys rss_kb" into time_NAME.$i
measure() {
  name=$1
  shift
  { time /usr/bin/time -f "%M" -o "$DIR/rss" "$@" >"$DIR/out_$name" \
      2>/dev/null; } 2>"$DIR/t"
  echo "$(cat "$DIR/t") $(tail -n 1 "$DIR/rss")" >"$DIR/time_$name.$i"
}
while [ $i -lt "$RUNS" ]; do
  measure g "$G" query "$TRACE" "$SQL" --format csv
  [ -z "$TP" ] || measure p "$TP" -q "$DIR/q.sql" "$TRACE"
  i=$((i + 1))
done
# "MED MIN MAX" of column c (1 wall, 2 cpu, 3 rss KB) of files $1.*
stat() {
  for f in "$DIR/time_$1".*; do
    awk -v c="$2" '{ split($1 " " $2 + $3 " " $4, v, " "); print v[c] }' "$f"
  done | stats_of
}
show() {
  set -- $(stat "$1" 1) $(stat "$1" 2) $(stat "$1" 3)
  printf "  %-9s wall %.3f s [%.3f..%.3f]  cpu %.3f s [%.3f..%.3f]  peak %.1f MB [%.1f..%.1f]\n" \
    "$NAME" "$1" "$2" "$3" "$4" "$5" "$6" \
    "$(echo "$7" | awk '{print $1/1024}')" "$(echo "$8" | awk '{print $1/1024}')" \
    "$(echo "$9" | awk '{print $1/1024}')"
}
printf "system trace import: %s (%.1f MB), %s runs interleaved, %d CPUs, load %s\n" \
  "$TRACE" "$(wc -c <"$TRACE" | awk '{print $1/1048576}')" "$RUNS" \
  "$(nproc)" "$(cut -d" " -f1-3 /proc/loadavg)"
printf "  sched rows: %s\n" "$(tail -n 1 "$DIR/out_g")"
NAME=gpuperf show g
if [ -z "$TP" ]; then
  echo "  Perfetto: skipped (GPUPERF_PERFETTO_TP is not set)"
  exit 0
fi
[ "$(tail -n 1 "$DIR/out_g")" = "$(tail -n 1 "$DIR/out_p")" ] ||
  { echo "bench/systrace.sh: the two answers differ" >&2; exit 1; }
NAME=Perfetto show p
set -- $(stat g 2) $(stat p 2)
CPU="$1 $4"
set -- $(stat g 3) $(stat p 3)
awk -v c="$CPU" -v g="$1" -v p="$4" 'BEGIN { split(c, x, " ");
  printf "  Perfetto / gpuperf: cpu %.2fx, peak memory %.2fx (targets >= 2x, >= 2x)\n",
         x[2] / x[1], p / g }'
