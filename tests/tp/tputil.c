/*
 * tputil.c - see tputil.h.
 */
#include "tp/tputil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

void tg_init(tg *t) {
  gp__pb_writer_init(&t->w);
}

void tg_fini(tg *t) {
  gp__pb_writer_fini(&t->w);
}

void tg_packet(tg *t, uint64_t ts, uint32_t seq, uint32_t flags) {
  gp__pb_begin(&t->w, 1);
  if (ts)
    gp__pb_uint(&t->w, 8, ts);
  if (seq)
    gp__pb_uint(&t->w, 10, seq);
  if (flags)
    gp__pb_uint(&t->w, 13, flags);
}

void tg_end(tg *t) {
  gp__pb_end(&t->w);
}

uint8_t *tg_bytes(tg *t, size_t *size) {
  ASSERT(!gp__pb_error(&t->w));
  *size = (size_t)gp__pb_size(&t->w);
  uint8_t *p = malloc(*size ? *size : 1);
  ASSERT_NOT_NULL(p);
  gp__pb_copy(&t->w, p);
  return p;
}

void tg_write(tg *t, const char *path) {
  size_t n;
  uint8_t *p = tg_bytes(t, &n);
  FILE *f = fopen(path, "wb");
  ASSERT_NOT_NULL(f);
  ASSERT_EQ(fwrite(p, 1, n, f), n);
  ASSERT_EQ(fclose(f), 0);
  free(p);
}

gp_tp *tp_open_bytes(const uint8_t *data, size_t size) {
  gp_tp *tp = NULL;
  gp_tp_error err;
  int rc = gp_tp_open_buffer(data, size, "test trace", NULL, &tp, &err);
  if (rc)
    gp_test_fail(__FILE__, __LINE__, "open failed: %s", err.message);
  return tp;
}

gp_tp *tp_open_tg(tg *t) {
  size_t n;
  uint8_t *p = tg_bytes(t, &n);
  gp_tp *tp = tp_open_bytes(p, n);
  free(p);
  return tp;
}

gp_tp *tp_small_trace(void) {
  tg t;
  tg_init(&t);
  tg_packet(&t, 0, 1, 0);
  gp__pb_begin(&t.w, 53);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_uint(&t.w, 2, 1000);
  gp__pb_end(&t.w);
  tg_end(&t);
  gp_tp *tp = tp_open_tg(&t);
  tg_fini(&t);
  return tp;
}

char *tp_csv(gp_tp *tp, const char *sql) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  ASSERT_NOT_NULL(f);
  gp_tp_error err;
  int rc = gp_tp_write(tp, sql, GP_TP_FORMAT_CSV, f, NULL, &err);
  fclose(f);
  if (rc)
    gp_test_fail(__FILE__, __LINE__, "query failed: %s\n    sql: %s",
                 err.message, sql);
  return buf;
}

int tp_fail(gp_tp *tp, const char *sql, char *msg, size_t size) {
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  ASSERT_NOT_NULL(f);
  gp_tp_error err;
  int rc = gp_tp_write(tp, sql, GP_TP_FORMAT_CSV, f, NULL, &err);
  fclose(f);
  free(buf);
  if (rc == 0)
    gp_test_fail(__FILE__, __LINE__, "query should have failed: %s", sql);
  if (msg)
    snprintf(msg, size, "%s", err.message);
  return rc;
}

/* The lines of a CSV text, whitespace-stripped, leading blank lines
 * dropped, joined by '\n'. */
static char *normalize(const char *s) {
  size_t n = strlen(s);
  char *out = malloc(n + 2);
  ASSERT_NOT_NULL(out);
  size_t o = 0;
  bool started = false;
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    size_t start = o;
    for (size_t i = 0; i < len; i++)
      if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
        out[o++] = s[i];
    if (o == start && !started) {
      /* a leading blank line */
    } else {
      started = true;
      out[o++] = '\n';
    }
    s += len + (e ? 1 : 0);
  }
  while (o > 0 && out[o - 1] == '\n')
    o--;
  out[o] = '\0';
  return out;
}

bool tp_csv_equal(const char *a, const char *b) {
  char *na = normalize(a), *nb = normalize(b);
  bool eq = strcmp(na, nb) == 0;
  free(na);
  free(nb);
  return eq;
}

