#!/bin/sh
# scripts/check-layers.sh - fails when a lower layer includes a higher one.
#
#   scripts/check-layers.sh [ROOT]     check the tree at ROOT (default: .)
#   scripts/check-layers.sh --self-test
#                                      check that a violating include fails
#                                      and a clean tree passes
#
# Every quoted #include of every .c and .h under src/ and tools/ is resolved
# as the compiler does (the including file's directory, then include/, then
# src/) and the layer of the file it names is looked up in the table below.
# Angle-bracket includes and names that resolve to no file of the tree
# (system and toolkit headers) are not ours and are skipped. Prints one line
# per violation, "FILE:LINE: LAYER includes PATH (LAYER)", and exits 1 if
# there is any; 2 when ROOT is not a gpuperf tree. docs/architecture.md
# describes the layers.
#
# Layers and what each may include, besides itself and the public headers
# (include/gpuperf/, "public"):
#
#   core        nothing else (libc and the public headers only)
#   counters    core
#   perfetto    core                       (the protobuf code and the writer)
#   backend/X   core, counters             (no backend includes another)
#   session     core, counters, perfetto, every backend
#   tp          perfetto/pb.h, perfetto/proto.h   (decoding only)
#   tools       the public headers only
set -u

allowed() { # allowed LAYER TARGET-LAYER TARGET-PATH -> status
  [ "$2" = public ] && return 0
  [ "$1" = "$2" ] && return 0
  case "$1:$2" in
  counters:core | perfetto:core) return 0 ;;
  backend/*:core | backend/*:counters) return 0 ;;
  session:core | session:counters | session:perfetto | session:backend/*)
    return 0 ;;
  tp:perfetto)
    case "$3" in src/perfetto/pb.h | src/perfetto/proto.h) return 0 ;; esac ;;
  esac
  return 1
}

layer_of() { # layer_of PATH -> prints the layer, or nothing
  case "$1" in
  include/gpuperf/*) echo public ;;
  src/core/*) echo core ;;
  src/counters/*) echo counters ;;
  src/perfetto/*) echo perfetto ;;
  src/session/*) echo session ;;
  src/tp/*) echo tp ;;
  src/backend/*/*) echo "$1" | cut -d/ -f2-3 ;;
  tools/*) echo tools ;;
  esac
}

# Prints the tree path a quoted include of NAME from FILE resolves to.
resolve() {
  dir=$(dirname "$1")
  for p in "$dir/$2" "include/$2" "src/$2"; do
    if [ -f "$p" ]; then
      # Normalise "a/b/../c" the way the compiler would find it.
      (cd "$(dirname "$p")" && echo "$(pwd -P)/$(basename "$p")") |
        sed "s|^$root_abs/||"
      return
    fi
  done
}

check_tree() { # check_tree ROOT -> status
  cd "$1" || return 2
  if [ ! -d src/core ] || [ ! -d include/gpuperf ]; then
    echo "check-layers: $1 is not a gpuperf tree (no src/core, include/gpuperf)" >&2
    return 2
  fi
  root_abs=$(pwd -P)
  bad=0
  dirs=src
  [ -d tools ] && dirs="src tools"
  for f in $(find $dirs -name '*.[ch]' | sort); do
    from=$(layer_of "$f")
    [ -n "$from" ] || continue
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
      sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' >"$tmp/inc"
    while read -r line name; do
      target=$(resolve "$f" "$name")
      [ -n "$target" ] || continue
      to=$(layer_of "$target")
      [ -n "$to" ] || continue
      if ! allowed "$from" "$to" "$target"; then
        echo "$f:$line: $from includes $target ($to)"
        bad=1
      fi
    done <"$tmp/inc"
  done
  [ $bad -eq 0 ] || return 1
  return 0
}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = --self-test ]; then
  t="$tmp/tree"
  mkdir -p "$t/include/gpuperf" "$t/src/core" "$t/src/session" \
    "$t/src/backend/a" "$t/src/backend/b" "$t/src/tp" "$t/src/perfetto"
  : >"$t/include/gpuperf/gpuperf.h"
  printf '#include "gpuperf/gpuperf.h"\n' >"$t/src/core/core.h"
  printf '#include "core/core.h"\n' >"$t/src/session/sessionInt.h"
  printf '#include "core/core.h"\n#include <stdio.h>\n#include "nowhere.h"\n' \
    >"$t/src/backend/a/a.c"
  : >"$t/src/perfetto/pb.h"
  : >"$t/src/perfetto/writer.h"
  printf '#include "perfetto/pb.h"\n' >"$t/src/tp/tp.c"
  fail() { echo "check-layers --self-test: $1" >&2; exit 1; }
  (check_tree "$t" >/dev/null) || fail "a clean tree was refused"
  # Each violation alone must be caught, and named.
  for v in "src/core/x.c session/sessionInt.h" \
    "src/core/y.c ../session/sessionInt.h" \
    "src/backend/a/z.c backend/b/b.h" \
    "src/tp/w.c perfetto/writer.h"; do
    set -- $v
    : >"$t/src/backend/b/b.h"
    printf '#include "%s"\n' "$2" >"$t/$1"
    out=$(check_tree "$t")
    [ $? -eq 1 ] || fail "$1 including $2 was not refused"
    case "$out" in "$1:1: "*) ;; *) fail "unexpected report: $out" ;; esac
    rm -f "$t/$1"
  done
  echo "check-layers --self-test: passed"
  exit 0
fi

check_tree "${1:-.}"
rc=$?
[ $rc -eq 0 ] && echo "check-layers: every include points down"
exit $rc
