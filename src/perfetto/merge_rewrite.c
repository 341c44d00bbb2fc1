/*
 * merge_rewrite.c - rewriting the packets of one machine's trace for a
 * merged (or re-timed) trace: timestamps onto the common clock, a
 * machine_id on every packet, sequences, track uuids and event ids made
 * unique across machines, GPU and process names prefixed with the host.
 * Fields it does not know are copied unchanged. See mergeInt.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "mergeInt.h"
#include "proto.h"

/* TracePacket fields this file needs beyond proto.h. */
enum {
  PK_DEFAULTS = 59,
  DEF_TRACK_EVENT_DEFAULTS = 11,
  DEF_CLOCK_ID = 58,
  TED_TRACK_UUID = 11,
  TED_EXTRA_COUNTER_UUIDS = 31,
  TE_EXTRA_COUNTER_UUIDS = 31,
  TE_FLOW_IDS = 47,
  TE_TERMINATING_FLOW_IDS = 48,
  CLOCK_IS_INCREMENTAL = 3
};

/* ------------------------------------------------------------------ */
/* Map                                                                  */

static size_t slot_of(uint64_t key, size_t cap) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdull;
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

/* See mergeInt.h. */
uint64_t *gp__mg_map_get(const mg_map *m, uint64_t key) {
  if (!m->cap)
    return NULL;
  for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key)
      return &m->vals[i];
    if (!m->keys[i])
      return NULL;
  }
}

static bool map_grow(mg_map *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  uint64_t *k = calloc(ncap, sizeof(*k)), *v = calloc(ncap, sizeof(*v));
  if (!k || !v) {
    free(k);
    free(v);
    return false;
  }
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->keys[i])
      continue;
    size_t j = slot_of(m->keys[i], ncap);
    while (k[j])
      j = (j + 1) & (ncap - 1);
    k[j] = m->keys[i];
    v[j] = m->vals[i];
  }
  free(m->keys);
  free(m->vals);
  m->keys = k;
  m->vals = v;
  m->cap = ncap;
  return true;
}

/* See mergeInt.h. */
uint64_t *gp__mg_map_put(mg_map *m, uint64_t key) {
  uint64_t *v = gp__mg_map_get(m, key);
  if (v)
    return v;
  if ((m->n + 1) * 2 > m->cap && !map_grow(m))
    return NULL;
  size_t i = slot_of(key, m->cap);
  while (m->keys[i])
    i = (i + 1) & (m->cap - 1);
  m->keys[i] = key;
  m->vals[i] = 0;
  m->n++;
  return &m->vals[i];
}

