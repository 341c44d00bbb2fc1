/*
 * top_screen.c - the screen of `gpuperf top` (top_screen.h).
 *
 * A view is built as lines no wider than the screen: tables are laid out
 * to the width by their callers, lists of fields wrap (top_field), and
 * anything still too long is cut at the width, on a character boundary of
 * UTF-8 text, so that no line ever wraps on the terminal. On a terminal
 * the lines are drawn over the previous view from the top left (no clear
 * before, so no flicker), as many as fit.
 *
 * While `top` runs interactively the terminal is in cbreak mode (no line
 * editing, no echo; ^C and ^Z still signal) so that a key press such as
 * `q` is read at once, as in top and nvtop. Whatever ends the process
 * puts the terminal back: top_keys_end() on the way out, an atexit
 * handler, and handlers for the fatal signals that restore it and raise
 * the signal again; ^Z restores it while stopped.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "top_screen.h"

#define MAX_LINES 400
#define MAX_WIDTH 512

static char lines[MAX_LINES][MAX_WIDTH + 1];
static int nlines, width = 80, height;

/* Lines being filled by top_field(). */
static char fields[MAX_WIDTH * 2];
static int fields_indent;

/* ------------------------------------------------------------------ */
/* Lines                                                                */

/* See top_screen.h. */
void top_screen_begin(int w, int h) {
  width = w < 40 ? 40 : w > MAX_WIDTH ? MAX_WIDTH : w;
  height = h > 0 ? h : 0;
  nlines = 0;
}

/* See top_screen.h. */
int top_screen_width(void) {
  return width;
}

/* Cuts s to at most `width` characters (UTF-8: continuation bytes do
 * not count), never inside a character. */
static void cut(char *s) {
  int cols = 0;
  for (char *p = s; *p; p++) {
    if (((unsigned char)*p & 0xc0) == 0x80)
      continue;
    if (cols++ == width) {
      *p = '\0';
      return;
    }
  }
}

static void add(const char *s) {
  if (nlines == MAX_LINES)
    return;
  snprintf(lines[nlines], sizeof(lines[0]), "%s", s);
  lines[nlines][strcspn(lines[nlines], "\n")] = '\0';
  cut(lines[nlines]);
  /* No trailing blanks: a cut table row need not end in spaces. */
  size_t n = strlen(lines[nlines]);
  while (n && lines[nlines][n - 1] == ' ')
    lines[nlines][--n] = '\0';
  nlines++;
}

/* See top_screen.h. */
void top_line(const char *fmt, ...) {
  char buf[MAX_WIDTH * 4];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  add(buf);
}

/* Display columns of UTF-8 s. */
static int cols_of(const char *s) {
  int n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xc0) != 0x80;
  return n;
}

/* See top_screen.h. */
void top_fields_begin(int indent, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(fields, sizeof(fields), fmt, ap);
  va_end(ap);
  fields_indent = indent < width / 2 ? indent : width / 2;
}

/* See top_screen.h. */
void top_field(const char *fmt, ...) {
  char f[MAX_WIDTH];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f, sizeof(f), fmt, ap);
  va_end(ap);
  if (cols_of(fields) + cols_of(f) > width && cols_of(fields) > fields_indent) {
    add(fields);
    snprintf(fields, sizeof(fields), "%*s%s", fields_indent, "",
             f[0] == ' ' ? f + strspn(f, " ") : f);
    return;
  }
  size_t n = strlen(fields);
  snprintf(fields + n, sizeof(fields) - n, "%s", f);
}

/* See top_screen.h. */
void top_fields_end(void) {
  add(fields);
  fields[0] = '\0';
}

