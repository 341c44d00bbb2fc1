/*
 * v3d.c - Broadcom V3D (Raspberry Pi 4 and 5) performance counters through
 * the kernel's perfmon ioctls, system-wide.
 *
 * Discovery. Every <root>/dev/dri/renderD* node is opened and asked its
 * driver's name (DRM_IOCTL_VERSION); those named "v3d" become devices
 * "V3D <major>.<minor> (renderDN)", the version from DRM_V3D_GET_PARAM
 * (CORE0_IDENT0 bits 31..24, CORE0_IDENT1 bits 3..0, as Mesa reads it).
 *
 * Catalog. Where the kernel has DRM_V3D_PARAM_MAX_PERF_COUNTERS and
 * DRM_V3D_PERFMON_GET_COUNTER, each counter's name, category and
 * description are the kernel's; otherwise gpuperf's built-in table for the
 * version (4.2: 87 counters, 7.1: 93; src/counters/v3dtables.c). Counter
 * i (the hardware index) has id i + 1; groups are those of
 * gp__v3d_counter_fill(). None is selected by default: counting takes the
 * counters from everyone else (below), so only names asked for are
 * counted.
 *
 * Sampling. One kernel perfmon with the selected counters (at most
 * DRM_V3D_MAX_PERF_COUNTERS, 32: the catalog's capacity, so more is
 * refused by the generic checks before anything is opened) is made the
 * global perfmon (DRM_V3D_PERFMON_SET_GLOBAL), which counts every job of
 * every process. A thread reads it (GET_VALUES, cumulative) each period
 * and writes the differences as COUNTER records; at the stop it reads a
 * last time, clears the global perfmon and destroys it. Perfmons belong to
 * the file they were made on, so if this process dies the kernel clears
 * its global perfmon itself.
 *
 * Arbitration. The kernel counts for one owner at a time: SET_GLOBAL is
 * refused (EBUSY) while another global perfmon is set or a job's own
 * perfmon is active, and a job that names its own perfmon is refused
 * (EAGAIN) while a global one is set. gpuperf never takes the counters
 * away from anyone: it asks, and says who may hold them
 * (gp_drm_v3d_check()). Kernels without SET_GLOBAL answer ENOTTY (EINVAL
 * from some DRM cores for an unknown driver ioctl); both read as "this
 * kernel has no system-wide counters".
 *
 * gp_perfmon objects on a V3D device are kernel perfmons too: creating one
 * creates one in the kernel, gp_perfmon_set_global() is SET_GLOBAL, and
 * reading it is GET_VALUES.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "core/thread.h"
#include "counters/v3d.h"
#include "drm.h"
#include "gpuperf/drm.h"
#include "v3d_uapi.h"

#define MAX_V3D 4

typedef struct v3d_dev {
  char node[800]; /* path opened */
  char name[32];  /* renderDN */
  int fd;
  int ver; /* 42, 71, ... */
  /* The kernel perfmon this process made global, 0 none (under
   * global_lock): CLEAR_GLOBAL clears whatever perfmon is global,
   * another process's too, so only ours is ever cleared. */
  uint32_t global_kid;
  uint32_t device_id;
  bool from_kernel; /* names from PERFMON_GET_COUNTER */
  gp__catalog cat;
  gp__counter_def *defs;
  gp__v3d_desc *descs; /* from the kernel, else NULL */
  char (*strings)[3][256];
  gp_counter_block_info block;
  char arch[320];
  char devname[64];
} v3d_dev;

typedef struct v3d_sampling {
  v3d_dev *d;
  gp__sampler *s;
  uint32_t kid; /* kernel perfmon id */
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stop;
  bool stood_down; /* the counters given to the per-job path */
  uint64_t last_ts;
  uint64_t prev[GP__V3D_MAX_PERF_COUNTERS];
} v3d_sampling;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static bool registered;
static v3d_dev *devs[MAX_V3D];
static size_t ndevs;
static v3d_sampling *active[MAX_V3D]; /* running samplers (reg_lock) */

static void busy_message(const v3d_dev *d, char *msg, size_t size);

/* Says once that this process's V3D counters take the per-job path. */
static void note_perjob(void) {
  static atomic_bool said;
  if (!atomic_exchange(&said, true))
    fprintf(stderr,
            "gpuperf: this program draws with OpenGL: its V3D counters are "
            "counted per frame through GL_AMD_performance_monitor (its own "
            "jobs), not system-wide (the kernel gives them one way at a "
            "time)\n");
}

