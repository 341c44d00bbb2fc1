/*
 * tables_small.c - the intrinsic tables that hold a row per track, GPU,
 * process, thread, flow, stat, machine, counter group, GPU context or
 * Vulkan allocation, and the catalogue of every intrinsic table (see
 * tables.c and sqlInt.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tp/tables.h"

/* ------------------------------------------------------------------ */
/* track                                                                 */

static const gp__tp_coldef track_cols[] = {
    {"id", I},
    {"name", T},
    {"type", T},
    {"event_type", T},
    {"dimension_arg_set_id", I},
    {"parent_id", I},
    {"source_arg_set_id", I},
    {"machine_id", I},
    {"counter_unit", T},
    {"utid", I},
    {"upid", I},
    {"track_group_id", I},
    {"description", T},
    {"ugpu", I},
    {"gpu_id", I},
};
static const uint8_t track_flags[] = {
    GP_TP_COL_ID | GP_TP_COL_SORTED, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static uint64_t track_rows(const gp__tp_db *db) {
  return db->tracks.n;
}

/* See tables.h. */
bool gp__tp_id_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                   gp__tp_cache *c) {
  (void)db;
  (void)c;
  *out = (int64_t)r;
  return col == 0;
}

static void track_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_track *t = &db->tracks.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    res_str(db, ctx, t->name);
    break;
  case 2:
    res_str(db, ctx, t->type);
    break;
  case 3:
    sqlite3_result_text(ctx, t->is_counter ? "counter" : "slice", -1,
                        SQLITE_STATIC);
    break;
  case 4:
    res_id(ctx, t->dims);
    break;
  case 5:
    res_id(ctx, t->parent);
    break;
  case 6:
    res_id(ctx, t->source);
    break;
  case 7:
    sqlite3_result_int64(ctx, t->machine);
    break;
  case 8:
    res_str(db, ctx, t->unit);
    break;
  case 9:
    res_i64(ctx, t->utid, -1);
    break;
  case 10:
    res_i64(ctx, t->upid, -1);
    break;
  case 11:
    res_id(ctx, t->group);
    break;
  case 12:
    res_str(db, ctx, t->description);
    break;
  case 13:
    res_i64(ctx, t->ugpu, -1);
    break;
  case 14:
    res_i64(ctx, t->gpu, -1);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

/* See tables.h. */
const char *const gp__tp_no_idx[] = {NULL};

static const gp__tp_tabdef track_tab = {
    "__intrinsic_track", track_cols,    15,           track_flags, track_rows,
    track_value,         gp__tp_id_int, gp__tp_no_idx};

/* ------------------------------------------------------------------ */
/* small tables                                                          */

static const gp__tp_coldef gpu_cols[] = {
    {"id", I},         {"gpu", I},          {"name", T}, {"vendor", T},
    {"model", T},      {"architecture", T}, {"uuid", T}, {"pci_bdf", T},
    {"machine_id", I}, {"arg_set_id", I},
};
/* See tables.h. */
const uint8_t gp__tp_id_flags[32] = {GP_TP_COL_ID | GP_TP_COL_SORTED};

static uint64_t gpu_rows(const gp__tp_db *db) {
  return db->gpus.n;
}

static void gpu_value(const gp__tp_db *db, uint64_t r, int col,
                      sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_gpu *g = &db->gpus.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, g->gpu);
    break;
  case 2:
    res_str(db, ctx, g->name);
    break;
  case 3:
    res_str(db, ctx, g->vendor);
    break;
  case 4:
    res_str(db, ctx, g->model);
    break;
  case 5:
    res_str(db, ctx, g->architecture);
    break;
  case 6:
    res_str(db, ctx, g->uuid);
    break;
  case 7:
    res_str(db, ctx, g->pci_bdf);
    break;
  case 8:
    sqlite3_result_int64(ctx, g->machine);
    break;
  default:
    res_id(ctx, g->args);
    break;
  }
}

static const gp__tp_tabdef gpu_tab = {
    "__intrinsic_gpu", gpu_cols,      10,           gp__tp_id_flags, gpu_rows,
    gpu_value,         gp__tp_id_int, gp__tp_no_idx};

