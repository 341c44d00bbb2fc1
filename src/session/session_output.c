/*
 * session_output.c - the file a session writes, and how it takes the
 * place of the file named (gp_session_start()): written beside it and
 * renamed at a good stop, so that a session that fails or is killed
 * never destroys what was there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sessionInt.h"

/* See sessionInt.h. */
int gp__session_open_output(gp_session *s, const char *path,
                            const gp_session_options *opts) {
  struct stat st;
  bool direct = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
  /* A link to a file: the file is replaced, the link stays. */
  char *real = NULL;
  if (!direct && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
    real = realpath(path, NULL);
  s->path = real ? real : strdup(path);
  size_t n = s->path ? strlen(s->path) + sizeof(".tmp-XXXXXX") : 0;
  s->tmp = direct || !s->path ? NULL : malloc(n);
  if (!s->path || (!direct && !s->tmp))
    return GP_ENOMEM;
  if (!direct) {
    snprintf(s->tmp, n, "%s.tmp-XXXXXX", s->path);
    s->fd = mkostemp(s->tmp, O_CLOEXEC);
    int e = errno;
    if (s->fd >= 0)
      fchmod(s->fd, 0644);
    /* A file the user may write in a folder they may not: written in
     * place, as asked, rather than not at all. */
    else if ((e == EACCES || e == EPERM) && access(path, W_OK) == 0)
      direct = true;
    errno = e;
  }
  if (direct) {
    free(s->tmp);
    s->tmp = NULL;
    s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  }
  if (s->fd < 0) {
    int e = errno;
    gp__session_error(opts, "cannot create %s: %s", path, strerror(e));
    free(s->tmp);
    s->tmp = NULL; /* nothing was created */
    return -e;
  }
  s->own_fd = true;
  return 0;
}

/* See sessionInt.h. */
int gp__session_finish_output(gp_session *s, int rc) {
  if (!s->tmp)
    return rc;
  struct stat st;
  if (rc != 0 && lstat(s->path, &st) == 0) {
    size_t n = strlen(s->path) + sizeof(".old");
    char *old = malloc(n);
    bool kept = old && snprintf(old, n, "%s.old", s->path) > 0 &&
                rename(s->path, old) == 0;
    free(old);
    if (!kept)
      return rc; /* the previous file stays; the partial trace at s->tmp */
  }
  if (rename(s->tmp, s->path) != 0)
    return rc ? rc : -errno; /* then the trace is still at s->tmp */
  free(s->tmp);
  s->tmp = NULL;
  return rc;
}
