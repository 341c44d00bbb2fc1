/*
 * intelpq.c - the driver's counters through GL_INTEL_performance_query.
 *
 * The extension (Mesa implements it for Intel GPUs) has the model of
 * GL_AMD_performance_monitor (amdpm.c) with one difference: a query type
 * is a fixed set of counters measured together, and an instance of it
 * measures all of them into one result of the type's size, each counter
 * at its own byte offset, of its own data type. So a query type stands
 * for an AMD group, and there is no selection within it.
 *
 * Where a context has the extension and not GL_AMD_performance_monitor
 * (which gp__gl_pm_init prefers: a monitor counts just the counters asked
 * for), its query types and their counters are read once, when the
 * context is first made current, and join the device's catalog
 * (stats.c): each counter under its own name and description, in a
 * custom group named after its query type (a name an earlier type has
 * already taken as "TYPE/NAME"). While a session selects some
 * of them, one instance of each query type they belong to (at most
 * MAX_TYPES types) is begun at each frame's first work, nested in
 * selection order, and ended at its swap in reverse order. Results are
 * asked for with GL_PERFQUERY_DONOT_FLUSH_INTEL at later frames, never
 * waited for (the swap has flushed the frame's commands), and a frame's
 * counters are written once every one of its instances has answered.
 *
 * The specification lets a driver refuse to nest queries of different
 * types (INVALID_OPERATION at Begin). GL reports that only through
 * glGetError, which is the program's, so such a frame's results simply
 * never come: frames.c gives them up after a while and counts them as
 * lost. Counters of one query type are always measured together.
 *
 * No driver on the machines this was written on has the extension; the
 * tests run it against a test double over llvmpipe (tests/gl/).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glInt.h"

#define PERFQUERY_DONOT_FLUSH_INTEL 0x83F9
#define COUNTER_DATA_UINT32_INTEL 0x94F8
#define COUNTER_DATA_UINT64_INTEL 0x94F9
#define COUNTER_DATA_FLOAT_INTEL 0x94FA
#define COUNTER_DATA_DOUBLE_INTEL 0x94FB
#define COUNTER_DATA_BOOL32_INTEL 0x94FC

#define MAX_QUERIES 256       /* query types read */
#define MAX_COUNTERS 4096     /* counters read, over all types */
#define MAX_TYPES 8           /* query types measured in one frame */
#define MAX_RESULT (1u << 20) /* bytes of one query's result */
#define SETS (GP_GL_FRAMES + 2)

typedef struct intel_counter {
  uint32_t qi;           /* index of its query type */
  uint32_t offset, size; /* in the query's result */
  GLuint dtype;          /* COUNTER_DATA_*_INTEL */
  const char *name, *desc;
} intel_counter;

typedef struct intel_query {
  GLuint id;
  uint32_t size; /* of its result */
  const char *name;
} intel_query;

/* The instances that measure one frame: h[k] of query type qi[k] (0:
 * its creation failed), kept for a later frame that needs the same. */
typedef struct intel_set {
  bool busy;
  uint32_t n;
  uint32_t qi[MAX_TYPES];
  GLuint h[MAX_TYPES];
} intel_set;

typedef struct gp__gl_intelpq {
  uint32_t n, nq;
  intel_counter *ctr;
  intel_query *q;
  uint32_t *sel; /* counter indices selected */
  uint32_t nsel, cap_sel;
  uint32_t qsel[MAX_TYPES]; /* the query types they need */
  uint32_t nqsel;
  intel_set sets[SETS]; /* a frame's monitor is its set's index + 1 */
  uint8_t *buf;         /* one query's result */
  uint32_t cap_buf;
} gp__gl_intelpq;

static const gp__gl_pm_ops intelpq_ops;

/* The size a counter of data type t has, 0 if t is unknown. */
static uint32_t size_of(GLuint t) {
  switch (t) {
  case COUNTER_DATA_UINT32_INTEL:
  case COUNTER_DATA_FLOAT_INTEL:
  case COUNTER_DATA_BOOL32_INTEL:
    return 4;
  case COUNTER_DATA_UINT64_INTEL:
  case COUNTER_DATA_DOUBLE_INTEL:
    return 8;
  default:
    return 0;
  }
}

