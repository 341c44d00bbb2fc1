/*
 * writer_util.c - see writer_util.h.
 */
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "perfetto/pb.h"
#include "perfetto/proto.h"
#include "core/core.h"
#include "gpuperf/tp.h"
#include "writer_util.h"

/* See writer_util.h. */
uint8_t *wt_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    gp_test_fail(__FILE__, __LINE__, "cannot open %s", path);
  size_t cap = 1 << 16, n = 0, k;
  uint8_t *b = malloc(cap);
  ASSERT_NOT_NULL(b);
  while ((k = fread(b + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) {
      cap *= 2;
      b = realloc(b, cap);
      ASSERT_NOT_NULL(b);
    }
  }
  fclose(f);
  *size = n;
  return b;
}

/* See writer_util.h. */
char *wt_read_text(const char *path) {
  if (access(path, F_OK) != 0)
    return strdup("");
  size_t n;
  uint8_t *b = wt_read_file(path, &n);
  char *s = realloc(b, n + 1);
  ASSERT_NOT_NULL(s);
  s[n] = '\0';
  return s;
}

/* See writer_util.h. */
void wt_write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  size_t n = strlen(text);
  ASSERT_EQ(fwrite(text, 1, n, f), n);
  ASSERT_EQ(fclose(f), 0);
}

/* See writer_util.h. */
void wt_parse(wt_trace *t, uint8_t *bytes, size_t size) {
  memset(t, 0, sizeof(*t));
  t->bytes = bytes;
  t->size = size;
  size_t cap = 256;
  t->p = calloc(cap, sizeof(*t->p));
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, bytes, size, 0);
  for (;;) {
    uint64_t at = gp__pb_offset(&r);
    if (gp__pb_next(&r, &f) != 1 || f.id != 1 || f.wire_type != GP_PB_LEN)
      break;
    if (t->n == cap) {
      cap *= 2;
      t->p = realloc(t->p, cap * sizeof(*t->p));
      ASSERT_NOT_NULL(t->p);
    }
    wt_packet *p = &t->p[t->n];
    memset(p, 0, sizeof(*p));
    p->offset = at;
    gp__pb_reader sub;
    gp__pb_field g;
    gp__pb_reader_sub(&sub, &r, &f);
    int rc;
    while ((rc = gp__pb_next(&sub, &g)) == 1) {
      switch (g.id) {
      case GP_PB_PACKET_TIMESTAMP:
        p->ts = g.value;
        p->has_ts = true;
        break;
      case GP_PB_PACKET_SEQUENCE_ID:
        p->seq = (uint32_t)g.value;
        break;
      case GP_PB_PACKET_SEQUENCE_FLAGS:
        p->flags = (uint32_t)g.value;
        break;
      case GP_PB_PACKET_PREVIOUS_PACKET_DROPPED:
        p->dropped = g.value != 0;
        break;
      case GP_PB_PACKET_INTERNED_DATA:
        p->interned = g.data;
        p->interned_size = g.size;
        break;
      default:
        if (g.wire_type == GP_PB_LEN &&
            (g.id == 6 || g.id == 11 || g.id == 52 || g.id == 53 ||
             g.id == 60 || g.id == 63 || g.id == 128)) {
          p->data_id = g.id;
          p->data = g.data;
          p->data_size = g.size;
        }
      }
    }
    if (rc != 0)
      break;
    t->n++;
    t->valid = (size_t)gp__pb_offset(&r);
  }
}

/* See writer_util.h. */
void wt_load(wt_trace *t, const char *path) {
  size_t n;
  uint8_t *b = wt_read_file(path, &n);
  wt_parse(t, b, n);
}

/* See writer_util.h. */
void wt_free(wt_trace *t) {
  free(t->bytes);
  free(t->p);
  memset(t, 0, sizeof(*t));
}

/* See writer_util.h. */
bool wt_u64(const uint8_t *msg, size_t size, uint32_t id, uint64_t *v) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, msg, size, 0);
  while (gp__pb_next(&r, &f) == 1) {
    if (f.id == id) {
      *v = f.value;
      return true;
    }
  }
  return false;
}

/* See writer_util.h. */
size_t wt_count(const uint8_t *msg, size_t size, uint32_t id) {
  gp__pb_reader r;
  gp__pb_field f;
  size_t n = 0;
  gp__pb_reader_init(&r, msg, size, 0);
  while (gp__pb_next(&r, &f) == 1)
    n += f.id == id;
  return n;
}

