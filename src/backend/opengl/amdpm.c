/*
 * amdpm.c - the driver's counters through GL_AMD_performance_monitor.
 *
 * Where a context has the extension (Mesa implements it over the
 * driver's own counters: V3D's perfmons on a Raspberry Pi, freedreno's,
 * radeonsi's, nouveau's), its groups and counters are read once, when
 * the context is first made current, and join the device's catalog
 * (stats.c): each counter under its own name, in a custom group named
 * after the extension's group, its type and range from
 * GetPerfMonitorCounterInfoAMD. While a session selects some of them, a
 * monitor is begun at each frame's first work and ended at its swap,
 * with at most the group's maxActiveCounters of each group selected
 * (the others are left out, and said so once). Results are read when
 * GL_PERFMON_RESULT_AVAILABLE_AMD says they are there, never waiting,
 * and parsed from the extension's (group, counter, value) layout.
 *
 * It is one of the two providers of gp__gl_pm_ops (glInt.h), the one a
 * context uses where it has the extension, even if it also has
 * GL_INTEL_performance_query (intelpq.c): a monitor counts just the
 * counters asked for, where an Intel query counts all of its set.
 *
 * No driver on the machines this was written on has the extension; the
 * tests run it against a test double over llvmpipe (tests/gl/).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glInt.h"

#define COUNTER_TYPE_AMD 0x8BC0
#define COUNTER_RANGE_AMD 0x8BC1
#define UNSIGNED_INT64_AMD 0x8BC2
#define PERCENTAGE_AMD 0x8BC3
#define PERFMON_RESULT_AVAILABLE_AMD 0x8BC4
#define PERFMON_RESULT_SIZE_AMD 0x8BC5
#define PERFMON_RESULT_AMD 0x8BC6

#define MAX_COUNTERS 1024
#define POOL 96

typedef struct amd_counter {
  GLuint group, counter;
  GLenum type;
  uint32_t gi; /* index of its group */
  const char *name;
  double max;
} amd_counter;

typedef struct gp__gl_amdpm {
  uint32_t n, ngroups;
  amd_counter *ctr;
  GLuint *groups;
  GLint *max_active;
  const char **group_names;
  uint32_t *sel; /* extension indices selected */
  uint32_t nsel, cap_sel;
  uint32_t gen; /* of the selection */
  GLuint pool[POOL];
  uint32_t pool_gen[POOL];
  uint32_t npool;
} gp__gl_amdpm;

static char *str_of(gp__gl_ctx *c, GLuint group, GLint counter) {
  GLsizei len = 0;
  if (counter < 0)
    c->fn.GetPerfMonitorGroupStringAMD(group, 0, &len, NULL);
  else
    c->fn.GetPerfMonitorCounterStringAMD(group, (GLuint)counter, 0, &len, NULL);
  if (len <= 0 || len > 4096)
    return strdup("?");
  char *s = calloc((size_t)len + 1, 1);
  if (!s)
    return NULL;
  if (counter < 0)
    c->fn.GetPerfMonitorGroupStringAMD(group, len + 1, NULL, s);
  else
    c->fn.GetPerfMonitorCounterStringAMD(group, (GLuint)counter, len + 1, NULL,
                                         s);
  return s;
}

static const gp__gl_pm_ops amdpm_ops;
static void amdpm_drop(gp__gl_ctx *c, gp__gl_frame *f);

