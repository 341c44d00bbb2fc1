/*
 * session.c - tracing sessions (session.h): a trace config turned into
 * enabled record kinds, counter sampling on the devices it names, and a
 * trace writer (src/perfetto/writer.c) fed by a buffer observer.
 *
 * Observers are called on the collector thread with a `user` pointer that
 * may outlive the session, so they get a static slot, never freed; the
 * slot's lock is held while a buffer is written and cleared at stop, after
 * which no call can reach the session.
 *
 * Kinds and attributes are shared by every session of the process (and by
 * the application): a kind is enabled by the first session that needs it
 * and disabled after the last one only if it was off before; the flush
 * period and buffer pool limit are restored likewise.
 *
 * Counters (session_counters.c) start on the devices that exist when a
 * session starts and on those whose catalogs are announced while it runs.
 * A helper thread ends the session after duration_ms.
 *
 * Recording another program: the constructor below starts a session when
 * GPUPERF_RECORD_DIR is set, and the fork handlers give a forked child its
 * own file and packet sequence (session.h describes the protocol).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend/linux/tracefs.h"
#include "producer.h"
#include "sessionInt.h"
#include "core/thread.h"
#include "perfetto/tconfig.h"

static struct {
  pthread_mutex_t lock;
  gp_session *s; /* NULL: free or detached */
  bool used;
} slots[MAX_SESSIONS];

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t kind_refs[GP_ACTIVITY_KIND_COUNT];
static bool kind_prior[GP_ACTIVITY_KIND_COUNT];
static int active_sessions;
static size_t saved_flush_ms, saved_pool;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static gp_session *env_session;
static char env_dir[4096];
static gp__tw *inherited[MAX_SESSIONS]; /* kept reachable, never used */

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void global_init(void) {
  for (int i = 0; i < MAX_SESSIONS; i++)
    pthread_mutex_init(&slots[i].lock, NULL);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static uint64_t mono_now(void) {
  return gp_clock_read_host(GP_CLOCK_MONOTONIC);
}

/* Prints "gpuperf: PROGRAM: message" for a recorded process (nobody else
 * can tell the user); the program's name is left out when the program is
 * gpuperf itself, whose messages already say so. */
static void env_warnv(const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  const char *prog = program_invocation_short_name;
  if (!prog || !*prog || strcmp(prog, "gpuperf") == 0 ||
      strncmp(msg, "gpuperf", 7) == 0)
    fprintf(stderr, "gpuperf: %s\n", msg);
  else
    fprintf(stderr, "gpuperf: %s: %s\n", prog, msg);
}

static void env_warn(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void env_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  env_warnv(fmt, ap);
  va_end(ap);
}

/* See sessionInt.h. */
void gp__session_warn(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  env_warnv(fmt, ap);
  va_end(ap);
}

/* See sessionInt.h. */
void gp__session_error(const gp_session_options *o, const char *fmt, ...) {
  if (!o || !o->error || !o->error_size)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->error, o->error_size, fmt, ap);
  va_end(ap);
}

/* ------------------------------------------------------------------ */
/* The observer                                                         */

static void observe(void *user, const uint8_t *buffer, size_t valid) {
  int i = (int)(intptr_t)user;
  pthread_mutex_lock(&slots[i].lock);
  gp_session *s = slots[i].s;
  if (s && s->env) {
    /* The death page says how far the part was written, so that a
     * recorder salvaging our records after a SIGKILL writes each once
     * (session_salvage.c); what we wrote is not lost if we die. */
    gp__tw_stats st;
    gp__tw_get_stats(s->w, &st);
    gp__death_page_write_begin(st.bytes, buffer, valid);
    gp__tw_consume(s->w, buffer, valid);
    gp__tw_get_stats(s->w, &st);
    gp__death_page_write_end(st.bytes);
  } else if (s) {
    gp__tw_consume(s->w, buffer, valid);
  }
  pthread_mutex_unlock(&slots[i].lock);
}