/* Reads query type id's counters into a->ctr; false when out of memory. */
static bool read_counters(gp__gl_ctx *c, gp__gl_intelpq *a, uint32_t qi,
                          GLuint ncounters) {
  const intel_query *q = &a->q[qi];
  for (GLuint k = 1; k <= ncounters && a->n < MAX_COUNTERS; k++) {
    char name[256] = "", desc[1024] = "";
    GLuint offset = 0, size = 0, type = 0, dtype = 0;
    GLuint64 raw_max = 0;
    c->fn.GetPerfCounterInfoINTEL(q->id, k, sizeof(name), name, sizeof(desc),
                                  desc, &offset, &size, &type, &dtype,
                                  &raw_max);
    name[sizeof(name) - 1] = desc[sizeof(desc) - 1] = '\0';
    /* One the result cannot hold, or of a type we cannot read, is left
     * out rather than read wrong. */
    if (!name[0] || size != size_of(dtype) || offset > q->size ||
        size > q->size - offset)
      continue;
    intel_counter *x = &a->ctr[a->n];
    x->qi = qi;
    x->offset = offset;
    x->size = size;
    x->dtype = dtype;
    /* Query types often share counters (a GPU time in every set): a
     * name an earlier type has taken gets its type's name before it, so
     * that selecting it by name measures one set, not all of them. */
    bool taken = false;
    for (uint32_t j = 0; j < a->n && !taken; j++)
      taken = strcmp(a->ctr[j].name, name) == 0;
    if (taken) {
      char *qn = malloc(strlen(q->name) + strlen(name) + 2);
      if (qn)
        sprintf(qn, "%s/%s", q->name, name);
      x->name = qn;
    } else {
      x->name = strdup(name);
    }
    x->desc = strdup(desc);
    if (!x->name || !x->desc)
      return false;
    a->n++;
  }
  return true;
}

