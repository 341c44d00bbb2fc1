/*
 * drmprovider.c - DRM cards as counter devices: one device per card found
 * under <root>/sys/class/drm, whose catalog holds what the card's sysfs,
 * hwmon and devfreq files offer (frequency, power, temperature, fan, VRAM)
 * and, from fdinfo, the busy percentage of each engine and the memory of
 * this process's DRM clients on that card. Counters are selected by name
 * like any other (`-e gpu-frequency,engine-*`).
 *
 * Engines. A card's engines are those its driver is known to report (the
 * table below, from the drivers' fdinfo code) plus any its clients report
 * at registration; each is also a queue of the device, so the trace shows
 * the engine names.
 *
 * Sampling runs on a thread of its own per card: at each period it reads
 * the files and writes one COUNTER record per selected counter for the
 * window just ended. Gauges (frequency, power, ...) are the reading at the
 * window's end; engine busy is (delta busy ns) / (window ns x capacity),
 * from two readings, summed over the process's clients of the card.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "counters/countersInt.h"
#include "drm.h"
#include "core/thread.h"

#define MAX_CARDS 8
#define MAX_CLIENTS 32

enum {
  K_FREQ = 1,
  K_POWER,
  K_TEMP,
  K_FAN,
  K_VRAM_USED,
  K_VRAM_TOTAL,
  K_MEM_TOTAL,
  K_MEM_RESIDENT,
  K_ENGINE = 16 /* + engine index */
};

typedef struct card {
  gp__drm_card c;
  uint32_t device_id;
  uint32_t num_engines;
  char engines[GP__DRM_MAX_ENGINES][GP__DRM_NAME];
  gp__catalog cat;
  gp__counter_def defs[K_ENGINE + GP__DRM_MAX_ENGINES];
  char names[K_ENGINE + GP__DRM_MAX_ENGINES][64];
  gp_counter_block_info block;
} card;

typedef struct sampling {
  card *cd;
  gp__sampler *s;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stop;
  uint64_t last_ts;
  size_t nprev;
  gp__fdinfo prev[MAX_CLIENTS];
} sampling;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static bool registered;
static card *cards_on[MAX_CARDS]; /* registered (reg_lock) */
static size_t num_on;

/* Engines each driver's fdinfo reports (drivers/gpu/drm/<driver>). */
static const struct {
  const char *driver;
  const char *engines[8];
} known[] = {
    {"v3d", {"bin", "render", "tfu", "csd", "cache_clean"}},
    {"i915", {"render", "copy", "video", "video-enhance", "compute"}},
    {"xe", {"rcs", "bcs", "vcs", "vecs", "ccs"}},
    {"amdgpu", {"gfx", "compute", "dma", "dec", "enc"}},
    {"panfrost", {"fragment", "vertex-tiler"}},
    {"panthor", {"panthor"}},
    {"msm", {"gpu"}},
};

static void add_engine(card *cd, const char *name) {
  for (uint32_t i = 0; i < cd->num_engines; i++)
    if (strcmp(cd->engines[i], name) == 0)
      return;
  if (cd->num_engines < GP__DRM_MAX_ENGINES)
    snprintf(cd->engines[cd->num_engines++], GP__DRM_NAME, "%s", name);
}

/* Does fdinfo client f belong to card cd? */
static bool client_of(const card *cd, const gp__fdinfo *f) {
  if (strcmp(f->driver, cd->c.driver) != 0)
    return false;
  return !*f->pdev || !*cd->c.pdev || strcmp(f->pdev, cd->c.pdev) == 0;
}

static void def(card *cd, uint32_t id, const char *name, uint32_t type,
                uint32_t unit, uint32_t combine, uint32_t group,
                const char *desc, bool dflt) {
  gp__counter_def *d = &cd->defs[cd->cat.num_counters++];
  snprintf(cd->names[id], sizeof(cd->names[id]), "%s", name);
  d->info.id = id;
  d->info.name = cd->names[id];
  d->info.description = desc;
  d->info.category = "linux";
  d->info.type = type;
  d->info.num_numerator_units = unit ? 1 : 0;
  d->info.numerator_units[0] = unit;
  d->info.num_groups = 1;
  d->info.groups[0] = group;
  d->info.select_by_default = dflt;
  d->combine = combine;
}

