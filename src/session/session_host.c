/*
 * session_host.c - the host CPU's perf_event counters of a recorded
 * process, as process counter tracks of its trace.
 *
 * A gpu.counters data source may name host counters (`record -e
 * task-clock,context-switches`, or counter_names in a config): names or
 * globs that match the host CPU's catalog (backend/linux/perf.h). The
 * session opens them on every thread of its process (following the
 * threads it creates, not the processes it forks), without registering
 * the host CPU as a device (which would renumber the program's devices),
 * and a thread of its own reads them every counter_period_ns (at least
 * HOST_MIN_PERIOD_NS) and once more at stop, writing each counter's total
 * since the session started as a counter track named for the counter
 * under the process's track. Samples are stamped with the trace clock
 * when read (the simulator's virtual clock, if it runs: a sample older
 * than the last one written, from before the clock changed, is left
 * out). Host counters are chosen by name only: a
 * config's "default" and counter_ids are the GPUs'.
 *
 * Where perf_event_open() is refused (kernel.perf_event_paranoid, a
 * container), the session goes on without them: a warning says why in a
 * recorded process, counter_error in the session's stats otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/linux/perf.h"
#include "sessionInt.h"
#include "core/thread.h"

#define HOST_MIN_PERIOD_NS 10000000ull /* 10 ms: one write per sample */

struct gp__session_host {
  gp_session *s;
  gp__perf_set *set;
  size_t n;
  uint32_t index[GP_PERFMON_MAX_COUNTERS]; /* host catalog indexes */
  double base[GP_PERFMON_MAX_COUNTERS];    /* the values at start */
  uint64_t period_ns;
  uint64_t last_ts; /* of the last sample written */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stop;
};

/* Adds the host counters the gpu.counters data sources of s name to h,
 * marking the names that matched; returns the period of the first data
 * source that named one (0: none named). */
static uint64_t select_host(gp_session *s, struct gp__session_host *h) {
  const gp__catalog *cat = gp__perf_catalog();
  gp_data_source_info ds;
  uint64_t period = 0;
  for (uint32_t i = 0; gp_trace_config_get_data_source(s->cfg, i, &ds) == 0;
       i++) {
    if (ds.kind != GP_DATA_SOURCE_GPU_COUNTERS)
      continue;
    const gp_counter_config *cc = &ds.counters;
    for (size_t k = 0; k < cc->num_counter_names; k++) {
      bool hit = false;
      for (uint32_t c = 0; c < cat->num_counters; c++) {
        if (!gp__glob_match(cc->counter_names[k], cat->counters[c].info.name))
          continue;
        hit = true;
        bool dup = false;
        for (size_t j = 0; j < h->n && !dup; j++)
          dup = h->index[j] == c;
        if (!dup && h->n < GP_ARRAY_SIZE(h->index))
          h->index[h->n++] = c;
      }
      if (hit && i < GP_ARRAY_SIZE(s->matched) && k < 64)
        s->matched[i] |= 1ull << k;
      if (hit && !period)
        period = cc->counter_period_ns ? cc->counter_period_ns
                                       : GP_DEFAULT_COUNTER_PERIOD_NS;
    }
  }
  return period;
}

/* Reads the counters and writes their totals since the start at now. */
static void sample(struct gp__session_host *h) {
  const gp__catalog *cat = gp__perf_catalog();
  double v[GP_PERFMON_MAX_COUNTERS];
  if (gp__perf_set_read(h->set, v) != 0)
    return;
  uint64_t now = gp_get_timestamp();
  /* The trace clock can change under us (the simulator's virtual time
   * starts with its first use): a track never goes back in time. */
  if (now < h->last_ts)
    return;
  h->last_ts = now;
  gp__tw_process_counter c[GP_PERFMON_MAX_COUNTERS];
  for (size_t i = 0; i < h->n; i++) {
    const gp_counter_info *ci = &cat->counters[h->index[i]].info;
    double d = v[i] - h->base[i];
    c[i].key = h->index[i];
    c[i].name = ci->name;
    c[i].time_ns =
        ci->num_numerator_units && ci->numerator_units[0] == GP_UNIT_NANOSECOND;
    c[i].value = d > 0 ? (int64_t)(d + 0.5) : 0;
  }
  gp__session_write_process_counters(h->s, now, c, h->n);
}

static void *host_thread(void *arg) {
  struct gp__session_host *h = arg;
  pthread_mutex_lock(&h->lock);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!h->stop) {
    uint64_t ns = (uint64_t)next.tv_nsec + h->period_ns;
    next.tv_sec += (time_t)(ns / 1000000000ull);
    next.tv_nsec = (long)(ns % 1000000000ull);
    while (!h->stop &&
           pthread_cond_timedwait(&h->cond, &h->lock, &next) != ETIMEDOUT) {
    }
    if (h->stop)
      break; /* the last sample is stop's */
    pthread_mutex_unlock(&h->lock);
    sample(h);
    pthread_mutex_lock(&h->lock);
  }
  pthread_mutex_unlock(&h->lock);
  return NULL;
}

static void host_free(struct gp__session_host *h) {
  gp__perf_set_close(h->set);
  pthread_cond_destroy(&h->cond);
  pthread_mutex_destroy(&h->lock);
  free(h);
}

/* See sessionInt.h. */
int gp__session_host_start(gp_session *s) {
  struct gp__session_host *h = calloc(1, sizeof(*h));
  if (!h)
    return GP_ENOMEM;
  h->s = s;
  uint64_t period = select_host(s, h);
  if (h->n == 0) {
    free(h);
    return 0;
  }
  h->period_ns = period < HOST_MIN_PERIOD_NS ? HOST_MIN_PERIOD_NS : period;
  pthread_mutex_init(&h->lock, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&h->cond, &ca);
  pthread_condattr_destroy(&ca);
  size_t left_out = 0;
  int rc = gp__perf_set_open_process(h->index, h->n, &h->set, &left_out);
  if (rc != 0) {
    char why[512];
    if (rc == GP_ENOTSUP)
      snprintf(why, sizeof(why), "%s", gp_strerror(rc));
    else if (gp_host_perf_status(why, sizeof(why)) == 0)
      snprintf(why, sizeof(why), "%s", gp_strerror(rc));
    if (s->env)
      gp__session_warn("host CPU counters not recorded: %s", why);
    host_free(h);
    return rc;
  }
  if (left_out && s->env)
    gp__session_warn("host CPU counters: only the first %d threads of the "
                     "process are counted",
                     (int)(GP_PERF_MAX_FDS / h->n));
  if (gp__perf_set_read(h->set, h->base) != 0 ||
      gp__thread_start(&h->thread, NULL, host_thread, h) != 0) {
    host_free(h);
    return GP_ENOMEM;
  }
  s->host = h;
  return 0;
}

/* See sessionInt.h. */
void gp__session_host_stop(gp_session *s) {
  struct gp__session_host *h = s->host;
  if (!h)
    return;
  pthread_mutex_lock(&h->lock);
  h->stop = true;
  pthread_cond_signal(&h->cond);
  pthread_mutex_unlock(&h->lock);
  pthread_join(h->thread, NULL);
  sample(h);
  s->host = NULL;
  host_free(h);
}

/* See sessionInt.h. */
void gp__session_host_forget(gp_session *s) {
  struct gp__session_host *h = s->host;
  if (!h)
    return;
  /* The thread is the parent's and the events count the parent's tasks:
   * close our copies of them; the memory is ours to free. */
  gp__perf_set_close(h->set);
  free(h);
  s->host = NULL;
}
