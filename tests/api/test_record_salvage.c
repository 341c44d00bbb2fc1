/*
 * test_record_salvage.c - the records of a process killed by SIGKILL,
 * salvaged from its death page (src/session/session_salvage.c) by record
 * and --recover: the page as untrusted input (cut short, scribbled over,
 * lying about sizes and string ids), and what --recover says was lost.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpuperf/gpuperf.h"
#include "harness.h"
#include "perfetto/proto.h"
#include "record_util.h"
#include "session/sessionInt.h"
#include "unit/writer_util.h"

/* Copies file from to file to. */
static void copy_file(const char *from, const char *to) {
  size_t n = 0;
  char *d = NULL;
  FILE *f = fopen(from, "rb");
  ASSERT(f);
  size_t cap = 1 << 20;
  d = malloc(cap);
  size_t k;
  while ((k = fread(d + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap)
      d = realloc(d, cap *= 2);
  }
  fclose(f);
  f = fopen(to, "wb");
  ASSERT(f);
  ASSERT_EQ(fwrite(d, 1, n, f), n);
  fclose(f);
  free(d);
}

/* A parts folder like record's: dir/1.open and dir/1.pftrace copied from
 * the originals in src, then the page patched by fn. */
typedef void (*page_patch)(gp__death_page *h, uint8_t *m, size_t size);

static void prepare_dir(const char *src, const char *dir) {
  static const char *const names[] = {"1.open", "1.pftrace", "config.pbtxt"};
  char a[1300], b[1300];
  mkdir(dir, 0755);
  for (size_t i = 0; i < NELEM(names); i++) {
    snprintf(a, sizeof(a), "%s/%s", src, names[i]);
    snprintf(b, sizeof(b), "%s/%s", dir, names[i]);
    copy_file(a, b);
  }
}

static int salvage_patched(const char *src, const char *dir, page_patch fn,
                           uint64_t *salvaged) {
  char b[1300];
  prepare_dir(src, dir);
  if (fn) {
    snprintf(b, sizeof(b), "%s/1.open", dir);
    FILE *f = fopen(b, "r+b");
    ASSERT(f);
    fseek(f, 0, SEEK_END);
    size_t size = (size_t)ftell(f);
    uint8_t *m = calloc(1, size + sizeof(gp__death_page));
    fseek(f, 0, SEEK_SET);
    ASSERT_EQ(fread(m, 1, size, f), size);
    fn((gp__death_page *)m, m, size);
    fseek(f, 0, SEEK_SET);
    ASSERT_EQ(fwrite(m, 1, size, f), size);
    fclose(f);
    free(m);
  }
  return gp_record_salvage(dir, 1, salvaged);
}

static void patch_str_used(gp__death_page *h, uint8_t *m, size_t size) {
  (void)m;
  h->str_used = size; /* past the log */
}

static void patch_cells_out(gp__death_page *h, uint8_t *m, size_t size) {
  (void)size;
  for (uint32_t i = 0; i < h->ncells; i++) {
    uint64_t *c = (uint64_t *)(m + h->cells_offset + (size_t)i * h->stride);
    if (c[1])
      c[1] = h->area_size + 4097; /* past the area */
  }
}

static void patch_sizes(gp__death_page *h, uint8_t *m, size_t size) {
  (void)m;
  (void)size;
  for (uint32_t i = 0; i < h->ncells; i++) {
    uint64_t *c = (uint64_t *)(m + h->cells_offset + (size_t)i * h->stride);
    if (c[1]) {
      /* Records claimed past the buffer, and sizes scribbled over. */
      c[0] = c[2] + 1000000;
      gp_activity *r = (gp_activity *)(m + h->area_offset + c[1] - 1);
      r->size = 4; /* shorter than a header */
    }
  }
}

static uint64_t noise = 88172645463325252ull;
static void patch_noise(gp__death_page *h, uint8_t *m, size_t size) {
  (void)h;
  /* Bytes all over the cells, devices, strings and buffers. */
  for (size_t i = h->cells_offset; i < size; i += 61) {
    noise ^= noise << 13;
    noise ^= noise >> 7;
    noise ^= noise << 17;
    m[i] = (uint8_t)noise;
  }
}

static void patch_truncate(gp__death_page *h, uint8_t *m, size_t size) {
  (void)m;
  (void)size;
  h->area_size = (uint64_t)1 << 62; /* an area past the file */
}

/* The first string of the log given id, as a scribble may (D5 of issue
 * 35: an id near 2^31 made the string table's capacity wrap and loop). */
static uint32_t first_string_id;
static void patch_string_id(gp__death_page *h, uint8_t *m, size_t size) {
  (void)size;
  memcpy(m + h->str_offset, &first_string_id, sizeof(first_string_id));
}

/* Random bytes at random places (noise's generator): count of them. */
static unsigned scribbles;
static void patch_scribble(gp__death_page *h, uint8_t *m, size_t size) {
  (void)h;
  for (unsigned k = 0; k < scribbles; k++) {
    noise ^= noise << 13;
    noise ^= noise >> 7;
    noise ^= noise << 17;
    size_t at = (size_t)(noise % size);
    m[at] = (uint8_t)(noise >> 32);
  }
}

/* The parts folder (path in src) of sim_app, 5 steps, recorded with
 * render stages only and one flush a minute, SIGKILLed: its records are
 * all in its death page. */
static void killed_parts(char *src, size_t size) {
  const char *app = wt_build_path("tests/programs/sim_app");
  char cmd[4096];
  snprintf(src, size, "%s/parts", gp_test_tmpdir());
  ASSERT_EQ(mkdir(src, 0755), 0);
  snprintf(cmd, sizeof(cmd), "%s/config.pbtxt", src);
  FILE *f = fopen(cmd, "w");
  ASSERT(f != NULL);
  fprintf(f, "flush_period_ms: 60000\n"
             "data_sources { config { name: \"gpu.renderstages\" } }\n");
  fclose(f);
  snprintf(cmd, sizeof(cmd),
           "GPUPERF_RECORD_DIR='%s' GPUPERF_RECORD_CONFIG='%s/config.pbtxt' "
           "'%s' --steps 5 --die kill",
           src, src, app);
  ASSERT_EQ(wt_system(cmd), 128 + SIGKILL);
}

/* --recover of a SIGKILLed process's parts says what it salvaged and
 * lost, as record does; with its shared memory cut short (no count
 * possible), the trace and the exit status say that records were lost. */
TEST(record_recover_says_what_was_lost) {
  char src[1100], cmd[4096], dir[1200], out[1300], err[1300];
  killed_parts(src, sizeof(src));
  for (int damaged = 0; damaged < 2; damaged++) {
    snprintf(dir, sizeof(dir), "%s/r%d", gp_test_tmpdir(), damaged);
    prepare_dir(src, dir);
    if (damaged) {
      snprintf(cmd, sizeof(cmd), "%s/1.open", dir);
      ASSERT_EQ(truncate(cmd, 100), 0);
    }
    snprintf(out, sizeof(out), "%s/r%d.pftrace", gp_test_tmpdir(), damaged);
    snprintf(err, sizeof(err), "%s/r%d.err", gp_test_tmpdir(), damaged);
    snprintf(cmd, sizeof(cmd), "'%s' record --recover '%s' -o '%s' 2>'%s'",
             cli(), dir, out, err);
    int rc = wt_system(cmd);
    char *msg = wt_read_text(err);
    int64_t unknown = q_trace(
        out, "SELECT coalesce(sum(value), 0) FROM counter WHERE track_id IN "
             "(SELECT id FROM counter_track WHERE name = 'gpuperf lost at "
             "process death, count unknown')");
    if (!damaged) {
      if (rc != 0 || !strstr(msg, "records salvaged, lost at process death: "
                                  "0 records"))
        gp_test_fail(__FILE__, __LINE__, "status %d\n%s", rc, msg);
      ASSERT_EQ(unknown, 0);
      ASSERT_EQ(q_trace(out, GPU_WORK_SQL), 25);
    } else {
      if (rc != 2 || !strstr(msg, "lost at process death: 0 or more") ||
          !strstr(msg, "damaged") || !strstr(msg, "records were lost"))
        gp_test_fail(__FILE__, __LINE__, "status %d\n%s", rc, msg);
      ASSERT_EQ(unknown, 1);
      /* report lists it among the losses. */
      char *rep = NULL;
      snprintf(cmd, sizeof(cmd), "'%s' report '%s' > '%s.txt'", cli(), out,
               out);
      ASSERT_EQ(wt_system(cmd), 0);
      snprintf(cmd, sizeof(cmd), "%s.txt", out);
      rep = wt_read_text(cmd);
      ASSERT(strstr(rep, "count unknown") != NULL);
      free(rep);
    }
    free(msg);
  }
}

/* Salvage reads a dead process's page as untrusted input: a page cut
 * short, scribbled over or lying about its sizes gives an error or fewer
 * records, never a read outside it; the real one gives every GPU event,
 * once. */
TEST(record_salvage_checks_the_page) {
  char src[1100], cmd[4096], dir[1200];
  killed_parts(src, sizeof(src));
  uint64_t n = 0;
  static const page_patch bad[] = {patch_str_used, patch_cells_out, patch_sizes,
                                   patch_noise, patch_truncate};
  for (size_t i = 0; i < NELEM(bad); i++) {
    snprintf(dir, sizeof(dir), "%s/bad%zu", gp_test_tmpdir(), i);
    int rc = salvage_patched(src, dir, bad[i], &n);
    if (i == 0 || i == 4)
      ASSERT_EQ(rc, GP_ECORRUPT);
    if (i == 1)
      ASSERT_EQ(n, 0);
    snprintf(cmd, sizeof(cmd), "%s/1.pftrace", dir);
    wt_trace t;
    wt_load(&t, cmd);
    ASSERT_EQ(t.valid, t.size); /* whatever was written is whole */
    wt_free(&t);
  }
  /* String ids that lie: the log ends there, the records are all
   * salvaged (without those names), at once. */
  static const uint32_t ids[] = {0x80000000u, 0x08000000u, 7};
  for (size_t i = 0; i < NELEM(ids); i++) {
    first_string_id = ids[i];
    snprintf(dir, sizeof(dir), "%s/id%zu", gp_test_tmpdir(), i);
    ASSERT_EQ(salvage_patched(src, dir, patch_string_id, &n), GP_ECORRUPT);
    ASSERT_GE(n, 5 * 5 + 5 * 10);
  }
  /* Random scribbles (20; GPUPERF_TEST_SCRIBBLES more), each salvaged in
   * a child that may use at most 10 s and (outside sanitizer builds)
   * 256 MB: none hangs, crashes or grows, and what is written is whole
   * packets. (Each copies the 18 MB page: kept few by default.) */
  const char *many = getenv("GPUPERF_TEST_SCRIBBLES");
  unsigned nscribbles = many && atoi(many) > 0 ? (unsigned)atoi(many) : 20;
  for (unsigned i = 0; i < nscribbles; i++) {
    scribbles = 1 + (i * 7) % 700;
    snprintf(dir, sizeof(dir), "%s/scribble%u", gp_test_tmpdir(), i);
    fflush(NULL);
    pid_t pid = fork();
    ASSERT(pid >= 0);
    if (pid == 0) {
      alarm(10);
#if !SANITIZED
      struct rlimit rl = {256u << 20, 256u << 20};
      setrlimit(RLIMIT_AS, &rl);
#endif
      uint64_t got = 0;
      salvage_patched(src, dir, patch_scribble, &got);
      _exit(0);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      gp_test_fail(__FILE__, __LINE__, "scribble %u: status 0x%x", i, st);
    snprintf(cmd, sizeof(cmd), "%s/1.pftrace", dir);
    wt_trace t;
    wt_load(&t, cmd);
    ASSERT_EQ(t.valid, t.size);
    wt_free(&t);
    unlink(cmd);
    snprintf(cmd, sizeof(cmd), "%s/1.open", dir);
    unlink(cmd);
  }
  /* A page cut short. */
  snprintf(dir, sizeof(dir), "%s/short", gp_test_tmpdir());
  prepare_dir(src, dir);
  snprintf(cmd, sizeof(cmd), "%s/1.open", dir);
  ASSERT_EQ(truncate(cmd, 100), 0);
  ASSERT_EQ(gp_record_salvage(dir, 1, &n), GP_ECORRUPT);
  /* The real page: 5 steps of 5 GPU events, written once. */
  snprintf(dir, sizeof(dir), "%s/good", gp_test_tmpdir());
  ASSERT_EQ(salvage_patched(src, dir, NULL, &n), 0);
  ASSERT_GE(n, 5 * 5 + 5 * 10);
  ASSERT_EQ(gp_record_salvage(dir, 1, &n), GP_ENOENT);
  ASSERT_EQ(n, 0);
  snprintf(cmd, sizeof(cmd), "%s/1.pftrace", dir);
  wt_trace t;
  wt_load(&t, cmd);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 25);
  wt_free(&t);
  uint64_t lost = 0;
  int32_t pid = 0;
  ASSERT_EQ(gp_record_lost_at_death(dir, 1, &lost, &pid), 0);
  ASSERT_EQ(lost, 0);
}
