/*
 * writer_host.c - the host side of the trace writer: process and thread
 * tracks, API calls and user ranges as track-event slices (with the
 * GpuCorrelation extension that links calls to the GPU work they
 * submitted or waited for), drops and our own overhead as counter tracks,
 * and GpuLog packets.
 */
#include <stdio.h>
#include <string.h>

#include "writerInt.h"

/* ------------------------------------------------------------------ */
/* Processes and threads                                                */

/* See writerInt.h. */
uint32_t gp__tw_pid(gp__tw *w, uint32_t pid) {
  if (!w->o.deterministic)
    return pid;
  return pid == w->pid ? w->vpid : w->vpid + 500 + (pid % 500);
}

static uint32_t written_tid(gp__tw *w, tw_entry *e, uint32_t pid,
                            uint32_t tid) {
  if (!w->o.deterministic)
    return tid;
  if (!e->iid)
    e->iid = tid == pid ? 0 : ++w->next_vtid;
  return gp__tw_pid(w, pid) + (uint32_t)e->iid;
}

/* See writerInt.h. */
void gp__tw_track_descriptor(gp__tw *w, uint64_t uuid, uint64_t parent,
                             const char *name) {
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, TW_NO_TS, 0);
  gp__pb_begin(pb, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(pb, GP_PB_TD_UUID, uuid);
  if (name)
    gp__pb_string(pb, GP_PB_TD_NAME, name);
  if (parent)
    gp__pb_uint(pb, GP_PB_TD_PARENT_UUID, parent);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
}

static void write_cmdline(gp__pb_writer *pb) {
  FILE *f = fopen("/proc/self/cmdline", "r");
  if (!f)
    return;
  char buf[4096];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  for (size_t i = 0; i < n;) {
    size_t len = strlen(buf + i);
    gp__pb_bytes(pb, GP_PB_PD_CMDLINE, buf + i, len);
    i += len + 1;
  }
}

/* The time of a process or thread descriptor. Into a Perfetto service the
 * trace holds the system's own view of the processes (ftrace forks and
 * execs, process_stats), and Perfetto's trace processor gives a descriptor
 * without a time the time of whatever it read before it, which can come
 * before the fork of its process: that made a second process row for the
 * pid. Now is after both, and before nothing it describes is read. */
static uint64_t descriptor_ts(const gp__tw *w) {
  return w->o.service_sequenced ? gp_get_timestamp() : TW_NO_TS;
}

static uint64_t process_track(gp__tw *w, uint32_t pid) {
  tw_entry *e = gp__tw_map_get(&w->processes, pid, 0, NULL);
  uint32_t vpid = gp__tw_pid(w, pid);
  uint64_t uuid = gp__tw_track_uuid(w, TW_TRACK_PROCESS, vpid);
  if (!e || e->gen)
    return uuid;
  e->gen = 1;
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, descriptor_ts(w), 0);
  gp__pb_begin(pb, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(pb, GP_PB_TD_UUID, uuid);
  gp__pb_begin(pb, GP_PB_TD_PROCESS);
  gp__pb_uint(pb, GP_PB_PD_PID, vpid);
  if (pid == w->pid && w->o.ctx) { /* another process: its name only */
    if (w->o.ctx->process_name && *w->o.ctx->process_name)
      gp__pb_string(pb, GP_PB_PD_PROCESS_NAME, w->o.ctx->process_name);
  } else if (pid == w->pid) {
    if (!w->o.deterministic)
      write_cmdline(pb);
    gp__pb_string(pb, GP_PB_PD_PROCESS_NAME, program_invocation_short_name);
  }
  gp__pb_end(pb);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
  return uuid;
}

/* See writerInt.h. */
uint64_t gp__tw_process_track(gp__tw *w) {
  return process_track(w, w->pid);
}

static void write_thread_descriptor(gp__tw *w, tw_entry *e, uint64_t uuid) {
  uint32_t pid = (uint32_t)(e->k1 >> 32), tid = (uint32_t)e->k1;
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, descriptor_ts(w), 0);
  gp__pb_begin(pb, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(pb, GP_PB_TD_UUID, uuid);
  gp__pb_begin(pb, GP_PB_TD_THREAD);
  gp__pb_uint(pb, GP_PB_THD_PID, gp__tw_pid(w, pid));
  gp__pb_uint(pb, GP_PB_THD_TID, written_tid(w, e, pid, tid));
  if (e->aux)
    gp__pb_string(pb, GP_PB_THD_THREAD_NAME,
                  gp__tw_string(w, (uint32_t)e->aux));
  gp__pb_end(pb);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
}

/* thread_track() for a thread other than the last one: also encodes
 * the track's track_uuid field into the cache, whether the uuid is
 * cached or not. */
static __attribute__((noinline)) uint64_t
thread_track_slow(gp__tw *w, uint32_t pid, uint32_t tid) {
  uint64_t key = ((uint64_t)pid << 32) | tid;
  w->last_thread_key = key;
  w->last_thread_uuid = 0;
  tw_entry *e = gp__tw_map_get(&w->threads, key, 0, NULL);
  uint64_t uuid;
  if (!e) {
    uuid = gp__tw_track_uuid(w, TW_TRACK_THREAD, tid);
  } else {
    process_track(w, pid);
    uuid = gp__tw_track_uuid(w, TW_TRACK_THREAD, written_tid(w, e, pid, tid));
    if (!e->gen) {
      e->gen = 1;
      write_thread_descriptor(w, e, uuid);
    }
    w->last_thread_uuid = uuid;
  }
  w->last_thread_field_len =
      (uint8_t)(gp__pb_put_uint(w->last_thread_field, GP_PB_TE_TRACK_UUID,
                                uuid) -
                w->last_thread_field);
  return uuid;
}

