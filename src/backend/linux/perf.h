/*
 * perf.h - the Linux perf_event counter provider, as the rest of the
 * library reaches it: the host CPU's catalog and sets of open events.
 *
 * The provider publishes the host CPU as a device (gp_host_device_register)
 * whose perfmons are sets of perf_event counters on the calling process.
 * The env-triggered stat session also opens a set directly, at start-up,
 * so that counting begins with the process without registering a device
 * (which would renumber the program's devices).
 */
#ifndef GPUPERF_LINUX_PERF_H
#define GPUPERF_LINUX_PERF_H

#include "counters/countersInt.h"

typedef struct gp__perf_set gp__perf_set;

/* The host CPU catalog (probed once): the events this machine can open
 * and the software ones. Never NULL. */
const gp__catalog *gp__perf_catalog(void);

/*
 * Opens the events of catalog indexes index[0 .. n-1], counting the
 * calling process from now on, its threads and (with inherit) the
 * children it creates afterwards. Falls back to user-space-only counting
 * where the kernel refuses kernel counting. Returns GP_EPERM or -EACCES
 * when perf_event_open() is refused (gp_host_perf_status() says why),
 * GP_ENOTSUP for an event the machine lacks.
 */
int gp__perf_set_open(const uint32_t *index, size_t n, bool inherit,
                      gp__perf_set **out);

/* Descriptors one process set may hold (events x threads). */
#define GP_PERF_MAX_FDS 1024

/*
 * Opens the events of catalog indexes index[0 .. n-1] (n >= 1) on every
 * thread of the calling process (/proc/self/task), each following the
 * threads it creates but not the processes it forks (inherit_thread;
 * before Linux 5.13 forked children are counted in too): the counts of
 * the whole process from now on, whichever thread calls. At most
 * GP_PERF_MAX_FDS / n threads are opened; *left_out (may be NULL) is set
 * when some were not. Errors as gp__perf_set_open(); nothing is left open
 * on failure.
 */
int gp__perf_set_open_process(const uint32_t *index, size_t n,
                              gp__perf_set **out, size_t *left_out);

/* Reads the cumulative values (scaled up if the kernel multiplexed the
 * events; summed over the threads of a process set, a thread that ended
 * counting as last read) into values[0 .. n-1]. */
int gp__perf_set_read(gp__perf_set *s, double *values);

/* Closes the events. NULL is accepted. */
void gp__perf_set_close(gp__perf_set *s);

#endif /* GPUPERF_LINUX_PERF_H */
