/*
 * test_report_cli.c - the report's HTML page loaded in headless Chromium
 * (timeline and plot elements counted against the trace; the zoomed
 * timeline is test_report_html.c's), and each error
 * case of report, query, record and demo as a user meets it: one line on
 * stderr, the documented exit status, the input file untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tp/tputil.h"

/* Runs the CLI in dir with stdin from in_path (NULL: /dev/null). */
static int run_in(const char *dir, const char *in_path, char **out, char **err,
                  ...) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set to the gpuperf binary (run via make test)");
  const char *argv[32];
  int argc = 0;
  argv[argc++] = cli;
  va_list ap;
  va_start(ap, err);
  for (const char *a; argc < 31 && (a = va_arg(ap, const char *));)
    argv[argc++] = a;
  va_end(ap);
  argv[argc] = NULL;
  char opath[512], epath[512];
  snprintf(opath, sizeof(opath), "%s/run_in.out", gp_test_tmpdir());
  snprintf(epath, sizeof(epath), "%s/run_in.err", gp_test_tmpdir());
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int i = open(in_path ? in_path : "/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || i < 0 || (dir && chdir(dir) != 0))
      _exit(126);
    dup2(i, 0);
    dup2(o, 1);
    dup2(e, 2);
    setenv("GPUPERF_NO_PROGRESS", "1", 1);
    execv(cli, (char *const *)argv);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  *out = tp_read_file(opath, NULL);
  *err = tp_read_file(epath, NULL);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int nlines(const char *s) {
  int n = 0;
  for (; s && *s; s++)
    n += *s == '\n';
  return n;
}

/* One error line with the one prefix. */
static void one_line(const char *err) {
  if (nlines(err) != 1)
    fprintf(stderr, "stderr was:\n%s", err ? err : "(none)");
  ASSERT_EQ(nlines(err), 1);
  ASSERT(strncmp(err, "gpuperf: ", 9) == 0);
}

static void make_demo(const char *path) {
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "demo", "-q", "--steps", "2", "-o", path, NULL),
            0);
  free(out);
  free(err);
}

TEST(report_cli_errors) {
  const char *dir = gp_test_tmpdir();
  const char *trace = gp_test_path(0, "t.pftrace");
  make_demo(trace);
  size_t size0;
  char *orig = tp_read_file(trace, &size0);
  char *out, *err;
  /* --html without FILE, no gpuperf.pftrace here: one line. */
  ASSERT_EQ(run_in(dir, NULL, &out, &err, "report", "--html", "o.html", NULL),
            1);
  one_line(err);
  ASSERT(strstr(err, "gpuperf.pftrace") != NULL);
  free(out);
  free(err);
  /* The default file is read when it is there. */
  char dflt[600];
  snprintf(dflt, sizeof(dflt), "%s/gpuperf.pftrace", dir);
  ASSERT_EQ(rename(trace, dflt), 0);
  ASSERT_EQ(run_in(dir, NULL, &out, &err, "report", NULL), 0);
  ASSERT(strstr(out, "matmul_kernel") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(rename(dflt, trace), 0);
  /* --html onto the trace itself is refused and the trace kept. */
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--html", trace, NULL), 1);
  one_line(err);
  size_t size1;
  char *now = tp_read_file(trace, &size1);
  ASSERT(size1 == size0 && memcmp(now, orig, size0) == 0);
  free(now);
  free(out);
  free(err);
  /* --db is refused with its reason, and nothing is written. */
  const char *db = gp_test_path(1, "t.db");
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--db", db, NULL), 1);
  one_line(err);
  ASSERT(strstr(err, "--db is refused") && strstr(err, "gpuperf query"));
  ASSERT(access(db, F_OK) != 0);
  free(out);
  free(err);
  /* Standard input, by '-' and as /dev/stdin. */
  ASSERT_EQ(run_in(NULL, trace, &out, &err, "report", "-", NULL), 0);
  ASSERT(strstr(out, "matmul_kernel") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(run_in(NULL, trace, &out, &err, "report", "/dev/stdin", NULL), 0);
  ASSERT(strstr(out, "matmul_kernel") != NULL);
  free(out);
  free(err);
  /* /dev/null: empty, bad input. */
  ASSERT_EQ(tp_cli(&out, &err, "report", "/dev/null", NULL), 2);
  one_line(err);
  ASSERT(strstr(err, "empty") != NULL);
  free(out);
  free(err);
  /* /dev/zero: an endless device that is no trace is refused at its first
   * byte (it was read until memory ran out); query names it too. */
  ASSERT_EQ(tp_cli(&out, &err, "report", "/dev/zero", NULL), 2);
  one_line(err);
  ASSERT(strstr(err, "not a Perfetto trace") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "query", "/dev/zero", "SELECT 1", NULL), 2);
  one_line(err);
  ASSERT(strstr(err, "not a regular file") != NULL);
  free(out);
  free(err);
  /* A JSON trace is named as such. */
  const char *json = gp_test_path(1, "t.json");
  FILE *f = fopen(json, "w");
  fputs("  {\"traceEvents\": []}\n", f);
  fclose(f);
  ASSERT_EQ(tp_cli(&out, &err, "report", json, NULL), 2);
  one_line(err);
  ASSERT(strstr(err, "JSON trace") != NULL);
  free(out);
  free(err);
  /* A trace cut short says how to read it anyway, and that works. */
  const char *cut = gp_test_path(2, "cut.pftrace");
  f = fopen(cut, "wb");
  fwrite(orig, 1, size0 * 2 / 3, f);
  fclose(f);
  ASSERT_EQ(tp_cli(&out, &err, "report", cut, NULL), 2);
  one_line(err);
  ASSERT(strstr(err, "--allow-truncated") != NULL);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "report", cut, "--allow-truncated", NULL), 0);
  free(out);
  free(err);
  /* Usage errors: one line each. */
  const char *bad[][3] = {{"--bogus", NULL, NULL},
                          {"--top", "x", NULL},
                          {"--format", "xml", NULL},
                          {"--gpu", NULL, NULL},
                          {trace, "second.pftrace", NULL}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    ASSERT_EQ(tp_cli(&out, &err, "report", bad[i][0], bad[i][1], NULL), 1);
    one_line(err);
    free(out);
    free(err);
  }
  ASSERT_EQ(tp_cli(&out, &err, "nosuchcommand", NULL), 1);
  one_line(err);
  free(out);
  free(err);
  ASSERT_EQ(tp_cli(&out, &err, "demo", "--bogus", NULL), 1);
  one_line(err);
  free(out);
  free(err);
  /* query FILE "" is an error. */
  ASSERT_EQ(tp_cli(&out, &err, "query", trace, "", NULL), 1);
  one_line(err);
  free(out);
  free(err);
  /* An empty -c config is refused before anything runs. */
  const char *cfg = gp_test_path(1, "empty.cfg");
  f = fopen(cfg, "w");
  fputs("\n  \n", f);
  fclose(f);
  const char *rec = gp_test_path(3, "never.pftrace");
  ASSERT_EQ(
      tp_cli(&out, &err, "record", "-c", cfg, "-o", rec, "--", "true", NULL),
      2);
  one_line(err);
  ASSERT(strstr(err, "empty config") != NULL);
  ASSERT(access(rec, F_OK) != 0);
  free(out);
  free(err);
  now = tp_read_file(trace, &size1);
  ASSERT(size1 == size0 && memcmp(now, orig, size0) == 0);
  free(now);
  free(orig);
}

