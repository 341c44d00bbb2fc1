/*
 * writer_gpu.c - the GPU side of the trace writer (GpuInfo for the
 * devices is writer_devices.c's): gpu_render_stage_event packets for
 * kernels, copies and fills with their interned hardware queues, stages,
 * graphics contexts and compute kernels, and the process's track tree
 * API -> "Device #N" ->
 * "Stream #M", on which the same work is mirrored as slices (unless the
 * renderstages config asks for low overhead).
 *
 * Interning ids of queues and stages are computed from what they name
 * (device and queue index; stage index), so that the same hardware queue
 * gets the same iid, hence the same track in the trace processor, in
 * every process of a recording.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writerInt.h"

/* ------------------------------------------------------------------ */
/* Stages                                                               */

enum {
  STAGE_KERNEL = 0,
  STAGE_MEMCPY_FIRST = 1, /* 1 + gp_memcpy_kind, kinds 0 .. 10 */
  STAGE_MEMSET = 12,
  STAGE_GRAPHICS_FIRST = 13, /* 13 + gp_render_stage_kind, kinds 0 .. 3 */
  STAGE_COUNT = 17
};
#define STAGE_IID_BASE (1ull << 24)

static const char *stage_name(uint32_t s) {
  static const char *const names[STAGE_COUNT] = {
      "Kernel",      "Memcpy",         "Memcpy HtoD", "Memcpy DtoH",
      "Memcpy HtoA", "Memcpy AtoH",    "Memcpy AtoA", "Memcpy AtoD",
      "Memcpy DtoA", "Memcpy DtoD",    "Memcpy HtoH", "Memcpy PtoP",
      "Memset",      "Command buffer", "Render pass", "Compute",
      "Transfer"};
  return s < STAGE_COUNT ? names[s] : "Unknown";
}

static uint32_t stage_string(const gp__tw *w, uint32_t s) {
  static uint32_t ids[STAGE_COUNT];
  if (s >= STAGE_COUNT)
    return 0;
  return gp__tw_intern_cached(w, &ids[s], stage_name(s));
}

static uint64_t stage_iid(gp__tw *w, uint32_t s) {
  uint64_t iid = STAGE_IID_BASE | s;
  if (s < GP_ARRAY_SIZE(w->stage_gen) && w->stage_gen[s] != w->gen) {
    w->stage_gen[s] = w->gen;
    gp__tw_pend(w, TW_PEND_STAGE, iid, s, 0, NULL);
  }
  return iid;
}

/* ------------------------------------------------------------------ */
/* Compute argument names (GpuInternedData.compute_arg_names)           */

enum {
  ARG_GRID_X = 1,
  ARG_GRID_Y,
  ARG_GRID_Z,
  ARG_BLOCK_X,
  ARG_BLOCK_Y,
  ARG_BLOCK_Z,
  ARG_GRID_SIZE,
  ARG_BLOCK_SIZE,
  ARG_THREAD_COUNT,
  ARG_SMEM_DYNAMIC,
  ARG_REGISTERS,
  ARG_SMEM_STATIC,
  ARG_COUNT
};