/* See mergeInt.h. */
void gp__mg_map_free(mg_map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* Output buffer                                                        */

static bool reserve(mg_buf *b, size_t more) {
  if (b->oom)
    return false;
  if (b->n + more <= b->cap)
    return true;
  size_t nc = b->cap ? b->cap * 2 : 1 << 16;
  while (nc < b->n + more)
    nc *= 2;
  uint8_t *p = realloc(b->p, nc);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = nc;
  return true;
}

static void put_varint(mg_buf *b, uint64_t v) {
  if (!reserve(b, 10))
    return;
  b->n = (size_t)(gp__pb_put_varint(b->p + b->n, v) - b->p);
}

/* See mergeInt.h. */
void gp__mg_buf_fini(mg_buf *b) {
  free(b->p);
  memset(b, 0, sizeof(*b));
}

/* See mergeInt.h. */
void gp__mg_uint(mg_buf *b, uint32_t field, uint64_t v) {
  put_varint(b, (uint64_t)field << 3 | GP_PB_VARINT);
  put_varint(b, v);
}

/* See mergeInt.h. */
void gp__mg_fixed(mg_buf *b, uint32_t field, uint64_t v, int bytes) {
  put_varint(b, (uint64_t)field << 3 | (bytes == 8 ? GP_PB_I64 : GP_PB_I32));
  if (!reserve(b, 8))
    return;
  for (int i = 0; i < bytes; i++)
    b->p[b->n++] = (uint8_t)(v >> (8 * i));
}

/* See mergeInt.h. */
void gp__mg_bytes(mg_buf *b, uint32_t field, const void *data, size_t len) {
  put_varint(b, (uint64_t)field << 3 | GP_PB_LEN);
  put_varint(b, len);
  if (!reserve(b, len))
    return;
  if (len)
    memcpy(b->p + b->n, data, len);
  b->n += len;
}

/* See mergeInt.h. */
void gp__mg_begin(mg_buf *b, uint32_t field) {
  put_varint(b, (uint64_t)field << 3 | GP_PB_LEN);
  if (b->depth == GP_PB_MAX_DEPTH) {
    b->oom = true;
    return;
  }
  b->stack[b->depth++] = b->n;
}

/* See mergeInt.h. */
void gp__mg_end(mg_buf *b) {
  if (b->depth == 0 || b->oom)
    return;
  size_t start = b->stack[--b->depth], len = b->n - start;
  uint8_t tmp[10];
  size_t vn = (size_t)(gp__pb_put_varint(tmp, len) - tmp);
  if (!reserve(b, vn))
    return;
  memmove(b->p + start + vn, b->p + start, len);
  memcpy(b->p + start, tmp, vn);
  b->n += vn;
}

/* ------------------------------------------------------------------ */
/* Reader                                                               */

/* See mergeInt.h. */
int gp__mg_reader_open(mg_reader *r, const char *path) {
  memset(r, 0, sizeof(*r));
  r->path = path;
  r->f = fopen(path, "rb");
  return r->f ? 0 : -errno;
}

static int read_varint(FILE *f, uint64_t *v, uint64_t *used) {
  uint64_t x = 0;
  for (int i = 0; i < 10; i++) {
    int c = getc(f);
    if (c == EOF)
      return i == 0 ? 0 : GP_ECORRUPT;
    (*used)++;
    x |= (uint64_t)(c & 0x7f) << (7 * i);
    if (!(c & 0x80)) {
      *v = x;
      return 1;
    }
  }
  return GP_ECORRUPT;
}

/* See mergeInt.h. Fields of Trace other than `packet` are skipped. */
int gp__mg_reader_next(mg_reader *r, const uint8_t **data, size_t *len) {
  for (;;) {
    uint64_t tag = 0, size = 0, used = 0;
    int rc = read_varint(r->f, &tag, &used);
    if (rc <= 0)
      return ferror(r->f) ? -EIO : rc;
    if ((tag & 7) != GP_PB_LEN || (rc = read_varint(r->f, &size, &used)) != 1)
      return GP_ECORRUPT;
    if (size > (1ull << 30))
      return GP_ECORRUPT;
    if (size > r->cap) {
      uint8_t *b = realloc(r->buf, size);
      if (!b)
        return GP_ENOMEM;
      r->buf = b;
      r->cap = size;
    }
    if (fread(r->buf, 1, size, r->f) != size)
      return GP_ECORRUPT;
    r->offset += used + size;
    if ((tag >> 3) != GP_PB_TRACE_PACKET)
      continue;
    *data = r->buf;
    *len = size;
    return 1;
  }
}

/* See mergeInt.h. */
void gp__mg_reader_close(mg_reader *r) {
  if (r->f)
    fclose(r->f);
  free(r->buf);
  memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------ */
/* Rewriting                                                            */

static void copy_field(mg_buf *o, const gp__pb_field *f) {
  switch (f->wire_type) {
  case GP_PB_VARINT:
    gp__mg_uint(o, f->id, f->value);
    break;
  case GP_PB_I64:
    gp__mg_fixed(o, f->id, f->value, 8);
    break;
  case GP_PB_I32:
    gp__mg_fixed(o, f->id, (uint32_t)f->value, 4);
    break;
  default:
    gp__mg_bytes(o, f->id, f->data, f->size);
    break;
  }
}

/* Copies a varint field, or each element of its packed form, xored. */
static int copy_xor(mg_buf *o, const gp__pb_field *f, uint64_t x) {
  if (f->wire_type == GP_PB_VARINT) {
    gp__mg_uint(o, f->id, f->value ^ x);
    return 0;
  }
  if (f->wire_type == GP_PB_I64) {
    gp__mg_fixed(o, f->id, f->value ^ x, 8);
    return 0;
  }
  if (f->wire_type != GP_PB_LEN)
    return GP_ECORRUPT;
  const uint8_t *p = f->data, *end = f->data + f->size;
  while (p < end) {
    uint64_t v;
    size_t n = gp__pb_get_varint(p, end, &v);
    if (!n)
      return GP_ECORRUPT;
    gp__mg_uint(o, f->id, v ^ x);
    p += n;
  }
  return 0;
}

/* Rewrites a message whose fields in xor_fields[] hold ids (xored) and
 * whose other fields are copied; `sub` names one nested message field
 * rewritten the same way with sub_fields. */
static int rewrite_ids(mg_buf *o, const uint8_t *d, size_t n,
                       const uint32_t *xf, size_t nxf, uint64_t x, uint32_t sub,
                       const uint32_t *sf, size_t nsf) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    bool hit = false;
    for (size_t i = 0; i < nxf && !hit; i++)
      hit = f.id == xf[i];
    if (hit) {
      if ((rc = copy_xor(o, &f, x)))
        return rc;
    } else if (sub && f.id == sub && f.wire_type == GP_PB_LEN) {
      gp__mg_begin(o, f.id);
      if ((rc = rewrite_ids(o, f.data, f.size, sf, nsf, x, 0, NULL, 0)))
        return rc;
      gp__mg_end(o);
    } else {
      copy_field(o, &f);
    }
  }
  return rc;
}

