/*
 * intelpq_double.c - a TEST DOUBLE of GL_INTEL_performance_query: an
 * LD_PRELOAD library that exposes the extension over a desktop GL driver
 * that lacks it (here Mesa's llvmpipe), so that code which forwards the
 * extension (libgpuperf-gl.so) can be tested on this machine.
 *
 *   LD_PRELOAD=build/tests/libgl-intelpq-double.so PROGRAM
 *
 * It is not a driver and measures no GPU counter. No real driver with the
 * extension (Mesa's Intel drivers, Intel's own) has been run here; what a
 * client sees of the API is written from the extension's specification
 * (Khronos registry, INTEL/INTEL_performance_query.txt), and the values
 * are those of the GL_AMD_performance_monitor double's model
 * (amdpm_double.c), whose monitors it is built on: this library is
 * amdpm_double.c and amdpm_gl.c compiled with GLD_INTEL (amdpm.h), which
 * hides the AMD extension and hands out this one's ten entry points.
 *
 * Query types and counters: V3D-shaped. One query type per V3D category
 * of src/counters/v3dtables.c (the V3D seed's names), ids 1..12 in the AMD
 * double's group order (FEP 1, TLB 2, PTB 3, QPU 4, TMU 5, VPM 6, CLE 7,
 * L2T 8, CORE 9, AXI 10, PSE 11, GMP 12), named after the category. Its
 * counters have ids 1..n in the category's table order; counter k is a
 * PERFQUERY_COUNTER_EVENT_INTEL of PERFQUERY_COUNTER_DATA_UINT64_INTEL at
 * byte offset 8 (k - 1) of a result of 8 n bytes, with the table's
 * description and a raw maximum of 0. The types are single-context
 * (capsMask 0); at most MAX_INSTANCES instances exist at once.
 *
 * An instance is an AMD double monitor with all of its type's counters
 * selected, begun and ended with it; so it counts what the AMD double's
 * model gives (PTB-primitives-binned, L2T-CLE-reads, the TLB quads ...;
 * the others 0), and lets the program's own queries go first as it does.
 * Instances of different types may be active together (nested) when they
 * need none of the same driver query targets and select at most 32
 * counters in all (V3D counts 32 at once); otherwise BeginPerfQueryINTEL
 * fails with INVALID_OPERATION, which the specification allows for types
 * that cannot be collected together. So two instances of one type that
 * needs a target cannot be active together: the double's one deviation
 * from the specification's "multiple active queries of the same type".
 *
 * Results are late on purpose, as a GPU's are some frames behind: an
 * instance's result is there only once LATE more instances of its type
 * have ended after it (a frame's query of that type LATE frames later),
 * and the driver's queries are available (asked without waiting).
 * Before that GetPerfQueryDataINTEL with PERFQUERY_DONOT_FLUSH_INTEL or
 * PERFQUERY_FLUSH_INTEL writes nothing (bytesWritten 0); with
 * PERFQUERY_WAIT_INTEL it writes it at once, waiting for the driver's
 * queries. Once there, every later call writes it again, as the
 * specification says.
 *
 * GLD_INTELPQ_LOG, when set, names a file to which each
 * GetPerfQueryDataINTEL call appends one line: "late", "data" or "wait"
 * (a call with PERFQUERY_WAIT_INTEL), and the instance's handle; tests
 * read it to see that results were read late and never waited for.
 *
 * Choices where the specification says nothing: handles are process-wide;
 * an unknown flags value is INVALID_VALUE; a dataSize smaller than the
 * result gets the whole counters that fit; an instance ended while the
 * program's query straddled its End (the AMD double's refusal) never has
 * results.
 */
#include "amdpm.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters/countersInt.h"

#define MAX_INSTANCES 1024
#define LATE 2 /* ends of its type before an instance's result is there */
#define NUM_COUNTERS 87

extern const gp__counter_def gp__v3d42_counters[NUM_COUNTERS];

/* ---- Query types: the AMD double's groups ---- */

typedef struct qtype {
  char name[32];
  GLuint n;
  GLuint hw[NUM_COUNTERS]; /* counter k + 1 is hardware counter hw[k] */
} qtype;

static qtype types[16];
static GLuint num_types;
static pthread_once_t types_once = PTHREAD_ONCE_INIT;

static void types_init(void) {
  GLint ng = 0;
  glGetPerfMonitorGroupsAMD(&ng, 0, NULL);
  if (ng < 0 || ng > 16)
    ng = 0;
  GLuint ids[16];
  glGetPerfMonitorGroupsAMD(&ng, ng, ids);
  for (GLint g = 0; g < ng; g++) {
    qtype *t = &types[g];
    glGetPerfMonitorGroupStringAMD(ids[g], sizeof(t->name), NULL, t->name);
    GLint nc = 0;
    glGetPerfMonitorCountersAMD(ids[g], &nc, NULL, NUM_COUNTERS,
                                (GLuint *)t->hw);
    t->n = nc > 0 && nc <= NUM_COUNTERS ? (GLuint)nc : 0;
  }
  num_types = (GLuint)ng;
}