/* The track of a thread, its descriptor written the first time; its
 * track_uuid field is then in w->last_thread_field. Most records come
 * from the thread before them: that case is a compare, inline (out of
 * line, the slow path's registers made it 28 instructions). */
static inline uint64_t thread_track(gp__tw *w, uint32_t pid, uint32_t tid) {
  uint64_t key = ((uint64_t)pid << 32) | tid;
  if (GP_LIKELY(w->last_thread_key == key && w->last_thread_uuid))
    return w->last_thread_uuid;
  return thread_track_slow(w, pid, tid);
}

/* Puts the thread's track_uuid field (thread_track() just called) at p,
 * which has 16 bytes of room; returns its end. One 16-byte copy where
 * the varint took a loop. */
static inline uint8_t *put_thread_track_field(const gp__tw *w, uint8_t *p) {
  memcpy(p, w->last_thread_field, 16);
  return p + w->last_thread_field_len;
}

static void thread_name(gp__tw *w, const gp_activity_name *n) {
  tw_entry *e = gp__tw_map_get(
      &w->threads, ((uint64_t)n->process_id << 32) | n->thread_id, 0, NULL);
  if (!e || e->aux == n->name_id)
    return;
  e->aux = n->name_id;
  if (e->gen) /* already described: describe again with the name */
    write_thread_descriptor(
        w, e,
        gp__tw_track_uuid(w, TW_TRACK_THREAD,
                          written_tid(w, e, n->process_id, n->thread_id)));
}

/* ------------------------------------------------------------------ */
/* Counter tracks of our own (drops and overhead) and of the process    */

/* See writerInt.h. */
void gp__tw_own_counter(gp__tw *w, uint32_t which, uint64_t ts,
                        uint64_t value) {
  gp__pb_writer *pb = &w->pb;
  uint64_t uuid = gp__tw_track_uuid(w, TW_TRACK_COUNTER, which);
  gp__tw_packet_begin(w, ts, 0);
  gp__pb_begin(pb, GP_PB_PACKET_TRACK_EVENT);
  gp__pb_uint(pb, GP_PB_TE_TYPE, GP_PB_TE_TYPE_COUNTER);
  gp__pb_uint(pb, GP_PB_TE_TRACK_UUID, uuid);
  gp__pb_int(pb, GP_PB_TE_COUNTER_VALUE, (int64_t)value);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
  w->st.track_events++;
}

/* Writes the descriptor of one of our own counter tracks. */
static void own_counter_track(gp__tw *w, uint32_t which, const char *name,
                              uint32_t unit) {
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, TW_NO_TS, 0);
  gp__pb_begin(pb, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(pb, GP_PB_TD_UUID, gp__tw_track_uuid(w, TW_TRACK_COUNTER, which));
  gp__pb_string(pb, GP_PB_TD_NAME, name);
  gp__pb_uint(pb, GP_PB_TD_PARENT_UUID, gp__tw_process_track(w));
  gp__pb_begin(pb, GP_PB_TD_COUNTER);
  gp__pb_uint(pb, GP_PB_CD_UNIT, unit);
  gp__pb_end(pb);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
}

/* Process counters (writer.h) have uuids of their own beside ours. */
#define TW_COUNTER_PROCESS_BASE 256

/* See writerInt.h. */
void gp__tw_process_counter_value(gp__tw *w, uint64_t ts,
                                  const gp__tw_process_counter *c) {
  uint32_t which = TW_COUNTER_PROCESS_BASE + c->key;
  if (!(w->process_counters & (1ull << c->key))) {
    own_counter_track(w, which, c->name,
                      c->time_ns ? GP_PB_COUNTER_UNIT_TIME_NS
                                 : GP_PB_COUNTER_UNIT_COUNT);
    w->process_counters |= 1ull << c->key;
  }
  gp__tw_saw_ts(w, ts);
  gp__tw_own_counter(w, which, ts, (uint64_t)c->value);
}

/* See writerInt.h. */
void gp__tw_own_counter_tracks(gp__tw *w) {
  own_counter_track(w, TW_COUNTER_DROPPED, "gpuperf dropped records",
                    GP_PB_COUNTER_UNIT_COUNT);
  if (!w->o.deterministic) /* real time: never in a deterministic trace */
    own_counter_track(w, TW_COUNTER_OVERHEAD, "gpuperf writer overhead",
                      GP_PB_COUNTER_UNIT_TIME_NS);
}

/* See writerInt.h. */
void gp__tw_untimed_flush(gp__tw *w) {
  if (w->st.untimed == w->untimed_written)
    return;
  /* The track appears with the first untimed work, so traces without any
   * stay as they were. */
  if (w->untimed_written == 0)
    own_counter_track(w, TW_COUNTER_UNTIMED, "gpuperf untimed GPU work",
                      GP_PB_COUNTER_UNIT_COUNT);
  gp__tw_own_counter(w, TW_COUNTER_UNTIMED, gp__tw_now_ts(w), w->st.untimed);
  w->untimed_written = w->st.untimed;
}

/* ------------------------------------------------------------------ */
/* GpuLog                                                               */

