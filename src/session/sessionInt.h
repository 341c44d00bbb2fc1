/*
 * sessionInt.h - what session.c (start, stop, the observer, the helper
 * thread, recording from the environment, fork) and session_counters.c
 * (counter sampling for a session) share.
 */
#ifndef GPUPERF_SESSION_INT_H
#define GPUPERF_SESSION_INT_H

#include <pthread.h>
#include <sys/types.h>

#include "core/core.h"
#include "perfetto/writer.h"

#define MAX_SESSIONS 8
#define DEFAULT_FLUSH_MS 500u
/* A recorded process (GPUPERF_RECORD_DIR) flushes much more often: what
 * a SIGKILL loses is at most this much of its last records (the only
 * death a process cannot see; see session_death.c). The collector then
 * wakes 200 times a second; the threads writing records do nothing more.
 * RECORD_FLUSH_MS in tools/gpuperf/cmd_record.c says the same. */
#define ENV_FLUSH_MS 5u
#define MAX_DEV 64

/* The writer options for a session of cfg writing sequence seq to fd. */
void gp__session_writer_options(const gp_trace_config *cfg, uint32_t seq,
                                int fd, bool deterministic, gp__tw_options *o);

struct gp_session {
  gp_trace_config *cfg;
  gp__tw *w;
  int fd;
  bool own_fd;
  char *path; /* the file asked for, written as tmp until a good stop */
  char *tmp;  /* beside it; NULL when writing path itself (a device) */
  bool env;   /* started from GPUPERF_RECORD_DIR */
  bool stopped;
  int stop_rc;
  int slot;
  uint32_t seq;
  uint64_t kinds;       /* kinds this session holds a reference on */
  pthread_mutex_t lock; /* below */
  pthread_cond_t cond;
  pthread_t helper;
  bool helper_running, helper_quit;
  uint64_t deadline_ns;   /* CLOCK_MONOTONIC, 0: none */
  uint64_t counters_on;   /* devices sampling for us (bit per device < 64) */
  uint64_t counters_ever; /* devices that sampled for us at some point */
  uint64_t matched[8];    /* per counters data source: names/ids matched */
  /* per counters data source: its instrumented-sampling filters, shared
   * by every device it starts (skip/count count across them) */
  struct gp__filter *filters[8];
  uint64_t suffix_hit; /* counters data sources a device matched (bits) */
  char warning[512];   /* gp_session_warning(), "" if none */
  bool saw_catalog;    /* a device with counters was considered */
  bool tracefs_on;     /* this session reads the kernel's GPU events */
  int tracefs_lock;    /* fd + 1 of its recording's folder, locked; 0 */
  int counter_error;
  char counter_why[256]; /* the device, reason and counters of the first
                            failure to sample, "" if none */
  gp__tw_stats final;
  bool have_final;
  gp__tw_options wopts;          /* what the writer was made with */
  bool w_inherited;              /* a forked child's copy: never freed */
  pid_t pid;                     /* env session: the process it records */
  struct gp__session_host *host; /* host CPU counters (session_host.c) */
};

/*
 * Opens what session s writes for path. A regular file (or a new one) is
 * written beside it, as path.tmp-XXXXXX, and takes path's place only at a
 * stop (gp__session_finish_output), so that a session that fails or is
 * killed leaves the previous file as it was. Anything else (a device, a
 * pipe) is written directly, and so is a file the user may write in a
 * folder where they may not create one. Returns 0 with s->fd open (owned)
 * and s->path, s->tmp set (owned by s; tmp NULL when written directly), or
 * GP_ENOMEM or -errno, with opts->error saying which file, and nothing
 * created.
 */
int gp__session_open_output(gp_session *s, const char *path,
                            const gp_session_options *opts);

/*
 * Puts the file written beside the output in its place, after a stop that
 * closed it. After a write error (rc) the trace is still readable (the
 * writer cut it back to whole packets): it takes the output's place too,
 * and a previous file there is kept as path.old, as `gpuperf record` does;
 * one that cannot be kept is not replaced. Returns rc, or -errno if only
 * the rename failed (the trace is then still at s->tmp).
 */
int gp__session_finish_output(gp_session *s, int rc);

/* Where a session started by gp__session_start_sink() writes: its
 * writer's sink (see perfetto/writer.h), for a Perfetto producer. */
typedef struct gp__session_sink {
  gp__tw_sink_fn write;
  int (*flushed)(void *user);
  void *user;
} gp__session_sink;

/* As gp_session_start(), writing to sink instead of a file; packets then
 * carry no sequence id or machine id (the tracing service stamps them).
 * sink is copied. */
