/*
 * writer_source.c - where the source-level records show in a trace
 * (gpuperf_options { source_level: true }; off by default: a kernel
 * launch can bring a dozen of them).
 *
 * Perfetto has no message for per-instruction counts, so each GLOBAL_ACCESS,
 * SHARED_ACCESS, BRANCH and INSTRUCTION_EXECUTION record becomes an instant
 * on one track of the process, "GPU source lines" (a child of the process
 * track), at the end of the kernel it counts (the writer remembers the
 * latest kernels by correlation id; a kernel it did not see puts it at the
 * latest time known). The record's fields are the instant's debug
 * annotations, which the trace processor imports as the slice's args
 * ("debug.<name>"):
 *
 *   instant                     annotations
 *   "GPU instruction"           class, executed, threads_executed,
 *                                 not_pred_off_threads_executed,
 *                                 value_invalid (when set)
 *   "GPU global access"         access (load/store), size_bytes, cached,
 *                                 executed, threads_executed,
 *                                 l2_transactions, theoretical_l2_...
 *   "GPU shared access"         access, size_bytes, executed,
 *                                 threads_executed, shared_transactions,
 *                                 theoretical_shared_transactions
 *   "GPU branch"                executed, threads_executed, diverged
 *   every one of them           kernel, correlation_id, function_id,
 *                                 pc_offset, source_locator_id, and the
 *                                 locator's file and line
 *
 * SOURCE_LOCATOR records are not events of their own: the writer keeps
 * them and writes each one's file and line on the records that point to
 * it (one that comes later, or never, leaves source_locator_id alone).
 */
#include <stdlib.h>

#include "writerInt.h"

#define TW_SRC_KERNELS 256 /* kernels remembered, by correlation id */

struct tw_source {
  tw_map locators; /* k1: locator id; aux: file string id, iid: line */
  bool described;  /* the track's descriptor is written */
  struct tw_src_kernel {
    uint64_t corr, end; /* corr 0: empty */
    uint32_t name_id;
  } kernels[TW_SRC_KERNELS];
};

/* The writer's source state, made on first use; NULL when memory runs
 * out. */
static struct tw_source *state(gp__tw *w) {
  if (!w->source)
    w->source = calloc(1, sizeof(*w->source));
  return w->source;
}

/* See writerInt.h. */
void gp__tw_source_fini(gp__tw *w) {
  if (!w->source)
    return;
  gp__tw_map_fini(&w->source->locators);
  free(w->source);
  w->source = NULL;
}

/* See writerInt.h. */
void gp__tw_source_kernel(gp__tw *w, const gp_activity_kernel *k) {
  struct tw_source *s = state(w);
  if (!s || !k->correlation_id)
    return;
  struct tw_src_kernel *e = &s->kernels[k->correlation_id % TW_SRC_KERNELS];
  e->corr = k->correlation_id;
  e->end = k->end;
  e->name_id = k->demangled_name_id ? k->demangled_name_id : k->name_id;
}

/* The annotations' names, interned (debug_annotation_names): an instant
 * carries a dozen of them, which as strings took two thirds of its
 * bytes. */
enum {
  A_KERNEL,
  A_CORRELATION_ID,
  A_FUNCTION_ID,
  A_PC_OFFSET,
  A_SOURCE_LOCATOR_ID,
  A_FILE,
  A_LINE,
  A_CLASS,
  A_EXECUTED,
  A_THREADS_EXECUTED,
  A_NOT_PRED_OFF_THREADS_EXECUTED,
  A_VALUE_INVALID,
  A_ACCESS,
  A_SIZE_BYTES,
  A_CACHED,
  A_L2_TRANSACTIONS,
  A_THEORETICAL_L2_TRANSACTIONS,
  A_SHARED_TRANSACTIONS,
  A_THEORETICAL_SHARED_TRANSACTIONS,
  A_DIVERGED,
  A_COUNT
};

static const char *const arg_names[A_COUNT] = {
    [A_KERNEL] = "kernel",
    [A_CORRELATION_ID] = "correlation_id",
    [A_FUNCTION_ID] = "function_id",
    [A_PC_OFFSET] = "pc_offset",
    [A_SOURCE_LOCATOR_ID] = "source_locator_id",
    [A_FILE] = "file",
    [A_LINE] = "line",
    [A_CLASS] = "class",
    [A_EXECUTED] = "executed",
    [A_THREADS_EXECUTED] = "threads_executed",
    [A_NOT_PRED_OFF_THREADS_EXECUTED] = "not_pred_off_threads_executed",
    [A_VALUE_INVALID] = "value_invalid",
    [A_ACCESS] = "access",
    [A_SIZE_BYTES] = "size_bytes",
    [A_CACHED] = "cached",
    [A_L2_TRANSACTIONS] = "l2_transactions",
    [A_THEORETICAL_L2_TRANSACTIONS] = "theoretical_l2_transactions",
    [A_SHARED_TRANSACTIONS] = "shared_transactions",
    [A_THEORETICAL_SHARED_TRANSACTIONS] = "theoretical_shared_transactions",
    [A_DIVERGED] = "diverged"};