/* See top_screen.h. */
void top_wrap(int indent, const char *fmt, ...) {
  char buf[MAX_WIDTH * 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  /* The leading blanks stay with the first word. */
  char *p = buf + strspn(buf, " "), *save = NULL;
  int lead = (int)(p - buf);
  char *w = strtok_r(p, " ", &save);
  top_fields_begin(indent, "%*s%s", lead, "", w ? w : "");
  while (w && (w = strtok_r(NULL, " ", &save)))
    top_field(" %s", w);
  top_fields_end();
}

/* See top_screen.h. */
bool top_screen_draw(FILE *out, bool tty) {
  if (!tty) {
    for (int i = 0; i < nlines; i++)
      fprintf(out, "%s\n", lines[i]);
    fputc('\n', out);
    return fflush(out) == 0;
  }
  int n = height > 1 && nlines > height - 1 ? height - 1 : nlines;
  fputs("\033[H", out);
  for (int i = 0; i < n; i++)
    fprintf(out, "%s\033[K\n", lines[i]);
  fputs("\033[J", out); /* the rest of the screen */
  return fflush(out) == 0;
}

/* See top_screen.h. */
void top_terminal_size(int fd, int *w, int *h) {
  struct winsize ws;
  *w = 80;
  *h = 0;
  if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    *w = ws.ws_col;
    *h = ws.ws_row;
    return;
  }
  const char *c = getenv("COLUMNS");
  if (c && atoi(c) > 0)
    *w = atoi(c);
}

/* ------------------------------------------------------------------ */
/* The terminal                                                         */

static struct termios saved;
static volatile sig_atomic_t keys_on;
static volatile sig_atomic_t cut_wait;
volatile int top_resized;

static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* Puts the terminal back (async-signal-safe). */
static void restore(void) {
  if (!keys_on)
    return;
  static const char back[] = "\033[?25h\033[?1049l";
  tcsetattr(0, TCSAFLUSH, &saved);
  if (write(1, back, sizeof(back) - 1) < 0) {
    /* nothing more can be done on the way out */
  }
}

/* Cbreak mode, the alternate screen, no cursor (async-signal-safe). */
static void enter(void) {
  static const char in[] = "\033[?1049h\033[?25l";
  struct termios t = saved;
  t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
  t.c_cc[VMIN] = 0;
  t.c_cc[VTIME] = 0;
  tcsetattr(0, TCSAFLUSH, &t);
  if (write(1, in, sizeof(in) - 1) < 0) {
    /* drawn plainly then */
  }
}

static void on_fatal(int sig) {
  restore();
  keys_on = 0;
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_tstp(int sig) {
  int e = errno;
  restore();
  /* Stop as the default action would, here: SIGTSTP is blocked while
   * its handler runs, so it is let through for the raise. */
  struct sigaction dfl, mine;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGTSTP, &dfl, &mine);
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGTSTP);
  sigprocmask(SIG_UNBLOCK, &set, &old);
  raise(sig); /* stops here until SIGCONT */
  sigprocmask(SIG_SETMASK, &old, NULL);
  sigaction(SIGTSTP, &mine, NULL);
  if (keys_on)
    enter();
  top_resized = 1; /* redraw: the shell wrote over the screen */
  cut_wait = 1;
  errno = e;
}

static void on_winch(int sig) {
  (void)sig;
  top_resized = 1;
  cut_wait = 1;
}

/* See top_screen.h. */
bool top_keys_begin(void) {
  if (keys_on)
    return true;
  if (!isatty(0) || !isatty(1) || tcgetattr(0, &saved) != 0)
    return false;
  static bool registered;
  if (!registered && atexit(top_keys_end) == 0)
    registered = true;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_fatal;
  sa.sa_flags = SA_RESETHAND;
  for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
    sigaction(fatal[i], &sa, NULL);
  sa.sa_flags = 0;
  sa.sa_handler = on_tstp;
  sigaction(SIGTSTP, &sa, NULL);
  sa.sa_handler = on_winch;
  sigaction(SIGWINCH, &sa, NULL);
  keys_on = 1;
  enter();
  return true;
}

/* See top_screen.h. */
void top_keys_end(void) {
  if (!keys_on)
    return;
  fflush(stdout);
  restore();
  keys_on = 0;
  signal(SIGTSTP, SIG_DFL);
  signal(SIGWINCH, SIG_DFL);
}

