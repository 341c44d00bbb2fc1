/*
 * amdpm_double.c - a TEST DOUBLE of GL_AMD_performance_monitor: an
 * LD_PRELOAD library that exposes the extension over a desktop GL driver
 * that lacks it (here Mesa's llvmpipe), so that code which forwards the
 * extension (libgpuperf-gl.so) can be tested on this machine.
 *
 *   LD_PRELOAD=build/tests/libgl-amdpm-double.so PROGRAM
 *
 * It is not a driver and measures no GPU counter. No real driver with the
 * extension (Mesa's V3D, radeonsi, freedreno, AMD's own) has been run
 * here; what a client sees of the API is written from the extension's
 * specification (Khronos registry, AMD/AMD_performance_monitor.txt), and
 * the values are those of the model below.
 *
 * What it adds. "GL_AMD_performance_monitor" in glGetString(GL_EXTENSIONS)
 * (compatibility contexts) and as the last of glGetStringi(GL_EXTENSIONS,
 * i) / glGetIntegerv(GL_NUM_EXTENSIONS) (core and compatibility), for
 * desktop GL contexts only (not OpenGL ES). The 11 entry points are
 * exported and are returned by the wrapped glXGetProcAddress,
 * glXGetProcAddressARB and eglGetProcAddress, as are its glGetString,
 * glGetStringi, glGetIntegerv, glGetError, glBeginQuery, glEndQuery and
 * glDeleteQueries. Each wrapper chains to the next definition
 * (dlsym(RTLD_NEXT)), so another interposer before or after it in
 * LD_PRELOAD still sees every call; names it does not own get what the
 * next glXGetProcAddress(ARB)/eglGetProcAddress returns. Its errors are
 * returned by glGetError before the driver's.
 *
 * Groups and counters. The 87 V3D 4.2 counters of
 * src/counters/v3dtables.c (the kernel's table, the V3D seed's
 * names), one group per category in order of first appearance (FEP 0,
 * TLB 1, PTB 2, QPU 3, TMU 4, VPM 5, CLE 6, L2T 7, CORE 8, AXI 9, PSE 10,
 * GMP 11). A counter's id is its V3D hardware index (0..86), valid only
 * in its own group. Every counter is GL_UNSIGNED_INT64_AMD with the
 * range [0, 2^64-1]; a group's maxActiveCounters is min(its size, 32),
 * and Begin fails (INVALID_OPERATION) on a monitor with more than 32
 * counters selected in all: V3D's 32 counters at once.
 *
 * The model. Between glBeginPerfMonitorAMD and glEndPerfMonitorAMD the
 * double runs the driver's own queries (only those the selected counters
 * need) and reports, for the work the driver saw in that interval:
 *
 *   PTB-primitives-binned                 GL_PRIMITIVES_SUBMITTED_ARB
 *   FEP-valid-primitives-rendered-pixels  GL_CLIPPING_OUTPUT_PRIMITIVES_ARB
 *   TLB-quads-passing-z-and-stencil-test  GL_FRAGMENT_SHADER_INVOCATIONS_ARB
 *                                         / 4 (2x2 quads; the double
 *                                         assumes every shaded fragment
 *                                         passes and is written)
 *   TLB-quads-written-to-color-buffer     the same
 *   L2T-CLE-reads                         GL_VERTICES_SUBMITTED_ARB (one
 *                                         control-list read per vertex)
 *   cycle-count                           GL_TIMESTAMP difference (ns) x
 *                                         0.5: V3D's 500 MHz on a Pi 4
 *
 * The other 81 counters cannot be modelled from what GL reports and
 * always read 0. Note that llvmpipe counts fragment shader invocations
 * per 4x4 block that a triangle touches, not per covered pixel: the quad
 * counters equal covered pixels / 4 only where the covered area is made
 * of whole 4x4 blocks (a scissor box aligned to 4 does it).
 *
 * Results. GL_PERFMON_RESULT_AVAILABLE_AMD asks each underlying query
 * GL_QUERY_RESULT_AVAILABLE and never waits. GL_PERFMON_RESULT_SIZE_AMD
 * is 16 bytes per selected counter once the monitor has ended (0 before,
 * and after a new selection). GL_PERFMON_RESULT_AMD writes (group,
 * counter, value) as two GLuint and one 64-bit value per counter, by
 * group then counter id, whole entries up to dataSize; like GL's own
 * GL_QUERY_RESULT it waits for the driver when read before available.
 *
 * The program's own queries. GL allows one active query per target, and
 * a real driver's monitors use no GL query at all, so the double lets
 * the program's queries of the targets it uses go first: it wraps
 * glBeginQuery, glEndQuery and glDeleteQueries (exported and through
 * GetProcAddress). A program's query begun inside an active monitor
 * ends the monitor's own query of that target; the program's query then
 * counts for both (the double reads its result too, before the program
 * reuses or deletes it, waiting for it if need be), and the monitor's
 * own resumes at the program's glEndQuery. So a program (or
 * libgpuperf-gl.so, placed before the double in LD_PRELOAD) may take
 * per-frame pipeline statistics inside monitors. Two cases cannot be
 * counted and are refused: Begin while the program holds a target the
 * monitor needs (INVALID_OPERATION: the specification's "unable to
 * begin monitoring"), and End while a program's query begun inside the
 * monitor is still active (INVALID_OPERATION at End, and the monitor
 * has no result rather than a wrong one). glEndQuery of a target that
 * only the monitor holds is the program's INVALID_OPERATION. Queries
 * begun around the wrappers (glBeginQueryIndexed, glBeginQueryARB) are
 * not seen.
 *
 * Built with GLD_INTEL (amdpm.h), these monitors serve the
 * GL_INTEL_performance_query double (intelpq_double.c) instead, which
 * may begin several at once (gld_begin_monitor): ones that need none of
 * the same driver query targets and select at most 32 counters in all.
 * Through this extension's own glBeginPerfMonitorAMD, one at a time.
 *
 * Limits, chosen where the specification says nothing: monitor names are
 * process-wide (not per context) and must be used in the context that
 * began them; SelectPerfMonitorCountersAMD on the active monitor and an
 * End of a monitor other than the active one are INVALID_OPERATION;
 * Begin/End/GetPerfMonitorCounterData of a name that is not a monitor are
 * INVALID_VALUE. Loaders that dlopen libGL and dlsym core functions
 * (libepoxy) bypass the wrapped glGetString, glGetStringi,
 * glGetIntegerv, glGetError and query functions.
 */
