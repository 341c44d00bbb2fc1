/*
 * parse_other.c - the smaller GPU packets: GpuInfo, GpuLog, GPU memory
 * totals (proto and ftrace), GPU frequency, Vulkan API events and Vulkan
 * memory events (ftrace's events are dispatched by parse_ftrace.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpuperf/error.h"
#include "perfetto/proto.h"
#include "tp/import.h"

#define VK_SUBMIT_MAX_BUFFERS 1024

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

static int key(gp__tp_importer *imp, const char *k, uint32_t *out) {
  return gp__tp_intern(imp, k, strlen(k), out);
}

/* ------------------------------------------------------------------ */
/* GpuInfo                                                               */

static int gpu_info_one(gp__tp_importer *imp, uint32_t machine, uint32_t index,
                        const gp__pb_reader *parent, const gp__pb_field *pf) {
  gp__tp_db *db = imp->db;
  uint32_t row;
  int rc = gp__tp_gpu_get(imp, machine, index, &row);
  if (rc)
    return rc;
  gp__tp_argb *args = malloc(sizeof(*args));
  if (!args)
    return nomem(imp);
  args->n = 0;
  args->overflow = false;
  /* Keep the args the row already has. */
  uint32_t old = db->gpus.v[row].args;
  if (old != GP_TP_NONE) {
    uint32_t first, n;
    gp__tp_argset_range(db, old, &first, &n);
    for (uint32_t i = 0; i < n; i++)
      args->a[args->n++] = db->args.v[first + i];
  }
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__pb_reader_sub(&r, parent, pf);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    uint32_t *dst = NULL;
    switch (f.id) {
    case 1:
      dst = &db->gpus.v[row].name;
      break;
    case 2:
      dst = &db->gpus.v[row].vendor;
      break;
    case 3:
      dst = &db->gpus.v[row].model;
      break;
    case 4:
      dst = &db->gpus.v[row].architecture;
      break;
    case 7:
      dst = &db->gpus.v[row].pci_bdf;
      break;
    case 5: {
      if (f.size == 0 || f.size > 256)
        break;
      char hex[513];
      for (size_t i = 0; i < f.size; i++)
        snprintf(hex + 2 * i, 3, "%02x", f.data[i]);
      if ((rc = gp__tp_intern(imp, hex, 2 * f.size, &db->gpus.v[row].uuid)))
        goto out;
      break;
    }
    case 6: {
      uint32_t k = GP_TP_NONE, v = GP_TP_NONE;
      bool hk = false, hv = false;
      gp__pb_reader_sub(&sub, &r, &f);
      int rc2;
      while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
        if (g.wire_type != GP_PB_LEN)
          continue;
        if (g.id == 1) {
          hk = true;
          rc2 = gp__tp_intern(imp, g.data, g.size, &k);
        } else if (g.id == 2) {
          hv = true;
          rc2 = gp__tp_intern(imp, g.data, g.size, &v);
        }
        if (rc2) {
          rc = rc2;
          goto out;
        }
      }
      if (rc2 < 0) {
        rc = gp__tp_corrupt(imp, &sub, "GpuInfo.Gpu.KeyValue");
        goto out;
      }
      if (hk && hv)
        gp__tp_argb_str(args, k, v);
      break;
    }
    default:
      break;
    }
    if (dst && f.size > 0 && (rc = gp__tp_intern(imp, f.data, f.size, dst)))
      goto out;
  }
  if (rc < 0) {
    rc = gp__tp_corrupt(imp, &r, "GpuInfo.Gpu");
    goto out;
  }
  rc = 0;
  if (gp__tp_argset_commit(db, args, &db->gpus.v[row].args))
    rc = nomem(imp);
out:
  free(args);
  return rc;
}

/* See import.h. */
int gp__tp_tokenize_gpu_info(gp__tp_importer *imp, uint32_t machine,
                             const uint8_t *data, size_t len) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, data, len, gp__tp_off(imp, data));
  uint32_t index = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 1 || f.wire_type != GP_PB_LEN)
      continue;
    int rc2 = gpu_info_one(imp, machine, index++, &r, &f);
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuInfo");
  return 0;
}

/* ------------------------------------------------------------------ */
/* GpuLog                                                                */

static int singleton_track(gp__tp_importer *imp, uint32_t *track,
                           const char *type, const char *name) {
  if (*track != GP_TP_NONE)
    return 0;
  uint32_t n;
  int rc = key(imp, name, &n);
  if (rc)
    return rc;
  gp__tp_track_spec spec = {type, n,  false, GP_TP_NONE, 0,         NULL,
                            -1,   -1, -1,    -1,         GP_TP_NONE};
  return gp__tp_track_intern(imp, &spec, NULL, track, NULL);
}

