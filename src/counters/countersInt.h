/*
 * countersInt.h - the counters subsystem seen from the inside: how a
 * backend publishes a device's catalog and the hooks through which the
 * generic code (perfmons, monitors, sampling) reaches the device's
 * scheduler or hardware. Included by the files of src/counters and by the
 * backends that provide counters (the simulator, the Linux perf_event
 * provider).
 *
 * Values. A counter's value is kept as a pair (num, den) of doubles that
 * add up across jobs, segments and windows: a count has den 0 and is num;
 * a ratio (a hit rate, utilization) is num/den, times 100 for percent
 * counters. Accumulating pairs rather than finished values is what lets a
 * perfmon's utilization over ten jobs be right.
 *
 * Locks. Providers guard perfmon values and their own state with their
 * own lock; the generic code calls provider hooks with its session lock
 * held, never with the perfmon-table lock. A provider may put a perfmon
 * reference (and so free it) with its own lock held.
 */
#ifndef GPUPERF_COUNTERS_INT_H
#define GPUPERF_COUNTERS_INT_H

#include <math.h>
#include <stdatomic.h>

#include "core/core.h"

#define GP__MAX_DEVICES 64

/* How a counter's (num, den) pair reads. */
typedef enum gp__combine {
  GP__SUM = 0,  /* num */
  GP__RATIO = 1 /* num / den (x100 for GP_COUNTER_TYPE_PERCENT) */
} gp__combine;

/* How a counter can be sampled (gp__counter_def.sampled). A provider
 * whose catalog mixes the two kinds (a Vulkan device: pipeline statistics
 * per render stage, the derived Utilization per window) samples each
 * counter its one way whatever the config asked for; sessions use it to
 * give the writer one spec per counter, under its plain name. */
typedef enum gp__sampled {
  GP__SAMPLED_ANY = 0,         /* periodically and per activity */
  GP__SAMPLED_PERIODIC = 1,    /* per window only */
  GP__SAMPLED_INSTRUMENTED = 2 /* per activity only */
} gp__sampled;

/* A counter as a provider describes it (info.device_id is ignored). */
typedef struct gp__counter_def {
  gp_counter_info info;
  uint32_t combine; /* gp__combine */
  uint32_t sampled; /* gp__sampled */
} gp__counter_def;

/* A device's catalog. Everything it points to lives as long as the
 * process. */
typedef struct gp__catalog {
  const gp__counter_def *counters;
  uint32_t num_counters;
  uint32_t num_blocks;
  const gp_counter_block_info *blocks; /* ids 0 .. num_blocks-1, in order */
  const gp_counter_group_info *groups;
  uint32_t num_groups;
  uint32_t max_active;
  uint64_t min_period_ns, max_period_ns;
  uint32_t supports_instrumented;
  uint32_t has_scheduler; /* jobs, switching, a global perfmon */
  /* Its provider emits through gp__sampler_emit(), which multiplexes. */
  uint32_t supports_multiplex;
  /* Width of the hardware counters that count one job, in bits: a count
   * over one kernel wraps past 2^counter_bits - 1 (EVENT records flag
   * it). 0: 64, none wraps. */
  uint32_t counter_bits;
} gp__catalog;

/* period_ns brought within the periods cat can sample at. */
static inline uint64_t gp__catalog_period(const gp__catalog *cat,
                                          uint64_t period_ns) {
  if (period_ns < cat->min_period_ns)
    return cat->min_period_ns;
  return period_ns > cat->max_period_ns ? cat->max_period_ns : period_ns;
}

/* A perfmon. The first line holds what the scheduler reads for every job
 * (id, destroyed, last_end); the rest but the values is fixed at
 * creation. */
struct gp_perfmon {
  _Atomic uint32_t refs;
  uint32_t id;
  _Atomic uint32_t destroyed;
  uint32_t device_id;
  uint64_t last_end; /* provider-owned: when its last job ends */
  uint32_t num_counters;
  uint32_t reserved0;
  const gp__catalog *cat;
  uint32_t *ids;   /* counter ids, in creation order */
  uint32_t *index; /* their catalog indexes */
  /* Provider-owned, under the provider's lock. */
  double *num, *den; /* accumulated values */
  void *hw;          /* provider data (perf_event fds) */
};