/* Copies a message, putting prefix before the string field name_field
 * (adding one of just the prefix, less ": ", when there is none). */
static int prefix_name(mg_buf *o, const uint8_t *d, size_t n,
                       uint32_t name_field, const char *prefix) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  bool named = false;
  size_t pl = strlen(prefix);
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id == name_field && f.wire_type == GP_PB_LEN && !named) {
      char *s = malloc(pl + f.size + 1);
      if (!s)
        return GP_ENOMEM;
      memcpy(s, prefix, pl);
      memcpy(s + pl, f.data, f.size);
      gp__mg_bytes(o, f.id, s, pl + f.size);
      free(s);
      named = true;
    } else {
      copy_field(o, &f);
    }
  }
  if (rc == 0 && !named)
    gp__mg_bytes(o, name_field, prefix, pl > 2 ? pl - 2 : pl);
  return rc;
}

static uint64_t map_time(mg_rewrite *rw, uint64_t t) {
  if (t > INT64_MAX) {
    rw->huge_time = true;
    return 0;
  }
  int64_t v = gp__mg_apply(&rw->map, (int64_t)t);
  if (v < 0) {
    rw->bad_time = true;
    return 0;
  }
  return (uint64_t)v;
}

static bool retimed_clock(uint64_t id) {
  return id == 0 || id == MG_CLOCK_BOOTTIME || id == MG_CLOCK_MONOTONIC ||
         id == MG_CLOCK_MONOTONIC_COARSE || id == MG_CLOCK_MONOTONIC_RAW;
}

static int rewrite_snapshot(mg_rewrite *rw, mg_buf *o, const uint8_t *d,
                            size_t n) {
  gp__pb_reader r, c;
  gp__pb_field f, g;
  int rc;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id != GP_PB_CLOCK_SNAPSHOT_CLOCKS || f.wire_type != GP_PB_LEN) {
      copy_field(o, &f);
      continue;
    }
    uint64_t id = 0;
    bool incremental = false;
    gp__pb_reader_init(&c, f.data, f.size, 0);
    while ((rc = gp__pb_next(&c, &g)) == 1) {
      if (g.id == GP_PB_CLOCK_ID)
        id = g.value;
      else if (g.id == CLOCK_IS_INCREMENTAL)
        incremental = g.value != 0;
    }
    if (rc)
      return rc;
    gp__mg_begin(o, f.id);
    gp__pb_reader_init(&c, f.data, f.size, 0);
    while ((rc = gp__pb_next(&c, &g)) == 1) {
      if (g.id == GP_PB_CLOCK_TIMESTAMP && g.wire_type == GP_PB_VARINT &&
          !incremental && id && retimed_clock(id))
        gp__mg_uint(o, g.id, map_time(rw, g.value));
      else if (g.id == GP_PB_CLOCK_TIMESTAMP && g.wire_type == GP_PB_VARINT &&
               !incremental &&
               (id == MG_CLOCK_REALTIME || id == MG_CLOCK_REALTIME_COARSE))
        gp__mg_uint(o, g.id, g.value + (uint64_t)rw->real_off);
      else
        copy_field(o, &g);
    }
    gp__mg_end(o);
    if (rc)
      return rc;
  }
  return rc;
}