static const gp__tp_coldef flow_cols[] = {{"id", I},
                                          {"slice_out", I},
                                          {"slice_in", I},
                                          {"trace_id", I},
                                          {"arg_set_id", I}};
static const uint8_t flow_flags[] = {GP_TP_COL_ID | GP_TP_COL_SORTED,
                                     GP_TP_COL_INDEXED, GP_TP_COL_INDEXED, 0,
                                     0};

static uint64_t flow_rows(const gp__tp_db *db) {
  return db->f_out.n;
}

static bool flow_int(const gp__tp_db *db, uint64_t r, int col, int64_t *out,
                     gp__tp_cache *c) {
  (void)c;
  switch (col) {
  case 0:
    *out = (int64_t)r;
    return true;
  case 1:
    *out = db->f_out.v[r];
    return true;
  case 2:
    *out = db->f_in.v[r];
    return true;
  default:
    return false;
  }
}

static void flow_value(const gp__tp_db *db, uint64_t r, int col,
                       sqlite3_context *ctx, gp__tp_cache *c) {
  int64_t v;
  if (flow_int(db, r, col, &v, c))
    sqlite3_result_int64(ctx, v);
  else
    sqlite3_result_null(ctx);
}

static const char *const flow_idx[] = {"CREATE INDEX %s_out ON %s(slice_out)",
                                       "CREATE INDEX %s_in ON %s(slice_in)",
                                       NULL};

static const gp__tp_tabdef flow_tab = {
    "__intrinsic_flow", flow_cols,  5,        flow_flags,
    flow_rows,          flow_value, flow_int, flow_idx};

static const gp__tp_coldef process_cols[] = {
    {"id", I},       {"pid", I},           {"name", T},
    {"start_ts", I}, {"end_ts", I},        {"parent_upid", I},
    {"uid", I},      {"android_appid", I}, {"android_user_id", I},
    {"cmdline", T},  {"arg_set_id", I},    {"machine_id", I},
};

static uint64_t process_rows(const gp__tp_db *db) {
  return db->processes.n;
}

static void process_value(const gp__tp_db *db, uint64_t r, int col,
                          sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_process *p = &db->processes.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, p->pid);
    break;
  case 2:
    res_str(db, ctx, p->name);
    break;
  case 3:
    res_i64(ctx, p->start_ts, INT64_MIN);
    break;
  case 4:
    res_i64(ctx, p->end_ts, INT64_MIN);
    break;
  case 5:
    res_id(ctx, p->parent_upid);
    break;
  case 6: /* uid, and Android's app id and user id derived from it */
    res_i64(ctx, p->uid, INT64_MIN);
    break;
  case 7:
    res_i64(ctx, p->uid == INT64_MIN ? p->uid : p->uid % 100000, INT64_MIN);
    break;
  case 8:
    res_i64(ctx, p->uid == INT64_MIN ? p->uid : p->uid / 100000, INT64_MIN);
    break;
  case 9:
    res_str(db, ctx, p->cmdline);
    break;
  case 10:
    res_id(ctx, p->args);
    break;
  case 11:
    sqlite3_result_int64(ctx, p->machine);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const gp__tp_tabdef process_tab = {
    "__intrinsic_process", process_cols, 12,
    gp__tp_id_flags,       process_rows, process_value,
    gp__tp_id_int,         gp__tp_no_idx};

static const gp__tp_coldef thread_cols[] = {
    {"id", I},      {"tid", I},        {"name", T},           {"start_ts", I},
    {"end_ts", I},  {"upid", I},       {"is_main_thread", I}, {"machine_id", I},
    {"is_idle", I}, {"arg_set_id", I},
};

static uint64_t thread_rows(const gp__tp_db *db) {
  return db->threads.n;
}

static void thread_value(const gp__tp_db *db, uint64_t r, int col,
                         sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_thread *t = &db->threads.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, t->tid);
    break;
  case 2:
    res_str(db, ctx, t->name);
    break;
  case 3:
    res_i64(ctx, t->start_ts, INT64_MIN);
    break;
  case 4:
    res_i64(ctx, t->end_ts, INT64_MIN);
    break;
  case 5:
    res_id(ctx, t->upid);
    break;
  case 6:
    res_i64(ctx, t->is_main, -1);
    break;
  case 7:
    sqlite3_result_int64(ctx, t->machine);
    break;
  case 8:
    sqlite3_result_int64(ctx, t->is_idle);
    break;
  default: /* arg_set_id: no thread args are imported */
    sqlite3_result_null(ctx);
    break;
  }
}