/* See writer_util.h. */
bool wt_sub(const uint8_t *msg, size_t size, uint32_t id, size_t k,
            const uint8_t **sub, size_t *sub_size) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, msg, size, 0);
  while (gp__pb_next(&r, &f) == 1) {
    if (f.id == id && f.wire_type == GP_PB_LEN && k-- == 0) {
      *sub = f.data;
      *sub_size = f.size;
      return true;
    }
  }
  return false;
}

/* See writer_util.h. */
bool wt_str_is(const uint8_t *msg, size_t size, uint32_t id, size_t k,
               const char *s) {
  const uint8_t *d;
  size_t n;
  return wt_sub(msg, size, id, k, &d, &n) && n == strlen(s) &&
         memcmp(d, s, n) == 0;
}

/* See writer_util.h. */
size_t wt_count_packets(const wt_trace *t, uint32_t data_id) {
  size_t n = 0;
  for (size_t i = 0; i < t->n; i++)
    n += data_id == 0 || t->p[i].data_id == data_id;
  return n;
}

/* ------------------------------------------------------------------ */
/* Sequences and interning                                              */

typedef struct iid_def {
  uint32_t seq, field;
  uint64_t iid;
  uint32_t gen;
  const uint8_t *def; /* the entry's bytes */
  size_t size;
} iid_def;

typedef struct seq_state {
  uint32_t seq;
  uint32_t gen; /* 0: not valid yet */
} seq_state;

typedef struct checker {
  iid_def *defs;
  size_t n, cap;
  seq_state seqs[64];
  size_t nseqs;
} checker;

static seq_state *seq_of(checker *c, uint32_t seq) {
  for (size_t i = 0; i < c->nseqs; i++)
    if (c->seqs[i].seq == seq)
      return &c->seqs[i];
  ASSERT(c->nseqs < 64);
  c->seqs[c->nseqs].seq = seq;
  c->seqs[c->nseqs].gen = 0;
  return &c->seqs[c->nseqs++];
}

static iid_def *find_def(checker *c, uint32_t seq, uint32_t field, uint64_t iid,
                         uint32_t gen) {
  for (size_t i = c->n; i > 0; i--) {
    iid_def *d = &c->defs[i - 1];
    if (d->seq == seq && d->field == field && d->iid == iid &&
        (gen == 0 || d->gen == gen))
      return d;
  }
  return NULL;
}

static void add_defs(checker *c, const wt_packet *p, uint32_t gen) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, p->interned, p->interned_size, 0);
  while (gp__pb_next(&r, &f) == 1) {
    uint64_t iid = 0;
    if (!wt_u64(f.data, f.size, 1, &iid) || iid == 0)
      gp_test_fail(__FILE__, __LINE__,
                   "packet at %llu: interned field %u without an iid",
                   (unsigned long long)p->offset, f.id);
    /* The same iid, in any generation, must mean the same thing. */
    iid_def *old = find_def(c, p->seq, f.id, iid, 0);
    if (old && (old->size != f.size || memcmp(old->def, f.data, f.size)))
      gp_test_fail(__FILE__, __LINE__,
                   "packet at %llu: iid %llu of interned field %u redefined "
                   "with different content",
                   (unsigned long long)p->offset, (unsigned long long)iid,
                   f.id);
    if (c->n == c->cap) {
      c->cap = c->cap ? c->cap * 2 : 256;
      c->defs = realloc(c->defs, c->cap * sizeof(*c->defs));
      ASSERT_NOT_NULL(c->defs);
    }
    c->defs[c->n++] = (iid_def){p->seq, f.id, iid, gen, f.data, f.size};
  }
}

static void need(checker *c, const wt_packet *p, uint32_t gen, uint32_t field,
                 uint64_t iid) {
  if (!(p->flags & GP_PB_SEQ_NEEDS_INCREMENTAL_STATE))
    gp_test_fail(__FILE__, __LINE__,
                 "packet at %llu refers to interned field %u iid %llu without "
                 "SEQ_NEEDS_INCREMENTAL_STATE",
                 (unsigned long long)p->offset, field, (unsigned long long)iid);
  if (!find_def(c, p->seq, field, iid, gen))
    gp_test_fail(__FILE__, __LINE__,
                 "packet at %llu refers to interned field %u iid %llu, not "
                 "defined in its generation",
                 (unsigned long long)p->offset, field, (unsigned long long)iid);
}

