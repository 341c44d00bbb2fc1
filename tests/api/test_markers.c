/*
 * test_markers.c - user markers and ranges.
 */
#include "harness.h"
#include "testutil.h"

TEST(markers_ranges_and_records) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
  ASSERT_EQ(gp_range_stack(NULL, 0), 0);
  ASSERT_OK(gp_range_push("app", "training step 1"));
  ASSERT_OK(gp_range_push(NULL, "forward"));
  uint32_t ids[4];
  ASSERT_EQ(gp_range_stack(ids, 4), 2);
  ASSERT_STR_EQ(gp_activity_string(ids[0]), "training step 1");
  ASSERT_STR_EQ(gp_activity_string(ids[1]), "forward");
  ASSERT_OK(gp_marker_instant("app", "checkpoint"));
  ASSERT_OK(gp_range_pop());
  ASSERT_OK(gp_range_pop());
  ASSERT_ERR(gp_range_pop(), GP_ESTATE);

  uint64_t rid;
  ASSERT_OK(gp_range_start("io", "load batch", &rid));
  ASSERT_OK(gp_range_end(rid));
  ASSERT_ERR(gp_range_end(rid), GP_ENOENT);
  ASSERT_ERR(gp_range_start(NULL, NULL, &rid), GP_EINVAL);
  ASSERT_ERR(gp_range_start(NULL, "x", NULL), GP_EINVAL);
  ASSERT_ERR(gp_range_push(NULL, NULL), GP_EINVAL);
  ASSERT_ERR(gp_marker_instant(NULL, NULL), GP_EINVAL);

  ASSERT_OK(gp_activity_flush_all(0));
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 7);
  const gp_activity_marker *s0 =
      (const gp_activity_marker *)tu_find(GP_ACTIVITY_KIND_MARKER, 0);
  const gp_activity_marker *s1 =
      (const gp_activity_marker *)tu_find(GP_ACTIVITY_KIND_MARKER, 1);
  const gp_activity_marker *in =
      (const gp_activity_marker *)tu_find(GP_ACTIVITY_KIND_MARKER, 2);
  const gp_activity_marker *e1 =
      (const gp_activity_marker *)tu_find(GP_ACTIVITY_KIND_MARKER, 3);
  const gp_activity_marker *e0 =
      (const gp_activity_marker *)tu_find(GP_ACTIVITY_KIND_MARKER, 4);
  ASSERT_EQ(s0->flags, GP_ACTIVITY_FLAG_MARKER_START);
  ASSERT_EQ(s0->depth, 1);
  ASSERT_EQ(s1->depth, 2);
  ASSERT_STR_EQ(gp_activity_string(s0->domain_id), "app");
  ASSERT_STR_EQ(gp_activity_string(s1->domain_id), "");
  ASSERT_EQ(in->flags, GP_ACTIVITY_FLAG_MARKER_INSTANT);
  ASSERT_STR_EQ(gp_activity_string(in->name_id), "checkpoint");
  ASSERT_EQ(e1->flags, GP_ACTIVITY_FLAG_MARKER_END);
  ASSERT_EQ(e1->id, s1->id);
  ASSERT_EQ(e0->id, s0->id);
  ASSERT_LE(s0->timestamp, e0->timestamp);
}

TEST(markers_depth_limit) {
  for (int i = 0; i < GP_RANGE_MAX_DEPTH; i++)
    ASSERT_OK(gp_range_push(NULL, "r"));
  ASSERT_ERR(gp_range_push(NULL, "one too many"), GP_ENOSPC);
  ASSERT_EQ(gp_range_stack(NULL, 0), GP_RANGE_MAX_DEPTH);
  for (int i = 0; i < GP_RANGE_MAX_DEPTH; i++)
    ASSERT_OK(gp_range_pop());
  ASSERT_EQ(gp_range_stack(NULL, 0), 0);
}