static void build_catalog(card *cd) {
  gp__drm_reading r;
  gp__drm_card_read(&cd->c, &r);
  const uint32_t D = GP_COUNTER_TYPE_DOUBLE, SYS = GP_COUNTER_GROUP_SYSTEM;
  if (*cd->c.freq_path)
    def(cd, K_FREQ, "gpu-frequency", D, GP_UNIT_MEGAHERTZ, GP__SUM, SYS,
        "Current GPU clock (gt_cur_freq_mhz, devfreq cur_freq or "
        "pp_dpm_sclk)",
        true);
  if (*cd->c.hwmon) {
    if (!isnan(r.power_w))
      def(cd, K_POWER, "power", D, GP_UNIT_WATT, GP__SUM, SYS,
          "Board power from hwmon power1_average", true);
    if (!isnan(r.temp_c))
      def(cd, K_TEMP, "temperature", D, GP_UNIT_CELSIUS, GP__SUM, SYS,
          "GPU temperature from hwmon temp1_input", true);
    if (!isnan(r.fan_rpm))
      def(cd, K_FAN, "fan", D, GP_UNIT_NONE, GP__SUM, SYS,
          "Fan speed in RPM from hwmon fan1_input", false);
  }
  if (*cd->c.vram_used) {
    def(cd, K_VRAM_USED, "vram-used", D, GP_UNIT_BYTE, GP__SUM,
        GP_COUNTER_GROUP_MEMORY, "VRAM in use (mem_info_vram_used)", true);
    def(cd, K_VRAM_TOTAL, "vram-total", D, GP_UNIT_BYTE, GP__SUM,
        GP_COUNTER_GROUP_MEMORY, "VRAM size (mem_info_vram_total)", false);
  }
  def(cd, K_MEM_TOTAL, "client-memory-total", D, GP_UNIT_BYTE, GP__SUM,
      GP_COUNTER_GROUP_MEMORY,
      "Memory of this process's DRM clients on the card, all regions "
      "(fdinfo drm-total-*)",
      false);
  def(cd, K_MEM_RESIDENT, "client-memory-resident", D, GP_UNIT_BYTE, GP__SUM,
      GP_COUNTER_GROUP_MEMORY,
      "Resident memory of this process's DRM clients on the card (fdinfo "
      "drm-resident-*)",
      false);
  for (uint32_t e = 0; e < cd->num_engines; e++) {
    char name[64];
    snprintf(name, sizeof(name), "engine-%s-busy", cd->engines[e]);
    def(cd, K_ENGINE + e, name, GP_COUNTER_TYPE_PERCENT, GP_UNIT_PERCENT,
        GP__RATIO, SYS,
        "Share of the time the engine ran this process's work (fdinfo "
        "drm-engine-*, two readings)",
        true);
  }
  cd->block = (gp_counter_block_info){0,
                                      cd->cat.num_counters,
                                      cd->cat.num_counters,
                                      0,
                                      "drm",
                                      "sysfs, hwmon, devfreq and fdinfo"};
  cd->cat.counters = cd->defs;
  cd->cat.blocks = &cd->block;
  cd->cat.num_blocks = 1;
  cd->cat.max_active = cd->cat.num_counters;
  cd->cat.min_period_ns = 1000000ull;     /* 1 ms */
  cd->cat.max_period_ns = 60000000000ull; /* 60 s */
}

/* ------------------------------------------------------------------ */
/* Sampling                                                             */

static const gp__fdinfo *find_client(const gp__fdinfo *v, size_t n,
                                     const gp__fdinfo *f) {
  for (size_t i = 0; i < n; i++)
    if (v[i].client_id == f->client_id && strcmp(v[i].driver, f->driver) == 0)
      return &v[i];
  return NULL;
}

static void env(uint32_t device, uint64_t ts, uint32_t kind, uint32_t a,
                uint32_t b, uint64_t bytes) {
  gp_activity_environment *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_ENVIRONMENT, sizeof(*r), 0, 0);
  if (!r)
    return;
  memset(&r->data, 0, sizeof(r->data));
  r->timestamp = ts;
  r->device_id = device;
  r->environment_kind = kind;
  if (kind == GP_ENVIRONMENT_MEMORY) {
    r->data.memory.pid = a;
    r->data.memory.used_bytes = bytes;
  } else {
    r->data.speed.core_clock_khz = a; /* the first word of every kind */
    r->data.speed.memory_clock_khz = b;
  }
  gp__activity_commit(r);
}

/*
 * The readings as ENVIRONMENT records too, which the trace writer turns
 * into Perfetto's dedicated GPU frequency and GPU memory packets: clock,
 * temperature, power, VRAM in use (pid 0) and this process's client
 * memory (its pid).
 */