/* The filter pipeline of one gp_counters_start() call, shared by the
 * devices it started (or of one data source of a session, shared by every
 * device it starts: gp__counters_start_shared()). Immutable but for
 * `matched` and the cell `index` points to. */
typedef struct gp__filter {
  _Atomic uint32_t refs;
  uint32_t num_names;
  gp_activity_name_filter *names; /* globs owned */
  uint32_t num_include, num_exclude;
  char **include, **exclude;
  uint32_t num_ranges;
  gp_activity_range *ranges;
  _Atomic uint64_t matched; /* activities that passed names and ranges */
  /* Where the skip/count ranges count those activities: &matched, or a
   * cell the processes of one recording share (gp__counters_start_shared).
   * Counted only when there are ranges. */
  _Atomic uint64_t *index;
} gp__filter;

/* Sampling on one device. Reference counted: the provider may hold
 * references for instrumented work still in flight after the stop. */
typedef struct gp__sampler {
  _Atomic uint32_t refs;
  uint32_t device_id;
  uint32_t instrumented;
  uint64_t period_ns; /* 0: no periodic sampling */
  uint32_t num_counters;
  uint32_t reserved0;
  uint32_t *ids;
  uint32_t *index;
  const gp__catalog *cat;
  gp__filter *filter; /* NULL unless instrumented */
  void *prov_data;    /* provider's sampling state */
  /* Time-multiplexed (gp_counter_config.multiplex): mux_num schedules,
   * each a mask of the counters (bit i: index[i]) that count in its
   * slices of mux_slice_ns from mux_epoch (the provider's time at its
   * start, set by the provider). mux_num 0: all count all along. */
  uint32_t mux_num;
  uint64_t mux_slice_ns;
  uint64_t mux_epoch;
  uint64_t *mux_mask;
} gp__sampler;

/* Hooks a provider gives with its catalog. Any may be NULL (not
 * supported). All return 0 or a GP_E* code. */
typedef struct gp__provider_ops {
  /* Prepares hardware for a new perfmon (perf_event: opens the events);
   * called before the perfmon is published. */
  int (*perfmon_open)(void *prov, gp_perfmon *pm);
  /* Releases what open took; called on the last put, possibly with the
   * provider's own lock held: must not take it. */
  void (*perfmon_close)(void *prov, gp_perfmon *pm);
  /* Brings pm's values up to date and converts them into out (with
   * gp__perfmon_values()), under the provider's lock. GP_EAGAIN if jobs
   * are pending and !wait. */
  int (*perfmon_read)(void *prov, gp_perfmon *pm, bool wait,
                      gp_counter_value *out);
  /* Sets (pm) or clears (NULL, only if `current` is the global one) the
   * device's global perfmon, taking or dropping a reference. */
  int (*set_global)(void *prov, uint32_t device_id, gp_perfmon *pm,
                    gp_perfmon *current);
  /* Which device runs a context: GP_ENOENT if not one of ours. */
  int (*context_device)(void *prov, uint32_t context_id, uint32_t *device_id);
  /* Makes the jobs of a context carry pm (NULL: none). */
  int (*context_bind)(void *prov, uint32_t context_id, gp_perfmon *pm);
  /* Starts / stops sampling s (validated) on its device. Stop emits the
   * last partial window. */
  int (*sampling_start)(void *prov, gp__sampler *s);
  void (*sampling_stop)(void *prov, gp__sampler *s);
} gp__provider_ops;

/* Which of s's counters count at time t (the provider's time): bit i for
 * index[i]; all of them unless s is multiplexed. */
static inline uint64_t gp__sampler_mask(const gp__sampler *s, uint64_t t) {
  if (!s->mux_num)
    return s->num_counters >= 64 ? ~0ull : (1ull << s->num_counters) - 1;
  uint64_t slice = t > s->mux_epoch ? (t - s->mux_epoch) / s->mux_slice_ns : 0;
  return s->mux_mask[slice % s->mux_num];
}

/*
 * Emits the COUNTER records of one window (or activity) of s, as
 * gp__counter_emit_n() with s's counters, leaving out those a
 * multiplexed s does not count at time t (the provider's time at the
 * window's or the activity's start).
 */