#include "amdpm.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counters/countersInt.h"

#define NUM_COUNTERS 87
#define MAX_ACTIVE 32 /* V3D: counters at once */
#define MAX_GROUPS 16

extern const gp__counter_def gp__v3d42_counters[NUM_COUNTERS];

/* ---- The catalog: groups by category, counters by hardware index ---- */

typedef struct group {
  const char *name;
  uint32_t num;
  GLuint counters[NUM_COUNTERS];
} group;

static group groups[MAX_GROUPS];
static uint32_t num_groups;
static uint8_t group_of[NUM_COUNTERS];
static pthread_once_t catalog_once = PTHREAD_ONCE_INIT;

/* The modelled counters: what source each reads, times num / den. */
enum { SRC_PRIMS, SRC_CLIPPED, SRC_FRAGS, SRC_VERTS, SRC_TIME, NUM_SRC };
static const GLenum src_target[NUM_SRC - 1] = {
    GL_PRIMITIVES_SUBMITTED_ARB, GL_CLIPPING_OUTPUT_PRIMITIVES_ARB,
    GL_FRAGMENT_SHADER_INVOCATIONS_ARB, GL_VERTICES_SUBMITTED_ARB};

typedef struct model {
  const char *name;
  int src;
  uint32_t num, den;
} model;

static const model models[] = {
    {"PTB-primitives-binned", SRC_PRIMS, 1, 1},
    {"FEP-valid-primitives-rendered-pixels", SRC_CLIPPED, 1, 1},
    {"TLB-quads-passing-z-and-stencil-test", SRC_FRAGS, 1, 4},
    {"TLB-quads-written-to-color-buffer", SRC_FRAGS, 1, 4},
    {"L2T-CLE-reads", SRC_VERTS, 1, 1},
    {"cycle-count", SRC_TIME, 1, 2},
};
#define NUM_MODELS (sizeof(models) / sizeof(models[0]))