static uint32_t arg_ids[A_COUNT]; /* their string ids, once known */

/* The instants' names. */
enum { E_INSTRUCTION, E_GLOBAL, E_SHARED, E_BRANCH, E_COUNT };
static const char *const event_names[E_COUNT] = {
    "GPU instruction", "GPU global access", "GPU shared access", "GPU branch"};
static uint32_t event_ids[E_COUNT];

/* At most this many annotations on one instant: 7 every one has, 7 of a
 * global access; with its name, 15 interned entries a packet may bring
 * (TW_MAX_PENDING). */
#define SRC_MAX_ARGS 14

/* An instant being put together: its annotations, in order. */
typedef struct src_event {
  uint32_t n;
  struct src_arg {
    uint32_t key;    /* A_* */
    const char *str; /* a string value, or NULL */
    uint64_t u;      /* else an unsigned one */
  } a[SRC_MAX_ARGS];
} src_event;

static void put_uint(src_event *e, uint32_t key, uint64_t v) {
  e->a[e->n++] = (struct src_arg){key, NULL, v};
}

static void put_str(src_event *e, uint32_t key, const char *v) {
  e->a[e->n++] = (struct src_arg){key, v, 0};
}

/* Starts e with the annotations every record has; returns the time of
 * its instant (its kernel's end, 0 for the latest time known). */
static uint64_t common(gp__tw *w, struct tw_source *s, src_event *e,
                       uint64_t corr, uint64_t pc, uint32_t locator,
                       uint32_t function) {
  const struct tw_src_kernel *k = &s->kernels[corr % TW_SRC_KERNELS];
  bool known = corr && k->corr == corr;
  e->n = 0;
  if (known && k->name_id)
    put_str(e, A_KERNEL, gp__tw_string(w, k->name_id));
  put_uint(e, A_CORRELATION_ID, corr);
  put_uint(e, A_FUNCTION_ID, function);
  put_uint(e, A_PC_OFFSET, pc);
  put_uint(e, A_SOURCE_LOCATOR_ID, locator);
  tw_entry *l = locator ? gp__tw_map_get(&s->locators, locator, 0, NULL) : NULL;
  if (l && l->gen) {
    put_str(e, A_FILE, gp__tw_string(w, (uint32_t)l->aux));
    put_uint(e, A_LINE, l->iid);
  }
  return known ? k->end : 0;
}

/* Writes e as the instant `event` (E_*) at ts on the process's source
 * track. */
static void write(gp__tw *w, struct tw_source *s, uint32_t event, uint64_t ts,
                  const src_event *e) {
  uint64_t track = gp__tw_track_uuid(w, TW_TRACK_SOURCE, 0);
  if (!s->described) { /* before the interning: a packet of its own */
    s->described = true;
    gp__tw_track_descriptor(w, track, gp__tw_process_track(w),
                            "GPU source lines");
  }
  uint64_t name_iid = gp__tw_event_name(
      w, gp__tw_intern_cached(w, &event_ids[event], event_names[event]));
  uint64_t iids[SRC_MAX_ARGS];
  for (uint32_t i = 0; i < e->n; i++)
    iids[i] = gp__tw_intern_string(
        w, &w->debug_names, TW_PEND_DEBUG_NAME,
        gp__tw_intern_cached(w, &arg_ids[e->a[i].key], arg_names[e->a[i].key]));
  gp__pb_writer *pb = &w->pb;
  /* Large: a kernel's or a file's name has no bound. */
  gp__tw_packet_begin(w, ts ? ts : gp__tw_now_ts(w),
                      GP_PB_SEQ_NEEDS_INCREMENTAL_STATE | TW_PACKET_LARGE);
  gp__pb_begin(pb, GP_PB_PACKET_TRACK_EVENT);
  gp__pb_uint(pb, GP_PB_TE_TYPE, GP_PB_TE_TYPE_INSTANT);
  gp__pb_uint(pb, GP_PB_TE_NAME_IID, name_iid);
  gp__pb_uint(pb, GP_PB_TE_TRACK_UUID, track);
  for (uint32_t i = 0; i < e->n; i++) {
    gp__pb_begin(pb, GP_PB_TE_DEBUG_ANNOTATIONS);
    gp__pb_uint(pb, GP_PB_DA_NAME_IID, iids[i]);
    if (e->a[i].str)
      gp__pb_string(pb, GP_PB_DA_STRING_VALUE, e->a[i].str);
    else
      gp__pb_uint(pb, GP_PB_DA_UINT_VALUE, e->a[i].u);
    gp__pb_end(pb);
  }
  gp__pb_end(pb);
  gp__tw_packet_end(w);
  w->st.track_events++;
}