void gp__sampler_emit(const gp__sampler *s, uint64_t t, const double *num,
                      const double *den, uint64_t timestamp,
                      uint64_t window_start, uint64_t correlation_id,
                      uint32_t perfmon_id, uint32_t context_id);

/* ---- catalog.c ---- */

/*
 * Publishes the catalog of a registered device, with the provider's hooks
 * and state (all borrowed for the life of the process); the provider then
 * calls gp__counters_announce(). GP_EEXIST if the device already has one,
 * GP_ENODEV for an unknown device, GP_EINVAL for a malformed catalog (a block
 * id out of range, a duplicate counter id).
 */
int gp__counters_register(uint32_t device_id, const gp__catalog *cat,
                          const gp__provider_ops *ops, void *prov);

/* Tells the device hook (if any) that device_id has a catalog. Called by
 * the provider once it holds no lock of its own. */
void gp__counters_announce(uint32_t device_id);

/* The catalog of a device, or NULL (GP_ENODEV / GP_ENOENT in *err). */
const gp__catalog *gp__catalog_get(uint32_t device_id, int *err);

/* The provider of a device with a catalog, or NULL. */
const gp__provider_ops *gp__provider_get(uint32_t device_id, void **prov);

/* Catalog index of a counter id, or -1. */
int gp__catalog_find(const gp__catalog *cat, uint32_t counter_id);

/*
 * Checks a set of counter ids against a catalog: each known
 * (GP_ENOCOUNTER), no duplicates (GP_EINVAL), within max_active and every
 * block's capacity (GP_ECAPACITY). Stores catalog indexes in index (n
 * entries) when it is not NULL.
 */
int gp__catalog_check(const gp__catalog *cat, const uint32_t *ids, size_t n,
                      uint32_t *index);

/* Resolves names/globs against one catalog, as gp_counter_select(). With
 * lenient, names that match nothing are skipped instead of failing. */
int gp__catalog_select(const gp__catalog *cat, const char *const *names,
                       size_t num_names, bool lenient, uint32_t *ids,
                       size_t cap, size_t *count);

/*
 * Calls fn for each device announced from now on (a catalog that appears
 * after start-up, as the simulated GPUs do on first use). Sessions that
 * start sampling on devices as they come use it: the env-triggered stat
 * session, and any other. Returns GP_ENOSPC past 8 hooks; removing a hook
 * that is not there does nothing.
 */
int gp__counters_add_device_hook(void (*fn)(uint32_t device_id));
void gp__counters_remove_device_hook(void (*fn)(uint32_t device_id));

/* llround(v) without the library call for |v| < 9.2e18 (a window's byte
 * counts: two calls of ~27 instructions a window): the conversion
 * truncates exactly, and v minus its integer part is exact, so the
 * halfway cases round away from zero as llround() rounds them. NaN and
 * larger values go to llround(). */
static inline int64_t gp__counter_round(double v) {
  if (v > -9.2e18 && v < 9.2e18) {
    int64_t i = (int64_t)v;
    double f = v - (double)i;
    return i + (f >= 0.5) - (f <= -0.5);
  }
  return (int64_t)llround(v);
}

/* Converts a (num, den) pair of counter def into a value; returns the
 * gp_value_type it is stored as. Inline: sampling finishes every value it
 * writes. */
static inline uint32_t gp__counter_finish(const gp__counter_def *def,
                                          double num, double den,
                                          gp_counter_value *out) {
  double v = num;
  if (def->combine == GP__RATIO)
    v = den > 0.0 ? num / den : 0.0;
  if (def->info.type == GP_COUNTER_TYPE_PERCENT)
    v *= def->combine == GP__RATIO ? 100.0 : 1.0;
  if (def->info.type == GP_COUNTER_TYPE_INT64) {
    out->i64 = v >= 9.2e18 ? INT64_MAX : gp__counter_round(v);
    return GP_VALUE_INT64;
  }
  out->f64 = v;
  return GP_VALUE_DOUBLE;
}

/* ---- perfmon.c ---- */

/* Converts pm's accumulated pairs into out (caller holds the provider's
 * lock). */