void tp_assert_csv(const char *actual, const char *expected, const char *what) {
  char *a = normalize(actual), *e = normalize(expected);
  if (strcmp(a, e) != 0)
    gp_test_fail(__FILE__, __LINE__,
                 "%s: CSV differs\n--- expected\n%s\n--- actual\n%s", what, e,
                 a);
  free(a);
  free(e);
}

void tp_expect(gp_tp *tp, const char *sql, const char *expected) {
  char *csv = tp_csv(tp, sql);
  tp_assert_csv(csv, expected, sql);
  free(csv);
}

int64_t tp_int(gp_tp *tp, const char *sql) {
  gp_tp_rows *r;
  gp_tp_error err;
  if (gp_tp_query(tp, sql, &r, &err) != 0)
    gp_test_fail(__FILE__, __LINE__, "query failed: %s\n    sql: %s",
                 err.message, sql);
  ASSERT_EQ(gp_tp_rows_next(r, &err), 1);
  int64_t v = gp_tp_rows_int(r, 0);
  gp_tp_rows_destroy(r);
  return v;
}

char *tp_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 4096 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
      ASSERT_NOT_NULL(buf);
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0)
      break;
  }
  fclose(f);
  buf[n] = '\0';
  if (size)
    *size = n;
  return buf;
}

const char *tp_shared(void) {
  const char *s = getenv("GPUPERF_SHARED");
  return s && *s ? s : NULL;
}

static char *read_fd(int fd) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (n + 1024 > cap) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
    ssize_t got = read(fd, buf + n, cap - n - 1);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    n += (size_t)got;
  }
  buf[n] = '\0';
  return buf;
}

int tp_cli(char **out, char **err, const char *arg0, ...) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set to the gpuperf binary (run via make test)");
  const char *argv[64];
  int argc = 0;
  argv[argc++] = cli;
  va_list ap;
  va_start(ap, arg0);
  for (const char *a = arg0; a && argc < 63; a = va_arg(ap, const char *))
    argv[argc++] = a;
  va_end(ap);
  argv[argc] = NULL;
  char opath[512], epath[512];
  snprintf(opath, sizeof(opath), "%s/cli.out", gp_test_tmpdir());
  snprintf(epath, sizeof(epath), "%s/cli.err", gp_test_tmpdir());
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0)
      _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    execv(cli, (char *const *)argv);
    _exit(127);
  }
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  int fd = open(opath, O_RDONLY);
  char *o = fd >= 0 ? read_fd(fd) : NULL;
  if (fd >= 0)
    close(fd);
  fd = open(epath, O_RDONLY);
  char *e = fd >= 0 ? read_fd(fd) : NULL;
  if (fd >= 0)
    close(fd);
  if (out)
    *out = o;
  else
    free(o);
  if (err)
    *err = e;
  else
    free(e);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* See tputil.h. */
char *tp_perfetto_csv(const char *shell, const char *trace, const char *sql) {
  const char *qpath = gp_test_path(1, "q.sql");
  const char *opath = gp_test_path(2, "out.csv");
  FILE *f = fopen(qpath, "w");
  ASSERT_NOT_NULL(f);
  fputs(sql, f);
  fclose(f);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    if (!freopen(opath, "w", stdout) || !freopen("/dev/null", "w", stderr))
      _exit(126);
    execl(shell, shell, "-q", qpath, trace, (char *)NULL);
    _exit(127);
  }
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  return tp_read_file(opath, NULL);
}

/* See tputil.h. */
void tp_each_conformance_trace(void (*fn)(const char *arg, const char *path),
                               const char *arg) {
  const char *shared = tp_shared();
  if (!shared)
    return;
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s/conformance", shared);
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    char path[2048];
    snprintf(path, sizeof(path), "%s/%s/trace.pb", dir, e->d_name);
    if (e->d_name[0] != '.' && access(path, R_OK) == 0)
      fn(arg, path);
  }
  closedir(d);
}

/* See tputil.h. */
const char *tp_line_of(const char *text, const char *needle, char *buf,
                       size_t size) {
  const char *p = strstr(text, needle);
  if (!p)
    return NULL;
  while (p > text && p[-1] != '\n')
    p--;
  snprintf(buf, size, "%.*s", (int)strcspn(p, "\n"), p);
  return buf;
}
