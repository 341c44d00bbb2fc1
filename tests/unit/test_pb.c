/*
 * test_pb.c - the protobuf writer and reader.
 */
#include <math.h>

#include "harness.h"
#include "perfetto/pb.h"

static uint8_t *flatten(gp__pb_writer *w, size_t *n) {
  *n = (size_t)gp__pb_size(w);
  uint8_t *b = malloc(*n + 1);
  gp__pb_copy(w, b);
  return b;
}

TEST(pb_scalars_roundtrip) {
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  gp__pb_uint(&w, 1, 0);
  gp__pb_uint(&w, 2, 300);
  gp__pb_uint(&w, 3, UINT64_MAX);
  gp__pb_int(&w, 4, -1);
  gp__pb_sint(&w, 5, -3);
  gp__pb_fixed64(&w, 6, 0x0102030405060708ull);
  gp__pb_fixed32(&w, 7, 0xdeadbeef);
  gp__pb_double(&w, 8, 3.25);
  gp__pb_float(&w, 9, -1.5f);
  gp__pb_string(&w, 10, "hello");
  gp__pb_bytes(&w, 536870911, "", 0); /* largest field number */
  ASSERT(!gp__pb_error(&w));
  size_t n;
  uint8_t *b = flatten(&w, &n);
  /* Known encodings. */
  ASSERT_EQ(b[0], 0x08);
  ASSERT_EQ(b[1], 0x00);
  ASSERT_EQ(b[2], 0x10);
  ASSERT_EQ(b[3], 0xac);
  ASSERT_EQ(b[4], 0x02);

  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, b, n, 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(f.id, 1);
  ASSERT_EQ(f.value, 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(f.value, 300);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_UEQ(f.value, UINT64_MAX);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(gp__pb_as_int(&f), -1);
  ASSERT_EQ(gp__pb_as_int32(&f), -1);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(gp__pb_as_sint(&f), -3);
  ASSERT_EQ(f.value, 5); /* zigzag */
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(f.wire_type, GP_PB_I64);
  ASSERT_UEQ(f.value, 0x0102030405060708ull);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(f.wire_type, GP_PB_I32);
  ASSERT_UEQ(f.value, 0xdeadbeef);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_NEAR(gp__pb_as_double(&f), 3.25, 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_NEAR(gp__pb_as_float(&f), -1.5, 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(f.wire_type, GP_PB_LEN);
  ASSERT_EQ(f.size, 5);
  ASSERT(memcmp(f.data, "hello", 5) == 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(f.id, 536870911);
  ASSERT_EQ(f.size, 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 0);
  free(b);
  gp__pb_writer_fini(&w);
}

TEST(pb_nested_across_chunks) {
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  /* A packet whose payload is far bigger than a chunk, nested 3 deep. */
  gp__pb_begin(&w, 1);
  gp__pb_uint(&w, 8, 42);
  gp__pb_begin(&w, 53);
  for (int i = 0; i < 40000; i++)
    gp__pb_uint(&w, 18, (uint64_t)i * 1000);
  gp__pb_begin(&w, 21);
  gp__pb_string(&w, 2, "inner");
  gp__pb_end(&w);
  gp__pb_end(&w);
  gp__pb_end(&w);
  ASSERT(!gp__pb_error(&w));
  ASSERT_GT(gp__pb_size(&w), 2 * GP_PB_CHUNK_SIZE);
  size_t n;
  uint8_t *b = flatten(&w, &n);
  gp__pb_reader r, r2, r3;
  gp__pb_field f, g, h;
  gp__pb_reader_init(&r, b, n, 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_EQ(f.id, 1);
  ASSERT_EQ(f.size, n - 5); /* tag + 4 length bytes */
  ASSERT_EQ(gp__pb_next(&r, &f), 0);
  gp__pb_reader_init(&r, b, n, 0);
  gp__pb_next(&r, &f);
  gp__pb_reader_sub(&r2, &r, &f);
  ASSERT_EQ(gp__pb_next(&r2, &g), 1);
  ASSERT_EQ(g.value, 42);
  ASSERT_EQ(gp__pb_next(&r2, &g), 1);
  ASSERT_EQ(g.id, 53);
  gp__pb_reader_sub(&r3, &r2, &g);
  int count = 0;
  bool inner = false;
  while (gp__pb_next(&r3, &h) == 1) {
    if (h.id == 18)
      ASSERT_EQ(h.value, (uint64_t)count++ * 1000);
    if (h.id == 21)
      inner = true;
  }
  ASSERT_EQ(count, 40000);
  ASSERT(inner);
  free(b);

  /* Reset keeps the chunks and starts from zero. */
  gp__pb_writer_reset(&w);
  ASSERT_EQ(gp__pb_size(&w), 0);
  gp__pb_uint(&w, 1, 1);
  ASSERT_EQ(gp__pb_size(&w), 2);
  gp__pb_writer_fini(&w);
}

TEST(pb_writer_misuse_sets_error) {
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  gp__pb_end(&w); /* nothing open */
  ASSERT(gp__pb_error(&w));
  gp__pb_writer_reset(&w);
  ASSERT(!gp__pb_error(&w));
  for (int i = 0; i <= GP_PB_MAX_DEPTH; i++)
    gp__pb_begin(&w, 1);
  ASSERT(gp__pb_error(&w));
  gp__pb_writer_fini(&w);
}

TEST(pb_reader_rejects_malformed_input) {
  gp__pb_reader r;
  gp__pb_field f;
  /* Truncated varint value. */
  const uint8_t t1[] = {0x08, 0x80};
  gp__pb_reader_init(&r, t1, sizeof(t1), 100);
  ASSERT_ERR(gp__pb_next(&r, &f), GP_ECORRUPT);
  ASSERT_EQ(gp__pb_offset(&r), 100);
  /* Length pointing past the end. */
  const uint8_t t2[] = {0x08, 0x01, 0x12, 0x05, 'a', 'b'};
  gp__pb_reader_init(&r, t2, sizeof(t2), 0);
  ASSERT_EQ(gp__pb_next(&r, &f), 1);
  ASSERT_ERR(gp__pb_next(&r, &f), GP_ECORRUPT);
  ASSERT_EQ(gp__pb_offset(&r), 2);
  /* Group wire types and field number 0. */
  const uint8_t t3[] = {0x0b};
  gp__pb_reader_init(&r, t3, 1, 0);
  ASSERT_ERR(gp__pb_next(&r, &f), GP_ECORRUPT);
  const uint8_t t4[] = {0x00, 0x01};
  gp__pb_reader_init(&r, t4, 2, 0);
  ASSERT_ERR(gp__pb_next(&r, &f), GP_ECORRUPT);
  /* Fixed fields cut short. */
  const uint8_t t5[] = {0x09, 1, 2, 3};
  gp__pb_reader_init(&r, t5, 4, 0);
  ASSERT_ERR(gp__pb_next(&r, &f), GP_ECORRUPT);
  const uint8_t t6[] = {0x0d, 1, 2};
  gp__pb_reader_init(&r, t6, 3, 0);
  ASSERT_ERR(gp__pb_next(&r, &f), GP_ECORRUPT);
  /* An 11-byte varint. */
  const uint8_t t7[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                        0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  gp__pb_reader_init(&r, t7, sizeof(t7), 0);
  ASSERT_ERR(gp__pb_next(&r, &f), GP_ECORRUPT);
  /* Every prefix of a valid message either decodes or fails cleanly. */
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  gp__pb_begin(&w, 1);
  gp__pb_string(&w, 2, "abc");
  gp__pb_double(&w, 3, 1.0);
  gp__pb_end(&w);
  size_t n;
  uint8_t *b = flatten(&w, &n);
  for (size_t cut = 0; cut < n; cut++) {
    uint8_t *c = malloc(cut ? cut : 1);
    memcpy(c, b, cut);
    gp__pb_reader_init(&r, c, cut, 0);
    int rc;
    while ((rc = gp__pb_next(&r, &f)) == 1) {
    }
    ASSERT(rc == 0 || rc == GP_ECORRUPT);
    ASSERT_LE(gp__pb_offset(&r), cut);
    free(c);
  }
  free(b);
  gp__pb_writer_fini(&w);
}

/* Varints of every length decode alike at the end of the input (a byte
 * at a time) and with room after them (8 bytes at a time); one cut
 * short of its last byte is refused either way. */
TEST(pb_varints_of_every_length) {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int bits = 0; bits <= 64; bits++) {
    for (int k = 0; k < 64; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      uint64_t v = bits == 64 ? seed : seed & ((1ull << bits) - 1);
      if (k == 0)
        v = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
      uint8_t buf[32];
      memset(buf, 0xff, sizeof(buf)); /* continuation bits after the end */
      size_t n = (size_t)(gp__pb_put_varint(buf, v) - buf);
      for (size_t room = 0; room <= 12; room++) {
        uint64_t got = ~v;
        ASSERT_EQ(gp__pb_get_varint(buf, buf + n + room, &got), n);
        ASSERT_UEQ(got, v);
      }
      if (n > 1)
        for (size_t cut = 1; cut < n; cut++) {
          uint8_t c[16];
          memcpy(c, buf, cut);
          uint64_t got;
          ASSERT_EQ(gp__pb_get_varint(c, c + cut, &got), 0);
        }
    }
  }
}
