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

/* Markers with attributes (NVTX's colour, category and payload): each
 * gives a MARKER_DATA record just before its MARKER record, with the
 * same id; a marker without gives none; bad attributes are refused and
 * push nothing. */
TEST(markers_carry_their_attributes) {
  tu_capture(1 << 16, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER));
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_MARKER_DATA));
  gp_marker_attrs a = {.flags = GP_MARKER_ATTR_COLOR | GP_MARKER_ATTR_CATEGORY,
                       .color = 0xff00ff80u,
                       .category = 7,
                       .payload_kind = GP_MARKER_PAYLOAD_UINT64,
                       .payload.u64 = 42};
  ASSERT_OK(gp_range_push_ex("app", "step", &a));
  gp_marker_attrs b = {.payload_kind = GP_MARKER_PAYLOAD_DOUBLE,
                       .payload.f64 = 0.25};
  ASSERT_OK(gp_marker_instant_ex(NULL, "loss", &b));
  ASSERT_OK(gp_marker_instant(NULL, "plain"));
  ASSERT_OK(gp_range_pop());
  gp_marker_attrs c = {.payload_kind = GP_MARKER_PAYLOAD_INT64,
                       .payload.i64 = -3};
  uint64_t rid;
  ASSERT_OK(gp_range_start_ex("io", "load", &c, &rid));
  ASSERT_OK(gp_range_end(rid));
  gp_marker_attrs bad = {.payload_kind = 9};
  ASSERT_ERR(gp_range_push_ex(NULL, "x", &bad), GP_EINVAL);
  bad = (gp_marker_attrs){.flags = 1u << 5};
  ASSERT_ERR(gp_marker_instant_ex(NULL, "x", &bad), GP_EINVAL);
  ASSERT_EQ(gp_range_stack(NULL, 0), 0);
  ASSERT_OK(gp_activity_flush_all(0));

  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER_DATA), 3);
  ASSERT_EQ(tu_count(GP_ACTIVITY_KIND_MARKER), 6);
  /* In the order written: each data record right before its marker. */
  size_t size = 0;
  const uint8_t *log = tu_log(&size);
  const gp_activity *r = NULL, *prev = NULL;
  int paired = 0;
  while (gp_activity_get_next_record((uint8_t *)log, size, &r) == 0) {
    if (r->kind == GP_ACTIVITY_KIND_MARKER && prev &&
        prev->kind == GP_ACTIVITY_KIND_MARKER_DATA) {
      const gp_activity_marker *m = (const void *)r;
      const gp_activity_marker_data *d = (const void *)prev;
      ASSERT_UEQ(d->id, m->id);
      ASSERT(m->flags &
             (GP_ACTIVITY_FLAG_MARKER_START | GP_ACTIVITY_FLAG_MARKER_INSTANT));
      paired++;
    }
    prev = r;
  }
  ASSERT_EQ(paired, 3);
  const gp_activity_marker_data *d0 =
      (const void *)tu_find(GP_ACTIVITY_KIND_MARKER_DATA, 0);
  ASSERT_EQ(d0->flags, GP_ACTIVITY_FLAG_MARKER_COLOR_ARGB);
  ASSERT_EQ(d0->color, 0xff00ff80u);
  ASSERT_EQ(d0->category, 7);
  ASSERT_EQ(d0->payload_kind, GP_MARKER_PAYLOAD_UINT64);
  ASSERT_UEQ(d0->payload.u64, 42);
  const gp_activity_marker_data *d1 =
      (const void *)tu_find(GP_ACTIVITY_KIND_MARKER_DATA, 1);
  ASSERT_EQ(d1->flags, GP_ACTIVITY_FLAG_MARKER_COLOR_NONE);
  ASSERT_EQ(d1->color, 0);
  ASSERT_EQ(d1->category, 0);
  ASSERT_EQ(d1->payload_kind, GP_MARKER_PAYLOAD_DOUBLE);
  ASSERT(d1->payload.f64 == 0.25);
  const gp_activity_marker_data *d2 =
      (const void *)tu_find(GP_ACTIVITY_KIND_MARKER_DATA, 2);
  ASSERT_UEQ(d2->id, rid);
  ASSERT_EQ(d2->payload.i64, -3);
  ASSERT_STR_EQ(gp_activity_kind_name(GP_ACTIVITY_KIND_MARKER_DATA),
                "MARKER_DATA");
}
