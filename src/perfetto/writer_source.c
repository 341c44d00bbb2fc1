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

/* The fields every source-level record has. */
typedef struct src_common {
  uint64_t corr, pc;
  uint32_t locator, function;
} src_common;

/* Opens the instant called event for a record with fields c, with the
 * annotations every one has. */
static void begin(gp__tw *w, struct tw_source *s, const char *event,
                  const src_common *c) {
  const struct tw_src_kernel *k = &s->kernels[c->corr % TW_SRC_KERNELS];
  bool known = c->corr && k->corr == c->corr;
  uint64_t track = gp__tw_track_uuid(w, TW_TRACK_SOURCE, 0);
  if (!s->described) {
    s->described = true;
    gp__tw_track_descriptor(w, track, gp__tw_process_track(w),
                            "GPU source lines");
  }
  gp__tw_event_begin(w, known ? k->end : 0, GP_PB_TE_TYPE_INSTANT, track, NULL,
                     event);
  gp__pb_writer *pb = &w->pb;
  if (known && k->name_id)
    gp__tw_annotate_string(pb, "kernel", gp__tw_string(w, k->name_id));
  gp__tw_annotate_uint(pb, "correlation_id", c->corr);
  gp__tw_annotate_uint(pb, "function_id", c->function);
  gp__tw_annotate_uint(pb, "pc_offset", c->pc);
  gp__tw_annotate_uint(pb, "source_locator_id", c->locator);
  tw_entry *l =
      c->locator ? gp__tw_map_get(&s->locators, c->locator, 0, NULL) : NULL;
  if (l && l->gen) {
    gp__tw_annotate_string(pb, "file", gp__tw_string(w, (uint32_t)l->aux));
    gp__tw_annotate_uint(pb, "line", l->iid);
  }
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
  src_common c = {r->correlation_id, r->pc_offset, r->source_locator_id,
                  r->function_id};
  begin(w, s, "GPU instruction", &c);
  gp__pb_writer *pb = &w->pb;
  gp__tw_annotate_string(
      pb, "class",
      gp_instruction_class_name(GP_ACTIVITY_INSTRUCTION_CLASS(r->flags)));
  gp__tw_annotate_uint(pb, "executed", r->executed);
  gp__tw_annotate_uint(pb, "threads_executed", r->threads_executed);
  gp__tw_annotate_uint(pb, "not_pred_off_threads_executed",
                       r->not_pred_off_threads_executed);
  if (r->flags & GP_ACTIVITY_FLAG_INSTRUCTION_VALUE_INVALID)
    gp__tw_annotate_uint(pb, "value_invalid", 1);
  gp__tw_event_end(w);
}

static void global_access(gp__tw *w, struct tw_source *s,
                          const gp_activity_global_access *r) {
  src_common c = {r->correlation_id, r->pc_offset, r->source_locator_id,
                  r->function_id};
  begin(w, s, "GPU global access", &c);
  gp__pb_writer *pb = &w->pb;
  bool load = (r->flags & GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_LOAD) != 0;
  gp__tw_annotate_string(pb, "access", load ? "load" : "store");
  gp__tw_annotate_uint(pb, "size_bytes",
                       r->flags &
                           GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_SIZE_MASK);
  if (load)
    gp__tw_annotate_uint(
        pb, "cached",
        (r->flags & GP_ACTIVITY_FLAG_GLOBAL_ACCESS_KIND_CACHED) != 0);
  gp__tw_annotate_uint(pb, "executed", r->executed);
  gp__tw_annotate_uint(pb, "threads_executed", r->threads_executed);
  gp__tw_annotate_uint(pb, "l2_transactions", r->l2_transactions);
  gp__tw_annotate_uint(pb, "theoretical_l2_transactions",
                       r->theoretical_l2_transactions);
  gp__tw_event_end(w);
}

static void shared_access(gp__tw *w, struct tw_source *s,
                          const gp_activity_shared_access *r) {
  src_common c = {r->correlation_id, r->pc_offset, r->source_locator_id,
                  r->function_id};
  begin(w, s, "GPU shared access", &c);
  gp__pb_writer *pb = &w->pb;
  bool load = (r->flags & GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_LOAD) != 0;
  gp__tw_annotate_string(pb, "access", load ? "load" : "store");
  gp__tw_annotate_uint(pb, "size_bytes",
                       r->flags &
                           GP_ACTIVITY_FLAG_SHARED_ACCESS_KIND_SIZE_MASK);
  gp__tw_annotate_uint(pb, "executed", r->executed);
  gp__tw_annotate_uint(pb, "threads_executed", r->threads_executed);
  gp__tw_annotate_uint(pb, "shared_transactions", r->shared_transactions);
  gp__tw_annotate_uint(pb, "theoretical_shared_transactions",
                       r->theoretical_shared_transactions);
  gp__tw_event_end(w);
}

static void branch(gp__tw *w, struct tw_source *s,
                   const gp_activity_branch *r) {
  src_common c = {r->correlation_id, r->pc_offset, r->source_locator_id,
                  r->function_id};
  begin(w, s, "GPU branch", &c);
  gp__pb_writer *pb = &w->pb;
  gp__tw_annotate_uint(pb, "executed", r->executed);
  gp__tw_annotate_uint(pb, "threads_executed", r->threads_executed);
  gp__tw_annotate_uint(pb, "diverged", r->diverged);
  gp__tw_event_end(w);
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