/* The names Perfetto's GPU compute view reads launch metrics by. */
static const char *const arg_names[ARG_COUNT] = {
    "",
    "launch__grid_size_x",
    "launch__grid_size_y",
    "launch__grid_size_z",
    "launch__block_size_x",
    "launch__block_size_y",
    "launch__block_size_z",
    "launch__grid_size",
    "launch__block_size",
    "launch__thread_count",
    "launch__shared_mem_per_block_dynamic",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block_static"};

static void need_arg_names(gp__tw *w) {
  if (w->arg_names_gen != w->gen) {
    w->arg_names_gen = w->gen;
    gp__tw_pend(w, TW_PEND_ARG_NAMES, 0, 0, 0, NULL);
  }
}

static inline void uint_arg(gp__pb_writer *pb, uint32_t field, uint32_t name,
                            uint64_t v) {
  gp__pb_short s = gp__pb_begin_short(pb, field);
  gp__pb_uint(pb, GP_PB_ARG_NAME_IID, name);
  gp__pb_uint(pb, GP_PB_ARG_UINT_VALUE, v);
  gp__pb_end_short(pb, s);
}

static inline void dim3(gp__pb_writer *pb, uint32_t field, uint32_t x,
                        uint32_t y, uint32_t z) {
  gp__pb_short s = gp__pb_begin_short(pb, field);
  gp__pb_uint(pb, GP_PB_DIM3_X, x);
  gp__pb_uint(pb, GP_PB_DIM3_Y, y);
  gp__pb_uint(pb, GP_PB_DIM3_Z, z);
  gp__pb_end_short(pb, s);
}

/* ------------------------------------------------------------------ */
/* Track tree: API -> Device #N -> Stream #M                            */

static const char *api_name(uint32_t api) {
  switch (api) {
  case GP_API_OPEN_GL:
    return "OpenGL";
  case GP_API_VULKAN:
    return "Vulkan";
  case GP_API_OPEN_CL:
    return "OpenCL";
  case GP_API_CUDA:
    return "CUDA";
  case GP_API_HIP:
    return "HIP";
  case GP_API_SIM:
    return "Simulated GPUs";
  default:
    return "GPU";
  }
}

static uint64_t device_track(gp__tw *w, uint32_t device_id) {
  uint32_t api = device_id < TW_MAX_DEVICES ? w->dev[device_id].api : 0;
  uint64_t api_uuid = gp__tw_track_uuid(w, TW_TRACK_API, api);
  uint64_t uuid = gp__tw_track_uuid(w, TW_TRACK_DEVICE, device_id);
  tw_entry *a = gp__tw_map_get(&w->apis, api, 0, NULL);
  if (a && !a->gen) {
    a->gen = 1;
    gp__tw_track_descriptor(w, api_uuid, gp__tw_process_track(w),
                            api_name(api));
  }
  if (device_id < TW_MAX_DEVICES && !w->dev[device_id].tracked) {
    char name[32];
    snprintf(name, sizeof(name), "Device #%u", device_id);
    gp__tw_track_descriptor(w, uuid, api_uuid, name);
    w->dev[device_id].tracked = true;
  }
  return uuid;
}

/* See writerInt.h. */
uint64_t gp__tw_device_track(gp__tw *w, uint32_t device_id) {
  return device_track(w, device_id);
}

static void stream_descriptor(gp__tw *w, const tw_entry *e, uint64_t uuid) {
  uint32_t stream = (uint32_t)e->k1;
  char name[96];
  if (e->aux)
    snprintf(name, sizeof(name), "Stream #%u (%s)", stream,
             gp__tw_string(w, (uint32_t)e->aux));
  else
    snprintf(name, sizeof(name), "Stream #%u", stream);
  gp__tw_track_descriptor(w, uuid, device_track(w, (uint32_t)e->iid - 1), name);
}

static uint64_t stream_uuid(gp__tw *w, uint32_t ctx, uint32_t stream) {
  return gp__tw_track_uuid(w, TW_TRACK_STREAM, ((uint64_t)ctx << 32) | stream);
}

static inline struct tw_stream_slot *stream_slot(gp__tw *w, uint32_t ctx,
                                                 uint32_t stream) {
  return &w->stream_cache[(stream ^ ctx * 7u) % TW_STREAM_CACHE];
}

static uint64_t stream_track(gp__tw *w, uint32_t device, uint32_t ctx,
                             uint32_t stream) {
  uint64_t key = stream | ((uint64_t)ctx << 32);
  struct tw_stream_slot *c = stream_slot(w, ctx, stream);
  if (c->uuid && c->key == key)
    return c->uuid;
  uint64_t uuid = stream_uuid(w, ctx, stream);
  tw_entry *e =
      gp__tw_map_get(&w->streams, stream | ((uint64_t)ctx << 32), 0, NULL);
  if (!e)
    return uuid;
  if (!e->iid)
    e->iid = (uint64_t)device + 1;
  if (!e->gen) {
    e->gen = 1;
    stream_descriptor(w, e, uuid);
  }
  /* Described once and for all (track descriptors are not incremental
   * state), so the uuid can be handed out from now on without a look. */
  c->key = key;
  c->uuid = uuid;
  return uuid;
}

/* See writerInt.h. */
void gp__tw_gpu_stream_name(gp__tw *w, const gp_activity_name *n) {
  tw_entry *e = gp__tw_map_get(
      &w->streams, n->stream_id | ((uint64_t)n->context_id << 32), 0, NULL);
  if (!e || e->aux == n->name_id)
    return;
  e->aux = n->name_id;
  if (!e->iid)
    e->iid = (uint64_t)n->device_id + 1;
  if (e->gen) /* described already: describe again, named */
    stream_descriptor(w, e, stream_uuid(w, n->context_id, n->stream_id));
}

/* ------------------------------------------------------------------ */
/* Interned queues, contexts, kernels                                   */

static uint64_t queue_iid(gp__tw *w, uint32_t device, uint32_t queue) {
  uint64_t iid = 1 + ((uint64_t)device << 8) + (queue & 0xff);
  if (device < TW_MAX_DEVICES && queue < TW_DIRECT_QUEUES) {
    uint32_t *gen = &w->dev[device].queue_gen[queue];
    if (*gen != w->gen) {
      *gen = w->gen;
      gp__tw_pend(w, TW_PEND_QUEUE, iid, device, queue, NULL);
    }
    return iid;
  }
  tw_entry *e = gp__tw_map_get(&w->queues, iid, 0, NULL);
  if (e && e->gen != w->gen) {
    e->gen = w->gen;
    gp__tw_pend(w, TW_PEND_QUEUE, iid, device, queue, NULL);
  }
  return iid;
}

/* See writerInt.h. */
void gp__tw_gpu_context(gp__tw *w, const gp_activity_context *c) {
  tw_entry *e = gp__tw_map_get(&w->contexts, c->context_id, 0, NULL);
  if (!e)
    return;
  e->aux = ((uint64_t)c->api << 32) | c->device_id;
  gp__tw_device_seen(w, c->device_id);
}

/* Context iids are also the trace processor's context ids: unique across
 * the processes of a trace, with the sequence id in the low 12 bits. */
static uint64_t context_iid(gp__tw *w, uint32_t ctx, uint32_t device) {
  uint64_t seq = w->o.sequence_id;
  uint64_t iid = seq < 4096 ? ((uint64_t)ctx << 12) | seq : (seq << 32) | ctx;
  struct tw_ctx_slot *c = &w->ctx_cache[ctx % TW_CTX_CACHE];
  if (c->gen == w->gen && c->ctx == ctx)
    return iid; /* queued in this generation already */
  tw_entry *e = gp__tw_map_get(&w->contexts, ctx, 0, NULL);
  if (!e)
    return iid;
  if (!e->aux) {
    uint32_t api = device < TW_MAX_DEVICES ? w->dev[device].api : 0;
    e->aux = ((uint64_t)api << 32) | device;
  }
  if (e->gen != w->gen) {
    e->gen = w->gen;
    uint32_t api = (uint32_t)(e->aux >> 32);
    gp__tw_pend(w, TW_PEND_CONTEXT, iid, gp__tw_pid(w, w->pid),
                api <= GP_API_HIP ? api : GP_API_UNDEFINED, NULL);
  }
  c->ctx = ctx;
  c->gen = w->gen;
  return iid;
}

/* The function name of a kernel: its demangled name up to the '(' of
 * the parameter list, or its only name. */
static uint32_t short_name(const gp__tw *w, uint32_t name_id,
                           uint32_t demangled_id) {
  const char *s = gp__tw_string(w, demangled_id ? demangled_id : name_id);
  size_t n = strcspn(s, "(");
  if (n == 0)
    return name_id;
  return gp__tw_intern(w, s, n);
}

/*
 * The iid of kernel k, its interned entry queued if new in this
 * generation, and the name of its slices in *name_id; 0 (and k's name) if
 * memory ran out. Programs launch a few kernels again and again: those
 * emitted in this generation are remembered by key, two-way.
 */
static uint64_t kernel_iid(gp__tw *w, const gp_activity_kernel *k,
                           uint32_t *name_id) {
  uint64_t k1 = ((uint64_t)k->name_id << 32) | k->demangled_name_id;
  uint64_t k2 = ((uint64_t)(k->registers_per_thread & 0xffff) << 48) |
                ((uint64_t)(k->device_id & 0xff) << 40) |
                (k->static_shared_memory & 0xffffffffffull);
  uint64_t h = (k1 ^ (k2 * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
  size_t i = (size_t)(h >> 40) % TW_KERNEL_CACHE;
  struct tw_kernel_slot *c = &w->kernel_cache[i];
  if (c->gen == w->gen && c->k1 == k1 && c->k2 == k2) {
    *name_id = c->name_id;
    return c->iid;
  }
  /* Two-way, as the tail cache: a key lives in slot i or i ^ 1, the
   * newest in i. Direct-mapped, the demo's ten kernels (five on each of
   * two devices) fell into slots that half its launches missed. */
  struct tw_kernel_slot *c1 = &w->kernel_cache[i ^ 1];
  if (c1->gen == w->gen && c1->k1 == k1 && c1->k2 == k2) {
    *name_id = c1->name_id;
    return c1->iid;
  }
  bool created;
  tw_entry *e = gp__tw_map_get(&w->kernels, k1, k2, &created);
  if (!e) {
    *name_id = k->name_id;
    return 0;
  }
  if (created) {
    e->iid = ++w->next_iid;
    e->aux = short_name(w, k->name_id, k->demangled_name_id);
  }
  if (e->gen != w->gen) {
    e->gen = w->gen;
    need_arg_names(w);
    /* e stays valid until the map grows, which only a kernel_iid() call
     * does: after this packet has been written. */
    gp__tw_pend(w, TW_PEND_KERNEL, e->iid, 0, 0, e);
  }
  if (c->gen == w->gen)
    *c1 = *c;
  c->k1 = k1;
  c->k2 = k2;
  c->iid = e->iid;
  c->name_id = (uint32_t)e->aux;
  c->gen = w->gen;
  *name_id = c->name_id;
  return e->iid;
}

static void write_kernel(gp__tw *w, const tw_pending *p) {
  gp__pb_writer *pb = &w->pb;
  const tw_entry *e = p->p;
  uint32_t name_id = (uint32_t)(e->k1 >> 32), dem_id = (uint32_t)e->k1;
  uint32_t device = (uint32_t)(e->k2 >> 40) & 0xff;
  uint32_t regs = (uint32_t)(e->k2 >> 48);
  uint64_t smem = e->k2 & 0xffffffffffull;
  gp__pb_begin(pb, GP_PB_INTERNED_COMPUTE_KERNELS);
  gp__pb_uint(pb, GP_PB_KERNEL_IID, p->iid);
  gp__pb_string(pb, GP_PB_KERNEL_NAME, gp__tw_string(w, name_id));
  if (dem_id)
    gp__pb_string(pb, GP_PB_KERNEL_DEMANGLED_NAME, gp__tw_string(w, dem_id));
  gp_device_info di;
  if (gp__tw_device_info(w, device, &di) == 0 && di.architecture &&
      *di.architecture)
    gp__pb_string(pb, GP_PB_KERNEL_ARCH, di.architecture);
  uint_arg(pb, GP_PB_KERNEL_ARGS, ARG_REGISTERS, regs);
  uint_arg(pb, GP_PB_KERNEL_ARGS, ARG_SMEM_STATIC, smem);
  gp__pb_end(pb);
}

/* See writerInt.h. */
void gp__tw_gpu_write_pending(gp__tw *w, const tw_pending *p) {
  gp__pb_writer *pb = &w->pb;
  switch (p->kind) {
  case TW_PEND_QUEUE: {
    gp_device_queue_info qi;
    char fallback[32];
    if (gp__tw_device_queue(w, (uint32_t)p->a, (uint32_t)p->b, &qi) != 0) {
      snprintf(fallback, sizeof(fallback), "Queue %u", (uint32_t)p->b);
      qi.name = fallback;
      qi.description = "";
      qi.kind = GP_QUEUE_OTHER;
    }
    gp__pb_begin(pb, GP_PB_INTERNED_GPU_SPECIFICATIONS);
    gp__pb_uint(pb, GP_PB_SPEC_IID, p->iid);
    gp__pb_string(pb, GP_PB_SPEC_NAME, qi.name);
    if (qi.description && *qi.description)
      gp__pb_string(pb, GP_PB_SPEC_DESCRIPTION, qi.description);
    gp__pb_uint(pb, GP_PB_SPEC_CATEGORY,
                qi.kind == GP_QUEUE_COMPUTE    ? GP_PB_STAGE_CATEGORY_COMPUTE
                : qi.kind == GP_QUEUE_GRAPHICS ? GP_PB_STAGE_CATEGORY_GRAPHICS
                                               : GP_PB_STAGE_CATEGORY_OTHER);
    gp__pb_end(pb);
    break;
  }
  case TW_PEND_STAGE: {
    gp__pb_short s = gp__pb_begin_short(pb, GP_PB_INTERNED_GPU_SPECIFICATIONS);
    gp__pb_uint(pb, GP_PB_SPEC_IID, p->iid);
    gp__pb_string(pb, GP_PB_SPEC_NAME, stage_name((uint32_t)p->a));
    uint32_t cat = GP_PB_STAGE_CATEGORY_OTHER;
    if (p->a == STAGE_KERNEL ||
        p->a == STAGE_GRAPHICS_FIRST + GP_RENDER_STAGE_COMPUTE)
      cat = GP_PB_STAGE_CATEGORY_COMPUTE;
    else if (p->a == STAGE_GRAPHICS_FIRST + GP_RENDER_STAGE_RENDER_PASS)
      cat = GP_PB_STAGE_CATEGORY_GRAPHICS;
    gp__pb_uint(pb, GP_PB_SPEC_CATEGORY, cat);
    gp__pb_end_short(pb, s);
    break;
  }
  case TW_PEND_CONTEXT: {
    gp__pb_short s = gp__pb_begin_short(pb, GP_PB_INTERNED_GRAPHICS_CONTEXTS);
    gp__pb_uint(pb, GP_PB_GCTX_IID, p->iid);
    gp__pb_int(pb, GP_PB_GCTX_PID, (int32_t)p->a);
    gp__pb_uint(pb, GP_PB_GCTX_API, p->b);
    gp__pb_end_short(pb, s);
    break;
  }
  case TW_PEND_KERNEL:
    write_kernel(w, p);
    break;
  case TW_PEND_ARG_NAMES:
    for (uint32_t i = 1; i < ARG_COUNT; i++) {
      gp__pb_short s = gp__pb_begin_short(pb, GP_PB_INTERNED_COMPUTE_ARG_NAMES);
      gp__pb_uint(pb, GP_PB_INTERNED_IID, i);
      gp__pb_string(pb, GP_PB_INTERNED_NAME, arg_names[i]);
      gp__pb_end_short(pb, s);
    }
    break;
  default:
    break;
  }
}

/* ------------------------------------------------------------------ */
/* GPU work                                                             */

/* The steps every kernel, copy and fill goes through are inlined into
 * each: out of line, their calls, saves and restores cost ~80
 * instructions of the ~800 an op costs. */
#define WORK_STEP static inline __attribute__((always_inline))

/* What kernels, copies and fills share. */
typedef struct gpu_work {
  uint64_t corr, start, end;
  uint32_t device, context, stream, queue, stage;
  uint64_t name_iid; /* 0: the stage's name */
  uint32_t name_id;  /* string id of the slice name */
  const uint64_t *waits;
  uint32_t nwaits;
} gpu_work;

/* Puts the context, gpu_id, hw_queue_iid and stage_iid fields of a
 * render stage event at p (44 bytes reserved); returns their end. */
static inline uint8_t *put_site(uint8_t *p, const gpu_work *g, uint64_t ctx_iid,
                                uint64_t q_iid, uint64_t s_iid) {
  p = gp__pb_put_uint(p, GP_PB_RSE_CONTEXT, ctx_iid);
  p = gp__pb_put_uint(p, GP_PB_RSE_GPU_ID,
                      (uint64_t)(int64_t)(int32_t)g->device);
  p = gp__pb_put_uint(p, GP_PB_RSE_HW_QUEUE_IID, q_iid);
  return gp__pb_put_uint(p, GP_PB_RSE_STAGE_IID, s_iid);
}

/* Opens the packet and the render stage event, common fields written
 * with raw puts (the event's tag and length 4 bytes, six fields 11 bytes
 * each at most). The site fields are copied from `site` unless NULL. */
WORK_STEP void work_begin(gp__tw *w, const gpu_work *g,
                          const struct tw_site *site, uint64_t ctx_iid,
                          uint64_t q_iid, uint64_t s_iid) {
  gp__pb_writer *pb = &w->pb;
  uint8_t *p = gp__tw_packet_open(w, g->start,
                                  GP_PB_SEQ_NEEDS_INCREMENTAL_STATE, 4 + 66);
  w->rse.len_at = NULL;
  if (!p)
    return;
  p = gp__pb_put_varint(
      p, ((uint64_t)GP_PB_PACKET_GPU_RENDER_STAGE_EVENT << 3) | GP_PB_LEN);
  w->rse.len_at = p;
  p += 2;
  w->rse.start = gp__pb_pos(pb) + (uint64_t)(p - pb->p);
  p = gp__pb_put_uint(p, GP_PB_RSE_EVENT_ID, gp__tw_event_id(w, g->corr));
  p = gp__pb_put_uint(p, GP_PB_RSE_DURATION,
                      g->end > g->start ? g->end - g->start : 0);
  if (site) {
    /* A copy of fixed size (within the 44 bytes reserved for the four
     * fields): past site->len it is free space. */
    memcpy(p, site->bytes, sizeof(site->bytes));
    p += site->len;
  } else {
    p = put_site(p, g, ctx_iid, q_iid, s_iid);
  }
  pb->p = p;
  for (uint32_t i = 0; i < g->nwaits; i++)
    gp__pb_uint(pb, GP_PB_RSE_EVENT_WAIT_IDS, gp__tw_event_id(w, g->waits[i]));
  if (g->name_iid)
    gp__pb_uint(pb, GP_PB_RSE_NAME_IID, g->name_iid);
}

/* A packet at ts with one TrackEvent (gp__tw_put_track_event()). */
static void track_event_packet(gp__tw *w, uint64_t ts, uint32_t flags,
                               uint32_t type, uint64_t name_iid,
                               uint64_t uuid) {
  uint8_t *p = gp__tw_packet_open(w, ts, flags, 35);
  if (p)
    p = gp__tw_put_track_event(p, type, name_iid, uuid);
  gp__tw_packet_close(w, p);
}

/* Writes the slice of g on its stream track: a begin and an end packet.
 * Both are plain unless the name's interned entry has to go first; plain,
 * they are assembled in one reservation (2 * (48 + 35)), the TrackEvents
 * from the bytes kept with g's site (NULL: none) when it has them. */
WORK_STEP void write_slice(gp__tw *w, const gpu_work *g,
                           const struct tw_site *site, uint64_t name_iid,
                           uint64_t uuid) {
  gp__pb_writer *pb = &w->pb;
  if (GP_LIKELY(gp__tw_packet_plain(w) && gp__pb_reserve(pb, 2 * 83))) {
    uint8_t *p0 = pb->p;
    uint8_t *p = gp__tw_put_packet_head(w, p0, g->start,
                                        GP_PB_SEQ_NEEDS_INCREMENTAL_STATE);
    if (site && site->end_len) {
      /* The site's end TrackEvent is this slice's (its uuid is this
       * stream's): its first four bytes (tag, length, type) and its
       * track_uuid field are the begin's too, and it ends the slice as
       * it is. Fixed-size copies, within the 35 bytes reserved for
       * each TrackEvent. */
      uint8_t *te = p;
      memcpy(te, site->end, 4);
      te[3] = GP_PB_TE_TYPE_SLICE_BEGIN;
      p = te + 4;
      if (name_iid)
        p = gp__pb_put_uint(p, GP_PB_TE_NAME_IID, name_iid);
      memcpy(p, site->end + 4, 12);
      p += site->end_len - 4;
      te[1] = (uint8_t)(p - te - 2);
      gp__pb_put_len2(p0 + 1, (uint64_t)(p - p0 - 3));
      uint8_t *p1 = p;
      p = gp__tw_put_packet_head(w, p1, g->end, 0);
      memcpy(p, site->end, sizeof(site->end));
      p += site->end_len;
      gp__pb_put_len2(p1 + 1, (uint64_t)(p - p1 - 3));
      pb->p = p;
    } else {
      p = gp__tw_put_track_event(p, GP_PB_TE_TYPE_SLICE_BEGIN, name_iid, uuid);
      gp__pb_put_len2(p0 + 1, (uint64_t)(p - p0 - 3));
      pb->p = gp__tw_put_slice_end_packet(w, p, g->end, uuid);
    }
    w->st.packets += 2;
    return;
  }
  track_event_packet(w, g->start, GP_PB_SEQ_NEEDS_INCREMENTAL_STATE,
                     GP_PB_TE_TYPE_SLICE_BEGIN, name_iid, uuid);
  track_event_packet(w, g->end, 0, GP_PB_TE_TYPE_SLICE_END, 0, uuid);
}

/* write_slice() takes a begin TrackEvent's tag, length and type from an
 * end's four bytes: one byte each, and a length under 128. */
_Static_assert(((GP_PB_PACKET_TRACK_EVENT << 3) | GP_PB_LEN) < 0x80 &&
                   ((GP_PB_TE_TYPE << 3) | GP_PB_VARINT) < 0x80 &&
                   GP_PB_TE_TYPE_SLICE_BEGIN < 0x80 &&
                   GP_PB_TE_TYPE_SLICE_END < 0x80,
               "TrackEvent head bytes");

/* Closes the event and packet; mirrors the work on its stream track. */
WORK_STEP void work_end(gp__tw *w, const gpu_work *g,
                        const struct tw_site *site, uint64_t stream_uuid) {
  gp__pb_end_medium(&w->pb, w->rse);
  gp__tw_packet_end(w);
  w->st.render_stages++;
  if (!stream_uuid)
    return;
  /* A kernel's name was looked up for its render stage already, in the
   * same generation. */
  uint64_t name_iid =
      g->name_iid ? g->name_iid : gp__tw_event_name(w, g->name_id);
  write_slice(w, g, site, name_iid, stream_uuid);
  w->st.track_events += 2;
}

/* Track descriptors first (they are packets of their own), then the
 * interned entries the event needs, which go into its packet. Returns
 * the stream track's uuid (0: no slices) and the op's site: in *site one
 * holding its fields encoded, or NULL and the iids in the rest.
 *
 * Ops on a stream come in runs on the same queue and stage, or alternate
 * between two (a copy's queue and a fill's): the last two ops' sites are
 * kept in the stream's slot, and an op with one of them in the same
 * generation finds everything already described and emitted (devices
 * stay known, tracks described; queues, stages and contexts stay emitted
 * until the generation changes). */
WORK_STEP uint64_t work_prepare(gp__tw *w, const gpu_work *g,
                                struct tw_site **site, uint64_t *ctx_iid,
                                uint64_t *q_iid, uint64_t *s_iid) {
  gp__tw_saw_ts(w, g->end);
  uint64_t key = g->stream | ((uint64_t)g->context << 32);
  struct tw_stream_slot *c = stream_slot(w, g->context, g->stream);
  if (c->key == key) {
    for (int i = 0; i < 2; i++) {
      struct tw_site *t = &c->site[i];
      if (t->gen == w->gen && t->stage == g->stage && t->queue == g->queue &&
          t->device == g->device) {
        *site = t;
        return t->uuid;
      }
    }
  } else {
    /* Forgotten: stream_track() may give the slot to this stream, whose
     * sites they are not. */
    c->site[0].gen = c->site[1].gen = 0;
  }
  *site = NULL;
  if (g->device < TW_MAX_DEVICES && !w->dev[g->device].known)
    gp__tw_device_seen(w, g->device);
  /* A stream is on one device: whether it has slices is the same for
   * every op with this key. */
  bool slices = w->o.stream_slices &&
                !(w->o.work_by_vendor && g->device < TW_MAX_DEVICES &&
                  w->dev[g->device].no_slices);
  uint64_t stream_uuid = 0;
  if (slices)
    stream_uuid = stream_track(w, g->device, g->context, g->stream);
  *ctx_iid = context_iid(w, g->context, g->device);
  *q_iid = queue_iid(w, g->device, g->queue);
  *s_iid = stage_iid(w, g->stage);
  /* Kept only when every step above is done for good: the track
   * described (stream_track() took the slot), the context queued
   * (context_iid() remembered it), the device and queue not past the
   * arrays that remember theirs. */
  const struct tw_ctx_slot *cc = &w->ctx_cache[g->context % TW_CTX_CACHE];
  if (cc->gen != w->gen || cc->ctx != g->context ||
      g->device >= TW_MAX_DEVICES || g->queue >= TW_DIRECT_QUEUES ||
      g->stage >= GP_ARRAY_SIZE(w->stage_gen))
    return stream_uuid;
  if (slices) {
    if (c->key != key || !c->uuid)
      return stream_uuid;
  } else if (c->key != key) {
    c->key = key;
    c->uuid = 0; /* no stream track: nothing to remember for it */
  }
  /* The newest first: what site 0 held moves to site 1. */
  struct tw_site *t = &c->site[0];
  if (t->gen == w->gen)
    c->site[1] = *t;
  t->len =
      (uint8_t)(put_site(t->bytes, g, *ctx_iid, *q_iid, *s_iid) - t->bytes);
  t->uuid = stream_uuid;
  t->end_len = 0;
  if (stream_uuid)
    t->end_len =
        (uint8_t)(gp__tw_put_track_event(t->end, GP_PB_TE_TYPE_SLICE_END, 0,
                                         stream_uuid) -
                  t->end);
  t->device = g->device;
  t->queue = g->queue;
  t->stage = g->stage;
  t->gen = w->gen;
  *site = t;
  return stream_uuid;
}

static void extra(gp__pb_writer *pb, const char *name, uint64_t v) {
  char num[24];
  size_t n = gp__tw_u64_to_str(v, num);
  gp__pb_short s = gp__pb_begin_short(pb, GP_PB_RSE_EXTRA_DATA);
  gp__pb_string(pb, GP_PB_EXTRA_NAME, name);
  gp__pb_bytes(pb, GP_PB_EXTRA_VALUE, num, n);
  gp__pb_end_short(pb, s);
}

static void extra_str(gp__pb_writer *pb, const char *name, const char *v) {
  gp__pb_short s = gp__pb_begin_short(pb, GP_PB_RSE_EXTRA_DATA);
  gp__pb_string(pb, GP_PB_EXTRA_NAME, name);
  gp__pb_string(pb, GP_PB_EXTRA_VALUE, v);
  gp__pb_end_short(pb, s);
}

static const char *memory_kind_name(uint32_t k) {
  static const char *const names[] = {"unknown", "pageable", "pinned",
                                      "device",  "array",    "managed"};
  return k < GP_ARRAY_SIZE(names) ? names[k] : "unknown";
}

/* Encodes the launch message of a kernel record into the writer. */
static void encode_launch(gp__pb_writer *pb, const void *record) {
  const gp_activity_kernel *k = record;
  gp__pb_short launch = gp__pb_begin_medium(pb, GP_PB_RSE_LAUNCH);
  dim3(pb, GP_PB_LAUNCH_GRID_SIZE, k->grid_x, k->grid_y, k->grid_z);
  dim3(pb, GP_PB_LAUNCH_WORKGROUP_SIZE, k->block_x, k->block_y, k->block_z);
  uint64_t grid = (uint64_t)k->grid_x * k->grid_y * k->grid_z;
  uint64_t block = (uint64_t)k->block_x * k->block_y * k->block_z;
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_GRID_X, k->grid_x);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_GRID_Y, k->grid_y);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_GRID_Z, k->grid_z);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_BLOCK_X, k->block_x);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_BLOCK_Y, k->block_y);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_BLOCK_Z, k->block_z);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_GRID_SIZE, grid);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_BLOCK_SIZE, block);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_THREAD_COUNT, grid * block);
  uint_arg(pb, GP_PB_LAUNCH_ARGS, ARG_SMEM_DYNAMIC, k->dynamic_shared_memory);
  gp__pb_end_medium(pb, launch);
}

