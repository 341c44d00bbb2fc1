#!/usr/bin/env bash
# record-systrace.sh [--csv-only] [NAME...] - records the Linux system
# traces under tests/data/systrace/ with Perfetto's own programs and writes
# what Perfetto's own trace processor answers on them (expected/NAME/*.csv).
#
#   NAME            sys_3s_compact, sys_3s_plain, sys_30s,
#                   sys_opencl_producer (default: all four)
#   --csv-only      record nothing; regenerate the CSVs of the traces
#                   already there
#
# GPUPERF_PERFETTO_BIN names the folder with Perfetto v58.2's traced,
# traced_probes, perfetto and trace_processor_shell (default
# /work/perfetto/out/linux_clang_release). Recording needs root (ftrace)
# and tracefs at /sys/kernel/tracing; sys_opencl_producer needs a built
# tree (make: build/gpuperf and build/tests/opencl-sample) and an OpenCL
# device (PoCL's pthread device). The daemons run on private sockets in a
# temporary folder and are stopped by the pids this script got.
# gpuperf's own trace processor computes none of the expected values.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GPUPERF_PERFETTO_BIN:-/work/perfetto/out/linux_clang_release}
data="$root/tests/data/systrace"
tp="$bin/trace_processor_shell"
all=(sys_3s_compact sys_3s_plain sys_30s sys_opencl_producer)

record=yes
names=()
for a in "$@"; do
  case "$a" in
  --csv-only) record=no ;;
  -h | --help)
    sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  sys_*) names+=("$a") ;;
  *)
    echo "record-systrace: unknown argument: $a" >&2
    exit 2
    ;;
  esac