/* Counts occurrences of needle in s. */
static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* Sum of the data-n="N" attributes between from and to. */
static long sum_n(const char *from, const char *to) {
  long n = 0;
  for (const char *p = from; (p = strstr(p, "data-n=\"")) && p < to; p++)
    n += strtol(p + 8, NULL, 10);
  return n;
}

static int64_t q_int(gp_tp *tp, const char *sql) {
  return tp_int(tp, sql);
}

TEST(report_html_in_chromium) {
  const char *chromium = "/usr/bin/chromium";
  if (access(chromium, X_OK) != 0)
    SKIP("chromium is not installed (scripts/install-deps.sh installs it)");
  const char *trace = gp_test_path(0, "demo.pftrace");
  const char *html = gp_test_path(1, "report.html");
  make_demo(trace);
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, "--html", html, NULL), 0);
  free(out);
  free(err);
  /* The page must open offline: nothing fetched from anywhere. */
  char *page = tp_read_file(html, NULL);
  ASSERT_NOT_NULL(page);
  ASSERT(strstr(page, "src=\"http") == NULL &&
         strstr(page, "href=\"http") == NULL);
  free(page);
  char url[600], profile[600], dom[600];
  snprintf(url, sizeof(url), "file://%s", html);
  snprintf(profile, sizeof(profile), "%s/chromium-profile", gp_test_tmpdir());
  snprintf(dom, sizeof(dom), "%s/dom.html", gp_test_tmpdir());
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int o = open(dom, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open("/dev/null", O_WRONLY);
    dup2(o, 1);
    dup2(e, 2);
    char pflag[700];
    snprintf(pflag, sizeof(pflag), "--user-data-dir=%s", profile);
    execl(chromium, chromium, "--headless", "--no-sandbox", "--disable-gpu",
          "--disable-background-networking", "--disable-component-update",
          "--disable-sync", "--no-first-run", pflag, "--dump-dom", url,
          (char *)NULL);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  char *d = tp_read_file(dom, NULL);
  ASSERT_NOT_NULL(d);
  /* The scripts ran: they mark the body and draw the timeline. */
  ASSERT(strstr(d, "data-ready=\"1\"") != NULL);
  char *script = strstr(d, "var TL="); /* what was drawn is before it */
  ASSERT_NOT_NULL(script);
  gp_tp *tp;
  ASSERT_EQ(gp_tp_open(trace, NULL, &tp, NULL), 0);
  /* One lane per GPU queue (gpu, queue name) and per host track, but
   * none for gpuperf's own 0 ns markers. */
  static const char host_sql[] =
      "FROM slice s JOIN track t ON s.track_id = t.id WHERE t.id NOT IN "
      "(SELECT id FROM gpu_track) AND NOT EXISTS (SELECT 1 FROM track p "
      "WHERE p.id = t.parent_id AND p.name GLOB 'Device #*') AND NOT "
      "(s.name GLOB 'gpuperf *' AND s.dur = 0)";
  char sql[512];
  int64_t gpu_lanes =
      q_int(tp, "SELECT count(*) FROM (SELECT DISTINCT extract_arg("
                "t.dimension_arg_set_id, 'ugpu'), t.name FROM gpu_slice s "
                "JOIN gpu_track t ON s.track_id = t.id)");
  snprintf(sql, sizeof(sql), "SELECT count(DISTINCT s.track_id) %s", host_sql);
  int64_t host_lanes = q_int(tp, sql);
  *script = '\0';
  ASSERT_EQ(count(d, "<g class=\"lane\""), (int)(gpu_lanes + host_lanes));
  /* Host lanes are named after their thread and process. */
  ASSERT(strstr(d, "data-lane=\"gpuperf 1000 (gpuperf 1000)\"") ||
         !q_int(tp, "SELECT count(*) FROM thread WHERE name = 'gpuperf'"));
  /* The whole window is in view: the GPU lanes' rects stand for every
   * GPU slice, the host lanes' for every host slice. */
  const char *first_host = NULL;
  for (const char *p = d; (p = strstr(p, "<g class=\"lane\" data-lane=\""));
       p++) {
    if (!strstr(p, "Sim Compute GPU") ||
        strstr(p, "Sim Compute GPU") > strchr(p, '>')) {
      first_host = p;
      break;
    }
  }
  ASSERT_NOT_NULL(first_host);
  ASSERT_EQ(sum_n(strstr(d, "<svg id=\"timeline\""), first_host),
            (long)q_int(tp, "SELECT count(*) FROM gpu_slice"));
  snprintf(sql, sizeof(sql), "SELECT count(*) %s", host_sql);
  ASSERT_EQ(sum_n(first_host, strstr(d, "id=\"tlfl\"")), (long)q_int(tp, sql));
  *script = 'v';
  /* One plot per counter track (gpuperf's own are not plotted), each
   * with its sample count. */
  int64_t tracks =
      q_int(tp, "SELECT count(*) FROM gpu_counter_track t WHERE EXISTS "
                "(SELECT 1 FROM counter WHERE track_id = t.id)");
  ASSERT_EQ(count(d, "<figure class=\"plot\""), (int)tracks);
  ASSERT_EQ(count(d, "<polyline"), (int)tracks);
  long samples = 0;
  for (const char *p = d; (p = strstr(p, "data-samples=\"")); p++)
    samples += strtol(p + 14, NULL, 10);
  ASSERT_EQ(samples, (long)q_int(tp, "SELECT count(*) FROM counter c JOIN "
                                     "gpu_counter_track t ON c.track_id = "
                                     "t.id"));
  /* Sortable tables, and the way to Perfetto's UI. */
  ASSERT(count(d, "<table class=\"sortable\"") >= 8);
  ASSERT(strstr(d, "ui.perfetto.dev") != NULL);
  gp_tp_close(tp);
  free(d);
}

/* A name in a trace cannot move the cursor or change colours: control
 * characters come out as '?' in the text report. */
TEST(report_text_cleans_control_characters) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 100, 1, 0);
  gp__pb_begin(&t.w, 53);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_uint(&t.w, 2, 50);
  gp__pb_int(&t.w, 11, 0);
  gp__pb_uint(&t.w, 3, 0); /* hw_queue_id */
  gp__pb_uint(&t.w, 4, 0); /* stage_id */
  gp__pb_string(&t.w, 17, "evil\x1b[2J\x07kernel");
  gp__pb_end(&t.w);
  tg_end(&t);
  const char *trace = gp_test_path(0, "esc.pftrace");
  tg_write(&t, trace);
  tg_fini(&t);
  char *out, *err;
  ASSERT_EQ(tp_cli(&out, &err, "report", trace, NULL), 0);
  ASSERT(strchr(out, '\x1b') == NULL && strchr(out, '\x07') == NULL);
  ASSERT(strstr(out, "evil?[2J?kernel") != NULL);
  free(out);
  free(err);
}
