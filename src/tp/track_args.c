/*
 * track_args.c - the args of a track event's slice, as Perfetto's
 * importer makes them: its debug annotations (nested dicts and arrays
 * included) as "debug.*", the gpu_api extension, the ids of the
 * GpuCorrelation extension (3000) and legacy_event.passthrough_utid
 * (parse_track.c finds the thread).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/error.h"
#include "tp/import.h"

#define MAX_ANNOTATION_DEPTH 8

static int nomem(gp__tp_importer *imp) {
  return gp__tp_fail(imp, GP_ENOMEM, 0, "out of memory");
}

static int key(gp__tp_importer *imp, const char *k, uint32_t *out) {
  return gp__tp_intern(imp, k, strlen(k), out);
}

static int annotation(gp__tp_importer *imp, uint32_t gen,
                      const gp__pb_reader *parent, const gp__pb_field *pf,
                      const char *prefix, int depth, gp__tp_argb *b);

/* The flat key of a key: without its array indices ("a[1].b" -> "a.b"). */
static void flatten(const char *key, char *out, size_t size) {
  size_t n = 0;
  int depth = 0;
  for (; *key && n + 1 < size; key++) {
    if (*key == '[')
      depth++;
    else if (*key == ']' && depth > 0)
      depth--;
    else if (!depth)
      out[n++] = *key;
  }
  out[n] = '\0';
}

/* Adds path = the annotation's value (or its dict entries / array values
 * under path). */
static int annotation_value(gp__tp_importer *imp, uint32_t gen,
                            const gp__pb_reader *parent, const gp__pb_field *pf,
                            const char *path, int depth, gp__tp_argb *b) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  uint32_t k, fk;
  char flat[512];
  flatten(path, flat, sizeof(flat));
  int rc;
  if ((rc = key(imp, path, &k)) || (rc = key(imp, flat, &fk)))
    return rc;
  uint32_t array_index = 0;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    int rc2 = 0;
    bool v = f.wire_type == GP_PB_VARINT;
    switch (f.id) {
    case 2:
      if (v)
        gp__tp_argb_add(b, k, fk, GP_TP_ARG_BOOL, f.value != 0);
      break;
    case 3:
      if (v)
        gp__tp_argb_add(b, k, fk, GP_TP_ARG_UINT, (int64_t)f.value);
      break;
    case 4:
      if (v)
        gp__tp_argb_add(b, k, fk, GP_TP_ARG_INT, (int64_t)f.value);
      break;
    case 5:
      if (f.wire_type == GP_PB_I64)
        gp__tp_argb_add(b, k, fk, GP_TP_ARG_REAL, (int64_t)f.value);
      break;
    case 7:
      if (v)
        gp__tp_argb_add(b, k, fk, GP_TP_ARG_POINTER, (int64_t)f.value);
      break;
    case 6:
    case 9:
      if (f.wire_type == GP_PB_LEN) {
        uint32_t s;
        rc2 = gp__tp_intern(imp, f.data, f.size, &s);
        if (!rc2)
          gp__tp_argb_add(b, k, fk,
                          f.id == 9 ? GP_TP_ARG_JSON : GP_TP_ARG_STRING, s);
      }
      break;
    case 17:
      if (v) {
        uint32_t s = gp__tp_interned_str(
            imp, gen, GP_TP_IN_DEBUG_ANNOTATION_STRING_VALUES, f.value, 2,
            &rc2);
        if (!rc2 && s != GP_TP_NONE)
          gp__tp_argb_add(b, k, fk, GP_TP_ARG_STRING, s);
      }
      break;
    case 11: /* dict entries */
      if (f.wire_type == GP_PB_LEN && depth < MAX_ANNOTATION_DEPTH)
        rc2 = annotation(imp, gen, &r, &f, path, depth + 1, b);
      break;
    case 12: /* array values */
      if (f.wire_type == GP_PB_LEN && depth < MAX_ANNOTATION_DEPTH) {
        char sub[512];
        snprintf(sub, sizeof(sub), "%s[%u]", path, array_index++);
        rc2 = annotation_value(imp, gen, &r, &f, sub, depth + 1, b);
      }
      break;
    default:
      break;
    }
    if (rc2)
      return rc2;
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "DebugAnnotation");
  return 0;
}

/* An annotation with a name: "prefix.name" (prefix "debug" at the top). */
static int annotation(gp__tp_importer *imp, uint32_t gen,
                      const gp__pb_reader *parent, const gp__pb_field *pf,
                      const char *prefix, int depth, gp__tp_argb *b) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_sub(&r, parent, pf);
  char name[256] = "";
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id == 10 && f.wire_type == GP_PB_LEN) {
      size_t n = f.size < sizeof(name) - 1 ? f.size : sizeof(name) - 1;
      memcpy(name, f.data, n);
      name[n] = '\0';
    } else if (f.id == 1 && f.wire_type == GP_PB_VARINT) {
      uint32_t s = gp__tp_interned_str(
          imp, gen, GP_TP_IN_DEBUG_ANNOTATION_NAMES, f.value, 2, &rc);
      if (rc)
        return rc;
      if (s != GP_TP_NONE)
        snprintf(name, sizeof(name), "%s", gp__tp_str(&imp->db->strings, s));
    }
  }
  if (rc < 0)
    return gp__tp_corrupt(imp, &r, "DebugAnnotation");
  char path[512];
  snprintf(path, sizeof(path), "%s.%s", prefix, name);
  return annotation_value(imp, gen, parent, pf, path, depth, b);
}

