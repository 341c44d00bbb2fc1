/*
 * hud_term.c - the HUD's line on a terminal, which never touches what the
 * program prints.
 *
 * The bottom line is the HUD's; the program keeps the lines above it. A
 * scroll region (DECSTBM, ESC [ 1 ; rows-1 r) over those lines makes the
 * program's output scroll there, whatever it prints, and each frame is
 * one write(2) that saves the cursor (ESC 7, which keeps the character
 * attributes too), moves to the bottom line, clears it, draws, and puts
 * the cursor back (ESC 8); the terminal driver never splits one write
 * with another process's. Setting the region, which homes the cursor, is
 * done as apt's progress bar does it: an index (ESC D) first, so that a
 * cursor on the bottom line scrolls the screen one line up and is off the
 * HUD's line, then save, region, restore, up one line.
 *
 * One process per terminal holds the line: a process tree under the HUD
 * (a shell script, `gpuperf record`'s children) may have several
 * processes that use GPUs, and two lines fighting over one row would each
 * be half drawn. The first to claim it (an flock on the terminal, opened
 * anew so that it is not shared with an inherited descriptor) keeps it to
 * its exit; the others draw nothing (their rows still go to
 * GPUPERF_HUD_FILE).
 *
 * The terminal is given back at exit, on fatal signals and _exit (the
 * HUD's finisher, core/death.c), and set anew when its size changes
 * (SIGWINCH wakes the HUD's thread; each tick also looks). A process
 * killed by SIGKILL leaves the region set: `tput reset` (or `printf
 * '\033[r'`) gives it back.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "hudInt.h"

/* Who may write to the terminal: the drawing thread or the releaser. */
enum { T_NONE, T_IDLE, T_DRAWING, T_RELEASED };

static _Atomic int state = T_NONE;
static int lock_fd = -1;
static int rows, cols;          /* the size the region was set for */
static _Atomic int region_rows; /* rows when the region was last set */
static _Atomic int wake = -1;   /* the HUD thread's wake-up descriptor */

/* Writes all of buf to stderr (async-signal-safe). */
static void put(const char *buf, size_t len) {
  while (len) {
    ssize_t k = write(2, buf, len);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return;
    buf += k;
    len -= (size_t)k;
  }
}

/* Appends the decimal v to buf at *o (async-signal-safe). */
static void put_int(char *buf, size_t *o, int v) {
  char d[12];
  int n = 0;
  do {
    d[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v && n < (int)sizeof(d));
  while (n)
    buf[(*o)++] = d[--n];
}

static void append(char *buf, size_t *o, const char *s) {
  size_t n = strlen(s);
  memcpy(buf + *o, s, n);
  *o += n;
}

static void on_winch(int sig) {
  (void)sig;
  int saved = errno;
  int fd = atomic_load(&wake);
  uint64_t one = 1;
  if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
    /* a full eventfd: the thread is awake already */
  }
  errno = saved;
}

static bool size_now(int *r, int *c) {
  struct winsize ws;
  if (ioctl(2, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0)
    return false;
  *r = ws.ws_row;
  *c = ws.ws_col;
  return true;
}

/* Sets the region over rows 1 .. r-1, the cursor staying where the
 * program's text is: IND, DECSC, DECSTBM, DECRC, CUU. */
static void set_region(int r) {
  char buf[64];
  size_t o = 0;
  append(buf, &o, "\033D\0337\033[1;");
  put_int(buf, &o, r - 1);
  append(buf, &o, "r\0338\033[1A");
  put(buf, o);
  atomic_store(&region_rows, r);
}

/* See hudInt.h. */
bool gp__hud_term_claim(int wake_fd) {
  if (atomic_load(&state) != T_NONE)
    return atomic_load(&state) != T_RELEASED;
  char name[256];
  if (!isatty(2) || ttyname_r(2, name, sizeof(name)) != 0)
    return false;
  int fd = open(name, O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return false;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd); /* another process's HUD holds this terminal */
    return false;
  }
  lock_fd = fd;
  if (!size_now(&rows, &cols))
    rows = cols = 0;
  if (rows >= 3)
    set_region(rows);
  atomic_store(&wake, wake_fd);
  struct sigaction old;
  if (sigaction(SIGWINCH, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
      old.sa_handler == SIG_DFL) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_winch;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGWINCH, &sa, NULL);
  }
  atomic_store(&state, T_IDLE);
  return true;
}

/* See hudInt.h. */
int gp__hud_term_check(void) {
  if (atomic_load(&state) != T_IDLE)
    return 0;
  int r, c;
  if (!size_now(&r, &c))
    return 0;
  if (r != rows || c != cols) {
    rows = r;
    cols = c;
    if (r >= 3) {
      int expect = T_IDLE;
      if (!atomic_compare_exchange_strong(&state, &expect, T_DRAWING))
        return 0;
      set_region(r);
      atomic_store(&state, T_IDLE);
    }
  }
  return rows >= 3 && cols >= 2 ? cols - 1 : 0;
}

/* See hudInt.h. */
void gp__hud_term_draw(const char *line, size_t len) {
  char buf[2048];
  size_t o = 0;
  if (len > sizeof(buf) - 32)
    len = sizeof(buf) - 32;
  append(buf, &o, "\0337\033[");
  put_int(buf, &o, rows);
  append(buf, &o, ";1H\033[2K");
  memcpy(buf + o, line, len);
  o += len;
  append(buf, &o, "\0338");
  int expect = T_IDLE;
  if (!atomic_compare_exchange_strong(&state, &expect, T_DRAWING))
    return;
  put(buf, o);
  atomic_store(&state, T_IDLE);
}

/* See hudInt.h. */
void gp__hud_term_release(void) {
  int s = atomic_load(&state);
  /* A frame being written on another thread ends within microseconds;
   * one that never ends (its thread crashed there) is not waited for. */
  for (long spin = 0; s == T_DRAWING && spin < 20000000; spin++)
    s = atomic_load(&state);
  if (s == T_NONE || s == T_RELEASED ||
      !atomic_compare_exchange_strong(&state, &s, T_RELEASED))
    return;
  int rr = atomic_load(&region_rows);
  if (rr < 3)
    return; /* no region was set */
  /* DECSC, the whole screen scrolls again, the HUD's line is cleared
   * where the region left it (unless the size changed since: the line
   * may have moved with the text), DECRC. */
  char buf[64];
  size_t o = 0;
  append(buf, &o, "\0337\033[r");
  int r, c;
  if (size_now(&r, &c) && r == rr) {
    append(buf, &o, "\033[");
    put_int(buf, &o, rr);
    append(buf, &o, ";1H\033[2K");
  }
  append(buf, &o, "\0338");
  put(buf, o);
}

/* See hudInt.h. */
void gp__hud_term_unhook(void) {
  struct sigaction old;
  if (sigaction(SIGWINCH, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
      old.sa_handler == on_winch) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGWINCH, &sa, NULL);
  }
  atomic_store(&wake, -1);
}
