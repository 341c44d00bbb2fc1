/*
 * record_merge.c - turning the parts of a recording into one trace
 * without ever destroying data.
 *
 * Every recorded process writes its own packet sequence into
 * <dir>/<N>.pftrace. Merging concatenates them (Perfetto traces
 * concatenate), keeping only whole packets of a part whose process was
 * killed in the middle of a write, into a temporary file beside the
 * output; only a complete file is renamed over the output, and an output
 * that was there before is kept as FILE.old (as perf does). A write error
 * (disk full, I/O error) cuts the new file back to its whole packets, so
 * that what it holds stays readable, and is reported naming the file. The
 * parts stay in <dir> until the caller removes them, so a failed merge
 * can be tried again with `gpuperf record --recover DIR`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_record.h"

/* See cli_record.h. */
char *cli_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) {
      if (ferror(f)) {
        free(buf);
        buf = NULL;
      }
      break;
    }
    char *nb = realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  *len = n;
  return buf;
}

/* Reads a varint at d[*p] (before end); false if cut or too long. */
static bool get_varint(const unsigned char *d, size_t end, size_t *p,
                       uint64_t *v) {
  *v = 0;
  for (int shift = 0; *p < end && shift < 64; shift += 7) {
    unsigned char b = d[(*p)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return true;
  }
  return false;
}

/* Length of the prefix of a trace made of whole `packet` fields. */
static size_t whole_packets(const unsigned char *d, size_t n, uint64_t *count) {
  size_t off = 0;
  *count = 0;
  while (off < n) {
    size_t p = off + 1;
    uint64_t len;
    if (d[off] != 0x0a || /* field 1, length-delimited */
        !get_varint(d, n, &p, &len) || len > n - p)
      break;
    off = p + (size_t)len;
    (*count)++;
  }
  return off;
}

typedef struct part {
  unsigned long n;
  char name[300];
  uint64_t last_ts; /* its latest packet time on the trace clock, 0: none */
} part;

/* The latest TracePacket.timestamp among the whole packets d[0..n) that
 * are on the trace clock (no timestamp_clock_id), 0 if none: the last
 * sign of life of the process that wrote them. */
static uint64_t last_time(const unsigned char *d, size_t n) {
  uint64_t last = 0, len, key, v;
  size_t off = 0;
  while (off < n) {
    size_t p = off + 1;
    if (!get_varint(d, n, &p, &len) || len > n - p)
      break;
    size_t end = p + (size_t)len;
    uint64_t ts = 0;
    bool other_clock = false;
    while (p < end && get_varint(d, end, &p, &key)) {
      uint32_t wt = (uint32_t)(key & 7);
      if (wt == 0) {
        if (!get_varint(d, end, &p, &v))
          break;
        if (key >> 3 == 8)
          ts = v;
        else if (key >> 3 == 58)
          other_clock = true;
      } else if (wt == 2) {
        if (!get_varint(d, end, &p, &v) || v > end - p)
          break;
        p += (size_t)v;
      } else if (wt == 1 || wt == 5) {
        p += wt == 1 ? 8 : 4;
      } else {
        break;
      }
    }
    if (!other_clock && ts > last)
      last = ts;
    off = end;
  }
  return last;
}

static int by_number(const void *a, const void *b) {
  const part *x = a, *y = b;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* Lists the <N>.pftrace parts of dir in sequence order; counts the
 * <N>.failed notes of processes that could not write theirs. */
static int list_parts(const char *dir, part **out, size_t *count,
                      rec_summary *sum) {
  DIR *dp = opendir(dir);
  if (!dp)
    return -errno;
  part *parts = NULL;
  size_t np = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(dp))) {
    char *end;
    unsigned long n = strtoul(de->d_name, &end, 10);
    if (end == de->d_name)
      continue;
    if (strcmp(end, ".failed") == 0) {
      if (sum->failed++ == 0) {
        char path[4600];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        size_t len = 0;
        char *why = cli_slurp(path, &len);
        size_t stop = 0;
        while (why && stop < len && why[stop] != '\n' && why[stop] != '\0')
          stop++;
        snprintf(sum->first_failed, sizeof(sum->first_failed), "%.*s",
                 (int)stop, why ? why : "");
        free(why);
      }
      continue;
    }
    if (strcmp(end, ".open") == 0) {
      /* Its process never finished it: killed by SIGKILL (or still
       * running, for a process the program left behind). */
      if (sum->unclean++ == 0)
        sum->first_unclean = n;
      continue;
    }
    if (strcmp(end, ".pftrace") != 0)
      continue;
    if (np == cap) {
      cap = cap ? cap * 2 : 16;
      part *q = realloc(parts, cap * sizeof(*q));
      if (!q) {
        closedir(dp);
        free(parts);
        return -ENOMEM;
      }
      parts = q;
    }
    parts[np].n = n;
    snprintf(parts[np].name, sizeof(parts[np].name), "%s", de->d_name);
    np++;
  }
  closedir(dp);
  if (np > 1)
    qsort(parts, np, sizeof(*parts), by_number);
  *out = parts;
  *count = np;
  return 0;
}