static void emit_environment(const card *cd, uint64_t now,
                             const gp__drm_reading *r, const gp__fdinfo *cur,
                             size_t n) {
  if (!gp__activity_enabled(GP_ACTIVITY_KIND_ENVIRONMENT, 0))
    return;
  uint32_t dev = cd->device_id;
  if (!isnan(r->freq_mhz))
    env(dev, now, GP_ENVIRONMENT_SPEED, (uint32_t)llround(r->freq_mhz * 1000),
        0, 0);
  if (!isnan(r->temp_c))
    env(dev, now, GP_ENVIRONMENT_TEMPERATURE,
        (uint32_t)llround(r->temp_c * 1000), 0, 0);
  if (!isnan(r->power_w))
    env(dev, now, GP_ENVIRONMENT_POWER, (uint32_t)llround(r->power_w * 1000), 0,
        0);
  if (!isnan(r->vram_used))
    env(dev, now, GP_ENVIRONMENT_MEMORY, 0, 0, (uint64_t)r->vram_used);
  uint64_t mine = 0;
  bool any = false;
  for (size_t i = 0; i < n; i++)
    for (uint32_t g = 0; client_of(cd, &cur[i]) && g < cur[i].num_regions;
         g++, any = true)
      mine += cur[i].regions[g].total;
  if (any)
    env(dev, now, GP_ENVIRONMENT_MEMORY, (uint32_t)getpid(), 0, mine);
}

static void emit(sampling *sm) {
  card *cd = sm->cd;
  gp__sampler *s = sm->s;
  uint64_t now = gp_get_timestamp();
  uint64_t wall = now - sm->last_ts;
  gp__drm_reading r;
  gp__drm_card_read(&cd->c, &r);
  gp__fdinfo cur[MAX_CLIENTS];
  size_t n = gp__fdinfo_read_pid("self", cur, MAX_CLIENTS);
  for (uint32_t k = 0; k < s->num_counters; k++) {
    uint32_t idx = s->index[k];
    uint32_t id = cd->cat.counters[idx].info.id;
    double num = NAN, den = 0;
    switch (id) {
    case K_FREQ:
      num = r.freq_mhz;
      break;
    case K_POWER:
      num = r.power_w;
      break;
    case K_TEMP:
      num = r.temp_c;
      break;
    case K_FAN:
      num = r.fan_rpm;
      break;
    case K_VRAM_USED:
      num = r.vram_used;
      break;
    case K_VRAM_TOTAL:
      num = r.vram_total;
      break;
    case K_MEM_TOTAL:
    case K_MEM_RESIDENT:
      num = 0;
      for (size_t i = 0; i < n; i++)
        for (uint32_t g = 0; client_of(cd, &cur[i]) && g < cur[i].num_regions;
             g++)
          num += (double)(id == K_MEM_TOTAL ? cur[i].regions[g].total
                                            : cur[i].regions[g].resident);
      break;
    default: {
      const char *en = cd->engines[id - K_ENGINE];
      num = 0;
      den = (double)wall;
      for (size_t i = 0; i < n; i++) {
        if (!client_of(cd, &cur[i]))
          continue;
        const gp__drm_engine *b = gp__fdinfo_engine(&cur[i], en);
        const gp__fdinfo *p = find_client(sm->prev, sm->nprev, &cur[i]);
        const gp__drm_engine *a = p ? gp__fdinfo_engine(p, en) : NULL;
        gp__drm_engine zero = {
            .capacity = 1, .has_busy = true, .has_cycles = true};
        double pct = gp__fdinfo_busy_pct(a ? a : &zero, b, wall);
        if (pct > 0)
          num += pct / 100.0 * (double)wall;
      }
    }
    }
    if (!isnan(num))
      gp__counter_emit(&cd->cat, cd->device_id, idx, num, den, now, sm->last_ts,
                       0, 0, 0);
  }
  emit_environment(cd, now, &r, cur, n);
  memcpy(sm->prev, cur, n * sizeof(cur[0]));
  sm->nprev = n;
  sm->last_ts = now;
}

/* See drm.h. */
void gp__drm_tick_wait(pthread_cond_t *cond, pthread_mutex_t *lock,
                       const bool *stop, struct timespec *next,
                       uint64_t period_ns) {
  uint64_t ns = (uint64_t)next->tv_nsec + period_ns;
  next->tv_sec += (time_t)(ns / 1000000000ull);
  next->tv_nsec = (long)(ns % 1000000000ull);
  while (!*stop && pthread_cond_timedwait(cond, lock, next) != ETIMEDOUT) {
  }
}

static void *thread_main(void *arg) {
  sampling *sm = arg;
  pthread_mutex_lock(&sm->lock);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!sm->stop) {
    gp__drm_tick_wait(&sm->cond, &sm->lock, &sm->stop, &next, sm->s->period_ns);
    emit(sm); /* also the last, partial window at stop */
  }
  pthread_mutex_unlock(&sm->lock);
  return NULL;
}

