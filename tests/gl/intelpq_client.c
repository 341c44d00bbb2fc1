/*
 * intelpq_client.c - a GL program that uses GL_INTEL_performance_query
 * as its specification (Khronos registry,
 * INTEL/INTEL_performance_query.txt) describes it. The tests run it with
 * the test double preloaded (tests/gl/intelpq_double.c) and check what it
 * prints; it checks nothing itself.
 *
 *   gl-intelpq-client N
 *
 * On EGL's surfaceless platform (Mesa) it makes a desktop GL 3.3 core
 * context, looks for the extension, enumerates its query types and their
 * counters, makes calls the specification calls errors, and measures N
 * triangles (each covering a 64x64 scissor box) with instances of the
 * PTB and L2T types nested, reading their results without waiting and
 * then, after two more frames of each type, again; and an instance read
 * with PERFQUERY_WAIT_INTEL. Output: one "KEY VALUE" line per fact. Exit
 * status 77, with the reason on stderr, when no such context can be made
 * here; 0 otherwise (also without the extension: "ext_absent 1").
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaceless.h"

#define SIZE 256
#define SCISSOR 64

static PFNGLGETFIRSTPERFQUERYIDINTELPROC GetFirst;
static PFNGLGETNEXTPERFQUERYIDINTELPROC GetNext;
static PFNGLGETPERFQUERYIDBYNAMEINTELPROC IdByName;
static PFNGLGETPERFQUERYINFOINTELPROC QueryInfo;
static PFNGLGETPERFCOUNTERINFOINTELPROC CounterInfo;
static PFNGLCREATEPERFQUERYINTELPROC Create;
static PFNGLDELETEPERFQUERYINTELPROC Delete;
static PFNGLBEGINPERFQUERYINTELPROC Begin;
static PFNGLENDPERFQUERYINTELPROC End;
static PFNGLGETPERFQUERYDATAINTELPROC GetData;

static void skip(const char *why) {
  fprintf(stderr, "%s\n", why);
  exit(77);
}

/* A current desktop GL 3.3 core context without surface; exits 77 if
 * EGL cannot make one. */
static void make_context(void) {
  const char *why = NULL;
  EGLDisplay d = sl_display(&why);
  if (d == EGL_NO_DISPLAY)
    skip(why);
  if (sl_context(d, EGL_OPENGL_API, 3, 3,
                 EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT) == EGL_NO_CONTEXT)
    skip("no desktop OpenGL 3.3 core context on surfaceless EGL");
}

static int has_extension(void) {
  GLint n = 0;
  glGetIntegerv(GL_NUM_EXTENSIONS, &n);
  for (GLint i = 0; i < n; i++) {
    const char *e = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)i);
    if (e && !strcmp(e, "GL_INTEL_performance_query"))
      return 1;
  }
  return 0;
}

static int load_procs(void) {
#define P(var, name) var = (__typeof__(var))eglGetProcAddress(name)
  P(GetFirst, "glGetFirstPerfQueryIdINTEL");
  P(GetNext, "glGetNextPerfQueryIdINTEL");
  P(IdByName, "glGetPerfQueryIdByNameINTEL");
  P(QueryInfo, "glGetPerfQueryInfoINTEL");
  P(CounterInfo, "glGetPerfCounterInfoINTEL");
  P(Create, "glCreatePerfQueryINTEL");
  P(Delete, "glDeletePerfQueryINTEL");
  P(Begin, "glBeginPerfQueryINTEL");
  P(End, "glEndPerfQueryINTEL");
  P(GetData, "glGetPerfQueryDataINTEL");
#undef P
  return GetFirst && GetNext && IdByName && QueryInfo && CounterInfo &&
         Create && Delete && Begin && End && GetData;
}

/* Prints "queries N", "counters N" (in all), and per type
 * "type.NAME ID SIZE COUNTERS"; per counter of PTB and L2T
 * "counter.NAME OFFSET SIZE TYPE DATATYPE". */