/* ioctl, restarted when a signal interrupts it. Returns 0 or -errno. */
static int xioctl(int fd, unsigned long req, void *arg) {
  int rc;
  do {
    rc = ioctl(fd, req, arg);
  } while (rc == -1 && errno == EINTR);
  return rc == 0 ? 0 : -errno;
}

static int get_param(int fd, uint32_t param, uint64_t *value) {
  gp__v3d_get_param p = {.param = param};
  int rc = xioctl(fd, GP__V3D_IOCTL_GET_PARAM, &p);
  if (rc == 0)
    *value = p.value;
  return rc;
}

static bool is_v3d(int fd) {
  char name[32] = "";
  gp__drm_version v = {0};
  v.name = name;
  v.name_len = sizeof(name) - 1;
  if (xioctl(fd, GP__DRM_IOCTL_VERSION, &v) != 0)
    return false;
  name[sizeof(name) - 1] = '\0';
  if (v.name_len < sizeof(name))
    name[v.name_len] = '\0';
  return strcmp(name, "v3d") == 0;
}

/* The kernel's own descriptions of its counters, or false (then the
 * built-in table serves). */
static bool catalog_from_kernel(v3d_dev *d, uint32_t n) {
  d->descs = calloc(n, sizeof(*d->descs));
  d->strings = calloc(n, sizeof(*d->strings));
  if (!d->descs || !d->strings)
    goto fail;
  for (uint32_t i = 0; i < n; i++) {
    gp__v3d_perfmon_get_counter c;
    memset(&c, 0, sizeof(c));
    c.counter = (uint8_t)i;
    if (xioctl(d->fd, GP__V3D_IOCTL_PERFMON_GET_COUNTER, &c) != 0)
      goto fail; /* ENOTTY (or EINVAL): a kernel without it */
    snprintf(d->strings[i][0], 256, "%.*s", 31, (const char *)c.category);
    snprintf(d->strings[i][1], 256, "%.*s", 63, (const char *)c.name);
    snprintf(d->strings[i][2], 256, "%.*s", 255, (const char *)c.description);
    d->descs[i] =
        (gp__v3d_desc){d->strings[i][0], d->strings[i][1], d->strings[i][2]};
  }
  return true;
fail:
  free(d->descs);
  free(d->strings);
  d->descs = NULL;
  d->strings = NULL;
  return false;
}

static int build_catalog(v3d_dev *d) {
  uint64_t max = 0;
  bool have_max =
      get_param(d->fd, GP__V3D_PARAM_MAX_PERF_COUNTERS, &max) == 0 && max > 0;
  uint32_t n = 0;
  if (have_max && max <= 256 && catalog_from_kernel(d, (uint32_t)max)) {
    n = (uint32_t)max;
    d->from_kernel = true;
  } else if (d->ver >= 71) {
    n = GP__V3D71_NUM;
  } else if (d->ver >= 42) {
    n = GP__V3D42_NUM;
  } else {
    return GP_ENOTSUP; /* no table gpuperf knows */
  }
  if (have_max && max < n)
    n = (uint32_t)max; /* never a counter the kernel would refuse */
  d->defs = calloc(n, sizeof(*d->defs));
  if (!d->defs)
    return GP_ENOMEM;
  for (uint32_t i = 0; i < n; i++) {
    gp__v3d_desc b;
    const gp__v3d_desc *desc = &b;
    if (d->from_kernel) {
      desc = &d->descs[i];
    } else if (d->ver >= 71) {
      desc = &gp__v3d71_counters[i];
    } else {
      const gp_counter_info *c = &gp__v3d42_counters[i].info;
      b = (gp__v3d_desc){c->category, c->name, c->description};
    }
    gp__v3d_counter_fill(i, desc, false, &d->defs[i]);
  }
  d->block = (gp_counter_block_info){
      0,
      GP__V3D_MAX_PERF_COUNTERS,
      0,
      0,
      "perfmon",
      "system-wide: every job of every process, through the kernel's "
      "global perfmon (DRM_IOCTL_V3D_PERFMON_SET_GLOBAL); any 32 at once "
      "(DRM_V3D_MAX_PERF_COUNTERS). Per job in a GL program recorded by "
      "gpuperf: GL_AMD_performance_monitor (libgpuperf-gl.so), same names"};
  d->cat.counters = d->defs;
  d->cat.num_counters = n;
  d->cat.blocks = &d->block;
  d->cat.num_blocks = 1;
  d->cat.groups = gp__v3d_groups;
  d->cat.num_groups = GP__V3D_NUM_GROUPS;
  d->cat.max_active = GP__V3D_MAX_PERF_COUNTERS;
  d->cat.min_period_ns = 1000000ull;     /* 1 ms: an ioctl a read */
  d->cat.max_period_ns = 60000000000ull; /* 60 s */
  d->cat.has_scheduler = 1;              /* a global perfmon */
  snprintf(d->arch, sizeof(d->arch),
           "V3D %d.%d, %u counters from %s; counted system-wide (global "
           "perfmon), or per frame through GL_AMD_performance_monitor in a "
           "GL program",
           d->ver / 10, d->ver % 10, n,
           d->from_kernel ? "the kernel (DRM_IOCTL_V3D_PERFMON_GET_COUNTER)"
                          : "gpuperf's built-in table (this kernel has no "
                            "DRM_IOCTL_V3D_PERFMON_GET_COUNTER)");
  return 0;
}

