/*
 * pb.c - the out-of-line parts of the protobuf writer and reader (pb.h):
 * growing the chunk chain, length patching, bytes that span chunks, and
 * decoding one field with every bound checked.
 */
#include <stdlib.h>

#include "core/core.h"
#include "pb.h"

/* See pb.h. */
void gp__pb_writer_init(gp__pb_writer *w) {
  memset(w, 0, sizeof(*w));
}

/* See pb.h. */
void gp__pb_writer_fini(gp__pb_writer *w) {
  gp__pb_chunk *c = w->head;
  while (c) {
    gp__pb_chunk *n = c->next;
    free(c);
    c = n;
  }
  memset(w, 0, sizeof(*w));
}

/* See pb.h. */
void gp__pb_writer_reset(gp__pb_writer *w) {
  for (gp__pb_chunk *c = w->head; c; c = c->next)
    c->used = 0;
  w->cur = w->head;
  w->base = 0;
  w->depth = 0;
  w->oom = false;
  if (w->cur) {
    w->p = w->cur->data;
    w->end = w->cur->data + w->cur->cap;
  } else {
    w->p = w->end = NULL;
  }
}

/* See pb.h. */
bool gp__pb_reserve_slow(gp__pb_writer *w, size_t n) {
  if (w->oom || n > GP_PB_CHUNK_SIZE) {
    w->oom = true;
    return false;
  }
  if (w->cur) {
    w->cur->used = (size_t)(w->p - w->cur->data);
    w->base += w->cur->used;
  }
  gp__pb_chunk *next = w->cur ? w->cur->next : w->head;
  if (!next) {
    next = malloc(sizeof(*next) + GP_PB_CHUNK_SIZE);
    if (!next) {
      if (w->cur)
        w->base -= w->cur->used;
      w->oom = true;
      return false;
    }
    next->next = NULL;
    next->cap = GP_PB_CHUNK_SIZE;
    if (w->cur)
      w->cur->next = next;
    else
      w->head = next;
  }
  next->used = 0;
  w->cur = next;
  w->p = next->data;
  w->end = next->data + next->cap;
  return true;
}

/* See pb.h. */
void gp__pb_raw(gp__pb_writer *w, const void *data, size_t len) {
  const uint8_t *src = data;
  while (len > 0) {
    if (w->p == w->end && !gp__pb_reserve_slow(w, 1))
      return;
    size_t room = (size_t)(w->end - w->p);
    size_t k = len < room ? len : room;
    memcpy(w->p, src, k);
    w->p += k;
    src += k;
    len -= k;
  }
}

/* See pb.h. */
void gp__pb_bytes(gp__pb_writer *w, uint32_t field, const void *data,
                  size_t len) {
  if (!gp__pb_reserve(w, 20))
    return;
  gp__pb_tag(w, field, GP_PB_LEN);
  w->p = gp__pb_put_varint(w->p, len);
  gp__pb_raw(w, data, len);
}

/* See pb.h. */
void gp__pb_begin(gp__pb_writer *w, uint32_t field) {
  if (w->depth == GP_PB_MAX_DEPTH) {
    w->oom = true;
    return;
  }
  if (!gp__pb_reserve(w, 16))
    return;
  gp__pb_tag(w, field, GP_PB_LEN);
  w->stack[w->depth].len_at = w->p;
  w->p += 4;
  w->stack[w->depth].start = gp__pb_size(w);
  w->depth++;
}

/* See pb.h. */
void gp__pb_end(gp__pb_writer *w) {
  if (w->depth == 0) {
    w->oom = true;
    return;
  }
  w->depth--;
  if (w->oom)
    return;
  uint64_t len = gp__pb_size(w) - w->stack[w->depth].start;
  if (len >= (1u << 28)) {
    w->oom = true;
    return;
  }
  gp__pb_put_len4(w->stack[w->depth].len_at, len);
}

/* See pb.h. */
int gp__pb_for_each(const gp__pb_writer *w,
                    int (*fn)(void *user, const uint8_t *data, size_t len),
                    void *user) {
  for (gp__pb_chunk *c = w->head; c; c = c->next) {
    size_t used = c == w->cur ? (size_t)(w->p - c->data) : c->used;
    if (used > 0) {
      int rc = fn(user, c->data, used);
      if (rc != 0)
        return rc;
    }
    if (c == w->cur)
      break;
  }
  return 0;
}

static int copy_out(void *user, const uint8_t *data, size_t len) {
  uint8_t **out = user;
  memcpy(*out, data, len);
  *out += len;
  return 0;
}

/* See pb.h. */
void gp__pb_copy(const gp__pb_writer *w, uint8_t *out) {
  gp__pb_for_each(w, copy_out, &out);
}

/* See pb.h. */
int gp__pb_next(gp__pb_reader *r, gp__pb_field *f) {
  if (r->p >= r->end)
    return 0;
  const uint8_t *p = r->p;
  uint64_t tag;
  size_t n = gp__pb_get_varint(p, r->end, &tag);
  if (n == 0 || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
    return GP_ECORRUPT;
  p += n;
  f->id = (uint32_t)(tag >> 3);
  f->wire_type = (uint32_t)(tag & 7);
  f->data = NULL;
  f->size = 0;
  switch (f->wire_type) {
  case GP_PB_VARINT:
    n = gp__pb_get_varint(p, r->end, &f->value);
    if (n == 0)
      return GP_ECORRUPT;
    p += n;
    break;
  case GP_PB_I64:
    if (r->end - p < 8)
      return GP_ECORRUPT;
    f->value = 0;
    for (int i = 0; i < 8; i++)
      f->value |= (uint64_t)p[i] << (8 * i);
    p += 8;
    break;
  case GP_PB_I32:
    if (r->end - p < 4)
      return GP_ECORRUPT;
    f->value = 0;
    for (int i = 0; i < 4; i++)
      f->value |= (uint64_t)p[i] << (8 * i);
    p += 4;
    break;
  case GP_PB_LEN: {
    uint64_t len;
    n = gp__pb_get_varint(p, r->end, &len);
    if (n == 0)
      return GP_ECORRUPT;
    p += n;
    if (len > (uint64_t)(r->end - p))
      return GP_ECORRUPT;
    f->data = p;
    f->size = (size_t)len;
    f->value = len;
    p += len;
    break;
  }
  default: /* 3, 4: groups (long deprecated); 6, 7: not defined */
    return GP_ECORRUPT;
  }
  r->p = p;
  return 1;
}