static int8_t model_of[NUM_COUNTERS]; /* index into models, or -1 */

static void catalog_init(void) {
  for (uint32_t i = 0; i < NUM_COUNTERS; i++) {
    const gp_counter_info *c = &gp__v3d42_counters[i].info;
    uint32_t g = 0;
    while (g < num_groups && strcmp(groups[g].name, c->category) != 0)
      g++;
    if (g == num_groups) {
      if (num_groups == MAX_GROUPS)
        abort(); /* the table has grown: raise MAX_GROUPS */
      groups[num_groups++].name = c->category;
    }
    groups[g].counters[groups[g].num++] = i;
    group_of[i] = (uint8_t)g;
    model_of[i] = -1;
    for (size_t m = 0; m < NUM_MODELS; m++)
      if (strcmp(models[m].name, c->name) == 0)
        model_of[i] = (int8_t)m;
  }
}

static void catalog(void) {
  pthread_once(&catalog_once, catalog_init);
}

static int valid_group(GLuint g) {
  return g < num_groups;
}
static int valid_counter(GLuint g, GLuint c) {
  return valid_group(g) && c < NUM_COUNTERS && group_of[c] == g;
}
static GLint max_active(GLuint g) {
  return groups[g].num < MAX_ACTIVE ? (GLint)groups[g].num : MAX_ACTIVE;
}

/* ---- Monitors ---- */

enum { M_IDLE, M_ACTIVE, M_ENDED };
#define NUM_TARGETS SRC_TIME /* the sources that are query targets */

/* A query whose count is part of a monitor's: the double's own, or the
 * program's own query of the same target, begun while the monitor was
 * active (GL allows one active query per target). */
typedef struct seg {
  GLuint q;
  uint8_t own;  /* ours (deleted with the monitor); else borrowed */
  uint8_t have; /* v read */
  uint64_t v;
} seg;

typedef struct chain {
  seg *s;
  uint32_t n, cap;
} chain;

typedef struct monitor {
  uint8_t live;
  uint8_t state;
  uint8_t have_values;
  GLenum lost; /* why the active monitor cannot give a result, or 0 */
  uint32_t nsel;
  uint64_t sel[2]; /* bit i: hardware counter i selected */
  uint32_t needs;  /* sources begun at the last Begin (1 << SRC_*) */
  chain c[NUM_TARGETS];
  GLuint stamp[2]; /* GL_TIMESTAMP queries at Begin and End */
  uint64_t sum[NUM_TARGETS], t[2];
} monitor;

static pthread_mutex_t mon_lock = PTHREAD_MUTEX_INITIALIZER;
static monitor *mons; /* mons[id - 1] */
static size_t num_mons, cap_mons;
static GLuint holder[NUM_TARGETS]; /* the active monitor counting each */
static uint32_t num_active;        /* monitors active */
static uint32_t active_counters;   /* counters they have selected */
static GLuint app_q[NUM_TARGETS];  /* the program's active query per target */
static size_t unread_borrowed;     /* borrowed segments not read yet */

static monitor *lookup(GLuint id) {
  return id >= 1 && id <= num_mons && mons[id - 1].live ? &mons[id - 1] : NULL;
}

static int selected(const monitor *m, uint32_t c) {
  return (m->sel[c / 64] >> (c % 64)) & 1;
}

static uint32_t needs_of(const monitor *m) {
  uint32_t needs = 0;
  for (uint32_t c = 0; c < NUM_COUNTERS; c++)
    if (selected(m, c) && model_of[c] >= 0)
      needs |= 1u << models[model_of[c]].src;
  return needs;
}

/* ---- Query segments ---- */

/* Appends a segment to c; 0 when out of memory. */
static int push_seg(chain *c, GLuint q, int own) {
  if (c->n == c->cap) {
    uint32_t cap = c->cap ? 2 * c->cap : 4;
    seg *grown = cap > c->cap ? realloc(c->s, cap * sizeof(seg)) : NULL;
    if (!grown)
      return 0;
    c->s = grown, c->cap = cap;
  }
  c->s[c->n++] = (seg){.q = q, .own = (uint8_t)own};
  return 1;
}