static void gpu_log(gp__tw *w, uint64_t ts, uint32_t severity, const char *tag,
                    const char *msg) {
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, ts, 0);
  gp__pb_begin(pb, GP_PB_PACKET_GPU_LOG);
  gp__pb_uint(pb, GP_PB_LOG_SEVERITY, severity);
  gp__pb_string(pb, GP_PB_LOG_TAG, tag);
  gp__pb_string(pb, GP_PB_LOG_MESSAGE, msg);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
}

/* See writerInt.h: a driver's or layer's message. */
void gp__tw_gpu_log(gp__tw *w, const gp_activity_gpu_log *l) {
  gp__tw_saw_ts(w, l->timestamp);
  uint32_t sev = l->severity <= GP_LOG_ERROR ? l->severity : GP_LOG_UNSPECIFIED;
  gpu_log(w, l->timestamp, sev, gp__tw_string(w, l->tag_id),
          gp__tw_string(w, l->message_id));
}

/* A Vulkan object's debug-utils name (VulkanApiEvent), which the trace
 * processor gives the render stages that name its handle. */
static void api_object_name(gp__tw *w, const gp_activity_name *n) {
  gp__pb_writer *pb = &w->pb;
  gp__tw_saw_ts(w, n->timestamp);
  gp__tw_packet_begin(w, n->timestamp, 0);
  gp__pb_short e = gp__pb_begin_short(pb, GP_PB_PACKET_VULKAN_API_EVENT);
  gp__pb_short o = gp__pb_begin_short(pb, GP_PB_VKAPI_OBJECT_NAME);
  gp__pb_uint(pb, GP_PB_VKNAME_PID, gp__tw_pid(w, n->process_id));
  gp__pb_int(pb, GP_PB_VKNAME_OBJECT_TYPE, (int32_t)n->api_object_type);
  gp__pb_uint(pb, GP_PB_VKNAME_OBJECT, n->object_handle);
  gp__pb_string(pb, GP_PB_VKNAME_OBJECT_NAME, gp__tw_string(w, n->name_id));
  gp__pb_end_short(pb, o);
  gp__pb_end_short(pb, e);
  gp__tw_packet_end(w);
}

/* See writerInt.h: a VulkanMemoryEvent, if its source is asked for. */
void gp__tw_gpu_memory(gp__tw *w, const gp_activity_gpu_memory *m) {
  bool driver = m->source == GP_GPU_MEMORY_SOURCE_DRIVER;
  if (driver ? !w->o.vk_driver_memory : !w->o.vk_device_memory)
    return;
  gp__tw_saw_ts(w, m->timestamp);
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, m->timestamp, 0);
  gp__pb_short e = gp__pb_begin_short(pb, GP_PB_PACKET_VULKAN_MEMORY_EVENT);
  gp__pb_uint(pb, GP_PB_VKMEM_SOURCE, m->source);
  gp__pb_uint(pb, GP_PB_VKMEM_OPERATION, m->operation);
  gp__pb_int(pb, GP_PB_VKMEM_TIMESTAMP, (int64_t)m->timestamp);
  gp__pb_uint(pb, GP_PB_VKMEM_PID, gp__tw_pid(w, m->process_id));
  if (m->memory_address)
    gp__pb_fixed64(pb, GP_PB_VKMEM_MEMORY_ADDRESS, m->memory_address);
  gp__pb_uint(pb, GP_PB_VKMEM_MEMORY_SIZE, m->size);
  if (driver && m->scope)
    gp__pb_uint(pb, GP_PB_VKMEM_ALLOCATION_SCOPE, m->scope);
  gp__pb_fixed64(pb, GP_PB_VKMEM_DEVICE, m->device);
  if (m->device_memory)
    gp__pb_fixed64(pb, GP_PB_VKMEM_DEVICE_MEMORY, m->device_memory);
  if (!driver) {
    gp__pb_uint(pb, GP_PB_VKMEM_MEMORY_TYPE, m->memory_type);
    gp__pb_uint(pb, GP_PB_VKMEM_HEAP, m->heap);
  }
  if (m->object_handle)
    gp__pb_fixed64(pb, GP_PB_VKMEM_OBJECT_HANDLE, m->object_handle);
  gp__pb_end_short(pb, e);
  gp__tw_packet_end(w);
}

/* The FtraceEvent field of each gp_dma_fence_event (0: none). */
static const uint32_t fence_field[] = {
    [GP_DMA_FENCE_INIT] = GP_PB_FTRACE_DMA_FENCE_INIT,
    [GP_DMA_FENCE_EMIT] = GP_PB_FTRACE_DMA_FENCE_EMIT,
    [GP_DMA_FENCE_SIGNALED] = GP_PB_FTRACE_DMA_FENCE_SIGNALED,
    [GP_DMA_FENCE_WAIT_START] = GP_PB_FTRACE_DMA_FENCE_WAIT_START,
    [GP_DMA_FENCE_WAIT_END] = GP_PB_FTRACE_DMA_FENCE_WAIT_END};

/* Begins an FtraceEventBundle of one event, as Perfetto's traced_probes
 * writes the kernel's: the bundle's cpu, the event's timestamp (boot
 * clock, the bundle's default) and pid (the task); then the event's own
 * message, field `field` of FtraceEvent. End it with ftrace_end(). */
