/*
 * test_lifetime.c - the buffer lifetime rule (docs/architecture.md, "Who
 * may touch a buffer") as a matrix: every way gpuperf runs GPU work (the
 * demo, `record`, `stat`, a Perfetto producer, the OpenCL preload) times
 * every reader beside the program (the stat observer, the HUD on a
 * terminal and into a file, `gpuperf top` reading the live region, the
 * producer), each over a short, a medium and a long run and over the ways
 * a process ends (return from main, exit, _exit, abort).
 *
 * A run passes when it ends as the program says it ends (never SIGSEGV)
 * and nothing, the program, the CLI, top or the peer, printed a sanitizer
 * report. The matrix is in `make test-asan` and `make test-tsan` (TSAN_TESTS
 * in mk/tsan.mk), where a use after free or a race is a report; the plain
 * build catches the crashes. The OpenCL preload cannot be loaded into a
 * sanitized program (test_record_safety.c): there its rows skip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "unit/writer_util.h"

typedef enum cmd_kind {
  C_DEMO,
  C_RECORD,
  C_STAT,
  C_PRODUCER,
  C_PRELOAD
} cmd_kind;
typedef enum obs_kind {
  O_STAT,
  O_HUD_TERM,
  O_HUD_FILE,
  O_TOP,
  O_PRODUCER
} obs_kind;

typedef struct length {
  const char *name;
  int steps;       /* sim steps, or OpenCL sample iterations / 10 */
  const char *die; /* sim_app --die, NULL: return from main */
  int status;      /* what the program exits with */
} length;

static const length lengths[] = {
    {"short", 1, NULL, 0},
    {"medium", 10, "_exit", 0},
    {"long", 100, "exit", 0},
    {"abort", 3, "abort", 134},
};

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

static const char *const reports[] = {
    "ERROR: AddressSanitizer", "WARNING: ThreadSanitizer", "runtime error:",
    "ERROR: LeakSanitizer",    "Segmentation fault",       "SIGSEGV",
};

/* Fails if the file at dir/name holds a sanitizer report or a crash. */
static void expect_no_report(const char *dir, const char *name,
                             const char *what) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  char *t = wt_read_text(path);
  for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
    if (strstr(t, reports[i]))
      gp_test_fail(__FILE__, __LINE__, "%s: %s in %s:\n%.4000s", what,
                   reports[i], name, t);
  free(t);
}

