#!/bin/sh
# device-check-cuda.sh - the CUDA collector end to end on a real GPU.
#
# Builds tests/cuda/sample.cu with nvcc (kernels, async copies on two
# streams, a fill, an event dependency between the streams, NVTX ranges),
# records it twice with `gpuperf record` (the timeline; then per-kernel
# counters, apart because CUPTI does not time the kernels it measures),
# and checks the traces with `gpuperf query`: kernel names and counts,
# copies and fills, dependency flows, API-to-kernel correlation flows,
# NVTX ranges and their colours and payloads, the sample's module and
# functions, the source-level kinds (refused once each by CUDA 13, or
# instants), the GPU against nvidia-smi, per-kernel counters, nothing
# dropped or untimed. Then it
# builds and runs tests/cuda/cb_probe.cu, which checks the callback API,
# the handle lookups, the MODULE, FUNCTION, DEVICE_ATTRIBUTE and
# UNIFIED_MEMORY_COUNTER records and the auto boost state against
# CUPTI's own records and answers, the program's results and
# cudaGetDeviceProperties, and (--metrics) the per-kernel METRIC records
# against CUDA events around each kernel. Everything under 5 minutes (each step has its
# own timeout).
#
#   scripts/device-check-cuda.sh [BUILD_DIR]      (default: build)
#   scripts/device-check-cuda.sh --check-trace TRACE ITERATIONS [BUILD_DIR]
#                   only the checks, on a trace of the sample made
#                   elsewhere (the tests give it one made from CUPTI
#                   records without a GPU)
#
# Environment: CUDA_HOME (default /usr/local/cuda), ITERATIONS (default
# 10), GPUPERF_CHECK_DIR (where the sample, config, trace and logs go;
# default a fresh temporary directory, kept on failure), METRICS
# (per-kernel counters to record, names from the device's catalog as
# `gpuperf list` shows them; default
# gpu__time_duration.sum,sm__cycles_elapsed.sum; empty skips the counter
# check).
#
# Exit status: 0 every check passed; 1 a check failed; 2 the check could
# not run (no nvcc, gpuperf not built, a tool missing); 77 there is no
# CUDA device here (after the sample was built, so nvcc is checked too).
set -u

say() { echo "device-check-cuda: $*"; }
die() { status=$1; shift; say "$*" >&2; exit "$status"; }