static void check_refs(checker *c, const wt_packet *p, uint32_t gen) {
  const uint8_t *d = p->data;
  size_t n = p->data_size;
  uint64_t v;
  if (p->data_id == GP_PB_PACKET_GPU_RENDER_STAGE_EVENT) {
    if (wt_u64(d, n, GP_PB_RSE_HW_QUEUE_IID, &v))
      need(c, p, gen, GP_PB_INTERNED_GPU_SPECIFICATIONS, v);
    if (wt_u64(d, n, GP_PB_RSE_STAGE_IID, &v))
      need(c, p, gen, GP_PB_INTERNED_GPU_SPECIFICATIONS, v);
    if (wt_u64(d, n, GP_PB_RSE_CONTEXT, &v))
      need(c, p, gen, GP_PB_INTERNED_GRAPHICS_CONTEXTS, v);
    if (wt_u64(d, n, GP_PB_RSE_NAME_IID, &v))
      need(c, p, gen, GP_PB_INTERNED_EVENT_NAMES, v);
    if (wt_u64(d, n, GP_PB_RSE_KERNEL_IID, &v))
      need(c, p, gen, GP_PB_INTERNED_COMPUTE_KERNELS, v);
    const uint8_t *l, *a;
    size_t ln, an;
    if (wt_sub(d, n, GP_PB_RSE_LAUNCH, 0, &l, &ln))
      for (size_t k = 0; wt_sub(l, ln, GP_PB_LAUNCH_ARGS, k, &a, &an); k++)
        if (wt_u64(a, an, GP_PB_ARG_NAME_IID, &v))
          need(c, p, gen, GP_PB_INTERNED_COMPUTE_ARG_NAMES, v);
  } else if (p->data_id == GP_PB_PACKET_TRACK_EVENT) {
    if (wt_u64(d, n, GP_PB_TE_NAME_IID, &v))
      need(c, p, gen, GP_PB_INTERNED_EVENT_NAMES, v);
    if (wt_u64(d, n, GP_PB_TE_CATEGORY_IIDS, &v))
      need(c, p, gen, GP_PB_INTERNED_EVENT_CATEGORIES, v);
    const uint8_t *a;
    size_t an;
    for (size_t k = 0; wt_sub(d, n, GP_PB_TE_DEBUG_ANNOTATIONS, k, &a, &an);
         k++)
      if (wt_u64(a, an, GP_PB_DA_NAME_IID, &v))
        need(c, p, gen, GP_PB_INTERNED_DEBUG_ANNOTATION_NAMES, v);
  } else if (p->data_id == GP_PB_PACKET_GPU_COUNTER_EVENT) {
    if (wt_u64(d, n, GP_PB_GCE_COUNTER_DESCRIPTOR_IID, &v))
      need(c, p, gen, GP_PB_INTERNED_GPU_COUNTER_DESCRIPTORS, v);
  }
}

/* See writer_util.h. */
void wt_check_sequences(const wt_trace *t) {
  checker c;
  memset(&c, 0, sizeof(c));
  uint32_t next_gen = 1;
  for (size_t i = 0; i < t->n; i++) {
    const wt_packet *p = &t->p[i];
    if (p->seq == 0)
      gp_test_fail(__FILE__, __LINE__, "packet at %llu has no sequence id",
                   (unsigned long long)p->offset);
    seq_state *s = seq_of(&c, p->seq);
    if (p->flags & GP_PB_SEQ_INCREMENTAL_STATE_CLEARED)
      s->gen = next_gen++;
    else if (s->gen == 0)
      gp_test_fail(__FILE__, __LINE__,
                   "packet at %llu: first packet of sequence %u does not "
                   "clear the incremental state",
                   (unsigned long long)p->offset, p->seq);
    else if (p->dropped)
      gp_test_fail(__FILE__, __LINE__,
                   "packet at %llu says packets were lost but does not clear "
                   "the incremental state",
                   (unsigned long long)p->offset);
    if (p->interned)
      add_defs(&c, p, s->gen);
    check_refs(&c, p, s->gen);
  }
  free(c.defs);
}

/* See writer_util.h. */
int wt_system(const char *cmd) {
  int st = system(cmd);
  if (st == -1)
    return -1;
  if (WIFEXITED(st))
    return WEXITSTATUS(st);
  return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* See writer_util.h. */
int wt_entries_with(const char *dir, const char *part) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)))
    n += strstr(e->d_name, part) != NULL;
  if (d)
    closedir(d);
  return n;
}

/* See writer_util.h. */
const char *wt_build_path(const char *rel) {
  static char buf[1024];
  const char *b = getenv("GPUPERF_BUILD");
  if (!b || !*b)
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  snprintf(buf, sizeof(buf), "%s/%s", b, rel);
  return buf;
}

/* See writer_util.h. */
const char *wt_built(const char *rel) {
  static char buf[4][1024];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof(buf[0]), "%s", wt_build_path(rel));
  if (access(b, R_OK) != 0)
    SKIP("%s is not built", b);
  return b;
}