static void locator(struct tw_source *s, const gp_activity_source_locator *r) {
  bool created;
  tw_entry *e = gp__tw_map_get(&s->locators, r->id, 0, &created);
  if (!e)
    return;
  e->aux = r->file_id;
  e->iid = r->line;
  e->gen = 1; /* known */
}

static void instruction(gp__tw *w, struct tw_source *s,
                        const gp_activity_instruction_execution *r) {
  src_event e;
  uint64_t ts = common(w, s, &e, r->correlation_id, r->pc_offset,
                       r->source_locator_id, r->function_id);
  put_str(&e, A_CLASS,
          gp_instruction_class_name(GP_ACTIVITY_INSTRUCTION_CLASS(r->flags)));
  put_uint(&e, A_EXECUTED, r->executed);
  put_uint(&e, A_THREADS_EXECUTED, r->threads_executed);
  put_uint(&e, A_NOT_PRED_OFF_THREADS_EXECUTED,
           r->not_pred_off_threads_executed);
  if (r->flags & GP_ACTIVITY_FLAG_INSTRUCTION_VALUE_INVALID)
    put_uint(&e, A_VALUE_INVALID, 1);
  write(w, s, E_INSTRUCTION, ts, &e);
}

static void global_access(gp__tw *w, struct tw_source *s,
                          const gp_activity_global_access *r) {
  src_event e;
  uint64_t ts = common(w, s, &e, r->correlation_id, r->pc_offset,
                       r->source_locator_id, r->function_id);
  bool load = (r->flags & GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_LOAD) != 0;
  put_str(&e, A_ACCESS, load ? "load" : "store");
  put_uint(&e, A_SIZE_BYTES,
           r->flags & GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_SIZE_MASK);
  if (load)
    put_uint(&e, A_CACHED,
             (r->flags & GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_CACHED) != 0);
  put_uint(&e, A_EXECUTED, r->executed);
  put_uint(&e, A_THREADS_EXECUTED, r->threads_executed);
  put_uint(&e, A_L2_TRANSACTIONS, r->l2_transactions);
  put_uint(&e, A_THEORETICAL_L2_TRANSACTIONS, r->theoretical_l2_transactions);
  write(w, s, E_GLOBAL, ts, &e);
}

static void shared_access(gp__tw *w, struct tw_source *s,
                          const gp_activity_shared_access *r) {
  src_event e;
  uint64_t ts = common(w, s, &e, r->correlation_id, r->pc_offset,
                       r->source_locator_id, r->function_id);
  bool load = (r->flags & GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_LOAD) != 0;
  put_str(&e, A_ACCESS, load ? "load" : "store");
  put_uint(&e, A_SIZE_BYTES,
           r->flags & GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_SIZE_MASK);
  put_uint(&e, A_EXECUTED, r->executed);
  put_uint(&e, A_THREADS_EXECUTED, r->threads_executed);
  put_uint(&e, A_SHARED_TRANSACTIONS, r->shared_transactions);
  put_uint(&e, A_THEORETICAL_SHARED_TRANSACTIONS,
           r->theoretical_shared_transactions);
  write(w, s, E_SHARED, ts, &e);
}

static void branch(gp__tw *w, struct tw_source *s,
                   const gp_activity_branch *r) {
  src_event e;
  uint64_t ts = common(w, s, &e, r->correlation_id, r->pc_offset,
                       r->source_locator_id, r->function_id);
  put_uint(&e, A_EXECUTED, r->executed);
  put_uint(&e, A_THREADS_EXECUTED, r->threads_executed);
  put_uint(&e, A_DIVERGED, r->diverged);
  write(w, s, E_BRANCH, ts, &e);
}

/* See writerInt.h. */
void gp__tw_source_record(gp__tw *w, const gp_activity *r) {
  struct tw_source *s = state(w);
  if (!s)
    return;
  switch (r->kind) {
  case GP_ACTIVITY_KIND_SOURCE_LOCATOR:
    if (r->size >= sizeof(gp_activity_source_locator))
      locator(s, (const gp_activity_source_locator *)r);
    break;
  case GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION:
    if (r->size >= sizeof(gp_activity_instruction_execution))
      instruction(w, s, (const gp_activity_instruction_execution *)r);
    break;
  case GP_ACTIVITY_KIND_GLOBAL_ACCESS:
    if (r->size >= sizeof(gp_activity_global_access))
      global_access(w, s, (const gp_activity_global_access *)r);
    break;
  case GP_ACTIVITY_KIND_SHARED_ACCESS:
    if (r->size >= sizeof(gp_activity_shared_access))
      shared_access(w, s, (const gp_activity_shared_access *)r);
    break;
  case GP_ACTIVITY_KIND_BRANCH:
    if (r->size >= sizeof(gp_activity_branch))
      branch(w, s, (const gp_activity_branch *)r);
    break;
  default:
    break;
  }
}
