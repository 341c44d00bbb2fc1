/*
 * tracefs.h - the kernel's GPU trace events from tracefs (tracefs.c): GPU
 * frequency and memory totals into ENVIRONMENT records, DRM scheduler jobs
 * into GPU work on the DRM card's engines (waiting for the jobs they
 * depend on), dma_fence events into
 * DMA_FENCE records (written as Perfetto's ftrace events).
 */
#ifndef GPUPERF_LINUX_TRACEFS_H
#define GPUPERF_LINUX_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GP__TRACEFS_NUM_EVENTS 18

/* One line of trace_pipe. */
typedef struct gp__tracefs_event {
  char task[32];
  uint32_t pid, cpu;
  uint64_t ts_ns;
  char event[64];
  char fields[512];
} gp__tracefs_event;

/* "system/event" of GPU event i (0 .. GP__TRACEFS_NUM_EVENTS-1), or
 * NULL. 0 is power/gpu_frequency, 1 gpu_mem/gpu_mem_total. */
const char *gp__tracefs_event_name(int i);

/*
 * Where tracefs is: want (a path, or NULL/"auto" to look at
 * /sys/kernel/tracing and /sys/kernel/debug/tracing) into buf. True if
 * it has an events/ directory.
 */
bool gp__tracefs_find(const char *want, char *buf, size_t size);

/* Bit i set for each GPU event that root's events/ has. */
uint32_t gp__tracefs_available(const char *root);

/* Parses one trace_pipe line; false if it is not an event line. */
bool gp__tracefs_parse(const char *line, gp__tracefs_event *ev);

/* The number after "key=" or "key:" in ev's fields. */
bool gp__tracefs_field(const gp__tracefs_event *ev, const char *key,
                       uint64_t *v);

/* The text after "key=" in ev's fields, up to ',' or ' ', into buf;
 * false if there is none. */
bool gp__tracefs_token(const gp__tracefs_event *ev, const char *key, char *buf,
                       size_t size);

/*
 * Starts reading (want as for gp__tracefs_find): on a real tracefs, in a
 * private instance with the GPU events that exist enabled. GP_ENOENT
 * without tracefs, GP_EBUSY if running, -errno when tracefs refuses (not
 * root). Stop disables the events, removes the instance; idempotent.
 */
int gp__tracefs_start(const char *want);
void gp__tracefs_stop(void);

/* Events seen per GPU event since start into counts[NUM_EVENTS]; returns
 * the mask of those enabled. */
uint32_t gp__tracefs_counts(uint64_t *counts);

/* Since start: scheduler jobs not drawn (never seen done, or past the
 * jobs followed at once) into *jobs_lost; dependencies not drawn (on a fence
 * of no job seen, or past the dependencies kept per job) into *deps_lost. */
void gp__tracefs_lost(uint64_t *jobs_lost, uint64_t *deps_lost);

#endif /* GPUPERF_LINUX_TRACEFS_H */
