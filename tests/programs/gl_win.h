/*
 * gl_win.h - a window with a GL context for the GL test programs
 * (gl_win.c): an X window at the top left of the screen, no window
 * manager needed (Xvfb), with a desktop GL context through GLX
 * (compatibility or core profile) or an OpenGL ES context through EGL.
 */
#ifndef GPUPERF_TESTS_GL_WIN_H
#define GPUPERF_TESTS_GL_WIN_H

#include <stdbool.h>

typedef enum gl_win_api {
  GL_WIN_COMPAT, /* GLX, the default context (compatibility profile) */
  GL_WIN_CORE,   /* GLX, a 3.3 core profile context */
  GL_WIN_ES,     /* EGL, OpenGL ES 3.0 */
  GL_WIN_ES2,    /* EGL, OpenGL ES 2.0 */
} gl_win_api;

/* Opens the window (width x height at 0,0) and makes its context current.
 * Returns false after a message on stderr. */
bool gl_win_open(gl_win_api api, int width, int height);

/* A GL function of the context's API, or NULL. */
void *gl_win_proc(const char *name);

/* Presents the frame (glXSwapBuffers or eglSwapBuffers). */
void gl_win_swap(void);

/* The context's version, as GL_VERSION says it. */
void gl_win_version(int *major, int *minor);

/* Closes the window and its context. */
void gl_win_close(void);

#endif /* GPUPERF_TESTS_GL_WIN_H */