static int dp_sampling_start(void *prov, gp__sampler *s) {
  sampling *sm = calloc(1, sizeof(*sm));
  if (!sm)
    return GP_ENOMEM;
  sm->cd = prov;
  sm->s = gp__sampler_get(s);
  sm->last_ts = gp_get_timestamp();
  sm->nprev = gp__fdinfo_read_pid("self", sm->prev, MAX_CLIENTS);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&sm->cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&sm->lock, NULL);
  if (gp__thread_start(&sm->thread, NULL, thread_main, sm) != 0) {
    pthread_cond_destroy(&sm->cond);
    pthread_mutex_destroy(&sm->lock);
    gp__sampler_put(sm->s);
    free(sm);
    return GP_ENOMEM;
  }
  s->prov_data = sm;
  return 0;
}

static void dp_sampling_stop(void *prov, gp__sampler *s) {
  (void)prov;
  sampling *sm = s->prov_data;
  if (!sm)
    return;
  pthread_mutex_lock(&sm->lock);
  sm->stop = true;
  pthread_cond_signal(&sm->cond);
  pthread_mutex_unlock(&sm->lock);
  pthread_join(sm->thread, NULL);
  pthread_cond_destroy(&sm->cond);
  pthread_mutex_destroy(&sm->lock);
  s->prov_data = NULL;
  gp__sampler_put(sm->s);
  free(sm);
}

static const gp__provider_ops drm_provider = {
    .sampling_start = dp_sampling_start,
    .sampling_stop = dp_sampling_stop,
};

/* ------------------------------------------------------------------ */
/* Registration                                                         */

static void parse_pci(const char *pdev, gp_device_info *info) {
  unsigned dom, bus, dev, fn;
  if (sscanf(pdev, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4) {
    info->pci_domain = dom;
    info->pci_bus = bus;
    info->pci_device = dev;
    info->pci_function = fn;
  }
}

static int register_card(card *cd) {
  for (size_t k = 0; k < GP_ARRAY_SIZE(known); k++)
    if (strcmp(known[k].driver, cd->c.driver) == 0)
      for (int e = 0; e < 8 && known[k].engines[e]; e++)
        add_engine(cd, known[k].engines[e]);
  gp__fdinfo f[MAX_CLIENTS];
  size_t n = gp__fdinfo_read_pid("self", f, MAX_CLIENTS);
  for (size_t i = 0; i < n; i++)
    for (uint32_t e = 0; client_of(cd, &f[i]) && e < f[i].num_engines; e++)
      add_engine(cd, f[i].engines[e].name);
  build_catalog(cd);
  char name[96];
  snprintf(name, sizeof(name), "DRM %s (%s)", cd->c.name,
           *cd->c.driver ? cd->c.driver : "unknown driver");
  gp_device_info info = {0};
  info.api = GP_API_UNDEFINED;
  info.name = name;
  info.vendor = cd->c.driver;
  info.model = cd->c.pdev;
  info.architecture = "";
  info.driver_version = "";
  parse_pci(cd->c.pdev, &info);
  gp_device_queue_info q[GP__DRM_MAX_ENGINES];
  for (uint32_t e = 0; e < cd->num_engines; e++)
    q[e] = (gp_device_queue_info){cd->engines[e], "DRM engine (fdinfo)",
                                  GP_QUEUE_COMPUTE, 0};
  int rc = gp__device_register(&info, q, cd->num_engines, &cd->device_id);
  if (rc == 0)
    rc = gp__counters_register(cd->device_id, &cd->cat, &drm_provider, cd);
  if (rc == 0)
    gp__counters_announce(cd->device_id);
  return rc;
}

/* See drm.h. */
int gp__drm_devices_register(void) {
  pthread_mutex_lock(&reg_lock);
  if (registered) {
    pthread_mutex_unlock(&reg_lock);
    return 0;
  }
  registered = true;
  gp__drm_card cards[MAX_CARDS];
  size_t n = gp__drm_cards(cards, MAX_CARDS);
  int done = 0;
  for (size_t i = 0; i < n; i++) {
    card *cd = calloc(1, sizeof(*cd)); /* lives as the process */
    if (!cd)
      break;
    cd->c = cards[i];
    if (register_card(cd) == 0) {
      done++;
      cards_on[num_on++] = cd;
    } else {
      free(cd);
    }
  }
  pthread_mutex_unlock(&reg_lock);
  int v3d = gp__v3d_devices_register(); /* V3D perfmons (v3d.c) */
  return done + (v3d > 0 ? v3d : 0);
}
