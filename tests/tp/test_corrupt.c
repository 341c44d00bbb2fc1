/*
 * test_corrupt.c - bad input: random bytes, a small trace cut at every
 * offset, a length past the end, deep nesting, malformed nested data.
 * Each gives one clear error naming the byte offset (and, through the
 * CLI, exit status 2 and one line on stderr), never a crash: the suite
 * also runs under ASan and UBSan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/tputil.h"

/* Opens bytes; returns the code, err filled. */
static int try_open(const uint8_t *p, size_t n, uint32_t flags,
                    gp_tp_error *err) {
  gp_tp_options o = {.size = sizeof(o), .flags = flags, .db_path = NULL};
  gp_tp *tp = NULL;
  int rc = gp_tp_open_buffer(p, n, "bad.pftrace", &o, &tp, err);
  if (rc == 0) {
    /* It opened: queries must work on what it holds. */
    ASSERT_GE(tp_int(tp, "SELECT count(*) FROM slice"), 0);
    gp_tp_close(tp);
  } else {
    ASSERT(tp == NULL);
  }
  return rc;
}

TEST(tp_corrupt_random_bytes) {
  uint32_t rng = 0x1234567;
  uint8_t buf[4096];
  int errors = 0;
  for (int round = 0; round < 300; round++) {
    size_t n = 1 + (rng >> 3) % sizeof(buf);
    for (size_t i = 0; i < n; i++) {
      rng = rng * 1103515245u + 12345u;
      buf[i] = (uint8_t)(rng >> 16);
    }
    /* Half the time, start like a packet so the damage is deeper in. */
    if (round % 2)
      buf[0] = 0x0a;
    gp_tp_error err;
    int rc = try_open(buf, n, 0, &err);
    if (rc) {
      errors++;
      ASSERT_EQ(rc, GP_ECORRUPT);
      ASSERT(strstr(err.message, "bad.pftrace: offset ") != NULL);
      ASSERT(err.offset < n);
    }
  }
  ASSERT_GT(errors, 250);
}

/* A small trace with nested messages of every kind we parse. */
static uint8_t *sample_trace(size_t *n, size_t *bounds, int *nbounds) {
  tg t;
  tg_init(&t);
  *nbounds = 0;
  tg_packet(&t, 1, 1, 1);
  gp__pb_begin(&t.w, 12);
  gp__pb_begin(&t.w, 24);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_string(&t.w, 2, "queue");
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  tg_end(&t);
  bounds[(*nbounds)++] = (size_t)gp__pb_size(&t.w);
  for (int i = 0; i < 3; i++) {
    tg_packet(&t, 10 + (uint64_t)i * 10, 1, 2);
    gp__pb_begin(&t.w, 53);
    gp__pb_uint(&t.w, 1, (uint64_t)i + 1);
    gp__pb_uint(&t.w, 2, 5);
    gp__pb_uint(&t.w, 13, 1);
    gp__pb_string(&t.w, 17, "kernel");
    gp__pb_begin(&t.w, 21);
    gp__pb_begin(&t.w, 1);
    gp__pb_uint(&t.w, 1, 64);
    gp__pb_end(&t.w);
    gp__pb_end(&t.w);
    gp__pb_end(&t.w);
    tg_end(&t);
    bounds[(*nbounds)++] = (size_t)gp__pb_size(&t.w);
  }
  tg_packet(&t, 50, 1, 0);
  gp__pb_begin(&t.w, 52);
  gp__pb_begin(&t.w, 1);
  gp__pb_begin(&t.w, 1);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_string(&t.w, 2, "c");
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  gp__pb_begin(&t.w, 2);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_double(&t.w, 3, 1.5);
  gp__pb_end(&t.w);
  gp__pb_end(&t.w);
  tg_end(&t);
  bounds[(*nbounds)++] = (size_t)gp__pb_size(&t.w);
  uint8_t *p = tg_bytes(&t, n);
  tg_fini(&t);
  return p;
}

