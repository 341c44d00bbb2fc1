#!/bin/sh
# scripts/ubsan-corpus.sh - every entry point of the gpuperf CLI that
# reads a trace, run under UBSan and ASan over every file of the fuzz
# corpus (`make ubsan-corpus`; .ci/run).
#
#   scripts/ubsan-corpus.sh GPUPERF [CORPUS_DIR...]
#
# GPUPERF is a CLI built with -fsanitize=address,undefined (make SAN=1).
# For each file F of the corpus directories (default tests/fuzz/corpus/*)
# it runs: merge (a reference trace with F, F with itself), the salvage
# of F as a killed process's death page (record --recover), query
# (summary, a JSON query), report (text, csv, json with --html, a
# --from/--to window), export (chrome-json, csv of work, host,
# counters and flows) and diff against the reference in text and JSON. When the
# import refuses F (query exits 2), report, export and diff, which import
# it the same way, are not run: they would stop at the same place. A bad trace is expected to be
# refused (exit 1 or 2); what fails the run is a sanitizer report, a crash
# (a signal) or a command that runs past 60 s. Files run in parallel, one
# per CPU (JOBS=N to change it).
#
# Exit status: 0 if no command reported anything, 1 otherwise (each
# finding is printed with the file and the command that made it), 2 on a
# usage error.
set -eu

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 GPUPERF [CORPUS_DIR...] (GPUPERF: a SAN=1 build)" >&2
  exit 2
fi
GP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
  set -- "$ROOT"/tests/fuzz/corpus/*
fi
REF=$ROOT/tests/fuzz/corpus/importer/seed-render-stages
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-ubsan.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM

export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# Leaks on error paths are not what this run looks for (make test-asan
# checks the CLI's exits); overflows and bad memory accesses are.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
export GPUPERF_NO_PROGRESS=1

# One file: every command; prints "FOUND <what>" lines for the findings.
cat >"$WORK/one.sh" <<'EOF'
#!/bin/sh
GP=$1 REF=$2 F=$3
D=$(mktemp -d "$WORK/f.XXXXXX")
run() {
  timeout 60 "$@" >/dev/null 2>"$D/err" </dev/null
  rc=$?
  if [ $rc -gt 2 ] || grep -q -e 'runtime error:' -e 'Sanitizer' "$D/err"; then
    echo "FOUND rc=$rc: $*"
    sed -n '1,12p' "$D/err" | sed 's/^/    /'
  fi
}
A=--allow-truncated
run "$GP" merge "$REF" "$F" -q -o "$D/m"
run "$GP" merge "$F" "$F" -q -o "$D/m"
# F as a SIGKILLed process's death page (its first 8 bytes made the
# page's magic): `record --recover` salvages from it and counts the loss.
mkdir -p "$D/p.parts-x"
{ printf 'GPDEATH3'; tail -c +9 "$F"; } >"$D/p.parts-x/1.open"
: >"$D/p.parts-x/1.pftrace"
run "$GP" record --recover "$D/p.parts-x" -o "$D/rec.pftrace"
run "$GP" query "$F" $A
# report, export and diff import F as query does (gp_tp_open, the same
# flags): a file the import refuses stops them all there.
if [ $rc -eq 2 ]; then
  rm -rf "$D"
  exit 0
fi
run "$GP" query "$F" $A --format json \
  'SELECT c.ts, c.value, t.name FROM counter c JOIN counter_track t ON c.track_id = t.id'
run "$GP" report "$F" $A
run "$GP" report "$F" $A --format csv
run "$GP" report "$F" $A --format json --html "$D/r.html"
run "$GP" report "$F" $A --from 1us --to 1s --top 2
run "$GP" export "$F" $A --format chrome-json
run "$GP" export "$F" $A --format csv
run "$GP" export "$F" $A --format csv --table host
run "$GP" export "$F" $A --format csv --table counters
run "$GP" export "$F" $A --format csv --table flows
run "$GP" diff "$REF" "$F" $A
run "$GP" diff "$F" "$REF" $A --format json
rm -rf "$D"
EOF
chmod +x "$WORK/one.sh"
export WORK

n=$(find "$@" -maxdepth 1 -type f | wc -l)
echo "ubsan-corpus: $n files, up to 15 commands each, $JOBS at a time"
find "$@" -maxdepth 1 -type f -print0 |
  xargs -0 -r -n 1 -P "$JOBS" "$WORK/one.sh" "$GP" "$REF" >"$WORK/found"
if [ -s "$WORK/found" ]; then
  cat "$WORK/found"
  echo "ubsan-corpus: $(grep -c '^FOUND' "$WORK/found") finding(s)" >&2
  exit 1
fi
echo "ubsan-corpus: no sanitizer report"