static void ftrace_begin(gp__tw *w, uint64_t ts, uint32_t cpu, uint32_t tid,
                         uint32_t field, gp__pb_short *open) {
  gp__tw_saw_ts(w, ts);
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, ts, 0);
  open[0] = gp__pb_begin_medium(pb, GP_PB_PACKET_FTRACE_EVENTS);
  gp__pb_uint(pb, GP_PB_FTRACE_BUNDLE_CPU, cpu);
  open[1] = gp__pb_begin_medium(pb, GP_PB_FTRACE_BUNDLE_EVENT);
  gp__pb_uint(pb, GP_PB_FTRACE_EVENT_TIMESTAMP, ts);
  gp__pb_uint(pb, GP_PB_FTRACE_EVENT_PID, gp__tw_pid(w, tid));
  open[2] = gp__pb_begin_medium(pb, field);
}

static void ftrace_end(gp__tw *w, gp__pb_short *open) {
  for (int i = 2; i >= 0; i--)
    gp__pb_end_medium(&w->pb, open[i]);
  gp__tw_packet_end(w);
}

/* See writerInt.h: one FtraceEventBundle of one event. */
void gp__tw_dma_fence(gp__tw *w, const gp_activity_dma_fence *f) {
  if (f->event >= sizeof(fence_field) / sizeof(fence_field[0]) ||
      !fence_field[f->event])
    return;
  gp__pb_writer *pb = &w->pb;
  gp__pb_short open[3];
  ftrace_begin(w, f->timestamp, f->cpu, f->thread_id, fence_field[f->event],
               open);
  gp__pb_uint(pb, GP_PB_DMA_FENCE_CONTEXT, f->context);
  gp__pb_string(pb, GP_PB_DMA_FENCE_DRIVER, gp_activity_string(f->driver_id));
  gp__pb_uint(pb, GP_PB_DMA_FENCE_SEQNO, f->seqno);
  gp__pb_string(pb, GP_PB_DMA_FENCE_TIMELINE,
                gp_activity_string(f->timeline_id));
  ftrace_end(w, open);
}

/* The FtraceEvent field of each gp_ftrace_event a GPU_FTRACE record
 * carries (0: none). */
static const uint32_t gpu_ftrace_field[GP_FTRACE_EVENT_COUNT] = {
    [GP_FTRACE_GPU_FREQUENCY] = GP_PB_FTRACE_GPU_FREQUENCY,
    [GP_FTRACE_GPU_MEM_TOTAL] = GP_PB_FTRACE_GPU_MEM_TOTAL,
    [GP_FTRACE_DRM_SCHED_JOB] = GP_PB_FTRACE_DRM_SCHED_JOB,
    [GP_FTRACE_DRM_RUN_JOB] = GP_PB_FTRACE_DRM_RUN_JOB,
    [GP_FTRACE_DRM_SCHED_PROCESS_JOB] = GP_PB_FTRACE_DRM_SCHED_PROCESS_JOB,
    [GP_FTRACE_DRM_SCHED_JOB_QUEUE] = GP_PB_FTRACE_DRM_SCHED_JOB_QUEUE,
    [GP_FTRACE_DRM_SCHED_JOB_RUN] = GP_PB_FTRACE_DRM_SCHED_JOB_RUN,
    [GP_FTRACE_DRM_SCHED_JOB_DONE] = GP_PB_FTRACE_DRM_SCHED_JOB_DONE,
    [GP_FTRACE_DRM_SCHED_JOB_ADD_DEP] = GP_PB_FTRACE_DRM_SCHED_JOB_ADD_DEP,
    [GP_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE] =
        GP_PB_FTRACE_DRM_SCHED_JOB_UNSCHEDULABLE};

/* See writerInt.h. Every field of the event's message, in field order,
 * as the kernel gave it. */
