/*
 * parse_render.c - GPU render stages (kernels, copies, graphics stages):
 * hardware-queue tracks with overlap compression, slice names, the args
 * Perfetto attaches to them, GPU contexts, and the flows between GPU
 * slices and track events (event_wait_ids, GpuCorrelation), in whichever
 * order the two ends arrive.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define VK_OBJECT_TYPE_COMMAND_BUFFER 6
#define VK_OBJECT_TYPE_RENDER_PASS 18
#define VK_OBJECT_TYPE_FRAMEBUFFER 24
#define MAX_WAITS 256
#define MAX_MASKS 64

/* A decoded GpuRenderStageEvent. */
typedef struct rs {
  bool has_event_id, has_hwq_iid, has_stage_iid, has_stage_id, has_context;
  bool has_name_iid, has_name, has_kernel_iid, has_gpu;
  uint64_t event_id, duration, hwq_iid, stage_iid, context, rt, rp, rpi, cb;
  uint64_t name_iid, kernel_iid;
  int32_t hwq_id, stage_id, gpu;
  uint32_t submission_id;
  const uint8_t *name, *specs, *launch;
  size_t name_len, specs_len, launch_len;
  uint32_t nwaits;
  uint32_t nmasks;
  bool has_masks;
  /* Last, and not cleared: only their first nwaits / nmasks are read. */
  uint64_t waits[MAX_WAITS];
  uint64_t masks[MAX_MASKS];
} rs;

static int decode_rs(gp__tp_importer *imp, const gp__tp_pkt *p, rs *e) {
  memset(e, 0, offsetof(rs, waits));
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type == GP_PB_VARINT) {
      uint64_t v = f.value;
      switch (f.id) {
      case 1:
        e->has_event_id = true;
        e->event_id = v;
        break;
      case 2:
        e->duration = v;
        break;
      case 3:
        e->hwq_id = (int32_t)(uint32_t)v;
        break;
      case 4:
        e->has_stage_id = true;
        e->stage_id = (int32_t)(uint32_t)v;
        break;
      case 5:
        e->has_context = true;
        e->context = v;
        break;
      case 8:
        e->rt = v;
        break;
      case 9:
        e->rp = v;
        break;
      case 10:
        e->submission_id = (uint32_t)v;
        break;
      case 11:
        e->has_gpu = true;
        e->gpu = (int32_t)(uint32_t)v;
        break;
      case 12:
        e->cb = v;
        break;
      case 13:
        e->has_hwq_iid = true;
        e->hwq_iid = v;
        break;
      case 14:
        e->has_stage_iid = true;
        e->stage_iid = v;
        break;
      case 15:
        e->has_masks = true;
        if (e->nmasks < MAX_MASKS)
          e->masks[e->nmasks++] = v;
        break;
      case 16:
        e->rpi = v;
        break;
      case 18:
        if (e->nwaits < MAX_WAITS)
          e->waits[e->nwaits++] = v;
        break;
      case 19:
        e->has_kernel_iid = true;
        e->kernel_iid = v;
        break;
      case 20:
        e->has_name_iid = true;
        e->name_iid = v;
        break;
      default:
        break;
      }
    } else if (f.wire_type == GP_PB_LEN) {
      if (f.id == 17) {
        e->has_name = true;
        e->name = f.data;
        e->name_len = f.size;
      } else if (f.id == 7) {
        e->specs = f.data;
        e->specs_len = f.size;
      } else if (f.id == 21) {
        e->launch = f.data;
        e->launch_len = f.size;
      }
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuRenderStageEvent");
  return 0;
}

/* Name (field 1) and description (field 2) of a Specifications entry;
 * NONE when absent. */
static int decode_desc(gp__tp_importer *imp, const gp__pb_reader *parent,
                       const gp__pb_field *pf, bool *has_name, uint32_t *name,
                       uint32_t *desc) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  *has_name = false;
  *name = *desc = GP_TP_NONE;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    int rc2 = 0;
    if (f.id == 1) {
      *has_name = true;
      rc2 = gp__tp_intern(imp, f.data, f.size, name);
    } else if (f.id == 2) {
      rc2 = gp__tp_intern(imp, f.data, f.size, desc);
    }
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "render stage specification");
  return 0;
}