static int rewrite_render_stage(mg_rewrite *rw, mg_buf *o, const uint8_t *d,
                                size_t n, uint64_t ts, bool retime) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if ((f.id == GP_PB_RSE_EVENT_ID || f.id == GP_PB_RSE_EVENT_WAIT_IDS) &&
        rw->renumber) {
      if ((rc = copy_xor(o, &f, rw->id_xor)))
        return rc;
    } else if (f.id == GP_PB_RSE_DURATION && f.wire_type == GP_PB_VARINT &&
               retime && ts) {
      gp__mg_uint(o, f.id, map_time(rw, ts + f.value) - map_time(rw, ts));
    } else {
      copy_field(o, &f);
    }
  }
  return rc;
}

static int rewrite_gpu_info(mg_rewrite *rw, mg_buf *o, const uint8_t *d,
                            size_t n) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id != GP_PB_GPU_INFO_GPUS || f.wire_type != GP_PB_LEN) {
      copy_field(o, &f);
      continue;
    }
    gp__mg_begin(o, f.id);
    rc = prefix_name(o, f.data, f.size, GP_PB_GPU_NAME, rw->prefix);
    gp__mg_end(o);
    if (rc)
      return rc;
  }
  return rc;
}

static int rewrite_track_descriptor(mg_rewrite *rw, mg_buf *o, const uint8_t *d,
                                    size_t n) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if ((f.id == GP_PB_TD_UUID || f.id == GP_PB_TD_PARENT_UUID) &&
        rw->renumber) {
      if ((rc = copy_xor(o, &f, rw->id_xor)))
        return rc;
    } else if (f.id == GP_PB_TD_PROCESS && f.wire_type == GP_PB_LEN &&
               rw->prefix) {
      gp__mg_begin(o, f.id);
      rc = prefix_name(o, f.data, f.size, GP_PB_PD_PROCESS_NAME, rw->prefix);
      gp__mg_end(o);
      if (rc)
        return rc;
    } else {
      copy_field(o, &f);
    }
  }
  return rc;
}

/* The packet's own fields that decide how the rest is rewritten. */
typedef struct pk_head {
  uint64_t ts, seq, clock, def_clock;
  bool has_ts, has_seq, has_def_clock, cleared;
} pk_head;

static int scan_head(const uint8_t *d, size_t n, pk_head *h) {
  gp__pb_reader r, s;
  gp__pb_field f, g;
  int rc;
  memset(h, 0, sizeof(*h));
  gp__pb_reader_init(&r, d, n, 0);
  while ((rc = gp__pb_next(&r, &f)) == 1) {
    if (f.id == GP_PB_PACKET_TIMESTAMP) {
      h->ts = f.value;
      h->has_ts = true;
    } else if (f.id == GP_PB_PACKET_SEQUENCE_ID) {
      h->seq = f.value;
      h->has_seq = true;
    } else if (f.id == GP_PB_PACKET_TIMESTAMP_CLOCK_ID) {
      h->clock = f.value;
    } else if (f.id == PK_DEFAULTS && f.wire_type == GP_PB_LEN) {
      gp__pb_reader_init(&s, f.data, f.size, 0);
      while ((rc = gp__pb_next(&s, &g)) == 1)
        if (g.id == DEF_CLOCK_ID) {
          h->def_clock = g.value;
          h->has_def_clock = true;
        }
      if (rc)
        return rc;
    }
  }
  return rc;
}