/* See glInt.h. */
void gp__gl_amdpm_init(gp__gl_ctx *c) {
  gp__gl_fns *f = &c->fn;
#define AMD(name) f->name = (__typeof__(f->name))gp__gl_proc("gl" #name, c->egl)
  AMD(GetPerfMonitorGroupsAMD);
  AMD(GetPerfMonitorCountersAMD);
  AMD(GetPerfMonitorGroupStringAMD);
  AMD(GetPerfMonitorCounterStringAMD);
  AMD(GetPerfMonitorCounterInfoAMD);
  AMD(GenPerfMonitorsAMD);
  AMD(DeletePerfMonitorsAMD);
  AMD(SelectPerfMonitorCountersAMD);
  AMD(BeginPerfMonitorAMD);
  AMD(EndPerfMonitorAMD);
  AMD(GetPerfMonitorCounterDataAMD);
#undef AMD
  if (!f->GetPerfMonitorGroupsAMD || !f->GetPerfMonitorCountersAMD ||
      !f->GetPerfMonitorGroupStringAMD || !f->GetPerfMonitorCounterStringAMD ||
      !f->GetPerfMonitorCounterInfoAMD || !f->GenPerfMonitorsAMD ||
      !f->DeletePerfMonitorsAMD || !f->SelectPerfMonitorCountersAMD ||
      !f->BeginPerfMonitorAMD || !f->EndPerfMonitorAMD ||
      !f->GetPerfMonitorCounterDataAMD)
    return;
  GLint ng = 0;
  f->GetPerfMonitorGroupsAMD(&ng, 0, NULL);
  if (ng <= 0 || ng > 4096)
    return;
  gp__gl_amdpm *a = calloc(1, sizeof(*a));
  GLuint *groups = calloc((size_t)ng, sizeof(*groups));
  GLint *max_active = calloc((size_t)ng, sizeof(*max_active));
  const char **gnames = calloc((size_t)ng, sizeof(*gnames));
  amd_counter *ctr = calloc(MAX_COUNTERS, sizeof(*ctr));
  if (!a || !groups || !max_active || !gnames || !ctr)
    goto fail;
  f->GetPerfMonitorGroupsAMD(&ng, ng, groups);
  uint32_t n = 0;
  for (GLint g = 0; g < ng; g++) {
    GLint nc = 0, maxa = 0;
    f->GetPerfMonitorCountersAMD(groups[g], &nc, &maxa, 0, NULL);
    gnames[g] = str_of(c, groups[g], -1);
    max_active[g] = maxa;
    if (nc <= 0 || nc > MAX_COUNTERS)
      continue;
    GLuint *ids = calloc((size_t)nc, sizeof(*ids));
    if (!ids)
      goto fail;
    f->GetPerfMonitorCountersAMD(groups[g], &nc, &maxa, nc, ids);
    for (GLint k = 0; k < nc && n < MAX_COUNTERS; k++, n++) {
      amd_counter *x = &ctr[n];
      x->group = groups[g];
      x->counter = ids[k];
      x->gi = (uint32_t)g;
      x->name = str_of(c, groups[g], (GLint)ids[k]);
      GLenum type = 0;
      f->GetPerfMonitorCounterInfoAMD(groups[g], ids[k], COUNTER_TYPE_AMD,
                                      &type);
      x->type = type;
      union {
        GLuint u[2];
        GLfloat fl[2];
        uint64_t u64[2];
      } range;
      memset(&range, 0, sizeof(range));
      f->GetPerfMonitorCounterInfoAMD(groups[g], ids[k], COUNTER_RANGE_AMD,
                                      &range);
      x->max = type == UNSIGNED_INT64_AMD ? (double)range.u64[1]
               : type == GL_FLOAT || type == PERCENTAGE_AMD
                   ? (double)range.fl[1]
                   : (double)range.u[1];
    }
    free(ids);
  }
  if (!n)
    goto fail;
  a->n = n;
  a->ngroups = (uint32_t)ng;
  a->ctr = ctr;
  a->groups = groups;
  a->max_active = max_active;
  a->group_names = gnames;
  c->amdpm = a;
  c->pm = &amdpm_ops;
  return;
fail:
  free(a);
  free(groups);
  free(max_active);
  free(gnames);
  free(ctr);
}

/* gp__gl_pm_ops.count. */
static uint32_t amdpm_count(const gp__gl_ctx *c) {
  return c->amdpm ? c->amdpm->n : 0;
}