/* ------------------------------------------------------------------ */
/* GPU correlations                                                      */

/* One id of a GpuCorrelation as the arg Perfetto's importer makes of it
 * (the extension read through its descriptor):
 * gpu_correlation.<field>[i], unsigned. */
static int correlation_arg(gp__tp_importer *imp, gp__tp_argb *b, bool wait,
                           uint32_t i, uint64_t v) {
  const char *field = wait
                          ? "gpu_correlation.render_stage_wait_event_ids"
                          : "gpu_correlation.render_stage_submission_event_ids";
  char buf[96];
  int n = snprintf(buf, sizeof(buf), "%s[%u]", field, i);
  uint32_t k, fk;
  int rc;
  if ((rc = gp__tp_intern(imp, buf, (size_t)n, &k)) ||
      (rc = key(imp, field, &fk)))
    return rc;
  gp__tp_argb_add(b, k, fk, GP_TP_ARG_UINT, (int64_t)v);
  return 0;
}

/* The ids of the GpuCorrelations (extension 3000) of an event as args. */
static int correlation_args(gp__tp_importer *imp, const gp__tp_pkt *p,
                            gp__tp_argb *b) {
  gp__pb_reader r, sub;
  gp__pb_field f, g;
  uint32_t nsub = 0, nwait = 0;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc, rc2 = 0;
  while (!rc2 && (rc = gp__tp_pb_next(&r, &f)) > 0) {
    if (f.id != 3000 || f.wire_type != GP_PB_LEN)
      continue;
    gp__pb_reader_sub(&sub, &r, &f);
    while (!rc2 && (rc2 = gp__tp_pb_next(&sub, &g)) > 0) {
      rc2 = 0;
      if (g.id != 1 && g.id != 2)
        continue;
      bool wait = g.id == 2;
      uint32_t *i = wait ? &nwait : &nsub;
      if (g.wire_type == GP_PB_VARINT) {
        rc2 = correlation_arg(imp, b, wait, (*i)++, g.value);
      } else if (g.wire_type == GP_PB_LEN) { /* packed */
        const uint8_t *q = g.data, *end = g.data + g.size;
        uint64_t v;
        size_t k;
        while (!rc2 && q < end && (k = gp__pb_get_varint(q, end, &v)) > 0) {
          q += k;
          rc2 = correlation_arg(imp, b, wait, (*i)++, v);
        }
      }
    }
    if (rc2 < 0)
      return 0; /* corrupt: parse_track.c's slice_links() says so */
  }
  return rc2 > 0 ? 0 : rc2;
}

/* ------------------------------------------------------------------ */
/* The slice's arg set                                                  */

/* See import.h. */
int gp__tp_track_event_args(gp__tp_importer *imp, const gp__tp_pkt *p,
                            const gp__tp_te_args *a, uint32_t *set) {
  *set = GP_TP_NONE;
  if (!a->annotations && !a->has_api && !a->gpu_corr &&
      a->passthrough == GP_TP_NONE)
    return 0;
  gp__tp_argb *b = malloc(sizeof(*b));
  if (!b)
    return nomem(imp);
  b->n = 0;
  b->overflow = false;
  gp__pb_reader r;
  gp__pb_field f;
  gp__tp_reader_at(imp, &r, p->data_off, p->data_len);
  int rc;
  while ((rc = gp__tp_pb_next(&r, &f)) > 0)
    if (f.id == 4 && f.wire_type == GP_PB_LEN) {
      int rc2 = annotation(imp, p->gen, &r, &f, "debug", 0, b);
      if (rc2) {
        free(b);
        return rc2;
      }
    }
  if (rc < 0) {
    free(b);
    return gp__tp_corrupt(imp, &r, "TrackEvent");
  }
  if (a->has_api) {
    static const char *const apis[] = {"GPU_API_UNDEFINED", "GPU_API_OPEN_GL",
                                       "GPU_API_VULKAN",    "GPU_API_OPEN_CL",
                                       "GPU_API_CUDA",      "GPU_API_HIP"};
    uint32_t k, v;
    if ((rc = key(imp, "gpu_api", &k)) ||
        (rc = key(imp, a->api < 6 ? apis[a->api] : "GPU_API_UNDEFINED", &v))) {
      free(b);
      return rc;
    }
    gp__tp_argb_str(b, k, v);
  }
  if (a->gpu_corr && (rc = correlation_args(imp, p, b))) {
    free(b);
    return rc;
  }
  if (a->passthrough != GP_TP_NONE) {
    uint32_t k;
    if ((rc = key(imp, "legacy_event.passthrough_utid", &k))) {
      free(b);
      return rc;
    }
    gp__tp_argb_add(b, k, k, GP_TP_ARG_UINT, a->passthrough);
  }
  rc = gp__tp_argset_commit(imp->db, b, set) ? nomem(imp) : 0;
  free(b);
  return rc;
}
