#!/bin/sh
# perfetto-stats-check.sh [N] - records N traces of a Vulkan program
# (vkcubepp --c 60 on lavapipe, under xvfb-run) and N of the demo, and
# checks each with Perfetto's trace processor: no error or data-loss stat,
# and the same non-zero stats in gpuperf's trace processor as in Perfetto's.
#
# Needs GPUPERF_PERFETTO_TP (Perfetto's trace_processor_shell, built
# outside the repository) and a built tree (make). Prints one line per
# trace and a summary; exits 1 if any trace fails, 77 if it cannot run.
# The stats left out of the comparison are Perfetto's bookkeeping about
# its own import and the four that only gpuperf has (docs/sql.md).
set -u
n=${1:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
gp="$root/build/gpuperf"
tp=${GPUPERF_PERFETTO_TP:-}
if [ -z "$tp" ] || [ ! -x "$tp" ]; then
  echo "perfetto-stats-check: GPUPERF_PERFETTO_TP does not name Perfetto's trace_processor_shell" >&2
  exit 77
fi
if [ ! -x "$gp" ]; then
  echo "perfetto-stats-check: $gp is not built (run make)" >&2
  exit 77
fi
vk=yes
if ! command -v xvfb-run >/dev/null || ! command -v vkcubepp >/dev/null; then
  echo "perfetto-stats-check: no xvfb-run or vkcubepp: demo traces only" >&2
  vk=no
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-stats.XXXXXX")
trap 'rm -rf "$dir"' EXIT

stats_sql="SELECT name, idx, severity, source, value FROM stats WHERE value != 0 AND name NOT LIKE '%_duration_ns' AND name != 'clock_sync_cache_miss' AND name NOT IN ('packet_type_not_imported', 'trace_truncated_bytes', 'sequence_previous_packet_dropped', 'clock_snapshot_invalid') ORDER BY name, idx"
err_sql="SELECT count(*) AS n FROM stats WHERE value > 0 AND severity IN ('error', 'data_loss')"
echo "$stats_sql" >"$dir/stats.sql"
echo "$err_sql" >"$dir/err.sql"

bad=0
total=0
check() { # check NAME TRACE
  total=$((total + 1))
  if ! "$tp" -q "$dir/stats.sql" "$2" >"$dir/theirs.csv" 2>"$dir/tp.err" ||
    ! "$tp" -q "$dir/err.sql" "$2" >"$dir/err.csv" 2>>"$dir/tp.err"; then
    echo "FAIL $1: Perfetto's trace processor failed: $(tail -n 2 "$dir/tp.err")"
    bad=$((bad + 1))
    return
  fi
  "$gp" query "$2" "$stats_sql" --format csv >"$dir/ours.csv" 2>&1
  errs=$(tail -n 1 "$dir/err.csv")
  nstats=$(($(wc -l <"$dir/theirs.csv") - 1))
  if [ "$errs" != 0 ]; then
    echo "FAIL $1: $errs error or data-loss stats in Perfetto's trace processor:"
    sed 1d "$dir/theirs.csv"
    bad=$((bad + 1))
  elif ! cmp -s "$dir/theirs.csv" "$dir/ours.csv"; then
    echo "FAIL $1: stats differ (< Perfetto's, > ours):"
    diff "$dir/theirs.csv" "$dir/ours.csv" | grep '^[<>]'
    bad=$((bad + 1))
  else
    echo "ok   $1: 0 error stats, $nstats non-zero stats equal"
  fi
}

i=1
while [ "$i" -le "$n" ]; do
  if [ "$vk" = yes ]; then
    if xvfb-run -a "$gp" record -q -o "$dir/vk.pftrace" -- vkcubepp --c 60 \
      >"$dir/vk.log" 2>&1; then
      check "vkcubepp-$i" "$dir/vk.pftrace"
    else
      echo "FAIL vkcubepp-$i: the recording failed: $(tail -n 2 "$dir/vk.log")"
      bad=$((bad + 1))
      total=$((total + 1))
    fi
  fi
  if "$gp" demo -q --steps 50 -o "$dir/demo.pftrace" >"$dir/demo.log" 2>&1; then
    check "demo-$i" "$dir/demo.pftrace"
  else
    echo "FAIL demo-$i: the demo failed: $(tail -n 2 "$dir/demo.log")"
    bad=$((bad + 1))
    total=$((total + 1))
  fi
  i=$((i + 1))
done
echo "$((total - bad)) of $total traces pass"
[ "$bad" -eq 0 ]