void gp__perfmon_values(const gp_perfmon *pm, gp_counter_value *out);

/* Counts a perfmon switch on a device (any thread). */
void gp__perfmon_count_switch(uint32_t device_id);

/* ---- sampling.c ---- */

/*
 * Decides, on the thread submitting it, whether an activity is
 * instrumented by sampler s: its name filters (against the mangled or
 * demangled name, or the function name derived from the demangled one),
 * the calling thread's range stack against the include/exclude globs,
 * then the skip/count ranges. Counts the activity if it passed the first
 * two steps. demangled may be NULL (then the mangled name stands in).
 */
bool gp__sampler_instrument(gp__sampler *s, const char *mangled,
                            const char *demangled);

/*
 * gp_counters_start() on one device, with the filter pipeline *shared:
 * the skip/count ranges then count the activities of every device started
 * with the same *shared together, as Perfetto's gpu.counters data source
 * counts them (for the data source as a whole). When *shared is NULL and
 * the config is instrumented, a new pipeline is made from config and a
 * reference stored in *shared; the caller drops it with
 * gp__filter_put(). The same config must be given each time. On error
 * nothing is started and *shared is as it was.
 *
 * cell, when not NULL, is where a new pipeline counts the activities its
 * ranges skip and count, instead of a counter of its own: a cell in memory
 * that other processes map too makes the ranges count theirs as well
 * (one recording). Borrowed: it must stay mapped for the life of the
 * process. Lock-free atomic adds on it are all that is done, and only
 * when config has ranges.
 */
int gp__counters_start_shared(uint32_t device_id,
                              const gp_counter_config *config,
                              gp__filter **shared, _Atomic uint64_t *cell);

/* Drops a reference on a filter pipeline (the last frees it). NULL is
 * accepted. */
void gp__filter_put(gp__filter *f);

/* Takes / drops a reference on a sampler (the last put frees it). */
gp__sampler *gp__sampler_get(gp__sampler *s);
void gp__sampler_put(gp__sampler *s);

/* The bare function name of a demangled name ("ns::f<int>(float)" -> "f")
 * into buf. Returns buf. */
const char *gp__function_name(const char *demangled, char *buf, size_t size);

/*
 * Writes one COUNTER record (if that kind is enabled for context_id):
 * counter `index` of sampler s's catalog, the value from (num, den).
 */
void gp__counter_emit(const gp__catalog *cat, uint32_t device_id,
                      uint32_t index, double num, double den,
                      uint64_t timestamp, uint64_t window_start,
                      uint64_t correlation_id, uint32_t perfmon_id,
                      uint32_t context_id);

/*
 * Writes n COUNTER records as n gp__counter_emit() calls would, for the
 * counters index[0 .. n) of cat with the values (num[i], den[i]) and the
 * rest shared: a sampling window's values, or an activity's. Whether the
 * kind is enabled is asked once for all n. A record that cannot be
 * reserved is dropped (and counted) alone; the others are still written.
 */
void gp__counter_emit_n(const gp__catalog *cat, uint32_t device_id,
                        const uint32_t *index, uint32_t n, const double *num,
                        const double *den, uint64_t timestamp,
                        uint64_t window_start, uint64_t correlation_id,
                        uint32_t perfmon_id, uint32_t context_id);

/* ---- perjob.c ---- */

/*
 * The per-job path of a driver's counters (driver: "v3d") in this
 * process. The GL backend claims it when the process makes its first GL
 * context current; a claim is for the life of the process, and runs the
 * hooks registered for that driver (on the claiming thread, no lock
 * held). A system-wide provider asks gp__counters_perjob_claimed() before
 * it takes the counters, and registers a hook to give them back if the
 * claim comes later. on_claim: GP_ENOSPC past 4 hooks.
 */
void gp__counters_perjob_claim(const char *driver);
bool gp__counters_perjob_claimed(const char *driver);
int gp__counters_perjob_on_claim(const char *driver, void (*fn)(void));

/* Writes bytes as `gpuperf list` prints sizes ("512 B", "1.5 GiB") into
 * buf (list.c). */
void gp__list_fmt_bytes(char *buf, size_t size, double bytes);

#endif /* GPUPERF_COUNTERS_INT_H */