/* gp__gl_pm_ops.defs. */
static void amdpm_defs(const gp__gl_ctx *c, gp__counter_def *defs,
                       uint32_t id_base, uint32_t group_base,
                       gp_counter_group_info *groups, uint32_t *ngroups) {
  const gp__gl_amdpm *a = c->amdpm;
  *ngroups = 0;
  if (!a)
    return;
  for (uint32_t g = 0; g < a->ngroups; g++)
    groups[(*ngroups)++] = (gp_counter_group_info){
        .id = group_base + g,
        .name = a->group_names[g] ? a->group_names[g] : "?",
        .description = "a group of GL_AMD_performance_monitor"};
  for (uint32_t k = 0; k < a->n; k++) {
    const amd_counter *x = &a->ctr[k];
    gp_counter_info *i = &defs[k].info;
    i->id = id_base + k;
    i->name = x->name ? x->name : "?";
    i->description = "a counter of the driver, per frame of this program, "
                     "through GL_AMD_performance_monitor";
    i->category = a->group_names[x->gi] ? a->group_names[x->gi] : "";
    i->type = x->type == PERCENTAGE_AMD ? GP_COUNTER_TYPE_PERCENT
              : x->type == GL_FLOAT     ? GP_COUNTER_TYPE_DOUBLE
                                        : GP_COUNTER_TYPE_INT64;
    if (x->type == PERCENTAGE_AMD) {
      i->num_numerator_units = 1;
      i->numerator_units[0] = GP_UNIT_PERCENT;
    }
    i->num_groups = 1;
    i->groups[0] = group_base + x->gi;
    i->peak_value = x->max > 0 && isfinite(x->max) ? x->max : 0;
    defs[k].combine = GP__SUM;
    defs[k].sampled = GP__SAMPLED_INSTRUMENTED;
  }
}

/* gp__gl_pm_ops.select. */
static void amdpm_select(gp__gl_ctx *c, const uint32_t *idx, uint32_t n) {
  gp__gl_amdpm *a = c->amdpm;
  if (!a)
    return;
  bool same = n == a->nsel;
  for (uint32_t k = 0; k < n && same; k++)
    same = a->sel[k] == idx[k];
  if (same)
    return;
  if (n > a->cap_sel) {
    uint32_t *s = realloc(a->sel, n * sizeof(*s));
    if (!s)
      return;
    a->sel = s;
    a->cap_sel = n;
  }
  /* At most maxActiveCounters of each group. */
  uint32_t kept = 0;
  bool over = false;
  for (uint32_t k = 0; k < n; k++) {
    if (idx[k] >= a->n)
      continue;
    uint32_t gi = a->ctr[idx[k]].gi, in_group = 0;
    for (uint32_t j = 0; j < kept; j++)
      in_group += a->ctr[a->sel[j]].gi == gi;
    if (a->max_active[gi] > 0 && in_group >= (uint32_t)a->max_active[gi]) {
      over = true;
      continue;
    }
    a->sel[kept++] = idx[k];
  }
  a->nsel = kept;
  a->gen++;
  if (over) {
    static atomic_bool warned;
    gp__gl_warn_once(&warned,
                     "gpuperf: more GL_AMD_performance_monitor counters of one "
                     "group were asked for than the driver can count at once "
                     "(maxActiveCounters): the ones past that are not "
                     "recorded");
  }
}

/* A monitor with the current selection. */
static GLuint take_monitor(gp__gl_ctx *c) {
  gp__gl_amdpm *a = c->amdpm;
  while (a->npool) {
    a->npool--;
    GLuint m = a->pool[a->npool];
    if (a->pool_gen[a->npool] == a->gen)
      return m;
    c->fn.DeletePerfMonitorsAMD(1, &m);
  }
  GLuint m = 0;
  c->fn.GenPerfMonitorsAMD(1, &m);
  if (!m)
    return 0;
  for (uint32_t k = 0; k < a->nsel;) {
    /* The run of selected counters of one group, in one call. */
    GLuint group = a->ctr[a->sel[k]].group, list[64];
    GLint nl = 0;
    uint32_t j = k;
    for (; j < a->nsel && nl < 64 && a->ctr[a->sel[j]].group == group; j++)
      list[nl++] = a->ctr[a->sel[j]].counter;
    c->fn.SelectPerfMonitorCountersAMD(m, GL_TRUE, group, nl, list);
    k = j;
  }
  return m;
}

static void give_monitor(gp__gl_ctx *c, GLuint m, uint32_t gen) {
  gp__gl_amdpm *a = c->amdpm;
  if (!m || !a)
    return;
  if (a->npool < POOL) {
    a->pool_gen[a->npool] = gen;
    a->pool[a->npool++] = m;
  } else {
    c->fn.DeletePerfMonitorsAMD(1, &m);
  }
}

/* gp__gl_pm_ops.begin. */
static void amdpm_begin(gp__gl_ctx *c, gp__gl_frame *f) {
  if (!c->amdpm || !c->amdpm->nsel)
    return;
  f->monitor = take_monitor(c);
  if (f->monitor)
    c->fn.BeginPerfMonitorAMD(f->monitor);
  f->monitor_gen = c->amdpm->gen;
}

