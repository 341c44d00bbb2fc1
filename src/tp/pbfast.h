/*
 * pbfast.h - an inline twin of gp__pb_next() for the importer's hot loops.
 *
 * Same contract as gp__pb_next() in perfetto/pb.h (1 for a field, 0 at
 * the end, GP_ECORRUPT with the reader left at the offending field), but
 * inlined, with a fast path for the one-byte tags and varints that make up
 * most of a trace. Importing calls it a dozen times per packet; the call
 * to the out-of-line decoder was a fifth of the import time.
 */
#ifndef GPUPERF_TP_PBFAST_H
#define GPUPERF_TP_PBFAST_H

#include "gpuperf/error.h"
#include "perfetto/pb.h"

/* The little-endian 64-bit word at p. */
static inline uint64_t gp__tp_le64(const uint8_t *p) {
  uint64_t v;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(&v, p, 8);
#else
  v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
#endif
  return v;
}

static inline int gp__tp_pb_next(gp__pb_reader *r, gp__pb_field *f) {
  const uint8_t *p = r->p, *end = r->end;
  if (p >= end)
    return 0;
  uint64_t tag;
  if (*p < 0x80) {
    tag = *p++;
  } else {
    size_t n = gp__pb_get_varint(p, end, &tag);
    if (n == 0)
      return GP_ECORRUPT;
    p += n;
  }
  /* Field numbers 1 .. 2^29 - 1: tags 8 .. 2^32 - 1, in one comparison. */
  if (tag - 8 > 0xfffffff7ull)
    return GP_ECORRUPT;
  f->id = (uint32_t)(tag >> 3);
  f->wire_type = (uint32_t)(tag & 7);
  switch (f->wire_type) {
  case GP_PB_VARINT:
    if (p < end && *p < 0x80) {
      f->value = *p++;
    } else {
      size_t n = gp__pb_get_varint(p, end, &f->value);
      if (n == 0)
        return GP_ECORRUPT;
      p += n;
    }
    f->data = NULL;
    f->size = 0;
    break;
  case GP_PB_LEN: {
    uint64_t len;
    if (p < end && *p < 0x80) {
      len = *p++;
    } else {
      size_t n = gp__pb_get_varint(p, end, &len);
      if (n == 0)
        return GP_ECORRUPT;
      p += n;
    }
    if (len > (uint64_t)(end - p))
      return GP_ECORRUPT;
    f->data = p;
    f->size = (size_t)len;
    f->value = len;
    p += len;
    break;
  }
  case GP_PB_I64:
    if (end - p < 8)
      return GP_ECORRUPT;
    f->value = gp__tp_le64(p);
    f->data = NULL;
    f->size = 0;
    p += 8;
    break;
  case GP_PB_I32:
    if (end - p < 4)
      return GP_ECORRUPT;
    f->value = 0;
    for (int i = 0; i < 4; i++)
      f->value |= (uint64_t)p[i] << (8 * i);
    f->data = NULL;
    f->size = 0;
    p += 4;
    break;
  default:
    return GP_ECORRUPT;
  }
  r->p = p;
  return 1;
}

#endif /* GPUPERF_TP_PBFAST_H */
