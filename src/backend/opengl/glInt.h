/*
 * glInt.h - what the modules of the OpenGL library share.
 *
 * libgpuperf-gl.so is preloaded (LD_PRELOAD) into the programs that
 * `gpuperf record` and `gpuperf stat` run. It defines the GLX and EGL
 * entry points that matter to a frame (glXSwapBuffers, eglSwapBuffers,
 * the make-current calls) and the GL calls it records (draws, clears,
 * framebuffer binds, uploads, shader compiles and links, finish and
 * flush), so that a program linked to libGL, libOpenGL, libGLESv2 or
 * libEGL calls ours first; glXGetProcAddress(ARB) and eglGetProcAddress
 * hand out the same wrappers to programs and loaders (GLEW, GLAD, GLFW,
 * SDL) that look the calls up, and dlsym does for loaders that look them
 * up in a libGL they opened themselves (libepoxy; entry.c). Each wrapper
 * calls the real function (resolve.c) and writes records into the
 * process's one libgpuperf, reached through gp_backend_interface():
 *  - contexts (context.c): a GL context made current the first time
 *    becomes a gpuperf context of a device named by GL_RENDERER; its GL
 *    clock is calibrated to the trace clock;
 *  - frames (frames.c): a timestamp query at the first GPU work after each
 *    swap or framebuffer switch and at the end of each run of work (the
 *    swap, the next switch), read back at later frames without waiting,
 *    give the GPU times of each render pass and frame;
 *  - counters (stats.c, amdpm.c, intelpq.c): pipeline statistics per
 *    frame, draws and triangles per frame, and the driver's
 *    GL_AMD_performance_monitor or GL_INTEL_performance_query
 *    counters where it has the extension;
 *  - debug output (log.c): KHR_debug messages as GPU log records, the
 *    program's own callback still called.
 *
 * Threads. GL contexts are current on one thread at a time, and all the
 * per-context state below is touched only by the thread that has the
 * context current (or by the thread that destroys it, once it is current
 * nowhere). The registry of contexts has its own lock.
 */
#ifndef GPUPERF_OPENGL_GLINT_H
#define GPUPERF_OPENGL_GLINT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <GL/gl.h>
#include <GL/glext.h>

/* Core GL 1.0 functions have no PFN types in the headers. */
typedef void(APIENTRY *gp_pfn_get_integerv)(GLenum, GLint *);
typedef const GLubyte *(APIENTRY *gp_pfn_get_string)(GLenum);

#include "core/backend.h"
#include "counters/backend.h"

#define GP_GL_EXPORT __attribute__((visibility("default")))

/* The process's libgpuperf (context.c); never NULL after gp__gl_core_load. */
extern const gp_backend_ops *gp__gl_core;
/* Its counters' provider table, or NULL (another build). */
extern const gp_counters_backend_ops *gp__gl_counters;
void gp__gl_core_load(void);

/* ------------------------------------------------------------------ */
/* Real functions (resolve.c)                                          */

/* The GL calls the library wraps, with their API record ids (cbid). Each
 * X(name, cbid) has a wrapper gp__gl_w_<name> in entry.c, exported as
 * <name>. */
#define GP_GL_WRAPPED(X)                                                       \
  X(glXSwapBuffers, 1)                                                         \
  X(eglSwapBuffers, 2)                                                         \
  X(glDrawArrays, 3)                                                           \
  X(glDrawElements, 4)                                                         \
  X(glDrawArraysInstanced, 5)                                                  \
  X(glDrawElementsInstanced, 6)                                                \
  X(glDrawRangeElements, 7)                                                    \
  X(glCallList, 8)                                                             \
  X(glCallLists, 9)                                                            \
  X(glClear, 10)                                                               \
  X(glFinish, 11)                                                              \
  X(glFlush, 12)                                                               \
  X(glBindFramebuffer, 13)                                                     \
  X(glBufferData, 14)                                                          \
  X(glBufferSubData, 15)                                                       \
  X(glTexImage2D, 16)                                                          \
  X(glTexSubImage2D, 17)                                                       \
  X(glCompileShader, 18)                                                       \
  X(glLinkProgram, 19)                                                         \
  X(glBeginQuery, 20)                                                          \
  X(glEndQuery, 21)                                                            \
  X(glDebugMessageCallback, 22)                                                \
  X(glDebugMessageCallbackKHR, 23)                                             \
  X(glXMakeCurrent, 24)                                                        \
  X(glXMakeContextCurrent, 25)                                                 \
  X(eglMakeCurrent, 26)                                                        \
  X(glXDestroyContext, 27)                                                     \
  X(eglDestroyContext, 28)                                                     \
  X(glDrawElementsBaseVertex, 29)                                              \
  X(glMultiDrawArrays, 30)                                                     \
  X(glBindFramebufferEXT, 31)                                                  \
  X(glBeginQueryEXT, 32)                                                       \
  X(glEndQueryEXT, 33)

