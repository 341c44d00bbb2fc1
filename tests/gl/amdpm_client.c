/*
 * amdpm_client.c - a GL program that uses GL_AMD_performance_monitor as
 * its specification (Khronos registry, AMD/AMD_performance_monitor.txt)
 * describes it, written without looking at any implementation. The tests
 * run it with the test double preloaded (tests/gl/amdpm_double.c) and
 * check what it prints; it checks nothing itself.
 *
 *   gl-amdpm-client N1 N2
 *
 * It makes desktop GL contexts on EGL's surfaceless platform (Mesa),
 * looks for the extension in each, enumerates groups and counters, makes
 * the calls the specification calls errors, and measures two monitors:
 * one around N1 triangles, one around N2, each covering the whole of a
 * 64x64 scissor box (4096 pixels per triangle). Output: one "KEY VALUE"
 * line per fact. Exit status 77, with the reason on stderr, when no such
 * context can be made here; 0 otherwise (also without the extension:
 * "ext_absent 1").
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaceless.h"

#define SIZE 256   /* framebuffer, pixels a side */
#define SCISSOR 64 /* scissor box at the origin, inside every triangle */
#define MAX_FRAMES 1000

static PFNGLGETPERFMONITORGROUPSAMDPROC GetGroups;
static PFNGLGETPERFMONITORCOUNTERSAMDPROC GetCounters;
static PFNGLGETPERFMONITORGROUPSTRINGAMDPROC GetGroupString;
static PFNGLGETPERFMONITORCOUNTERSTRINGAMDPROC GetCounterString;
static PFNGLGETPERFMONITORCOUNTERINFOAMDPROC GetCounterInfo;
static PFNGLGENPERFMONITORSAMDPROC GenMonitors;
static PFNGLDELETEPERFMONITORSAMDPROC DeleteMonitors;
static PFNGLSELECTPERFMONITORCOUNTERSAMDPROC SelectCounters;
static PFNGLBEGINPERFMONITORAMDPROC BeginMonitor;
static PFNGLENDPERFMONITORAMDPROC EndMonitor;
static PFNGLGETPERFMONITORCOUNTERDATAAMDPROC GetCounterData;

static void skip(const char *why) {
  fprintf(stderr, "%s\n", why);
  exit(77);
}

static EGLDisplay display(void) {
  const char *why = NULL;
  EGLDisplay d = sl_display(&why);
  if (d == EGL_NO_DISPLAY)
    skip(why);
  return d;
}

