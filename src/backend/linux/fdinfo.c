/*
 * fdinfo.c - DRM client usage statistics from /proc/<pid>/fdinfo/<fd>,
 * the format of the kernel's Documentation/gpu/drm-usage-stats.rst:
 * "key:<whitespace>value[ unit]" lines, of which we read drm-driver,
 * drm-pdev, drm-client-id, drm-engine-<e> (busy ns),
 * drm-engine-capacity-<e>, drm-cycles-<e>, drm-total-cycles-<e>,
 * drm-maxfreq-<e>, drm-total-<region> and drm-resident-<region>. Any DRM
 * driver that implements it works alike: i915, xe, amdgpu, msm, panfrost,
 * panthor, v3d (engines bin, render, tfu, csd, cache_clean), ...
 *
 * Busy time is cumulative per client, so a percentage needs two readings:
 * gp__fdinfo_busy_pct().
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drm.h"

/* See drm.h. */
const char *gp__linux_root(void) {
  const char *r = getenv("GPUPERF_SYSROOT");
  return r ? r : "";
}

/* See drm.h. */
char *gp__join(char *out, size_t size, const char *a, const char *b) {
  size_t n = 0;
  for (const char *p = a; p && *p && n + 1 < size; p++)
    out[n++] = *p;
  for (const char *p = b; p && *p && n + 1 < size; p++)
    out[n++] = *p;
  if (size)
    out[n] = '\0';
  return out;
}

static gp__drm_engine *engine_get(gp__fdinfo *f, const char *name, size_t len) {
  if (len == 0 || len >= GP__DRM_NAME)
    return NULL;
  for (uint32_t i = 0; i < f->num_engines; i++)
    if (strlen(f->engines[i].name) == len &&
        memcmp(f->engines[i].name, name, len) == 0)
      return &f->engines[i];
  if (f->num_engines == GP__DRM_MAX_ENGINES)
    return NULL;
  gp__drm_engine *e = &f->engines[f->num_engines++];
  memset(e, 0, sizeof(*e));
  memcpy(e->name, name, len);
  e->capacity = 1;
  return e;
}

static gp__drm_region *region_get(gp__fdinfo *f, const char *name, size_t len) {
  if (len == 0 || len >= GP__DRM_NAME)
    return NULL;
  for (uint32_t i = 0; i < f->num_regions; i++)
    if (strlen(f->regions[i].name) == len &&
        memcmp(f->regions[i].name, name, len) == 0)
      return &f->regions[i];
  if (f->num_regions == GP__DRM_MAX_REGIONS)
    return NULL;
  gp__drm_region *r = &f->regions[f->num_regions++];
  memset(r, 0, sizeof(*r));
  memcpy(r->name, name, len);
  return r;
}

/* The number at v and its unit scaled: memory units to bytes, frequency
 * units to Hz. */
static uint64_t value_of(const char *v, bool freq) {
  char *end;
  uint64_t x = strtoull(v, &end, 10);
  while (*end == ' ' || *end == '\t')
    end++;
  if (freq) {
    if (strncmp(end, "MHz", 3) == 0)
      return x * 1000000ull;
    if (strncmp(end, "kHz", 3) == 0 || strncmp(end, "KHz", 3) == 0)
      return x * 1000ull;
    return x;
  }
  if (strncmp(end, "KiB", 3) == 0)
    return x << 10;
  if (strncmp(end, "MiB", 3) == 0)
    return x << 20;
  if (strncmp(end, "GiB", 3) == 0)
    return x << 30;
  return x;
}

#define STARTS(k, lit) (strncmp((k), lit, sizeof(lit) - 1) == 0)