TEST(tp_corrupt_truncated_at_every_offset) {
  size_t n, bounds[16];
  int nb;
  uint8_t *p = sample_trace(&n, bounds, &nb);
  for (size_t len = 0; len < n; len++) {
    bool boundary = false;
    for (int i = 0; i < nb; i++)
      boundary |= bounds[i] == len;
    gp_tp_error err;
    int rc = try_open(p, len, 0, &err);
    if (boundary) {
      ASSERT_EQ(rc, 0); /* whole packets: a shorter, valid trace */
      continue;
    }
    if (rc != GP_ECORRUPT)
      gp_test_fail(__FILE__, __LINE__, "cut at %zu: rc %d (%s)", len, rc,
                   err.message);
    ASSERT(len == 0 || strstr(err.message, "offset") != NULL);
    ASSERT(err.offset <= len);
    /* Allowing truncation imports the complete packets before the cut. */
    rc = try_open(p, len, GP_TP_ALLOW_TRUNCATED, &err);
    ASSERT(rc == 0 || len < bounds[0]);
  }
  free(p);
}

TEST(tp_corrupt_length_past_end) {
  const uint8_t bad[] = {0x0a, 0xff, 0x01, 0x40, 0x08, 0x01};
  gp_tp_error err;
  ASSERT_ERR(try_open(bad, sizeof(bad), 0, &err), GP_ECORRUPT);
  ASSERT_EQ(err.offset, 0);
  ASSERT(strstr(err.message, "bad.pftrace: offset 0: packet length 255 goes "
                             "past the end of the file") != NULL);
  /* A nested length past its message's end, found when parsed. */
  tg t;
  tg_init(&t);
  tg_packet(&t, 10, 1, 0);
  gp__pb_begin(&t.w, 53);
  gp__pb_uint(&t.w, 1, 1);
  gp__pb_raw(&t.w, "\xaa\x01\x7f\x01\x02", 5); /* launch (21), len 127 */
  gp__pb_end(&t.w);
  tg_end(&t);
  size_t n;
  uint8_t *p = tg_bytes(&t, &n);
  ASSERT_ERR(try_open(p, n, 0, &err), GP_ECORRUPT);
  ASSERT(strstr(err.message, "malformed GpuRenderStageEvent") != NULL);
  ASSERT_GT(err.offset, 0);
  ASSERT_LT(err.offset, n);
  free(p);
  tg_fini(&t);
}

/* Field numbers run from 1 to 2^29 - 1: 0 and 2^29 are malformed, the
 * largest is an unknown field like any other. */
TEST(tp_corrupt_field_numbers) {
  gp_tp_error err;
  const uint8_t zero[] = {0x0a, 0x02, 0x00, 0x01};
  ASSERT_ERR(try_open(zero, sizeof(zero), 0, &err), GP_ECORRUPT);
  const uint8_t too_big[] = {0x0a, 0x06, 0x80, 0x80, 0x80, 0x80, 0x10, 0x01};
  ASSERT_ERR(try_open(too_big, sizeof(too_big), 0, &err), GP_ECORRUPT);
  const uint8_t largest[] = {0x0a, 0x08, 0x40, 0x05, 0xf8,
                             0xff, 0xff, 0xff, 0x0f, 0x01};
  ASSERT_EQ(try_open(largest, sizeof(largest), 0, &err), 0);
}