/* Opens a segment of ours on target s of the active monitor m. */
static void open_own(monitor *m, int s) {
  GLuint q = 0;
  gld_real.GenQueries(1, &q);
  if (!push_seg(&m->c[s], q, 1)) {
    gld_real.DeleteQueries(1, &q);
    m->lost = GL_OUT_OF_MEMORY;
    return;
  }
  gld_real.BeginQuery(src_target[s], q);
}

/* Forgets m's segments (its own queries are deleted). */
static void drop_segs(monitor *m) {
  for (int s = 0; s < NUM_TARGETS; s++) {
    for (uint32_t i = 0; i < m->c[s].n; i++) {
      seg *g = &m->c[s].s[i];
      if (g->own)
        gld_real.DeleteQueries(1, &g->q);
      else if (!g->have)
        unread_borrowed--;
    }
    m->c[s].n = 0;
  }
  m->have_values = 0;
}

/* Reads segment g's value, waiting for it if need be. */
static void read_seg(seg *g) {
  GLuint64 v = 0;
  gld_real.GetQueryObjectui64v(g->q, GL_QUERY_RESULT, &v);
  g->v = v;
  g->have = 1;
  if (!g->own)
    unread_borrowed--;
}

/* Before the program reuses or deletes its queries: reads every
 * borrowed segment not read yet that is query q (or all, for q 0), so
 * that a monitor keeps the count it had. Linear in the live monitors'
 * segments, and only while some are unread. */
static void settle_borrowed(GLuint q) {
  for (size_t i = 0; unread_borrowed && i < num_mons; i++)
    for (int s = 0; mons[i].live && s < NUM_TARGETS; s++)
      for (uint32_t k = 0; k < mons[i].c[s].n; k++) {
        seg *g = &mons[i].c[s].s[k];
        if (!g->own && !g->have && (q == 0 || g->q == q) && g->q != app_q[s])
          read_seg(g);
      }
}

static int target_index(GLenum target) {
  for (int s = 0; s < NUM_TARGETS; s++)
    if (src_target[s] == target)
      return s;
  return -1;
}

/* The active monitor if it counts target s, else NULL. */
static monitor *counting(int s) {
  monitor *m = holder[s] ? lookup(holder[s]) : NULL;
  return m && (m->needs & (1u << s)) ? m : NULL;
}

/* The program's query of a target the active monitor counts: the
 * monitor's own query yields to it and its count joins the monitor's,
 * and the monitor's resumes at the program's glEndQuery. */
EXPORT void GLAPIENTRY glBeginQuery(GLenum target, GLuint id) {
  int s = target_index(target);
  if (!gld_real_ready())
    return;
  if (s < 0) {
    gld_real.BeginQuery(target, id);
    return;
  }
  pthread_mutex_lock(&mon_lock);
  settle_borrowed(id);
  monitor *m = counting(s);
  int ours = m && app_q[s] == 0; /* our segment is open on the target */
  if (ours)
    gld_real.EndQuery(target);
  gld_real.BeginQuery(target, id);
  GLint cur = 0;
  gld_real.GetQueryiv(target, GL_CURRENT_QUERY, &cur);
  if (id != 0 && (GLuint)cur == id && ours) {
    app_q[s] = id;
    if (push_seg(&m->c[s], id, 0))
      unread_borrowed++;
    else
      m->lost = GL_OUT_OF_MEMORY;
  } else if (id != 0 && (GLuint)cur == id) {
    app_q[s] = id;
  } else if (ours) {
    open_own(m, s); /* the program's Begin failed: ours counts on */
  }
  pthread_mutex_unlock(&mon_lock);
}

EXPORT void GLAPIENTRY glEndQuery(GLenum target) {
  int s = target_index(target);
  if (!gld_real_ready())
    return;
  if (s < 0) {
    gld_real.EndQuery(target);
    return;
  }
  pthread_mutex_lock(&mon_lock);
  monitor *m = counting(s);
  if (m && app_q[s] == 0) {
    /* The active query is the monitor's: the program has none. */
    pthread_mutex_unlock(&mon_lock);
    gld_set_error(GL_INVALID_OPERATION);
    return;
  }
  gld_real.EndQuery(target);
  if (app_q[s]) {
    app_q[s] = 0;
    if (m)
      open_own(m, s);
  }
  pthread_mutex_unlock(&mon_lock);
}