static void stage_dims(gp__tp_importer *imp, gp__tp_argb *dims, uint32_t ugpu,
                       uint32_t gpu, bool iid, uint64_t hwq,
                       uint32_t hwq_name) {
  dims->n = 0;
  gp__tp_argb_int(dims, imp->k_dims[0], ugpu);
  gp__tp_argb_int(dims, imp->k_dims[1], gpu);
  gp__tp_argb_str(dims, imp->k_dims[2], iid ? imp->k_src_iid : imp->k_src_id);
  gp__tp_argb_int(dims, imp->k_dims[3], (uint32_t)hwq);
  gp__tp_argb_str(dims, imp->k_dims[4], hwq_name);
}

/* Legacy Specifications: hardware queues by index, stages appended. */
static int parse_specs(gp__tp_importer *imp, const gp__tp_pkt *p, const rs *e,
                       uint32_t gpu, int64_t *pid) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__pb_reader_init(&r, e->specs, e->specs_len, gp__tp_off(imp, e->specs));
  uint32_t qid = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    bool has_name;
    uint32_t name, desc;
    if (f.id == 2) {
      uint32_t id = qid++;
      int rc2 = decode_desc(imp, &r, &f, &has_name, &name, &desc);
      if (rc2)
        return rc2;
      if (!has_name)
        continue;
      if (id >= imp->hwq_legacy.n) {
        size_t n = imp->hwq_legacy.n;
        if (!gp__tp_vec_reserve(&imp->hwq_legacy, id + 1 - n))
          return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
        memset(imp->hwq_legacy.v + n, 0,
               (id + 1 - n) * sizeof(imp->hwq_legacy.v[0]));
        imp->hwq_legacy.n = id + 1;
      }
      imp->hwq_legacy.v[id].name = name;
      imp->hwq_legacy.v[id].description = desc;
      imp->hwq_legacy.v[id].set = true;
      uint64_t *ph = gp__tp_map_get(&imp->hwq_placeholder, id);
      if (!ph || !*ph)
        continue;
      *ph = 0;
      /* The queue's placeholder track gets its name and description. */
      uint32_t ugpu;
      gp__tp_argb dims;
      if ((rc2 = gp__tp_gpu_get(imp, p->machine, gpu, &ugpu)))
        return rc2;
      stage_dims(imp, &dims, ugpu, gpu, false, id, GP_TP_NONE);
      uint32_t set;
      if (gp__tp_argset_commit(imp->db, &dims, &set))
        return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
      uint64_t *ci = gp__tp_map_get(&imp->cset_by_dims, set);
      if (!ci || imp->csets.v[*ci].t.n == 0)
        continue;
      gp__tp_track *t = &imp->db->tracks.v[imp->csets.v[*ci].t.v[0].track];
      t->name = name;
      gp__tp_argb src;
      src.n = 0;
      gp__tp_argb_str(&src, imp->db->k_description, desc);
      if (gp__tp_argset_commit(imp->db, &src, &t->source))
        return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
      t->description = desc;
    } else if (f.id == 3) {
      int rc2 = decode_desc(imp, &r, &f, &has_name, &name, &desc);
      if (rc2)
        return rc2;
      if (has_name &&
          !gp__tp_vec_push(&imp->stage_legacy, ((gp__tp_stage){name, desc})))
        return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    } else if (f.id == 1) {
      gp__pb_reader_sub(&sub, &r, &f);
      int rc2;
      while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0)
        if (g.id == 2 && g.wire_type == GP_PB_VARINT)
          *pid = (int32_t)(uint32_t)g.value;
      if (rc2 < 0)
        return gp__tp_corrupt(imp, &sub, "render stage context_spec");
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "render stage specifications");
  return 0;
}

