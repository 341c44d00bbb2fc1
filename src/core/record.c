/*
 * record.c - reading activity buffers: iteration over records and the
 * wait ids at the end of GPU work records. Pure functions of the bytes
 * they are given; they never trust a size field further than valid_size.
 */
#include "core.h"

/* See activity.h. */
int gp_activity_get_next_record(const uint8_t *buffer, size_t valid_size,
                                const gp_activity **record) {
  if (!buffer || !record)
    return GP_EINVAL;
  size_t off;
  if (*record == NULL) {
    off = 0;
  } else {
    const uint8_t *p = (const uint8_t *)*record;
    if (p < buffer || p >= buffer + valid_size)
      return GP_EINVAL;
    off = (size_t)(p - buffer) + (*record)->size;
  }
  if (off >= valid_size)
    return GP_EEND;
  const gp_activity *r = gp__record_at(buffer, valid_size, off);
  if (!r)
    return GP_ECORRUPT;
  *record = r;
  return 0;
}

/* See activity.h. */
const uint64_t *gp_activity_wait_ids(const gp_activity *record, uint32_t *n) {
  uint32_t count = 0;
  size_t base = 0;
  if (record) {
    switch (record->kind) {
    case GP_ACTIVITY_KIND_KERNEL:
      count = ((const gp_activity_kernel *)record)->num_wait_ids;
      base = sizeof(gp_activity_kernel);
      break;
    case GP_ACTIVITY_KIND_MEMCPY:
      count = ((const gp_activity_memcpy *)record)->num_wait_ids;
      base = sizeof(gp_activity_memcpy);
      break;
    case GP_ACTIVITY_KIND_MEMSET:
      count = ((const gp_activity_memset *)record)->num_wait_ids;
      base = sizeof(gp_activity_memset);
      break;
    case GP_ACTIVITY_KIND_RENDER_STAGE:
      count = ((const gp_activity_render_stage *)record)->num_wait_ids;
      base = sizeof(gp_activity_render_stage);
      break;
    default:
      break;
    }
  }
  /* The ids are the last count*8 bytes; defend against a short record. */
  if (count == 0 || record->size < base + (size_t)count * 8u) {
    if (n)
      *n = 0;
    return NULL;
  }
  if (n)
    *n = count;
  return (const uint64_t *)((const uint8_t *)record + record->size -
                            (size_t)count * 8u);
}