/* See import.h. */
int gp__tp_parse_gpu_log(gp__tp_importer *imp, const gp__tp_pkt *p) {
  static const char *const sev[] = {
      "UNSPECIFIED", "VERBOSE", "DEBUG",           "INFO",
      "WARNING",     "ERROR",   "UNKNOWN_SEVERITY"};
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  uint64_t severity = 0;
  uint32_t tag = GP_TP_NONE, msg = GP_TP_NONE;
  bool has_tag = false, has_msg = false;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    int rc2 = 0;
    if (f.id == 1 && f.wire_type == GP_PB_VARINT) {
      severity = f.value;
    } else if (f.id == 2 && f.wire_type == GP_PB_LEN) {
      has_tag = true;
      rc2 = gp__tp_intern(imp, f.data, f.size, &tag);
    } else if (f.id == 3 && f.wire_type == GP_PB_LEN) {
      has_msg = true;
      rc2 = gp__tp_intern(imp, f.data, f.size, &msg);
    }
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuLog");
  if ((rc = singleton_track(imp, &imp->gpu_log_track, "gpu_log", "GPU Log")))
    return rc;
  uint32_t name, ktag, kmsg, set, slice, g;
  if ((rc = key(imp, sev[severity < 6 ? severity : 6], &name)) ||
      (rc = key(imp, "tag", &ktag)) || (rc = key(imp, "message", &kmsg)))
    return rc;
  gp__tp_argb b;
  b.n = 0;
  if (has_tag)
    gp__tp_argb_str(&b, ktag, tag);
  if (has_msg)
    gp__tp_argb_str(&b, kmsg, msg);
  if (gp__tp_argset_commit(imp->db, &b, &set))
    return nomem(imp);
  if ((rc = gp__tp_slice_scoped(imp, p->ts, 0, imp->gpu_log_track, GP_TP_NONE,
                                name, set, &slice)))
    return rc;
  if (slice != GP_TP_NONE &&
      !(rc = gp__tp_gext_add(imp, slice, GP_TP_GEXT_OTHER, &g)))
    rc = gp__tp_stream_gpu_slice(imp, g);
  return rc;
}

/* ------------------------------------------------------------------ */
/* GPU memory and frequency                                              */

static int gpu_counter_track(gp__tp_importer *imp, uint32_t machine,
                             const char *type, const char *name,
                             const char *unit, uint32_t gpu, int64_t upid,
                             uint32_t *track) {
  uint32_t ugpu, k_ugpu, k_gpu, k_upid, n, u;
  int rc;
  if ((rc = gp__tp_gpu_get(imp, machine, gpu, &ugpu)) ||
      (rc = key(imp, "ugpu", &k_ugpu)) || (rc = key(imp, "gpu", &k_gpu)) ||
      (rc = key(imp, "upid", &k_upid)) || (rc = key(imp, name, &n)) ||
      (rc = key(imp, unit, &u)))
    return rc;
  gp__tp_argb dims;
  dims.n = 0;
  gp__tp_argb_int(&dims, k_ugpu, ugpu);
  gp__tp_argb_int(&dims, k_gpu, gpu);
  if (upid >= 0)
    gp__tp_argb_int(&dims, k_upid, (uint64_t)upid);
  gp__tp_track_spec spec = {type, n,   true, u,  machine,   NULL,
                            ugpu, gpu, upid, -1, GP_TP_NONE};
  return gp__tp_track_intern(imp, &spec, &dims, track, NULL);
}

/* See import.h. */
int gp__tp_parse_gpu_mem_total(gp__tp_importer *imp, const gp__tp_pkt *p) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  uint32_t gpu = 0, pid = 0;
  uint64_t size = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_VARINT)
      continue;
    if (f.id == 1)
      gpu = (uint32_t)f.value;
    else if (f.id == 2)
      pid = (uint32_t)f.value;
    else if (f.id == 3)
      size = f.value;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuMemTotalEvent");
  uint32_t track;
  if (pid == 0) {
    rc = gpu_counter_track(imp, p->machine, "gpu_memory", "GPU Memory", "bytes",
                           gpu, -1, &track);
  } else {
    uint32_t utid;
    if ((rc = gp__tp_thread_update(imp, p->machine, pid, pid, &utid)))
      return rc;
    uint32_t upid = imp->db->threads.v[utid].upid;
    rc = gpu_counter_track(imp, p->machine, "process_gpu_memory", "GPU Memory",
                           "bytes", gpu, upid == GP_TP_NONE ? 0 : upid, &track);
  }
  if (rc)
    return rc;
  return gp__tp_counter_add(imp, p->ts, track, (double)size, NULL);
}