/* See mergeInt.h. */
int gp__mg_rewrite_packet(mg_rewrite *rw, const uint8_t *data, size_t len,
                          mg_buf *o) {
  static const uint32_t te_ids[] = {GP_PB_TE_TRACK_UUID, TE_EXTRA_COUNTER_UUIDS,
                                    TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS};
  static const uint32_t corr_ids[] = {GP_PB_CORR_SUBMISSION_IDS,
                                      GP_PB_CORR_WAIT_IDS};
  static const uint32_t def_uuids[] = {TED_TRACK_UUID, TED_EXTRA_COUNTER_UUIDS};
  pk_head h;
  int rc = scan_head(data, len, &h);
  if (rc)
    return rc;
  /* Sequences: a fresh output id per input sequence; remember its
   * default clock (TracePacketDefaults) for the packets that follow. */
  uint64_t *sv = NULL, out_seq = h.seq;
  if (h.has_seq) {
    if (!(sv = gp__mg_map_put(&rw->seqs, h.seq + 1)))
      return GP_ENOMEM;
    if (!(*sv & 0xffffffffu))
      *sv |= rw->renumber ? (*rw->next_seq)++ : h.seq;
    if (h.has_def_clock)
      *sv = (*sv & 0xffffffffu) | h.def_clock << 32;
    out_seq = *sv & 0xffffffffu;
  }
  uint64_t clock = h.clock ? h.clock : sv ? *sv >> 32 : 0;
  bool retime = retimed_clock(clock);

  gp__pb_reader r;
  gp__pb_field f;
  gp__mg_begin(o, GP_PB_TRACE_PACKET);
  gp__pb_reader_init(&r, data, len, 0);
  while (rc == 0 && (rc = gp__pb_next(&r, &f)) == 1) {
    rc = 0;
    switch (f.id) {
    case GP_PB_PACKET_TIMESTAMP:
      gp__mg_uint(o, f.id, retime ? map_time(rw, f.value) : f.value);
      break;
    case GP_PB_PACKET_SEQUENCE_ID:
      gp__mg_uint(o, f.id, out_seq);
      break;
    case GP_PB_PACKET_MACHINE_ID:
      if (!rw->machine_id)
        copy_field(o, &f);
      break;
    case GP_PB_PACKET_CLOCK_SNAPSHOT:
      gp__mg_begin(o, f.id);
      rc = rewrite_snapshot(rw, o, f.data, f.size);
      gp__mg_end(o);
      break;
    case GP_PB_PACKET_GPU_RENDER_STAGE_EVENT:
      gp__mg_begin(o, f.id);
      rc =
          rewrite_render_stage(rw, o, f.data, f.size, h.ts, retime && h.has_ts);
      gp__mg_end(o);
      break;
    case GP_PB_PACKET_TRACK_EVENT:
      if (!rw->renumber) {
        copy_field(o, &f);
        break;
      }
      gp__mg_begin(o, f.id);
      /* Flow ids and uuids share the xor: both are only compared to
       * others of their own kind. */
      rc = rewrite_ids(o, f.data, f.size, te_ids, 4, rw->id_xor,
                       GP_PB_TE_GPU_CORRELATION, corr_ids, 2);
      gp__mg_end(o);
      break;
    case GP_PB_PACKET_TRACK_DESCRIPTOR:
      gp__mg_begin(o, f.id);
      rc = rewrite_track_descriptor(rw, o, f.data, f.size);
      gp__mg_end(o);
      break;
    case GP_PB_PACKET_GPU_INFO:
      if (!rw->prefix) {
        copy_field(o, &f);
        break;
      }
      gp__mg_begin(o, f.id);
      rc = rewrite_gpu_info(rw, o, f.data, f.size);
      gp__mg_end(o);
      break;
    case PK_DEFAULTS:
      if (!rw->renumber) {
        copy_field(o, &f);
        break;
      }
      gp__mg_begin(o, f.id);
      rc = rewrite_ids(o, f.data, f.size, NULL, 0, rw->id_xor,
                       DEF_TRACK_EVENT_DEFAULTS, def_uuids, 2);
      gp__mg_end(o);
      break;
    default:
      copy_field(o, &f);
      break;
    }
  }
  if (rc == 0 && rw->machine_id)
    gp__mg_uint(o, GP_PB_PACKET_MACHINE_ID, rw->machine_id);
  gp__mg_end(o);
  if (rc)
    return rc;
  return o->oom ? GP_ENOMEM : 0;
}
