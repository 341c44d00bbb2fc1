/*
 * test_handles.c - the table of an API's objects (src/core/handles.c)
 * under many notes and removals: every object noted and not dropped is
 * found with its ids, every dropped one is gone, whatever collided with
 * what in the table.
 */
#include "core/core.h"
#include "harness.h"

TEST(handles_survive_many_puts_and_drops) {
  enum { N = 5000 };
  static char objs[N]; /* distinct addresses: the handles */
  for (uint32_t i = 0; i < N; i++)
    ASSERT_OK(gp__handle_put(GP_API_OPEN_CL, GP__HANDLE_STREAM, &objs[i], NULL,
                             1, 100 + i % 7, i + 1));
  /* Drop every third, then note some again with other ids. */
  for (uint32_t i = 0; i < N; i += 3)
    gp__handle_drop(GP_API_OPEN_CL, GP__HANDLE_STREAM, &objs[i], NULL);
  for (uint32_t i = 0; i < N; i += 9)
    ASSERT_OK(gp__handle_put(GP_API_OPEN_CL, GP__HANDLE_STREAM, &objs[i], NULL,
                             1, 100 + i % 7, 2 * N + i));
  for (uint32_t i = 0; i < N; i++) {
    uint32_t sid = 0;
    int rc = gp_activity_get_stream_id(GP_API_OPEN_CL, NULL, &objs[i], &sid);
    if (i % 9 == 0) {
      ASSERT_OK(rc);
      ASSERT_EQ(sid, 2 * N + i);
    } else if (i % 3 == 0) {
      ASSERT_ERR(rc, GP_ENOENT);
    } else {
      ASSERT_OK(rc);
      ASSERT_EQ(sid, i + 1);
    }
  }
  /* The same handle under another API or kind is another object. */
  uint32_t id = 0;
  ASSERT_ERR(gp_activity_get_stream_id(GP_API_VULKAN, NULL, &objs[1], &id),
             GP_ENOENT);
  ASSERT_ERR(gp_activity_get_context_id(GP_API_OPEN_CL, &objs[1], NULL, &id),
             GP_ENOENT);
  ASSERT_ERR(gp__handle_put(GP_API_SIM, GP__HANDLE_STREAM, NULL, NULL, 0, 0, 0),
             GP_EINVAL);
  /* Everything dropped: nothing left. */
  for (uint32_t i = 0; i < N; i++)
    gp__handle_drop(GP_API_OPEN_CL, GP__HANDLE_STREAM, &objs[i], NULL);
  for (uint32_t i = 0; i < N; i++)
    ASSERT_ERR(gp_activity_get_stream_id(GP_API_OPEN_CL, NULL, &objs[i], &id),
               GP_ENOENT);
}
