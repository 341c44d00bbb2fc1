/*
 * store.c - the columnar database of an imported trace: initialisation,
 * arg sets (stored with dedup, and derived for render-stage slices), and
 * the sealing step that runs once import is over (see store.h).
 */
#include "tp/store.h"

#include <stdlib.h>

#include "gpuperf/error.h"
#include "tp/spill.h"

const char *const gp__tp_stat_names[GP_TP_NSTATS] = {
#define GP_TP_STAT_NAME(name, sev, src, desc) #name,
    GP_TP_STATS(GP_TP_STAT_NAME)
#undef GP_TP_STAT_NAME
};
const char *const gp__tp_stat_severity[GP_TP_NSTATS] = {
#define GP_TP_STAT_SEV(name, sev, src, desc) sev,
    GP_TP_STATS(GP_TP_STAT_SEV)
#undef GP_TP_STAT_SEV
};
const char *const gp__tp_stat_source[GP_TP_NSTATS] = {
#define GP_TP_STAT_SRC(name, sev, src, desc) src,
    GP_TP_STATS(GP_TP_STAT_SRC)
#undef GP_TP_STAT_SRC
};
const char *const gp__tp_stat_desc[GP_TP_NSTATS] = {
#define GP_TP_STAT_DESC(name, sev, src, desc) desc,
    GP_TP_STATS(GP_TP_STAT_DESC)
#undef GP_TP_STAT_DESC
};

const char *const gp__tp_arg_type_names[8] = {
    "int", "uint", "string", "real", "pointer", "bool", "json", "null"};

/* Number of derived args every render-stage slice has. */
#define ALWAYS_ARGS 11

/* See store.h. */
/* Whether Perfetto keeps stat i by index (its kIndexed): per buffer
 * (traced_buf_*), per CPU (ftrace_cpu_*), per buffer of the config. */
static bool stat_indexed(int i) {
  const char *n = gp__tp_stat_names[i];
  return !strncmp(n, "traced_buf_", 11) || !strncmp(n, "ftrace_cpu_", 11) ||
         !strcmp(n, "config_write_into_file_discard");
}

int gp__tp_db_init(gp__tp_db *db) {
  memset(db, 0, sizeof(*db));
  for (int i = 0; i < GP_TP_NSTATS; i++)
    if (!stat_indexed(i))
      db->single[db->nsingle++] = (uint16_t)i;
  gp__tp_strpool *s = &db->strings;
  struct {
    uint32_t *dst;
    const char *str;
  } keys[] = {
      {&db->k_description, "description"},
      {&db->k_context_id, "context_id"},
      {&db->k_render_target, "render_target"},
      {&db->k_render_target_name, "render_target_name"},
      {&db->k_render_pass, "render_pass"},
      {&db->k_render_pass_name, "render_pass_name"},
      {&db->k_render_subpasses, "render_subpasses"},
      {&db->k_command_buffer, "command_buffer"},
      {&db->k_command_buffer_name, "command_buffer_name"},
      {&db->k_submission_id, "submission_id"},
      {&db->k_hw_queue_id, "hw_queue_id"},
      {&db->k_upid, "upid"},
      {&db->k_render_stage_category, "render_stage_category"},
      {&db->k_swapper, "swapper"},
  };
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    *keys[i].dst = gp__tp_str_intern_c(s, keys[i].str);
    if (*keys[i].dst == GP_TP_NONE)
      goto nomem;
  }
  if (!gp__tp_vec_push(&db->set_first, 0))
    goto nomem;
  gp__tp_machine host = {0, {GP_TP_NONE, GP_TP_NONE, GP_TP_NONE, GP_TP_NONE}};
  gp__tp_process swapper = {0,         GP_TP_NONE, GP_TP_NONE,
                            INT64_MIN, INT64_MIN,  GP_TP_NONE,
                            0,         INT64_MIN,  GP_TP_NONE};
  gp__tp_thread idle = {0, db->k_swapper, 0, INT64_MIN, INT64_MIN, 0, true, 1};
  if (!gp__tp_vec_push(&db->machines, host) ||
      !gp__tp_vec_push(&db->processes, swapper) ||
      !gp__tp_vec_push(&db->threads, idle))
    goto nomem;
  return 0;
nomem:
  gp__tp_db_fini(db);
  return GP_ENOMEM;
}