enum {
#define GP_GL_ENUM(name, cbid) GP_GL_FN_##name,
  GP_GL_WRAPPED(GP_GL_ENUM)
#undef GP_GL_ENUM
      GP_GL_FN_COUNT
};
enum {
#define GP_GL_CB(name, cbid) GP_GL_CBID_##name = cbid,
  GP_GL_WRAPPED(GP_GL_CB)
#undef GP_GL_CB
};

/* The real function i (the next definition after ours), resolved on first
 * use; NULL if the process has none. */
void *gp__gl_real(int i);
#define GP_GL_REAL(name) ((__typeof__(&name))gp__gl_real(GP_GL_FN_##name))

/* Records p as the real function of name if we wrap it and know none yet;
 * returns our wrapper for name, or p when we have none. */
void *gp__gl_intercept(const char *name, void *p);

/* A GL function of the current context, through the real
 * glXGetProcAddressARB or eglGetProcAddress (es: the context is EGL's). */
void *gp__gl_proc(const char *name, bool egl);

/* The real dlsym (entry.c defines dlsym), for our own lookups. */
void *gp__gl_real_dlsym(void *handle, const char *name);

/* The real lookup k: 0 glXGetProcAddress, 1 glXGetProcAddressARB, 2
 * eglGetProcAddress (entry.c); NULL if the process has none. */
void *gp__gl_lookup_real(int k);

/* The API record names, indexed by cbid. */
const char *gp__gl_fn_name(uint32_t cbid);

/* ------------------------------------------------------------------ */
/* Contexts (context.c)                                                */

/* GL functions the library calls itself, per context (desktop and ES
 * contexts name some of them differently). */
typedef struct gp__gl_fns {
  PFNGLGENQUERIESPROC GenQueries;
  PFNGLDELETEQUERIESPROC DeleteQueries;
  PFNGLQUERYCOUNTERPROC QueryCounter;
  PFNGLGETQUERYOBJECTIVPROC GetQueryObjectiv;
  PFNGLGETQUERYOBJECTUI64VPROC GetQueryObjectui64v;
  PFNGLGETINTEGER64VPROC GetInteger64v;
  gp_pfn_get_integerv GetIntegerv;
  gp_pfn_get_string GetString;
  PFNGLGETSTRINGIPROC GetStringi;
  PFNGLBEGINQUERYPROC BeginQuery;
  PFNGLENDQUERYPROC EndQuery;
  PFNGLBINDBUFFERPROC BindBuffer;
  PFNGLDEBUGMESSAGECALLBACKPROC DebugMessageCallback;
  /* GL_AMD_performance_monitor (amdpm.c), all NULL without it */
  PFNGLGETPERFMONITORGROUPSAMDPROC GetPerfMonitorGroupsAMD;
  PFNGLGETPERFMONITORCOUNTERSAMDPROC GetPerfMonitorCountersAMD;
  PFNGLGETPERFMONITORGROUPSTRINGAMDPROC GetPerfMonitorGroupStringAMD;
  PFNGLGETPERFMONITORCOUNTERSTRINGAMDPROC GetPerfMonitorCounterStringAMD;
  PFNGLGETPERFMONITORCOUNTERINFOAMDPROC GetPerfMonitorCounterInfoAMD;
  PFNGLGENPERFMONITORSAMDPROC GenPerfMonitorsAMD;
  PFNGLDELETEPERFMONITORSAMDPROC DeletePerfMonitorsAMD;
  PFNGLSELECTPERFMONITORCOUNTERSAMDPROC SelectPerfMonitorCountersAMD;
  PFNGLBEGINPERFMONITORAMDPROC BeginPerfMonitorAMD;
  PFNGLENDPERFMONITORAMDPROC EndPerfMonitorAMD;
  PFNGLGETPERFMONITORCOUNTERDATAAMDPROC GetPerfMonitorCounterDataAMD;
  /* GL_INTEL_performance_query (intelpq.c), all NULL without it */
  PFNGLGETFIRSTPERFQUERYIDINTELPROC GetFirstPerfQueryIdINTEL;
  PFNGLGETNEXTPERFQUERYIDINTELPROC GetNextPerfQueryIdINTEL;
  PFNGLGETPERFQUERYINFOINTELPROC GetPerfQueryInfoINTEL;
  PFNGLGETPERFCOUNTERINFOINTELPROC GetPerfCounterInfoINTEL;
  PFNGLCREATEPERFQUERYINTELPROC CreatePerfQueryINTEL;
  PFNGLDELETEPERFQUERYINTELPROC DeletePerfQueryINTEL;
  PFNGLBEGINPERFQUERYINTELPROC BeginPerfQueryINTEL;
  PFNGLENDPERFQUERYINTELPROC EndPerfQueryINTEL;
  PFNGLGETPERFQUERYDATAINTELPROC GetPerfQueryDataINTEL;
} gp__gl_fns;