done
[ ${#names[@]} -eq 0 ] && names=("${all[@]}")

for p in traced traced_probes perfetto trace_processor_shell; do
  if [ ! -x "$bin/$p" ]; then
    echo "record-systrace: $bin/$p not found (set GPUPERF_PERFETTO_BIN)" >&2
    exit 77
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-systrace.XXXXXX")
traced_pid=
probes_pid=
perfetto_pid=
cleanup() {
  # Only the processes this script started, by the pid it got.
  for p in "$perfetto_pid" "$probes_pid" "$traced_pid"; do
    if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
      kill -TERM "$p" 2>/dev/null || true
      wait "$p" 2>/dev/null || true
    fi
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

wait_for() { # wait_for COMMAND: up to 10 s
  local i=0
  while ! eval "$1"; do
    i=$((i + 1))
    if [ $i -gt 1000 ]; then
      echo "record-systrace: timed out waiting for: $1" >&2
      return 1
    fi
    sleep 0.01
  done
}

start_daemons() {
  export PERFETTO_PRODUCER_SOCK_NAME="$tmp/p.sock"
  export PERFETTO_CONSUMER_SOCK_NAME="$tmp/c.sock"
  "$bin/traced" >"$tmp/traced.log" 2>&1 &
  traced_pid=$!
  wait_for "[ -S '$tmp/p.sock' ] && [ -S '$tmp/c.sock' ]"
  "$bin/traced_probes" >"$tmp/probes.log" 2>&1 &
  probes_pid=$!
  # traced_probes registers its data sources once connected.
  sleep 1
}

stop_daemons() {
  local p
  for p in "$probes_pid" "$traced_pid"; do
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  probes_pid=
  traced_pid=
}

# Two threads that name themselves (prctl PR_SET_NAME: task_rename) and wake
# each other ten times each. Read from stdin, so that the command line
# (process.cmdline) stays one line.
pythreads='
import ctypes, threading, time
prctl = ctypes.CDLL(None).prctl
prctl(15, b"gp-pymain", 0, 0, 0)
go = [threading.Event(), threading.Event()]
def worker(i):
    prctl(15, b"gp-worker%d" % i, 0, 0, 0)
    for _ in range(10):
        go[i].wait()
        go[i].clear()
        time.sleep(0.01)
        go[1 - i].set()
ts = [threading.Thread(target=worker, args=(i,)) for i in (0, 1)]
for t in ts:
    t.start()
go[0].set()
for t in ts:
    t.join()
'
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)

# workload LOOPS: every 250 ms a short-lived shell that forks a sleep and
# one that execs one (comm changes: task_rename); every 40 loops (10 s) the
# two Python threads. About LOOPS / 4 seconds.
workload() {
  local i
  for ((i = 0; i < $1; i++)); do
    if [ $((i % 40)) -eq 0 ]; then
      "$python" - <<<"$pythreads"
    fi
    sh -c 'sleep 0.05; true'
    sh -c 'exec sleep 0.05'
    sleep 0.15
  done
}

run_perfetto() { # run_perfetto NAME: starts `perfetto` in the background
  "$bin/perfetto" --txt -c "$data/configs/$1.cfg" -o "$tmp/$1.pftrace" \
    >"$tmp/perfetto-$1.log" 2>&1 &
  perfetto_pid=$!
  # Let the data sources start before the workload.
  sleep 0.5
}

finish_perfetto() { # finish_perfetto NAME: waits for it, keeps the trace
  local st=0
  wait "$perfetto_pid" || st=$?
  perfetto_pid=
  if [ $st -ne 0 ]; then
    echo "record-systrace: perfetto failed for $1 (status $st):" >&2
    cat "$tmp/perfetto-$1.log" >&2
    exit 1
  fi
  mv "$tmp/$1.pftrace" "$data/$1.pftrace"
  chmod 644 "$data/$1.pftrace"
  echo "record-systrace: $data/$1.pftrace ($(stat -c %s "$data/$1.pftrace") bytes)"
}

record_one() {
  case "$1" in
  sys_3s_compact | sys_3s_plain)
    run_perfetto "$1"
    workload 8
    finish_perfetto "$1"
    ;;
  sys_30s)
    run_perfetto "$1"
    workload 112
    finish_perfetto "$1"
    ;;
  sys_opencl_producer)
    local gp="$root/build/gpuperf" ocl="$root/build/tests/opencl-sample"
    if [ ! -x "$gp" ] || [ ! -x "$ocl" ]; then
      echo "record-systrace: build gpuperf first (make): $gp, $ocl" >&2
      exit 77
    fi
    run_perfetto "$1"
    workload 2
    local st=0
    POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=2 \
      "$gp" record --producer -q -- "$ocl" -n 20 \
      >"$tmp/ocl.out" 2>"$tmp/ocl.err" || st=$?
    if [ $st -ne 0 ]; then
      echo "record-systrace: the OpenCL sample failed (status $st):" >&2
      cat "$tmp/ocl.err" >&2
      exit 1
    fi
    workload 2
    finish_perfetto "$1"
    ;;
  *)
    echo "record-systrace: unknown trace $1" >&2
    exit 2
    ;;
  esac
}

if [ $record = yes ]; then
  mkdir -p "$data"
  start_daemons
  for n in "${names[@]}"; do
    record_one "$n"
  done
  stop_daemons
fi

# The expected answers: one CSV per query of queries.txt, as
# `trace_processor_shell -q` prints it; an empty answer (the header alone)
# gets no file.
for n in "${names[@]}"; do
  trace="$data/$n.pftrace"
  if [ ! -f "$trace" ]; then
    echo "record-systrace: $trace not found" >&2
    exit 1
  fi
  out="$data/expected/$n"
  rm -rf "$out"
  mkdir -p "$out"
  while IFS= read -r line; do
    case "$line" in '' | '#'*) continue ;; esac
    q=${line%%|*}
    printf '%s\n' "${line#*|}" >"$tmp/q.sql"
    if ! "$tp" -q "$tmp/q.sql" "$trace" >"$tmp/a.csv" 2>"$tmp/tp.err"; then
      echo "record-systrace: trace_processor_shell failed on $n/$q:" >&2
      cat "$tmp/tp.err" >&2
      exit 1
    fi
    if [ "$(wc -l <"$tmp/a.csv")" -gt 1 ]; then
      cp "$tmp/a.csv" "$out/$q.csv"
    fi
  done <"$data/queries.txt"
  echo "record-systrace: $out: $(ls "$out" | wc -l) answers"
done