/* Borrowed queries are read before the program deletes any query (this
 * may wait for them). */
EXPORT void GLAPIENTRY glDeleteQueries(GLsizei n, const GLuint *ids) {
  if (!gld_real_ready())
    return;
  pthread_mutex_lock(&mon_lock);
  if (n > 0 && ids && unread_borrowed)
    settle_borrowed(0);
  pthread_mutex_unlock(&mon_lock);
  gld_real.DeleteQueries(n, ids);
}

/* ---- Enumeration ---- */

/* Copies s into buf as the specification's string queries do. */
static void copy_string(const char *s, GLsizei bufSize, GLsizei *length,
                        GLchar *buf) {
  GLsizei n = (GLsizei)strlen(s);
  if (bufSize == 0 && !buf) {
    if (length)
      *length = n;
    return;
  }
  if (bufSize > 0 && buf) {
    if (n > bufSize - 1)
      n = bufSize - 1;
    memcpy(buf, s, (size_t)n);
    buf[n] = '\0';
  } else {
    n = 0;
  }
  if (length)
    *length = n;
}

EXPORT void GLAPIENTRY glGetPerfMonitorGroupsAMD(GLint *numGroups,
                                                 GLsizei groupsSize,
                                                 GLuint *out) {
  catalog();
  if (groupsSize < 0) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  if (numGroups)
    *numGroups = (GLint)num_groups;
  if (groupsSize > 0 && out)
    for (GLuint g = 0; g < num_groups && g < (GLuint)groupsSize; g++)
      out[g] = g;
}

EXPORT void GLAPIENTRY glGetPerfMonitorCountersAMD(GLuint grp,
                                                   GLint *numCounters,
                                                   GLint *maxActiveCounters,
                                                   GLsizei counterSize,
                                                   GLuint *counters) {
  catalog();
  if (!valid_group(grp) || counterSize < 0) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  if (numCounters)
    *numCounters = (GLint)groups[grp].num;
  if (maxActiveCounters)
    *maxActiveCounters = max_active(grp);
  if (counterSize > 0 && counters)
    for (uint32_t i = 0; i < groups[grp].num && i < (uint32_t)counterSize; i++)
      counters[i] = groups[grp].counters[i];
}

EXPORT void GLAPIENTRY glGetPerfMonitorGroupStringAMD(GLuint grp,
                                                      GLsizei bufSize,
                                                      GLsizei *length,
                                                      GLchar *groupString) {
  catalog();
  if (!valid_group(grp) || bufSize < 0) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  copy_string(groups[grp].name, bufSize, length, groupString);
}

EXPORT void GLAPIENTRY glGetPerfMonitorCounterStringAMD(GLuint grp,
                                                        GLuint counter,
                                                        GLsizei bufSize,
                                                        GLsizei *length,
                                                        GLchar *counterString) {
  catalog();
  if (!valid_counter(grp, counter) || bufSize < 0) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  copy_string(gp__v3d42_counters[counter].info.name, bufSize, length,
              counterString);
}

EXPORT void GLAPIENTRY glGetPerfMonitorCounterInfoAMD(GLuint grp,
                                                      GLuint counter,
                                                      GLenum pname,
                                                      void *data) {
  catalog();
  if (!valid_counter(grp, counter)) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  if (pname != GL_COUNTER_TYPE_AMD && pname != GL_COUNTER_RANGE_AMD) {
    gld_set_error(GL_INVALID_ENUM);
    return;
  }
  if (!data) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  if (pname == GL_COUNTER_TYPE_AMD) {
    GLenum type = GL_UNSIGNED_INT64_AMD;
    memcpy(data, &type, sizeof(type));
  } else {
    uint64_t range[2] = {0, UINT64_MAX}; /* in the counter's type */
    memcpy(data, range, sizeof(range));
  }
}

/* ---- Monitor objects ---- */

