/*
 * local_probe.c - a GL program that links no GL library: it opens libEGL
 * itself with RTLD_LOCAL, as loaders and libgpuperf-gl.so's own probe
 * do, makes a surfaceless core context, and finds every GL function
 * through the eglGetProcAddress that the process's global scope gives
 * (the double's, when it is preloaded). Prints "KEY VALUE" lines:
 * the extension's index among glGetStringi's and the number of groups
 * glGetPerfMonitorGroupsAMD reports. Exit status 77 when no such context
 * can be made here.
 */
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <GL/glext.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef void (*proc)(void);
typedef proc (*gpa_fn)(const char *);
typedef void (*get_integer_fn)(GLenum, GLint *);
typedef const GLubyte *(*get_string_fn)(GLenum);

static void *need(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "libEGL has no %s\n", name);
    _exit(77);
  }
  return p;
}

int main(void) {
  void *egl = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!egl) {
    fprintf(stderr, "no libEGL.so.1\n");
    return 77;
  }
  PFNEGLGETPROCADDRESSPROC lib_gpa =
      (PFNEGLGETPROCADDRESSPROC)need(egl, "eglGetProcAddress");
  PFNEGLINITIALIZEPROC initialize =
      (PFNEGLINITIALIZEPROC)need(egl, "eglInitialize");
  PFNEGLBINDAPIPROC bind_api = (PFNEGLBINDAPIPROC)need(egl, "eglBindAPI");
  PFNEGLCREATECONTEXTPROC create =
      (PFNEGLCREATECONTEXTPROC)need(egl, "eglCreateContext");
  PFNEGLMAKECURRENTPROC make_current =
      (PFNEGLMAKECURRENTPROC)need(egl, "eglMakeCurrent");
  PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
      (PFNEGLGETPLATFORMDISPLAYEXTPROC)lib_gpa("eglGetPlatformDisplayEXT");
  EGLDisplay d = get_display ? get_display(EGL_PLATFORM_SURFACELESS_MESA,
                                           EGL_DEFAULT_DISPLAY, NULL)
                             : EGL_NO_DISPLAY;
  if (d == EGL_NO_DISPLAY || !initialize(d, NULL, NULL)) {
    fprintf(stderr, "no surfaceless EGL display\n");
    return 77;
  }
  EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION,
                    3,
                    EGL_CONTEXT_MINOR_VERSION,
                    3,
                    EGL_CONTEXT_OPENGL_PROFILE_MASK,
                    EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                    EGL_NONE};
  EGLContext c = EGL_NO_CONTEXT;
  if (bind_api(EGL_OPENGL_API))
    c = create(d, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs);
  if (c == EGL_NO_CONTEXT ||
      !make_current(d, EGL_NO_SURFACE, EGL_NO_SURFACE, c)) {
    fprintf(stderr, "no desktop OpenGL 3.3 core context on surfaceless EGL\n");
    return 77;
  }

  /* Every GL function through the global eglGetProcAddress. */
  gpa_fn gpa = (gpa_fn)dlsym(RTLD_DEFAULT, "eglGetProcAddress");
  printf("global_gpa_is_libegl %d\n", (void *)gpa == (void *)lib_gpa);
  if (!gpa)
    gpa = (gpa_fn)lib_gpa;
  get_integer_fn get_integer = (get_integer_fn)gpa("glGetIntegerv");
  PFNGLGETSTRINGIPROC get_stringi = (PFNGLGETSTRINGIPROC)gpa("glGetStringi");
  get_string_fn get_string = (get_string_fn)gpa("glGetString");
  PFNGLGETPERFMONITORGROUPSAMDPROC get_groups =
      (PFNGLGETPERFMONITORGROUPSAMDPROC)gpa("glGetPerfMonitorGroupsAMD");
  const GLubyte *renderer = get_string ? get_string(GL_RENDERER) : NULL;
  printf("renderer %s\n", renderer ? (const char *)renderer : "(null)");
  GLint n = 0, index = -1;
  if (get_integer && get_stringi) {
    get_integer(GL_NUM_EXTENSIONS, &n);
    for (GLint i = 0; i < n; i++) {
      const char *e = (const char *)get_stringi(GL_EXTENSIONS, (GLuint)i);
      if (e && !strcmp(e, "GL_AMD_performance_monitor"))
        index = i;
    }
  }
  printf("num_extensions %d\next_index %d\n", n, index);
  GLint groups = -1;
  if (index >= 0 && get_groups)
    get_groups(&groups, 0, NULL);
  printf("groups %d\n", groups);
  make_current(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  return 0;
}