static void enumerate(void) {
  GLuint id = 0, nq = 0, total = 0;
  GetFirst(&id);
  while (id && nq < 1000) {
    char name[256];
    GLuint size = 0, n = 0, inst = 0, caps = 99;
    QueryInfo(id, sizeof(name), name, &size, &n, &inst, &caps);
    printf("type.%s %u %u %u %u %u\n", name, id, size, n, inst, caps);
    for (GLuint k = 1; k <= n; k++) {
      char cn[256], desc[1024];
      GLuint off = 0, cs = 0, type = 0, dt = 0;
      GLuint64 max = 1;
      CounterInfo(id, k, sizeof(cn), cn, sizeof(desc), desc, &off, &cs, &type,
                  &dt, &max);
      if (!strcmp(name, "PTB") || !strcmp(name, "L2T"))
        printf("counter.%s %u %u 0x%x 0x%x %" PRIu64 " %d\n", cn, off, cs, type,
               dt, (uint64_t)max, desc[0] != '\0');
      total++;
    }
    nq++;
    GLuint next = 0;
    GetNext(id, &next);
    id = next;
  }
  printf("queries %u\ncounters %u\n", nq, total);
}

/* The error each call the specification calls wrong leaves. */
static void errors(void) {
  while (glGetError() != GL_NO_ERROR) {
  }
  GLuint v = 7;
  GetFirst(NULL);
  printf("err.first_null 0x%x\n", glGetError());
  GetNext(9999, &v);
  printf("err.next_bad 0x%x %u\n", glGetError(), v);
  GetNext(1, NULL);
  printf("err.next_null 0x%x\n", glGetError());
  IdByName("no such query", &v);
  printf("err.by_name_bad 0x%x\n", glGetError());
  QueryInfo(0, 0, NULL, NULL, NULL, NULL, NULL);
  printf("err.info_bad 0x%x\n", glGetError());
  CounterInfo(1, 0, 0, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL);
  printf("err.counter_zero 0x%x\n", glGetError());
  Create(0, &v);
  printf("err.create_bad 0x%x\n", glGetError());
  Delete(9999);
  printf("err.delete_bad 0x%x\n", glGetError());
  Begin(9999);
  printf("err.begin_bad 0x%x\n", glGetError());
  GLuint ptb = 0, h = 0;
  IdByName("PTB", &ptb);
  Create(ptb, &h);
  End(h);
  printf("err.end_not_begun 0x%x\n", glGetError());
  char buf[64];
  GLuint w = 0;
  GetData(h, GL_PERFQUERY_DONOT_FLUSH_INTEL, sizeof(buf), NULL, &w);
  printf("err.data_null 0x%x\n", glGetError());
  GetData(h, GL_PERFQUERY_DONOT_FLUSH_INTEL, sizeof(buf), buf, NULL);
  printf("err.written_null 0x%x\n", glGetError());
  Delete(h);
  printf("err.none 0x%x\n", glGetError());
}

/* A program drawing full-viewport triangles clipped to the scissor box. */
static void setup(int triangles) {
  static const char *vs = "#version 330 core\n"
                          "layout(location = 0) in vec2 p;\n"
                          "void main() { gl_Position = vec4(p, 0, 1); }\n";
  static const char *fs = "#version 330 core\n"
                          "out vec4 o;\n"
                          "void main() { o = vec4(1); }\n";
  GLuint v = glCreateShader(GL_VERTEX_SHADER), f, p = glCreateProgram();
  glShaderSource(v, 1, &vs, NULL);
  glCompileShader(v);
  f = glCreateShader(GL_FRAGMENT_SHADER);
  glShaderSource(f, 1, &fs, NULL);
  glCompileShader(f);
  glAttachShader(p, v);
  glAttachShader(p, f);
  glLinkProgram(p);
  glUseProgram(p);
  GLuint fb, rb, vao, vbo;
  glGenFramebuffers(1, &fb);
  glBindFramebuffer(GL_FRAMEBUFFER, fb);
  glGenRenderbuffers(1, &rb);
  glBindRenderbuffer(GL_RENDERBUFFER, rb);
  glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, SIZE, SIZE);
  glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0,
                            GL_RENDERBUFFER, rb);
  glViewport(0, 0, SIZE, SIZE);
  glEnable(GL_SCISSOR_TEST);
  glScissor(0, 0, SCISSOR, SCISSOR);
  size_t n = (size_t)triangles * 6;
  float *verts = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i += 6) {
    const float t[6] = {-1, -1, 1, -1, -1, 1};
    memcpy(verts + i, t, sizeof(t));
  }
  glGenVertexArrays(1, &vao);
  glBindVertexArray(vao);
  glGenBuffers(1, &vbo);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(n * sizeof(float)), verts,
               GL_STATIC_DRAW);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, 0, NULL);
  glEnableVertexAttribArray(0);
  free(verts);
}

