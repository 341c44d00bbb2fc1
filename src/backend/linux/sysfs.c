/*
 * sysfs.c - what the kernel tells about a DRM card in sysfs, under the
 * root of gp__linux_root():
 *
 *   <root>/sys/class/drm/cardN/                       the card
 *     gt_cur_freq_mhz                                 i915: MHz
 *     device/uevent                                   DRIVER=, PCI_SLOT_NAME=
 *     device/pp_dpm_sclk                              amdgpu: "N: <f>Mhz *"
 *     device/mem_info_vram_used, mem_info_vram_total  amdgpu: bytes
 *     device/devfreq/<name>/cur_freq                  devfreq (v3d,
 *                                                     panfrost, msm): Hz
 *     device/hwmon/hwmonM/power1_average              microwatts
 *         (power1_input where there is no average)
 *     device/hwmon/hwmonM/temp1_input                 millidegrees C
 *     device/hwmon/hwmonM/fan1_input                  RPM
 *
 * (Documentation/ABI/testing/sysfs-class-devfreq, sysfs-class-hwmon and
 * the amdgpu and i915 driver documentation.) Files are found once, at
 * discovery, and read at each sample.
 */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drm.h"

static bool exists(const char *path) {
  return access(path, R_OK) == 0;
}

static ssize_t slurp(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n < 0)
    return -1;
  buf[n] = '\0';
  return n;
}

/* The value of KEY= in an uevent file, into out. */
static void uevent_key(const char *text, const char *key, char *out,
                       size_t size) {
  size_t kl = strlen(key);
  for (const char *l = text; l && *l;) {
    if (strncmp(l, key, kl) == 0 && l[kl] == '=') {
      size_t n = strcspn(l + kl + 1, "\n");
      snprintf(out, size, "%.*s", (int)n, l + kl + 1);
      return;
    }
    l = strchr(l, '\n');
    l = l ? l + 1 : NULL;
  }
}

/* The first entry of dir whose name starts with prefix, into out. */
static bool first_entry(const char *dir, const char *prefix, char *out,
                        size_t size) {
  DIR *d = opendir(dir);
  if (!d)
    return false;
  char best[256] = "";
  struct dirent *de;
  while ((de = readdir(d))) {
    if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)))
      continue;
    if (!*best || strcmp(de->d_name, best) < 0)
      gp__join(best, sizeof(best), de->d_name, NULL);
  }
  closedir(d);
  if (!*best)
    return false;
  char tmp[600];
  gp__join(out, size, gp__join(tmp, sizeof(tmp), dir, "/"), best);
  return true;
}

static int by_name(const void *a, const void *b) {
  const gp__drm_card *x = a, *y = b;
  size_t lx = strlen(x->name), ly = strlen(y->name);
  return lx != ly ? (lx < ly ? -1 : 1) : strcmp(x->name, y->name);
}

static void discover(gp__drm_card *c, const char *cdir) {
  char path[600], buf[1024];
  gp__join(path, sizeof(path), cdir, "/device/uevent");
  if (slurp(path, buf, sizeof(buf)) > 0) {
    uevent_key(buf, "DRIVER", c->driver, sizeof(c->driver));
    uevent_key(buf, "PCI_SLOT_NAME", c->pdev, sizeof(c->pdev));
  }
  if (!*c->pdev) { /* a platform device: the device directory's name */
    char real[512];
    gp__join(path, sizeof(path), cdir, "/device");
    if (realpath(path, real)) {
      const char *b = strrchr(real, '/');
      gp__join(c->pdev, sizeof(c->pdev), b ? b + 1 : real, NULL);
    }
  }
  char dev[512];
  gp__join(dev, sizeof(dev), cdir, "/device");
  gp__join(path, sizeof(path), cdir, "/gt_cur_freq_mhz");
  char fdir[600];
  gp__join(fdir, sizeof(fdir), dev, "/devfreq");
  char found[600];
  if (exists(path)) {
    gp__join(c->freq_path, sizeof(c->freq_path), path, NULL);
    c->freq_kind = 1;
  } else if (exists(gp__join(path, sizeof(path), dev, "/pp_dpm_sclk"))) {
    gp__join(c->freq_path, sizeof(c->freq_path), path, NULL);
    c->freq_kind = 3;
  } else if (first_entry(fdir, "", found, sizeof(found))) {
    gp__join(c->freq_path, sizeof(c->freq_path), found, "/cur_freq");
    c->freq_kind = exists(c->freq_path) ? 2 : 0;
    if (!c->freq_kind)
      c->freq_path[0] = '\0';
  }
  gp__join(fdir, sizeof(fdir), dev, "/hwmon");
  if (first_entry(fdir, "hwmon", found, sizeof(found)))
    gp__join(c->hwmon, sizeof(c->hwmon), found, NULL);
  gp__join(path, sizeof(path), dev, "/mem_info_vram_used");
  if (exists(path)) {
    gp__join(c->vram_used, sizeof(c->vram_used), path, NULL);
    gp__join(c->vram_total, sizeof(c->vram_total), dev, "/mem_info_vram_total");
  }
}

