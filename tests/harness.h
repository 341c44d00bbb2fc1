/*
 * harness.h - gpuperf's test harness: assertions and the test registry.
 *
 * Every test is a function `void test_NAME(void)` defined with TEST(NAME)
 * and listed once in test-list.h. The runner (harness.c) runs each in its
 * own process with a timeout, several at a time, and prints one line per
 * test and a final "N passed, N failed, N skipped". Assertions are never
 * compiled out and print both sides of a failed comparison.
 */
#ifndef GPUPERF_TESTS_HARNESS_H
#define GPUPERF_TESTS_HARNESS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"

#define TEST(name) void test_##name(void)

/* Exit status a test process uses to say it skipped. */
#define GP_TEST_SKIP_STATUS 77

void gp_test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
void gp_test_skip(const char *fmt, ...)
    __attribute__((noreturn, format(printf, 1, 2)));

/* A fresh directory for this test, removed after it (unless it fails). */
const char *gp_test_tmpdir(void);

/* Path of a file inside gp_test_tmpdir(); static buffer, one at a time
 * per slot (0..3). */
const char *gp_test_path(int slot, const char *name);

#define ASSERT(cond)                                                           \
  do {                                                                         \
    if (!(cond))                                                               \
      gp_test_fail(__FILE__, __LINE__, "assertion failed: %s", #cond);         \
  } while (0)

#define ASSERT_EQ(a, b)                                                        \
  do {                                                                         \
    int64_t gp_a_ = (int64_t)(a), gp_b_ = (int64_t)(b);                        \
    if (gp_a_ != gp_b_)                                                        \
      gp_test_fail(__FILE__, __LINE__,                                         \
                   "%s == %s\n    left:  %" PRId64 " (0x%" PRIx64 ")\n"        \
                   "    right: %" PRId64 " (0x%" PRIx64 ")",                   \
                   #a, #b, gp_a_, (uint64_t)gp_a_, gp_b_, (uint64_t)gp_b_);    \
  } while (0)

#define GP_TEST_CMP_(a, op, b)                                                 \
  do {                                                                         \
    int64_t gp_a_ = (int64_t)(a), gp_b_ = (int64_t)(b);                        \
    if (!(gp_a_ op gp_b_))                                                     \
      gp_test_fail(__FILE__, __LINE__,                                         \
                   "%s %s %s\n    left:  %" PRId64 "\n    right: %" PRId64,    \
                   #a, #op, #b, gp_a_, gp_b_);                                 \
  } while (0)
#define ASSERT_NE(a, b) GP_TEST_CMP_(a, !=, b)
#define ASSERT_LT(a, b) GP_TEST_CMP_(a, <, b)
#define ASSERT_LE(a, b) GP_TEST_CMP_(a, <=, b)
#define ASSERT_GT(a, b) GP_TEST_CMP_(a, >, b)
#define ASSERT_GE(a, b) GP_TEST_CMP_(a, >=, b)

/* Unsigned 64-bit comparisons (values past INT64_MAX). */
#define ASSERT_UEQ(a, b)                                                       \
  do {                                                                         \
    uint64_t gp_a_ = (uint64_t)(a), gp_b_ = (uint64_t)(b);                     \
    if (gp_a_ != gp_b_)                                                        \
      gp_test_fail(__FILE__, __LINE__,                                         \
                   "%s == %s\n    left:  %" PRIu64 "\n    right: %" PRIu64,    \
                   #a, #b, gp_a_, gp_b_);                                      \
  } while (0)

#define ASSERT_NEAR(a, b, eps)                                                 \
  do {                                                                         \
    double gp_a_ = (double)(a), gp_b_ = (double)(b), gp_e_ = (double)(eps);    \
    if (!(gp_a_ - gp_b_ <= gp_e_ && gp_b_ - gp_a_ <= gp_e_))                   \
      gp_test_fail(__FILE__, __LINE__,                                         \
                   "%s ~= %s (within %g)\n    left:  %.9g\n    right: %.9g",   \
                   #a, #b, gp_e_, gp_a_, gp_b_);                               \
  } while (0)

#define ASSERT_STR_EQ(a, b)                                                    \
  do {                                                                         \
    const char *gp_a_ = (a), *gp_b_ = (b);                                     \
    if (!gp_a_ || !gp_b_ || strcmp(gp_a_, gp_b_) != 0)                         \
      gp_test_fail(__FILE__, __LINE__,                                         \
                   "%s == %s\n    left:  \"%s\"\n    right: \"%s\"", #a, #b,   \
                   gp_a_ ? gp_a_ : "(null)", gp_b_ ? gp_b_ : "(null)");        \
  } while (0)

#define ASSERT_NOT_NULL(p) ASSERT((p) != NULL)

/* Expression returning a gpuperf code must succeed. */
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    int gp_rc_ = (expr);                                                       \
    if (gp_rc_ != 0)                                                           \
      gp_test_fail(__FILE__, __LINE__, "%s\n    returned %s (%d): %s", #expr,  \
                   gp_error_name(gp_rc_), gp_rc_, gp_strerror(gp_rc_));        \
  } while (0)

/* Expression must return exactly the code want. */
#define ASSERT_ERR(expr, want)                                                 \
  do {                                                                         \
    int gp_rc_ = (expr), gp_w_ = (want);                                       \
    if (gp_rc_ != gp_w_)                                                       \
      gp_test_fail(                                                            \
          __FILE__, __LINE__, "%s\n    returned %s (%d), expected %s (%d)",    \
          #expr, gp_error_name(gp_rc_), gp_rc_, gp_error_name(gp_w_), gp_w_);  \
  } while (0)

#define SKIP(...) gp_test_skip(__VA_ARGS__)

/* 1 in an AddressSanitizer or ThreadSanitizer build (gcc or clang). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GP_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GP_TEST_SANITIZED 1
#endif
#endif
#ifndef GP_TEST_SANITIZED
#define GP_TEST_SANITIZED 0
#endif

/* Declarations of every test. */
#define GP_TEST_ENTRY(name, timeout_s) TEST(name);
#include "test-list.h"
#undef GP_TEST_ENTRY

#endif /* GPUPERF_TESTS_HARNESS_H */
