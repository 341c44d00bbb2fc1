#!/bin/sh
# bench/cuda/launches.sh - what `gpuperf record` costs a CUDA program that
# launches small kernels as fast as it can (bench/cuda/launches.cu), by
# the program's own clock, next to the program alone and next to CUPTI's
# own cost (bench/cuda/cupti_floor.c: the same activity kinds with
# buffers that are only counted, then with empty API callbacks too).
# RUNS interleaved rounds of every way; then per way median [min..max] of
# kernels/s, the ratio to the program alone and the time added per
# kernel. Needs a GPU (exit 77 without one).
#
#   bench/cuda/launches.sh [BUILD_DIR]    (default build)
#
# Environment: CUDA_HOME (default /usr/local/cuda), KERNELS (200000),
# RUNS (5).
set -u
BUILD=${1:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
KERNELS=${KERNELS:-200000}
RUNS=${RUNS:-5}
CLI=$BUILD/gpuperf
HERE=$(dirname "$0")
[ -x "$CLI" ] || { echo "launches: $CLI not found: build first (make)" >&2; exit 2; }
NVCC=$CUDA_HOME/bin/nvcc
[ -x "$NVCC" ] || { echo "launches: no nvcc in $CUDA_HOME/bin" >&2; exit 2; }
DIR=$(mktemp -d /tmp/gpuperf-launches-XXXXXX) || exit 2
trap 'rm -rf "$DIR"' EXIT
"$NVCC" -O2 -o "$DIR/launches" "$HERE/launches.cu" || exit 2
"$DIR/launches" 1000 >/dev/null 2>&1
rc=$?
[ $rc -eq 77 ] && { echo "launches: no CUDA device here"; exit 77; }
[ $rc -eq 0 ] || { echo "launches: the program failed ($rc)" >&2; exit 1; }
FLOOR=
if ${CC:-cc} -O2 -shared -fPIC -I"$CUDA_HOME/include" -o "$DIR/floor.so" \
  "$HERE/cupti_floor.c" -L"$CUDA_HOME/lib64" -lcupti \
  -Wl,-rpath,"$CUDA_HOME/lib64" 2>"$DIR/cc.log"; then
  FLOOR=$DIR/floor.so
else
  echo "launches: no CUPTI floor (cupti_floor.c did not build: $(head -n 1 "$DIR/cc.log"))"
fi
echo 'data_sources { config { name: "gpu.renderstages" } }' >"$DIR/rs.pbtxt"

rate() { sed -n 's/.*: \([0-9]*\) kernels\/s$/\1/p'; }
# way NAME: one run of that way, its kernels/s appended to $DIR/NAME.
way() {
  case $1 in
    plain) "$DIR/launches" "$KERNELS" ;;
    floor) CUDA_INJECTION64_PATH=$FLOOR "$DIR/launches" "$KERNELS" 2>/dev/null ;;
    floor+callbacks) FLOOR_CALLBACKS=1 CUDA_INJECTION64_PATH=$FLOOR \
      "$DIR/launches" "$KERNELS" 2>/dev/null ;;
    record) "$CLI" record -o "$DIR/t.pftrace" -- "$DIR/launches" "$KERNELS" \
      2>"$DIR/record.log" ;;
    record-renderstages) "$CLI" record -c "$DIR/rs.pbtxt" -o "$DIR/t2.pftrace" \
      -- "$DIR/launches" "$KERNELS" 2>/dev/null ;;
  esac | rate >>"$DIR/$1"
}
WAYS="plain record record-renderstages"
[ -n "$FLOOR" ] && WAYS="plain floor floor+callbacks record record-renderstages"
for r in $(seq "$RUNS"); do
  for w in $WAYS; do way "$w"; done
done
median() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
p=$(median "$DIR/plain")
echo "$KERNELS kernels, $RUNS interleaved rounds; kernels/s by the program's clock:"
for w in $WAYS; do
  sort -n "$DIR/$w" | awk -v w="$w" -v p="$p" '{v[NR]=$1} END {
    m = v[int((NR+1)/2)];
    printf "  %-20s %7d [%d..%d]  x%.3f  +%.2f us/kernel\n", w, m, v[1], v[NR], m / p, 1e6 / m - 1e6 / p }'
done
tail -n 1 "$DIR/record.log"
"$CLI" query "$DIR/t.pftrace" "SELECT COUNT(*) AS kernels FROM gpu_slice WHERE name LIKE '%bump%'" --format csv | tail -n 1 | sed 's/^/kernels in the last trace: /'
