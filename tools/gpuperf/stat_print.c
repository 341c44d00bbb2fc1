/*
 * stat_print.c - `gpuperf stat`'s totals printed as `perf stat` prints
 * them: the text form (thousands separators, "+- x%" with -r, the metric
 * column after '#'), -x SEP (perf's CSV fields in their order) and --json.
 * The rows are cmd_stat.c's (cli_stat.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_stat.h"

/* ------------------------------------------------------------------ */
/* Printing                                                             */

/* v with `decimals` decimals and its integer part in groups of three,
 * as perf stat prints with "%'.0f" and "%'.2f" in an English locale:
 * 1234567.891 -> "1,234,567.89" (2), "1,234,568" (0). */
static const char *stat_fmt_num(char *buf, size_t size, double v,
                                int decimals) {
  char tmp[64];
  if (!(fabs(v) < 1e18)) { /* NaN, infinities and the huge: as printf does */
    snprintf(buf, size, "%.*f", decimals, v);
    return buf;
  }
  snprintf(tmp, sizeof(tmp), "%.*f", decimals, fabs(v));
  size_t len = strcspn(tmp, "."), o = 0;
  if (v < 0 && strspn(tmp, "0.") != strlen(tmp) && o < size - 1)
    buf[o++] = '-'; /* not "-0" for a value that rounds to zero */
  for (size_t i = 0; tmp[i] && o < size - 1; i++) {
    if (i > 0 && i < len && (len - i) % 3 == 0 && o < size - 1)
      buf[o++] = ',';
    buf[o++] = tmp[i];
  }
  buf[o] = '\0';
  return buf;
}

/* A count shown as perf shows counts: rounded, in groups of three. */
static const char *fmt_count(char *buf, size_t size, double v) {
  return stat_fmt_num(buf, size, v, 0);
}

/* The spread of r's runs: the standard error of the mean, in % of it
 * (perf stat -r's "+- x%"); NaN for one run. A run without the row
 * counts as a zero. */
static double stat_spread(const stat_row *r) {
  if (stat_counted < 2 || r->value == 0)
    return NAN;
  double n = stat_counted, mean = r->rsum / n;
  double var = (r->rsq - n * mean * mean) / (n - 1);
  return var > 0 ? 100.0 * sqrt(var / n) / fabs(mean) : 0.0;
}

/* The function name of a kernel: the demangled name up to its parameter
 * list, as `gpuperf report` shows it. */
static const char *short_name(char *buf, size_t size, const char *k) {
  snprintf(buf, size, "%.*s", (int)strcspn(k ? k : "", "("), k ? k : "");
  return buf;
}