static int slot_take(gp_session *s) {
  pthread_mutex_lock(&g_lock);
  int found = -1;
  for (int i = 0; i < MAX_SESSIONS && found < 0; i++)
    if (!slots[i].used)
      found = i;
  if (found >= 0)
    slots[found].used = true;
  pthread_mutex_unlock(&g_lock);
  if (found >= 0) {
    pthread_mutex_lock(&slots[found].lock);
    slots[found].s = s;
    pthread_mutex_unlock(&slots[found].lock);
  }
  return found;
}

static void slot_detach(int i) {
  pthread_mutex_lock(&slots[i].lock);
  slots[i].s = NULL;
  pthread_mutex_unlock(&slots[i].lock);
}

/* ------------------------------------------------------------------ */
/* Kinds and attributes                                                 */

static uint64_t kinds_for(const gp_trace_config *cfg, bool deterministic) {
  uint64_t k = 0;
  /* Modules, functions and device attributes only where the config asks
   * (gp__trace_config_code_objects says why). */
  bool code = gp__trace_config_code_objects(cfg);
  bool source = gp__trace_config_source_level(cfg); /* the same */
  gp_data_source_info ds;
  for (uint32_t i = 0; gp_trace_config_get_data_source(cfg, i, &ds) == 0; i++) {
    switch (ds.kind) {
    case GP_DATA_SOURCE_GPU_RENDERSTAGES:
      k |= (1ull << GP_ACTIVITY_KIND_KERNEL) |
           (1ull << GP_ACTIVITY_KIND_MEMCPY) |
           (1ull << GP_ACTIVITY_KIND_MEMSET) | (1ull << GP_ACTIVITY_KIND_API) |
           (1ull << GP_ACTIVITY_KIND_MARKER) |
           (1ull << GP_ACTIVITY_KIND_MARKER_DATA) |
           (1ull << GP_ACTIVITY_KIND_DEVICE) |
           (1ull << GP_ACTIVITY_KIND_CONTEXT) |
           (1ull << GP_ACTIVITY_KIND_NAME) |
           (1ull << GP_ACTIVITY_KIND_SYNCHRONIZATION) |
           (1ull << GP_ACTIVITY_KIND_RENDER_STAGE) |
           (1ull << GP_ACTIVITY_KIND_CDP_KERNEL) |
           (1ull << GP_ACTIVITY_KIND_PREEMPTION) |
           (1ull << GP_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
      if (code)
        k |= (1ull << GP_ACTIVITY_KIND_MODULE) |
             (1ull << GP_ACTIVITY_KIND_FUNCTION) |
             (1ull << GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE);
      if (source) /* with the kernels whose ends place them */
        k |= (1ull << GP_ACTIVITY_KIND_SOURCE_LOCATOR) |
             (1ull << GP_ACTIVITY_KIND_GLOBAL_ACCESS) |
             (1ull << GP_ACTIVITY_KIND_SHARED_ACCESS) |
             (1ull << GP_ACTIVITY_KIND_BRANCH) |
             (1ull << GP_ACTIVITY_KIND_INSTRUCTION_EXECUTION);
      if (!deterministic)
        k |= 1ull << GP_ACTIVITY_KIND_OVERHEAD;
      break;
    case GP_DATA_SOURCE_GPU_COUNTERS:
      /* Environment samples (clocks, power, temperature, memory) are
       * counters too: gpufreq, GPU Memory and their own counter tracks. */
      k |= (1ull << GP_ACTIVITY_KIND_COUNTER) |
           (1ull << GP_ACTIVITY_KIND_DEVICE) |
           (1ull << GP_ACTIVITY_KIND_ENVIRONMENT);
      if (code)
        k |= 1ull << GP_ACTIVITY_KIND_DEVICE_ATTRIBUTE;
      break;
    case GP_DATA_SOURCE_GPU_LOG:
      k |= (1ull << GP_ACTIVITY_KIND_API) | (1ull << GP_ACTIVITY_KIND_GPU_LOG);
      break;
    case GP_DATA_SOURCE_VULKAN_MEMORY:
      k |= 1ull << GP_ACTIVITY_KIND_GPU_MEMORY;
      break;
    default:
      break;
    }
  }
  gp__tracefs_options fo;
  if (gp__session_ftrace_wanted(cfg, &fo))
    k |= (1ull << GP_ACTIVITY_KIND_DMA_FENCE) |
         (1ull << GP_ACTIVITY_KIND_GPU_FTRACE);
  return k | (1ull << GP_ACTIVITY_KIND_DROPPED);
}

static size_t get_attr(gp_activity_attr a) {
  size_t v = 0, n = sizeof(v);
  gp_activity_get_attribute(a, &n, &v);
  return v;
}

static void set_attr(gp_activity_attr a, size_t v) {
  size_t n = sizeof(v);
  gp_activity_set_attribute(a, &n, &v);
}

/* Takes references on kinds and sets the attributes. g_lock held. */
static void acquire_shared(gp_session *s, uint32_t flush_ms, uint64_t buf_kb) {
  for (uint32_t k = 1; k < GP_ACTIVITY_KIND_COUNT; k++) {
    if (!(s->kinds & (1ull << k)))
      continue;
    if (kind_refs[k]++ == 0) {
      kind_prior[k] = gp_activity_is_enabled(0, (gp_activity_kind)k) == 1;
      gp_activity_enable((gp_activity_kind)k);
    }
  }
  if (active_sessions++ == 0) {
    saved_flush_ms = get_attr(GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS);
    saved_pool = get_attr(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT);
  }
  size_t cur = get_attr(GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS);
  if (cur == 0 || cur > flush_ms)
    set_attr(GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS, flush_ms);
  size_t bsize = get_attr(GP_ACTIVITY_ATTR_BUFFER_SIZE);
  if (buf_kb && bsize) {
    size_t want = (size_t)(buf_kb * 1024 / bsize);
    if (want > get_attr(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT))
      set_attr(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, want);
  }
}

static void release_shared(gp_session *s) {
  pthread_mutex_lock(&g_lock);
  for (uint32_t k = 1; k < GP_ACTIVITY_KIND_COUNT; k++) {
    if (!(s->kinds & (1ull << k)))
      continue;
    if (--kind_refs[k] == 0 && !kind_prior[k])
      gp_activity_disable((gp_activity_kind)k);
  }
  s->kinds = 0;
  if (--active_sessions == 0) {
    set_attr(GP_ACTIVITY_ATTR_FLUSH_PERIOD_MS, saved_flush_ms);
    set_attr(GP_ACTIVITY_ATTR_BUFFER_POOL_LIMIT, saved_pool);
  }
  pthread_mutex_unlock(&g_lock);
}

/* See sessionInt.h. */
void gp__session_write_process_counters(gp_session *s, uint64_t ts,
                                        const gp__tw_process_counter *c,
                                        size_t n) {
  int i = s->slot;
  if (i < 0)
    return;
  /* The slot's lock keeps the death page's account of the part (observe)
   * true: nothing is written between its notes. */
  pthread_mutex_lock(&slots[i].lock);
  if (slots[i].s == s)
    gp__tw_process_counters(s->w, ts, c, n);
  pthread_mutex_unlock(&slots[i].lock);
}

/* ------------------------------------------------------------------ */
/* Helper thread                                                        */

static int session_stop(gp_session *s, bool from_helper);

static void *helper_main(void *arg) {
  gp_session *s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->helper_quit &&
           !(s->deadline_ns && mono_now() >= s->deadline_ns)) {
      if (s->deadline_ns) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t left = s->deadline_ns - mono_now();
        if (left > 100000000ull)
          left = 100000000ull;
        ts.tv_nsec += (long)left;
        while (ts.tv_nsec >= 1000000000L) {
          ts.tv_sec++;
          ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->cond, &s->lock, &ts);
      } else {
        pthread_cond_wait(&s->cond, &s->lock);
      }
    }
    if (s->helper_quit)
      break;
    /* duration_ms is over. */
    s->deadline_ns = 0;
    pthread_mutex_unlock(&s->lock);
    session_stop(s, true);
    pthread_mutex_lock(&s->lock);
    break;
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                       */

