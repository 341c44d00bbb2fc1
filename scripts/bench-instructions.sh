#!/bin/sh
# scripts/bench-instructions.sh - instructions per record and per enqueue,
# counted by callgrind (valgrind --tool=callgrind), the figures of the hot
# paths that a loaded machine does not disturb (`make bench-instructions`).
#
#   scripts/bench-instructions.sh [BUILD]
#
# Each bench has an --instr mode that runs one loop of N iterations in a
# function of its own (instr_*), set up as its timed runs are; callgrind
# counts only inside that function (--toggle-collect), on the thread that
# calls it: the collector and the driver's threads are not counted. Each
# loop runs twice, with N1 and N2 iterations, and the figure is
# (I(N2) - I(N1)) / (N2 - N1): what does not depend on N (start-up, the
# first buffer, the loop's entry) cancels. The cost of the slow paths a
# loop meets every so many iterations (a full buffer handed over) is in
# the figure, spread over the iterations, as in a real program.
# bench/activity does this for the record path itself (its
# --instructions-only, the same figure its timed runs print); the OpenCL
# enqueue is counted here.
#
# The wrapper's own work per enqueue is the traced loop's count less what
# the driver's entry point (the loader's clEnqueueNDRangeKernel, called
# from inside the wrapper) counted, from callgrind_annotate --inclusive.
#
# Exit status 0, or 1 when valgrind is missing or a run failed.
set -eu
B=${1:-build}
command -v valgrind >/dev/null 2>&1 || {
  echo "bench-instructions: valgrind is not installed (scripts/install-deps.sh)" >&2
  exit 1
}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-instr.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM

# count NAME FUNCTION N ARGS...: runs ARGS under callgrind counting inside
# FUNCTION; prints the total and leaves the profile in $DIR/NAME.N.
count() {
  name=$1 fn=$2 n=$3
  shift 3
  if ! valgrind --tool=callgrind --callgrind-out-file="$DIR/$name.$n" \
    --toggle-collect="$fn" "$@" >"$DIR/$name.$n.log" 2>&1; then
    echo "bench-instructions: $* failed:" >&2
    tail -n 5 "$DIR/$name.$n.log" >&2
    exit 1
  fi
  sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$DIR/$name.$n"
}

# inclusive PROFILE PATTERN: the inclusive count of the first function
# whose callgrind_annotate line matches PATTERN (0 if none).
inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    grep -E "$2" | head -n 1 | sed 's/^ *\([0-9,]*\).*/\1/' | tr -d , |
    grep . || echo 0
}

# per N1 N2 I1 I2: (I2 - I1) / (N2 - N1), one decimal.
per() {
  awk -v a="$1" -v b="$2" -v x="$3" -v y="$4" \
    'BEGIN { printf "%.1f", (y - x) / (b - a) }'
}

echo "bench-instructions: callgrind, per iteration = (I(N2) - I(N1)) / (N2 - N1)"

# The record path: bench/activity counts itself (print_instructions()).
echo "  activity (bench/activity --instructions-only)"
"$B/bench/activity" --instructions-only || exit 1

O=$B/bench/opencl
K1=2000 K2=6000
if "$O" --instr plain --kernels 1 >"$DIR/probe.log" 2>&1; then
  p1=$(count plain instr_enqueue $K1 "$O" --instr plain --kernels $K1)
  p2=$(count plain instr_enqueue $K2 "$O" --instr plain --kernels $K2)
  t1=$(count traced instr_enqueue $K1 "$O" --instr traced --kernels $K1)
  t2=$(count traced instr_enqueue $K2 "$O" --instr traced --kernels $K2)
  # The driver's share of the traced loop: the loader's entry point.
  DRV='clEnqueueNDRangeKernel \[.*libOpenCL'
  d1=$(inclusive "$DIR/traced.$K1" "$DRV")
  d2=$(inclusive "$DIR/traced.$K2" "$DRV")
  pl=$(per $K1 $K2 "$p1" "$p2")
  tr=$(per $K1 $K2 "$t1" "$t2")
  dr=$(per $K1 $K2 "$d1" "$d2")
  echo "  opencl, tiny enqueues on the application thread ($K1, $K2 enqueues)"
  echo "    plain  $pl instructions per enqueue"
  echo "    traced $tr instructions per enqueue" \
    "(+$(awk -v a="$tr" -v b="$pl" 'BEGIN { printf "%.0f", a - b }'))"
  echo "    the wrapper's own work $(awk -v a="$tr" -v b="$dr" \
    'BEGIN { printf "%.0f", a - b }') instructions per enqueue" \
    "(traced, less the driver's $dr; target <= 600)"
else
  echo "  opencl: skipped: $(tail -n 1 "$DIR/probe.log")"
fi
