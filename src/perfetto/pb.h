/*
 * pb.h - the protobuf wire format, both ways: a writer of nested messages
 * into chunked buffers and a reader that never reads past its input.
 *
 * Writer. Fields are appended to a chain of chunks that is reused from one
 * use to the next, so writing allocates nothing once the chain has grown
 * to the size of the largest unit written between resets. A nested
 * message reserves four bytes for its length when it begins and patches
 * them, as a redundant varint (0x80|b0, 0x80|b1, 0x80|b2, b3), when it
 * ends; that limits a nested message to 2^28 - 1 bytes and lets the length
 * sit in a chunk that has since filled up. Repeated scalars are written
 * unpacked, one tag per element, which is how the proto2 GPU schema
 * declares them. Writing past what memory allows sets an error flag
 * instead of failing each call; check gp__pb_error() at the end.
 *
 * Wire format, per field:
 *
 *   tag   varint (field_number << 3 | wire_type)
 *   0 VARINT  varint value (int32, int64, uint32, uint64, bool, enum; sint
 * zigzagged) 1 I64     8 bytes little-endian (fixed64, sfixed64, double) 2 LEN
 * varint length, then that many bytes (string, bytes, message) 5 I32     4
 * bytes little-endian (fixed32, sfixed32, float)
 *
 * Reader. gp__pb_next() decodes one field at a time from a byte range and
 * reports malformed input (truncated varint, length past the end, group
 * wire types, field number 0) as GP_ECORRUPT with the offset at fault.
 * Unknown fields are simply returned to the caller, who skips them.
 */
#ifndef GPUPERF_PB_H
#define GPUPERF_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GP_PB_VARINT 0
#define GP_PB_I64 1
#define GP_PB_LEN 2
#define GP_PB_I32 5

#define GP_PB_MAX_DEPTH 32
#define GP_PB_CHUNK_SIZE 65536

/* ------------------------------------------------------------------ */
/* Writer                                                               */

typedef struct gp__pb_chunk {
  struct gp__pb_chunk *next;
  size_t used; /* bytes of data in use, set when the chunk is left */
  size_t cap;
  uint8_t data[];
} gp__pb_chunk;

typedef struct gp__pb_writer {
  uint8_t *p, *end;   /* free space of the current chunk */
  gp__pb_chunk *head; /* first chunk of the content */
  gp__pb_chunk *cur;  /* chunk being written */
  uint64_t base;      /* bytes before cur->data */
  int depth;
  bool oom; /* memory ran out: content is incomplete */
  struct {
    uint8_t *len_at; /* the 4 reserved length bytes */
    uint64_t start;  /* position just after them */
  } stack[GP_PB_MAX_DEPTH];
} gp__pb_writer;

/* Initialises an empty writer (allocates nothing yet). */
void gp__pb_writer_init(gp__pb_writer *w);

/* Frees every chunk. */
void gp__pb_writer_fini(gp__pb_writer *w);

/* Forgets the content but keeps the chunks for reuse. Nesting must be
 * closed. */
void gp__pb_writer_reset(gp__pb_writer *w);

/* Ensures n contiguous free bytes (n <= GP_PB_CHUNK_SIZE). Returns false
 * and sets the error flag if memory runs out. */
bool gp__pb_reserve_slow(gp__pb_writer *w, size_t n);

static inline bool gp__pb_reserve(gp__pb_writer *w, size_t n) {
  return (size_t)(w->end - w->p) >= n || gp__pb_reserve_slow(w, n);
}

/* Bytes written so far (closed and open messages included). */
static inline uint64_t gp__pb_size(const gp__pb_writer *w) {
  return w->cur ? w->base + (uint64_t)(w->p - w->cur->data) : 0;
}

/* gp__pb_size() once a chunk exists (after a successful reserve). */
static inline uint64_t gp__pb_pos(const gp__pb_writer *w) {
  return w->base + (uint64_t)(w->p - w->cur->data);
}

/* True if memory ran out or nesting was misused since the last reset. */
static inline bool gp__pb_error(const gp__pb_writer *w) {
  return w->oom;
}

