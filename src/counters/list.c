/*
 * list.c - describing devices and their counters to people and programs:
 * gp_device_list_print() (text or JSON), which `gpuperf list` and
 * GPUPERF_HUD=help (src/session/hud_help.c) print; with GP_LIST_LOADERS,
 * followed by the OpenCL and Vulkan devices their loaders report
 * (loaders.c) with the counters a recorded program gets on them.
 */
#include <stdlib.h>
#include <string.h>

#include "countersInt.h"
#include "loaders.h"

static const char *fixed_group_name(uint32_t g) {
  static const char *const names[] = {"Unclassified", "System",     "Vertices",
                                      "Fragments",    "Primitives", "Memory",
                                      "Compute",      "Ray tracing"};
  return g < GP_ARRAY_SIZE(names) ? names[g] : "Custom";
}

static const char *group_name(uint32_t dev, uint32_t g) {
  gp_counter_group_info gi;
  if (gp_counter_group_lookup(dev, g, &gi) == 0 && gi.name && *gi.name)
    return gi.name;
  return fixed_group_name(g);
}

static const char *queue_kind(uint32_t k) {
  switch (k) {
  case GP_QUEUE_GRAPHICS:
    return "graphics";
  case GP_QUEUE_COMPUTE:
    return "compute";
  case GP_QUEUE_COPY:
    return "copy";
  default:
    return "other";
  }
}

/* "BYTE", "BYTE/SECOND", or "-" for none. */
static const char *units_string(const gp_counter_info *c, char *buf,
                                size_t size) {
  size_t o = 0;
  buf[0] = '\0';
  for (uint32_t i = 0; i < c->num_numerator_units && i < GP_COUNTER_MAX_UNITS;
       i++)
    o += (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s",
                          i ? "*" : "", gp_unit_name(c->numerator_units[i]));
  for (uint32_t i = 0; i < c->num_denominator_units && i < GP_COUNTER_MAX_UNITS;
       i++)
    o += (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s",
                          i ? "*" : "/", gp_unit_name(c->denominator_units[i]));
  if (!buf[0])
    snprintf(buf, size, "-");
  return buf;
}

static void fmt_period(char *buf, size_t size, uint64_t ns) {
  if (ns >= 1000000000ull && ns % 1000000000ull == 0)
    snprintf(buf, size, "%llu s", (unsigned long long)(ns / 1000000000ull));
  else if (ns >= 1000000ull && ns % 1000000ull == 0)
    snprintf(buf, size, "%llu ms", (unsigned long long)(ns / 1000000ull));
  else if (ns >= 1000ull && ns % 1000ull == 0)
    snprintf(buf, size, "%llu us", (unsigned long long)(ns / 1000ull));
  else
    snprintf(buf, size, "%llu ns", (unsigned long long)ns);
}

/* See countersInt.h. */
void gp__list_fmt_bytes(char *buf, size_t size, double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    u++;
  }
  snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* ------------------------------------------------------------------ */
/* Text                                                                 */

/* The host CPU's counters cannot be read if perf_event_open is refused:
 * say so (and why) where they are listed. */
static bool host_refused(uint32_t dev, char *msg, size_t size) {
  const gp__catalog *cat = gp__catalog_get(dev, NULL);
  return cat && !cat->has_scheduler && gp_host_perf_status(msg, size) != 0;
}

static void text_counters(FILE *out, uint32_t dev) {
  gp_counter_catalog_info ci;
  char msg[512];
  if (gp_counter_catalog(dev, &ci) != 0) {
    fprintf(out, "  counters: none\n");
    return;
  }
  if (host_refused(dev, msg, sizeof(msg)))
    fprintf(out, "  note: %s\n", msg);
  char lo[32], hi[32];
  fmt_period(lo, sizeof(lo), ci.min_sampling_period_ns);
  fmt_period(hi, sizeof(hi), ci.max_sampling_period_ns);
  fprintf(out,
          "  counters: %u, up to %u at once; sampling period %s .. %s; "
          "per-activity sampling %s\n",
          ci.num_counters, ci.max_active, lo, hi,
          ci.supports_instrumented ? "yes" : "no");
  fprintf(out, "  blocks:");
  for (uint32_t b = 0; b < ci.num_blocks; b++) {
    gp_counter_block_info bi;
    if (gp_counter_block_get(dev, b, &bi) == 0)
      fprintf(out, "%s %s (%u counters, %u at once)", b ? "," : "", bi.name,
              bi.num_counters, bi.capacity);
  }
  fprintf(out, "\n  %5s  %-54s %-8s %-12s %s\n", "id", "name", "type", "units",
          "groups");
  for (uint32_t i = 0; i < ci.num_counters; i++) {
    gp_counter_info c;
    char units[96];
    if (gp_counter_get(dev, i, &c) != 0)
      continue;
    fprintf(out, "  %5u%c %-54s %-8s %-12s ", c.id,
            c.select_by_default ? '*' : ' ', c.name,
            gp_counter_type_name(c.type),
            units_string(&c, units, sizeof(units)));
    for (uint32_t g = 0; g < c.num_groups && g < GP_COUNTER_MAX_GROUPS; g++)
      fprintf(out, "%s%s", g ? ", " : "", group_name(dev, c.groups[g]));
    fprintf(out, "\n         %s\n", c.description);
  }
  fprintf(out, "  (* selected by default)\n");
}