/* Runs one cell of the matrix with one length. */
static void run_cell(cmd_kind c, obs_kind o, const length *len) {
  bool producer = c == C_PRODUCER || o == O_PRODUCER;
  if (c == C_PRELOAD && GP_TEST_SANITIZED)
    SKIP("the OpenCL preload cannot load into a sanitized program");
  if (c == C_PRELOAD && len->die)
    return; /* the OpenCL sample has one way to end */
  if (c == C_DEMO && len->die)
    return; /* so has the demo */
  static int serial;
  char dir[1100];
  snprintf(dir, sizeof(dir), "%s/cell%d", gp_test_tmpdir(), serial++);
  mkdir(dir, 0755);
  char what[256];
  snprintf(what, sizeof(what), "command %d, observer %d, %s run", (int)c,
           (int)o, len->name);

  /* The program and how gpuperf runs it. */
  char prog[2048], run[4096];
  if (c == C_PRELOAD)
    snprintf(prog, sizeof(prog), "'%s' -n %d",
             wt_build_path("tests/opencl-sample"), len->steps * 10);
  else
    snprintf(prog, sizeof(prog), "'%s' --steps %d%s%s",
             wt_build_path("tests/programs/sim_app"), len->steps,
             len->die ? " --die " : "", len->die ? len->die : "");
  switch (c) {
  case C_DEMO:
    snprintf(run, sizeof(run), "'%s' demo --steps %d -q -o '%s/demo.pftrace'",
             cli(), len->steps, dir);
    break;
  case C_RECORD:
    snprintf(run, sizeof(run), "'%s' record -q -o '%s/rec.pftrace' -- %s",
             cli(), dir, prog);
    break;
  case C_STAT:
    snprintf(run, sizeof(run), "'%s' stat -o '%s/stat.txt' -- %s", cli(), dir,
             prog);
    break;
  case C_PRODUCER:
    snprintf(run, sizeof(run), "%s", prog);
    break;
  case C_PRELOAD:
    snprintf(run, sizeof(run), "LD_PRELOAD='%s' %s",
             wt_build_path("libgpuperf-opencl.so"), prog);
    break;
  }

  /* The reader beside it. */
  char env[2048] = "";
  switch (o) {
  case O_STAT:
    if (c != C_STAT)
      snprintf(env, sizeof(env), "GPUPERF_STAT_DIR='%s' ", dir);
    break;
  case O_HUD_TERM:
  case O_HUD_FILE:
    snprintf(env, sizeof(env),
             "GPUPERF_HUD=Utilization GPUPERF_HUD_PERIOD_MS=20 %s%s%s",
             o == O_HUD_FILE ? "GPUPERF_HUD_FILE='" : "",
             o == O_HUD_FILE ? dir : "", o == O_HUD_FILE ? "/hud.csv' " : "");
    break;
  case O_TOP:
  case O_PRODUCER:
    break;
  }

  const char *peer =
      producer ? wt_build_path("tests/programs/perfetto_peer") : "";
  char script[16384];
  int n = snprintf(
      script, sizeof(script),
      "cd '%s' || exit 200\n"
      "export GPUPERF_LIVE_DIR='%s/live'\n"
      "mkdir -p live\n"
      ": >prog.out; : >prog.err; : >top.err; : >peer.err\n"
      "PEER=\n"
      "if [ -n '%s' ]; then\n"
      "  '%s' --socket '%s/p.sock' --out '%s/svc.pftrace' --ready ready "
      "--source gpu.renderstages --source gpu.counters --counters "
      "500000:Utilization >peer.out 2>peer.err & PEER=$!\n"
      "  i=0; while [ ! -e ready ] && [ $i -lt 1000 ]; do sleep 0.01; "
      "i=$((i+1)); done\n"
      "  export PERFETTO_PRODUCER_SOCK_NAME='%s/p.sock' "
      "GPUPERF_PRODUCER=perfetto\n"
      "fi\n"
      "TOP=\n"
      "if [ %d = 1 ]; then\n"
      "  ( while :; do '%s' top --once >>top.out 2>>top.err; "
      "S=$?; [ $S -ge 128 ] && echo \"top: status $S\" >>top.err; "
      "sleep 0.05; done ) & TOP=$!\n"
      "fi\n",
      dir, dir, producer ? "1" : "", peer, dir, dir, dir, o == O_TOP ? 1 : 0,
      cli());
  /* On a terminal: script(1) gives the program one. */
  if (o == O_HUD_TERM)
    n += snprintf(script + n, sizeof(script) - (size_t)n,
                  "%sscript -qefc \"%s\" /dev/null >prog.out 2>prog.err; "
                  "S=$?\n",
                  env, run);
  else
    n += snprintf(script + n, sizeof(script) - (size_t)n,
                  "%s%s >prog.out 2>prog.err; S=$?\n", env, run);
  snprintf(script + n, sizeof(script) - (size_t)n,
           "if [ -n \"$TOP\" ]; then kill $TOP; wait $TOP 2>/dev/null; fi\n"
           "if [ -n \"$PEER\" ]; then\n"
           "  i=0; while kill -0 $PEER 2>/dev/null && [ $i -lt 500 ]; do "
           "sleep 0.01; i=$((i+1)); done\n"
           "  kill $PEER 2>/dev/null; wait $PEER\n"
           "fi\n"
           "exit $S\n");
  char path[1200];
  snprintf(path, sizeof(path), "%s/run.sh", dir);
  FILE *f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  fputs(script, f);
  fclose(f);
  char cmd[1300];
  snprintf(cmd, sizeof(cmd), "sh '%s'", path);
  int st = wt_system(cmd);

  expect_no_report(dir, "prog.err", what);
  expect_no_report(dir, "prog.out", what);
  if (o == O_TOP)
    expect_no_report(dir, "top.err", what);
  if (producer)
    expect_no_report(dir, "peer.err", what);
  /* The CLI passes on the program's status (128 + a signal); an abort
   * only has to be an abort, not a crash. */
  int want = len->status;
  bool ok = want == 0 ? st == 0 : st != 0 && st != 139;
  if (!ok) {
    char perr[1200];
    snprintf(perr, sizeof(perr), "%s/prog.err", dir);
    char *t = wt_read_text(perr);
    gp_test_fail(__FILE__, __LINE__, "%s: status %d, want %d; stderr:\n%.3000s",
                 what, st, want, t);
  }
}

static void run_row(cmd_kind c, obs_kind o) {
  for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++)
    run_cell(c, o, &lengths[i]);
}

#define CELL(cname, c, oname, o)                                               \
  TEST(lifetime_##cname##_##oname) {                                           \
    run_row(c, o);                                                             \
  }

CELL(demo, C_DEMO, stat, O_STAT)
CELL(demo, C_DEMO, hud_term, O_HUD_TERM)
CELL(demo, C_DEMO, hud_file, O_HUD_FILE)
CELL(demo, C_DEMO, top, O_TOP)
CELL(demo, C_DEMO, producer, O_PRODUCER)
CELL(record, C_RECORD, stat, O_STAT)
CELL(record, C_RECORD, hud_term, O_HUD_TERM)
CELL(record, C_RECORD, hud_file, O_HUD_FILE)
CELL(record, C_RECORD, top, O_TOP)
CELL(record, C_RECORD, producer, O_PRODUCER)
CELL(stat, C_STAT, stat, O_STAT)
CELL(stat, C_STAT, hud_term, O_HUD_TERM)
CELL(stat, C_STAT, hud_file, O_HUD_FILE)
CELL(stat, C_STAT, top, O_TOP)
CELL(stat, C_STAT, producer, O_PRODUCER)
CELL(producer, C_PRODUCER, stat, O_STAT)
CELL(producer, C_PRODUCER, hud_term, O_HUD_TERM)
CELL(producer, C_PRODUCER, hud_file, O_HUD_FILE)
CELL(producer, C_PRODUCER, top, O_TOP)
CELL(producer, C_PRODUCER, producer, O_PRODUCER)
CELL(preload, C_PRELOAD, stat, O_STAT)
CELL(preload, C_PRELOAD, hud_term, O_HUD_TERM)
CELL(preload, C_PRELOAD, hud_file, O_HUD_FILE)
CELL(preload, C_PRELOAD, top, O_TOP)
CELL(preload, C_PRELOAD, producer, O_PRODUCER)