static inline uint8_t *gp__pb_put_varint(uint8_t *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

/*
 * gp__pb_put_varint() for values that are mostly 5 bytes long, 2^28 to
 * 2^35 - 1: nanosecond timestamps from 0.27 s to 34 s of boot time, as
 * every deterministic trace's are. Their first four bytes are put in one
 * 4-byte store, the 7-bit groups spread in two steps (the inverse of
 * gp__pb_get_varint()'s): 17 instructions where the byte loop took 31.
 * Other values go through the loop.
 */
static inline uint8_t *gp__pb_put_varint_ts(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (v - (1ull << 28) < (1ull << 35) - (1ull << 28)) {
    uint32_t x = (uint32_t)v;
    x = (x & 0x3fffu) | ((x << 2) & 0x3fff0000u);
    x = (x & 0x007f007fu) | ((x << 1) & 0x7f007f00u);
    x |= 0x80808080u;
    memcpy(p, &x, 4);
    p[4] = (uint8_t)(v >> 28);
    return p + 5;
  }
#endif
  return gp__pb_put_varint(p, v);
}

/* A VARINT field at p, which the caller has reserved room for (at most
 * 5 + 10 bytes): for packets assembled in one reservation. */
static inline uint8_t *gp__pb_put_uint(uint8_t *p, uint32_t field, uint64_t v) {
  p = gp__pb_put_varint(p, ((uint64_t)field << 3) | GP_PB_VARINT);
  return gp__pb_put_varint(p, v);
}

/* A fixed64 (or double's bits) field at p, reserved (at most 5 + 8
 * bytes). */
static inline uint8_t *gp__pb_put_fixed64(uint8_t *p, uint32_t field,
                                          uint64_t v) {
  p = gp__pb_put_varint(p, ((uint64_t)field << 3) | GP_PB_I64);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(p, &v, 8); /* one store: GCC keeps the byte loop as a loop */
  return p + 8;
#else
  for (int i = 0; i < 8; i++)
    *p++ = (uint8_t)(v >> (8 * i));
  return p;
#endif
}

/* The two length bytes of a medium message (below), content len < 16384. */
static inline void gp__pb_put_len2(uint8_t *at, uint64_t len) {
  at[0] = (uint8_t)(0x80 | (len & 0x7f));
  at[1] = (uint8_t)(len >> 7);
}

/* The four length bytes of a nested message (gp__pb_begin()), len <
 * 2^28. */
static inline void gp__pb_put_len4(uint8_t *at, uint64_t len) {
  at[0] = (uint8_t)(0x80 | (len & 0x7f));
  at[1] = (uint8_t)(0x80 | ((len >> 7) & 0x7f));
  at[2] = (uint8_t)(0x80 | ((len >> 14) & 0x7f));
  at[3] = (uint8_t)((len >> 21) & 0x7f);
}

static inline void gp__pb_tag(gp__pb_writer *w, uint32_t field, uint32_t wt) {
  w->p = gp__pb_put_varint(w->p, ((uint64_t)field << 3) | wt);
}

/* uint32/uint64/int64/bool/enum fields. */
static inline void gp__pb_uint(gp__pb_writer *w, uint32_t field, uint64_t v) {
  if (!gp__pb_reserve(w, 20))
    return;
  gp__pb_tag(w, field, GP_PB_VARINT);
  w->p = gp__pb_put_varint(w->p, v);
}

/* int32/int64 fields: negatives are 10-byte sign-extended varints. */
static inline void gp__pb_int(gp__pb_writer *w, uint32_t field, int64_t v) {
  gp__pb_uint(w, field, (uint64_t)v);
}

/* sint32/sint64 fields (zigzag). */
static inline void gp__pb_sint(gp__pb_writer *w, uint32_t field, int64_t v) {
  gp__pb_uint(w, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static inline void gp__pb_fixed64(gp__pb_writer *w, uint32_t field,
                                  uint64_t v) {
  if (!gp__pb_reserve(w, 15))
    return;
  w->p = gp__pb_put_fixed64(w->p, field, v);
}

static inline void gp__pb_fixed32(gp__pb_writer *w, uint32_t field,
                                  uint32_t v) {
  if (!gp__pb_reserve(w, 10))
    return;
  gp__pb_tag(w, field, GP_PB_I32);
  for (int i = 0; i < 4; i++)
    *w->p++ = (uint8_t)(v >> (8 * i));
}

static inline void gp__pb_double(gp__pb_writer *w, uint32_t field, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof(bits));
  gp__pb_fixed64(w, field, bits);
}

static inline void gp__pb_float(gp__pb_writer *w, uint32_t field, float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof(bits));
  gp__pb_fixed32(w, field, bits);
}

/* bytes/string fields (data may span chunks). */
void gp__pb_bytes(gp__pb_writer *w, uint32_t field, const void *data,
                  size_t len);

static inline void gp__pb_string(gp__pb_writer *w, uint32_t field,
                                 const char *s) {
  gp__pb_bytes(w, field, s, s ? strlen(s) : 0);
}

/* Appends raw, already-encoded bytes. */
void gp__pb_raw(gp__pb_writer *w, const void *data, size_t len);

/* Opens a nested message in field `field`. Deeper than GP_PB_MAX_DEPTH
 * sets the error flag. */
void gp__pb_begin(gp__pb_writer *w, uint32_t field);

/* Closes the innermost open message, patching its length. */
void gp__pb_end(gp__pb_writer *w);

/*
 * Short nested messages. gp__pb_begin_short() opens a message that will
 * hold fewer than 128 bytes (a Dim3, an interned {iid, name} with a short
 * name, ...) and reserves one length byte instead of four;
 * gp__pb_end_short() patches it, or sets the error flag if the content
 * grew to 128 bytes or more. Nothing else may be opened in between.
 */
typedef struct gp__pb_short {
  uint8_t *len_at; /* NULL if the writer ran out of memory */
  uint64_t start;
} gp__pb_short;

static inline gp__pb_short gp__pb_begin_short(gp__pb_writer *w,
                                              uint32_t field) {
  gp__pb_short s = {NULL, 0};
  if (!gp__pb_reserve(w, 16))
    return s;
  gp__pb_tag(w, field, GP_PB_LEN);
  s.len_at = w->p++;
  s.start = gp__pb_pos(w);
  return s;
}

static inline void gp__pb_end_short(gp__pb_writer *w, gp__pb_short s) {
  if (!s.len_at)
    return;
  uint64_t len = gp__pb_pos(w) - s.start;
  if (len >= 128)
    w->oom = true;
  else
    *s.len_at = (uint8_t)len;
}

/*
 * Medium nested messages: as gp__pb_begin_short(), with two length bytes
 * (a redundant varint) for content of fewer than 16384 bytes.
 */
static inline gp__pb_short gp__pb_begin_medium(gp__pb_writer *w,
                                               uint32_t field) {
  gp__pb_short s = {NULL, 0};
  if (!gp__pb_reserve(w, 16))
    return s;
  gp__pb_tag(w, field, GP_PB_LEN);
  s.len_at = w->p;
  w->p += 2;
  s.start = gp__pb_pos(w);
  return s;
}

static inline void gp__pb_end_medium(gp__pb_writer *w, gp__pb_short s) {
  if (!s.len_at)
    return;
  uint64_t len = gp__pb_pos(w) - s.start;
  if (len >= 16384) {
    w->oom = true;
    return;
  }
  gp__pb_put_len2(s.len_at, len);
}

/*
 * Long nested messages, inline: the four length bytes of gp__pb_begin(),
 * so the same bytes as gp__pb_begin() ... gp__pb_end(), but the open
 * message is the caller's to keep (in a gp__pb_short), not on the
 * writer's stack, and neither step is a call. For the messages every
 * counter group, clock snapshot and interned entry writes. The content
 * may span chunks. Nothing opened with gp__pb_begin() may be left open
 * across gp__pb_end_long().
 */
static inline gp__pb_short gp__pb_begin_long(gp__pb_writer *w, uint32_t field) {
  gp__pb_short s = {NULL, 0};
  if (!gp__pb_reserve(w, 16))
    return s;
  gp__pb_tag(w, field, GP_PB_LEN);
  s.len_at = w->p;
  w->p += 4;
  s.start = gp__pb_pos(w);
  return s;
}

static inline void gp__pb_end_long(gp__pb_writer *w, gp__pb_short s) {
  if (!s.len_at || w->oom)
    return;
  uint64_t len = gp__pb_pos(w) - s.start;
  if (len >= (1u << 28)) {
    w->oom = true;
    return;
  }
  gp__pb_put_len4(s.len_at, len);
}

/* Calls fn on each run of content bytes, in order; stops at the first
 * non-zero return and returns it. Nesting should be closed. */
int gp__pb_for_each(const gp__pb_writer *w,
                    int (*fn)(void *user, const uint8_t *data, size_t len),
                    void *user);

/* Copies the content into out (of at least gp__pb_size() bytes). */
void gp__pb_copy(const gp__pb_writer *w, uint8_t *out);

/* ------------------------------------------------------------------ */
/* Reader                                                               */

typedef struct gp__pb_field {
  uint32_t id;
  uint32_t wire_type;
  uint64_t value;      /* VARINT, I64, I32: the raw bits */
  const uint8_t *data; /* LEN: the payload */
  size_t size;         /* LEN: its length */
} gp__pb_field;

typedef struct gp__pb_reader {
  const uint8_t *p, *end;
  const uint8_t *base;  /* for offsets in errors */
  uint64_t base_offset; /* offset of base in the whole input */
} gp__pb_reader;

/* Reads the fields of data[0..size). base_offset is where data starts in
 * the caller's input, for error offsets. data may be NULL when size is 0
 * (an empty packet). */
static inline void gp__pb_reader_init(gp__pb_reader *r, const uint8_t *data,
                                      size_t size, uint64_t base_offset) {
  r->p = data;
  r->end = size ? data + size : data; /* NULL + 0 is undefined in C */
  r->base = data;
  r->base_offset = base_offset;
}

/* A reader over a LEN field's payload, offsets continuing the parent's. */
static inline void gp__pb_reader_sub(gp__pb_reader *sub,
                                     const gp__pb_reader *parent,
                                     const gp__pb_field *f) {
  gp__pb_reader_init(sub, f->data, f->size,
                     parent->base_offset + (uint64_t)(f->data - parent->base));
}

/* Offset (in the whole input) of the reader's position. */
static inline uint64_t gp__pb_offset(const gp__pb_reader *r) {
  return r->base_offset + (uint64_t)(r->p - r->base);
}

/*
 * Decodes a varint at *p (not past end). Returns the bytes used, or 0 if
 * it is truncated or longer than 10 bytes.
 */
static inline size_t gp__pb_get_varint(const uint8_t *p, const uint8_t *end,
                                       uint64_t *v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  /* Up to 8 bytes at once where 8 can be read (timestamps, ids and sizes
   * take 2-8 bytes): the first byte without its top bit ends the varint,
   * and the 7-bit groups close up in three steps. A byte at a time was a
   * third of an import's instructions. */
  if (end - p >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t stop = ~w & 0x8080808080808080ull;
    if (stop) {
      unsigned bits = (unsigned)__builtin_ctzll(stop) + 1;
      uint64_t x =
          (bits == 64 ? w : w & ((1ull << bits) - 1)) & 0x7f7f7f7f7f7f7f7full;
      x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
      x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
      x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
      *v = x;
      return bits / 8;
    }
  }
#endif
  uint64_t r = 0;
  for (size_t i = 0; i < 10 && p + i < end; i++) {
    r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *v = r;
      return i + 1;
    }
  }
  return 0;
}