/* See store.h. */
void gp__tp_db_fini(gp__tp_db *db) {
  gp__tp_strpool_free(&db->strings);
  gp__tp_vec_free(&db->args);
  gp__tp_vec_free(&db->set_first);
  gp__tp_map_free(&db->set_by_hash);
  gp__tp_vec_free(&db->set_next);
  gp__tp_vec_free(&db->c_ts);
  gp__tp_vec_free(&db->c_track);
  gp__tp_vec_free(&db->c_value);
  gp__tp_map_free(&db->c_args);
  gp__tp_vec_free(&db->istats);
  gp__tp_vec_free(&db->s_ts);
  gp__tp_vec_free(&db->s_dur);
  gp__tp_vec_free(&db->s_track);
  gp__tp_vec_free(&db->s_cat);
  gp__tp_vec_free(&db->s_name);
  gp__tp_vec_free(&db->s_depth);
  gp__tp_vec_free(&db->s_parent);
  gp__tp_vec_free(&db->s_args);
  gp__tp_vec_free(&db->s_gext);
  gp__tp_vec_free(&db->g_slice);
  gp__tp_vec_free(&db->g_kind);
  gp__tp_vec_free(&db->g_ctx);
  gp__tp_vec_free(&db->g_rt);
  gp__tp_vec_free(&db->g_rp);
  gp__tp_vec_free(&db->g_cb);
  gp__tp_vec_free(&db->g_hwq);
  gp__tp_vec_free(&db->g_sub);
  gp__tp_vec_free(&db->g_upid);
  gp__tp_vec_free(&db->g_cat);
  gp__tp_vec_free(&db->g_extra);
  gp__tp_vec_free(&db->g_rare);
  gp__tp_vec_free(&db->dict);
  gp__tp_map_free(&db->dict_map);
  gp__tp_vec_free(&db->g_argrow);
  gp__tp_vec_free(&db->fe_ts);
  gp__tp_vec_free(&db->fe_name);
  gp__tp_vec_free(&db->fe_utid);
  gp__tp_vec_free(&db->fe_args);
  gp__tp_vec_free(&db->fe_ucpu);
  gp__tp_vec_free(&db->fe_flags);
  gp__tp_vec_free(&db->cpus);
  gp__tp_vec_free(&db->cf_ucpu);
  gp__tp_vec_free(&db->cf_freq);
  gp__tp_vec_free(&db->f_out);
  gp__tp_vec_free(&db->f_in);
  gp__tp_vec_free(&db->tracks);
  gp__tp_vec_free(&db->gpus);
  gp__tp_vec_free(&db->processes);
  gp__tp_vec_free(&db->threads);
  gp__tp_vec_free(&db->counter_groups);
  gp__tp_vec_free(&db->gpu_contexts);
  gp__tp_vec_free(&db->vk_allocs);
  gp__tp_vec_free(&db->machines);
  gp__tp_vec_free(&db->sched);
  gp__tp_vec_free(&db->thread_states);
}

/* ------------------------------------------------------------------ */
/* Building arg sets                                                     */

/* See store.h. */
void gp__tp_argb_add(gp__tp_argb *b, uint32_t key, uint32_t flat_key,
                     uint8_t type, int64_t v) {
  if (key == GP_TP_NONE)
    return;
  if (b->n >= GP_TP_ARGS_MAX) {
    b->overflow = true;
    return;
  }
  b->a[b->n].key = key;
  b->a[b->n].flat_key = flat_key;
  b->a[b->n].type = type;
  b->a[b->n].value = v;
  b->n++;
}

/* See store.h. */
void gp__tp_argb_int(gp__tp_argb *b, uint32_t key, int64_t v) {
  gp__tp_argb_add(b, key, key, GP_TP_ARG_INT, v);
}
/* See store.h. */
void gp__tp_argb_uint(gp__tp_argb *b, uint32_t key, uint64_t v) {
  gp__tp_argb_add(b, key, key, GP_TP_ARG_UINT, (int64_t)v);
}
/* See store.h. */
void gp__tp_argb_real(gp__tp_argb *b, uint32_t key, double v) {
  int64_t bits;
  memcpy(&bits, &v, sizeof(bits));
  gp__tp_argb_add(b, key, key, GP_TP_ARG_REAL, bits);
}
/* See store.h. */
void gp__tp_argb_str(gp__tp_argb *b, uint32_t key, uint32_t str) {
  gp__tp_argb_add(b, key, key, GP_TP_ARG_STRING, (int64_t)str);
}
/* See store.h. */
void gp__tp_argb_bool(gp__tp_argb *b, uint32_t key, bool v) {
  gp__tp_argb_add(b, key, key, GP_TP_ARG_BOOL, v ? 1 : 0);
}
/* See store.h. */
void gp__tp_argb_ptr(gp__tp_argb *b, uint32_t key, uint64_t v) {
  gp__tp_argb_add(b, key, key, GP_TP_ARG_POINTER, (int64_t)v);
}