/* Queries a frame may measure (stats.c): the 11 pipeline statistics and
 * GL_PRIMITIVES_GENERATED. */
#define GP_GL_NSTATS 12

/* A timestamp query of ours and what it marks. */
typedef struct gp__gl_mark {
  GLuint query;
  uint32_t fbo;  /* the framebuffer its run of work drew into */
  uint64_t corr; /* the correlation id of that run */
  uint64_t cpu;  /* the trace time it was issued at */
  bool start;    /* a run starts here (it ends at the next mark) */
  bool end;      /* a run ends here */
} gp__gl_mark;

/* A frame on its way to the trace: its marks are marks[first .. first +
 * n) of the ring; its statistics and monitor queries are read with them. */
typedef struct gp__gl_frame {
  uint64_t number; /* 1, 2, ... per context */
  uint64_t corr;   /* the swap's correlation id */
  uint32_t first, n;
  uint32_t draws;
  uint64_t triangles;
  bool counted;                /* a session wants its counters */
  struct gp__sampler *sampler; /* what they want: held from begin to write */
  GLuint stats[GP_GL_NSTATS];  /* query names, 0: not measured */
  uint32_t stats_lost;         /* bits: ended early by the program */
  uint32_t stats_ended;        /* bits: ended (all, once the frame ends) */
  GLuint monitor;              /* the driver counters' (gp__gl_pm_ops) */
                               /* measurement of f, 0: none */
  uint32_t monitor_gen;        /* the selection it was made with */
} gp__gl_frame;

/* Frames in flight per context, and their marks. A swap of a window
 * throttles a program to a few frames in flight; one of an EGL pbuffer
 * does not, and on an H200 (NVIDIA's driver) a program rendering 37,000
 * frames a second had hundreds in flight: with 64 of them, 86 to 99% of
 * its frames were dropped, with 1024 1 to 2% (bench/gl --egl). About
 * 0.7 MB per context. */
#define GP_GL_FRAMES 1024
#define GP_GL_MARKS 16384
#define GP_GL_FRAME_MARKS 128 /* marks one frame can list */
#define GP_GL_STATQ 32 /* statistics query names made or deleted at once */