/*
 * Tails: the launch message of a kernel, the extra data of a copy or a
 * fill. Programs launch the same shapes and copy the same sizes again
 * and again, so encoded tails are kept in a small cache by what they
 * encode (key[0] says which kind of tail) and copied: the bytes are the
 * same as encoding them afresh. The cache is two-way: a key lives in
 * slot i or i ^ 1, the newest in i. Direct-mapped, two of the dozen
 * tails a program uses shared a slot more often than not, and each
 * evicted the other on every call (a missed copy costs ~1400
 * instructions, a hit ~80).
 */
enum { TAIL_LAUNCH = 1, TAIL_MEMCPY, TAIL_MEMSET };

typedef void (*tail_encoder)(gp__pb_writer *pb, const void *record);

/* Copies t's bytes into the writer if t holds key; false if not (or if
 * memory ran out, when the encoder is left to fail as it would). */
static inline bool tail_copy(gp__pb_writer *pb, const struct tw_tail *t,
                             const uint32_t key[TW_TAIL_KEY]) {
  if (!t->len || memcmp(t->key, key, sizeof(t->key)) != 0 ||
      !gp__pb_reserve(pb, sizeof(t->bytes)))
    return false;
  /* A copy of fixed size, cheaper than one of t->len bytes: what it puts
   * past the new pb->p is free space, not content. */
  memcpy(pb->p, t->bytes, sizeof(t->bytes));
  pb->p += t->len;
  return true;
}