static void text_device(FILE *out, const gp_device_info *d, uint32_t flags) {
  char bdf[16], mem[32];
  gp_device_pci_bdf(d, bdf, sizeof(bdf));
  gp__list_fmt_bytes(mem, sizeof(mem), (double)d->global_memory_bytes);
  fprintf(out, "device %u: %s\n", d->id, d->name);
  fprintf(out, "  vendor %s, model %s, architecture %s\n", d->vendor, d->model,
          d->architecture);
  fprintf(out, "  %u compute units", d->compute_units);
  if (d->core_clock_khz)
    fprintf(out, " at %u MHz", d->core_clock_khz / 1000);
  if (d->global_memory_bytes)
    fprintf(out, ", %s of memory", mem);
  if (d->pci_bus || d->pci_device || d->pci_domain || d->pci_function)
    fprintf(out, ", PCI %s", bdf);
  fputc('\n', out);
  fprintf(out, "  queues:");
  for (uint32_t q = 0; q < d->num_queues; q++) {
    gp_device_queue_info qi;
    if (gp_device_get_queue(d->id, q, &qi) == 0)
      fprintf(out, "%s %s (%s)", q ? "," : "", qi.name, queue_kind(qi.kind));
  }
  fprintf(out, "%s\n", d->num_queues ? "" : " none");
  if (!(flags & GP_LIST_NO_COUNTERS))
    text_counters(out, d->id);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                 */

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(out, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(out, "\\u%04x", ch);
    else
      fputc(ch, out);
  }
  fputc('"', out);
}

static void json_units(FILE *out, const uint32_t *u, uint32_t n) {
  fputc('[', out);
  for (uint32_t i = 0; i < n && i < GP_COUNTER_MAX_UNITS; i++)
    fprintf(out, "%s\"%s\"", i ? ", " : "", gp_unit_name(u[i]));
  fputc(']', out);
}

static void json_counters(FILE *out, uint32_t dev) {
  gp_counter_catalog_info ci;
  if (gp_counter_catalog(dev, &ci) != 0) {
    fprintf(out, ", \"counters\": []");
    return;
  }
  fprintf(out,
          ", \"max_active\": %u, \"min_sampling_period_ns\": %llu, "
          "\"max_sampling_period_ns\": %llu, \"supports_instrumented\": %s, ",
          ci.max_active, (unsigned long long)ci.min_sampling_period_ns,
          (unsigned long long)ci.max_sampling_period_ns,
          ci.supports_instrumented ? "true" : "false");
  char msg[512];
  if (host_refused(dev, msg, sizeof(msg))) {
    fprintf(out, "\"unavailable\": ");
    json_string(out, msg);
    fprintf(out, ", ");
  }
  fprintf(out, "\"blocks\": [");
  for (uint32_t b = 0; b < ci.num_blocks; b++) {
    gp_counter_block_info bi;
    if (gp_counter_block_get(dev, b, &bi) != 0)
      continue;
    fprintf(out, "%s{\"id\": %u, \"name\": ", b ? ", " : "", bi.id);
    json_string(out, bi.name);
    fprintf(out, ", \"capacity\": %u, \"num_counters\": %u, \"description\": ",
            bi.capacity, bi.num_counters);
    json_string(out, bi.description);
    fputc('}', out);
  }
  fprintf(out, "], \"groups\": [");
  for (uint32_t g = 0; g < ci.num_groups; g++) {
    gp_counter_group_info gi;
    if (gp_counter_group_get(dev, g, &gi) != 0)
      continue;
    fprintf(out, "%s{\"id\": %u, \"name\": ", g ? ", " : "", gi.id);
    json_string(out, gi.name);
    fprintf(out, ", \"description\": ");
    json_string(out, gi.description);
    fputc('}', out);
  }
  fprintf(out, "], \"counters\": [");
  for (uint32_t i = 0; i < ci.num_counters; i++) {
    gp_counter_info c;
    if (gp_counter_get(dev, i, &c) != 0)
      continue;
    fprintf(out, "%s\n    {\"id\": %u, \"name\": ", i ? "," : "", c.id);
    json_string(out, c.name);
    fprintf(out, ", \"description\": ");
    json_string(out, c.description);
    fprintf(out, ", \"category\": ");
    json_string(out, c.category);
    fprintf(out, ", \"type\": \"%s\", \"block\": %u, \"numerator_units\": ",
            gp_counter_type_name(c.type), c.block_id);
    json_units(out, c.numerator_units, c.num_numerator_units);
    fprintf(out, ", \"denominator_units\": ");
    json_units(out, c.denominator_units, c.num_denominator_units);
    fprintf(out, ", \"groups\": [");
    for (uint32_t g = 0; g < c.num_groups && g < GP_COUNTER_MAX_GROUPS; g++) {
      fprintf(out, "%s{\"id\": %u, \"name\": ", g ? ", " : "", c.groups[g]);
      json_string(out, group_name(dev, c.groups[g]));
      fputc('}', out);
    }
    fprintf(out, "], \"peak_value\": %g, \"select_by_default\": %s}",
            c.peak_value, c.select_by_default ? "true" : "false");
  }
  fprintf(out, "]");
}