CHECK_ONLY=
if [ "${1:-}" = "--check-trace" ]; then
  [ $# -ge 3 ] || die 2 "usage: $0 --check-trace TRACE ITERATIONS [BUILD_DIR]"
  CHECK_ONLY=$2
  ITERATIONS=$3
  shift 3
fi
BUILD=${1:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
ITERATIONS=${ITERATIONS:-10}
METRICS=${METRICS-gpu__time_duration.sum,sm__cycles_elapsed.sum}
CLI=$BUILD/gpuperf
LIB=$BUILD/libgpuperf-cuda.so
SRC=$(dirname "$0")/../tests/cuda/sample.cu

case $ITERATIONS in
  '' | *[!0-9]*) die 2 "ITERATIONS must be a number, not '$ITERATIONS'" ;;
esac

# --- what we need ---------------------------------------------------------
[ -x "$CLI" ] || die 2 "$CLI not found: build first (make)"
command -v timeout >/dev/null 2>&1 || die 2 "timeout(1) is missing (coreutils)"
if [ -z "$CHECK_ONLY" ]; then
  NVCC=
  for c in "$CUDA_HOME/bin/nvcc" "$(command -v nvcc 2>/dev/null || true)"; do
    [ -n "$c" ] && [ -x "$c" ] && { NVCC=$c; break; }
  done
  [ -n "$NVCC" ] || die 2 "no nvcc (looked in $CUDA_HOME/bin and PATH)"
  [ -f "$LIB" ] ||
    die 2 "$LIB not found: the CUDA collector was not built (make cuda-info)"
  [ -f "$SRC" ] || die 2 "$SRC not found"
else
  [ -f "$CHECK_ONLY" ] || die 2 "$CHECK_ONLY: no such trace"
fi

if [ -n "${GPUPERF_CHECK_DIR:-}" ]; then
  DIR=$GPUPERF_CHECK_DIR
  mkdir -p "$DIR" || die 2 "cannot create $DIR"
else
  DIR=$(mktemp -d /tmp/gpuperf-cuda-check-XXXXXX) || die 2 "mktemp failed"
fi
started=$(date +%s)

if [ -z "$CHECK_ONLY" ]; then
  SAMPLE=$DIR/sample
  TRACE=$DIR/sample.pftrace

  # --- 1. build the sample ------------------------------------------------
  say "building the sample with $NVCC"
  timeout 120 "$NVCC" -O2 -lineinfo -o "$SAMPLE" "$SRC" >"$DIR/nvcc.log" 2>&1 ||
    { cat "$DIR/nvcc.log" >&2; die 2 "nvcc failed (log in $DIR/nvcc.log)"; }

  # The callback probe, built now so that a machine without a GPU
  # checks that it builds (it links this build's libraries).
  PROBE=$DIR/cb_probe
  ABS_BUILD=$(cd "$BUILD" && pwd)
  say "building the callback probe"
  timeout 120 "$NVCC" -O2 -I"$(dirname "$0")/../include" \
    -I"$(dirname "$0")/../tests" -o "$PROBE" \
    "$(dirname "$0")/../tests/cuda/cb_probe.cu" -L"$ABS_BUILD" \
    -lgpuperf-cuda -lgpuperf -ldl -Xlinker -rpath,"$ABS_BUILD" \
    >"$DIR/nvcc-probe.log" 2>&1 ||
    { cat "$DIR/nvcc-probe.log" >&2; die 2 "nvcc failed on the probe (log in $DIR/nvcc-probe.log)"; }

  # The configs. The timeline: GPU work, API calls and ranges, the code
  # the program loaded. The counters: the same with the metrics per
  # kernel, recorded apart because CUPTI does not time the kernels it
  # measures (gpuperf then draws them at their launch, docs/cuda.md).
  CONFIG=$DIR/config.pbtxt
  {
    echo 'data_sources { config { name: "gpu.renderstages" } }'
    echo 'gpuperf_options { code_objects: true source_level: true }'
  } >"$CONFIG"
  CONFIG_COUNTERS=$DIR/config-counters.pbtxt
  if [ -n "$METRICS" ]; then
    {
      echo 'data_sources { config { name: "gpu.renderstages" } }'
      echo 'data_sources { config { name: "gpu.counters" gpu_counter_config {'
      echo "$METRICS" | tr ',' '\n' | sed '/^$/d; s/.*/  counter_names: "&"/'
      echo '  instrumented_sampling: true } } }'
    } >"$CONFIG_COUNTERS"
  fi

  # --- 2. is there a GPU? -------------------------------------------------
  if ! timeout 60 "$CLI" cuda >"$DIR/devices.txt" 2>&1; then
    say "SKIP: $(tail -n 1 "$DIR/devices.txt" | sed 's/^gpuperf: //')"
    say "the sample builds; the GPU path is not checked here"
    [ -z "${GPUPERF_CHECK_DIR:-}" ] && rm -rf "$DIR"
    exit 77
  fi
  sed 's/^/  /' "$DIR/devices.txt"

  # --- 3. record it -------------------------------------------------------
  "$CLI" record --help >/dev/null 2>&1 ||
    die 2 "this gpuperf has no 'record' command"
  # record CONFIG TRACE LOG WHAT
  record() {
    say "recording $ITERATIONS iterations: $4"
    timeout 120 "$CLI" record -c "$1" -o "$2" -- \
      "$SAMPLE" "$ITERATIONS" >"$3" 2>&1
    rc=$?
    sed 's/^/  /' "$3"
    [ $rc -eq 0 ] || die 1 "FAIL: gpuperf record exited $rc (files in $DIR)"
    [ -s "$2" ] || die 1 "FAIL: no trace written (files in $DIR)"
  }
  TRACE=$DIR/sample.pftrace
  record "$CONFIG" "$TRACE" "$DIR/record.log" "the timeline"
  TRACE_COUNTERS=
  if [ -n "$METRICS" ]; then
    TRACE_COUNTERS=$DIR/sample-counters.pftrace
    record "$CONFIG_COUNTERS" "$TRACE_COUNTERS" "$DIR/record-counters.log" \
      "$METRICS per kernel"
  fi
else
  TRACE=$CHECK_ONLY
  TRACE_COUNTERS=
  [ -n "$METRICS" ] && TRACE_COUNTERS=$CHECK_ONLY
fi

# --- 4. check the trace ---------------------------------------------------
"$CLI" query --help >/dev/null 2>&1 ||
  die 2 "this gpuperf has no 'query' command"
failures=0
# q SQL [TRACE]: the query's single value (first column of the first row).
q() {
  timeout 60 "$CLI" query "${2:-$TRACE}" "$1" --format csv 2>>"$DIR/query.log" |
    sed -n '2p' | cut -d, -f1 | tr -d '"'
}
# check NAME OP WANT SQL [TRACE]: OP is eq or ge.
check() {
  got=$(q "$4" "${5:-}")
  case $2 in
    eq) [ "$got" = "$3" ] && ok=1 || ok=0 ;;
    ge) [ -n "$got" ] && [ "$got" -ge "$3" ] 2>/dev/null && ok=1 || ok=0 ;;
  esac
  if [ $ok -eq 1 ]; then
    say "ok    $1: $got"
  else
    say "FAIL  $1: got '${got}', want $2 $3"
    echo "  query: $4" >&2
    failures=$((failures + 1))
  fi
}