WORK_STEP void write_tail(gp__tw *w, struct tw_site *site,
                          const uint32_t key[TW_TAIL_KEY], tail_encoder encode,
                          const void *record) {
  gp__pb_writer *pb = &w->pb;
  /* Copies and fills at one site mostly repeat its last tail: tried
   * first, it saves the hash (the key compare says whether it is). */
  if (site && site->tail && tail_copy(pb, site->tail, key))
    return;
  /* Four independent products, not a chain of seven. */
  uint64_t h = (key[0] | (uint64_t)key[1] << 32) * 0x9e3779b97f4a7c15ull ^
               (key[2] | (uint64_t)key[3] << 32) * 0xbf58476d1ce4e5b9ull ^
               (key[4] | (uint64_t)key[5] << 32) * 0x94d049bb133111ebull ^
               (key[6] | (uint64_t)key[7] << 32) * 0xd6e8feb86659fd93ull;
  if (!w->tails)
    w->tails = calloc(TW_TAIL_CACHE, sizeof(*w->tails));
  /* The slot from the top bits of h mixed once more, which every key
   * bit reaches (bits 40 .. 45 of the products, as before, saw nothing of
   * a high word's bits 14 and up: copies of any large power-of-two size
   * shared a slot). */
  h = (h ^ h >> 32) * 0x9e3779b97f4a7c15ull;
  struct tw_tail *t = NULL;
  if (w->tails) {
    t = &w->tails[(size_t)((h >> 32) * TW_TAIL_CACHE >> 32)];
    struct tw_tail *t1 = &w->tails[(size_t)(t - w->tails) ^ 1];
    const struct tw_tail *hit = tail_copy(pb, t, key)    ? t
                                : tail_copy(pb, t1, key) ? t1
                                                         : NULL;
    if (hit) {
      if (site)
        site->tail = hit;
      return;
    }
  }
  uint64_t at = gp__pb_size(pb);
  const uint8_t *p0 = pb->p;
  encode(pb, record);
  size_t len = (size_t)(gp__pb_size(pb) - at);
  /* Cache it if it was written in one piece (not across chunks); what
   * slot i held moves to i ^ 1. */
  if (t && len < sizeof(t->bytes) && pb->p == p0 + len) {
    if (t->len)
      w->tails[(size_t)(t - w->tails) ^ 1] = *t;
    memcpy(t->key, key, sizeof(t->key));
    memcpy(t->bytes, p0, len);
    t->len = (uint8_t)len;
    if (site)
      site->tail = t;
  }
}