/* An InternedGpuRenderStageSpecification, decoded once. */
static int stage_spec(gp__tp_importer *imp, uint32_t gen, uint64_t iid,
                      bool *found, uint32_t *name, uint32_t *desc,
                      int64_t *category) {
  *found = false;
  *name = *desc = GP_TP_NONE;
  *category = 0;
  gp__tp_interned *in = gp__tp_interned_get(imp, imp->gens.v[gen].ns,
                                            GP_TP_IN_GPU_SPECIFICATIONS, iid);
  if (!in)
    return 0;
  *found = true;
  if (in->cache != GP_TP_NONE) {
    const gp__tp_spec_cache *c = &imp->spec_cache.v[in->cache];
    *name = c->name;
    *desc = c->description;
    *category = c->category;
    return 0;
  }
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, in->off, in->len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    int rc2 = 0;
    if (f.id == 2 && f.wire_type == GP_PB_LEN)
      rc2 = gp__tp_intern(imp, f.data, f.size, name);
    else if (f.id == 3 && f.wire_type == GP_PB_LEN && f.size > 0)
      rc2 = gp__tp_intern(imp, f.data, f.size, desc);
    else if (f.id == 4 && f.wire_type == GP_PB_VARINT)
      *category = (int64_t)f.value;
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "InternedGpuRenderStageSpecification");
  gp__tp_spec_cache c = {*name, *desc, *category};
  if (imp->spec_cache.n >= GP_TP_NONE - 2 ||
      !gp__tp_vec_push(&imp->spec_cache, c))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  in->cache = (uint32_t)imp->spec_cache.n - 1;
  return 0;
}

/* The compression set of a queue's dimensions (cached by them). */
static int cset_for(gp__tp_importer *imp, uint32_t ugpu, uint32_t gpu, bool iid,
                    uint64_t hwq, uint32_t dim_name, uint32_t *out) {
  uint64_t k1 = (uint64_t)ugpu << 33 | (uint64_t)iid << 32 | dim_name;
  uint64_t k2 = (uint32_t)hwq;
  uint64_t *c = gp__tp_map2_get(&imp->track_cache, k1, k2);
  if (c) {
    *out = (uint32_t)*c;
    return 0;
  }
  gp__tp_argb dims;
  stage_dims(imp, &dims, ugpu, gpu, iid, hwq, dim_name);
  uint32_t set;
  if (gp__tp_argset_commit(imp->db, &dims, &set))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  bool ins;
  uint64_t *ci = gp__tp_map_put(&imp->cset_by_dims, set, imp->csets.n, &ins);
  if (!ci ||
      (ins && !gp__tp_vec_push(
                  &imp->csets,
                  ((gp__tp_cset){.dims = set, .group = imp->track_groups++}))))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  if (!gp__tp_map2_put(&imp->track_cache, k1, k2, *ci, NULL))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  *out = (uint32_t)*ci;
  return 0;
}

/* The track of a render stage: its queue's spec, placed by
 * gp__tp_stage_track (render_tracks.c). */
static int stage_track(gp__tp_importer *imp, uint32_t ci, uint32_t name,
                       uint32_t desc, uint32_t machine, uint32_t ugpu,
                       uint32_t gpu, int64_t ts, int64_t dur, uint32_t *out) {
  gp__tp_argb src;
  src.n = 0;
  if (desc != GP_TP_NONE)
    gp__tp_argb_str(&src, imp->db->k_description, desc);
  gp__tp_track_spec spec = {"gpu_render_stage",
                            name,
                            false,
                            GP_TP_NONE,
                            machine,
                            &src,
                            ugpu,
                            gpu,
                            -1,
                            -1,
                            GP_TP_NONE};
  return gp__tp_stage_track(imp, ci, &spec, ts, dur, out);
}

/* One ExtraComputeArg into b (skipped without a name). */
static int compute_arg(gp__tp_importer *imp, uint32_t gen,
                       const gp__pb_reader *parent, const gp__pb_field *pf,
                       gp__tp_argb *b) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  uint32_t key = GP_TP_NONE;
  bool has_name_iid = false;
  uint64_t name_iid = 0;
  int type = -1;
  int64_t val = 0;
  uint64_t str_iid = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    int rc2 = 0;
    bool v = f.wire_type == GP_PB_VARINT;
    if (f.id == 1 && v) {
      has_name_iid = true;
      name_iid = f.value;
    } else if (f.id == 2 && f.wire_type == GP_PB_LEN) {
      rc2 = gp__tp_intern(imp, f.data, f.size, &key);
    } else if (f.id == 3 && v) {
      type = GP_TP_ARG_INT;
      val = (int64_t)f.value;
    } else if (f.id == 4 && v) {
      type = GP_TP_ARG_UINT;
      val = (int64_t)f.value;
    } else if (f.id == 5 && f.wire_type == GP_PB_I64) {
      type = GP_TP_ARG_REAL;
      val = (int64_t)f.value;
    } else if (f.id == 6 && f.wire_type == GP_PB_LEN) {
      uint32_t s;
      rc2 = gp__tp_intern(imp, f.data, f.size, &s);
      type = GP_TP_ARG_STRING;
      val = s;
    } else if (f.id == 7 && v) {
      type = 100; /* string by iid */
      str_iid = f.value;
    }
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "ExtraComputeArg");
  if (has_name_iid) {
    key = gp__tp_interned_str(imp, gen, GP_TP_IN_COMPUTE_ARG_NAMES, name_iid, 2,
                              &rc);
    if (rc)
      return rc;
  }
  if (key == GP_TP_NONE || type < 0)
    return 0;
  if (type == 100) {
    uint32_t s = gp__tp_interned_str(
        imp, gen, GP_TP_IN_DEBUG_ANNOTATION_STRING_VALUES, str_iid, 2, &rc);
    if (rc || s == GP_TP_NONE)
      return rc;
    type = GP_TP_ARG_STRING;
    val = s;
  }
  gp__tp_argb_add(b, key, key, (uint8_t)type, val);
  return 0;
}