N=$ITERATIONS
# GPU work: kernels by name (mangled or demangled), on the Compute queue.
check "scale kernels" eq "$N" \
  "SELECT COUNT(*) FROM gpu_slice WHERE name LIKE '%scale%'"
check "add kernels" eq "$N" \
  "SELECT COUNT(*) FROM gpu_slice WHERE name LIKE '%add%'"
check "kernel durations" eq "$((2 * N))" \
  "SELECT COUNT(*) FROM gpu_slice WHERE (name LIKE '%scale%' OR name LIKE '%add%') AND dur > 0"
# Copies and fills run on the Copy queue: 2N HtoD + N DtoH + N fills.
check "copies and fills" eq "$((4 * N))" \
  "SELECT COUNT(*) FROM gpu_slice s JOIN track t ON s.track_id = t.id WHERE t.name = 'Copy'"
check "host-to-device copies" eq "$((2 * N))" \
  "SELECT COUNT(*) FROM gpu_slice WHERE name = 'Memcpy HtoD'"
# add waits for scale through the event: one flow per iteration.
check "event dependency flows" ge "$N" \
  "SELECT COUNT(*) FROM flow f JOIN gpu_slice a ON f.slice_out = a.id JOIN gpu_slice b ON f.slice_in = b.id WHERE a.name LIKE '%scale%' AND b.name LIKE '%add%'"
# Every kernel is reached from the API call that launched it.
check "launch correlation flows" eq "$((2 * N))" \
  "SELECT COUNT(DISTINCT b.id) FROM flow f JOIN slice a ON f.slice_out = a.id JOIN gpu_slice b ON f.slice_in = b.id WHERE a.name LIKE '%LaunchKernel%'"
check "copy correlation flows" ge "$((3 * N))" \
  "SELECT COUNT(DISTINCT b.id) FROM flow f JOIN slice a ON f.slice_out = a.id JOIN gpu_slice b ON f.slice_in = b.id WHERE a.name LIKE 'cudaMemcpy%'"
# NVTX ranges on the host thread.
check "iteration ranges" eq "$N" \
  "SELECT COUNT(*) FROM slice WHERE name = 'iteration'"
check "setup range" eq 1 \
  "SELECT COUNT(*) FROM slice WHERE name = 'setup'"
# What the sample's nvtxRangePushEx gave each iteration (MARKER_DATA).
check "iteration colours" eq "$N" \
  "SELECT COUNT(*) FROM slice s JOIN args a USING (arg_set_id) WHERE s.name = 'iteration' AND a.key = 'debug.color' AND a.display_value = '#ff00c000'"
check "iteration payloads" eq "$N" \
  "SELECT COUNT(DISTINCT a.display_value) FROM slice s JOIN args a USING (arg_set_id) WHERE s.name = 'iteration' AND a.key = 'debug.payload'"
check "kernels launched inside iterations" eq "$((2 * N))" \
  "SELECT COUNT(DISTINCT b.id) FROM slice r JOIN slice a ON a.ts >= r.ts AND a.ts < r.ts + r.dur AND a.name LIKE '%LaunchKernel%' JOIN flow f ON f.slice_out = a.id JOIN gpu_slice b ON f.slice_in = b.id WHERE r.name = 'iteration'"
DROPPED="SELECT CAST(COALESCE(MAX(c.value), 0) AS INT) FROM counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = 'gpuperf dropped records'"
UNTIMED="SELECT CAST(COALESCE(MAX(c.value), 0) AS INT) FROM counter c JOIN counter_track t ON c.track_id = t.id WHERE t.name = 'gpuperf untimed GPU work'"
check "nothing dropped" eq 0 "$DROPPED"
check "no untimed GPU work" eq 0 "$UNTIMED"