/* See sessionInt.h. */
void gp__session_writer_options(const gp_trace_config *cfg, uint32_t seq,
                                int fd, bool deterministic, gp__tw_options *o) {
  gp_trace_config_info ti;
  gp_trace_config_get_info(cfg, &ti);
  memset(o, 0, sizeof(*o));
  o->sequence_id = seq;
  o->machine_id = ti.machine_id;
  o->descriptor_mode = ti.counter_descriptor_mode;
  o->deterministic = deterministic;
  /* GPUPERF_HOST_IDENTITY=0: the same bytes on every machine (tests). */
  const char *hid = getenv("GPUPERF_HOST_IDENTITY");
  o->host_identity = !(hid && strcmp(hid, "0") == 0);
  o->fd = fd;
  o->sources_cfg = cfg;
  o->code_objects = gp__trace_config_code_objects(cfg);
  o->source_level = gp__trace_config_source_level(cfg);
  gp_data_source_info ds;
  for (uint32_t i = 0; gp_trace_config_get_data_source(cfg, i, &ds) == 0; i++) {
    if (ds.kind == GP_DATA_SOURCE_GPU_RENDERSTAGES) {
      /* Each device's own data source says whether its work has
       * stream slices (writer_devices.c); some may. */
      o->render_stages = true;
      o->stream_slices |= !ds.low_overhead;
      o->work_by_vendor |= *ds.vendor && strcmp(ds.vendor, "gpuperf") != 0;
    } else if (ds.kind == GP_DATA_SOURCE_GPU_COUNTERS) {
      o->counters = true;
    } else if (ds.kind == GP_DATA_SOURCE_GPU_LOG) {
      o->gpu_log = true;
    } else if (ds.kind == GP_DATA_SOURCE_VULKAN_MEMORY) {
      /* Neither asked for: device memory (gpuperf's choice). */
      o->vk_driver_memory = ds.track_driver_memory_usage != 0;
      o->vk_device_memory =
          ds.track_device_memory_usage != 0 || !ds.track_driver_memory_usage;
    }
  }
}