/* See import.h. */
int gp__tp_parse_gpu_frequency(gp__tp_importer *imp, const gp__tp_pkt *p) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  uint32_t gpu = 0, khz = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_VARINT)
      continue;
    if (f.id == 1)
      gpu = (uint32_t)f.value;
    else if (f.id == 2)
      khz = (uint32_t)f.value;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GenericGpuFrequencyEvent");
  uint32_t track;
  if ((rc = gpu_counter_track(imp, p->machine, "gpu_frequency", "gpufreq",
                              "kHz", gpu, -1, &track)))
    return rc;
  return gp__tp_counter_add(imp, p->ts, track, (double)khz, NULL);
}

/*
 * power/gpu_frequency (gpu_id 1, state 2 in kHz) and kgsl_gpu_frequency
 * (gpu_freq 1 in MHz, gpu_id 2): a value of the GPU's "gpufreq" track, as
 * Perfetto's FtraceParser::ParseGpuFreq and ParseKgslGpuFreq make it (the
 * same track as a GenericGpuFrequencyEvent's).
 */
static int ftrace_gpu_frequency(gp__tp_importer *imp, int64_t ts,
                                uint32_t machine, uint32_t pid,
                                const gp__pb_reader *parent,
                                const gp__pb_field *pf) {
  gp__pb_reader r;
  gp__pb_field f;
  bool kgsl = pf->id == GP_PB_FTRACE_KGSL_GPU_FREQUENCY;
  uint32_t gpu = 0, freq = 0, utid, track;
  int rc;
  gp__pb_reader_sub(&r, parent, pf);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_VARINT)
      continue;
    if (f.id == (kgsl ? 2u : 1u))
      gpu = (uint32_t)f.value;
    else if (f.id == (kgsl ? 1u : 2u))
      freq = (uint32_t)f.value;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "GpuFrequencyFtraceEvent");
  /* Perfetto files every ftrace event under its task's thread. */
  if ((rc = gp__tp_ftrace_thread(imp, machine, pid, &utid)) ||
      (rc = gpu_counter_track(imp, machine, "gpu_frequency", "gpufreq", "kHz",
                              gpu, -1, &track)))
    return rc;
  return gp__tp_counter_add(imp, ts, track,
                            kgsl ? (double)freq * 1000.0 : (double)freq, NULL);
}

/* See import.h. */
int gp__tp_parse_ftrace_gpu(gp__tp_importer *imp, int64_t ts, uint32_t machine,
                            uint32_t task, const gp__pb_reader *parent,
                            const gp__pb_field *f) {
  if (f->id == GP_PB_FTRACE_GPU_FREQUENCY ||
      f->id == GP_PB_FTRACE_KGSL_GPU_FREQUENCY)
    return ftrace_gpu_frequency(imp, ts, machine, task, parent, f);
  gp__pb_reader sub;
  gp__pb_field g;
  uint32_t gpu = 0;
  int64_t pid = 0;
  uint64_t size = 0;
  gp__pb_reader_sub(&sub, parent, f);
  int rc2;
  while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
    if (g.wire_type != GP_PB_VARINT)
      continue;
    if (g.id == 1)
      gpu = (uint32_t)g.value;
    else if (g.id == 2)
      pid = (int64_t)(uint32_t)g.value;
    else if (g.id == 3)
      size = g.value;
  }
  if (rc2 < 0)
    return gp__tp_corrupt(imp, &sub, "ftrace event");
  uint32_t track;
  if (pid == 0) {
    rc2 = gpu_counter_track(imp, machine, "gpu_memory", "GPU Memory", "bytes",
                            gpu, -1, &track);
  } else {
    /* The kernel emits these after a process died; they would invent a
     * process, so they are dropped unless the thread is alive (with
     * no stat: Perfetto's importer records none). */
    uint32_t utid = gp__tp_thread_find(imp, machine, pid);
    if (utid == GP_TP_NONE)
      return 0;
    if ((rc2 = gp__tp_thread_update(imp, machine, pid, pid, &utid)))
      return rc2;
    uint32_t upid = imp->db->threads.v[utid].upid;
    rc2 = gpu_counter_track(imp, machine, "process_gpu_memory", "GPU Memory",
                            "bytes", gpu, upid, &track);
  }
  if (rc2 || (rc2 = gp__tp_counter_add(imp, ts, track, (double)size, NULL)))
    return rc2;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Vulkan                                                                */