int gp__session_start_sink(const gp_trace_config *cfg,
                           const gp_session_options *opts,
                           const gp__session_sink *sink, gp_session **out);

/* Starts the session's incremental state over: the next packets repeat
 * what they refer to (interned names, descriptors). Does nothing once
 * stopped. */
void gp__session_clear_incremental(gp_session *s);

/* Writes a message into o->error (if there is room for one). */
void gp__session_error(const gp_session_options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Starts counters on the devices that exist now, and from now on on each
 * device whose catalog is announced (until unwatched); GP_ENOCOUNTER if a
 * name or id matches no device that has counters (message in o->error). */
int gp__session_counters_start(gp_session *s, const gp_session_options *o);

/* No more counters on new devices for s (NULL-safe, idempotent). */
void gp__session_counters_unwatch(gp_session *s);

/* In a child after fork(): resets the lock of the watch list. */
void gp__session_counters_after_fork(void);

/* Starts sampling on device dev for s if a data source applies, and notes
 * which of its names or ids matched there. */
int gp__session_counters_on(gp_session *s, uint32_t dev);

/* GP_ENOCOUNTER, with a message, if a counter name or id of the config has
 * matched no device with counters so far; 0 otherwise. */
int gp__session_counters_unmatched(const gp_session *s, char *msg, size_t size);

/* Whether a gpu.counters or gpu.renderstages data source with a vendor
 * suffix has named no device so far; if so, one line saying which (all
 * such sources), and what the devices' vendors are, in msg. */
bool gp__session_suffix_unmatched(const gp_session *s, char *msg, size_t size);

/* Stops the sampling s started. */
void gp__session_counters_stop(gp_session *s);

/* session_ftrace.c: whether cfg (or GPUPERF_TRACEFS) asks for the
 * kernel's GPU trace events, and what to read into *o. */
struct gp__tracefs_options;
bool gp__session_ftrace_wanted(const gp_trace_config *cfg,
                               struct gp__tracefs_options *o);

/* Starts reading them where asked; never fails the session: where tracefs
 * cannot be read, one warning says why and how to fix it. */
void gp__session_ftrace_start(gp_session *s);

/* Stops reading them (idempotent). */
void gp__session_ftrace_stop(gp_session *s);

/* session_host.c: starts sampling the host CPU counters the config names
 * (s->host), marking those names matched; 0 when none are named. On
 * failure (perf_event_open refused: a recorded process says why on
 * stderr) the error, and s goes on without them. */
int gp__session_host_start(gp_session *s);

/* Writes a last sample and stops (NULL s->host: nothing). Called while
 * the session's writer is still attached. */
void gp__session_host_stop(gp_session *s);

/* In a forked child: the sampling is the parent's; drop our copy. */
void gp__session_host_forget(gp_session *s);

/* Writes process counter values into the session's trace, serialized
 * with the buffers written to it; nothing once the session is stopped
 * (session.c). */
void gp__session_write_process_counters(gp_session *s, uint64_t ts,
                                        const gp__tw_process_counter *c,
                                        size_t n);

/* Prints "gpuperf: PROGRAM: message" on stderr for a recorded process
 * (session.c). */
void gp__session_warn(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* live.c: publishes this process's live stats for `gpuperf top` (the
 * shared region of gpuperf/live.h, gp_live_dir()/<pid>, rewritten in
 * place about once a second), from now on; stop removes it. Both
 * idempotent. */
void gp__live_start(void);
void gp__live_stop(void);

/*
 * live_flight.c: launches in flight (enqueued, their work not reported
 * yet), for live.c, under its lock. gp__flight_api() takes an API record
 * (an OpenCL launch starts a flight), gp__flight_done() a reported
 * kernel's correlation id (its flight ends); gp__flight_count() returns
 * how many are in flight at `now` (forgetting those too old to be) and
 * stores the enqueue time of the oldest in *oldest (0 if none);
 * gp__flight_reset() forgets them (all: the kernels seen before their
 * launch too).
 */
void gp__flight_api(const gp_activity_api *a);
void gp__flight_done(uint64_t corr);
uint32_t gp__flight_count(uint64_t now, uint64_t *oldest);
void gp__flight_reset(bool all);

/*
 * live_region.c: the shared region of gpuperf/live.h at path, made whole
 * under a temporary name and renamed into place, mapped read-write, with
 * pid in its header and an empty snapshot. 0 and the region in *out, or
 * GP_ENOMEM, GP_ESIZE, -errno (nothing left behind).
 */
typedef struct gp__live_region gp__live_region;
int gp__live_region_create(const char *path, uint32_t pid,
                           gp__live_region **out);

/* Copies *s into the region under its sequence lock (one writer). */
void gp__live_region_publish(gp__live_region *r, const gp_live_snapshot *s);

/* Unmaps the region and, if remove, unlinks its file. Accepts NULL. */
void gp__live_region_destroy(gp__live_region *r, bool remove);

/* Ends the session of a recorded process (GPUPERF_RECORD_DIR), once:
 * flushes it, finishes its part of the trace and says whether that part
 * is whole (session.c). Called at exit, and as a finisher of death.c on
 * _exit, abort and fatal signals; does nothing in a vfork child or
 * without such a session. */
void gp__session_env_finish(void);

/* session_ranges.c: the activity index the processes of a recording
 * share, <dir>/activity_ranges (layout there; `gpuperf record` removes
 * it with the parts). */
#define GP_RANGES_FILE "activity_ranges"

/*
 * Maps <dir>/activity_ranges (making it if no process has yet) when some
 * gpu.counters data source of cfg has activity_ranges; does nothing
 * otherwise. The file's path goes in path, for messages. Returns 0, or
 * -errno or GP_ENOTSUP: the data sources then count their ranges in this
 * process alone. Either way what a process mapped for an earlier
 * recording is no longer used.
 */
int gp__ranges_shared_map(const char *dir, const gp_trace_config *cfg,
                          char *path, size_t path_size);

/* The shared cell of data source `index` of the config mapped, or NULL
 * (nothing mapped, or no cell for that index). Valid for the life of the
 * process. */
_Atomic uint64_t *gp__ranges_shared_cell(uint32_t index);

/* In a child after fork(): resets the lock (the mapping is inherited). */
void gp__ranges_after_fork(void);

/* session_lost.c: the death page <dir>/<seq>.open of a recorded process,
 * and what it holds for session_salvage.c (layout in session_lost.c). */
#define GP_DEATH_MAGIC "GPDEATH3"
#define GP_DEATH_DEV_QUEUES 16
typedef struct gp__death_device {
  uint32_t id, api, clock_id, flags, num_queues, compute_units;
  uint32_t core_clock_khz, memory_clock_khz, max_threads_per_block;
  uint32_t max_shared_memory_per_block, pci_domain, pci_bus, pci_device;
  uint32_t pci_function;
  uint64_t global_memory_bytes, memory_bandwidth_bytes_per_s;
  uint8_t uuid[16];
  char name[64], vendor[64], model[64], architecture[64], driver_version[64];
  struct {
    char name[56];
    uint32_t kind, reserved;
  } queues[GP_DEATH_DEV_QUEUES];
} gp__death_device;

#define GP_DEATH_QUEUED 16 /* queued entries: one per buffer of the area */

typedef struct gp__death_page {
  char magic[8];
  uint32_t ncells, stride, cells_offset;
  int32_t pid;
  uint32_t overflow, reserved;
  uint64_t written;  /* records written to the part by the process */
  uint64_t salvaged; /* records written to it by gp_record_salvage() */
  uint64_t area_offset, area_size, buf_size; /* 0: no area */
  uint64_t str_offset, str_cap, str_used, str_full;
  uint64_t dev_offset, dev_max, dev_count;
  gp__delivery delivery;
  char comm[64]; /* the process's name */
  /* Of the delivery under way (valid once delivery.part_before is set):
   * `written` before it, and the records it writes. */
  uint64_t delivery_written, delivery_records;
  /* The buffers of the area handed over and not yet written (core.h,
   * gp__buffer_area.queued): nqueued entries of four words. */
  uint64_t nqueued;
  uint64_t queued[GP_DEATH_QUEUED][4];
} gp__death_page;

/* session_lost.c: the death page <dir>/<seq>.open of a recorded process.
 * Creates and maps it and makes every thread count its records there;
 * returns 0 or -errno (the process is then recorded without it).
 * in_fork_child: called from a fork child handler. */
int gp__death_page_open(const char *dir, uint32_t seq, bool in_fork_child);

/* Around the writing of a buffer's records (valid bytes) to the part,
 * whose size is bytes before and after: the page says how far the part
 * was written and, at the end, counts them written. A recorder salvaging
 * after a death in between makes the count right again from what begin
 * noted (session_salvage.c). */
void gp__death_page_write_begin(uint64_t bytes, const uint8_t *buffer,
                                size_t valid);
void gp__death_page_write_end(uint64_t bytes);

/* Stops counting and unmaps the page; removes it (the part is finished)
 * if remove. */
void gp__death_page_close(const char *dir, uint32_t seq, bool remove);

/* In a forked child: the page is the parent's; drop it. */
void gp__death_page_forget(void);

#endif /* GPUPERF_SESSION_INT_H */