static double mono_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* See top_screen.h. */
int top_wait_key(double seconds) {
  double end = mono_s() + seconds;
  cut_wait = 0;
  for (;;) {
    double left = end - mono_s();
    if (left <= 0)
      return 0;
    if (!keys_on) {
      struct timespec ts = {(time_t)left, (long)((left - floor(left)) * 1e9)};
      if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
        return -1;
      return 0;
    }
    struct pollfd p = {.fd = 0, .events = POLLIN};
    int rc = poll(&p, 1, (int)ceil(left * 1000));
    if (rc < 0 && errno == EINTR)
      return -1;
    if (cut_wait)
      return -1;
    if (rc > 0) {
      unsigned char c;
      ssize_t n = read(0, &c, 1);
      if (n == 1)
        return c;
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
        return 'q'; /* the terminal is gone */
    }
  }
}

/* ------------------------------------------------------------------ */
/* Units                                                                */

/* 1234567 -> "1.23 M"; small values as they are. */
static const char *fmt_count(char *buf, size_t size, double v) {
  static const char *const sfx[] = {"", " k", " M", " G", " T", " P"};
  int i = 0;
  double a = fabs(v);
  if (a < 10000) {
    snprintf(buf, size, a == floor(a) ? "%.0f" : "%.3g", v);
    return buf;
  }
  while (a >= 1000 && i < 5) {
    a /= 1000;
    v /= 1000;
    i++;
  }
  snprintf(buf, size, "%.*f%s", a < 10 ? 2 : a < 100 ? 1 : 0, v, sfx[i]);
  return buf;
}

/* The power of 1000 (or 1024 with binary) of a unit's prefix, from its
 * name's start ("KILO...", "MEGA...", "MILLI..."), and the rest. */
static double prefix(const char *unit, const char **rest, bool binary) {
  static const struct {
    const char *p;
    int exp;
  } pre[] = {{"KILO", 1}, {"MEGA", 2},   {"GIGA", 3},   {"TERA", 4},
             {"PETA", 5}, {"MILLI", -1}, {"MICRO", -2}, {"NANO", -3}};
  for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++) {
    size_t n = strlen(pre[i].p);
    if (!strncmp(unit, pre[i].p, n)) {
      *rest = unit + n;
      return pow(binary && pre[i].exp > 0 ? 1024.0 : 1000.0, pre[i].exp);
    }
  }
  *rest = unit;
  return 1;
}

/* See top_screen.h. */
const char *top_fmt_value(char *buf, size_t size, double v, const char *unit) {
  const char *base = "";
  double f = prefix(unit ? unit : "", &base, true);
  if (!strcmp(base, "BYTE"))
    return cli_fmt_bytes(buf, size, v * f);
  f = prefix(unit ? unit : "", &base, false);
  double x = v * f;
  if (!strcmp(base, "PERCENT")) {
    snprintf(buf, size, "%.1f %%", v);
  } else if (!strcmp(base, "HERTZ")) {
    if (fabs(x) >= 1e9)
      snprintf(buf, size, "%.2f GHz", x / 1e9);
    else if (fabs(x) >= 1e6)
      snprintf(buf, size, "%.0f MHz", x / 1e6);
    else if (fabs(x) >= 1e3)
      snprintf(buf, size, "%.0f kHz", x / 1e3);
    else
      snprintf(buf, size, "%.0f Hz", x);
  } else if (!strcmp(base, "SECOND")) {
    cli_fmt_ns(buf, size, x * 1e9);
  } else if (!strcmp(base, "MINUTE") || !strcmp(base, "HOUR")) {
    cli_fmt_ns(buf, size, v * (base[0] == 'M' ? 60e9 : 3600e9));
  } else if (!strcmp(base, "BIT")) {
    char n[32];
    snprintf(buf, size, "%sbit", fmt_count(n, sizeof(n), x));
  } else if (!strcmp(base, "WATT")) {
    snprintf(buf, size, "%.1f W", x);
  } else if (!strcmp(base, "JOULE")) {
    snprintf(buf, size, "%.1f J", x);
  } else if (!strcmp(base, "VOLT") || !strcmp(base, "AMPERE")) {
    snprintf(buf, size, "%.2f %c", x, base[0]);
  } else if (!strcmp(base, "CELSIUS") || !strcmp(base, "FAHRENHEIT") ||
             !strcmp(base, "KELVIN")) {
    snprintf(buf, size, "%.1f %c", v, base[0]);
  } else {
    fmt_count(buf, size, v); /* counts: cycles, vertices, instructions */
  }
  return buf;
}