/* gp__gl_pm_ops.end. */
static void amdpm_end(gp__gl_ctx *c, gp__gl_frame *f) {
  if (f->monitor)
    c->fn.EndPerfMonitorAMD(f->monitor);
}

/* gp__gl_pm_ops.ready. */
static bool amdpm_ready(gp__gl_ctx *c, const gp__gl_frame *f) {
  if (!f->monitor)
    return true;
  GLuint avail = 0;
  c->fn.GetPerfMonitorCounterDataAMD(f->monitor, PERFMON_RESULT_AVAILABLE_AMD,
                                     sizeof(avail), &avail, NULL);
  return avail != 0;
}

/* gp__gl_pm_ops.read. */
static bool amdpm_read(gp__gl_ctx *c, gp__gl_frame *f, double *values,
                       uint32_t *idx, uint32_t *n) {
  gp__gl_amdpm *a = c->amdpm;
  uint32_t cap = *n;
  *n = 0;
  if (!f->monitor || !a)
    return false;
  if (!amdpm_ready(c, f)) { /* a forced read: never waits on it */
    amdpm_drop(c, f);
    gp__gl_core->activity_add_drops(GP_ACTIVITY_KIND_COUNTER, GP_DROP_SOURCE,
                                    c->context_id, 1, 1);
    return false;
  }
  GLuint size = 0;
  c->fn.GetPerfMonitorCounterDataAMD(f->monitor, PERFMON_RESULT_SIZE_AMD,
                                     sizeof(size), &size, NULL);
  GLuint buf[1024];
  if (size > sizeof(buf))
    size = sizeof(buf);
  GLint written = 0;
  if (size)
    c->fn.GetPerfMonitorCounterDataAMD(f->monitor, PERFMON_RESULT_AMD,
                                       (GLsizei)size, buf, &written);
  uint32_t words = written > 0 ? (uint32_t)written / 4 : 0;
  for (uint32_t w = 0; w + 2 <= words;) {
    GLuint group = buf[w], counter = buf[w + 1];
    w += 2;
    /* Which of ours, for its type (and so its size). */
    uint32_t k = 0;
    while (k < a->n &&
           (a->ctr[k].group != group || a->ctr[k].counter != counter))
      k++;
    if (k == a->n)
      break; /* unknown: its size cannot be known */
    double v;
    if (a->ctr[k].type == UNSIGNED_INT64_AMD) {
      if (w + 2 > words)
        break;
      uint64_t u;
      memcpy(&u, &buf[w], sizeof(u));
      v = (double)u;
      w += 2;
    } else if (w + 1 <= words) {
      if (a->ctr[k].type == GL_FLOAT || a->ctr[k].type == PERCENTAGE_AMD) {
        GLfloat fl;
        memcpy(&fl, &buf[w], sizeof(fl));
        v = fl;
      } else {
        v = buf[w];
      }
      w += 1;
    } else {
      break;
    }
    if (*n < cap) {
      values[*n] = v;
      idx[(*n)++] = k;
    }
  }
  give_monitor(c, f->monitor, f->monitor_gen);
  f->monitor = 0;
  return true;
}

/* gp__gl_pm_ops.drop. */
static void amdpm_drop(gp__gl_ctx *c, gp__gl_frame *f) {
  if (f->monitor)
    give_monitor(c, f->monitor, f->monitor_gen);
  f->monitor = 0;
}

/* gp__gl_pm_ops.fini. */
static void amdpm_fini(gp__gl_ctx *c) {
  gp__gl_amdpm *a = c->amdpm;
  if (!a)
    return;
  if (a->npool)
    c->fn.DeletePerfMonitorsAMD((GLsizei)a->npool, a->pool);
  a->npool = 0;
}

static const gp__gl_pm_ops amdpm_ops = {
    .ext = "GL_AMD_performance_monitor",
    .unit = "the driver's counters, one monitor per frame",
    .count = amdpm_count,
    .defs = amdpm_defs,
    .select = amdpm_select,
    .begin = amdpm_begin,
    .end = amdpm_end,
    .ready = amdpm_ready,
    .read = amdpm_read,
    .drop = amdpm_drop,
    .fini = amdpm_fini};