void gp__tw_gpu_ftrace(gp__tw *w, const gp_activity_gpu_ftrace *f) {
  if (f->event >= GP_FTRACE_EVENT_COUNT || !gpu_ftrace_field[f->event])
    return;
  gp__pb_writer *pb = &w->pb;
  gp__pb_short open[3];
  ftrace_begin(w, f->timestamp, f->cpu, f->thread_id,
               gpu_ftrace_field[f->event], open);
  switch (f->event) {
  case GP_FTRACE_GPU_FREQUENCY:
    gp__pb_uint(pb, GP_PB_FTRACE_GPU_FREQUENCY_GPU_ID, f->gpu_id);
    gp__pb_uint(pb, GP_PB_FTRACE_GPU_FREQUENCY_STATE, f->value);
    break;
  case GP_FTRACE_GPU_MEM_TOTAL:
    gp__pb_uint(pb, GP_PB_FTRACE_GPU_MEM_TOTAL_GPU_ID, f->gpu_id);
    gp__pb_uint(pb, GP_PB_FTRACE_GPU_MEM_TOTAL_PID, f->pid);
    gp__pb_uint(pb, GP_PB_FTRACE_GPU_MEM_TOTAL_SIZE, f->value);
    break;
  case GP_FTRACE_DRM_SCHED_JOB:
  case GP_FTRACE_DRM_RUN_JOB:
    gp__pb_uint(pb, GP_PB_DRM_JOB_ENTITY, f->entity);
    gp__pb_uint(pb, GP_PB_DRM_JOB_FENCE, f->fence);
    gp__pb_int(pb, GP_PB_DRM_JOB_HW_JOB_COUNT, f->hw_job_count);
    gp__pb_uint(pb, GP_PB_DRM_JOB_ID, f->job_id);
    gp__pb_uint(pb, GP_PB_DRM_JOB_JOB_COUNT, f->job_count);
    gp__pb_string(pb, GP_PB_DRM_JOB_NAME, gp_activity_string(f->ring_id));
    break;
  case GP_FTRACE_DRM_SCHED_PROCESS_JOB:
    gp__pb_uint(pb, GP_PB_DRM_PROCESS_JOB_FENCE, f->fence);
    break;
  case GP_FTRACE_DRM_SCHED_JOB_QUEUE:
  case GP_FTRACE_DRM_SCHED_JOB_RUN:
    gp__pb_string(pb, GP_PB_DRM_QUEUE_NAME, gp_activity_string(f->ring_id));
    gp__pb_uint(pb, GP_PB_DRM_QUEUE_JOB_COUNT, f->job_count);
    gp__pb_int(pb, GP_PB_DRM_QUEUE_HW_JOB_COUNT, f->hw_job_count);
    gp__pb_string(pb, GP_PB_DRM_QUEUE_DEV, gp_activity_string(f->dev_id));
    gp__pb_uint(pb, GP_PB_DRM_QUEUE_FENCE_CONTEXT, f->fence_context);
    gp__pb_uint(pb, GP_PB_DRM_QUEUE_FENCE_SEQNO, f->fence_seqno);
    gp__pb_uint(pb, GP_PB_DRM_QUEUE_CLIENT_ID, f->client_id);
    break;
  case GP_FTRACE_DRM_SCHED_JOB_DONE:
    gp__pb_uint(pb, GP_PB_DRM_DONE_FENCE_CONTEXT, f->fence_context);
    gp__pb_uint(pb, GP_PB_DRM_DONE_FENCE_SEQNO, f->fence_seqno);
    break;
  default: /* add_dep, unschedulable */
    gp__pb_uint(pb, GP_PB_DRM_DEP_FENCE_CONTEXT, f->fence_context);
    gp__pb_uint(pb, GP_PB_DRM_DEP_FENCE_SEQNO, f->fence_seqno);
    gp__pb_uint(pb, GP_PB_DRM_DEP_CTX, f->dep_context);
    gp__pb_uint(pb, GP_PB_DRM_DEP_SEQNO, f->dep_seqno);
    break;
  }
  ftrace_end(w, open);
}

/* ------------------------------------------------------------------ */
/* API calls                                                            */

static uint32_t gpu_api_of_domain(uint32_t domain) {
  switch (domain) {
  case GP_API_DOMAIN_CUDA_RUNTIME:
  case GP_API_DOMAIN_CUDA_DRIVER:
    return GP_API_CUDA;
  case GP_API_DOMAIN_OPENCL:
    return GP_API_OPEN_CL;
  case GP_API_DOMAIN_VULKAN:
    return GP_API_VULKAN;
  case GP_API_DOMAIN_OPENGL:
    return GP_API_OPEN_GL;
  default:
    return 0;
  }
}

/* What the begin packet of an API call says besides the call itself. */
typedef struct api_call {
  uint64_t track, name_iid, rv_iid;
  uint32_t api;     /* gp_api, 0: none */
  uint64_t wait_id; /* the wait it made, if waited */
  bool waited;
} api_call;

/* The most an API call's track event takes: its tag and length (2
 * bytes), type, name and track (33), the return value (the 4-byte length
 * of gp__pb_begin(): 27), the correlation (26) and the API (5). */
#define API_BEGIN_MAX 96

/* Puts the TrackEvent of an API call's begin packet at p (API_BEGIN_MAX
 * bytes reserved); returns its end. Inline: a call, its saves and the
 * api_call in memory were a fifth of an API record's instructions. */
static inline __attribute__((always_inline)) uint8_t *
put_api_begin(const gp__tw *w, uint8_t *p, const gp_activity_api *a,
              const api_call *c) {
  p = gp__pb_put_varint(p, (GP_PB_PACKET_TRACK_EVENT << 3) | GP_PB_LEN);
  uint8_t *te = p++;
  p = gp__pb_put_uint(p, GP_PB_TE_TYPE, GP_PB_TE_TYPE_SLICE_BEGIN);
  p = gp__pb_put_uint(p, GP_PB_TE_NAME_IID, c->name_iid);
  p = put_thread_track_field(w, p);
  if (c->rv_iid) {
    p = gp__pb_put_varint(p, (GP_PB_TE_DEBUG_ANNOTATIONS << 3) | GP_PB_LEN);
    uint8_t *len = p;
    p += 4;
    p = gp__pb_put_uint(p, GP_PB_DA_NAME_IID, c->rv_iid);
    p = gp__pb_put_uint(p, GP_PB_DA_INT_VALUE,
                        (uint64_t)(int64_t)a->return_value);
    gp__pb_put_len4(len, (uint64_t)(p - len - 4));
  }
  if (a->correlation_id) {
    p = gp__pb_put_varint(p, ((uint64_t)GP_PB_TE_GPU_CORRELATION << 3) |
                                 GP_PB_LEN);
    uint8_t *len = p++;
    p = gp__pb_put_uint(p, GP_PB_CORR_SUBMISSION_IDS,
                        gp__tw_event_id(w, a->correlation_id));
    if (c->waited)
      p = gp__pb_put_uint(p, GP_PB_CORR_WAIT_IDS,
                          gp__tw_event_id(w, c->wait_id));
    *len = (uint8_t)(p - len - 1);
  }
  if (c->api)
    p = gp__pb_put_uint(p, GP_PB_TE_GPU_API, c->api);
  *te = (uint8_t)(p - te - 1);
  return p;
}