/* Query type id, or NULL if there is none. */
static qtype *type_of(GLuint id) {
  pthread_once(&types_once, types_init);
  return id >= 1 && id <= num_types ? &types[id - 1] : NULL;
}

/* Copies s into buf (room for len, len 0: nothing), NUL-terminated. */
static void copy_name(const char *s, GLuint len, GLchar *buf) {
  if (!buf || !len)
    return;
  size_t n = strlen(s);
  if (n > len - 1)
    n = len - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
}

EXPORT void GLAPIENTRY glGetFirstPerfQueryIdINTEL(GLuint *queryId) {
  if (!queryId) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  *queryId = type_of(1) ? 1 : 0;
  if (!*queryId)
    gld_set_error(GL_INVALID_OPERATION);
}

EXPORT void GLAPIENTRY glGetNextPerfQueryIdINTEL(GLuint queryId,
                                                 GLuint *nextQueryId) {
  if (!nextQueryId) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  *nextQueryId = 0;
  if (!type_of(queryId)) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  *nextQueryId = type_of(queryId + 1) ? queryId + 1 : 0;
}

EXPORT void GLAPIENTRY glGetPerfQueryIdByNameINTEL(GLchar *queryName,
                                                   GLuint *queryId) {
  GLuint id = 0;
  for (GLuint k = 1; queryName && type_of(k) && !id; k++)
    if (strcmp(type_of(k)->name, queryName) == 0)
      id = k;
  if (queryId)
    *queryId = id;
  if (!id || !queryId)
    gld_set_error(GL_INVALID_VALUE);
}

EXPORT void GLAPIENTRY glGetPerfQueryInfoINTEL(
    GLuint queryId, GLuint queryNameLength, GLchar *queryName, GLuint *dataSize,
    GLuint *noCounters, GLuint *noInstances, GLuint *capsMask) {
  const qtype *t = type_of(queryId);
  if (!t) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  copy_name(t->name, queryNameLength, queryName);
  if (dataSize)
    *dataSize = 8 * t->n;
  if (noCounters)
    *noCounters = t->n;
  if (noInstances)
    *noInstances = MAX_INSTANCES;
  if (capsMask)
    *capsMask = GL_PERFQUERY_SINGLE_CONTEXT_INTEL;
}

EXPORT void GLAPIENTRY glGetPerfCounterInfoINTEL(
    GLuint queryId, GLuint counterId, GLuint counterNameLength,
    GLchar *counterName, GLuint counterDescLength, GLchar *counterDesc,
    GLuint *counterOffset, GLuint *counterDataSize, GLuint *counterTypeEnum,
    GLuint *counterDataTypeEnum, GLuint64 *rawCounterMaxValue) {
  const qtype *t = type_of(queryId);
  if (!t || counterId < 1 || counterId > t->n) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  const gp_counter_info *i = &gp__v3d42_counters[t->hw[counterId - 1]].info;
  copy_name(i->name, counterNameLength, counterName);
  copy_name(i->description ? i->description : "", counterDescLength,
            counterDesc);
  if (counterOffset)
    *counterOffset = 8 * (counterId - 1);
  if (counterDataSize)
    *counterDataSize = 8;
  if (counterTypeEnum)
    *counterTypeEnum = GL_PERFQUERY_COUNTER_EVENT_INTEL;
  if (counterDataTypeEnum)
    *counterDataTypeEnum = GL_PERFQUERY_COUNTER_DATA_UINT64_INTEL;
  if (rawCounterMaxValue)
    *rawCounterMaxValue = 0;
}

/* ---- Instances ---- */

enum { I_IDLE, I_ACTIVE, I_ENDED, I_LOST };

typedef struct instance {
  uint8_t live, state;
  GLuint type;       /* its query type's id */
  GLuint monitor;    /* the AMD double's */
  uint64_t ready_at; /* its type's ends before its result is there */
} instance;

static pthread_mutex_t inst_lock = PTHREAD_MUTEX_INITIALIZER;
static instance insts[MAX_INSTANCES]; /* handle h is insts[h - 1] */
static uint64_t ends[17];             /* instances of type t ended */

static instance *inst_of(GLuint h) {
  return h >= 1 && h <= MAX_INSTANCES && insts[h - 1].live ? &insts[h - 1]
                                                           : NULL;
}