static int kernel_args(gp__tp_importer *imp, uint32_t gen, uint64_t iid,
                       gp__tp_argb *b) {
  gp__tp_interned *in = gp__tp_interned_get(imp, imp->gens.v[gen].ns,
                                            GP_TP_IN_COMPUTE_KERNELS, iid);
  if (!in)
    return 0;
  if (in->cache == GP_TP_NONE) {
    /* Decode once: names in field order 2, 3, 4, then the args. */
    gp__tp_argb *k = malloc(sizeof(*k));
    if (!k)
      return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    k->n = 0;
    k->overflow = false;
    gp__pb_reader r;
    gp__pb_field f;
    int rc = 0;
    for (uint32_t want = 2; want <= 5 && !rc; want++) {
      gp__tp_reader_at(imp, &r, in->off, in->len);
      while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
        if (f.id != want || f.wire_type != GP_PB_LEN)
          continue;
        int rc2;
        if (want == 5) {
          rc2 = compute_arg(imp, gen, &r, &f, k);
        } else {
          uint32_t str;
          rc2 = gp__tp_intern(imp, f.data, f.size, &str);
          if (!rc2)
            gp__tp_argb_str(k, imp->k_kernel[want - 2], str);
        }
        if (rc2) {
          rc = rc2;
          break;
        }
      }
      if (rc < 0)
        rc = gp__tp_corrupt(imp, &r, "InternedComputeKernel");
    }
    gp__tp_args_cache c = {(uint32_t)imp->cached_args.n, k->n, 0};
    if (!rc && (!gp__tp_vec_reserve(&imp->cached_args, k->n) ||
                !gp__tp_vec_push(&imp->args_cache, c)))
      rc = gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    if (!rc && k->n) { /* (an empty cache may have no array yet) */
      memcpy(imp->cached_args.v + imp->cached_args.n, k->a,
             k->n * sizeof(gp__tp_arg));
    }
    if (!rc) {
      imp->cached_args.n += k->n;
      in->cache = (uint32_t)imp->args_cache.n - 1;
    }
    free(k);
    if (rc)
      return rc;
  }
  const gp__tp_args_cache *c = &imp->args_cache.v[in->cache];
  for (uint32_t i = 0; i < c->n; i++) {
    const gp__tp_arg *a = &imp->cached_args.v[c->first + i];
    gp__tp_argb_add(b, a->key, a->flat_key, a->type, a->value);
  }
  return 0;
}

static int dim3_args(gp__tp_importer *imp, const gp__pb_reader *parent,
                     const gp__pb_field *pf, int which, gp__tp_argb *b) {
  gp__pb_reader r;
  gp__pb_field f;
  bool has[3] = {false, false, false};
  uint64_t v[3] = {0, 0, 0};
  gp__pb_reader_sub(&r, parent, pf);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id >= 1 && f.id <= 3 && f.wire_type == GP_PB_VARINT) {
      has[f.id - 1] = true;
      v[f.id - 1] = (uint32_t)f.value;
    }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "Dim3");
  for (int i = 0; i < 3; i++)
    if (has[i])
      gp__tp_argb_uint(b, imp->k_launch[which * 3 + i], v[i]);
  return 0;
}