static const gp__tp_tabdef thread_tab = {
    "__intrinsic_thread", thread_cols,  10,
    gp__tp_id_flags,      thread_rows,  thread_value,
    gp__tp_id_int,        gp__tp_no_idx};

static const gp__tp_coldef stats_cols[] = {
    {"id", I},     {"name", T},  {"idx", I},         {"severity", T},
    {"source", T}, {"value", I}, {"description", T},
};

static uint64_t stats_rows(const gp__tp_db *db) {
  return db->nsingle + db->istats.n;
}

static void stats_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_istat *is =
      r >= db->nsingle ? &db->istats.v[r - db->nsingle] : NULL;
  uint64_t id = r;
  r = is ? is->stat : db->single[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)id);
    break;
  case 1:
    sqlite3_result_text(ctx, gp__tp_stat_names[r], -1, SQLITE_STATIC);
    break;
  case 2:
    if (is)
      sqlite3_result_int64(ctx, is->idx);
    else
      sqlite3_result_null(ctx);
    break;
  case 3:
    sqlite3_result_text(ctx, gp__tp_stat_severity[r], -1, SQLITE_STATIC);
    break;
  case 4:
    sqlite3_result_text(ctx, gp__tp_stat_source[r], -1, SQLITE_STATIC);
    break;
  case 5:
    sqlite3_result_int64(ctx, is ? is->value : db->stats[r]);
    break;
  case 6:
    sqlite3_result_text(ctx, gp__tp_stat_desc[r], -1, SQLITE_STATIC);
    break;
  default:
    sqlite3_result_null(ctx);
    break;
  }
}

static const gp__tp_tabdef stats_tab = {
    "__intrinsic_stats", stats_cols,   7,
    gp__tp_id_flags,     stats_rows,   stats_value,
    gp__tp_id_int,       gp__tp_no_idx};

static const gp__tp_coldef machine_cols[] = {
    {"id", I},
    {"raw_id", I},
    {"name", T},
    {"sysname", T},
    {"release", T},
    {"version", T},
    {"arch", T},
    {"num_cpus", I},
    {"android_build_fingerprint", T},
    {"android_device_manufacturer", T},
    {"android_sdk_version", I},
    {"system_ram_bytes", I},
    {"system_ram_gb", I},
};

static uint64_t machine_rows(const gp__tp_db *db) {
  return db->machines.n;
}

static void machine_value(const gp__tp_db *db, uint64_t r, int col,
                          sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  if (col == 0)
    sqlite3_result_int64(ctx, (int64_t)r);
  else if (col == 1)
    sqlite3_result_int64(ctx, db->machines.v[r].raw_id);
  else if (col >= 3 && col <= 6)
    res_str(db, ctx, db->machines.v[r].uts[col - 3]);
  else
    sqlite3_result_null(ctx);
}

static const gp__tp_tabdef machine_tab = {
    "__intrinsic_machine", machine_cols, 13,
    gp__tp_id_flags,       machine_rows, machine_value,
    gp__tp_id_int,         gp__tp_no_idx};

static const gp__tp_coldef group_cols[] = {{"id", I},
                                           {"group_id", I},
                                           {"track_id", I},
                                           {"name", T},
                                           {"description", T}};

static uint64_t group_rows(const gp__tp_db *db) {
  return db->counter_groups.n;
}

static void group_value(const gp__tp_db *db, uint64_t r, int col,
                        sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_counter_group *g = &db->counter_groups.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, g->group_id);
    break;
  case 2:
    sqlite3_result_int64(ctx, g->track);
    break;
  case 3:
    res_str(db, ctx, g->name);
    break;
  default:
    res_str(db, ctx, g->description);
    break;
  }
}