/* gp__tw_put_track_event() of a slice's end on the thread's track
 * (thread_track() just called), at p (35 bytes reserved). */
static inline uint8_t *put_thread_slice_end(const gp__tw *w, uint8_t *p) {
  p[0] = (GP_PB_PACKET_TRACK_EVENT << 3) | GP_PB_LEN;
  p[1] = (uint8_t)(2 + w->last_thread_field_len);
  p[2] = (GP_PB_TE_TYPE << 3) | GP_PB_VARINT;
  p[3] = GP_PB_TE_TYPE_SLICE_END;
  return put_thread_track_field(w, p + 4);
}

/* gp__tw_put_slice_end_packet() on the thread's track, at p (48 + 35
 * bytes reserved). */
static inline uint8_t *put_thread_slice_end_packet(const gp__tw *w, uint8_t *p,
                                                   uint64_t ts) {
  uint8_t *p0 = p;
  p = gp__tw_put_packet_head(w, p0, ts, 0);
  p = put_thread_slice_end(w, p);
  gp__pb_put_len2(p0 + 1, (uint64_t)(p - p0 - 3));
  return p;
}

/* See writerInt.h. */
void gp__tw_api(gp__tw *w, const gp_activity_api *a) {
  gp__tw_saw_ts(w, a->end);
  if (w->o.gpu_log && a->return_value != 0) {
    char msg[256];
    snprintf(msg, sizeof(msg), "%s returned %s: %s",
             gp__tw_string(w, a->name_id), gp_error_name(a->return_value),
             gp_strerror(a->return_value));
    gpu_log(w, a->end, GP_PB_LOG_SEVERITY_ERROR, gp__tw_string(w, a->name_id),
            msg);
  }
  if (!w->o.render_stages)
    return;
  uint64_t track = thread_track(w, a->process_id, a->thread_id);
  api_call c = {track, gp__tw_event_name(w, a->name_id),
                0,     gpu_api_of_domain(a->domain),
                0,     false};
  /* The wait this call made (SYNCHRONIZATION records come first). */
  uint32_t slot = (uint32_t)(a->correlation_id % TW_SYNC_RING);
  if (a->correlation_id && w->sync_ring[slot].corr == a->correlation_id) {
    c.wait_id = w->sync_ring[slot].wait_id;
    c.waited = true;
    w->sync_ring[slot].corr = 0;
  }
  if (a->return_value != 0) {
    static uint32_t rv_cache;
    uint32_t rv_name = gp__tw_intern_cached(w, &rv_cache, "return_value");
    c.rv_iid =
        gp__tw_intern_string(w, &w->debug_names, TW_PEND_DEBUG_NAME, rv_name);
  }
  gp__pb_writer *pb = &w->pb;
  if (GP_LIKELY(gp__tw_packet_plain(w) &&
                gp__pb_reserve(pb, 48 + API_BEGIN_MAX + 48 + 35))) {
    /* Both packets in one reservation, their heads put here. */
    uint8_t *p0 = pb->p;
    uint8_t *p = gp__tw_put_packet_head(w, p0, a->start,
                                        GP_PB_SEQ_NEEDS_INCREMENTAL_STATE);
    p = put_api_begin(w, p, a, &c);
    gp__pb_put_len2(p0 + 1, (uint64_t)(p - p0 - 3));
    pb->p = put_thread_slice_end_packet(w, p, a->end);
    w->st.packets += 2;
  } else {
    uint8_t *p = gp__tw_packet_open(
        w, a->start, GP_PB_SEQ_NEEDS_INCREMENTAL_STATE, API_BEGIN_MAX);
    if (p)
      p = put_api_begin(w, p, a, &c);
    gp__tw_packet_close(w, p);
    p = gp__tw_packet_open(w, a->end, 0, 35);
    if (p)
      p = put_thread_slice_end(w, p);
    gp__tw_packet_close(w, p);
  }
  w->st.track_events += 2;
}

/* See writerInt.h: Perfetto's VulkanApiEvent.VkQueueSubmit beside the
 * call's slice (written first, so its thread is known). Its
 * submission_id is the render stages'. */
void gp__tw_vk_submit(gp__tw *w, const gp_activity_api_submit *s) {
  const gp_activity_api *a = &s->api;
  uint32_t n = s->num_command_buffers;
  if (a->return_value != 0 ||
      s->api.hdr.size < sizeof(*s) + (uint64_t)n * sizeof(uint64_t))
    return;
  tw_entry *e = gp__tw_map_get(
      &w->threads, ((uint64_t)a->process_id << 32) | a->thread_id, 0, NULL);
  uint32_t tid = e ? written_tid(w, e, a->process_id, a->thread_id)
                   : gp__tw_pid(w, a->thread_id);
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, a->start, 0);
  gp__pb_short ev = gp__pb_begin_short(pb, GP_PB_PACKET_VULKAN_API_EVENT);
  gp__pb_begin(pb, GP_PB_VKAPI_QUEUE_SUBMIT);
  gp__pb_uint(pb, GP_PB_VKSUBMIT_DURATION_NS,
              a->end > a->start ? a->end - a->start : 0);
  gp__pb_uint(pb, GP_PB_VKSUBMIT_PID, gp__tw_pid(w, a->process_id));
  gp__pb_uint(pb, GP_PB_VKSUBMIT_TID, tid);
  gp__pb_uint(pb, GP_PB_VKSUBMIT_QUEUE, s->queue);
  for (uint32_t i = 0; i < n; i++)
    gp__pb_uint(pb, GP_PB_VKSUBMIT_COMMAND_BUFFERS, s->command_buffers[i]);
  gp__pb_uint(pb, GP_PB_VKSUBMIT_SUBMISSION_ID, s->submission_id);
  gp__pb_end(pb);
  gp__pb_end_short(pb, ev);
  gp__tw_packet_end(w);
}