/* ------------------------------------------------------------------ */
/* Kernel perfmons                                                      */

/* Creates a kernel perfmon counting the catalog indexes index[0..n). */
static int kperfmon_create(v3d_dev *d, const uint32_t *index, uint32_t n,
                           uint32_t *kid) {
  gp__v3d_perfmon_create c;
  memset(&c, 0, sizeof(c));
  if (n == 0 || n > GP__V3D_MAX_PERF_COUNTERS)
    return GP_ECAPACITY;
  c.ncounters = n;
  for (uint32_t i = 0; i < n; i++)
    c.counters[i] = (uint8_t)index[i]; /* catalog index = hardware index */
  int rc = xioctl(d->fd, GP__V3D_IOCTL_PERFMON_CREATE, &c);
  if (rc != 0)
    return rc;
  *kid = c.id;
  return 0;
}

static void kperfmon_destroy(v3d_dev *d, uint32_t kid) {
  gp__v3d_perfmon_destroy x = {kid};
  xioctl(d->fd, GP__V3D_IOCTL_PERFMON_DESTROY, &x);
}

static int kperfmon_values(v3d_dev *d, uint32_t kid, uint64_t *values) {
  gp__v3d_perfmon_get_values g = {kid, 0, (uint64_t)(uintptr_t)values};
  return xioctl(d->fd, GP__V3D_IOCTL_PERFMON_GET_VALUES, &g);
}

/* SET_GLOBAL of kid, or CLEAR_GLOBAL if kid is the perfmon this process
 * made global (GP_ESTATE if it is not: nothing is cleared); the kernel's
 * refusals as gpuperf errors: GP_EBUSY (someone holds the counters),
 * GP_ENOTSUP (no such ioctl). */
static int kset_global(v3d_dev *d, uint32_t kid, bool clear) {
  gp__v3d_perfmon_set_global g = {clear ? GP__V3D_PERFMON_CLEAR_GLOBAL : 0,
                                  kid};
  pthread_mutex_lock(&global_lock);
  int rc = GP_ESTATE;
  if (clear ? d->global_kid == kid && kid : !d->global_kid)
    rc = xioctl(d->fd, GP__V3D_IOCTL_PERFMON_SET_GLOBAL, &g);
  else if (!clear)
    rc = GP_EBUSY; /* this process holds it already */
  if (rc == 0)
    d->global_kid = clear ? 0 : kid;
  pthread_mutex_unlock(&global_lock);
  if (rc == -ENOTTY || (rc == -EINVAL && !clear))
    return GP_ENOTSUP; /* our perfmon exists and flags are valid */
  if (rc == -EBUSY)
    return GP_EBUSY;
  return rc;
}

static int vp_perfmon_open(void *prov, gp_perfmon *pm) {
  uint32_t kid = 0;
  int rc = kperfmon_create(prov, pm->index, pm->num_counters, &kid);
  if (rc == 0)
    pm->hw = (void *)(uintptr_t)kid;
  return rc;
}

static void vp_perfmon_close(void *prov, gp_perfmon *pm) {
  if (pm->hw)
    kperfmon_destroy(prov, (uint32_t)(uintptr_t)pm->hw);
  pm->hw = NULL;
}

