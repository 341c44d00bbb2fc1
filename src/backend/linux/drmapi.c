/*
 * drmapi.c - the public face of the DRM sources (gpuperf/drm.h): cards and
 * their readings (sysfs.c), and the DRM clients of every readable process
 * (fdinfo.c), for tools like `gpuperf top`.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "drm.h"
#include "gpuperf/drm.h"

/* See gpuperf/drm.h. */
int gp_drm_gpus(gp_drm_gpu *out, size_t cap, size_t *n) {
  if ((!out && cap) || !n)
    return GP_EINVAL;
  gp__drm_card cards[16];
  size_t got = gp__drm_cards(cards, cap < 16 ? cap : 16);
  for (size_t i = 0; i < got; i++) {
    gp__drm_reading r;
    gp__drm_card_read(&cards[i], &r);
    gp_drm_gpu *g = &out[i];
    memset(g, 0, sizeof(*g));
    gp__join(g->card, sizeof(g->card), cards[i].name, NULL);
    gp__join(g->driver, sizeof(g->driver), cards[i].driver, NULL);
    gp__join(g->pdev, sizeof(g->pdev), cards[i].pdev, NULL);
    g->freq_mhz = r.freq_mhz;
    g->power_w = r.power_w;
    g->temp_c = r.temp_c;
    g->fan_rpm = r.fan_rpm;
    g->vram_used = r.vram_used;
    g->vram_total = r.vram_total;
  }
  *n = got;
  return 0;
}

/* See gpuperf/drm.h. */
int gp_drm_register_devices(void) {
  const char *drm = getenv("GPUPERF_DRM");
  if (drm && strcmp(drm, "0") == 0)
    return 0;
  int rc = gp__drm_devices_register();
  return rc < 0 ? rc : 0;
}

static void convert(const gp__fdinfo *f, uint32_t pid, const char *comm,
                    gp_drm_client *c) {
  memset(c, 0, sizeof(*c));
  c->pid = pid;
  gp__join(c->comm, sizeof(c->comm), comm, NULL);
  gp__join(c->driver, sizeof(c->driver), f->driver, NULL);
  gp__join(c->pdev, sizeof(c->pdev), f->pdev, NULL);
  c->client_id = f->client_id;
  for (uint32_t g = 0; g < f->num_regions; g++) {
    c->mem_total += f->regions[g].total;
    c->mem_resident += f->regions[g].resident;
  }
  for (uint32_t e = 0; e < f->num_engines && e < GP_DRM_MAX_ENGINES; e++) {
    const gp__drm_engine *s = &f->engines[e];
    gp__join(c->engines[e].name, sizeof(c->engines[e].name), s->name, NULL);
    c->engines[e].busy_ns = s->busy_ns;
    c->engines[e].capacity = s->capacity;
    c->engines[e].cycles = s->cycles;
    c->engines[e].total_cycles = s->total_cycles;
    c->engines[e].maxfreq_hz = s->maxfreq_hz;
    c->engines[e].has_busy = s->has_busy;
    c->engines[e].has_cycles = s->has_cycles;
    c->num_engines++;
  }
}

/* See gpuperf/drm.h. */
int gp_drm_clients(gp_drm_client *out, size_t cap, size_t *n) {
  if ((!out && cap) || !n)
    return GP_EINVAL;
  *n = 0;
  char dir[512];
  gp__join(dir, sizeof(dir), gp__linux_root(), "/proc");
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  gp__fdinfo f[16];
  struct dirent *de;
  while ((de = readdir(d)) && *n < cap) {
    if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
      continue;
    size_t k = gp__fdinfo_read_pid(de->d_name, f, 16);
    if (k == 0)
      continue;
    char path[800], comm[64] = "";
    snprintf(path, sizeof(path), "%s/%s/comm", dir, de->d_name);
    FILE *c = fopen(path, "r");
    if (c) {
      if (fgets(comm, sizeof(comm), c))
        comm[strcspn(comm, "\n")] = '\0';
      fclose(c);
    }
    for (size_t i = 0; i < k && *n < cap; i++)
      convert(&f[i], (uint32_t)strtoul(de->d_name, NULL, 10), comm,
              &out[(*n)++]);
  }
  closedir(d);
  return 0;
}

static void back(const gp_drm_client *c, uint32_t e, gp__drm_engine *o) {
  memset(o, 0, sizeof(*o));
  o->busy_ns = c->engines[e].busy_ns;
  o->capacity = c->engines[e].capacity;
  o->cycles = c->engines[e].cycles;
  o->total_cycles = c->engines[e].total_cycles;
  o->maxfreq_hz = c->engines[e].maxfreq_hz;
  o->has_busy = c->engines[e].has_busy;
  o->has_cycles = c->engines[e].has_cycles;
}

/* See gpuperf/drm.h. */
double gp_drm_engine_busy(const gp_drm_client *before,
                          const gp_drm_client *after, uint32_t e,
                          uint64_t wall_ns) {
  if (!after || e >= after->num_engines)
    return -1;
  gp__drm_engine a = {.capacity = 1, .has_busy = true, .has_cycles = true}, b;
  back(after, e, &b);
  for (uint32_t i = 0; before && i < before->num_engines; i++)
    if (strcmp(before->engines[i].name, after->engines[e].name) == 0)
      back(before, i, &a);
  return gp__fdinfo_busy_pct(&a, &b, wall_ns);
}
