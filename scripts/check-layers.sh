#!/bin/sh
# scripts/check-layers.sh - fails when a lower layer includes a higher one.
#
#   scripts/check-layers.sh [ROOT]     check the tree at ROOT (default: .)
#   scripts/check-layers.sh --objects OBJDIR
#                                      check the calls of built objects
#                                      (OBJDIR/src/LAYER/*.o, e.g.
#                                      build/obj) whose sources are in the
#                                      tree (run from its root)
#   scripts/check-layers.sh --self-test
#                                      check that a violating include and
#                                      a violating call fail and a clean
#                                      tree passes
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
# Includes miss a call up whose prototype sits in the caller's own header
# (the core once declared a session function in core.h). --objects reads
# the objects instead: each undefined internal symbol (gp__*) of an object
# is looked up among the global symbols the other objects define, and the
# layers of the two files checked against the same table; one line per
# violation, "FILE.o: LAYER calls SYMBOL (LAYER)". Functions of the public
# API (gp_*) may be called from any layer, as the public headers may be
# included from any (docs/architecture.md lists those calls).
#
# Layers and what each may include, besides itself and the public headers
# (include/gpuperf/, "public"):
#
#   core        nothing else (libc and the public headers only)
#   counters    core
#   perfetto    core                       (the protobuf code and the writer)
#   backend/X   core, counters             (no backend includes another)
#   session     core, counters, perfetto, every backend
#   tp          perfetto/pb.h, perfetto/proto.h   (decoding only; calls:
#               pb.c)
#   report      nothing else (the trace processor through its public API,
#               gpuperf/tp.h, only)
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
    case "$3" in
    src/perfetto/pb.[ch] | src/perfetto/proto.h) return 0 ;;
    esac ;;
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
  src/report/*) echo report ;;
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

check_objects() { # check_objects OBJDIR -> status
  if [ ! -d "$1/src" ]; then
    echo "check-layers: no objects under $1/src (build first)" >&2
    return 2
  fi
  : >"$tmp/defs"
  : >"$tmp/uses"
  for o in $(cd "$1" && find src -name '*.o' | sort); do
    from=$(layer_of "${o%.o}.c")
    [ -n "$from" ] || continue
    # An object whose source is gone (moved, removed) is not built any more.
    [ -f "${o%.o}.c" ] || [ -n "${GP_LAYERS_ANY_OBJECT:-}" ] || continue
    nm -g --defined-only "$1/$o" |
      awk -v l="$from" -v f="${o%.o}.c" 'NF == 3 { print $3, l, f }' \
        >>"$tmp/defs"
    nm -u "$1/$o" | awk -v l="$from" -v f="$o" \
      '$2 ~ /^gp__/ { print $2, l, f }' >>"$tmp/uses"
  done
  # SYMBOL CALLER-LAYER FILE DEFINING-LAYER DEFINING-SOURCE, for calls
  # across layers.
  awk 'NR == FNR { def[$1] = $2; src[$1] = $3; next }
       ($1 in def) && def[$1] != $2 { print $1, $2, $3, def[$1], src[$1] }' \
    "$tmp/defs" "$tmp/uses" >"$tmp/cross"
  bad=0
  while read -r sym from file to source; do
    if ! allowed "$from" "$to" "$source"; then
      echo "$file: $from calls $sym ($to)"
      bad=1
    fi
  done <"$tmp/cross"
  return $bad
}

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = --self-test ]; then
  t="$tmp/tree"
  mkdir -p "$t/include/gpuperf" "$t/src/core" "$t/src/session" \
    "$t/src/backend/a" "$t/src/backend/b" "$t/src/tp" "$t/src/perfetto" \
    "$t/src/report"
  : >"$t/include/gpuperf/gpuperf.h"
  printf '#include "gpuperf/gpuperf.h"\n' >"$t/src/core/core.h"
  printf '#include "core/core.h"\n' >"$t/src/session/sessionInt.h"
  printf '#include "core/core.h"\n#include <stdio.h>\n#include "nowhere.h"\n' \
    >"$t/src/backend/a/a.c"
  : >"$t/src/perfetto/pb.h"
  : >"$t/src/perfetto/writer.h"
  printf '#include "perfetto/pb.h"\n' >"$t/src/tp/tp.c"
  : >"$t/src/tp/tpInt.h"
  printf '#include "gpuperf/gpuperf.h"\n' >"$t/src/report/report.c"
  fail() { echo "check-layers --self-test: $1" >&2; exit 1; }
  (check_tree "$t" >/dev/null) || fail "a clean tree was refused"
  # Each violation alone must be caught, and named.
  for v in "src/core/x.c session/sessionInt.h" \
    "src/core/y.c ../session/sessionInt.h" \
    "src/backend/a/z.c backend/b/b.h" \
    "src/tp/w.c perfetto/writer.h" \
    "src/report/v.c tp/tpInt.h"; do
    set -- $v
    : >"$t/src/backend/b/b.h"
    printf '#include "%s"\n' "$2" >"$t/$1"
    out=$(check_tree "$t")
    [ $? -eq 1 ] || fail "$1 including $2 was not refused"
    case "$out" in "$1:1: "*) ;; *) fail "unexpected report: $out" ;; esac
    rm -f "$t/$1"
  done
  # A call up that no include shows: core declaring a session function.
  cc=${CC:-cc}
  o="$tmp/obj/src"
  mkdir -p "$o/core" "$o/session"
  printf 'void gp__low(void);\nvoid gp__low(void) {}\n' >"$tmp/low.c"
  printf 'void gp__up(void);\nvoid gp__low(void);\n%s\n' \
    'void gp__up(void) { gp__low(); }' >"$tmp/up.c"
  $cc -c "$tmp/low.c" -o "$o/core/low.o" &&
    $cc -c "$tmp/up.c" -o "$o/session/up.o" ||
    fail "cannot compile with $cc"
  export GP_LAYERS_ANY_OBJECT=1 # the self-test's objects have no sources
  (check_objects "$tmp/obj" >/dev/null) || fail "a clean call was refused"
  printf 'void gp__up(void);\nvoid gp__down(void);\n%s\n' \
    'void gp__down(void) { gp__up(); }' >"$tmp/down.c"
  $cc -c "$tmp/down.c" -o "$o/core/down.o" || fail "cannot compile with $cc"
  out=$(check_objects "$tmp/obj")
  [ $? -eq 1 ] || fail "core calling session was not refused"
  case "$out" in "src/core/down.o: core calls gp__up (session)") ;;
  *) fail "unexpected report: $out" ;; esac
  echo "check-layers --self-test: passed"
  exit 0
fi

if [ "${1:-}" = --objects ]; then
  [ $# -eq 2 ] || { echo "usage: check-layers.sh --objects OBJDIR" >&2; exit 2; }
  check_objects "$2"
  rc=$?
  [ $rc -eq 0 ] && echo "check-layers: every call between layers points down"
  exit $rc
fi

check_tree "${1:-.}"
rc=$?
[ $rc -eq 0 ] && echo "check-layers: every include points down"
exit $rc