/*
 * Decodes a varint at p that was validated before (it is known to end
 * within the data): a byte at a time, so that nothing past its last byte
 * is read, as gp__pb_get_varint's 8-byte load would at the data's end.
 * Returns the bytes used (at most 10).
 */
static inline size_t gp__pb_get_varint_known(const uint8_t *p, uint64_t *v) {
  uint64_t r = 0;
  size_t i = 0;
  do
    r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
  while ((p[i++] & 0x80) && i < 10);
  *v = r;
  return i;
}

/*
 * Decodes the next field into *f. Returns 1 for a field, 0 at the end of
 * the input, GP_ECORRUPT for malformed input (the reader then stays at the
 * offending field: gp__pb_offset() names it).
 */
int gp__pb_next(gp__pb_reader *r, gp__pb_field *f);

/* Value helpers. */
static inline int64_t gp__pb_as_int(const gp__pb_field *f) {
  return (int64_t)f->value;
}
static inline int32_t gp__pb_as_int32(const gp__pb_field *f) {
  return (int32_t)(uint32_t)f->value;
}
static inline int64_t gp__pb_as_sint(const gp__pb_field *f) {
  return (int64_t)(f->value >> 1) ^ -(int64_t)(f->value & 1);
}
static inline double gp__pb_as_double(const gp__pb_field *f) {
  double d;
  memcpy(&d, &f->value, sizeof(d));
  return d;
}
static inline float gp__pb_as_float(const gp__pb_field *f) {
  uint32_t bits = (uint32_t)f->value;
  float v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}

#endif /* GPUPERF_PB_H */