/* Counter name's value in a result of query type id. */
static uint64_t value(GLuint id, const uint8_t *data, const char *name) {
  GLuint n = 0;
  QueryInfo(id, 0, NULL, NULL, &n, NULL, NULL);
  for (GLuint k = 1; k <= n; k++) {
    char cn[256];
    GLuint off = 0, cs = 0, type = 0, dt = 0;
    GLuint64 max = 0;
    CounterInfo(id, k, sizeof(cn), cn, 0, NULL, &off, &cs, &type, &dt, &max);
    if (!strcmp(cn, name) && cs == 8) {
      uint64_t v;
      memcpy(&v, data + off, sizeof(v));
      return v;
    }
  }
  return UINT64_MAX;
}

static void measure(int triangles) {
  GLuint ptb = 0, l2t = 0, tlb = 0;
  IdByName("PTB", &ptb);
  IdByName("L2T", &l2t);
  IdByName("TLB", &tlb);
  GLuint hp[3] = {0}, hl[3] = {0}, ht = 0, hp2 = 0;
  for (int i = 0; i < 3; i++) {
    Create(ptb, &hp[i]);
    Create(l2t, &hl[i]);
  }
  Create(tlb, &ht);
  Create(ptb, &hp2);
  /* Frame 1: PTB and L2T nested around the triangles. */
  Begin(hp[0]);
  Begin(hl[0]);
  printf("nested.begin_error 0x%x\n", glGetError());
  Begin(ht); /* L2T's 22 counters and TLB's 11: over 32 */
  printf("nested.over_32_error 0x%x\n", glGetError());
  Begin(hp2); /* a second PTB while one is active */
  printf("nested.same_type_error 0x%x\n", glGetError());
  glDrawArrays(GL_TRIANGLES, 0, 3 * triangles);
  End(hl[0]);
  End(hp[0]);
  glFlush();
  uint8_t buf[8 * 64];
  GLuint wp = 99, wl = 99;
  GetData(hp[0], GL_PERFQUERY_DONOT_FLUSH_INTEL, sizeof(buf), buf, &wp);
  GetData(hl[0], GL_PERFQUERY_FLUSH_INTEL, sizeof(buf), buf, &wl);
  printf("frame1.written_at_once %u %u\n", wp, wl);
  /* Two more frames of each type, empty. */
  for (int i = 1; i < 3; i++) {
    Begin(hp[i]);
    Begin(hl[i]);
    End(hl[i]);
    End(hp[i]);
  }
  glFinish();
  GetData(hp[0], GL_PERFQUERY_DONOT_FLUSH_INTEL, sizeof(buf), buf, &wp);
  printf("frame1.ptb_written %u\n", wp);
  printf("frame1.PTB-primitives-binned %" PRIu64 "\n",
         value(ptb, buf, "PTB-primitives-binned"));
  GetData(hl[0], GL_PERFQUERY_DONOT_FLUSH_INTEL, sizeof(buf), buf, &wl);
  printf("frame1.l2t_written %u\n", wl);
  printf("frame1.L2T-CLE-reads %" PRIu64 "\n",
         value(l2t, buf, "L2T-CLE-reads"));
  GetData(hl[0], GL_PERFQUERY_DONOT_FLUSH_INTEL, sizeof(buf), buf, &wl);
  printf("frame1.l2t_written_again %u\n", wl);
  /* An instance read waiting: its result at once. */
  Begin(ht);
  glDrawArrays(GL_TRIANGLES, 0, 3 * triangles);
  End(ht);
  GLuint wt = 0;
  GetData(ht, GL_PERFQUERY_WAIT_INTEL, sizeof(buf), buf, &wt);
  printf("wait.written %u\n", wt);
  printf("wait.TLB-quads-passing-z-and-stencil-test %" PRIu64 "\n",
         value(tlb, buf, "TLB-quads-passing-z-and-stencil-test"));
  for (int i = 0; i < 3; i++) {
    Delete(hp[i]);
    Delete(hl[i]);
  }
  Delete(ht);
  Delete(hp2);
  printf("final_error 0x%x\n", glGetError());
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 10;
  if (n <= 0 || n > 100000) {
    fprintf(stderr, "usage: gl-intelpq-client N (triangles, 1..100000)\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  make_context();
  printf("renderer %s\n", (const char *)glGetString(GL_RENDERER));
  if (!has_extension()) {
    printf("ext_absent 1\n");
    return 0;
  }
  printf("procs %d\n", load_procs());
  enumerate();
  errors();
  setup(n);
  measure(n);
  printf("done 1\n");
  return 0;
}