/* See glInt.h. */
void gp__gl_intelpq_init(gp__gl_ctx *c) {
  gp__gl_fns *f = &c->fn;
#define INTEL(name)                                                            \
  f->name = (__typeof__(f->name))gp__gl_proc("gl" #name, c->egl)
  INTEL(GetFirstPerfQueryIdINTEL);
  INTEL(GetNextPerfQueryIdINTEL);
  INTEL(GetPerfQueryInfoINTEL);
  INTEL(GetPerfCounterInfoINTEL);
  INTEL(CreatePerfQueryINTEL);
  INTEL(DeletePerfQueryINTEL);
  INTEL(BeginPerfQueryINTEL);
  INTEL(EndPerfQueryINTEL);
  INTEL(GetPerfQueryDataINTEL);
#undef INTEL
  if (!f->GetFirstPerfQueryIdINTEL || !f->GetNextPerfQueryIdINTEL ||
      !f->GetPerfQueryInfoINTEL || !f->GetPerfCounterInfoINTEL ||
      !f->CreatePerfQueryINTEL || !f->DeletePerfQueryINTEL ||
      !f->BeginPerfQueryINTEL || !f->EndPerfQueryINTEL ||
      !f->GetPerfQueryDataINTEL)
    return;
  gp__gl_intelpq *a = calloc(1, sizeof(*a));
  intel_query *q = calloc(MAX_QUERIES, sizeof(*q));
  intel_counter *ctr = calloc(MAX_COUNTERS, sizeof(*ctr));
  if (!a || !q || !ctr)
    goto fail;
  a->q = q;
  a->ctr = ctr;
  GLuint id = 0;
  f->GetFirstPerfQueryIdINTEL(&id);
  /* MAX_QUERIES also ends a list that a driver makes loop. */
  while (id && a->nq < MAX_QUERIES) {
    char name[256] = "";
    GLuint size = 0, ncounters = 0, ninstances = 0, caps = 0;
    f->GetPerfQueryInfoINTEL(id, sizeof(name), name, &size, &ncounters,
                             &ninstances, &caps);
    name[sizeof(name) - 1] = '\0';
    if (size > 0 && size <= MAX_RESULT && ncounters > 0) {
      intel_query *x = &q[a->nq];
      x->id = id;
      x->size = size;
      x->name = strdup(name[0] ? name : "?");
      if (!x->name || !read_counters(c, a, a->nq, ncounters))
        goto fail;
      a->nq++;
    }
    GLuint next = 0;
    f->GetNextPerfQueryIdINTEL(id, &next);
    id = next;
  }
  if (!a->n)
    goto fail;
  c->intelpq = a;
  c->pm = &intelpq_ops;
  return;
fail:
  /* Strings already made stay: a failure here is out of memory. */
  free(a);
  free(q);
  free(ctr);
}

/* gp__gl_pm_ops.count. */
static uint32_t intelpq_count(const gp__gl_ctx *c) {
  return c->intelpq ? c->intelpq->n : 0;
}

/* gp__gl_pm_ops.defs. */
static void intelpq_defs(const gp__gl_ctx *c, gp__counter_def *defs,
                         uint32_t id_base, uint32_t group_base,
                         gp_counter_group_info *groups, uint32_t *ngroups) {
  const gp__gl_intelpq *a = c->intelpq;
  *ngroups = 0;
  if (!a)
    return;
  for (uint32_t g = 0; g < a->nq; g++)
    groups[(*ngroups)++] = (gp_counter_group_info){
        .id = group_base + g,
        .name = a->q[g].name,
        .description = "a query type of GL_INTEL_performance_query"};
  for (uint32_t k = 0; k < a->n; k++) {
    const intel_counter *x = &a->ctr[k];
    gp_counter_info *i = &defs[k].info;
    i->id = id_base + k;
    i->name = x->name;
    i->description =
        x->desc[0] ? x->desc
                   : "a counter of the driver, per frame of this program, "
                     "through GL_INTEL_performance_query";
    i->category = a->q[x->qi].name;
    i->type = x->dtype == COUNTER_DATA_FLOAT_INTEL ||
                      x->dtype == COUNTER_DATA_DOUBLE_INTEL
                  ? GP_COUNTER_TYPE_DOUBLE
                  : GP_COUNTER_TYPE_INT64;
    i->num_groups = 1;
    i->groups[0] = group_base + x->qi;
    /* The extension's raw maximum is per second, not per frame. */
    i->peak_value = 0;
    defs[k].combine = GP__SUM;
    defs[k].sampled = GP__SAMPLED_INSTRUMENTED;
  }
}

/* gp__gl_pm_ops.select. */
static void intelpq_select(gp__gl_ctx *c, const uint32_t *idx, uint32_t n) {
  gp__gl_intelpq *a = c->intelpq;
  if (!a)
    return;
  bool same = n == a->nsel;
  for (uint32_t k = 0; k < n && same; k++)
    same = a->sel[k] == idx[k];
  if (same)
    return;
  if (n > a->cap_sel) {
    uint32_t *s = realloc(a->sel, n * sizeof(*s));
    if (!s)
      return;
    a->sel = s;
    a->cap_sel = n;
  }
  uint32_t kept = 0, nq = 0;
  bool over = false;
  for (uint32_t k = 0; k < n; k++) {
    if (idx[k] >= a->n)
      continue;
    uint32_t qi = a->ctr[idx[k]].qi, j = 0;
    while (j < nq && a->qsel[j] != qi)
      j++;
    if (j == nq && nq == MAX_TYPES) {
      over = true;
      continue;
    }
    if (j == nq)
      a->qsel[nq++] = qi;
    a->sel[kept++] = idx[k];
  }
  a->nsel = kept;
  a->nqsel = nq;
  if (over) {
    static atomic_bool warned;
    gp__gl_warn_once(&warned,
                     "gpuperf: counters of more than 8 GL_INTEL_performance_"
                     "query query types were asked for: those of the types "
                     "past the 8th are not recorded");
  }
}

/* gp__gl_pm_ops.begin. */
static void intelpq_begin(gp__gl_ctx *c, gp__gl_frame *f) {
  gp__gl_intelpq *a = c->intelpq;
  if (!a || !a->nqsel)
    return;
  uint32_t s = 0;
  while (s < SETS && a->sets[s].busy)
    s++;
  if (s == SETS)
    return; /* not expected: a set per frame in flight */
  intel_set *x = &a->sets[s];
  bool same = x->n == a->nqsel;
  for (uint32_t k = 0; k < x->n && same; k++)
    same = x->qi[k] == a->qsel[k];
  if (!same) {
    /* Made for another selection: its instances are of other types. */
    for (uint32_t k = 0; k < x->n; k++)
      if (x->h[k])
        c->fn.DeletePerfQueryINTEL(x->h[k]);
    for (uint32_t k = 0; k < a->nqsel; k++) {
      x->h[k] = 0;
      x->qi[k] = a->qsel[k];
      c->fn.CreatePerfQueryINTEL(a->q[x->qi[k]].id, &x->h[k]);
    }
    x->n = a->nqsel;
  }
  x->busy = true;
  for (uint32_t k = 0; k < x->n; k++)
    if (x->h[k])
      c->fn.BeginPerfQueryINTEL(x->h[k]);
  f->monitor = s + 1;
}

static intel_set *set_of(const gp__gl_ctx *c, const gp__gl_frame *f) {
  gp__gl_intelpq *a = c->intelpq;
  return a && f->monitor >= 1 && f->monitor <= SETS ? &a->sets[f->monitor - 1]
                                                    : NULL;
}

/* gp__gl_pm_ops.end. */
static void intelpq_end(gp__gl_ctx *c, gp__gl_frame *f) {
  intel_set *x = set_of(c, f);
  for (uint32_t k = x ? x->n : 0; k-- > 0;)
    if (x->h[k])
      c->fn.EndPerfQueryINTEL(x->h[k]);
}

/* Asks for instance k of x's result into a->buf without waiting or
 * flushing; the bytes written (0: not there yet). */
static uint32_t fetch(gp__gl_ctx *c, const intel_set *x, uint32_t k) {
  gp__gl_intelpq *a = c->intelpq;
  uint32_t size = a->q[x->qi[k]].size;
  if (size > a->cap_buf) {
    uint8_t *b = realloc(a->buf, size);
    if (!b)
      return 0;
    a->buf = b;
    a->cap_buf = size;
  }
  GLuint written = 0;
  c->fn.GetPerfQueryDataINTEL(x->h[k], PERFQUERY_DONOT_FLUSH_INTEL,
                              (GLsizei)size, a->buf, &written);
  return written <= size ? written : size;
}

/* gp__gl_pm_ops.ready. The results once there stay there: the
 * specification has every later call write them again. */
static bool intelpq_ready(gp__gl_ctx *c, const gp__gl_frame *f) {
  const intel_set *x = set_of(c, f);
  if (!x)
    return true;
  for (uint32_t k = 0; k < x->n; k++)
    if (x->h[k] && !fetch(c, x, k))
      return false;
  return true;
}

/* gp__gl_pm_ops.drop. The instances are kept for later frames. */
static void intelpq_drop(gp__gl_ctx *c, gp__gl_frame *f) {
  intel_set *x = set_of(c, f);
  if (x)
    x->busy = false;
  f->monitor = 0;
}

/* Counter x's value in a result of written bytes; false if not in it. */
static bool value_of(const intel_counter *x, const uint8_t *buf,
                     uint32_t written, double *v) {
  if (x->offset > written || x->size > written - x->offset)
    return false;
  const uint8_t *p = buf + x->offset;
  switch (x->dtype) {
  case COUNTER_DATA_UINT64_INTEL: {
    uint64_t u;
    memcpy(&u, p, sizeof(u));
    *v = (double)u;
    break;
  }
  case COUNTER_DATA_DOUBLE_INTEL: {
    double d;
    memcpy(&d, p, sizeof(d));
    *v = d;
    break;
  }
  case COUNTER_DATA_FLOAT_INTEL: {
    float fl;
    memcpy(&fl, p, sizeof(fl));
    *v = fl;
    break;
  }
  default: { /* UINT32, BOOL32 */
    uint32_t u;
    memcpy(&u, p, sizeof(u));
    *v = u;
    break;
  }
  }
  return true;
}

/* gp__gl_pm_ops.read. */
static bool intelpq_read(gp__gl_ctx *c, gp__gl_frame *f, double *values,
                         uint32_t *idx, uint32_t *n) {
  gp__gl_intelpq *a = c->intelpq;
  intel_set *x = set_of(c, f);
  uint32_t cap = *n;
  *n = 0;
  if (!x)
    return false;
  if (!intelpq_ready(c, f)) { /* a forced read: never waits on it */
    intelpq_drop(c, f);
    gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_SOURCE,
                                    c->context_id, 1, 1);
    return false;
  }
  for (uint32_t k = 0; k < x->n; k++) {
    uint32_t written = x->h[k] ? fetch(c, x, k) : 0;
    for (uint32_t j = 0; j < a->nsel && written; j++) {
      const intel_counter *ct = &a->ctr[a->sel[j]];
      double v;
      if (ct->qi == x->qi[k] && *n < cap && value_of(ct, a->buf, written, &v)) {
        values[*n] = v;
        idx[(*n)++] = a->sel[j];
      }
    }
  }
  intelpq_drop(c, f);
  return true;
}

/* gp__gl_pm_ops.fini. */
static void intelpq_fini(gp__gl_ctx *c) {
  gp__gl_intelpq *a = c->intelpq;
  if (!a)
    return;
  for (uint32_t s = 0; s < SETS; s++) {
    for (uint32_t k = 0; k < a->sets[s].n; k++)
      if (a->sets[s].h[k])
        c->fn.DeletePerfQueryINTEL(a->sets[s].h[k]);
    a->sets[s] = (intel_set){0};
  }
  free(a->buf);
  free(a->sel);
  a->buf = NULL;
  a->sel = NULL;
  a->cap_buf = a->cap_sel = a->nsel = a->nqsel = 0;
}

static const gp__gl_pm_ops intelpq_ops = {
    .ext = "GL_INTEL_performance_query",
    .unit = "the driver's counters, one query per query type per frame",
    .count = intelpq_count,
    .defs = intelpq_defs,
    .select = intelpq_select,
    .begin = intelpq_begin,
    .end = intelpq_end,
    .ready = intelpq_ready,
    .read = intelpq_read,
    .drop = intelpq_drop,
    .fini = intelpq_fini};