/* A set's hash: a multiply and a shift per word, one full mix at the end
 * (a collision only costs a comparison; every ftrace event's args come
 * through here, so the per-arg cost is what counts). */
static uint64_t args_hash(const gp__tp_arg *a, uint32_t n) {
  uint64_t h = 0x51ed270b27e5ull ^ n;
  for (uint32_t i = 0; i < n; i++) {
    h = (h ^ ((uint64_t)a[i].key << 32 | a[i].flat_key)) *
        0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h = (h ^ (uint64_t)a[i].value ^ ((uint64_t)a[i].type << 56)) *
        0xc2b2ae3d27d4eb4full;
    h ^= h >> 32;
  }
  return gp__tp_mix64(h);
}

static bool args_equal(const gp__tp_arg *a, const gp__tp_arg *b, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (a[i].key != b[i].key || a[i].flat_key != b[i].flat_key ||
        a[i].type != b[i].type || a[i].value != b[i].value)
      return false;
  return true;
}

/* See store.h. */
void gp__tp_argset_range(const gp__tp_db *db, uint32_t set, uint32_t *first,
                         uint32_t *n) {
  *first = db->set_first.v[set];
  *n = db->set_first.v[set + 1] - *first;
}

/* See store.h. */
int gp__tp_argset_commit(gp__tp_db *db, const gp__tp_argb *b, uint32_t *out) {
  *out = GP_TP_NONE;
  if (b->n == 0)
    return 0;
  uint64_t h = args_hash(b->a, b->n);
  uint64_t *head = gp__tp_map_get(&db->set_by_hash, h);
  for (uint32_t s = head ? (uint32_t)*head : GP_TP_NONE; s != GP_TP_NONE;
       s = db->set_next.v[s]) {
    uint32_t first, n;
    gp__tp_argset_range(db, s, &first, &n);
    if (n == b->n && args_equal(db->args.v + first, b->a, n)) {
      *out = s;
      return 0;
    }
  }
  if (db->args.n + b->n >= UINT32_MAX || db->set_first.n >= UINT32_MAX - 1)
    return GP_ERANGE;
  if (!gp__tp_vec_reserve(&db->args, b->n) ||
      !gp__tp_vec_reserve(&db->set_first, 1) ||
      !gp__tp_vec_reserve(&db->set_next, 1))
    return GP_ENOMEM;
  uint32_t id = (uint32_t)(db->set_first.n - 1);
  bool inserted;
  uint64_t *slot = gp__tp_map_put(&db->set_by_hash, h, id, &inserted);
  if (!slot)
    return GP_ENOMEM;
  db->set_next.v[db->set_next.n++] = inserted ? GP_TP_NONE : (uint32_t)*slot;
  *slot = id;
  memcpy(db->args.v + db->args.n, b->a, b->n * sizeof(gp__tp_arg));
  db->args.n += b->n;
  db->set_first.v[db->set_first.n++] = (uint32_t)db->args.n;
  *out = id;
  return 0;
}

/* See store.h. */
uint32_t gp__tp_dict(gp__tp_db *db, uint64_t v) {
  bool inserted;
  uint64_t *slot = gp__tp_map_put(&db->dict_map, v, db->dict.n, &inserted);
  if (!slot)
    return GP_TP_NONE;
  if (inserted && !gp__tp_vec_push(&db->dict, v)) {
    /* Keep the map consistent with the dictionary: point at a value we
     * can still store next time. */
    *slot = GP_TP_NONE;
    return GP_TP_NONE;
  }
  return (uint32_t)*slot;
}

/* ------------------------------------------------------------------ */
/* Reading args                                                          */

static inline uint32_t stored_sets(const gp__tp_db *db) {
  return (uint32_t)(db->set_first.n - 1);
}

static uint32_t extras_size(const gp__tp_db *db, uint32_t g) {
  uint32_t set = db->g_extra.v[g];
  if (set == GP_TP_NONE)
    return 0;
  return db->set_first.v[set + 1] - db->set_first.v[set];
}

