/*
 * tracefs_parse.c - one line of tracefs' trace_pipe text, as the kernel
 * prints it (kernel/trace/trace_output.c, default options):
 *
 *   TASK-PID [CPU] FLAGS SECONDS.MICROS: EVENT: FIELDS
 *
 * with the event's own "print fmt" after the name (key=value or key:value
 * pairs for the GPU events). Kept apart from the reader (tracefs.c) so
 * that it depends on libc only, for its fuzz target.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracefs.h"

/* See tracefs.h. */
bool gp__tracefs_parse(const char *line, gp__tracefs_event *ev) {
  memset(ev, 0, sizeof(*ev));
  /* "TASK-PID [CPU] FLAGS SECONDS: EVENT: FIELDS"; TASK may hold spaces
   * and dashes: the PID is what follows the last '-' before " [". */
  const char *br = strstr(line, " [");
  if (!br)
    return false;
  const char *dash = br;
  while (dash > line && dash[-1] != '-')
    dash--;
  if (dash == line)
    return false;
  ev->pid = (uint32_t)strtoul(dash, NULL, 10);
  const char *task = line;
  while (*task == ' ')
    task++;
  size_t tl = (size_t)(dash - 1 - task);
  snprintf(ev->task, sizeof(ev->task), "%.*s", (int)tl, task);
  ev->cpu = (uint32_t)strtoul(br + 2, NULL, 10);
  /* The timestamp ends with ": " and is the first such token after "]". */
  const char *p = strchr(br, ']');
  if (!p)
    return false;
  const char *colon = strstr(p, ": ");
  if (!colon)
    return false;
  const char *ts = colon;
  while (ts > p && ts[-1] != ' ')
    ts--;
  char *end;
  unsigned long long sec = strtoull(ts, &end, 10);
  unsigned long long frac = 0;
  int digits = 0;
  if (*end == '.') {
    for (const char *d = end + 1; *d >= '0' && *d <= '9' && digits < 9;
         d++, digits++)
      frac = frac * 10 + (unsigned long long)(*d - '0');
  }
  for (int d = digits; d < 9; d++)
    frac *= 10;
  ev->ts_ns = sec * 1000000000ull + frac;
  const char *name = colon + 2;
  const char *nend = strstr(name, ": ");
  size_t nl = nend ? (size_t)(nend - name) : strcspn(name, "\n");
  snprintf(ev->event, sizeof(ev->event), "%.*s", (int)nl, name);
  const char *f = nend ? nend + 2 : name + nl;
  snprintf(ev->fields, sizeof(ev->fields), "%.*s", (int)strcspn(f, "\n"), f);
  return true;
}

/* See tracefs.h. */
bool gp__tracefs_field(const gp__tracefs_event *ev, const char *key,
                       uint64_t *v) {
  size_t kl = strlen(key);
  for (const char *p = ev->fields; (p = strstr(p, key)) != NULL; p += kl) {
    bool start = p == ev->fields || p[-1] == ' ' || p[-1] == ',';
    if (start && (p[kl] == '=' || p[kl] == ':')) {
      *v = strtoull(p + kl + 1, NULL, 0);
      return true;
    }
  }
  return false;
}

/* See tracefs.h. */
bool gp__tracefs_token(const gp__tracefs_event *ev, const char *key, char *buf,
                       size_t size) {
  size_t kl = strlen(key);
  for (const char *p = ev->fields; (p = strstr(p, key)) != NULL; p += kl) {
    bool start = p == ev->fields || p[-1] == ' ' || p[-1] == ',';
    if (!start || p[kl] != '=')
      continue;
    const char *v = p + kl + 1;
    size_t n = strcspn(v, ", ");
    if (n >= size)
      n = size - 1;
    memcpy(buf, v, n);
    buf[n] = '\0';
    return true;
  }
  return false;
}