static void encode_memcpy_extra(gp__pb_writer *pb, const void *record) {
  const gp_activity_memcpy *m = record;
  extra(pb, "bytes", m->bytes);
  extra_str(pb, "src_kind", memory_kind_name(m->src_kind));
  extra_str(pb, "dst_kind", memory_kind_name(m->dst_kind));
  if (m->src_device_id != UINT32_MAX)
    extra(pb, "src_device", m->src_device_id);
  if (m->dst_device_id != UINT32_MAX)
    extra(pb, "dst_device", m->dst_device_id);
}

static void encode_memset_extra(gp__pb_writer *pb, const void *record) {
  const gp_activity_memset *m = record;
  extra(pb, "bytes", m->bytes);
  extra(pb, "value", m->value);
}

/* A kernel's slice; cdp: the CDP record it was made from, or NULL.
 * Inlined into both callers, so a kernel's slice pays nothing for it. */
static inline __attribute__((always_inline)) void
kernel_slice(gp__tw *w, const gp_activity_kernel *k,
             const gp_activity_cdp_kernel *cdp) {
  uint64_t start = k->start, end = k->end;
  if (gp__tw_untimed(w, k->queued, &start, &end))
    return;
  gpu_work g = {k->correlation_id,
                start,
                end,
                k->device_id,
                k->context_id,
                k->stream_id,
                k->queue_id,
                STAGE_KERNEL,
                0,
                0,
                NULL,
                0};
  if (k->num_wait_ids)
    g.waits = gp_activity_wait_ids(&k->hdr, &g.nwaits);
  struct tw_site *site;
  uint64_t ctx = 0, q = 0, s = 0; /* set unless the site is */
  uint64_t stream_uuid = work_prepare(w, &g, &site, &ctx, &q, &s);
  uint64_t kernel = kernel_iid(w, k, &g.name_id);
  g.name_iid = gp__tw_event_name(w, g.name_id);
  need_arg_names(w);
  work_begin(w, &g, site, ctx, q, s);
  if (kernel)
    gp__pb_uint(&w->pb, GP_PB_RSE_KERNEL_IID, kernel);
  const uint32_t key[TW_TAIL_KEY] = {
      TAIL_LAUNCH, k->grid_x,  k->grid_y,  k->grid_z,
      k->block_x,  k->block_y, k->block_z, k->dynamic_shared_memory};
  /* Not by site: a stream's kernels alternate between launch shapes, and
   * the guess missed more often than it saved the hash. */
  write_tail(w, NULL, key, encode_launch, k);
  if (cdp) { /* a child grid: which grid and block launched it */
    extra(&w->pb, "grid_id", (uint64_t)cdp->grid_id);
    extra(&w->pb, "parent_grid_id", (uint64_t)cdp->parent_grid_id);
    char b[40];
    snprintf(b, sizeof(b), "%u,%u,%u", cdp->parent_block_x, cdp->parent_block_y,
             cdp->parent_block_z);
    extra_str(&w->pb, "parent_block", b);
  }
  work_end(w, &g, site, stream_uuid);
}