static int launch_args(gp__tp_importer *imp, uint32_t gen, const rs *e,
                       gp__tp_argb *b) {
  gp__pb_reader r;
  gp__pb_field f;
  int rc;
  for (uint32_t want = 1; want <= 3; want++) {
    gp__pb_reader_init(&r, e->launch, e->launch_len,
                       gp__tp_off(imp, e->launch));
    while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
      if (f.id != want || f.wire_type != GP_PB_LEN)
        continue;
      int rc2 = want == 3 ? compute_arg(imp, gen, &r, &f, b)
                          : dim3_args(imp, &r, &f, (int)want - 1, b);
      if (rc2)
        return rc2;
      if (want != 3)
        break; /* one Dim3 of each */
    }
    if (rc < 0)
      return gp__tp_corrupt(imp, &r, "ComputeKernelLaunch");
  }
  return 0;
}

static int extra_data_args(gp__tp_importer *imp, const gp__tp_pkt *p,
                           gp__tp_argb *b) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 6 || f.wire_type != GP_PB_LEN)
      continue;
    uint32_t key = GP_TP_NONE, val = GP_TP_NONE;
    gp__pb_reader_sub(&sub, &r, &f);
    int rc2;
    while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
      if (g.wire_type != GP_PB_LEN)
        continue;
      int rc3 = 0;
      if (g.id == 1)
        rc3 = gp__tp_intern(imp, g.data, g.size, &key);
      else if (g.id == 2)
        rc3 = gp__tp_intern(imp, g.data, g.size, &val);
      if (rc3)
        return rc3;
    }
    if (rc2 < 0)
      return gp__tp_corrupt(imp, &sub, "ExtraData");
    gp__tp_argb_str(b, key, val);
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuRenderStageEvent");
  return 0;
}

static int subpasses(gp__tp_importer *imp, const rs *e, uint32_t *out) {
  *out = GP_TP_NONE;
  if (!e->has_masks)
    return 0;
  char buf[MAX_MASKS * 64 * 6];
  size_t n = 0;
  uint64_t bit = 0;
  for (uint32_t k = 0; k < e->nmasks; k++) {
    uint64_t m = e->masks[k];
    do {
      if (m & 1)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%llu", n ? "," : "",
                              (unsigned long long)bit);
      m >>= 1;
      bit++;
    } while (m);
    bit = ((bit - 1) / 64 + 1) * 64;
  }
  return gp__tp_intern(imp, buf, n, out);
}

static int rare(gp__tp_importer *imp, uint32_t row, uint32_t col,
                uint32_t str) {
  if (str == GP_TP_NONE)
    return 0;
  gp__tp_rare r = {row, col, str};
  if (!gp__tp_vec_push(&imp->db->g_rare, r))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  return 0;
}

/* ------------------------------------------------------------------ */
/* The event                                                             */

static const char *api_name(uint64_t api) {
  static const char *const names[] = {"UNDEFINED", "OPEN_GL", "VULKAN",
                                      "OPEN_CL",   "CUDA",    "HIP"};
  return api < 6 ? names[api] : "UNDEFINED";
}

static int graphics_context(gp__tp_importer *imp, const gp__tp_pkt *p,
                            uint64_t ctx, int64_t *pid) {
  gp__tp_interned *in = gp__tp_interned_get(imp, imp->gens.v[p->gen].ns,
                                            GP_TP_IN_GRAPHICS_CONTEXTS, ctx);
  if (!in)
    return 0;
  if (in->cache != GP_TP_NONE) {
    *pid = imp->args_cache.v[in->cache].pid;
    return 0;
  }
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, in->off, in->len);
  bool has_api = false, has_pid = false;
  uint64_t api = 0;
  int64_t cpid = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 2 && f.wire_type == GP_PB_VARINT) {
      has_pid = true;
      cpid = (int32_t)(uint32_t)f.value;
    } else if (f.id == 3 && f.wire_type == GP_PB_VARINT) {
      has_api = true;
      api = f.value;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "InternedGraphicsContext");
  *pid = cpid;
  gp__tp_args_cache c = {0, 0, cpid};
  if (!gp__tp_vec_push(&imp->args_cache, c))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  in->cache = (uint32_t)imp->args_cache.n - 1;
  bool ins;
  if (!gp__tp_map_put(&imp->ctx_seen, ctx, 1, &ins))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  if (!ins)
    return 0;
  gp__tp_gpu_context row = {(uint32_t)ctx,
                            has_pid ? (int64_t)(uint32_t)cpid : -1, GP_TP_NONE};
  if (has_api) {
    const char *a = api_name(api);
    if ((rc = gp__tp_intern(imp, a, strlen(a), &row.api)))
      return rc;
  }
  if (!gp__tp_vec_push(&imp->db->gpu_contexts, row))
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  return 0;
}