/* See drm.h. */
size_t gp__drm_cards(gp__drm_card *out, size_t cap) {
  char dir[512];
  gp__join(dir, sizeof(dir), gp__linux_root(), "/sys/class/drm");
  DIR *d = opendir(dir);
  if (!d)
    return 0;
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) && n < cap) {
    /* card<N> only: connectors are card<N>-<connector>. */
    const char *p = de->d_name;
    if (strncmp(p, "card", 4) != 0 || !p[4] ||
        strspn(p + 4, "0123456789") != strlen(p + 4))
      continue;
    gp__drm_card *c = &out[n++];
    memset(c, 0, sizeof(*c));
    gp__join(c->name, sizeof(c->name), p, NULL);
    char cdir[600];
    char tmp[600];
    gp__join(cdir, sizeof(cdir), gp__join(tmp, sizeof(tmp), dir, "/"), p);
    discover(c, cdir);
  }
  closedir(d);
  qsort(out, n, sizeof(*out), by_name);
  return n;
}

/* The number in a file, NaN if it cannot be read. */
static double number(const char *path) {
  char buf[64];
  if (!*path || slurp(path, buf, sizeof(buf)) <= 0)
    return NAN;
  char *end;
  double v = strtod(buf, &end);
  return end == buf ? NAN : v;
}

/* amdgpu's pp_dpm_sclk: the level marked '*' ("1: 1800Mhz *"). */
static double dpm_mhz(const char *path) {
  char buf[1024];
  if (slurp(path, buf, sizeof(buf)) <= 0)
    return NAN;
  for (char *l = buf; l && *l;) {
    char *nl = strchr(l, '\n');
    if (nl)
      *nl = '\0';
    char *colon = strchr(l, ':');
    if (colon && strchr(l, '*')) {
      double v = strtod(colon + 1, NULL);
      return v;
    }
    l = nl ? nl + 1 : NULL;
  }
  return NAN;
}

/* See drm.h. */
void gp__drm_card_read(const gp__drm_card *c, gp__drm_reading *r) {
  r->freq_mhz = NAN;
  if (c->freq_kind == 1)
    r->freq_mhz = number(c->freq_path);
  else if (c->freq_kind == 2)
    r->freq_mhz = number(c->freq_path) / 1e6;
  else if (c->freq_kind == 3)
    r->freq_mhz = dpm_mhz(c->freq_path);
  r->power_w = r->temp_c = r->fan_rpm = NAN;
  if (*c->hwmon) {
    char path[600];
    gp__join(path, sizeof(path), c->hwmon, "/power1_average");
    r->power_w = number(path) / 1e6;
    if (isnan(r->power_w)) {
      gp__join(path, sizeof(path), c->hwmon, "/power1_input");
      r->power_w = number(path) / 1e6;
    }
    gp__join(path, sizeof(path), c->hwmon, "/temp1_input");
    r->temp_c = number(path) / 1000.0;
    gp__join(path, sizeof(path), c->hwmon, "/fan1_input");
    r->fan_rpm = number(path);
  }
  r->vram_used = number(c->vram_used);
  r->vram_total = number(c->vram_total);
}