static void json_device(FILE *out, const gp_device_info *d, bool first,
                        uint32_t flags) {
  char bdf[16];
  gp_device_pci_bdf(d, bdf, sizeof(bdf));
  fprintf(out, "%s\n  {\"id\": %u, \"name\": ", first ? "" : ",", d->id);
  json_string(out, d->name);
  fprintf(out, ", \"vendor\": ");
  json_string(out, d->vendor);
  fprintf(out, ", \"model\": ");
  json_string(out, d->model);
  fprintf(out, ", \"architecture\": ");
  json_string(out, d->architecture);
  fprintf(out,
          ", \"pci_bdf\": \"%s\", \"compute_units\": %u, "
          "\"core_clock_khz\": %u, \"memory_bytes\": %llu, \"queues\": [",
          bdf, d->compute_units, d->core_clock_khz,
          (unsigned long long)d->global_memory_bytes);
  for (uint32_t q = 0; q < d->num_queues; q++) {
    gp_device_queue_info qi;
    if (gp_device_get_queue(d->id, q, &qi) != 0)
      continue;
    fprintf(out, "%s{\"name\": ", q ? ", " : "");
    json_string(out, qi.name);
    fprintf(out, ", \"kind\": \"%s\"}", queue_kind(qi.kind));
  }
  fprintf(out, "]");
  if (!(flags & GP_LIST_NO_COUNTERS))
    json_counters(out, d->id);
  fprintf(out, "}");
}

/* The loaders' devices as the JSON members "loader_devices" and
 * "loader_notes". */
static void json_loaders(FILE *out) {
  const gp__loaders *l = gp__loaders_get();
  fprintf(out, ",\n \"loader_devices\": [");
  for (uint32_t i = 0; i < l->num_devices; i++) {
    const gp__loader_device *d = &l->devices[i];
    bool cl = d->api == GP_API_OPEN_CL;
    fprintf(out, "%s\n  {\"api\": \"%s\", \"platform\": ", i ? "," : "",
            cl                         ? "OpenCL"
            : d->api == GP_API_OPEN_GL ? "OpenGL"
                                       : "Vulkan");
    json_string(out, cl ? l->platforms[d->platform].name : "");
    fprintf(out, ", \"index\": %u, \"name\": ", d->index);
    json_string(out, d->name);
    fprintf(out, ", \"type\": ");
    json_string(out, d->type);
    fprintf(out, ", \"vendor\": ");
    json_string(out, d->vendor);
    fprintf(out, ", \"version\": ");
    json_string(out, d->version);
    fprintf(out, ", \"counters\": [");
    for (uint32_t k = 0; k < d->num_counters; k++) {
      fprintf(out, "%s", k ? ", " : "");
      json_string(out, d->counters[k]);
    }
    fprintf(out, "]}");
  }
  fprintf(out, "],\n \"loader_notes\": {\"opencl\": ");
  json_string(out, l->opencl_status);
  fprintf(out, ", \"vulkan\": ");
  json_string(out, l->vulkan_status);
  fprintf(out, ", \"opengl\": ");
  json_string(out, l->opengl_status);
  fprintf(out, "}");
}

/* See counters.h. */
int gp_device_list_print(FILE *out, uint32_t device_id, uint32_t flags) {
  if (!out || (flags & ~(GP_LIST_JSON | GP_LIST_NO_COUNTERS | GP_LIST_LOADERS)))
    return GP_EINVAL;
  uint32_t n = 0;
  gp_device_count(&n);
  if (device_id != GP_ALL_DEVICES && device_id >= n)
    return GP_ENODEV;
  bool json = flags & GP_LIST_JSON;
  if (json)
    fprintf(out, "{\"devices\": [");
  bool first = true;
  for (uint32_t i = 0; i < n; i++) {
    gp_device_info d;
    if ((device_id != GP_ALL_DEVICES && i != device_id) ||
        gp_device_get_info(i, &d) != 0)
      continue;
    if (json)
      json_device(out, &d, first, flags);
    else
      text_device(out, &d, flags);
    first = false;
  }
  bool loaders = (flags & GP_LIST_LOADERS) && device_id == GP_ALL_DEVICES;
  if (json) {
    fprintf(out, "\n]");
    if (loaders)
      json_loaders(out);
    fprintf(out, "}\n");
  } else if (loaders) {
    gp__loaders_print(out);
  }
  fflush(out);
  return ferror(out) ? GP_EIO : 0;
}