/* See writerInt.h. */
void gp__tw_gpu_kernel(gp__tw *w, const gp_activity_kernel *k) {
  kernel_slice(w, k, NULL);
}

/* See writerInt.h. */
void gp__tw_gpu_cdp_kernel(gp__tw *w, const gp_activity_cdp_kernel *c) {
  /* The grid id stands for the correlation id: unique (the simulator
   * takes it from the same counter), and no API call has it, so no flow
   * leads to a child grid. */
  gp_activity_kernel k = {.hdr = {GP_ACTIVITY_KIND_KERNEL, sizeof(k)},
                          .correlation_id = (uint64_t)c->grid_id,
                          .queued = c->queued,
                          .submitted = c->submitted,
                          .start = c->start,
                          .end = c->end,
                          .device_id = c->device_id,
                          .context_id = c->context_id,
                          .stream_id = c->stream_id,
                          .queue_id = c->queue_id,
                          .name_id = c->name_id,
                          .grid_x = c->grid_x,
                          .grid_y = c->grid_y,
                          .grid_z = c->grid_z,
                          .block_x = c->block_x,
                          .block_y = c->block_y,
                          .block_z = c->block_z,
                          .static_shared_memory = c->static_shared_memory,
                          .dynamic_shared_memory = c->dynamic_shared_memory,
                          .registers_per_thread = c->registers_per_thread};
  kernel_slice(w, &k, c);
}

