/*
 * amdpm.h - what the two files of the GL_AMD_performance_monitor test
 * double share (amdpm_double.c: the extension; amdpm_gl.c: the driver's
 * functions, the extension strings, errors and GetProcAddress). See
 * amdpm_double.c for what the double is.
 *
 * The GL_INTEL_performance_query test double (intelpq_double.c) is built
 * from the same two files with GLD_INTEL defined: its query instances are
 * the AMD double's monitors, which it then keeps to itself (their entry
 * points are renamed gld_*AMD, out of GL's names, and the extension
 * strings and GetProcAddress give the Intel extension instead).
 */
#ifndef GPUPERF_TESTS_GL_AMDPM_H
#define GPUPERF_TESTS_GL_AMDPM_H

#ifdef GLD_INTEL
#define glGetPerfMonitorGroupsAMD gld_GetPerfMonitorGroupsAMD
#define glGetPerfMonitorCountersAMD gld_GetPerfMonitorCountersAMD
#define glGetPerfMonitorGroupStringAMD gld_GetPerfMonitorGroupStringAMD
#define glGetPerfMonitorCounterStringAMD gld_GetPerfMonitorCounterStringAMD
#define glGetPerfMonitorCounterInfoAMD gld_GetPerfMonitorCounterInfoAMD
#define glGenPerfMonitorsAMD gld_GenPerfMonitorsAMD
#define glDeletePerfMonitorsAMD gld_DeletePerfMonitorsAMD
#define glSelectPerfMonitorCountersAMD gld_SelectPerfMonitorCountersAMD
#define glBeginPerfMonitorAMD gld_BeginPerfMonitorAMD
#define glEndPerfMonitorAMD gld_EndPerfMonitorAMD
#define glGetPerfMonitorCounterDataAMD gld_GetPerfMonitorCounterDataAMD
#endif

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
#ifdef GLD_INTEL
#define EXT_NAME "GL_INTEL_performance_query"
#else
#define EXT_NAME "GL_AMD_performance_monitor"
#endif

typedef void (*gld_proc)(void);
typedef gld_proc (*gld_gpa)(const GLubyte *);
typedef gld_proc (*gld_egpa)(const char *);

/* The declarations GL/glx.h and EGL/egl.h would give (without X11). */
EXPORT gld_proc glXGetProcAddressARB(const GLubyte *name);
EXPORT gld_proc glXGetProcAddress(const GLubyte *name);
EXPORT gld_proc eglGetProcAddress(const char *name);

/* The driver functions the double calls, in the order of real_names
 * (amdpm_gl.c). */
typedef struct real_gl {
  const GLubyte *(*GetString)(GLenum);
  const GLubyte *(*GetStringi)(GLenum, GLuint);
  void (*GetIntegerv)(GLenum, GLint *);
  GLenum (*GetError)(void);
  void (*GenQueries)(GLsizei, GLuint *);
  void (*DeleteQueries)(GLsizei, const GLuint *);
  void (*BeginQuery)(GLenum, GLuint);
  void (*EndQuery)(GLenum);
  void (*QueryCounter)(GLuint, GLenum);
  void (*GetQueryiv)(GLenum, GLenum, GLint *);
  void (*GetQueryObjectuiv)(GLuint, GLenum, GLuint *);
  void (*GetQueryObjectui64v)(GLuint, GLenum, GLuint64 *);
} real_gl;

/* The driver's functions, as the next definition of each gives them;
 * valid once gld_real_ready() has returned 1. */
extern real_gl gld_real;

/* 1 when every function of gld_real is known (retried until then). */
int gld_real_ready(void);

/* Records err for glGetError unless an error is already pending. */
void gld_set_error(GLenum err);

/* glBeginPerfMonitorAMD and glEndPerfMonitorAMD, returning the error
 * they record (GL_NO_ERROR when done). With nested, monitor id may begin
 * while others are active, as long as it needs none of the driver's
 * query targets they hold and the active monitors select at most 32
 * counters in all (V3D's limit); without, it fails while any is. */
GLenum gld_begin_monitor(GLuint id, int nested);
GLenum gld_end_monitor(GLuint id);

#endif /* GPUPERF_TESTS_GL_AMDPM_H */
