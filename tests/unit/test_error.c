/*
 * test_error.c - the error table: every code has a name and a message,
 * errno-like codes are the negated errno values, others pass through.
 */
#include "harness.h"

TEST(error_names_and_messages) {
#define CHECK(name, value, msg)                                                \
  ASSERT_STR_EQ(gp_error_name(GP_##name), "GP_" #name);                        \
  ASSERT_STR_EQ(gp_strerror(GP_##name), msg);
  GP_ERROR_MAP(CHECK)
#undef CHECK
  ASSERT_STR_EQ(gp_error_name(0), "GP_OK");
  ASSERT_STR_EQ(gp_strerror(0), "success");
  ASSERT_EQ(GP_ENOENT, -ENOENT);
  ASSERT_EQ(GP_EAGAIN, -EAGAIN);
  ASSERT_LT(GP_EKIND, -2999);
  ASSERT_STR_EQ(gp_error_name(-999999), "GP_UNKNOWN");
  ASSERT_STR_EQ(gp_strerror(-999999), "unknown error");
  /* An errno we have no entry for still reads as the system's message. */
  ASSERT_STR_EQ(gp_strerror(-EPIPE), strerror(EPIPE));
}
