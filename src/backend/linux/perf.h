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

/* Reads the cumulative values (scaled up if the kernel multiplexed the
 * events) into values[0 .. n-1]. */
int gp__perf_set_read(gp__perf_set *s, double *values);

/* Closes the events. NULL is accepted. */
void gp__perf_set_close(gp__perf_set *s);

#endif /* GPUPERF_LINUX_PERF_H */
