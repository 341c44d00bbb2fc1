/*
 * amdpm.h - what the two files of the GL_AMD_performance_monitor test
 * double share (amdpm_double.c: the extension; amdpm_gl.c: the driver's
 * functions, the extension strings, errors and GetProcAddress). See
 * amdpm_double.c for what the double is.
 */
#ifndef GPUPERF_TESTS_GL_AMDPM_H
#define GPUPERF_TESTS_GL_AMDPM_H

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
#define EXT_NAME "GL_AMD_performance_monitor"

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

#endif /* GPUPERF_TESTS_GL_AMDPM_H */
