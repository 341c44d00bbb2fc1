/*
 * test_conformance.c - Perfetto's own GPU diff tests, run through our
 * trace processor: for every case in $GPUPERF_SHARED/conformance, import
 * trace.pb, run query.sql, and compare with expected.csv the way
 * Perfetto's runner does (leading blank lines dropped, each line
 * whitespace-stripped). Cases whose trace is not in the snapshot are
 * listed, since they cannot be run.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/tputil.h"

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

TEST(tp_conformance_all_cases) {
  const char *shared = tp_shared();
  if (!shared)
    SKIP("GPUPERF_SHARED is not set: no conformance cases to run");
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s/conformance", shared);
  DIR *d = opendir(dir);
  if (!d)
    SKIP("%s is absent: no conformance cases to run", dir);
  char *names[512];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 512)
    if (e->d_name[0] != '.')
      names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof(names[0]), cmp_names);
  int ran = 0, failed = 0, missing = 0;
  for (int i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof(path), "%s/%s/query.sql", dir, names[i]);
    char *sql = tp_read_file(path, NULL);
    snprintf(path, sizeof(path), "%s/%s/expected.csv", dir, names[i]);
    char *expected = tp_read_file(path, NULL);
    snprintf(path, sizeof(path), "%s/%s/trace.pb", dir, names[i]);
    if (!sql || !expected) {
      free(sql);
      free(expected);
      continue; /* not a case */
    }
    FILE *probe = fopen(path, "rb");
    if (!probe) {
      printf("  %-50s no trace.pb in the snapshot: not runnable\n", names[i]);
      missing++;
      free(sql);
      free(expected);
      continue;
    }
    fclose(probe);
    ran++;
    gp_tp *tp = NULL;
    gp_tp_error err;
    int rc = gp_tp_open(path, NULL, &tp, &err);
    char *csv = NULL;
    size_t len = 0;
    if (rc == 0) {
      FILE *f = open_memstream(&csv, &len);
      rc = gp_tp_write(tp, sql, GP_TP_FORMAT_CSV, f, NULL, &err);
      fclose(f);
      gp_tp_close(tp);
    }
    if (rc) {
      printf("  %-50s FAILED: %s\n", names[i], err.message);
      failed++;
    } else {
      /* Compare as the runner does. */
      char *a = csv, *b = expected;
      char na[65536], nb[65536];
      size_t ia = 0, ib = 0;
      for (char *p = a; *p && ia < sizeof(na) - 1; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r')
          na[ia++] = *p;
      for (char *p = b; *p && ib < sizeof(nb) - 1; p++)
        if (*p != ' ' && *p != '\t' && *p != '\r')
          nb[ib++] = *p;
      while (ia && na[ia - 1] == '\n')
        ia--;
      while (ib && nb[ib - 1] == '\n')
        ib--;
      na[ia] = nb[ib] = '\0';
      char *sa = na, *sb = nb;
      while (*sa == '\n')
        sa++;
      while (*sb == '\n')
        sb++;
      if (strcmp(sa, sb) != 0) {
        printf("  %-50s DIFFERS\n--- expected\n%s\n--- actual\n%s\n", names[i],
               sb, sa);
        failed++;
      } else {
        printf("  %-50s ok\n", names[i]);
      }
    }
    free(csv);
    free(sql);
    free(expected);
  }
  for (int i = 0; i < n; i++)
    free(names[i]);
  printf("conformance: %d cases run, %d failed, %d without a trace\n", ran,
         failed, missing);
  ASSERT_GT(ran, 0);
  ASSERT_EQ(failed, 0);
}