static gp_trace_config *copy_config(const gp_trace_config *cfg) {
  size_t need = 0;
  gp_trace_config_format(cfg, NULL, 0, &need);
  char *text = malloc(need + 1);
  gp_trace_config *c = NULL;
  if (text && gp_trace_config_format(cfg, text, need + 1, &need) == 0 &&
      gp_trace_config_parse(text, need, &c, NULL, 0) != 0)
    c = NULL;
  free(text);
  return c;
}

static int start(const gp_trace_config *cfg, const char *path,
                 const gp_session_options *opts, bool env,
                 const gp__session_sink *sink, gp_session **out) {
  if (!cfg || !out || (opts && opts->reserved0) ||
      (!path && !sink && (!opts || opts->output_fd <= 0)) ||
      (opts && opts->sequence_id >= (1u << 24))) {
    gp__session_error(opts, "invalid arguments");
    return GP_EINVAL;
  }
  pthread_once(&init_once, global_init);
  gp_session *s = calloc(1, sizeof(*s));
  if (!s)
    return GP_ENOMEM;
  int rc = GP_ENOMEM;
  s->slot = -1;
  s->fd = -1;
  s->env = env;
  s->seq = opts && opts->sequence_id ? opts->sequence_id : 1;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  bool det = opts && (opts->flags & GP_SESSION_DETERMINISTIC);
  if (!(s->cfg = copy_config(cfg)))
    goto fail;
  if (sink) {
    s->fd = -1;
  } else if (path) {
    if ((rc = gp__session_open_output(s, path, opts)) != 0)
      goto fail;
  } else {
    s->fd = opts->output_fd;
  }
  gp__session_writer_options(s->cfg, s->seq, s->fd, det, &s->wopts);
  if (sink) {
    s->wopts.sink = sink->write;
    s->wopts.sink_flushed = sink->flushed;
    s->wopts.sink_user = sink->user;
    s->wopts.service_sequenced = true;
  }
  if ((rc = gp__tw_create(&s->wopts, &s->w)) != 0)
    goto fail;
  if ((s->slot = slot_take(s)) < 0) {
    rc = GP_EBUSY;
    gp__session_error(opts, "too many sessions at once (%d)", MAX_SESSIONS);
    goto fail;
  }
  if ((rc = gp__activity_add_observer(observe, (void *)(intptr_t)s->slot)))
    goto fail_slot;
  gp_trace_config_info ti;
  gp_trace_config_get_info(s->cfg, &ti);
  s->kinds = kinds_for(s->cfg, det);
  pthread_mutex_lock(&g_lock);
  acquire_shared(s,
                 ti.flush_period_ms ? ti.flush_period_ms
                 : env              ? ENV_FLUSH_MS
                                    : DEFAULT_FLUSH_MS,
                 ti.buffer_size_kb);
  pthread_mutex_unlock(&g_lock);
  /* Host counters first: the names they match are then not reported as
   * matching no device. Not fatal: the session goes on without them. */
  int hrc = gp__session_host_start(s);
  if (hrc != 0 && !env && s->counter_error == 0)
    s->counter_error = hrc;
  if ((rc = gp__session_counters_start(s, opts)) != 0)
    goto fail_shared;
  gp__session_ftrace_start(s);
  if (ti.duration_ms) {
    s->deadline_ns = mono_now() + (uint64_t)ti.duration_ms * 1000000ull;
    if (gp__thread_start(&s->helper, NULL, helper_main, s) == 0)
      s->helper_running = true;
  }
  *out = s;
  return 0;

fail_shared:
  gp__session_host_stop(s);
  gp__session_counters_unwatch(s);
  gp__session_counters_stop(s);
  release_shared(s);
  gp__activity_remove_observer(observe, (void *)(intptr_t)s->slot);
fail_slot:
  slot_detach(s->slot);
  pthread_mutex_lock(&g_lock);
  slots[s->slot].used = false;
  pthread_mutex_unlock(&g_lock);
fail:
  gp__tw_destroy(s->w);
  if (s->own_fd)
    close(s->fd);
  if (s->tmp)
    unlink(s->tmp);
  free(s->tmp);
  free(s->path);
  gp_trace_config_destroy(s->cfg);
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->lock);
  free(s);
  return rc;
}

