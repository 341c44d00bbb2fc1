/*
 * test_strings.c - the process-wide string table.
 */
#include <pthread.h>

#include "core/core.h"
#include "harness.h"

TEST(strings_intern_roundtrip) {
  uint32_t a = gp__string_intern("matmul_kernel");
  uint32_t b = gp__string_intern("softmax_kernel");
  ASSERT_NE(a, 0);
  ASSERT_NE(a, b);
  ASSERT_EQ(gp__string_intern("matmul_kernel"), a);
  ASSERT_STR_EQ(gp_activity_string(a), "matmul_kernel");
  ASSERT_STR_EQ(gp_activity_string(0), "");
  ASSERT_STR_EQ(gp_activity_string(0x7fffffff), "");
  ASSERT_EQ(gp__string_intern(NULL), 0);
  /* Length-delimited interning finds the same entry. */
  ASSERT_EQ(gp__string_intern_n("matmul_kernel_xyz", 13), a);
  uint32_t e = gp__string_intern("");
  ASSERT_NE(e, 0);
  ASSERT_STR_EQ(gp_activity_string(e), "");
}

TEST(strings_many_grow_the_index) {
  char buf[32];
  static uint32_t ids[100000];
  for (int i = 0; i < 100000; i++) {
    snprintf(buf, sizeof(buf), "name-%d", i);
    ids[i] = gp__string_intern(buf);
    ASSERT_NE(ids[i], 0);
  }
  for (int i = 0; i < 100000; i += 997) {
    snprintf(buf, sizeof(buf), "name-%d", i);
    ASSERT_EQ(gp__string_intern(buf), ids[i]);
    ASSERT_STR_EQ(gp_activity_string(ids[i]), buf);
  }
}

static uint32_t thread_ids[4][2000];

static void *intern_many(void *arg) {
  uint32_t *out = arg;
  char buf[32];
  for (int i = 0; i < 2000; i++) {
    snprintf(buf, sizeof(buf), "shared-%d", i);
    out[i] = gp__string_intern(buf);
  }
  return NULL;
}

TEST(strings_concurrent_interning_agrees) {
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    ASSERT_OK(-pthread_create(&t[i], NULL, intern_many, thread_ids[i]));
  for (int i = 0; i < 4; i++)
    ASSERT_OK(-pthread_join(t[i], NULL));
  for (int i = 0; i < 2000; i++)
    for (int k = 1; k < 4; k++)
      ASSERT_EQ(thread_ids[k][i], thread_ids[0][i]);
}