EXPORT void GLAPIENTRY glGenPerfMonitorsAMD(GLsizei n, GLuint *monitors) {
  if (n < 0 || (n > 0 && !monitors)) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  pthread_mutex_lock(&mon_lock);
  if (num_mons + (size_t)n > cap_mons) {
    size_t cap = cap_mons ? cap_mons : 16;
    while (cap < num_mons + (size_t)n)
      cap *= 2;
    monitor *grown = num_mons + (size_t)n <= UINT32_MAX
                         ? realloc(mons, cap * sizeof(*mons))
                         : NULL;
    if (!grown) { /* names left as they were */
      pthread_mutex_unlock(&mon_lock);
      gld_set_error(GL_OUT_OF_MEMORY);
      return;
    }
    mons = grown, cap_mons = cap;
  }
  for (GLsizei i = 0; i < n; i++) {
    memset(&mons[num_mons], 0, sizeof(*mons));
    mons[num_mons].live = 1;
    monitors[i] = (GLuint)++num_mons;
  }
  pthread_mutex_unlock(&mon_lock);
}

/* Ends the active monitor m's queries and makes it inactive; 0 when the
 * program holds a target m counts (its query began inside m and has not
 * ended). */
static int end_queries(monitor *m) {
  int whole = 1;
  for (int s = 0; s < NUM_TARGETS; s++)
    if (m->needs & (1u << s)) {
      if (app_q[s])
        whole = 0;
      else
        gld_real.EndQuery(src_target[s]);
      holder[s] = 0;
    }
  if (m->needs & (1u << SRC_TIME))
    gld_real.QueryCounter(m->stamp[1], GL_TIMESTAMP);
  num_active--;
  active_counters -= m->nsel;
  return whole;
}

EXPORT void GLAPIENTRY glDeletePerfMonitorsAMD(GLsizei n, GLuint *monitors) {
  if (n < 0 || (n > 0 && !monitors)) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  pthread_mutex_lock(&mon_lock);
  for (GLsizei i = 0; i < n; i++)
    if (!lookup(monitors[i])) {
      pthread_mutex_unlock(&mon_lock);
      gld_set_error(GL_INVALID_VALUE); /* and nothing is deleted */
      return;
    }
  for (GLsizei i = 0; i < n; i++) {
    monitor *m = lookup(monitors[i]);
    if (!m)
      continue; /* named twice in the list */
    if (gld_real_ready()) {
      if (m->state == M_ACTIVE)
        end_queries(m);
      drop_segs(m);
      for (int k = 0; k < 2; k++)
        if (m->stamp[k])
          gld_real.DeleteQueries(1, &m->stamp[k]);
    }
    for (int s = 0; s < NUM_TARGETS; s++)
      free(m->c[s].s);
    memset(m, 0, sizeof(*m));
  }
  pthread_mutex_unlock(&mon_lock);
}

EXPORT void GLAPIENTRY glSelectPerfMonitorCountersAMD(GLuint id,
                                                      GLboolean enable,
                                                      GLuint grp,
                                                      GLint numCounters,
                                                      GLuint *counterList) {
  catalog();
  pthread_mutex_lock(&mon_lock);
  monitor *m = lookup(id);
  GLenum err = GL_NO_ERROR;
  if (!m || !valid_group(grp) || numCounters < 0 ||
      (numCounters > 0 && !counterList))
    err = GL_INVALID_VALUE;
  for (GLint i = 0; !err && i < numCounters; i++)
    if (!valid_counter(grp, counterList[i]))
      err = GL_INVALID_VALUE;
  if (!err && m->state == M_ACTIVE)
    err = GL_INVALID_OPERATION;
  if (err) {
    pthread_mutex_unlock(&mon_lock);
    gld_set_error(err);
    return;
  }
  for (GLint i = 0; i < numCounters; i++) {
    uint32_t c = counterList[i];
    uint64_t bit = 1ull << (c % 64);
    if (enable && !selected(m, c))
      m->sel[c / 64] |= bit, m->nsel++;
    else if (!enable && selected(m, c))
      m->sel[c / 64] &= ~bit, m->nsel--;
  }
  if (m->state == M_ENDED && gld_real_ready())
    drop_segs(m);
  m->state = M_IDLE; /* earlier results are invalidated */
  m->have_values = 0;
  pthread_mutex_unlock(&mon_lock);
}