static const gp__tp_tabdef group_tab = {"__intrinsic_gpu_counter_group",
                                        group_cols,
                                        5,
                                        gp__tp_id_flags,
                                        group_rows,
                                        group_value,
                                        gp__tp_id_int,
                                        gp__tp_no_idx};

static const gp__tp_coldef context_cols[] = {
    {"id", I}, {"context_id", I}, {"pid", I}, {"api", T}};

static uint64_t context_rows(const gp__tp_db *db) {
  return db->gpu_contexts.n;
}

static void context_value(const gp__tp_db *db, uint64_t r, int col,
                          sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_gpu_context *g = &db->gpu_contexts.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    sqlite3_result_int64(ctx, (int64_t)g->context_id);
    break;
  case 2:
    res_i64(ctx, g->pid, -1);
    break;
  default:
    res_str(db, ctx, g->api);
    break;
  }
}

static const gp__tp_tabdef context_tab = {"__intrinsic_gpu_context",
                                          context_cols,
                                          4,
                                          gp__tp_id_flags,
                                          context_rows,
                                          context_value,
                                          gp__tp_id_int,
                                          gp__tp_no_idx};

static const gp__tp_coldef vk_cols[] = {
    {"id", I},
    {"arg_set_id", I},
    {"source", T},
    {"operation", T},
    {"timestamp", I},
    {"upid", I},
    {"device", I},
    {"device_memory", I},
    {"memory_type", I},
    {"heap", I},
    {"function_name", T},
    {"object_handle", I},
    {"memory_address", I},
    {"memory_size", I},
    {"scope", T},
};

static uint64_t vk_rows(const gp__tp_db *db) {
  return db->vk_allocs.n;
}

static void vk_value(const gp__tp_db *db, uint64_t r, int col,
                     sqlite3_context *ctx, gp__tp_cache *c) {
  (void)c;
  const gp__tp_vk_alloc *a = &db->vk_allocs.v[r];
  switch (col) {
  case 0:
    sqlite3_result_int64(ctx, (int64_t)r);
    break;
  case 1:
    res_id(ctx, a->args);
    break;
  case 2:
    res_str(db, ctx, a->source);
    break;
  case 3:
    res_str(db, ctx, a->operation);
    break;
  case 4:
    sqlite3_result_int64(ctx, a->ts);
    break;
  case 5:
    res_id(ctx, a->upid);
    break;
  case 6:
    res_i64(ctx, a->device, INT64_MIN);
    break;
  case 7:
    res_i64(ctx, a->device_memory, INT64_MIN);
    break;
  case 8:
    res_i64(ctx, a->memory_type, INT64_MIN);
    break;
  case 9:
    res_i64(ctx, a->heap, INT64_MIN);
    break;
  case 10:
    res_str(db, ctx, a->function_name);
    break;
  case 11:
    res_i64(ctx, a->object_handle, INT64_MIN);
    break;
  case 12:
    res_i64(ctx, a->memory_address, INT64_MIN);
    break;
  case 13:
    res_i64(ctx, a->memory_size, INT64_MIN);
    break;
  default:
    res_str(db, ctx, a->scope);
    break;
  }
}

static const gp__tp_tabdef vk_tab = {"__intrinsic_vulkan_memory_allocations",
                                     vk_cols,
                                     15,
                                     gp__tp_id_flags,
                                     vk_rows,
                                     vk_value,
                                     gp__tp_id_int,
                                     gp__tp_no_idx};

const gp__tp_tabdef *const gp__tp_tables[] = {
    &gp__tp_slice_tab,
    &gp__tp_gslice_tab,
    &gp__tp_counter_tab,
    &track_tab,
    &gp__tp_args_tab,
    &gpu_tab,
    &flow_tab,
    &process_tab,
    &thread_tab,
    &stats_tab,
    &machine_tab,
    &group_tab,
    &context_tab,
    &vk_tab,
    &gp__tp_sched_tab,
    &gp__tp_thread_state_tab,
    &gp__tp_ftrace_event_tab,
    &gp__tp_cpu_tab,
    &gp__tp_cpu_freq_tab,
};
const int gp__tp_ntables =
    (int)(sizeof(gp__tp_tables) / sizeof(gp__tp_tables[0]));
