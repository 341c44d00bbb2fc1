#!/bin/bash
# bench/vkmark.sh - what recording costs a real Vulkan benchmark: vkmark
# (built from source: it is not packaged in Debian 12) run plain and under
# `gpuperf record`, interleaved, in one X server.
#
#   VKMARK=/path/to/vkmark xvfb-run -a bench/vkmark.sh [RUNS] [SIZE] [SCENES]
#
# RUNS defaults to 5, SIZE (the window) to 200x150, SCENES to
# "clear cube" (each run lasts 3 s a scene). vkmark presents every frame
# (--present-mode immediate) on lavapipe, so its loop is bound by its
# presents; at 200x150 it renders thousands of frames a second. For each
# scene the FPS that vkmark itself prints, as median [min..max] of the
# runs, plain and recorded, with the ratio of the medians and the time
# recording adds to a frame. GPUPERF names the CLI (build/gpuperf);
# GPUPERF_B, if set, a second one (another build, for an A/B of two
# versions), run in the same rotation and printed as "recorded B".
set -eu
. "$(dirname "$0")/stats.sh"
G=${GPUPERF:-build/gpuperf}
V=${VKMARK:-vkmark}
RUNS=${1:-5}
SIZE=${2:-200x150}
SCENES=${3:-clear cube}
command -v "$V" >/dev/null || {
  echo "bench/vkmark.sh: no vkmark (set VKMARK to its path)" >&2
  exit 1
}
[ -x "$G" ] || { echo "bench/vkmark.sh: $G is not built (make)" >&2; exit 1; }
[ -n "${DISPLAY:-}" ] || {
  echo "bench/vkmark.sh: no X display (run it under xvfb-run -a)" >&2
  exit 1
}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-vkmark.XXXXXX")
trap 'rm -rf "$DIR"' EXIT INT TERM
ARGS=(--winsys xcb -p immediate -s "$SIZE")
for s in $SCENES; do ARGS+=(-b "$s:duration=3"); done
# run WAY CMD...: one run; each scene's FPS appended to fps_WAY_SCENE
run() {
  way=$1
  shift
  "$@" >"$DIR/out" 2>&1 || { cat "$DIR/out" >&2; exit 1; }
  for s in $SCENES; do
    f=$(sed -n "s/^\[$s\].*FPS: \([0-9]*\).*/\1/p" "$DIR/out")
    [ -n "$f" ] || { echo "bench/vkmark.sh: no FPS for $s" >&2; exit 1; }
    echo "$f" >>"$DIR/fps_${way}_$s"
  done
}
B=${GPUPERF_B:-}
[ -z "$B" ] || [ -x "$B" ] || { echo "bench/vkmark.sh: $B is not a program" >&2; exit 1; }
WAYS="plain rec${B:+ recb}"
# way WAY: one run of it
way() {
  case $1 in
  plain) run plain "$V" "${ARGS[@]}" ;;
  rec) run rec "$G" record -q -o "$DIR/t.pftrace" -- "$V" "${ARGS[@]}" ;;
  recb) run recb "$B" record -q -o "$DIR/t.pftrace" -- "$V" "${ARGS[@]}" ;;
  esac
}
# each run starts the rotation one way further, so that no way is always
# first (the first of a round runs colder)
for i in $(seq 1 "$RUNS"); do
  set -- $WAYS
  shift $(((i - 1) % $#)) || true
  for w in "$@"; do way "$w"; done
  set -- $WAYS
  n=$(((i - 1) % $#))
  while [ "$n" -gt 0 ]; do way "$1"; shift; n=$((n - 1)); done
done
echo "vkmark $SIZE, $RUNS runs each, alternating, FPS median [min..max]:"
for s in $SCENES; do
  p=$(spread %.0f <"$DIR/fps_plain_$s")
  r=$(spread %.0f <"$DIR/fps_rec_$s")
  pm=$(stats_of <"$DIR/fps_plain_$s" | cut -d' ' -f1)
  rm_=$(stats_of <"$DIR/fps_rec_$s" | cut -d' ' -f1)
  awk -v s="$s" -v p="$p" -v r="$r" -v pm="$pm" -v rm="$rm_" 'BEGIN {
    printf "  %-8s plain %s  recorded %s  ratio %.3f  %+.1f us per frame\n",
      s, p, r, rm / pm, 1e6 / rm - 1e6 / pm }'
  [ -n "$B" ] || continue
  r=$(spread %.0f <"$DIR/fps_recb_$s")
  rm_=$(stats_of <"$DIR/fps_recb_$s" | cut -d' ' -f1)
  awk -v s="$s" -v r="$r" -v pm="$pm" -v rm="$rm_" 'BEGIN {
    printf "  %-8s recorded B %s  ratio %.3f  %+.1f us per frame\n",
      s, r, rm / pm, 1e6 / rm - 1e6 / pm }'
done
echo "target: recorded >= 0.95 of plain"