static uint32_t derived_size(const gp__tp_db *db, uint32_t g) {
  if (db->g_kind.v[g] != GP_TP_GEXT_RENDER_STAGE)
    return 0;
  return (db->g_cat.v[g] >= 0) + extras_size(db, g) + ALWAYS_ARGS;
}

/* See store.h. */
uint32_t gp__tp_set_size(const gp__tp_db *db, uint64_t set) {
  if (set < stored_sets(db))
    return db->set_first.v[set + 1] - db->set_first.v[set];
  return derived_size(db, (uint32_t)(set - stored_sets(db)));
}

/* See store.h. */
uint32_t gp__tp_rare_get(const gp__tp_db *db, uint32_t row, uint32_t col) {
  size_t lo = 0, hi = db->g_rare.n;
  uint64_t want = (uint64_t)row << 8 | col;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    uint64_t k = (uint64_t)db->g_rare.v[mid].row << 8 | db->g_rare.v[mid].col;
    if (k < want)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < db->g_rare.n && db->g_rare.v[lo].row == row &&
      db->g_rare.v[lo].col == col)
    return db->g_rare.v[lo].str;
  return GP_TP_NONE;
}

static void mk(gp__tp_arg *o, uint32_t key, uint8_t type, int64_t v) {
  o->key = key;
  o->flat_key = key;
  o->type = type;
  o->value = v;
}

/* The i-th of the 11 always-present render-stage args of ext row g. */
static void always_arg(const gp__tp_db *db, uint32_t g, uint32_t i,
                       gp__tp_arg *o) {
  switch (i) {
  case 0:
    mk(o, db->k_context_id, GP_TP_ARG_UINT,
       (int64_t)db->dict.v[db->g_ctx.v[g]]);
    break;
  case 1:
    mk(o, db->k_render_target, GP_TP_ARG_UINT,
       (int64_t)db->dict.v[db->g_rt.v[g]]);
    break;
  case 2:
    mk(o, db->k_render_target_name, GP_TP_ARG_STRING,
       gp__tp_rare_get(db, g, GP_TP_RARE_RT_NAME));
    break;
  case 3:
    mk(o, db->k_render_pass, GP_TP_ARG_UINT,
       (int64_t)db->dict.v[db->g_rp.v[g]]);
    break;
  case 4:
    mk(o, db->k_render_pass_name, GP_TP_ARG_STRING,
       gp__tp_rare_get(db, g, GP_TP_RARE_RP_NAME));
    break;
  case 5:
    mk(o, db->k_render_subpasses, GP_TP_ARG_STRING,
       gp__tp_rare_get(db, g, GP_TP_RARE_SUBPASSES));
    break;
  case 6:
    mk(o, db->k_command_buffer, GP_TP_ARG_UINT,
       (int64_t)db->dict.v[db->g_cb.v[g]]);
    break;
  case 7:
    mk(o, db->k_command_buffer_name, GP_TP_ARG_STRING,
       gp__tp_rare_get(db, g, GP_TP_RARE_CB_NAME));
    break;
  case 8:
    mk(o, db->k_submission_id, GP_TP_ARG_INT, db->g_sub.v[g]);
    break;
  case 9:
    mk(o, db->k_hw_queue_id, GP_TP_ARG_UINT,
       (int64_t)db->dict.v[db->g_hwq.v[g]]);
    break;
  default:
    mk(o, db->k_upid, GP_TP_ARG_INT, db->g_upid.v[g]);
    break;
  }
}

/* See store.h. */
void gp__tp_set_arg(const gp__tp_db *db, uint64_t set, uint32_t i,
                    gp__tp_arg *out) {
  uint32_t ns = stored_sets(db);
  if (set < ns) {
    *out = db->args.v[db->set_first.v[set] + i];
    return;
  }
  uint32_t g = (uint32_t)(set - ns);
  if (db->g_cat.v[g] >= 0) {
    if (i == 0) {
      mk(out, db->k_render_stage_category, GP_TP_ARG_INT, db->g_cat.v[g]);
      return;
    }
    i--;
  }
  uint32_t ne = extras_size(db, g);
  if (i < ne) {
    *out = db->args.v[db->set_first.v[db->g_extra.v[g]] + i];
    return;
  }
  always_arg(db, g, i - ne, out);
}

