/*
 * tconfig_format.c - a TraceConfig written back in the text format
 * (gp_trace_config_format): every field gpuperf read, so that what is
 * written reads again to the same config.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "tconfigInt.h"

typedef struct sbuf {
  char *p;
  size_t n, cap;
  bool oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void put(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k =
      vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
  va_end(ap);
  if (k < 0) {
    b->oom = true;
    return;
  }
  if (b->n + (size_t)k + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap * 2 : 1024;
    while (ncap < b->n + (size_t)k + 1)
      ncap *= 2;
    char *np = realloc(b->p, ncap);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = ncap;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
  }
  b->n += (size_t)k;
}

static void put_string(sbuf *b, const char *indent, const char *field,
                       const char *s) {
  put(b, "%s%s: \"", indent, field);
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      put(b, "\\%c", ch);
    else if (ch < 0x20 || ch >= 0x7f)
      put(b, "\\%03o", ch);
    else
      put(b, "%c", ch);
  }
  put(b, "\"\n");
}

static void format_counters(sbuf *b, const tc_source *s) {
  const gp_counter_config *cc = &s->info.counters;
  const char *in = "      ";
  put(b, "    gpu_counter_config {\n");
  if (s->period_set)
    put(b, "%scounter_period_ns: %llu\n", in,
        (unsigned long long)cc->counter_period_ns);
  for (size_t i = 0; i < cc->num_counter_ids; i++)
    put(b, "%scounter_ids: %u\n", in, cc->counter_ids[i]);
  for (size_t i = 0; i < cc->num_counter_names; i++)
    put_string(b, in, "counter_names", cc->counter_names[i]);
  if (s->isc) {
    put(b, "%sinstrumented_sampling_config {\n", in);
    for (size_t i = 0; i < cc->num_name_filters; i++) {
      put(b, "        activity_name_filters {\n");
      put_string(b, "          ", "name_glob", cc->name_filters[i].name_glob);
      put(b, "          name_base: %s\n",
          gp__tc_name_bases[cc->name_filters[i].name_base < 3
                                ? cc->name_filters[i].name_base
                                : 0]);
      put(b, "        }\n");
    }
    for (size_t i = 0; i < cc->num_tx_include_globs; i++)
      put_string(b, "        ", "activity_tx_include_globs",
                 cc->tx_include_globs[i]);
    for (size_t i = 0; i < cc->num_tx_exclude_globs; i++)
      put_string(b, "        ", "activity_tx_exclude_globs",
                 cc->tx_exclude_globs[i]);
    for (size_t i = 0; i < cc->num_ranges; i++)
      put(b, "        activity_ranges { skip: %u count: %u }\n",
          cc->ranges[i].skip, cc->ranges[i].count);
    put(b, "%s}\n", in);
  } else if (cc->instrumented) {
    put(b, "%sinstrumented_sampling: true\n", in);
  }
  put(b, "    }\n");
}

/* See session.h. */
int gp_trace_config_format(const gp_trace_config *c, char *buf, size_t size,
                           size_t *needed) {
  if (!c || !needed || (size && !buf))
    return GP_EINVAL;
  sbuf b = {NULL, 0, 0, false};
  for (uint32_t i = 0; i < c->nbuf; i++)
    put(&b, "buffers { size_kb: %u fill_policy: %s }\n", c->buffers[i].size_kb,
        gp__tc_fill_policies[c->buffers[i].fill_policy < 3
                                 ? c->buffers[i].fill_policy
                                 : 0]);
  if (c->duration_ms)
    put(&b, "duration_ms: %u\n", c->duration_ms);
  if (c->flush_period_ms)
    put(&b, "flush_period_ms: %u\n", c->flush_period_ms);
  if (c->file_write_period_ms)
    put(&b, "file_write_period_ms: %u\n", c->file_write_period_ms);
  if (c->write_into_file >= 0)
    put(&b, "write_into_file: %s\n", c->write_into_file ? "true" : "false");
  for (uint32_t i = 0; i < c->nsrc; i++) {
    const tc_source *s = &c->src[i];
    put(&b, "data_sources {\n  config {\n");
    put_string(&b, "    ", "name", s->info.name);
    if (s->target_set)
      put(&b, "    target_buffer: %u\n", s->info.target_buffer);
    if (s->counter_config)
      format_counters(&b, s);
    if (s->renderstages_config) {
      put(&b, "    gpu_renderstages_config {\n");
      if (s->info.low_overhead)
        put(&b, "      low_overhead: true\n");
      put(&b, "    }\n");
    }
    if (s->vulkan_memory_config)
      put(&b,
          "    vulkan_memory_config { track_driver_memory_usage: %s "
          "track_device_memory_usage: %s }\n",
          s->info.track_driver_memory_usage ? "true" : "false",
          s->info.track_device_memory_usage ? "true" : "false");
    if (s->info.kind == GP_DATA_SOURCE_LINUX_FTRACE) {
      put(&b, "    ftrace_config {\n");
      for (int e = 0; e < GP_FTRACE_EVENT_COUNT; e++)
        if (s->info.ftrace_events & (1u << e))
          put_string(&b, "      ", "ftrace_events", gp__ftrace_event_name(e));
      if (s->info.ftrace_buffer_size_kb)
        put(&b, "      buffer_size_kb: %u\n", s->info.ftrace_buffer_size_kb);
      if (s->info.ftrace_drain_period_ms)
        put(&b, "      drain_period_ms: %u\n", s->info.ftrace_drain_period_ms);
      put(&b, "    }\n");
    }
    put(&b, "  }\n}\n");
  }
  if (c->options_given || c->descriptor_mode != 2 || c->machine_id ||
      c->code_objects || c->source_level)
    put(&b,
        "gpuperf_options { counter_descriptor_mode: %u machine_id: %u%s%s }\n",
        c->descriptor_mode, c->machine_id,
        c->code_objects ? " code_objects: true" : "",
        c->source_level ? " source_level: true" : "");
  if (b.oom) {
    free(b.p);
    return GP_ENOMEM;
  }
  *needed = b.n;
  int rc = 0;
  if (b.n + 1 > size)
    rc = GP_ESIZE;
  else if (b.n)
    memcpy(buf, b.p, b.n + 1);
  else
    buf[0] = '\0';
  free(b.p);
  return rc;
}