/* See session.h. */
int gp_session_start(const gp_trace_config *cfg, const char *path,
                     const gp_session_options *opts, gp_session **out) {
  return start(cfg, path, opts, false, NULL, out);
}

/* See sessionInt.h. */
int gp__session_start_sink(const gp_trace_config *cfg,
                           const gp_session_options *opts,
                           const gp__session_sink *sink, gp_session **out) {
  if (!sink || !sink->write)
    return GP_EINVAL;
  return start(cfg, NULL, opts, false, sink, out);
}

/* See sessionInt.h. */
void gp__session_clear_incremental(gp_session *s) {
  pthread_mutex_lock(&s->lock);
  bool live = !s->stopped;
  pthread_mutex_unlock(&s->lock);
  if (live)
    gp__tw_clear_incremental(s->w);
}

/* The work of stopping; from_helper: called by the helper thread. */
static int session_stop(gp_session *s, bool from_helper) {
  pthread_mutex_lock(&s->lock);
  if (s->stopped) {
    int rc = s->stop_rc;
    pthread_mutex_unlock(&s->lock);
    if (!from_helper && s->helper_running) {
      pthread_join(s->helper, NULL);
      s->helper_running = false;
    }
    return rc;
  }
  s->stopped = true;
  s->helper_quit = !from_helper;
  pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
  if (!from_helper && s->helper_running) {
    pthread_join(s->helper, NULL);
    s->helper_running = false;
  }
  /* A vendor suffix that named no device: said once, here. */
  if (gp__session_suffix_unmatched(s, s->warning, sizeof(s->warning))) {
    if (s->env)
      env_warn("%s", s->warning);
  } else if (s->counter_error && s->counter_why[0]) {
    snprintf(s->warning, sizeof(s->warning), "counters not sampled: %s",
             s->counter_why);
  }
  char msg[256];
  if (gp__session_counters_unmatched(s, msg, sizeof(msg)) != 0) {
    if (s->counter_error == 0)
      s->counter_error = GP_ENOCOUNTER;
    if (s->env) /* nobody else can tell the user */
      env_warn("%s: nothing was sampled for it", msg);
  } else if (s->env && s->counter_error && s->counter_error != GP_ENOCOUNTER) {
    env_warn("counters not sampled: %s", s->counter_why[0]
                                             ? s->counter_why
                                             : gp_strerror(s->counter_error));
  }
  gp__session_counters_unwatch(s);
  gp__session_host_stop(s); /* its last sample while the writer is ours */
  if (s->slot >= 0 && slots[s->slot].s == s) {
    gp__session_ftrace_stop(s);
    gp__session_counters_stop(s);
    gp_activity_flush_all(GP_ACTIVITY_FLUSH_FORCED);
    gp__activity_remove_observer(observe, (void *)(intptr_t)s->slot);
    slot_detach(s->slot);
    release_shared(s);
    s->stop_rc = gp__tw_finish(s->w);
  }
  gp__tw_get_stats(s->w, &s->final);
  s->have_final = true;
  if (s->own_fd && s->fd >= 0) {
    if (close(s->fd) != 0 && s->stop_rc == 0)
      s->stop_rc = -errno;
    s->fd = -1;
    s->stop_rc = gp__session_finish_output(s, s->stop_rc);
  }
  if (s->slot >= 0) {
    pthread_mutex_lock(&g_lock);
    slots[s->slot].used = false;
    pthread_mutex_unlock(&g_lock);
    s->slot = -1;
  }
  return s->stop_rc;
}