/* Whether process pid has ended and waits to be reaped. */
static bool is_zombie(int32_t pid) {
  char path[64], line[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return true;
  bool z = fgets(line, sizeof(line), f) && strstr(line, ") Z") != NULL;
  fclose(f);
  return z;
}

/* Writes n bytes; *done: how many reached fd (all, or fewer on error). */
static int write_all(int fd, const void *p, size_t n, size_t *done) {
  const char *c = p;
  *done = 0;
  while (n > 0) {
    ssize_t k = write(fd, c, n);
    if (k < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    c += k;
    n -= (size_t)k;
    *done += (size_t)k;
  }
  return 0;
}

/* Concatenates the parts into fd; on a write error, fd is cut back to the
 * packets written whole. Returns 0 or -errno (*what: the file at fault:
 * 0 the output, 1 a part that could not be read, whose name goes in
 * bad_part). */
static int concat(const char *dir, int fd, bool quiet, rec_summary *sum,
                  int *what, char *bad_part, size_t bad_size) {
  part *parts = NULL;
  size_t np = 0;
  int rc = list_parts(dir, &parts, &np, sum);
  *what = 1;
  if (rc != 0) {
    snprintf(bad_part, bad_size, "%s", dir);
    return rc;
  }
  /* The parts whose process died unseen (SIGKILL) first get the records
   * it had committed but not written, from its death page. */
  for (size_t i = 0; i < np; i++) {
    uint64_t lost = 0, salvaged = 0;
    int32_t pid = 0;
    int r = gp_record_lost_at_death(dir, (uint32_t)parts[i].n, &lost, &pid);
    if ((r != 0 && r != GP_ERANGE) ||
        (pid > 0 && kill(pid, 0) == 0 && !is_zombie(pid)))
      continue;
    r = gp_record_salvage(dir, (uint32_t)parts[i].n, &salvaged);
    sum->salvaged += salvaged;
    if (r == GP_ECORRUPT && !quiet)
      fprintf(stderr,
              "gpuperf record: sequence %lu: the shared memory of its killed "
              "process is damaged: %llu records before the damage salvaged, "
              "the rest lost\n",
              parts[i].n, (unsigned long long)salvaged);
    else if (r != 0 && r != GP_ENOENT && !quiet)
      fprintf(stderr,
              "gpuperf record: sequence %lu: cannot salvage the records of "
              "its killed process: %s\n",
              parts[i].n, gp_strerror(r));
  }
  for (size_t i = 0; i < np && rc == 0; i++) {
    char path[4600];
    snprintf(path, sizeof(path), "%s/%s", dir, parts[i].name);
    size_t len = 0;
    unsigned char *data = (unsigned char *)cli_slurp(path, &len);
    if (!data) {
      rc = errno ? -errno : -EIO;
      snprintf(bad_part, bad_size, "%s", path);
      break;
    }
    uint64_t count = 0;
    size_t keep = whole_packets(data, len, &count);
    if (keep < len) {
      sum->cut++;
      if (!quiet)
        fprintf(stderr,
                "gpuperf record: sequence %lu ends inside a packet (its "
                "process was killed while writing?): kept its first %llu "
                "packets\n",
                parts[i].n, (unsigned long long)count);
    }
    if (len > 0)
      sum->procs++;
    parts[i].last_ts = last_time(data, keep);
    size_t done = 0;
    rc = write_all(fd, data, keep, &done);
    if (rc != 0) {
      *what = 0;
      /* Keep what is whole: this part's packets that were written in
       * full, not a packet cut in two. */
      uint64_t whole = 0;
      size_t upto = whole_packets(data, done, &whole);
      sum->packets += whole;
      sum->bytes += upto;
      if (ftruncate(fd, (off_t)sum->bytes) != 0) {
        /* Nothing more can be done; the reader skips a cut packet. */
      }
      free(data);
      break;
    }
    free(data);
    sum->packets += count;
    sum->bytes += keep;
  }
  /* The parts whose process died unseen (SIGKILL): what it lost goes in
   * the trace, on a counter track of the process, at its last sign of
   * life (its latest packet, salvaged ones included), not at this moment
   * (a --recover may come much later). */
  uint64_t now = gp_get_timestamp();
  for (size_t i = 0; i < np && rc == 0; i++) {
    uint64_t lost = 0;
    int32_t pid = 0;
    int r = gp_record_lost_at_death(dir, (uint32_t)parts[i].n, &lost, &pid);
    if (r == -ENOENT) /* finished: nothing lost */
      continue;
    if (pid > 0 && kill(pid, 0) == 0 && !is_zombie(pid)) {
      /* Still running (left behind by the program): not dead, nothing
       * lost yet; the summary names it. */
      sum->unclean--;
      continue;
    }
    /* GP_ERANGE: lost is a lower bound; any other error: no count at all
     * (a damaged page). Either way the trace says some count is unknown. */
    bool counted = r == 0 || r == GP_ERANGE;
    if (r != 0)
      sum->lost_unknown++;
    if (!counted && !quiet)
      fprintf(stderr,
              "gpuperf record: sequence %lu: the shared memory of its killed "
              "process (%lu.open) is damaged: %s; its lost records cannot be "
              "counted\n",
              parts[i].n, parts[i].n, gp_strerror(r));
    if (counted)
      sum->lost += lost;
    uint64_t at = parts[i].last_ts ? parts[i].last_ts : now;
    uint32_t seq = (uint32_t)parts[i].n;
    if ((counted && (rc = gp_record_write_lost(fd, seq, pid, at, lost)) != 0) ||
        (r != 0 && (rc = gp_record_write_lost(fd, seq, pid, at,
                                              GP_RECORD_LOST_UNKNOWN)) != 0)) {
      *what = 0;
      if (ftruncate(fd, (off_t)sum->bytes) != 0) {
        /* as above */
      }
    }
  }
  free(parts);
  return rc;
}

/* See cli_record.h. */
int rec_merge_into(const char *dir, const char *output, bool quiet,
                   rec_summary *sum, char *err, size_t err_size) {
  memset(sum, 0, sizeof(*sum));
  char tmp[4400];
  snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", output);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    snprintf(err, err_size, "cannot create %s: %s", tmp, strerror(e));
    return -e;
  }
  fchmod(fd, 0644);
  int what = 0;
  char bad[4600] = "";
  int rc = concat(dir, fd, quiet, sum, &what, bad, sizeof(bad));
  if (fsync(fd) != 0 && rc == 0 && errno != EINVAL) {
    rc = -errno;
    what = 0;
  }
  if (close(fd) != 0 && rc == 0) {
    rc = -errno;
    what = 0;
  }
  if (rc != 0 && what == 1) {
    /* A part could not be read: the output is left as it was. */
    unlink(tmp);
    snprintf(err, err_size, "cannot read %s: %s", bad, strerror(-rc));
    return rc;
  }
  struct stat st;
  bool exists = lstat(output, &st) == 0;
  if (rc != 0) {
    /* Cut back to whole packets after a write error (a full disk): the
     * output stays as it was, and what was written is kept beside it, or
     * in its place where there was none. */
    char partial[4400];
    snprintf(partial, sizeof(partial), "%s.partial", output);
    const char *to = exists ? partial : output;
    bool kept = sum->packets > 0 && rename(tmp, to) == 0;
    if (!kept)
      unlink(tmp);
    char shown[4500] = "";
    if (kept)
      snprintf(shown, sizeof(shown), "; its first %llu packets are in %s",
               (unsigned long long)sum->packets, to);
    snprintf(err, err_size,
             "cannot write %s: %s: the trace is incomplete%s%s; the process "
             "parts are kept in %s (gpuperf record --recover makes the trace "
             "from them)",
             output, strerror(-rc),
             exists ? " and the previous file is "
                      "unchanged"
                    : "",
             shown, dir);
    return rc;
  }
  /* Complete: it replaces the output, which is kept as .old. */
  if (exists && S_ISREG(st.st_mode)) {
    char old[4400];
    snprintf(old, sizeof(old), "%s.old", output);
    if (rename(output, old) != 0) {
      int e = errno;
      snprintf(err, err_size,
               "cannot keep the previous %s as %s: %s (the new "
               "trace is %s)",
               output, old, strerror(e), tmp);
      return -e;
    }
  }
  if (rename(tmp, output) != 0) {
    int e = errno;
    snprintf(err, err_size, "cannot rename %s to %s: %s", tmp, output,
             strerror(e));
    return -e;
  }
  return 0;
}

/* See cli_record.h. */
bool rec_remove_parts(const char *dir) {
  DIR *dp = opendir(dir);
  if (!dp)
    return errno == ENOENT;
  struct dirent *de;
  while ((de = readdir(dp))) {
    char *end;
    strtoul(de->d_name, &end, 10);
    bool ours = (end != de->d_name &&
                 (strcmp(end, ".pftrace") == 0 || strcmp(end, ".failed") == 0 ||
                  strcmp(end, ".open") == 0)) ||
                strcmp(de->d_name, "config.pbtxt") == 0 ||
                strcmp(de->d_name, "activity_ranges") == 0 ||
                strcmp(de->d_name, "RECOVER") == 0;
    if (ours) {
      char path[4600];
      snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
      unlink(path);
    }
  }
  closedir(dp);
  return rmdir(dir) == 0;
}

/* s for a POSIX shell, between single quotes (a quote in it closed,
 * escaped and reopened): pasted, it is one word, nothing run. */
static void shell_quoted(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputs("'\\''", f);
    else
      fputc(*s, f);
  }
  fputc('\'', f);
}