static int vk_object_name(gp__tp_importer *imp, const gp__pb_reader *parent,
                          const gp__pb_field *pf) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  int64_t type = 0;
  uint64_t object = 0;
  uint32_t name = GP_TP_NONE;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 3 && f.wire_type == GP_PB_VARINT)
      type = (int32_t)(uint32_t)f.value;
    else if (f.id == 4 && f.wire_type == GP_PB_VARINT)
      object = f.value;
    else if (f.id == 5 && f.wire_type == GP_PB_LEN &&
             (rc = gp__tp_intern(imp, f.data, f.size, &name)))
      return rc;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "VkDebugUtilsObjectName");
  if (name == GP_TP_NONE && (rc = key(imp, "", &name)))
    return rc;
  return gp__tp_debug_name_set(imp, type, object, name);
}

static int vk_queue_submit(gp__tp_importer *imp, const gp__tp_pkt *p,
                           const gp__pb_reader *parent,
                           const gp__pb_field *pf) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  uint64_t dur = 0;
  uint32_t pid = 0, tid = 0, sub = 0;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_VARINT)
      continue;
    if (f.id == 1)
      dur = f.value;
    else if (f.id == 2)
      pid = (uint32_t)f.value;
    else if (f.id == 3)
      tid = (uint32_t)f.value;
    else if (f.id == 6)
      sub = (uint32_t)f.value;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "VkQueueSubmit");
  if ((rc = singleton_track(imp, &imp->vulkan_events_track, "vulkan_events",
                            "Vulkan Events")))
    return rc;
  uint32_t k_pid, k_tid, k_cb, k_cbs, k_sub, name;
  if ((rc = key(imp, "pid", &k_pid)) || (rc = key(imp, "tid", &k_tid)) ||
      (rc = key(imp, "command_buffer", &k_cb)) ||
      (rc = key(imp, "command_buffers", &k_cbs)) ||
      (rc = key(imp, "submission_id", &k_sub)) ||
      (rc = key(imp, "vkQueueSubmit", &name)))
    return rc;
  gp__tp_argb *b = malloc(sizeof(*b));
  if (!b)
    return nomem(imp);
  b->n = 0;
  b->overflow = false;
  gp__tp_argb_int(b, k_pid, pid);
  gp__tp_argb_int(b, k_tid, tid);
  uint32_t count = 0;
  gp__pb_reader_sub(&r, parent, pf);
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 5 || f.wire_type != GP_PB_VARINT)
      continue;
    if (count == 0)
      gp__tp_argb_uint(b, k_cb, f.value);
    char kb[48];
    int n = snprintf(kb, sizeof(kb), "command_buffers[%u]", count++);
    uint32_t k;
    if ((rc = gp__tp_intern(imp, kb, (size_t)n, &k)))
      goto out;
    gp__tp_argb_add(b, k, k_cbs, GP_TP_ARG_UINT, (int64_t)f.value);
  }
  gp__tp_argb_int(b, k_sub, sub);
  uint32_t set, slice, g;
  if (gp__tp_argset_commit(imp->db, b, &set)) {
    rc = nomem(imp);
    goto out;
  }
  if ((rc = gp__tp_slice_scoped(imp, p->ts, (int64_t)dur,
                                imp->vulkan_events_track, GP_TP_NONE, name, set,
                                &slice)))
    goto out;
  if (slice != GP_TP_NONE &&
      !(rc = gp__tp_gext_add(imp, slice, GP_TP_GEXT_OTHER, &g)))
    rc = gp__tp_stream_gpu_slice(imp, g);
out:
  free(b);
  return rc;
}

/* See import.h. */
int gp__tp_parse_vulkan_api(gp__tp_importer *imp, const gp__tp_pkt *p) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.wire_type != GP_PB_LEN)
      continue;
    int rc2 = 0;
    if (f.id == 1)
      rc2 = vk_object_name(imp, &r, &f);
    else if (f.id == 2)
      rc2 = vk_queue_submit(imp, p, &r, &f);
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "VulkanApiEvent");
  return 0;
}

static const char *enum_name(const char *const *names, size_t n, uint64_t v) {
  return v < n ? names[v] : names[0];
}