/* 1 if the extension is a whole token of the GL_EXTENSIONS string. */
static int in_string(void) {
  const char *s = (const char *)glGetString(GL_EXTENSIONS);
  size_t n = strlen("GL_AMD_performance_monitor");
  for (const char *p = s; p && (p = strstr(p, "GL_AMD_performance_monitor"));
       p += n)
    if ((p == s || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return 1;
  return 0;
}

/* The index of the extension among glGetStringi's, or -1. */
static int in_list(GLint *num) {
  glGetIntegerv(GL_NUM_EXTENSIONS, num);
  for (GLint i = 0; i < *num; i++) {
    const char *e = (const char *)glGetStringi(GL_EXTENSIONS, (GLuint)i);
    if (e && !strcmp(e, "GL_AMD_performance_monitor"))
      return i;
  }
  return -1;
}

typedef void (*proc)(void);
typedef proc (*gpa_fn)(const char *);

/* The entry points through eglGetProcAddress, as a loader gets them; 1
 * if glXGetProcAddressARB and the exported symbols give the same. */
static int load_procs(void) {
  static const char *const names[] = {
      "glGetPerfMonitorGroupsAMD",      "glGetPerfMonitorCountersAMD",
      "glGetPerfMonitorGroupStringAMD", "glGetPerfMonitorCounterStringAMD",
      "glGetPerfMonitorCounterInfoAMD", "glGenPerfMonitorsAMD",
      "glDeletePerfMonitorsAMD",        "glSelectPerfMonitorCountersAMD",
      "glBeginPerfMonitorAMD",          "glEndPerfMonitorAMD",
      "glGetPerfMonitorCounterDataAMD"};
  proc *slots[] = {(proc *)&GetGroups,      (proc *)&GetCounters,
                   (proc *)&GetGroupString, (proc *)&GetCounterString,
                   (proc *)&GetCounterInfo, (proc *)&GenMonitors,
                   (proc *)&DeleteMonitors, (proc *)&SelectCounters,
                   (proc *)&BeginMonitor,   (proc *)&EndMonitor,
                   (proc *)&GetCounterData};
  gpa_fn glx = (gpa_fn)dlsym(RTLD_DEFAULT, "glXGetProcAddressARB");
  int same = glx != NULL;
  for (int i = 0; i < 11; i++) {
    *slots[i] = eglGetProcAddress(names[i]);
    same &= *slots[i] != NULL && glx && glx(names[i]) == *slots[i] &&
            dlsym(RTLD_DEFAULT, names[i]) == (void *)*slots[i];
  }
  return same;
}

/* 1 if glXGetProcAddressARB and eglGetProcAddress return for a name that
 * is not the extension's what the libraries' own functions return. */
static int chained(void) {
  void *glx_lib = dlopen("libGLX.so.0", RTLD_NOW | RTLD_NOLOAD);
  void *egl_lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!glx_lib || !egl_lib)
    return 0;
  gpa_fn glx = (gpa_fn)dlsym(glx_lib, "glXGetProcAddressARB");
  gpa_fn egl = (gpa_fn)dlsym(egl_lib, "eglGetProcAddress");
  gpa_fn glx_any = (gpa_fn)dlsym(RTLD_DEFAULT, "glXGetProcAddressARB");
  return glx && egl && glx_any &&
         glx_any("glDrawArrays") == glx("glDrawArrays") &&
         eglGetProcAddress("glDrawArrays") == egl("glDrawArrays") &&
         eglGetProcAddress("eglGetPlatformDisplayEXT") ==
             egl("eglGetPlatformDisplayEXT");
}

static GLuint num_groups;
static GLuint group_ids[64];

/* Lists every group and counter ("counter ID GROUP NAME TYPE MIN MAX"). */
static void enumerate(void) {
  GLint n = 0;
  GetGroups(&n, 0, NULL);
  if (n < 0 || n > 64)
    n = 0;
  GetGroups(NULL, n, group_ids);
  num_groups = (GLuint)n;
  printf("groups %d\n", n);
  int total = 0, lengths_ok = 1;
  for (GLuint g = 0; g < num_groups; g++) {
    GLint nc = 0, max_active = 0;
    char gname[64];
    GLsizei glen = -1;
    GetCounters(group_ids[g], &nc, &max_active, 0, NULL);
    GLuint *ids = calloc((size_t)(nc > 0 ? nc : 1), sizeof(GLuint));
    GetCounters(group_ids[g], NULL, NULL, nc, ids);
    GetGroupString(group_ids[g], sizeof(gname), &glen, gname);
    printf("group %u %s %d %d\n", group_ids[g], gname, nc, max_active);
    for (GLint i = 0; i < nc; i++) {
      char name[128], cut[5];
      GLsizei len = -1, need = -1, cut_len = -1;
      GLenum type = 0;
      uint64_t range[2] = {1, 1};
      GetCounterString(group_ids[g], ids[i], 0, &need, NULL);
      GetCounterString(group_ids[g], ids[i], sizeof(name), &len, name);
      GetCounterString(group_ids[g], ids[i], sizeof(cut), &cut_len, cut);
      GetCounterInfo(group_ids[g], ids[i], GL_COUNTER_TYPE_AMD, &type);
      GetCounterInfo(group_ids[g], ids[i], GL_COUNTER_RANGE_AMD, range);
      lengths_ok &= need == (GLsizei)strlen(name) && len == need &&
                    cut_len == 4 && !strncmp(cut, name, 4) && !cut[4];
      printf("counter %u %s %s 0x%x %" PRIu64 " %" PRIu64 "\n", ids[i], gname,
             name, type, range[0], range[1]);
      total++;
    }
    free(ids);
  }
  printf("counters_total %d\nstring_lengths_ok %d\n", total, lengths_ok);
}

/* The group and counter of a counter name; 0 when absent. */
static int find(const char *want, GLuint *group, GLuint *counter) {
  for (GLuint g = 0; g < num_groups; g++) {
    GLint nc = 0;
    GetCounters(group_ids[g], &nc, NULL, 0, NULL);
    GLuint ids[128];
    GetCounters(group_ids[g], NULL, NULL, nc < 128 ? nc : 128, ids);
    for (GLint i = 0; i < nc && i < 128; i++) {
      char name[128];
      GetCounterString(group_ids[g], ids[i], sizeof(name), NULL, name);
      if (!strcmp(name, want)) {
        *group = group_ids[g], *counter = ids[i];
        return 1;
      }
    }
  }
  return 0;
}

static GLuint query_data_early(GLuint m) {
  GLuint v = 12345;
  GetCounterData(m, GL_PERFMON_RESULT_SIZE_AMD, sizeof(v), &v, NULL);
  return v;
}

/* glBeginQuery, counted: the tests compare with what an interposer saw. */
static int begin_queries;
static void begin_query(GLenum target, GLuint id) {
  begin_queries++;
  glBeginQuery(target, id);
}

static void error_is(const char *what) {
  printf("err_%s 0x%x\n", what, glGetError());
}

/* Each call the specification makes an error, and its error. */
static void errors(void) {
  GLuint bad_group = num_groups, g0 = group_ids[0], g1 = group_ids[1];
  GLuint c1 = 0, ids[64];
  GLint n = 0;
  char buf[16];
  GLenum type;
  while (glGetError() != GL_NO_ERROR)
    ;
  GetCounters(g1, &n, NULL, 64, ids);
  c1 = ids[0]; /* a counter of group 1, not of group 0 */
  GetCounters(bad_group, &n, NULL, 0, NULL);
  error_is("counters_bad_group");
  GetGroupString(bad_group, sizeof(buf), NULL, buf);
  error_is("group_string_bad_group");
  GetCounterString(g0, c1, sizeof(buf), NULL, buf);
  error_is("counter_string_bad_counter");
  GetCounterInfo(g0, c1, GL_COUNTER_TYPE_AMD, &type);
  error_is("counter_info_bad_counter");
  GetCounterInfo(bad_group, 0, GL_COUNTER_TYPE_AMD, &type);
  error_is("counter_info_bad_group");

  GLuint m[2];
  GenMonitors(2, m);
  SelectCounters(m[1] + 1000, GL_TRUE, g1, 1, &c1);
  error_is("select_bad_monitor");
  SelectCounters(m[0], GL_TRUE, bad_group, 1, &c1);
  error_is("select_bad_group");
  SelectCounters(m[0], GL_TRUE, g1, -1, &c1);
  error_is("select_negative_count");
  GLuint bogus = m[1] + 1000;
  DeleteMonitors(1, &bogus);
  error_is("delete_bad_monitor");
  EndMonitor(m[0]);
  error_is("end_not_started");
  GLuint data = 7;
  GetCounterData(m[0], GL_PERFMON_RESULT_AVAILABLE_AMD, sizeof(data), NULL,
                 NULL);
  error_is("data_null");
  BeginMonitor(m[0]);
  BeginMonitor(m[1]);
  error_is("begin_while_active");
  EndMonitor(m[1]);
  error_is("end_other_than_active");
  EndMonitor(m[0]);
  error_is("end_active");

  /* More counters than V3D samples at once (32), from several groups. */
  GLint nl = 0, max_active = 0;
  int sel = 0;
  for (GLuint g = 0; g < num_groups && sel <= 32; g++) {
    GetCounters(group_ids[g], &nl, &max_active, 64, ids);
    int take = nl < max_active ? nl : max_active;
    if (take > 33 - sel)
      take = 33 - sel;
    SelectCounters(m[1], GL_TRUE, group_ids[g], take, ids);
    sel += take;
  }
  printf("selected_for_too_many %d\n", sel);
  /* A target the monitor needs, held by the program's own query. */
  GLuint pg, pc, own;
  SelectCounters(m[0], GL_TRUE, (find("PTB-primitives-binned", &pg, &pc), pg),
                 1, &pc);
  glGenQueries(1, &own);
  begin_query(GL_PRIMITIVES_SUBMITTED_ARB, own);
  BeginMonitor(m[0]);
  error_is("begin_target_busy");
  glEndQuery(GL_PRIMITIVES_SUBMITTED_ARB);
  /* The program's query begun inside the monitor and ended after it. */
  BeginMonitor(m[0]);
  begin_query(GL_PRIMITIVES_SUBMITTED_ARB, own);
  EndMonitor(m[0]);
  error_is("end_straddled");
  glEndQuery(GL_PRIMITIVES_SUBMITTED_ARB);
  error_is("own_query_after_straddle");
  printf("straddled_size %u\n", query_data_early(m[0]));
  /* Ending a query the program did not begin, while the monitor counts. */
  BeginMonitor(m[0]);
  glEndQuery(GL_PRIMITIVES_SUBMITTED_ARB);
  error_is("end_query_not_begun");
  EndMonitor(m[0]);
  error_is("end_after_not_begun");
  glDeleteQueries(1, &own);
  error_is("select_many");
  BeginMonitor(m[1]);
  error_is("begin_too_many");
  DeleteMonitors(2, m);
  error_is("delete_ok");
}

static GLuint program, vao;

/* The program, the 256x256 framebuffer and the triangle that covers the
 * scissor box, repeated. */
static void setup(int max_triangles) {
  static const char *vs = "#version 330 core\n"
                          "layout(location = 0) in vec2 p;\n"
                          "void main() { gl_Position = vec4(p, 0, 1); }\n";
  static const char *fs = "#version 330 core\n"
                          "out vec4 o;\n"
                          "void main() { o = vec4(1); }\n";
  GLuint v = glCreateShader(GL_VERTEX_SHADER), f;
  glShaderSource(v, 1, &vs, NULL);
  glCompileShader(v);
  f = glCreateShader(GL_FRAGMENT_SHADER);
  glShaderSource(f, 1, &fs, NULL);
  glCompileShader(f);
  program = glCreateProgram();
  glAttachShader(program, v);
  glAttachShader(program, f);
  glLinkProgram(program);
  glUseProgram(program);

  GLuint fb, rb, vbo;
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
  glDisable(GL_DEPTH_TEST);

  /* The lower-left half of the viewport: x + y < SIZE in pixels, which
   * holds over the whole scissor box. */
  size_t n = (size_t)max_triangles * 6;
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

static const char *const measured[] = {"PTB-primitives-binned",
                                       "FEP-valid-primitives-rendered-pixels",
                                       "TLB-quads-passing-z-and-stencil-test",
                                       "L2T-CLE-reads",
                                       "cycle-count",
                                       "QPU-total-idle-clk-cycles"};
#define NUM_MEASURED 6

static GLuint query_data(GLuint m, GLenum pname) {
  GLuint v = 12345;
  GetCounterData(m, pname, sizeof(v), &v, NULL);
  return v;
}

/* One monitor around `triangles` triangles; prints what it reads as
 * "TAG.NAME VALUE", and the time between the client's own GL_TIMESTAMP
 * queries just inside the monitor. With nest, the middle `nest`
 * triangles are drawn inside the client's own primitives-submitted and
 * fragment-shader-invocations queries (TAG.own_prims, TAG.own_frags). */
static void measure(const char *tag, int triangles, int nest) {
  GLuint m, g[NUM_MEASURED], c[NUM_MEASURED];
  GenMonitors(1, &m);
  for (int i = 0; i < NUM_MEASURED; i++) {
    if (!find(measured[i], &g[i], &c[i])) {
      printf("%s.missing %s\n", tag, measured[i]);
      return;
    }
    SelectCounters(m, GL_TRUE, g[i], 1, &c[i]);
  }
  printf("%s.size_before %u\n", tag, query_data(m, GL_PERFMON_RESULT_SIZE_AMD));
  printf("%s.available_before %u\n", tag,
         query_data(m, GL_PERFMON_RESULT_AVAILABLE_AMD));
  GLuint stamps[2];
  glGenQueries(2, stamps);
  BeginMonitor(m);
  glQueryCounter(stamps[0], GL_TIMESTAMP);
  GLuint own[2];
  glGenQueries(2, own);
  if (nest) {
    int before = (triangles - nest) / 2;
    glDrawArrays(GL_TRIANGLES, 0, 3 * before);
    begin_query(GL_PRIMITIVES_SUBMITTED_ARB, own[0]);
    begin_query(GL_FRAGMENT_SHADER_INVOCATIONS_ARB, own[1]);
    glDrawArrays(GL_TRIANGLES, 0, 3 * nest);
    glEndQuery(GL_PRIMITIVES_SUBMITTED_ARB);
    glEndQuery(GL_FRAGMENT_SHADER_INVOCATIONS_ARB);
    glDrawArrays(GL_TRIANGLES, 0, 3 * (triangles - nest - before));
  } else {
    glDrawArrays(GL_TRIANGLES, 0, 3 * triangles);
  }
  glQueryCounter(stamps[1], GL_TIMESTAMP);
  EndMonitor(m);
  printf("%s.error 0x%x\n", tag, glGetError());
  printf("%s.size %u\n", tag, query_data(m, GL_PERFMON_RESULT_SIZE_AMD));

  /* Later frames, each a draw outside the monitor and a flush; never a
   * glFinish unless the result is still not there after MAX_FRAMES. */
  int frames = 0;
  while (!query_data(m, GL_PERFMON_RESULT_AVAILABLE_AMD) &&
         frames < MAX_FRAMES) {
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glFlush();
    frames++;
  }
  int finished = frames == MAX_FRAMES;
  if (finished)
    glFinish();
  printf("%s.frames_until_available %d\n%s.needed_finish %d\n", tag, frames,
         tag, finished);
  printf("%s.available %u\n", tag,
         query_data(m, GL_PERFMON_RESULT_AVAILABLE_AMD));

  GLuint words[4 * NUM_MEASURED + 4];
  GLint written = -1;
  GetCounterData(m, GL_PERFMON_RESULT_AMD, sizeof(words), words, &written);
  printf("%s.bytes_written %d\n", tag, written);
  for (GLint w = 0; w + 4 <= written / 4; w += 4) {
    uint64_t v;
    memcpy(&v, &words[w + 2], sizeof(v));
    char name[128] = "?";
    GetCounterString(words[w], words[w + 1], sizeof(name), NULL, name);
    GLenum type = 0;
    GetCounterInfo(words[w], words[w + 1], GL_COUNTER_TYPE_AMD, &type);
    printf("%s.%s %" PRIu64 "\n%s.%s.type 0x%x\n", tag, name, v, tag, name,
           type);
  }
  GLint part = -1;
  GetCounterData(m, GL_PERFMON_RESULT_AMD, 2 * 16 + 8, words, &part);
  printf("%s.bytes_written_short %d\n", tag, part);
  GLuint64 t0 = 0, t1 = 0;
  glGetQueryObjectui64v(stamps[0], GL_QUERY_RESULT, &t0);
  glGetQueryObjectui64v(stamps[1], GL_QUERY_RESULT, &t1);
  printf("%s.inner_ns %" PRId64 "\n", tag, (int64_t)(t1 - t0));
  if (nest) {
    GLuint64 p = 0, f = 0;
    glGetQueryObjectui64v(own[0], GL_QUERY_RESULT, &p);
    glGetQueryObjectui64v(own[1], GL_QUERY_RESULT, &f);
    printf("%s.own_prims %" PRIu64 "\n%s.own_frags %" PRIu64 "\n", tag,
           (uint64_t)p, tag, (uint64_t)f);
  }
  glDeleteQueries(2, own);

  /* A new selection invalidates the results. */
  SelectCounters(m, GL_FALSE, g[0], 1, &c[0]);
  printf("%s.size_after_select %u\n", tag,
         query_data(m, GL_PERFMON_RESULT_SIZE_AMD));
  printf("%s.available_after_select %u\n", tag,
         query_data(m, GL_PERFMON_RESULT_AVAILABLE_AMD));
  glDeleteQueries(2, stamps);
  DeleteMonitors(1, &m);
}

int main(int argc, char **argv) {
  int n1 = argc > 1 ? atoi(argv[1]) : 10, n2 = argc > 2 ? atoi(argv[2]) : 25;
  if (n1 <= 0 || n2 <= 0 || n1 > 100000 || n2 > 100000) {
    fprintf(stderr, "usage: gl-amdpm-client N1 N2 (triangles, 1..100000)\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  EGLDisplay d = display();

  EGLContext es = sl_context(d, EGL_OPENGL_ES_API, 3, 0, 0);
  if (es) {
    GLint num = 0;
    printf("es_ext_index %d\n", in_list(&num));
    eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(d, es);
  }
  EGLContext compat = sl_context(d, EGL_OPENGL_API, 3, 0,
                                 EGL_CONTEXT_OPENGL_COMPATIBILITY_PROFILE_BIT);
  if (compat) {
    printf("compat_ext_in_string %d\n", in_string());
    eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(d, compat);
  }
  EGLContext core =
      sl_context(d, EGL_OPENGL_API, 3, 3, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT);
  if (!core)
    skip("no desktop OpenGL 3.3 core context on surfaceless EGL");
  printf("renderer %s\n", (const char *)glGetString(GL_RENDERER));
  GLint num = 0;
  int index = in_list(&num);
  printf("core_num_extensions %d\ncore_ext_index %d\n", num, index);
  if (index < 0) {
    printf("ext_absent 1\n");
    return 0;
  }
  printf("procs_same_everywhere %d\n", load_procs());
  printf("other_names_chained %d\n", chained());
  enumerate();
  errors();
  setup(n1 > n2 ? n1 : n2);
  measure("a", n1, 0);
  measure("b", n2, 5);
  printf("client_begin_queries %d\n", begin_queries);
  printf("final_error 0x%x\ndone 1\n", glGetError());
  eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  eglDestroyContext(d, core);
  eglTerminate(d);
  return 0;
}