/* See session.h. */
int gp_session_stop(gp_session *s) {
  if (!s)
    return GP_EINVAL;
  return session_stop(s, false);
}

/* See session.h. */
int gp_session_get_stats(const gp_session *s, gp_session_stats *st) {
  if (!s || !st)
    return GP_EINVAL;
  gp__tw_stats w;
  if (s->have_final)
    w = s->final;
  else
    gp__tw_get_stats(s->w, &w);
  memset(st, 0, sizeof(*st));
  st->records = w.records;
  st->packets = w.packets;
  st->bytes = w.bytes;
  st->render_stages = w.render_stages;
  st->track_events = w.track_events;
  st->counter_events = w.counter_events;
  st->dropped = w.dropped;
  st->writer_ns = w.writer_ns;
  st->sequence_id = s->seq;
  st->counter_error = s->counter_error;
  for (uint32_t d = 0; d < MAX_DEV; d++)
    st->counter_devices += (s->counters_ever >> d) & 1;
  return 0;
}

/* See session.h. */
const char *gp_session_warning(const gp_session *s) {
  return s && s->stopped && s->warning[0] ? s->warning : NULL;
}

/* See session.h. */
void gp_session_destroy(gp_session *s) {
  if (!s)
    return;
  session_stop(s, false);
  if (s == env_session)
    env_session = NULL;
  if (!s->w_inherited)
    gp__tw_destroy(s->w);
  gp_trace_config_destroy(s->cfg);
  free(s->tmp);
  free(s->path);
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

/* ------------------------------------------------------------------ */
/* Recording from the environment                                       */

/* Creates <dir>/<N>.pftrace for the smallest free N; returns the fd. */
static int claim_file(const char *dir, uint32_t *seq) {
  char path[4200];
  for (uint32_t n = 1; n < (1u << 24); n++) {
    snprintf(path, sizeof(path), "%s/%u.pftrace", dir, n);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      *seq = n;
      return fd;
    }
    if (errno != EEXIST)
      return -errno;
  }
  return GP_ENOSPC;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap)
      break;
    char *nb = realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* See session.h. */