/* See writerInt.h. */
void gp__tw_sync(gp__tw *w, const gp_activity_sync *s) {
  gp__tw_saw_ts(w, s->end);
  /* Only waits of the host count: a stream waiting for an event is the
   * GPU waiting (render stages say so with event_wait_ids). */
  if (!s->wait_id || !s->correlation_id ||
      s->sync_kind == GP_SYNC_STREAM_WAIT_EVENT)
    return;
  /* Kept by the call's correlation id until its API record comes. */
  uint32_t slot = (uint32_t)(s->correlation_id % TW_SYNC_RING);
  w->sync_ring[slot].corr = s->correlation_id;
  w->sync_ring[slot].wait_id = s->wait_id;
}

/* ------------------------------------------------------------------ */
/* User markers and ranges                                              */

static void slice_event(gp__tw *w, uint64_t ts, uint32_t type, uint64_t track,
                        uint32_t name_id, uint32_t category_id) {
  uint64_t name_iid = name_id ? gp__tw_event_name(w, name_id) : 0;
  uint64_t cat_iid = 0;
  if (category_id) {
    /* Ranges come in runs of one domain: its iid, queued or emitted in
     * this generation already, without the hash map. */
    if (category_id == w->last_cat_id && w->last_cat_gen == w->gen) {
      cat_iid = w->last_cat_iid;
    } else {
      cat_iid = gp__tw_intern_string(w, &w->categories, TW_PEND_CATEGORY,
                                     category_id);
      w->last_cat_id = category_id;
      w->last_cat_iid = cat_iid;
      w->last_cat_gen = cat_iid ? w->gen : 0;
    }
  }
  /* One reservation for the packet: its TrackEvent's tag and length (2),
   * category (11), type (2), name (11) and track (11). */
  uint8_t *p = gp__tw_packet_open(
      w, ts, name_iid || cat_iid ? GP_PB_SEQ_NEEDS_INCREMENTAL_STATE : 0, 37);
  if (p) {
    *p++ = (GP_PB_PACKET_TRACK_EVENT << 3) | GP_PB_LEN;
    uint8_t *len = p++;
    if (cat_iid)
      p = gp__pb_put_uint(p, GP_PB_TE_CATEGORY_IIDS, cat_iid);
    p = gp__pb_put_uint(p, GP_PB_TE_TYPE, type);
    if (name_iid)
      p = gp__pb_put_uint(p, GP_PB_TE_NAME_IID, name_iid);
    p = gp__pb_put_uint(p, GP_PB_TE_TRACK_UUID, track);
    *len = (uint8_t)(p - len - 1);
  }
  gp__tw_packet_close(w, p);
  w->st.track_events++;
}

/* See writerInt.h. */
void gp__tw_marker_data(gp__tw *w, const gp_activity_marker_data *d) {
  w->marker_data = *d;
}

/* A marker's INSTANT or SLICE_BEGIN event with what it carried (d) as
 * debug annotations: "color" ("#aarrggbb"), "category", "payload". Its
 * name and domain as strings: the event is rare, not worth the interned
 * fast path of slice_event(). */
static void marker_event_with_data(gp__tw *w, const gp_activity_marker *m,
                                   uint32_t type, uint64_t track,
                                   const gp_activity_marker_data *d) {
  gp__tw_event_begin(w, m->timestamp, type, track,
                     m->domain_id ? gp__tw_string(w, m->domain_id) : NULL,
                     gp__tw_string(w, m->name_id));
  if (d->flags & GP_ACTIVITY_FLAG_MARKER_COLOR_ARGB) {
    char hex[16];
    snprintf(hex, sizeof(hex), "#%08x", (unsigned)d->color);
    gp__tw_annotate_string(&w->pb, "color", hex);
  }
  if (d->category)
    gp__tw_annotate_uint(&w->pb, "category", d->category);
  if (d->payload_kind != GP_MARKER_PAYLOAD_NONE) {
    gp__pb_begin(&w->pb, GP_PB_TE_DEBUG_ANNOTATIONS);
    gp__pb_string(&w->pb, GP_PB_DA_NAME, "payload");
    if (d->payload_kind == GP_MARKER_PAYLOAD_INT64)
      gp__pb_int(&w->pb, GP_PB_DA_INT_VALUE, d->payload.i64);
    else if (d->payload_kind == GP_MARKER_PAYLOAD_DOUBLE)
      gp__pb_double(&w->pb, GP_PB_DA_DOUBLE_VALUE, d->payload.f64);
    else
      gp__pb_uint(&w->pb, GP_PB_DA_UINT_VALUE, d->payload.u64);
    gp__pb_end(&w->pb);
  }
  gp__tw_event_end(w);
}