/* See writerInt.h. */
void gp__tw_gpu_memcpy(gp__tw *w, const gp_activity_memcpy *m) {
  uint64_t start = m->start, end = m->end;
  if (gp__tw_untimed(w, m->queued, &start, &end))
    return;
  uint32_t stage =
      STAGE_MEMCPY_FIRST +
      (m->copy_kind <= GP_MEMCPY_PTOP ? m->copy_kind : GP_MEMCPY_UNKNOWN);
  gpu_work g = {m->correlation_id,
                start,
                end,
                m->device_id,
                m->context_id,
                m->stream_id,
                m->queue_id,
                stage,
                0,
                stage_string(w, stage),
                NULL,
                0};
  if (m->num_wait_ids)
    g.waits = gp_activity_wait_ids(&m->hdr, &g.nwaits);
  struct tw_site *site;
  uint64_t ctx = 0, q = 0, s = 0; /* set unless the site is */
  uint64_t stream_uuid = work_prepare(w, &g, &site, &ctx, &q, &s);
  work_begin(w, &g, site, ctx, q, s);
  const uint32_t key[TW_TAIL_KEY] = {
      TAIL_MEMCPY, (uint32_t)m->bytes, (uint32_t)(m->bytes >> 32), m->src_kind,
      m->dst_kind, m->src_device_id,   m->dst_device_id,           0};
  write_tail(w, site, key, encode_memcpy_extra, m);
  work_end(w, &g, site, stream_uuid);
}