int wt_mem_sink(void *user, const uint8_t *data, size_t len) {
  wt_membuf *m = user;
  if (m->n + len > m->cap) {
    m->cap = (m->n + len) * 2;
    m->p = realloc(m->p, m->cap);
    ASSERT_NOT_NULL(m->p);
  }
  memcpy(m->p + m->n, data, len);
  m->n += len;
  return 0;
}

static gp__tw *mem_writer(wt_membuf *m, uint32_t mode, bool code) {
  gp__tw_options o;
  memset(&o, 0, sizeof(o));
  o.code_objects = code;
  o.sequence_id = 7;
  o.descriptor_mode = mode;
  o.deterministic = true;
  o.render_stages = true;
  o.counters = true;
  o.fd = -1;
  o.sink = wt_mem_sink;
  o.sink_user = m;
  gp__tw *w;
  ASSERT_OK(gp__tw_create(&o, &w));
  return w;
}

gp__tw *wt_mem_writer(wt_membuf *m, uint32_t mode) {
  return mem_writer(m, mode, false);
}

gp__tw *wt_mem_writer_code(wt_membuf *m) {
  return mem_writer(m, 0, true);
}

void wt_put_kernel(uint8_t *buf, size_t *off, uint64_t corr, uint64_t t) {
  gp_activity_kernel *k = (gp_activity_kernel *)(buf + *off);
  memset(k, 0, sizeof(*k));
  k->hdr.kind = GP_ACTIVITY_KIND_KERNEL;
  k->hdr.size = sizeof(*k);
  k->correlation_id = corr;
  k->start = t;
  k->end = t + 100;
  k->name_id = gp__string_intern("_Z3fooi");
  k->demangled_name_id = gp__string_intern("foo(int)");
  k->grid_x = k->grid_y = k->grid_z = 1;
  k->block_x = k->block_y = k->block_z = 1;
  k->context_id = 1;
  *off += sizeof(*k);
}

size_t wt_put_counter(uint8_t *buf, size_t off, uint32_t device, uint32_t id,
                      uint64_t ws, uint64_t ts, uint64_t corr, double v) {
  gp_activity_counter *c = (gp_activity_counter *)(buf + off);
  memset(c, 0, sizeof(*c));
  c->hdr.kind = GP_ACTIVITY_KIND_COUNTER;
  c->hdr.size = sizeof(*c);
  c->timestamp = ts;
  c->window_start = ws;
  c->correlation_id = corr;
  c->device_id = device;
  c->counter_id = id;
  c->value_type = GP_VALUE_DOUBLE;
  c->value.f64 = v;
  return off + sizeof(*c);
}

/* See writer_util.h. */
char *wt_tp_rows(const char *path, const char *sql) {
  gp_tp *tp = NULL;
  gp_tp_error e;
  if (gp_tp_open(path, NULL, &tp, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", path, e.message);
  gp_tp_rows *r = NULL;
  if (gp_tp_query(tp, sql, &r, &e) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s: %s", sql, e.message);
  size_t cap = 1 << 16, n = 0;
  char *s = malloc(cap);
  s[0] = '\0';
  while (gp_tp_rows_next(r, &e) == 1) {
    for (int c = 0; c < gp_tp_rows_columns(r); c++) {
      const char *t = gp_tp_rows_text(r, c);
      size_t k = strlen(t ? t : "") + 2;
      if (n + k + 1 > cap)
        s = realloc(s, cap = 2 * (cap + k));
      n += (size_t)snprintf(s + n, cap - n, "%s%c", t ? t : "",
                            c + 1 == gp_tp_rows_columns(r) ? '\n' : '|');
    }
  }
  gp_tp_rows_destroy(r);
  gp_tp_close(tp);
  return s;
}

/* See writer_util.h. */
int64_t wt_tp_one(const char *path, const char *sql) {
  char *s = wt_tp_rows(path, sql);
  int64_t v = strtoll(s, NULL, 10);
  free(s);
  return v;
}

/* See writer_util.h. */
gp_session *wt_recording(const char *config, const char *path) {
  gp_trace_config *cfg;
  char err[256];
  ASSERT_OK(
      gp_trace_config_parse(config, strlen(config), &cfg, err, sizeof(err)));
  gp_session_options o;
  memset(&o, 0, sizeof(o));
  o.flags = GP_SESSION_DETERMINISTIC;
  gp_session *s;
  ASSERT_OK(gp_session_start(cfg, path, &o, &s));
  gp_trace_config_destroy(cfg);
  return s;
}