/* See writerInt.h. */
void gp__tw_marker(gp__tw *w, const gp_activity_marker *m) {
  gp__tw_saw_ts(w, m->timestamp);
  /* What it carried, if the record before it on its thread said so (the
   * two are adjacent in their buffer; should a buffer end between them
   * and another thread's marker data come first, the args are lost). */
  gp_activity_marker_data d = {0};
  if (w->marker_data.id && w->marker_data.id == m->id) {
    if (!(m->flags & GP_ACTIVITY_FLAG_MARKER_END))
      d = w->marker_data;
    w->marker_data.id = 0;
  }
  if (!w->o.render_stages)
    return;
  if (m->flags & GP_ACTIVITY_FLAG_MARKER_INSTANT) {
    uint64_t track = thread_track(w, m->process_id, m->thread_id);
    if (d.id)
      marker_event_with_data(w, m, GP_PB_TE_TYPE_INSTANT, track, &d);
    else
      slice_event(w, m->timestamp, GP_PB_TE_TYPE_INSTANT, track, m->name_id,
                  m->domain_id);
    return;
  }
  bool start = (m->flags & GP_ACTIVITY_FLAG_MARKER_START) != 0;
  if (m->depth > 0) { /* push/pop: nests on the thread's track */
    uint64_t track = thread_track(w, m->process_id, m->thread_id);
    if (start && d.id)
      marker_event_with_data(w, m, GP_PB_TE_TYPE_SLICE_BEGIN, track, &d);
    else
      slice_event(w, m->timestamp,
                  start ? GP_PB_TE_TYPE_SLICE_BEGIN : GP_PB_TE_TYPE_SLICE_END,
                  track, start ? m->name_id : 0, start ? m->domain_id : 0);
    return;
  }
  /* start/end ranges may cross threads and overlap: a track each. */
  uint64_t track = gp__tw_track_uuid(w, TW_TRACK_ASYNC, m->id);
  if (start) {
    uint64_t parent = process_track(w, m->process_id);
    gp__tw_track_descriptor(w, track, parent, gp__tw_string(w, m->name_id));
  }
  if (start && d.id) {
    marker_event_with_data(w, m, GP_PB_TE_TYPE_SLICE_BEGIN, track, &d);
    return;
  }
  slice_event(w, m->timestamp,
              start ? GP_PB_TE_TYPE_SLICE_BEGIN : GP_PB_TE_TYPE_SLICE_END,
              track, start ? m->name_id : 0, start ? m->domain_id : 0);
}

/* ------------------------------------------------------------------ */
/* Drops and overhead                                                   */

/* See writerInt.h. */
void gp__tw_dropped(gp__tw *w, const gp_activity_dropped *d) {
  gp__tw_saw_ts(w, d->last);
  w->st.dropped += d->count;
  /* The records are gone: say so, and start the incremental state anew. */
  gp__tw_reset_incremental(w, true);
  gp__tw_own_counter(w, TW_COUNTER_DROPPED,
                     d->last ? d->last : gp__tw_now_ts(w), w->st.dropped);
  if (w->o.gpu_log) {
    char msg[160];
    snprintf(msg, sizeof(msg), "%llu %s records dropped (%s)",
             (unsigned long long)d->count,
             gp_activity_kind_name(d->dropped_kind),
             gp_drop_reason_name(d->reason));
    gpu_log(w, d->last, GP_PB_LOG_SEVERITY_WARNING, "gpuperf", msg);
  }
}

/* See writerInt.h. */
void gp__tw_overhead(gp__tw *w, const gp_activity_overhead *o) {
  /* Real-time measurements: never part of a deterministic trace. */
  if (w->o.deterministic || !w->o.render_stages || o->end < o->start)
    return;
  /* By kind: gpuperf's own work is named "gpuperf ..." (the report
   * counts those as its overhead); the driver's compiling is the
   * program's. */
  static const char *const names[] = {
      [GP_OVERHEAD_UNKNOWN] = "gpuperf overhead",
      [GP_OVERHEAD_BUFFER_FLUSH] = "gpuperf buffer completion",
      [GP_OVERHEAD_INSTRUMENTATION] = "gpuperf instrumentation",
      [GP_OVERHEAD_RESOURCE] = "gpuperf resources",
      [GP_OVERHEAD_DRIVER_COMPILER] = "driver compiler (JIT)"};
  static uint32_t cache[GP_ARRAY_SIZE(names)];
  uint32_t k = o->overhead_kind < GP_ARRAY_SIZE(names) ? o->overhead_kind : 0;
  uint32_t name = gp__tw_intern_cached(w, &cache[k], names[k]);
  uint64_t track = thread_track(w, o->process_id, o->thread_id);
  slice_event(w, o->start, GP_PB_TE_TYPE_SLICE_BEGIN, track, name, 0);
  slice_event(w, o->end, GP_PB_TE_TYPE_SLICE_END, track, 0, 0);
}

/* See writerInt.h. */
void gp__tw_name(gp__tw *w, const gp_activity_name *n) {
  if (n->object_kind == GP_OBJECT_API_OBJECT && w->o.render_stages &&
      n->hdr.size >= sizeof(*n))
    api_object_name(w, n);
  else if (n->object_kind == GP_OBJECT_THREAD && w->o.render_stages)
    thread_name(w, n);
  else if (n->object_kind == GP_OBJECT_STREAM && w->o.render_stages)
    gp__tw_gpu_stream_name(w, n);
}