/* Running sum of a Vulkan memory counter track, stored as double bits. */
static int running_sum(gp__tp_importer *imp, uint32_t track, int64_t ts,
                       int64_t delta) {
  bool ins;
  uint64_t *v = gp__tp_map_put(&imp->running_sum, track, 0, &ins);
  if (!v)
    return nomem(imp);
  int64_t sum = gp__tp_wadd((int64_t)*v, delta);
  *v = (uint64_t)sum;
  return gp__tp_counter_add(imp, ts, track, (double)sum, NULL);
}

/* See import.h. */
int gp__tp_parse_vulkan_memory(gp__tp_importer *imp, const gp__tp_pkt *p) {
  static const char *const sources[] = {"UNSPECIFIED", "DRIVER",
                                        "DEVICE",      "GPU_DEVICE_MEMORY",
                                        "GPU_BUFFER",  "GPU_IMAGE"};
  static const char *const ops[] = {"UNSPECIFIED",   "CREATE",
                                    "DESTROY",       "BIND",
                                    "DESTROY_BOUND", "ANNOTATIONS"};
  static const char *const scopes[] = {"UNSPECIFIED", "COMMAND", "OBJECT",
                                       "CACHE",       "DEVICE",  "INSTANCE"};
  gp__tp_db *db = imp->db;
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  uint64_t source = 0, op = 0, scope = 0, pid = 0, caller = 0;
  bool has_scope = false, has_caller = false, has_annot = false;
  gp__tp_vk_alloc a;
  memset(&a, 0, sizeof(a));
  a.device = a.device_memory = a.memory_type = a.heap = a.object_handle =
      a.memory_address = a.memory_size = INT64_MIN;
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    uint64_t v = f.value;
    switch (f.id) {
    case 1:
      source = v;
      break;
    case 2:
      op = v;
      break;
    case 3:
      a.ts = (int64_t)v;
      break;
    case 4:
      pid = (uint32_t)v;
      break;
    case 5:
      a.memory_address = (int64_t)v;
      break;
    case 6:
      a.memory_size = (int64_t)v;
      break;
    case 7:
      has_caller = true;
      caller = v;
      break;
    case 8:
      has_scope = true;
      scope = v;
      break;
    case 9:
      has_annot = f.wire_type == GP_PB_LEN || has_annot;
      break;
    case 16:
      a.device = (int64_t)v;
      break;
    case 17:
      a.device_memory = (int64_t)v;
      break;
    case 18:
      a.memory_type = (uint32_t)v;
      break;
    case 19:
      a.heap = (uint32_t)v;
      break;
    case 20:
      a.object_handle = (int64_t)v;
      break;
    default:
      break;
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "VulkanMemoryEvent");
  if ((rc = key(imp, enum_name(sources, 6, source), &a.source)) ||
      (rc = key(imp, enum_name(ops, 6, op), &a.operation)) ||
      (rc = gp__tp_process_get_main(imp, p->machine, (int64_t)pid, &a.upid)))
    return rc;
  a.scope = GP_TP_NONE;
  if (has_scope && (rc = key(imp, enum_name(scopes, 6, scope), &a.scope)))
    return rc;
  a.function_name = GP_TP_NONE;
  if (has_caller) {
    a.function_name = gp__tp_interned_str(imp, p->gen, GP_TP_IN_FUNCTION_NAMES,
                                          caller, 2, &rc);
    if (rc)
      return rc;
  }
  /* Running-sum counters per scope or memory type. */
  uint64_t mtype = a.memory_type == INT64_MIN ? 0 : (uint64_t)a.memory_type;
  int64_t size = a.memory_size == INT64_MIN ? 0 : a.memory_size;
  int64_t delta = 0;
  const char *type = NULL;
  char name[96];
  if (source == 1 && scope != 0 && (op == 1 || op == 2)) {
    type = "vulkan_driver_mem";
    delta = op == 1 ? size : -size;
    snprintf(name, sizeof(name), "vulkan.mem.driver.scope.%s",
             enum_name(scopes, 6, scope));
  } else if (source == 3 && (op == 1 || op == 2)) {
    type = "vulkan_device_mem_allocation";
    delta = op == 1 ? size : -size;
    snprintf(name, sizeof(name), "vulkan.mem.device.memory.type.%u.allocation",
             (uint32_t)mtype);
  } else if ((source == 4 || source == 5) && (op == 3 || op == 4)) {
    type = "vulkan_device_mem_bind";
    delta = op == 3 ? size : -size;
    snprintf(name, sizeof(name), "vulkan.mem.device.memory.type.%u.bind",
             (uint32_t)mtype);
  }
  if (type) {
    uint32_t k_upid, k_dim, n, dimstr, track;
    bool driver = source == 1;
    if ((rc = key(imp, "upid", &k_upid)) ||
        (rc =
             key(imp, driver ? "vulkan_allocation_scope" : "vulkan_memory_type",
                 &k_dim)) ||
        (rc = key(imp, name, &n)) ||
        (rc = key(imp, enum_name(scopes, 6, scope), &dimstr)))
      return rc;
    gp__tp_argb dims;
    dims.n = 0;
    gp__tp_argb_int(&dims, k_upid, a.upid);
    if (driver)
      gp__tp_argb_str(&dims, k_dim, dimstr);
    else
      gp__tp_argb_int(&dims, k_dim, (uint32_t)mtype);
    gp__tp_track_spec spec = {type, n,  true,   GP_TP_NONE, p->machine, NULL,
                              -1,   -1, a.upid, -1,         GP_TP_NONE};
    if ((rc = gp__tp_track_intern(imp, &spec, &dims, &track, NULL)) ||
        (rc = running_sum(imp, track, a.ts, delta)))
      return rc;
  }
  /* Annotations become the row's args. */
  a.args = GP_TP_NONE;
  if (has_annot) {
    gp__tp_argb *b = malloc(sizeof(*b));
    if (!b)
      return nomem(imp);
    b->n = 0;
    b->overflow = false;
    gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
    while (!rc && (rc = gp__tp_pb_next(&r, &f)) > 0) {
      rc = 0;
      if (f.id != 9 || f.wire_type != GP_PB_LEN)
        continue;
      uint64_t kiid = 0, siid = 0;
      int type2 = -1;
      int64_t val = 0;
      gp__pb_reader_sub(&sub, &r, &f);
      int rc2;
      while ((rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
        if (g.id == 1 && g.wire_type == GP_PB_VARINT)
          kiid = g.value;
        else if (g.id == 2 && g.wire_type == GP_PB_VARINT) {
          type2 = GP_TP_ARG_INT;
          val = (int64_t)g.value;
        } else if (g.id == 3 && g.wire_type == GP_PB_I64) {
          type2 = GP_TP_ARG_REAL;
          val = (int64_t)g.value;
        } else if (g.id == 4 && g.wire_type == GP_PB_VARINT) {
          type2 = GP_TP_ARG_STRING;
          siid = g.value;
        }
      }
      if (rc2 < 0) {
        rc = gp__tp_corrupt(imp, &sub, "VulkanMemoryEventAnnotation");
        break;
      }
      uint32_t k = gp__tp_interned_str(imp, p->gen, GP_TP_IN_VULKAN_MEMORY_KEYS,
                                       kiid, 2, &rc);
      if (rc)
        break;
      if (type2 == GP_TP_ARG_STRING) {
        val = gp__tp_interned_str(imp, p->gen, GP_TP_IN_VULKAN_MEMORY_KEYS,
                                  siid, 2, &rc);
        if (rc)
          break;
      }
      if (k == GP_TP_NONE) {
        gp__tp_stat(imp, GP_TP_STAT_vulkan_allocations_invalid_string_id, 1);
        continue;
      }
      if (type2 >= 0)
        gp__tp_argb_add(b, k, k, (uint8_t)type2, val);
    }
    if (rc < 0 && !imp->err)
      rc = gp__tp_corrupt(imp, &r, "VulkanMemoryEvent");
    if (!rc && gp__tp_argset_commit(db, b, &a.args))
      rc = nomem(imp);
    free(b);
    if (rc)
      return rc;
  }
  if (!gp__tp_vec_push(&db->vk_allocs, a))
    return nomem(imp);
  return 0;
}

/* See import.h. */
int gp__tp_debug_name_set(gp__tp_importer *imp, int64_t type, uint64_t handle,
                          uint32_t name) {
  uint64_t *s =
      gp__tp_map2_put(&imp->debug_names, (uint64_t)type, handle, name, NULL);
  if (!s)
    return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
  *s = name;
  return 0;
}

/* See import.h. */
uint32_t gp__tp_debug_name_get(gp__tp_importer *imp, int64_t type,
                               uint64_t handle) {
  uint64_t *s = gp__tp_map2_get(&imp->debug_names, (uint64_t)type, handle);
  return s ? (uint32_t)*s : GP_TP_NONE;
}