TEST(tp_corrupt_deep_nesting) {
  /* 100 000 levels of nested messages in an unknown field, then in a
   * debug annotation: the importer reads only as deep as the schema goes
   * (8 levels of annotations), so neither recurses without bound. */
  enum { DEPTH = 100000 };
  size_t cap = (size_t)DEPTH * 8 + 64;
  uint8_t *buf = malloc(cap), *inner;
  ASSERT_NOT_NULL(buf);
  /* Built back to front: each level is field 11 (dict entries) of a
   * DebugAnnotation holding the level below, with a name. */
  size_t pos = cap;
  buf[--pos] = 'x';
  buf[--pos] = 1;
  buf[--pos] = 0x52; /* name (10) */
  for (int level = 0; level < DEPTH; level++) {
    uint64_t len = cap - pos;
    uint8_t v[10];
    size_t nv = 0;
    do {
      v[nv++] = (uint8_t)(len | (len >= 0x80 ? 0x80 : 0));
      len >>= 7;
    } while (len);
    for (size_t k = nv; k-- > 0;)
      buf[--pos] = v[k];
    buf[--pos] = 0x5a; /* field 11, LEN */
    buf[--pos] = 'y';
    buf[--pos] = 1;
    buf[--pos] = 0x52;
    ASSERT_GT(pos, 16);
  }
  inner = buf + pos;
  size_t n = cap - pos;
  for (int unknown = 0; unknown < 2; unknown++) {
    tg t;
    tg_init(&t);
    tg_packet(&t, 10, 1, 0);
    if (unknown) {
      gp__pb_bytes(&t.w, 999, inner, n);
    } else {
      gp__pb_begin(&t.w, 11);
      gp__pb_uint(&t.w, 9, 3);
      gp__pb_string(&t.w, 23, "deep");
      gp__pb_bytes(&t.w, 4, inner, n);
      gp__pb_end(&t.w);
    }
    tg_end(&t);
    size_t tn;
    uint8_t *p = tg_bytes(&t, &tn);
    gp_tp *tp = tp_open_bytes(p, tn);
    ASSERT_EQ(tp_int(tp, "SELECT count(*) FROM slice"), unknown ? 0 : 1);
    gp_tp_close(tp);
    free(p);
    tg_fini(&t);
  }
  /* Nesting within the depth the importer reads (debug annotation dicts,
   * 5 levels) whose innermost length lies: an error at its offset. */
  inner = buf;
  n = 0;
  inner[n++] = 0x5a; /* dict entry claiming 100 bytes it does not have */
  inner[n++] = 100;
  for (int level = 0; level < 5; level++) {
    memmove(inner + 5, inner, n);
    inner[0] = 0x52; /* name "z" */
    inner[1] = 1;
    inner[2] = 'z';
    inner[3] = 0x5a;
    inner[4] = (uint8_t)n;
    n += 5;
  }
  tg t;
  tg_init(&t);
  tg_packet(&t, 10, 1, 0);
  gp__pb_begin(&t.w, 11);
  gp__pb_uint(&t.w, 9, 3);
  gp__pb_string(&t.w, 23, "liar");
  gp__pb_bytes(&t.w, 4, inner, n);
  gp__pb_end(&t.w);
  tg_end(&t);
  size_t tn;
  uint8_t *p = tg_bytes(&t, &tn);
  gp_tp_error err;
  ASSERT_ERR(try_open(p, tn, 0, &err), GP_ECORRUPT);
  ASSERT(strstr(err.message, "malformed DebugAnnotation") != NULL);
  ASSERT_GT(err.offset, tn - 10); /* the innermost level, near the end */
  ASSERT_LT(err.offset, tn);
  free(p);
  tg_fini(&t);
  free(buf);
}

TEST(tp_corrupt_cli_exit_status) {
  const char *path = gp_test_path(0, "random.pftrace");
  FILE *f = fopen(path, "wb");
  uint32_t rng = 99;
  fputc(0x0a, f);
  for (int i = 0; i < 2000; i++) {
    rng = rng * 1103515245u + 12345u;
    fputc((int)(rng >> 16) & 0xff, f);
  }
  fclose(f);
  char *out, *err;
  int st = tp_cli(&out, &err, "query", path, "SELECT 1", NULL);
  ASSERT_EQ(st, 2);
  ASSERT(strstr(err, path) != NULL);
  ASSERT(strstr(err, "offset") != NULL);
  ASSERT(strchr(err, '\n') == err + strlen(err) - 1); /* one line */
  ASSERT_STR_EQ(out, "");
  free(out);
  free(err);
  /* A trace cut in its last packet: error, or its complete packets with
   * --allow-truncated. */
  size_t n, bounds[16];
  int nb;
  uint8_t *p = sample_trace(&n, bounds, &nb);
  const char *cut = gp_test_path(1, "cut.pftrace");
  f = fopen(cut, "wb");
  fwrite(p, 1, n - 3, f);
  fclose(f);
  free(p);
  st = tp_cli(&out, &err, "query", cut, "SELECT count(*) AS n FROM gpu_slice",
              "--format", "csv", NULL);
  ASSERT_EQ(st, 2);
  ASSERT(strstr(err, "goes past the end") != NULL);
  free(out);
  free(err);
  st = tp_cli(&out, &err, "query", "--allow-truncated", cut,
              "SELECT count(*) AS n FROM gpu_slice", "--format", "csv", NULL);
  ASSERT_EQ(st, 0);
  ASSERT_STR_EQ(out, "\"n\"\n3\n");
  free(out);
  free(err);
  st = tp_cli(&out, &err, "report", path, NULL);
  ASSERT_EQ(st, 2);
  free(out);
  free(err);
}