static int vp_perfmon_read(void *prov, gp_perfmon *pm, bool wait,
                           gp_counter_value *out) {
  uint64_t v[GP__V3D_MAX_PERF_COUNTERS];
  int rc = kperfmon_values(prov, (uint32_t)(uintptr_t)pm->hw, v);
  if (rc != 0)
    return rc;
  for (uint32_t i = 0; i < pm->num_counters; i++) {
    pm->num[i] = (double)v[i];
    pm->den[i] = 0;
  }
  gp__perfmon_values(pm, out);
  return 0;
}

static int vp_set_global(void *prov, uint32_t device_id, gp_perfmon *pm,
                         gp_perfmon *current) {
  (void)device_id;
  if (pm)
    return kset_global(prov, (uint32_t)(uintptr_t)pm->hw, false);
  return kset_global(prov, (uint32_t)(uintptr_t)current->hw, true);
}

/* ------------------------------------------------------------------ */
/* Periodic sampling                                                    */

/* Reads the global perfmon and writes the counts since the last read. */
static void emit(v3d_sampling *sm) {
  uint64_t v[GP__V3D_MAX_PERF_COUNTERS];
  uint64_t now = gp_get_timestamp();
  uint32_t n = sm->s->num_counters;
  if (kperfmon_values(sm->d, sm->kid, v) != 0)
    return; /* the next window holds these counts */
  double num[GP__V3D_MAX_PERF_COUNTERS], den[GP__V3D_MAX_PERF_COUNTERS];
  for (uint32_t k = 0; k < n; k++) {
    num[k] = (double)(v[k] - sm->prev[k]);
    den[k] = 0;
    sm->prev[k] = v[k];
  }
  gp__counter_emit_n(&sm->d->cat, sm->d->device_id, sm->s->index, n, num, den,
                     now, sm->last_ts, 0, 0, 0);
  sm->last_ts = now;
}

static void *thread_main(void *arg) {
  v3d_sampling *sm = arg;
  pthread_mutex_lock(&sm->lock);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  while (!sm->stop) {
    gp__drm_tick_wait(&sm->cond, &sm->lock, &sm->stop, &next, sm->s->period_ns);
    if (!sm->stood_down)
      emit(sm); /* also the last, partial window at stop */
  }
  pthread_mutex_unlock(&sm->lock);
  return NULL;
}

static int vp_sampling_start(void *prov, gp__sampler *s) {
  v3d_dev *d = prov;
  if (s->instrumented || s->period_ns == 0)
    return GP_ENOTSUP; /* jobs of other processes cannot be told apart */
  if (gp__counters_perjob_claimed("v3d")) {
    note_perjob();
    return GP_EBUSY; /* the session leaves the device out */
  }
  v3d_sampling *sm = calloc(1, sizeof(*sm));
  if (!sm)
    return GP_ENOMEM;
  sm->d = d;
  int rc = kperfmon_create(d, s->index, s->num_counters, &sm->kid);
  if (rc != 0)
    goto fail_free;
  rc = kset_global(d, sm->kid, false);
  if (rc == GP_EBUSY) {
    /* Taken since gpuperf asked (gp_drm_v3d_check): the session leaves
     * this device out, so say it here. */
    char msg[1024];
    busy_message(d, msg, sizeof(msg));
    fprintf(stderr, "gpuperf: %s; not counted in this process\n", msg);
  }
  if (rc != 0)
    goto fail_destroy;
  sm->s = gp__sampler_get(s);
  sm->last_ts = gp_get_timestamp();
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&sm->cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&sm->lock, NULL);
  if (gp__thread_start(&sm->thread, NULL, thread_main, sm) != 0) {
    rc = GP_ENOMEM;
    goto fail_sync;
  }
  s->prov_data = sm;
  pthread_mutex_lock(&reg_lock);
  for (size_t i = 0; i < MAX_V3D; i++)
    if (!active[i]) {
      active[i] = sm;
      break;
    }
  pthread_mutex_unlock(&reg_lock);
  return 0;

fail_sync:
  pthread_cond_destroy(&sm->cond);
  pthread_mutex_destroy(&sm->lock);
  gp__sampler_put(sm->s);
  kset_global(d, sm->kid, true);
fail_destroy:
  kperfmon_destroy(d, sm->kid);
fail_free:
  free(sm);
  return rc;
}