/* See drm.h. */
bool gp__fdinfo_parse(const char *text, gp__fdinfo *out) {
  memset(out, 0, sizeof(*out));
  bool drm = false;
  for (const char *line = text; line && *line;) {
    const char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) : strlen(line);
    const char *colon = memchr(line, ':', len);
    if (colon && STARTS(line, "drm-")) {
      char val[128];
      size_t vl = len - (size_t)(colon + 1 - line);
      const char *v = colon + 1;
      while (vl && (*v == ' ' || *v == '\t'))
        v++, vl--;
      snprintf(val, sizeof(val), "%.*s", (int)vl, v);
      const char *k = line + 4;
      size_t kl = (size_t)(colon - k);
      gp__drm_engine *e;
      gp__drm_region *r;
      if (kl == 6 && STARTS(k, "driver")) {
        gp__join(out->driver, sizeof(out->driver), val, NULL);
        drm = true;
      } else if (kl == 4 && STARTS(k, "pdev")) {
        gp__join(out->pdev, sizeof(out->pdev), val, NULL);
      } else if (kl == 9 && STARTS(k, "client-id")) {
        out->client_id = strtoull(val, NULL, 10);
      } else if (STARTS(k, "engine-capacity-")) {
        if ((e = engine_get(out, k + 16, kl - 16)))
          e->capacity = value_of(val, false) ? value_of(val, false) : 1;
      } else if (STARTS(k, "engine-")) {
        if ((e = engine_get(out, k + 7, kl - 7)))
          e->busy_ns = value_of(val, false), e->has_busy = true;
      } else if (STARTS(k, "cycles-")) {
        if ((e = engine_get(out, k + 7, kl - 7)))
          e->cycles = value_of(val, false), e->has_cycles = true;
      } else if (STARTS(k, "total-cycles-")) {
        if ((e = engine_get(out, k + 13, kl - 13)))
          e->total_cycles = value_of(val, false);
      } else if (STARTS(k, "maxfreq-")) {
        if ((e = engine_get(out, k + 8, kl - 8)))
          e->maxfreq_hz = value_of(val, true);
      } else if (STARTS(k, "total-")) {
        if ((r = region_get(out, k + 6, kl - 6)))
          r->total = value_of(val, false);
      } else if (STARTS(k, "resident-")) {
        if ((r = region_get(out, k + 9, kl - 9)))
          r->resident = value_of(val, false);
      }
    }
    line = nl ? nl + 1 : NULL;
  }
  return drm;
}

/* See drm.h. */
const gp__drm_engine *gp__fdinfo_engine(const gp__fdinfo *f, const char *name) {
  for (uint32_t i = 0; i < f->num_engines; i++)
    if (strcmp(f->engines[i].name, name) == 0)
      return &f->engines[i];
  return NULL;
}

/* See drm.h. */
double gp__fdinfo_busy_pct(const gp__drm_engine *a, const gp__drm_engine *b,
                           uint64_t wall_ns) {
  if (!a || !b || wall_ns == 0)
    return -1;
  if (a->has_busy && b->has_busy && b->busy_ns >= a->busy_ns) {
    uint64_t cap = b->capacity ? b->capacity : 1;
    return 100.0 * (double)(b->busy_ns - a->busy_ns) /
           ((double)wall_ns * (double)cap);
  }
  if (a->has_cycles && b->has_cycles && b->cycles >= a->cycles) {
    double d = (double)(b->cycles - a->cycles);
    if (b->total_cycles > a->total_cycles)
      return 100.0 * d / (double)(b->total_cycles - a->total_cycles);
    if (b->maxfreq_hz)
      return 100.0 * d / ((double)wall_ns * 1e-9 * (double)b->maxfreq_hz);
  }
  return -1;
}

/* Reads a small file into buf; returns its length or -1. */
static ssize_t slurp(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t n = 0;
  while (n + 1 < size) {
    ssize_t r = read(fd, buf + n, size - 1 - n);
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  return (ssize_t)n;
}

/* See drm.h. */
size_t gp__fdinfo_read_pid(const char *pid, gp__fdinfo *out, size_t cap) {
  char dir[512];
  snprintf(dir, sizeof(dir), "%s/proc/%s/fdinfo", gp__linux_root(), pid);
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  size_t n = 0;
  struct dirent *de;
  char buf[4096];
  while ((de = readdir(d)) && n < cap) {
    if (de->d_name[0] == '.')
      continue;
    char path[800];
    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
    if (slurp(path, buf, sizeof(buf)) <= 0 || !gp__fdinfo_parse(buf, &out[n]))
      continue;
    /* Several fds of one client (dup, fork) count once. */
    bool dup = false;
    for (size_t i = 0; i < n && !dup; i++)
      dup = out[i].client_id == out[n].client_id &&
            strcmp(out[i].driver, out[n].driver) == 0 &&
            strcmp(out[i].pdev, out[n].pdev) == 0;
    if (!dup)
      n++;
  }
  closedir(d);
  return n;
}