if [ -z "$CHECK_ONLY" ]; then
  # --- 5. the code the sample loaded, the GPU as nvidia-smi sees it -------
  # (the timeline config asks for them: a trace made elsewhere need not
  # have them)
  check "module loads" ge 1 \
    "SELECT COUNT(*) FROM slice WHERE name = 'GPU module load'"
  fn_check() {
    check "$1 function" ge 1 \
      "SELECT COUNT(*) FROM slice s JOIN args a USING (arg_set_id) WHERE s.name = 'GPU function' AND a.key = 'debug.name' AND a.display_value LIKE '%$1%'"
  }
  fn_check scale
  fn_check add
  # The source-level kinds (the config asks for them): CUDA 13 refuses
  # them, and the collector says so once per kind and records on
  # (docs/cuda.md); a CUPTI that gives them puts instants in the trace.
  refused=$(grep -c 'CUPTI refused the source-level kind' "$DIR/record.log")
  if [ "$refused" -gt 0 ]; then
    if [ "$refused" -eq 5 ]; then
      say "ok    source-level kinds refused by CUPTI, each said once: $refused"
      grep 'CUPTI refused the source-level kind' "$DIR/record.log" |
        head -n 1 | sed 's/^/  /'
    else
      say "FAIL  source-level refusals: got $refused lines, want 5 (one per kind)"
      failures=$((failures + 1))
    fi
  else
    check "source-level instants" ge 1 \
      "SELECT COUNT(*) FROM slice WHERE name = 'GPU instruction'"
  fi
  # The trace's first GPU against the driver's own tool.
  smi=$(timeout 30 nvidia-smi --id=0 --query-gpu=name,uuid,pci.bus_id,compute_cap,clocks.max.sm --format=csv,noheader,nounits 2>/dev/null | head -n 1)
  if [ -z "$smi" ]; then
    say "skip  the GPU against nvidia-smi: nvidia-smi did not answer"
  else
    say "nvidia-smi: $smi"
    smi_field() { echo "$smi" | cut -d, -f"$1" | sed 's/^ *//; s/ *$//'; }
    G="FROM gpu WHERE ugpu = 0"
    check "GPU name" eq "$(smi_field 1)" "SELECT name $G"
    check "GPU uuid" eq "$(smi_field 2 | sed 's/^GPU-//; s/-//g')" \
      "SELECT uuid $G"
    check "GPU PCI address" eq \
      "$(smi_field 3 | sed 's/^0000//' | tr 'A-F' 'a-f')" "SELECT pci_bdf $G"
    check "GPU architecture" eq "sm_$(smi_field 4 | tr -d .)" \
      "SELECT architecture $G"
    attr_sql() { echo "(SELECT a.display_value FROM gpu g JOIN args a USING (arg_set_id) WHERE g.ugpu = 0 AND a.key = 'cu_device_attribute_$1')"; }
    check "compute capability (CUDA's attributes 75 and 76)" eq \
      "$(smi_field 4)" "SELECT $(attr_sql 75) || '.' || $(attr_sql 76)"
    check "GPU highest SM clock (kHz)" eq "$(($(smi_field 5) * 1000))" \
      "SELECT a.display_value FROM gpu g JOIN args a USING (arg_set_id) WHERE g.ugpu = 0 AND a.key = 'core_clock_khz'"
  fi
fi

# --- 6. per-kernel counters (their own recording on a GPU) ----------------
if [ -n "$TRACE_COUNTERS" ]; then
  nmetrics=$(echo "$METRICS" | tr ',' '\n' | grep -c .)
  check "kernels (with counters)" eq "$((2 * N))" \
    "SELECT COUNT(*) FROM gpu_slice WHERE name LIKE '%scale%' OR name LIKE '%add%'" \
    "$TRACE_COUNTERS"
  check "per-kernel counter values" ge "$((2 * N * nmetrics))" \
    "SELECT COUNT(*) FROM counter c JOIN gpu_counter_track t ON c.track_id = t.id" \
    "$TRACE_COUNTERS"
  check "nothing dropped (with counters)" eq 0 "$DROPPED" "$TRACE_COUNTERS"
  check "no untimed GPU work (with counters)" eq 0 "$UNTIMED" "$TRACE_COUNTERS"
fi

# --- 7. the callback API, the lookups, the code and attribute records -----
if [ -z "$CHECK_ONLY" ]; then
  say "running the callback probe ($ITERATIONS iterations)"
  timeout 120 "$PROBE" "$ITERATIONS" >"$DIR/probe.log" 2>&1
  rc=$?
  sed 's/^/  /' "$DIR/probe.log"
  if [ $rc -eq 0 ]; then
    say "ok    callback probe"
  else
    say "FAIL  callback probe exited $rc"
    failures=$((failures + 1))
  fi
  say "running the callback probe's per-kernel metrics ($ITERATIONS kernels)"
  timeout 120 "$PROBE" --metrics "$ITERATIONS" >"$DIR/probe-metrics.log" 2>&1
  rc=$?
  sed 's/^/  /' "$DIR/probe-metrics.log"
  if [ $rc -eq 0 ]; then
    say "ok    per-kernel METRIC records"
  else
    say "FAIL  the probe's metrics exited $rc"
    failures=$((failures + 1))
  fi
fi

elapsed=$(( $(date +%s) - started ))
if [ $failures -ne 0 ]; then
  die 1 "FAIL: $failures checks failed in ${elapsed}s (trace and logs in $DIR)"
fi
say "PASS: all checks in ${elapsed}s (trace: $TRACE)"
[ -z "${GPUPERF_CHECK_DIR:-}" ] && [ -n "$CHECK_ONLY" ] && rm -rf "$DIR"
exit 0