static void vp_sampling_stop(void *prov, gp__sampler *s) {
  v3d_sampling *sm = s->prov_data;
  if (!sm)
    return;
  pthread_mutex_lock(&reg_lock);
  for (size_t i = 0; i < MAX_V3D; i++)
    if (active[i] == sm)
      active[i] = NULL;
  pthread_mutex_unlock(&reg_lock);
  pthread_mutex_lock(&sm->lock);
  sm->stop = true;
  pthread_cond_signal(&sm->cond);
  pthread_mutex_unlock(&sm->lock);
  pthread_join(sm->thread, NULL);
  kset_global(prov, sm->kid, true); /* GP_ESTATE if it stood down */
  kperfmon_destroy(prov, sm->kid);
  pthread_cond_destroy(&sm->cond);
  pthread_mutex_destroy(&sm->lock);
  s->prov_data = NULL;
  gp__sampler_put(sm->s);
  free(sm);
}

/* The GL backend claimed the per-job path while we hold the counters:
 * the windows so far are written, and the global perfmon is given back
 * before the program's first frame asks for its own. */
static void stand_down(void) {
  pthread_mutex_lock(&reg_lock);
  for (size_t i = 0; i < MAX_V3D; i++) {
    v3d_sampling *sm = active[i];
    if (!sm)
      continue;
    pthread_mutex_lock(&sm->lock);
    if (!sm->stood_down) {
      emit(sm);
      kset_global(sm->d, sm->kid, true);
      sm->stood_down = true;
      note_perjob();
    }
    pthread_mutex_unlock(&sm->lock);
  }
  pthread_mutex_unlock(&reg_lock);
}

static const gp__provider_ops v3d_provider = {
    .perfmon_open = vp_perfmon_open,
    .perfmon_close = vp_perfmon_close,
    .perfmon_read = vp_perfmon_read,
    .set_global = vp_set_global,
    .sampling_start = vp_sampling_start,
    .sampling_stop = vp_sampling_stop,
};

/* ------------------------------------------------------------------ */
/* Registration                                                         */

static int register_node(const char *path, const char *name) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (!is_v3d(fd)) {
    close(fd);
    return GP_ENODEV;
  }
  v3d_dev *d = calloc(1, sizeof(*d)); /* lives as the process */
  if (!d) {
    close(fd);
    return GP_ENOMEM;
  }
  d->fd = fd;
  snprintf(d->node, sizeof(d->node), "%s", path);
  snprintf(d->name, sizeof(d->name), "%s", name);
  uint64_t id0 = 0, id1 = 0, pm = 1;
  if (get_param(fd, GP__V3D_PARAM_CORE0_IDENT0, &id0) == 0 &&
      get_param(fd, GP__V3D_PARAM_CORE0_IDENT1, &id1) == 0)
    d->ver = (int)((id0 >> 24) & 0xff) * 10 + (int)(id1 & 0xf);
  int rc = GP_ENOTSUP;
  if (get_param(fd, GP__V3D_PARAM_SUPPORTS_PERFMON, &pm) == 0 && !pm)
    goto fail; /* a kernel without perfmons */
  if ((rc = build_catalog(d)) != 0)
    goto fail;
  snprintf(d->devname, sizeof(d->devname), "V3D %d.%d (%s)", d->ver / 10,
           d->ver % 10, name);
  gp_device_info info = {0};
  info.api = GP_API_UNDEFINED;
  info.name = d->devname;
  info.vendor = "Broadcom";
  info.model = d->node;
  info.architecture = d->arch;
  info.driver_version = "v3d";
  if ((rc = gp__device_register(&info, NULL, 0, &d->device_id)) != 0)
    goto fail;
  rc = gp__counters_register(d->device_id, &d->cat, &v3d_provider, d);
  if (rc != 0)
    goto fail; /* the device stays, without counters */
  devs[ndevs++] = d;
  return 0;
fail:
  close(fd);
  free(d->defs);
  free(d->descs);
  free(d->strings);
  free(d);
  return rc;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* See drm.h. */