/* The library's state of one GL context. */
typedef struct gp__gl_ctx {
  void *handle; /* GLXContext or EGLContext */
  bool egl, es;
  int major, minor;
  bool ready;    /* initialized (first made current) */
  bool timed;    /* timestamp queries work */
  bool disjoint; /* ES: GL_GPU_DISJOINT_EXT exists */
  uint32_t device_id, context_id;
  gp__gl_fns fn;
  /* Calibration: GL time g -> trace time g - gl_offset. */
  int64_t gl_offset;
  uint64_t cal_at; /* trace time of the last calibration, 0: never */
  /* The ring of marks and frames in flight. */
  gp__gl_mark marks[GP_GL_MARKS];
  uint32_t mark_head, mark_n; /* oldest, count */
  gp__gl_frame frames[GP_GL_FRAMES];
  uint32_t frame_head, frame_n;
  GLuint free_q[GP_GL_MARKS]; /* query names to reuse */
  uint32_t nfree;
  /* Statistics queries are used once (stats.c): names not used yet, and
   * names used and read, to delete. */
  GLuint fresh[GP_GL_STATQ], used[GP_GL_STATQ];
  uint32_t nfresh, nused;
  /* The frame being recorded (frames[(head + n - 1)], valid when open). */
  bool frame_open;
  bool in_run;       /* a run of work began and has not ended */
  bool reusable;     /* the frame's last mark ended a run at a framebuffer
                        switch: the next run starts there */
  uint32_t fbo;      /* the draw framebuffer bound */
  uint64_t run_corr; /* the open run's correlation id */
  uint64_t frames_done;
  uint32_t app_queries; /* bits of statistics the program has active */
  /* KHR_debug: the program's callback (log.c). */
  bool debug_hooked;
  /* The driver's counters (gp__gl_pm_ops): the provider and its state,
   * NULL without one */
  const struct gp__gl_pm_ops *pm;
  struct gp__gl_amdpm *amdpm;     /* amdpm.c */
  struct gp__gl_intelpq *intelpq; /* intelpq.c */
  /* GPUPERF_HUD in the window (hud_glue.c) */
  struct gp__gl_hud *hud;
  gp_hud_view *hud_view;
  bool hud_failed;
} gp__gl_ctx;

/* The context current on this thread, or NULL. */
gp__gl_ctx *gp__gl_current(void);

/* Before a make-current call that leaves no context current on this
 * thread (the program's teardown, or a hand-over to another thread):
 * what the current context has in flight is read, waiting for it (its
 * last frames would otherwise be lost when it is destroyed elsewhere). */
void gp__gl_releasing(void);

/* After a make-current call returned ok: handle is the context now
 * current on this thread (NULL: none); egl: made current through EGL. */
void gp__gl_made_current(void *handle, bool egl);

/* Before a context is destroyed: forget it (its pending frames are
 * written untimed and counted). */
void gp__gl_context_destroyed(void *handle);

/* Looks up c's functions and reads its strings and version (c current;
 * registers nothing). False if it cannot be asked. */
bool gp__gl_describe(gp__gl_ctx *c, const char **vendor, const char **renderer,
                     const char **version);

/* Whether c (current) has extension ext, asked the way its version
 * allows (glGetStringi on 3.0 and later, so a core context sees no
 * error). */
bool gp__gl_has_ext(gp__gl_ctx *c, const char *ext);

/* The trace time of GL time t (ns) in ctx. */
uint64_t gp__gl_to_trace(const gp__gl_ctx *c, uint64_t t);

/* Calibrates ctx's GL clock to the trace clock if force or due. */
void gp__gl_calibrate(gp__gl_ctx *c, bool force);

/* ------------------------------------------------------------------ */
/* Frames (frames.c)                                                   */

/* API record of a call that started at start (trace time), now ending;
 * corr: its correlation id, 0 if none. */
void gp__gl_api(uint32_t cbid, uint64_t start, uint64_t corr);

/* Whether API records are wanted (cheap). */
bool gp__gl_api_on(void);

/* GPU work is about to be issued in c (a draw, a clear...): opens the
 * frame and the run if none is open. Returns the run's correlation id if
 * this call opened it (the API record's, for its flow), else 0. */
uint64_t gp__gl_work(gp__gl_ctx *c);

/* The frame being recorded in c, or NULL (none open). */
gp__gl_frame *gp__gl_open_frame(gp__gl_ctx *c);

/* A draw of mode with count vertices, instances times. */
void gp__gl_draw(gp__gl_ctx *c, GLenum mode, int64_t count, int64_t instances);

/* The draw framebuffer changes to fbo. */
void gp__gl_bind_fbo(gp__gl_ctx *c, uint32_t fbo);

