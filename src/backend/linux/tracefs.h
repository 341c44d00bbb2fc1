/*
 * tracefs.h - the kernel's GPU trace events from tracefs (tracefs.c),
 * each as one record: dma_fence events as DMA_FENCE records, GPU
 * frequency, memory totals and the DRM scheduler's events as GPU_FTRACE
 * records; the trace writer writes both as traced_probes writes them
 * (FtraceEventBundle).
 */
#ifndef GPUPERF_LINUX_TRACEFS_H
#define GPUPERF_LINUX_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of trace_pipe. */
typedef struct gp__tracefs_event {
  char task[32];
  uint32_t pid, cpu;
  uint64_t ts_ns;
  char event[64];
  char fields[512];
} gp__tracefs_event;

/*
 * Where tracefs is: want (a path, or NULL/"auto" to look at
 * /sys/kernel/tracing and /sys/kernel/debug/tracing) into buf. True if
 * it has an events/ directory.
 */
bool gp__tracefs_find(const char *want, char *buf, size_t size);

/* Bit e set for each gp_ftrace_event e that root's events/ has. */
uint32_t gp__tracefs_available(const char *root);

/* Parses one trace_pipe line; false if it is not an event line. */
bool gp__tracefs_parse(const char *line, gp__tracefs_event *ev);

/* The number after "key=" or "key:" in ev's fields (strtoull base 0, so
 * a signed field reads back through a cast). */
bool gp__tracefs_field(const gp__tracefs_event *ev, const char *key,
                       uint64_t *v);

/* The text after "key=" in ev's fields, up to ',' or ' ', into buf;
 * false if there is none. */
bool gp__tracefs_token(const gp__tracefs_event *ev, const char *key, char *buf,
                       size_t size);

/* What to read. */
typedef struct gp__tracefs_options {
  const char *root;         /* a path, or NULL/"auto" (gp__tracefs_find) */
  uint32_t events;          /* the gp_ftrace_event mask to read */
  uint32_t buffer_size_kb;  /* each CPU's buffer; 0: the kernel's */
  uint32_t drain_period_ms; /* how often trace_pipe is read; 0: 100 */
} gp__tracefs_options;

/*
 * Starts reading: on a real tracefs, in a private instance with those of
 * the events asked for that the kernel has enabled; a root that is not
 * a tracefs (a test fixture) is only read, its trace_pipe whole. Where
 * it fails, *root_out (size bytes, may be 0) names the tracefs it tried.
 * GP_ENOENT without tracefs, GP_EBUSY if running, -errno when tracefs
 * refuses (not root: -EACCES also where it cannot even be looked into). Stop
 * disables the events, removes the instance; idempotent.
 */
int gp__tracefs_start(const gp__tracefs_options *o, char *root_out,
                      size_t size);
void gp__tracefs_stop(void);

/* Events read per gp_ftrace_event since start into
 * counts[GP_FTRACE_EVENT_COUNT]; returns the mask of those read (the
 * asked ones tracefs has). */
uint32_t gp__tracefs_counts(uint64_t *counts);

/* Events read since start whose fields did not parse (not written). */
uint64_t gp__tracefs_malformed(void);

#endif /* GPUPERF_LINUX_TRACEFS_H */