static void json_str(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
    if (*p == '"' || *p == '\\')
      fprintf(out, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(out, "\\u%04x", *p);
    else
      fputc(*p, out);
  fputc('"', out);
}

/* The elapsed time of the (mean) run in ns: the run time -x gives a
 * counter that counted all along (set by stat_print_report). */
static double elapsed_ns;

/*
 * One value in the machine-readable forms (-x SEP, --json); runtime_ns:
 * the time the counter counted (the sampled time behind an average, the
 * time a multiplexed counter was scheduled), or NaN (then -x gives the
 * run's elapsed time, --json nothing); pct: the share of the time it
 * counted, NaN for all of it (100.00); metric and munit: perf's "metric"
 * (the CPUs utilized, GHz, a rate "/sec"), or NaN and "".
 *
 * -x writes perf stat's fields in the order `man perf-stat` ("CSV
 * FORMAT") gives: value, unit, event, run time (ns), percentage of the
 * time the counter ran, the variance with -r only ("1.23%"), metric value,
 * metric unit; then gpuperf's own: device, kernel. (perf 6.1's own output
 * puts the variance after the event name instead; the order documented
 * is followed here.)
 */
static void print_machine_m(FILE *out, double v, const char *unit,
                            const char *event, const char *dev,
                            const char *kernel, double sp, double runtime_ns,
                            double pct, double metric, const char *munit) {
  char k[256];
  short_name(k, sizeof(k), kernel);
  if (stat_json) {
    fprintf(out, "{\"counter-value\": %.15g, \"unit\": ", v);
    json_str(out, unit);
    fputs(", \"event\": ", out);
    json_str(out, event);
    fputs(", \"device\": ", out);
    json_str(out, dev);
    fputs(", \"kernel\": ", out);
    json_str(out, k);
    if (!isnan(sp))
      fprintf(out, ", \"variance\": %.2f", sp);
    if (!isnan(runtime_ns))
      fprintf(out, ", \"event-runtime\": %.0f", runtime_ns);
    fprintf(out, ", \"pcnt-running\": %.2f", isnan(pct) ? 100.0 : pct);
    if (!isnan(metric))
      fprintf(out, ", \"metric-value\": %.3f, \"metric-unit\": \"%s\"", metric,
              munit);
    fputs("}\n", out);
  } else {
    double rt = isnan(runtime_ns) ? elapsed_ns : runtime_ns;
    fprintf(out, "%.15g%s%s%s%s%s%.0f%s%.2f%s", v, stat_sep, unit, stat_sep,
            event, stat_sep, rt, stat_sep, isnan(pct) ? 100.0 : pct, stat_sep);
    if (stat_repeats > 1) {
      if (!isnan(sp))
        fprintf(out, "%.2f%%", sp);
      fputs(stat_sep, out);
    }
    if (!isnan(metric))
      fprintf(out, "%.3f", metric);
    fprintf(out, "%s%s%s%s%s%s\n", stat_sep, munit, stat_sep, dev ? dev : "",
            stat_sep, k);
  }
}

static void print_machine(FILE *out, double v, const char *unit,
                          const char *event, const char *dev,
                          const char *kernel, double sp) {
  print_machine_m(out, v, unit, event, dev, kernel, sp, NAN, NAN, NAN, "");
}

/* A value in perf stat's units: ns as msec, bytes as bytes. */
static const char *human_unit(const stat_row *r, double *v) {
  if (!r->units || !strcmp(r->units, "-"))
    return "";
  if (!strcmp(r->units, "NANOSECOND")) {
    *v /= 1e6;
    return "msec";
  }
  if (!strcmp(r->units, "PERCENT"))
    return "%";
  if (!strcmp(r->units, "BYTE"))
    return "bytes";
  if (!strcmp(r->units, "HERTZ"))
    return "Hz";
  static const char *const counts[][2] = {
      {"VERTEX", "vertices"},      {"FRAGMENT", "fragments"},
      {"PRIMITIVE", "primitives"}, {"TRIANGLE", "triangles"},
      {"PIXEL", "pixels"},         {"INSTRUCTION", "instructions"}};
  for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
    if (!strcmp(r->units, counts[i][0]))
      return counts[i][1];
  return r->units;
}

/* The seconds device dev was sampled (its periodic windows), or
 * otherwise those elapsed. */
static double sampled_s(const char *dev, double elapsed_s) {
  for (size_t i = 0; i < stat_nrows; i++)
    if (stat_rows[i].kind == 'd' && stat_same(stat_rows[i].device, dev) &&
        stat_rows[i].value > 0)
      return stat_rows[i].value / 1e9;
  return elapsed_s;
}

static double host_value(const char *counter) {
  for (size_t i = 0; i < stat_nrows; i++)
    if (stat_rows[i].kind == 'h' && stat_same(stat_rows[i].counter, counter))
      return stat_rows[i].value;
  return NAN;
}

/* A count per second, perf's "/sec" metric: count / seconds, with K, M
 * or G past each thousand (perf's convert_unit_double()); munit gets
 * "/sec", "K/sec", ... */
static double per_second(double count, double seconds, char *munit,
                         size_t size) {
  static const char prefix[] = {'K', 'M', 'G'};
  double v = count / seconds;
  int p = -1;
  while (p < 2 && v > 1000.0) {
    v /= 1000.0;
    p++;
  }
  if (p < 0)
    snprintf(munit, size, "/sec");
  else
    snprintf(munit, size, "%c/sec", prefix[p]);
  return v;
}

/*
 * One counter's line. per_s: the seconds its count is a rate over (the
 * elapsed time for a device's totals, the kernel's GPU time for a
 * kernel's, task-clock for the host CPU's, as perf divides by it), or
 * NaN; averages, percentages and times have no rate.
 */
static void print_value(FILE *out, const stat_row *r, const char *indent,
                        double per_s) {
  char num[64], note[96] = "", rate_unit[16];
  double v = r->value, sp = stat_spread(r);
  const char *unit = human_unit(r, &v);
  /* perf stat's metrics: CPUs utilized, GHz, and rates. */
  double tc = host_value("task-clock"), metric = NAN;
  const char *munit = "";
  bool timed = r->units && (!strcmp(r->units, "NANOSECOND") ||
                            !strcmp(r->units, "PERCENT"));
  if (r->kind == 'h' && !strcmp(r->counter, "task-clock") && elapsed_ns > 0)
    metric = r->value / elapsed_ns, munit = "CPUs utilized";
  else if (r->kind == 'h' && !strcmp(r->counter, "cycles") && tc > 0)
    metric = r->value / tc, munit = "GHz";
  else if (!r->avg && !timed && per_s > 0)
    metric = per_second(r->value, per_s, rate_unit, sizeof(rate_unit)),
    munit = rate_unit;
  /* Multiplexed: the share of the time it counted. */
  double pct = r->enabled > 0 ? 100.0 * r->running / r->enabled : NAN;
  if (r->enabled > 0 && !(r->running > 0)) { /* never had its turn */
    if (stat_json) {
      fputs("{\"counter-value\": \"<not counted>\", \"event\": ", out);
      json_str(out, r->counter);
      fputs(", \"device\": ", out);
      json_str(out, r->device);
      fputs(", \"event-runtime\": 0, \"pcnt-running\": 0.00}\n", out);
    } else if (stat_sep) {
      fprintf(out, "<not counted>%s%s%s%s%s0%s0.00%s", stat_sep, "", stat_sep,
              r->counter, stat_sep, stat_sep, stat_sep);
      if (stat_repeats > 1)
        fputs(stat_sep, out);
      fprintf(out, "%s%s%s%s\n", stat_sep, stat_sep, r->device ? r->device : "",
              stat_sep);
    } else {
      fprintf(out, "%s%20s  %s\n", indent, "<not counted>", r->counter);
    }
    return;
  }
  if (stat_sep || stat_json) {
    /* The run time: a multiplexed counter's, an average's sampled time,
     * a device's (sampled) or a kernel's (GPU) time behind a count. */
    double rt = r->enabled > 0                ? r->running
                : r->avg                      ? r->weight
                : r->kind != 'h' && per_s > 0 ? per_s * 1e9
                                              : NAN;
    print_machine_m(out, v, unit, r->counter, r->device, r->kernel, sp, rt, pct,
                    metric, munit);
    return;
  }
  if (!strcmp(unit, "%"))
    snprintf(num, sizeof(num), "%.2f %%", v);
  else if (!strcmp(unit, "msec")) {
    stat_fmt_num(num, sizeof(num) - 8, v, 2);
    strcat(num, " msec");
  } else if (!r->avg)
    fmt_count(num, sizeof(num), v);
  else
    stat_fmt_num(num, sizeof(num), v, v == floor(v) ? 0 : 2);
  if (!isnan(metric))
    snprintf(note, sizeof(note), "# %8.3f %s", metric, munit);
  if (!isnan(sp)) {
    size_t n = strlen(note);
    snprintf(note + n, sizeof(note) - n, "%s( +-%6.2f%% )", n ? "  " : "", sp);
  }
  if (pct < 100.0) { /* as perf, the share only when it is not all */
    size_t n = strlen(note);
    snprintf(note + n, sizeof(note) - n, "%s(%.2f%%)", n ? "  " : "", pct);
  }
  bool unit_in_num = !strcmp(unit, "%") || !strcmp(unit, "msec");
  fprintf(out, "%s%20s  %-50s %s%s%s\n", indent, num, r->counter,
          unit_in_num ? "" : unit, *note && !unit_in_num && *unit ? "  " : "",
          note);
}

static int cmp_kernel_time(const void *a, const void *b) {
  const stat_row *x = *(const stat_row *const *)a,
                 *y = *(const stat_row *const *)b;
  if (x->time_ns != y->time_ns)
    return x->time_ns < y->time_ns ? 1 : -1;
  return strcmp(x->kernel, y->kernel);
}

/* The event name of a count of render stages of a kind (the stat file's
 * STAGE field). */
static const char *stage_event(char *buf, size_t size, const char *kind) {
  static const char *const names[][2] = {{"command-buffer", "command-buffers"},
                                         {"render-pass", "render-passes"},
                                         {"compute", "compute-dispatches"},
                                         {"transfer", "transfers"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!strcmp(kind, names[i][0]))
      return names[i][1];
  snprintf(buf, size, "%s", kind); /* a kind of a later version */
  return buf;
}

/* A graphics device's render stages and submissions (Vulkan). */
static void print_stages(FILE *out, const char *dev) {
  for (size_t j = 0; j < stat_nrows; j++) {
    const stat_row *r = &stat_rows[j];
    if (!r->rn || !stat_same(r->device, dev))
      continue;
    char num[48], ev[64], t[32];
    if (r->kind == 'u') {
      if (stat_sep || stat_json)
        print_machine(out, r->value, "", "submits", dev, NULL, stat_spread(r));
      else
        fprintf(out, "%20s  %s\n", fmt_count(num, sizeof(num), r->value),
                "submits");
    } else if (r->kind == 's') {
      const char *evn = stage_event(ev, sizeof(ev), r->kernel);
      if (stat_sep || stat_json) {
        char tev[80];
        snprintf(tev, sizeof(tev), "%s-time", r->kernel);
        print_machine(out, (double)r->launches, "", evn, dev, NULL, NAN);
        print_machine(out, (double)r->time_ns / 1e6, "msec", tev, dev, NULL,
                      stat_spread(r));
      } else {
        fprintf(out, "%20s  %-50s #  %s GPU time\n",
                fmt_count(num, sizeof(num), (double)r->launches), evn,
                cli_fmt_ns(t, sizeof(t), (double)r->time_ns));
      }
    }
  }
}

/* The digits perf stat gives a mean beside its standard deviation sd:
 * two past the first significant one of sd (its get_precision() + 2). */
static int precision_of(double sd) {
  if (sd > 1)
    return 2;
  if (!(sd > 0))
    return 9; /* no spread: perf's one-run precision */
  int p = (int)lround(ceil(-log10(sd))) + 2;
  return p > 9 ? 9 : p;
}

/*
 * The times of the run: perf stat's footer in the text form ("seconds time
 * elapsed", then "seconds user" and "seconds sys" for one run; the mean
 * elapsed time "+-" its standard error for -r N, as perf prints it, without
 * user and sys); in the machine forms, time-elapsed, time-user and
 * time-sys values in seconds, with their spreads for -r.
 */
static void print_times(FILE *out, const stat_times *t) {
  if (stat_sep || stat_json) {
    double n = t->elapsed_s;
    print_machine(out, t->elapsed_s, "s", "time-elapsed", "", NULL,
                  n > 0 ? 100.0 * t->elapsed_se / n : NAN);
    print_machine(out, t->user_s, "s", "time-user", "", NULL,
                  t->user_s > 0 ? 100.0 * t->user_se / t->user_s : NAN);
    print_machine(out, t->sys_s, "s", "time-sys", "", NULL,
                  t->sys_s > 0 ? 100.0 * t->sys_se / t->sys_s : NAN);
    return;
  }
  if (isnan(t->elapsed_se)) {
    fprintf(out, "\n %17.9f seconds time elapsed\n\n", t->elapsed_s);
    fprintf(out, " %17.9f seconds user\n", t->user_s);
    fprintf(out, " %17.9f seconds sys\n\n", t->sys_s);
    return;
  }
  int p = precision_of(t->elapsed_se);
  fprintf(out, "\n %17.*f +- %.*f seconds time elapsed", p, t->elapsed_s, p,
          t->elapsed_se);
  if (t->elapsed_s > 0)
    fprintf(out, "  ( +-%6.2f%% )", 100.0 * t->elapsed_se / t->elapsed_s);
  fputs("\n\n", out);
}

/* See cli_stat.h. */
void stat_print_report(FILE *out, char **argv, const stat_times *times,
                       int crashed, int partial_sig) {
  elapsed_ns = times->elapsed_s * 1e9;
  if (!stat_sep && !stat_json) {
    fprintf(out, "\n Performance counter stats for '");
    for (int i = 0; argv[i]; i++)
      fprintf(out, "%s%s", i ? " " : "", argv[i]);
    fprintf(out, "'%s", stat_max_procs > 1 ? " (all its processes)" : "");
    if (stat_repeats > 1)
      fprintf(out, " (%d run%s%s)", stat_counted, stat_counted == 1 ? "" : "s",
              crashed ? ", crashed runs left out" : "");
    if (partial_sig > 0)
      fprintf(out, " (partial: killed by signal %d, %s)", partial_sig,
              strsignal(partial_sig));
    else if (partial_sig < 0)
      fputs(" (partial: a process died of a signal)", out);
    fputs(":\n", out);
  }
  /* Devices in order of first appearance. */
  for (size_t i = 0; i < stat_nrows; i++) {
    /* A device's sampled time alone does not make it a section. */
    if (stat_rows[i].kind == 'h' || stat_rows[i].kind == 'd' ||
        !stat_rows[i].rn)
      continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; j++)
      seen = stat_rows[j].kind != 'h' && stat_rows[j].kind != 'd' &&
             stat_rows[j].rn &&
             stat_same(stat_rows[j].device, stat_rows[i].device);
    if (seen)
      continue;
    const char *dev = stat_rows[i].device;
    if (!stat_sep && !stat_json)
      fprintf(out, "\n %s:\n", dev);
    for (size_t j = 0; j < stat_nrows; j++)
      if (stat_rows[j].kind == 'c' && stat_rows[j].rn &&
          stat_same(stat_rows[j].device, dev))
        print_value(out, &stat_rows[j], "", sampled_s(dev, times->elapsed_s));
    print_stages(out, dev);
    const stat_row *ks[MAX_ROWS];
    size_t nk = 0;
    for (size_t j = 0; j < stat_nrows; j++)
      if (stat_rows[j].kind == 'k' && stat_rows[j].rn &&
          stat_same(stat_rows[j].device, dev))
        ks[nk++] = &stat_rows[j];
    qsort(ks, nk, sizeof(ks[0]), cmp_kernel_time);
    for (size_t k = 0; k < nk; k++) {
      char t[32], name[256];
      short_name(name, sizeof(name), ks[k]->kernel);
      if (stat_sep || stat_json) {
        print_machine(out, (double)ks[k]->launches, "", "launches", dev,
                      ks[k]->kernel, NAN);
        print_machine(out, (double)ks[k]->time_ns / 1e6, "msec", "kernel-time",
                      dev, ks[k]->kernel, stat_spread(ks[k]));
      } else {
        fprintf(out, "\n   kernel %s: %llu launch%s, %s", name,
                (unsigned long long)ks[k]->launches,
                ks[k]->launches == 1 ? "" : "es",
                cli_fmt_ns(t, sizeof(t), (double)ks[k]->time_ns));
        if (!isnan(stat_spread(ks[k])))
          fprintf(out, " ( +-%6.2f%% )", stat_spread(ks[k]));
        fputc('\n', out);
      }
      for (size_t j = 0; j < stat_nrows; j++)
        if (stat_rows[j].kind == 'v' && stat_rows[j].rn &&
            stat_same(stat_rows[j].device, dev) &&
            stat_same(stat_rows[j].kernel, ks[k]->kernel))
          print_value(out, &stat_rows[j], "  ", (double)ks[k]->time_ns / 1e9);
    }
  }
  bool host = false;
  for (size_t i = 0; i < stat_nrows; i++) {
    if (stat_rows[i].kind != 'h' || !stat_rows[i].rn)
      continue;
    if (!host && !stat_sep && !stat_json)
      fprintf(out, "\n Host CPU (perf_event, the whole process tree):\n");
    host = true;
    print_value(out, &stat_rows[i], "", host_value("task-clock") / 1e9);
  }
  print_times(out, times);
}