int gp__v3d_devices_register(void) {
  pthread_mutex_lock(&reg_lock);
  if (registered) {
    pthread_mutex_unlock(&reg_lock);
    return 0;
  }
  registered = true;
  gp__counters_perjob_on_claim("v3d", stand_down);
  char dir[512];
  gp__join(dir, sizeof(dir), gp__linux_root(), "/dev/dri");
  DIR *dd = opendir(dir);
  char *names[16];
  size_t n = 0;
  struct dirent *de;
  while (dd && (de = readdir(dd)) && n < 16)
    if (strncmp(de->d_name, "renderD", 7) == 0)
      names[n++] = strdup(de->d_name);
  if (dd)
    closedir(dd);
  qsort(names, n, sizeof(names[0]), by_name);
  size_t before = ndevs;
  for (size_t i = 0; i < n; i++) {
    char path[800];
    if (names[i] && ndevs < MAX_V3D) {
      snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
      register_node(path, names[i]);
    }
    free(names[i]);
  }
  size_t done = ndevs - before;
  pthread_mutex_unlock(&reg_lock);
  for (size_t i = before; i < before + done; i++)
    gp__counters_announce(devs[i]->device_id);
  return (int)done;
}

static v3d_dev *find_dev(uint32_t device_id) {
  v3d_dev *d = NULL;
  pthread_mutex_lock(&reg_lock);
  for (size_t i = 0; i < ndevs; i++)
    if (devs[i]->device_id == device_id)
      d = devs[i];
  pthread_mutex_unlock(&reg_lock);
  return d;
}

/* Appends the processes with the V3D driver open (fdinfo) to msg. */
static void append_clients(char *msg, size_t size) {
  gp_drm_client c[32];
  size_t n = 0, o = strlen(msg), shown = 0;
  gp_drm_clients(c, 32, &n);
  for (size_t i = 0; i < n && o < size; i++) {
    if (strcmp(c[i].driver, "v3d") != 0 || c[i].pid == (uint32_t)getpid())
      continue;
    bool dup = false;
    for (size_t j = 0; j < i && !dup; j++)
      dup = c[j].pid == c[i].pid && strcmp(c[j].driver, "v3d") == 0;
    if (dup)
      continue;
    o += (size_t)snprintf(
        msg + o, size - o, "%s%s (pid %u)",
        shown++ ? ", " : "; processes with V3D open: ", c[i].comm, c[i].pid);
  }
  if (!shown && o < size)
    snprintf(msg + o, size - o,
             "; no process with V3D open could be read from /proc (their "
             "fdinfo is readable by their owner and root)");
}

/* Why SET_GLOBAL said EBUSY, who may hold the counters, what to do. */
static void busy_message(const v3d_dev *d, char *msg, size_t size) {
  snprintf(msg, size,
           "the V3D counters of %s are in use (DRM_IOCTL_V3D_PERFMON_"
           "SET_GLOBAL: EBUSY): the kernel counts for one owner at a time, "
           "either a program's own per-job perfmon while its monitor is "
           "active (Mesa's GL_AMD_performance_monitor, "
           "VK_KHR_performance_query) or one system-wide perfmon (another "
           "gpuperf, Perfetto's V3D producer)",
           d->node);
  append_clients(msg, size);
  size_t o = strlen(msg);
  if (o < size)
    snprintf(msg + o, size - o,
             ". gpuperf does not stop them: run again when they are done, "
             "or add --wait to wait until the counters are free");
}

/* See gpuperf/drm.h. */
int gp_drm_v3d_check(uint32_t device_id, char *msg, size_t size) {
  v3d_dev *d = find_dev(device_id);
  char buf[1024];
  if (!msg || !size) {
    msg = buf;
    size = sizeof(buf);
  }
  *msg = '\0';
  if (!d)
    return GP_ENODEV;
  uint32_t idx = 0, kid = 0;
  int rc = kperfmon_create(d, &idx, 1, &kid);
  if (rc != 0) {
    snprintf(msg, size, "cannot create a perfmon on %s: %s", d->node,
             gp_strerror(rc));
    return rc;
  }
  rc = kset_global(d, kid, false);
  if (rc == 0)
    kset_global(d, kid, true);
  kperfmon_destroy(d, kid);
  if (rc == GP_ENOTSUP)
    snprintf(msg, size,
             "this kernel has no system-wide V3D counters: %s refuses "
             "DRM_IOCTL_V3D_PERFMON_SET_GLOBAL (a kernel that has it is "
             "needed; per-job counters of a GL program still work through "
             "GL_AMD_performance_monitor)",
             d->node);
  else if (rc == GP_EBUSY)
    busy_message(d, msg, size);
  else if (rc != 0)
    snprintf(msg, size, "%s: DRM_IOCTL_V3D_PERFMON_SET_GLOBAL: %s", d->node,
             gp_strerror(rc));
  return rc;
}