int gp_session_start_from_env(gp_session **out) {
  const char *dir = getenv("GPUPERF_RECORD_DIR");
  if (!out)
    return GP_EINVAL;
  if (!dir || !*dir)
    return GP_ENOENT;
  const char *cpath = getenv("GPUPERF_RECORD_CONFIG");
  gp_trace_config *cfg = NULL;
  int rc;
  char err[512] = "";
  if (cpath && *cpath) {
    size_t len = 0;
    char *text = read_file(cpath, &len);
    if (!text) {
      int e = errno;
      struct stat st;
      /* The recording is over (a process left behind by the recorded
       * program): nothing to join, nothing to say. */
      if (e == ENOENT && stat(dir, &st) != 0)
        return GP_ENOENT;
      env_warn("cannot read %s: %s", cpath, strerror(e));
      return -e;
    }
    rc = gp_trace_config_parse(text, len, &cfg, err, sizeof(err));
    free(text);
    if (rc != 0) {
      env_warn("%s: %s", cpath, err);
      return rc;
    }
  } else if ((rc = gp_trace_config_default(&cfg)) != 0) {
    return rc;
  }
  /* activity_ranges count the activities of every process of the
   * recording together: the index is in a file they all map. */
  char rpath[4200];
  rc = gp__ranges_shared_map(dir, cfg, rpath, sizeof(rpath));
  if (rc != 0)
    env_warn("cannot map %s (%s): activity_ranges skip and count the "
             "activities of this process alone, not of the whole recording",
             rpath, gp_strerror(rc));
  uint32_t seq = 0;
  int fd = claim_file(dir, &seq);
  if (fd < 0) {
    struct stat st;
    if (fd != GP_ENOENT || stat(dir, &st) == 0)
      env_warn("cannot create a trace file in %s: %s", dir, gp_strerror(fd));
    gp_trace_config_destroy(cfg);
    return fd;
  }
  /* Counting starts before the session enables anything, so that every
   * record it will write has been counted (session_lost.c). */
  gp__death_page_open(dir, seq, false);
  gp_session_options o;
  memset(&o, 0, sizeof(o));
  o.sequence_id = seq;
  o.output_fd = fd;
  o.error = err;
  o.error_size = sizeof(err);
  gp_session *s = NULL;
  rc = start(cfg, NULL, &o, true, NULL, &s);
  gp_trace_config_destroy(cfg);
  if (rc != 0) {
    env_warn("not recording: %s", err[0] ? err : gp_strerror(rc));
    gp__death_page_close(dir, seq, true);
    close(fd);
    return rc;
  }
  /* The session owns the fd it claimed. */
  s->own_fd = true;
  snprintf(env_dir, sizeof(env_dir), "%s", dir);
  *out = s;
  return 0;
}

/* Tells the user and the recorder (a <seq>.failed note beside the part)
 * that this process's part of the trace could not be written whole. */
static void env_report_failure(const gp_session *s, int rc) {
  char path[4300], msg[4400];
  snprintf(msg, sizeof(msg), "cannot write %s/%u.pftrace: %s", env_dir, s->seq,
           gp_strerror(rc));
  env_warn("%s: the trace of this process is incomplete", msg);
  snprintf(path, sizeof(path), "%s/%u.failed", env_dir, s->seq);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  /* On a full disk the note may stay empty: its name says enough. */
  ssize_t k = write(fd, msg, strlen(msg));
  (void)k;
  close(fd);
}

/* See sessionInt.h. */
void gp__session_env_finish(void) {
  gp_session *s = env_session;
  if (!s || s->pid != getpid())
    return; /* none, or a vfork child: the memory is the parent's */
  bool was_stopped = s->stopped;
  int rc = gp_session_stop(s);
  if (was_stopped)
    return;
  if (rc != 0)
    env_report_failure(s, rc); /* the .failed note says what happened */
  gp__death_page_close(env_dir, s->seq, true);
}

static void env_at_exit(void) {
  gp__live_stop();
  gp__session_env_finish();
}