/* See store.h. */
bool gp__tp_set_find(const gp__tp_db *db, uint64_t set, uint32_t key,
                     gp__tp_arg *out) {
  if (set >= gp__tp_nsets(db))
    return false;
  uint32_t n = gp__tp_set_size(db, set);
  for (uint32_t i = 0; i < n; i++) {
    gp__tp_set_arg(db, set, i, out);
    if (out->key == key)
      return true;
  }
  return false;
}

/* See store.h. */
uint64_t gp__tp_set_first_row(const gp__tp_db *db, uint64_t set) {
  uint32_t ns = stored_sets(db);
  if (set < ns)
    return db->set_first.v[set];
  return db->g_argrow.v[set - ns];
}

/* See store.h. */
uint64_t gp__tp_row_set(const gp__tp_db *db, uint64_t row) {
  if (row < db->args.n) {
    /* Largest set whose first row is <= row. */
    size_t lo = 0, hi = stored_sets(db);
    while (hi - lo > 1) {
      size_t mid = (lo + hi) / 2;
      if (db->set_first.v[mid] <= row)
        lo = mid;
      else
        hi = mid;
    }
    return lo;
  }
  size_t lo = 0, hi = db->g_argrow.n;
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (db->g_argrow.v[mid] <= row)
      lo = mid;
    else
      hi = mid;
  }
  return stored_sets(db) + lo;
}

/* See store.h. */
uint64_t gp__tp_slice_argset(const gp__tp_db *db, uint32_t slice) {
  uint32_t g = db->s_gext.v[slice];
  if (g != GP_TP_NONE && db->g_kind.v[g] == GP_TP_GEXT_RENDER_STAGE)
    return (uint64_t)stored_sets(db) + g;
  uint32_t s = db->s_args.v[slice];
  return s == GP_TP_NONE ? UINT64_MAX : s;
}

/* ------------------------------------------------------------------ */
/* Sealing                                                               */

/* See store.h. */
int gp__tp_db_seal(gp__tp_db *db) {
  if (db->sealed)
    return 0;
  if (!gp__tp_vec_reserve(&db->g_argrow, db->g_slice.n))
    return GP_ENOMEM;
  uint64_t row = db->args.n;
  for (uint32_t g = 0; g < db->g_slice.n; g++) {
    gp__tp_spill_poll();
    db->g_argrow.v[g] = row;
    row += derived_size(db, g);
  }
  db->g_argrow.n = db->g_slice.n;
  db->nargs_total = row;

  /* Trace bounds as Perfetto computes them: counters, slices, the
   * scheduling tables (what lasts counts to its end) and ftrace_event. */
  int64_t start = INT64_MAX, end = 0;
  for (size_t i = 0; i < db->fe_ts.n; i++) {
    gp__tp_spill_poll();
    start = db->fe_ts.v[i] < start ? db->fe_ts.v[i] : start;
    end = db->fe_ts.v[i] > end ? db->fe_ts.v[i] : end;
  }
  for (size_t i = 0; i < db->c_ts.n; i++) {
    gp__tp_spill_poll();
    if (db->c_ts.v[i] < start)
      start = db->c_ts.v[i];
    if (db->c_ts.v[i] > end)
      end = db->c_ts.v[i];
  }
  for (size_t i = 0; i < db->s_ts.n; i++) {
    gp__tp_spill_poll();
    int64_t ts = db->s_ts.v[i], dur = db->s_dur.v[i];
    if (ts < start)
      start = ts;
    int64_t e = gp__tp_sadd(ts, dur > 0 ? dur : 0);
    if (e > end)
      end = e;
  }
  for (size_t i = 0; i < db->sched.n; i++) {
    const gp__tp_sched_slice *x = &db->sched.v[i];
    start = x->ts < start ? x->ts : start;
    int64_t e = gp__tp_sadd(x->ts, x->dur > 0 ? x->dur : 0);
    end = e > end ? e : end;
  }
  for (size_t i = 0; i < db->thread_states.n; i++) {
    const gp__tp_thread_state *x = &db->thread_states.v[i];
    start = x->ts < start ? x->ts : start;
    int64_t e = gp__tp_sadd(x->ts, x->dur > 0 ? x->dur : 0);
    end = e > end ? e : end;
  }
  if (start == INT64_MAX) {
    start = end = 0;
  } else if (start == end) {
    end++;
  }
  db->start_ts = start;
  db->end_ts = end;

  gp__tp_map_free(&db->set_by_hash);
  gp__tp_vec_free(&db->set_next);
  gp__tp_map_free(&db->dict_map);
  db->sealed = true;
  return 0;
}