/* See writerInt.h. */
void gp__tw_gpu_memset(gp__tw *w, const gp_activity_memset *m) {
  uint64_t start = m->start, end = m->end;
  if (gp__tw_untimed(w, m->queued, &start, &end))
    return;
  gpu_work g = {m->correlation_id,
                start,
                end,
                m->device_id,
                m->context_id,
                m->stream_id,
                m->queue_id,
                STAGE_MEMSET,
                0,
                stage_string(w, STAGE_MEMSET),
                NULL,
                0};
  if (m->num_wait_ids)
    g.waits = gp_activity_wait_ids(&m->hdr, &g.nwaits);
  struct tw_site *site;
  uint64_t ctx = 0, q = 0, s = 0; /* set unless the site is */
  uint64_t stream_uuid = work_prepare(w, &g, &site, &ctx, &q, &s);
  work_begin(w, &g, site, ctx, q, s);
  const uint32_t key[TW_TAIL_KEY] = {TAIL_MEMSET,
                                     (uint32_t)m->bytes,
                                     (uint32_t)(m->bytes >> 32),
                                     m->value,
                                     0,
                                     0,
                                     0,
                                     0};
  write_tail(w, site, key, encode_memset_extra, m);
  work_end(w, &g, site, stream_uuid);
}

/* See writerInt.h: a part of a graphics submission. Its name is the
 * debug label or object name the program gave it, else the stage's. */
void gp__tw_gpu_render_stage(gp__tw *w, const gp_activity_render_stage *r) {
  uint64_t start = r->start, end = r->end;
  if (gp__tw_untimed(w, r->queued, &start, &end))
    return;
  uint32_t stage = STAGE_GRAPHICS_FIRST + (r->stage < GP_RENDER_STAGE_KIND_COUNT
                                               ? r->stage
                                               : GP_RENDER_STAGE_TRANSFER);
  gpu_work g = {r->correlation_id,
                start,
                end,
                r->device_id,
                r->context_id,
                r->stream_id,
                r->queue_id,
                stage,
                0,
                r->name_id ? r->name_id : stage_string(w, stage),
                NULL,
                0};
  if (r->num_wait_ids)
    g.waits = gp_activity_wait_ids(&r->hdr, &g.nwaits);
  struct tw_site *site;
  uint64_t ctx = 0, q = 0, s = 0; /* set unless the site is */
  uint64_t stream_uuid = work_prepare(w, &g, &site, &ctx, &q, &s);
  if (r->name_id)
    g.name_iid = gp__tw_event_name(w, r->name_id);
  work_begin(w, &g, site, ctx, q, s);
  gp__pb_writer *pb = &w->pb;
  if (r->render_target)
    gp__pb_uint(pb, GP_PB_RSE_RENDER_TARGET_HANDLE, r->render_target);
  if (r->render_pass)
    gp__pb_uint(pb, GP_PB_RSE_RENDER_PASS_HANDLE, r->render_pass);
  if (r->submission_id)
    gp__pb_uint(pb, GP_PB_RSE_SUBMISSION_ID, r->submission_id);
  if (r->command_buffer)
    gp__pb_uint(pb, GP_PB_RSE_COMMAND_BUFFER_HANDLE, r->command_buffer);
  work_end(w, &g, site, stream_uuid);
}