/*
 * A recorded process joins the recording when it first does GPU work, not
 * when it loads the library: the compilers, linkers and shells a program
 * runs, which inherit the environment and the preload, then leave no trace
 * of their own. The core tells us of that first work through its
 * activation hook (core.h, gp__activate), installed here at load time only
 * when the process is being recorded, so that everyone else pays one load.
 */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_start(void) {
  gp_session *s = NULL;
  if (gp_session_start_from_env(&s) == 0) {
    s->pid = getpid();
    env_session = s;
    atexit(env_at_exit);
    gp__live_start(); /* for `gpuperf top` */
    /* Fatal signals, _exit and abort finish it too (core/death.c). */
    gp__death_add_finisher(gp__session_env_finish);
    gp__death_watch();
  }
}

static bool env_record, env_producer;
static pthread_once_t producer_once = PTHREAD_ONCE_INIT;

static void env_activate(void) {
  if (env_record)
    pthread_once(&env_once, env_start);
  if (env_producer) /* GPUPERF_PRODUCER=perfetto (producer.c) */
    pthread_once(&producer_once, gp__producer_activate);
}

/* The program finalizes the activity API: what it recorded ends now,
 * while its last records and counter samples can still be delivered. */
static void env_finalizing(void) {
  if (env_record)
    gp__session_env_finish();
  if (env_producer)
    gp_producer_stop();
}

__attribute__((constructor)) static void session_ctor(void) {
  const char *dir = getenv("GPUPERF_RECORD_DIR");
  const char *producer = getenv("GPUPERF_PRODUCER");
  env_record = dir && *dir;
  env_producer = producer && *producer;
  if (env_record || env_producer) {
    gp__activate_set_hook(env_activate);
    gp__finalize_set_hook(env_finalizing);
  }
}

/* ------------------------------------------------------------------ */
/* fork()                                                               */

/*
 * No lock is taken around fork(): the collector may be writing a buffer
 * at that moment, and waiting for it from a prepare handler deadlocks when
 * the fork itself holds the allocator (sanitizers do). So the child never
 * trusts its copy of a writer: it is left alone (possibly half-updated)
 * and, for the session started from the environment, a new writer goes on
 * in a file and sequence of the child's own. Any other session belongs to
 * the parent and is detached in the child. Threads are gone: the helper
 * does not run in the child.
 */
static void atfork_prepare(void) {}

static void atfork_parent(void) {}

static void atfork_child(void) {
  gp__session_counters_after_fork();
  gp__ranges_after_fork();
  gp__producer_after_fork();
  gp__death_page_forget();
  for (int i = 0; i < MAX_SESSIONS; i++) {
    gp_session *s = slots[i].s;
    pthread_mutex_init(&slots[i].lock, NULL);
    if (!s)
      continue;
    gp__session_host_forget(s);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    s->helper_running = false;
    s->deadline_ns = 0;
    s->w_inherited = true;
    if (s->own_fd && s->fd >= 0)
      close(s->fd);
    s->fd = -1;
    uint32_t seq = 0;
    int fd = s->env && s == env_session ? claim_file(env_dir, &seq) : -1;
    gp__tw *w = NULL;
    if (fd >= 0) {
      gp__tw_options o = s->wopts;
      o.sequence_id = seq;
      o.fd = fd;
      if (gp__tw_create(&o, &w) != 0) {
        close(fd);
        fd = -1;
      }
    }
    if (w) {
      inherited[i] = s->w;
      s->w = w;
      s->w_inherited = false;
      s->fd = fd;
      s->own_fd = true;
      s->seq = seq;
      s->wopts.sequence_id = seq;
      s->wopts.fd = fd;
      s->pid = getpid();
      gp__death_page_open(env_dir, seq, true);
    } else {
      /* Its observer stays registered (core may not be called from here),
       * so the slot stays taken: it ignores every buffer from now on. */
      s->own_fd = false;
      s->stopped = true; /* the parent's: nothing to do here */
      s->slot = -1;
      gp__session_counters_unwatch(s);
      slots[i].s = NULL;
    }
  }
}