/* See import.h. */
int gp__tp_parse_render_stage(gp__tp_importer *imp, const gp__tp_pkt *p) {
  gp__tp_db *db = imp->db;
  rs e;
  int rc = decode_rs(imp, p, &e);
  if (rc)
    return rc;
  int64_t pid = 0;
  uint32_t gpu = (uint32_t)e.gpu;
  if (e.specs && (rc = parse_specs(imp, p, &e, gpu, &pid)))
    return rc;
  if (e.has_context && (rc = graphics_context(imp, p, e.context, &pid)))
    return rc;
  if (!e.has_event_id)
    return 0;
  gp__tp_flow_prefetch(imp, e.event_id);

  /* The hardware queue: its name, description and track dimensions. */
  uint32_t qname = GP_TP_NONE, qdesc = GP_TP_NONE, dim_name = GP_TP_NONE;
  uint64_t hwq;
  bool placeholder = false; /* a later Specifications may name the queue */
  if (e.has_hwq_iid) {
    bool found;
    int64_t cat;
    hwq = e.hwq_iid;
    if ((rc = stage_spec(imp, p->gen, hwq, &found, &qname, &qdesc, &cat)))
      return rc;
    if (!found)
      return 0; /* Perfetto drops it, counting only the lookup */
    dim_name = qname;
  } else {
    hwq = (uint32_t)e.hwq_id;
    if (hwq < imp->hwq_legacy.n && imp->hwq_legacy.v[hwq].set) {
      qname = dim_name = imp->hwq_legacy.v[hwq].name;
      qdesc = imp->hwq_legacy.v[hwq].description;
    } else {
      char buf[48];
      int n = snprintf(buf, sizeof(buf), "Unknown GPU Queue %llu",
                       (unsigned long long)hwq);
      if ((rc = gp__tp_intern(imp, buf, (size_t)n, &qname)))
        return rc;
      if (!gp__tp_map_put(&imp->hwq_placeholder, hwq, 1, NULL))
        return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
      placeholder = true;
    }
  }
  uint32_t ugpu, track, ci = 0;
  if ((rc = gp__tp_gpu_get(imp, p->machine, gpu, &ugpu)) ||
      (rc = cset_for(imp, ugpu, gpu, e.has_hwq_iid, hwq, dim_name, &ci)) ||
      (rc = stage_track(imp, ci, qname, qdesc, p->machine, ugpu, gpu, p->ts,
                        (int64_t)e.duration, &track)) ||
      (placeholder && (rc = gp__tp_stream_defer(imp, track))))
    return rc;

  /* The slice's name, and the stage's args. */
  uint32_t name = GP_TP_NONE;
  gp__tp_argb extra_b, *extra = &extra_b;
  extra->n = 0;
  extra->overflow = false;
  int8_t category = -1;
  uint32_t sname = GP_TP_NONE, sdesc = GP_TP_NONE;
  bool sfound = false;
  int64_t scat = 0;
  if (e.has_stage_iid && (rc = stage_spec(imp, p->gen, e.stage_iid, &sfound,
                                          &sname, &sdesc, &scat)))
    goto out;
  /* Perfetto looks the stage up twice when it names the slice after it
   * (once for the name, once for the args): a miss counts twice. */
  if (e.has_stage_iid && !sfound && !e.has_name_iid && !e.has_name)
    gp__tp_stat(imp, GP_TP_STAT_interned_data_tokenizer_errors, 1);
  if (e.has_name_iid) {
    name = gp__tp_interned_str(imp, p->gen, GP_TP_IN_EVENT_NAMES, e.name_iid, 2,
                               &rc);
  } else if (e.has_name) {
    rc = gp__tp_intern(imp, e.name, e.name_len, &name);
  } else if (e.has_stage_iid) {
    name = sname;
  } else {
    uint64_t sid = (uint64_t)(int64_t)e.stage_id;
    if (sid < imp->stage_legacy.n) {
      name = imp->stage_legacy.v[sid].name;
    } else {
      char buf[48];
      int n = snprintf(buf, sizeof(buf), "render stage(%llu)",
                       (unsigned long long)sid);
      rc = gp__tp_intern(imp, buf, (size_t)n, &name);
    }
  }
  if (rc)
    goto out;
  if (e.has_stage_iid) {
    if (sfound) {
      category = (int8_t)(scat < 0 || scat > 127 ? 127 : scat);
      gp__tp_argb_str(extra, db->k_description, sdesc);
    }
  } else if (e.has_stage_id) {
    uint64_t sid = (uint64_t)(int64_t)e.stage_id;
    if (sid < imp->stage_legacy.n &&
        imp->stage_legacy.v[sid].description != GP_TP_NONE)
      gp__tp_argb_str(extra, db->k_description,
                      imp->stage_legacy.v[sid].description);
  }
  if (e.has_kernel_iid && (rc = kernel_args(imp, p->gen, e.kernel_iid, extra)))
    goto out;
  if (e.launch && (rc = launch_args(imp, p->gen, &e, extra)))
    goto out;
  if (e.rpi) {
    char buf[48];
    int n = snprintf(buf, sizeof(buf), "rp:#%llu", (unsigned long long)e.rpi);
    uint32_t k, v;
    if ((rc = gp__tp_intern(imp, "correlation_id", 14, &k)) ||
        (rc = gp__tp_intern(imp, buf, (size_t)n, &v)))
      goto out;
    gp__tp_argb_str(extra, k, v);
  }
  if ((rc = extra_data_args(imp, p, extra)))
    goto out;

  uint32_t extra_set, slice, g, upid, sp;
  if (gp__tp_argset_commit(db, extra, &extra_set)) {
    rc = gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    goto out;
  }
  if ((rc = gp__tp_process_get_main(imp, p->machine, (uint32_t)pid, &upid)) ||
      (rc = gp__tp_slice_scoped(imp, p->ts, (int64_t)e.duration, track,
                                GP_TP_NONE, name, GP_TP_NONE, &slice)))
    goto out;
  if (slice == GP_TP_NONE)
    goto out;
  if ((rc = gp__tp_gext_add(imp, slice, GP_TP_GEXT_RENDER_STAGE, &g)))
    goto out;
  db->g_ctx.v[g] = gp__tp_dict(db, e.context);
  db->g_rt.v[g] = gp__tp_dict(db, e.rt);
  db->g_rp.v[g] = gp__tp_dict(db, e.rp);
  db->g_cb.v[g] = gp__tp_dict(db, e.cb);
  db->g_hwq.v[g] = gp__tp_dict(db, hwq);
  if (db->g_ctx.v[g] == GP_TP_NONE || db->g_rt.v[g] == GP_TP_NONE ||
      db->g_rp.v[g] == GP_TP_NONE || db->g_cb.v[g] == GP_TP_NONE ||
      db->g_hwq.v[g] == GP_TP_NONE) {
    rc = gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
    goto out;
  }
  db->g_sub.v[g] = e.submission_id;
  db->g_upid.v[g] = upid;
  db->g_cat.v[g] = category;
  db->g_extra.v[g] = extra_set;
  if ((rc = subpasses(imp, &e, &sp)) ||
      (rc = rare(
           imp, g, GP_TP_RARE_RT_NAME,
           gp__tp_debug_name_get(imp, VK_OBJECT_TYPE_FRAMEBUFFER, e.rt))) ||
      (rc = rare(
           imp, g, GP_TP_RARE_RP_NAME,
           gp__tp_debug_name_get(imp, VK_OBJECT_TYPE_RENDER_PASS, e.rp))) ||
      (rc = rare(
           imp, g, GP_TP_RARE_CB_NAME,
           gp__tp_debug_name_get(imp, VK_OBJECT_TYPE_COMMAND_BUFFER, e.cb))) ||
      (rc = rare(imp, g, GP_TP_RARE_SUBPASSES, sp)) ||
      (rc = gp__tp_stream_gpu_slice(imp, g)))
    goto out;

  if ((rc = gp__tp_flow_gpu_slice(imp, e.event_id, slice)))
    goto out;
  for (uint32_t i = 0; i < e.nwaits && !rc; i++)
    rc = gp__tp_flow_event_wait(imp, e.waits[i], slice);
out:
  return rc;
}