/* 1 if the context has the query kinds the needed sources use. */
static int context_has(uint32_t needs) {
  int want_stats = (needs & ~(1u << SRC_TIME)) != 0;
  int want_time = (needs & (1u << SRC_TIME)) != 0;
  GLint n = 0;
  gld_real.GetIntegerv(GL_NUM_EXTENSIONS, &n);
  for (GLint i = 0; i < n && (want_stats || want_time); i++) {
    const char *e = (const char *)gld_real.GetStringi(GL_EXTENSIONS, (GLuint)i);
    if (!e)
      break;
    if (!strcmp(e, "GL_ARB_pipeline_statistics_query"))
      want_stats = 0;
    if (!strcmp(e, "GL_ARB_timer_query"))
      want_time = 0;
  }
  return !want_stats && !want_time;
}

/* See amdpm.h. */
GLenum gld_begin_monitor(GLuint id, int nested) {
  catalog();
  pthread_mutex_lock(&mon_lock);
  monitor *m = lookup(id);
  GLenum err = GL_NO_ERROR;
  uint32_t needs = 0;
  if (!m)
    err = GL_INVALID_VALUE;
  else if ((num_active && !nested) || m->state == M_ACTIVE ||
           active_counters + m->nsel > MAX_ACTIVE || !gld_real_ready())
    err = GL_INVALID_OPERATION;
  else {
    needs = needs_of(m);
    if (needs && !context_has(needs))
      err = GL_INVALID_OPERATION;
    for (int s = 0; !err && s < NUM_TARGETS; s++) {
      GLint cur = 0;
      if (needs & (1u << s))
        gld_real.GetQueryiv(src_target[s], GL_CURRENT_QUERY, &cur);
      if (cur != 0 || ((needs & (1u << s)) && app_q[s]))
        err = GL_INVALID_OPERATION; /* the program holds that target */
    }
  }
  if (err) {
    pthread_mutex_unlock(&mon_lock);
    gld_set_error(err);
    return err;
  }
  drop_segs(m); /* the last session's */
  m->needs = needs;
  m->state = M_ACTIVE;
  m->lost = 0;
  num_active++;
  active_counters += m->nsel;
  for (int s = 0; s < NUM_TARGETS; s++)
    if (needs & (1u << s))
      holder[s] = id;
  if (needs & (1u << SRC_TIME)) {
    for (int k = 0; k < 2; k++)
      if (!m->stamp[k])
        gld_real.GenQueries(1, &m->stamp[k]);
    gld_real.QueryCounter(m->stamp[0], GL_TIMESTAMP);
  }
  for (int s = 0; s < NUM_TARGETS; s++)
    if (needs & (1u << s))
      open_own(m, s);
  pthread_mutex_unlock(&mon_lock);
  return GL_NO_ERROR;
}

EXPORT void GLAPIENTRY glBeginPerfMonitorAMD(GLuint id) {
  gld_begin_monitor(id, 0);
}

/* See amdpm.h. */
GLenum gld_end_monitor(GLuint id) {
  pthread_mutex_lock(&mon_lock);
  monitor *m = lookup(id);
  GLenum err = !m                     ? GL_INVALID_VALUE
               : m->state != M_ACTIVE ? GL_INVALID_OPERATION
                                      : GL_NO_ERROR;
  if (!err) {
    if (!end_queries(m) && !m->lost)
      m->lost = GL_INVALID_OPERATION; /* the program's query straddles End */
    m->state = M_ENDED;
    if (m->lost) { /* no result rather than a wrong one */
      err = m->lost;
      drop_segs(m);
      m->state = M_IDLE;
    }
  }
  pthread_mutex_unlock(&mon_lock);
  if (err)
    gld_set_error(err);
  return err;
}

EXPORT void GLAPIENTRY glEndPerfMonitorAMD(GLuint id) {
  gld_end_monitor(id);
}

/* ---- Results ---- */

static int available(GLuint q) {
  GLuint avail = 0;
  gld_real.GetQueryObjectuiv(q, GL_QUERY_RESULT_AVAILABLE, &avail);
  return avail != 0;
}