/* The frame ends (swap: before the real swap). Returns the swap's
 * correlation id (0 if nothing was recorded). */
uint64_t gp__gl_frame_end(gp__gl_ctx *c);

/* Reads back what is available; forced: waits for all (the context is
 * going away, or the session ends). */
void gp__gl_frames_read(gp__gl_ctx *c, bool forced);

/* After a swap on c: a safe point for core/death.c (a SIGINT or the like
 * noted since finishes the session here, and the process). */
void gp__gl_swapped(gp__gl_ctx *c);

/* Gives up c's frames in flight without calling GL (a signal handler
 * finishing the session): counted as dropped. */
void gp__gl_frames_lose(gp__gl_ctx *c);
/* Frees the context's queries (current). */
void gp__gl_frames_fini(gp__gl_ctx *c);

/* ------------------------------------------------------------------ */
/* Counters (stats.c, amdpm.c)                                         */

/* Publishes c's device catalog (pipeline statistics the context has,
 * draws, triangles, GL_AMD_performance_monitor's counters, Utilization);
 * once per device. */
void gp__gl_counters_publish(gp__gl_ctx *c);

/* The names of the per-frame queries c can measure, in catalog order,
 * into names (room for GP_GL_NSTATS); returns how many. */
uint32_t gp__gl_stats_names(gp__gl_ctx *c, const char **names);

/* Whether a session (or the HUD) samples per-frame counters of c's
 * device now. */
bool gp__gl_counters_sampled(const gp__gl_ctx *c);

/* Which statistics (bits of stats.c's table) the sessions want now on
 * c's device; 0 if none. amd: set when monitor counters are wanted.
 * *sampler: a reference to the sampling that wants them (NULL if none),
 * the frame's to keep: a frame begun while counters are sampled has its
 * counters written even when the sampling stops before it is read. */
uint32_t gp__gl_stats_wanted(gp__gl_ctx *c, bool *amd,
                             struct gp__sampler **sampler);

/* Begins this frame's statistics queries (bits wanted). */
void gp__gl_stats_begin(gp__gl_ctx *c, gp__gl_frame *f, uint32_t wanted);
/* Ends them (at the frame's end). */
void gp__gl_stats_end(gp__gl_ctx *c, gp__gl_frame *f);
/* The program begins or ends a query of target: ends ours of that target
 * first, or notes it to leave the target alone. */
void gp__gl_stats_app_query(gp__gl_ctx *c, GLenum target, bool begin);
/* True when f's statistics can be read without waiting. */
bool gp__gl_stats_ready(gp__gl_ctx *c, const gp__gl_frame *f);
/* Writes f's counters (statistics, draws, triangles) over [start, end]
 * and frees its queries. */
void gp__gl_stats_emit(gp__gl_ctx *c, gp__gl_frame *f, uint64_t start,
                       uint64_t end);
/* Frees f's queries without writing them. */
void gp__gl_stats_drop(gp__gl_ctx *c, gp__gl_frame *f);
/* Deletes the context's statistics query names (current). */
void gp__gl_stats_fini(gp__gl_ctx *c);

/* Driver counters forwarded from a GL extension, per frame: one provider
 * per context (amdpm.c: GL_AMD_performance_monitor; intelpq.c:
 * GL_INTEL_performance_query). Counter k of the provider is catalog entry
 * base + k of its device (stats.c keeps base). Every function is called
 * with c current. */