EXPORT void GLAPIENTRY glCreatePerfQueryINTEL(GLuint queryId,
                                              GLuint *queryHandle) {
  const qtype *t = type_of(queryId);
  if (!t || !queryHandle) {
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  *queryHandle = 0;
  pthread_mutex_lock(&inst_lock);
  GLuint h = 1;
  while (h <= MAX_INSTANCES && insts[h - 1].live)
    h++;
  GLuint m = 0;
  if (h <= MAX_INSTANCES)
    glGenPerfMonitorsAMD(1, &m);
  if (!m) {
    pthread_mutex_unlock(&inst_lock);
    gld_set_error(GL_OUT_OF_MEMORY);
    return;
  }
  glSelectPerfMonitorCountersAMD(m, GL_TRUE, queryId - 1, (GLint)t->n,
                                 (GLuint *)t->hw);
  insts[h - 1] = (instance){.live = 1, .type = queryId, .monitor = m};
  *queryHandle = h;
  pthread_mutex_unlock(&inst_lock);
}

EXPORT void GLAPIENTRY glDeletePerfQueryINTEL(GLuint queryHandle) {
  pthread_mutex_lock(&inst_lock);
  instance *x = inst_of(queryHandle);
  if (x) {
    glDeletePerfMonitorsAMD(1, &x->monitor); /* ends it if active */
    memset(x, 0, sizeof(*x));
  }
  pthread_mutex_unlock(&inst_lock);
  if (!x)
    gld_set_error(GL_INVALID_VALUE);
}

EXPORT void GLAPIENTRY glBeginPerfQueryINTEL(GLuint queryHandle) {
  pthread_mutex_lock(&inst_lock);
  instance *x = inst_of(queryHandle);
  GLenum err = !x                     ? GL_INVALID_VALUE
               : x->state == I_ACTIVE ? GL_INVALID_OPERATION
                                      : GL_NO_ERROR;
  if (err)
    gld_set_error(err);
  else if (gld_begin_monitor(x->monitor, 1) == GL_NO_ERROR)
    x->state = I_ACTIVE;
  pthread_mutex_unlock(&inst_lock);
}

EXPORT void GLAPIENTRY glEndPerfQueryINTEL(GLuint queryHandle) {
  pthread_mutex_lock(&inst_lock);
  instance *x = inst_of(queryHandle);
  GLenum err = !x                     ? GL_INVALID_VALUE
               : x->state != I_ACTIVE ? GL_INVALID_OPERATION
                                      : GL_NO_ERROR;
  if (err) {
    gld_set_error(err);
  } else {
    x->state = gld_end_monitor(x->monitor) == GL_NO_ERROR ? I_ENDED : I_LOST;
    ends[x->type]++;
    x->ready_at = ends[x->type] + LATE;
  }
  pthread_mutex_unlock(&inst_lock);
}

/* ---- Results ---- */

static void log_call(const char *what, GLuint h) {
  const char *path = getenv("GLD_INTELPQ_LOG");
  if (!path || !*path)
    return;
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  char line[64];
  int n = snprintf(line, sizeof(line), "%s %u\n", what, h);
  if (write(fd, line, (size_t)n) != n) {
    /* nothing to do: the log is for tests, which then see a line missing */
  }
  close(fd);
}

/* Writes instance x's result into data (whole counters up to dataSize);
 * the bytes written. The AMD double waits for the driver here. */
static GLuint write_result(const instance *x, GLsizei dataSize, uint8_t *data) {
  const qtype *t = type_of(x->type);
  GLuint entries[4 * NUM_COUNTERS];
  GLint bytes = 0;
  glGetPerfMonitorCounterDataAMD(x->monitor, GL_PERFMON_RESULT_AMD,
                                 (GLsizei)sizeof(entries), entries, &bytes);
  GLuint written = 0;
  for (GLint w = 0; w + 4 <= bytes / 4; w += 4) {
    GLuint hw = entries[w + 1], k = 0;
    while (k < t->n && t->hw[k] != hw)
      k++;
    if (k == t->n || 8 * (k + 1) > (GLuint)dataSize)
      continue;
    memcpy(data + 8 * k, &entries[w + 2], 8);
    if (8 * (k + 1) > written)
      written = 8 * (k + 1);
  }
  return written;
}

EXPORT void GLAPIENTRY glGetPerfQueryDataINTEL(GLuint queryHandle, GLuint flags,
                                               GLsizei dataSize, void *data,
                                               GLuint *bytesWritten) {
  pthread_mutex_lock(&inst_lock);
  instance *x = inst_of(queryHandle);
  if (!x || !data || !bytesWritten || dataSize < 0 ||
      (flags != GL_PERFQUERY_DONOT_FLUSH_INTEL &&
       flags != GL_PERFQUERY_FLUSH_INTEL && flags != GL_PERFQUERY_WAIT_INTEL)) {
    pthread_mutex_unlock(&inst_lock);
    gld_set_error(GL_INVALID_VALUE);
    return;
  }
  *bytesWritten = 0;
  if (x->state == I_ENDED) {
    int wait = flags == GL_PERFQUERY_WAIT_INTEL;
    GLuint avail = 0;
    if (!wait && ends[x->type] >= x->ready_at)
      glGetPerfMonitorCounterDataAMD(x->monitor,
                                     GL_PERFMON_RESULT_AVAILABLE_AMD,
                                     sizeof(avail), &avail, NULL);
    if (wait || avail) {
      memset(data, 0, (size_t)dataSize);
      *bytesWritten = write_result(x, dataSize, data);
    }
    log_call(wait ? "wait" : *bytesWritten ? "data" : "late", queryHandle);
  }
  pthread_mutex_unlock(&inst_lock);
}