/* Reads the driver's results into m's sums. Without wait, reads nothing
 * and returns 0 unless every query is available; never waits then. */
static int fetch(monitor *m, int wait) {
  if (m->have_values)
    return 1;
  int timed = (m->needs & (1u << SRC_TIME)) != 0;
  if (!wait) {
    for (int s = 0; s < NUM_TARGETS; s++)
      for (uint32_t i = 0; i < m->c[s].n; i++)
        if (!m->c[s].s[i].have && !available(m->c[s].s[i].q))
          return 0;
    if (timed && (!available(m->stamp[0]) || !available(m->stamp[1])))
      return 0;
  }
  for (int s = 0; s < NUM_TARGETS; s++) {
    m->sum[s] = 0;
    for (uint32_t i = 0; i < m->c[s].n; i++) {
      if (!m->c[s].s[i].have)
        read_seg(&m->c[s].s[i]);
      m->sum[s] += m->c[s].s[i].v;
    }
  }
  for (int k = 0; k < 2; k++) {
    GLuint64 t = 0;
    if (timed)
      gld_real.GetQueryObjectui64v(m->stamp[k], GL_QUERY_RESULT, &t);
    m->t[k] = t;
  }
  m->have_values = 1;
  return 1;
}

/* The modelled value of hardware counter c (0 when not modelled). */
static uint64_t value_of(const monitor *m, uint32_t c) {
  if (model_of[c] < 0)
    return 0;
  const model *md = &models[model_of[c]];
  uint64_t raw;
  if (md->src == SRC_TIME)
    raw = m->t[1] > m->t[0] ? m->t[1] - m->t[0] : 0;
  else
    raw = m->sum[md->src];
  return raw / md->den * md->num + raw % md->den * md->num / md->den;
}

static void write_u32(GLuint *data, GLsizei dataSize, GLint *bytesWritten,
                      GLuint v) {
  GLint n = 0;
  if (dataSize >= (GLsizei)sizeof(GLuint)) {
    data[0] = v;
    n = sizeof(GLuint);
  }
  if (bytesWritten)
    *bytesWritten = n;
}

EXPORT void GLAPIENTRY glGetPerfMonitorCounterDataAMD(GLuint id, GLenum pname,
                                                      GLsizei dataSize,
                                                      GLuint *data,
                                                      GLint *bytesWritten) {
  catalog();
  pthread_mutex_lock(&mon_lock);
  monitor *m = lookup(id);
  GLenum err = GL_NO_ERROR;
  if (!data)
    err = GL_INVALID_OPERATION;
  else if (!m || dataSize < 0)
    err = GL_INVALID_VALUE;
  else if (pname != GL_PERFMON_RESULT_AVAILABLE_AMD &&
           pname != GL_PERFMON_RESULT_SIZE_AMD &&
           pname != GL_PERFMON_RESULT_AMD)
    err = GL_INVALID_ENUM;
  else if (m->state == M_ENDED && !gld_real_ready())
    err = GL_INVALID_OPERATION;
  if (err) {
    pthread_mutex_unlock(&mon_lock);
    gld_set_error(err);
    return;
  }
  int ended = m->state == M_ENDED;
  if (pname == GL_PERFMON_RESULT_AVAILABLE_AMD) {
    write_u32(data, dataSize, bytesWritten, ended && fetch(m, 0));
  } else if (pname == GL_PERFMON_RESULT_SIZE_AMD) {
    write_u32(data, dataSize, bytesWritten, ended ? 16 * m->nsel : 0);
  } else {
    GLint written = 0;
    if (ended && fetch(m, 1))
      for (uint32_t g = 0; g < num_groups; g++)
        for (uint32_t i = 0; i < groups[g].num; i++) {
          uint32_t c = groups[g].counters[i];
          if (!selected(m, c) || dataSize - written < 16)
            continue;
          uint64_t v = value_of(m, c);
          GLuint *out = data + written / 4;
          out[0] = g;
          out[1] = c;
          memcpy(out + 2, &v, sizeof(v));
          written += 16;
        }
    if (bytesWritten)
      *bytesWritten = written;
  }
  pthread_mutex_unlock(&mon_lock);
}