typedef struct gp__gl_pm_ops {
  const char *ext;  /* the extension's name */
  const char *unit; /* what measures a frame: "one monitor per frame" */
  /* How many counters it has. */
  uint32_t (*count)(const gp__gl_ctx *c);
  /* Fills defs[0 .. count) (ids from id_base) and the groups they are in
   * (custom group ids from group_base) into groups (room for count), their
   * number in *ngroups. Names and strings live as long as the process. */
  void (*defs)(const gp__gl_ctx *c, gp__counter_def *defs, uint32_t id_base,
               uint32_t group_base, gp_counter_group_info *groups,
               uint32_t *ngroups);
  /* The counters (provider indices) measured from the next frame on. */
  void (*select)(gp__gl_ctx *c, const uint32_t *idx, uint32_t n);
  /* Begins f's measurement (at the frame's first work) and ends it (at
   * its end). */
  void (*begin)(gp__gl_ctx *c, gp__gl_frame *f);
  void (*end)(gp__gl_ctx *c, gp__gl_frame *f);
  /* Whether f's results are there, asked without waiting (true if f has
   * no measurement). */
  bool (*ready)(gp__gl_ctx *c, const gp__gl_frame *f);
  /* Reads f's results without waiting: values[j] of provider counter
   * idx[j], j < *n (room for *n on entry); frees the measurement. False,
   * and the measurement freed and counted as lost, if f has none or its
   * results are not there. */
  bool (*read)(gp__gl_ctx *c, gp__gl_frame *f, double *values, uint32_t *idx,
               uint32_t *n);
  /* Frees f's measurement without reading it. */
  void (*drop)(gp__gl_ctx *c, gp__gl_frame *f);
  /* Frees what the provider keeps in GL (c current). */
  void (*fini)(gp__gl_ctx *c);
} gp__gl_pm_ops;

/* The two providers. Each init reads the extension's groups and counters
 * in c (current) and sets c->pm (and its state) when it has some that
 * work; otherwise c is left as it was. */
void gp__gl_amdpm_init(gp__gl_ctx *c);
void gp__gl_intelpq_init(gp__gl_ctx *c);

/* Chooses c's provider (c current): GL_AMD_performance_monitor where the
 * context has it, else GL_INTEL_performance_query, else none. */
static inline void gp__gl_pm_init(gp__gl_ctx *c) {
  if (gp__gl_has_ext(c, "GL_AMD_performance_monitor"))
    gp__gl_amdpm_init(c);
  if (!c->pm && gp__gl_has_ext(c, "GL_INTEL_performance_query"))
    gp__gl_intelpq_init(c);
}

/* The provider's calls, harmless where c has none. */
static inline uint32_t gp__gl_pm_count(const gp__gl_ctx *c) {
  return c->pm ? c->pm->count(c) : 0;
}
static inline bool gp__gl_pm_ready(gp__gl_ctx *c, const gp__gl_frame *f) {
  return c->pm ? c->pm->ready(c, f) : true;
}
static inline void gp__gl_pm_drop(gp__gl_ctx *c, gp__gl_frame *f) {
  if (c->pm)
    c->pm->drop(c, f);
  f->monitor = 0;
}
static inline const char *gp__gl_pm_ext(const gp__gl_ctx *c) {
  return c->pm ? c->pm->ext : "";
}

/* ------------------------------------------------------------------ */
/* Debug output (log.c)                                                */

/* Installs our KHR_debug callback in c (current), if it has KHR_debug. */
void gp__gl_log_init(gp__gl_ctx *c);
/* The program sets its callback (ours stays installed; its is chained). */
void gp__gl_log_app_callback(gp__gl_ctx *c, GLDEBUGPROC cb, const void *user);

/* ------------------------------------------------------------------ */
/* GPUPERF_HUD in the window (hud_glue.c)                              */

/* Whether the HUD may show in a window (GPUPERF_HUD is set and has not
 * been found absent): the swap asks the window's size only then. */
bool gp__gl_hud_maybe(void);
/* Before the real swap: draws the HUD over c's frame (width x height, the
 * default framebuffer's size) if the process has one. */
void gp__gl_hud_swap(gp__gl_ctx *c, int width, int height);
/* Whether the process shows the HUD in its window (known after the
 * first swap). */
bool gp__gl_hud_on(void);
/* After the real swap: the swap's time, for fps and frametime. */
void gp__gl_hud_swapped(void);
/* A frame's GPU time, when its timestamps are read (gpu-frametime). */
void gp__gl_hud_gpu_frame(uint64_t ns);
/* Frees c's renderer (current: its GL objects deleted too). */
void gp__gl_hud_fini(gp__gl_ctx *c, bool current);

/* Warns once per key with msg on stderr. */
void gp__gl_warn_once(atomic_bool *flag, const char *msg);

#endif /* GPUPERF_OPENGL_GLINT_H */