/* See cli_record.h. */
void rec_write_note(const char *dir, const char *output) {
  char path[4400];
  snprintf(path, sizeof(path), "%s/RECOVER", dir);
  FILE *f = fopen(path, "w");
  if (!f)
    return;
  fprintf(f, "This folder holds the per-process parts of a `gpuperf record`\n"
             "that did not finish. Turn them into a trace with\n\n"
             "  gpuperf record --recover ");
  shell_quoted(f, dir);
  fputs(" -o ", f);
  shell_quoted(f, output);
  fputc('\n', f);
  fclose(f);
}

/* See cli_record.h. */
void rec_print_deaths(const rec_summary *sum) {
  if (!sum->unclean)
    return;
  fprintf(stderr,
          "gpuperf record: %u process%s (sequence %lu%s) ended without "
          "finishing %s trace (killed by SIGKILL?): %llu records salvaged, "
          "lost at process death: %llu%s records\n",
          sum->unclean, sum->unclean == 1 ? "" : "es", sum->first_unclean,
          sum->unclean > 1 ? " and others" : "",
          sum->unclean == 1 ? "its" : "their",
          (unsigned long long)sum->salvaged, (unsigned long long)sum->lost,
          sum->lost_unknown ? " or more" : "");
}

/* See cli_record.h. */
int rec_recover(const char *dir, const char *output, bool quiet) {
  char def[4400];
  if (!output) {
    /* <output>.parts-XXXXXX -> <output> */
    snprintf(def, sizeof(def), "%s", dir);
    size_t len = strlen(def);
    while (len > 1 && def[len - 1] == '/')
      def[--len] = '\0';
    char *p = strstr(def, ".parts-");
    if (!p || p == def)
      return cli_error(CLI_USAGE,
                       "--recover %s: not a FILE.parts-XXXXXX folder; name "
                       "the trace to write with -o",
                       dir);
    *p = '\0';
    output = def;
  }
  struct stat st;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return cli_error(CLI_BAD_INPUT, "--recover %s: %s", dir,
                     stat(dir, &st) != 0 ? strerror(errno) : "not a folder");
  rec_summary sum;
  char err[9000] = "";
  int rc = rec_merge_into(dir, output, quiet, &sum, err, sizeof(err));
  if (rc != 0)
    return cli_error(CLI_BAD_INPUT, "%s", err);
  if (!quiet) {
    char b[32];
    fprintf(stderr,
            "gpuperf record: recovered %u process%s, %llu packets, %s "
            "written to %s\n",
            sum.procs, sum.procs == 1 ? "" : "es",
            (unsigned long long)sum.packets,
            cli_fmt_bytes(b, sizeof(b), (double)sum.bytes), output);
    rec_print_deaths(&sum);
  }
  if (!rec_remove_parts(dir) && !quiet)
    fprintf(stderr, "gpuperf record: %s is not empty: left in place\n", dir);
  if (sum.lost || sum.lost_unknown)
    return cli_error(CLI_BAD_INPUT,
                     "records were lost at process death (%llu%s): %s has "
                     "the rest, and says so",
                     (unsigned long long)sum.lost,
                     sum.lost_unknown ? " or more" : "", output);
  return CLI_OK;
}
