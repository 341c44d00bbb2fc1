/*
 * test_list_accept.c - `gpuperf list` shows every counter that `gpuperf
 * record -e NAME` (and `stat -e`, which checks names the same way)
 * accepts on this machine, and nothing it refuses: both are driven and
 * compared, name by name, on the simulated GPUs, the host CPU, a DRM card
 * (the amdgpu fixture tree as GPUPERF_SYSROOT) and the OpenCL and Vulkan
 * devices the loaders report, plus names of the same families that this
 * machine lacks. A refused name's error says why where that can be told
 * (a CPU without a hardware PMU) and never points at the list for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "opencl/oclutil.h"

#define MAX_NAMES 512

typedef struct names {
  int n;
  char *v[MAX_NAMES];
  bool loader[MAX_NAMES]; /* listed for an OpenCL or Vulkan device */
} names;

static bool has(const names *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->v[i], name) == 0)
      return true;
  return false;
}

static void add(names *s, const char *name, size_t len, bool loader) {
  char buf[256];
  snprintf(buf, sizeof(buf), "%.*s", (int)len, name);
  if (has(s, buf) || s->n == MAX_NAMES)
    return;
  s->loader[s->n] = loader;
  s->v[s->n++] = strdup(buf);
}

/* The counter names of `gpuperf list`'s text: gpuperf's devices' rows
 * ("  IIIII* NAME ...": a 5-column id, '*' or ' ', the name) and the
 * loaders' devices' "counters (...): A, B" lines. */
static void parse_list(const char *text, names *s) {
  for (const char *l = text; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    if (len > 10 && l[0] == ' ' && l[1] == ' ' && l[6] >= '0' && l[6] <= '9' &&
        (l[7] == '*' || l[7] == ' ') && l[8] == ' ' && l[9] != ' ') {
      bool id = true;
      for (int k = 2; k < 7; k++)
        id &= l[k] == ' ' || (l[k] >= '0' && l[k] <= '9');
      if (id)
        add(s, l + 9, strcspn(l + 9, " \n"), false);
    }
    const char *c = strstr(l, "      counters (");
    if (c == l) {
      const char *p = strstr(l, "): ");
      for (p = p ? p + 3 : NULL; p && p < l + len;) {
        size_t n = strcspn(p, ",\n");
        add(s, p, n, true);
        p += n;
        p = *p == ',' ? p + 2 : NULL;
      }
    }
    l = nl ? nl + 1 : NULL;
  }
}

/* `gpuperf record -e list -- /bin/true`: 0 when accepted, 2 when the
 * names are refused (the error into *err). */
static int record_e(const char *cli, const char *list, char **err) {
  const char *trace = gp_test_path(1, "t.pftrace");
  char *argv[] = {(char *)cli, "record",     "-q", "-o",        (char *)trace,
                  "-e",        (char *)list, "--", "/bin/true", NULL};
  char *out = NULL;
  int rc = ocl_run(argv, NULL, 120, &out, err);
  free(out);
  if (rc != 0 && rc != 2)
    gp_test_fail(__FILE__, __LINE__, "record -e %s exited %d: %s", list, rc,
                 *err);
  return rc;
}

TEST(list_shows_every_counter_record_accepts) {
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || access(cli, X_OK) != 0)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  char *root = realpath("tests/data/linux/amdgpu", NULL);
  if (!root)
    SKIP("the amdgpu fixture is not here (run from the source tree)");
  setenv("GPUPERF_SYSROOT", root, 1);
  free(root);
  ocl_env();
  char *argv[] = {(char *)cli, "list", NULL};
  char *text = NULL, *err = NULL;
  ASSERT_EQ(ocl_run(argv, NULL, 120, &text, &err), 0);
  free(err);
  names listed = {0};
  parse_list(text, &listed);
  ASSERT(has(&listed, "Utilization"));
  ASSERT(has(&listed, "task-clock"));
  ASSERT(has(&listed, "gpu-frequency")); /* the fixture's DRM card */
  ASSERT(has(&listed, "engine-gfx-busy"));
  if (strstr(text, "\nOpenCL (through"))
    ASSERT(has(&listed, "Utilization.Compute"));
  if (strstr(text, "\nVulkan (through"))
    ASSERT(has(&listed, "ia_vertices"));
  int nloader = 0;
  for (int i = 0; i < listed.n; i++)
    nloader += listed.loader[i];
  printf("  %d counter names listed, %d of them for OpenCL or Vulkan "
         "devices\n",
         listed.n, nloader);

  /* Every name listed is accepted: those of gpuperf's own devices one by
   * one, the loaders' all at once (their devices have no capacity to
   * check outside the program: one call stands for each). */
  char joined[4096] = "";
  for (int i = 0; i < listed.n; i++) {
    if (listed.loader[i]) {
      if (strlen(joined) + strlen(listed.v[i]) + 2 < sizeof(joined))
        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined),
                 "%s%s", joined[0] ? "," : "", listed.v[i]);
      continue;
    }
    if (record_e(cli, listed.v[i], &err) != 0)
      gp_test_fail(__FILE__, __LINE__, "'%s' is listed but refused: %s",
                   listed.v[i], err);
    free(err);
  }
  if (joined[0]) {
    if (record_e(cli, joined, &err) != 0)
      gp_test_fail(__FILE__, __LINE__, "'%s' are listed but refused: %s",
                   joined, err);
    free(err);
  }

  /* Names of the same families that the list does not show are refused,
   * saying why where the family tells. */
  static const char *const others[] = {
      "cycles",          "instructions", "branch-misses", "ref-cycles",
      "Utilization.foo", "ia_vertices",  "vram-total",    "fan",
      "no-such-counter"};
  for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
    if (has(&listed, others[i]))
      continue;
    ASSERT_EQ(record_e(cli, others[i], &err), 2);
    printf("  %s", err);
    ASSERT(strstr(err, "unknown counter"));
    ASSERT(!strstr(err, "see 'gpuperf list'"));
    if (strcmp(others[i], "cycles") == 0)
      ASSERT(strstr(err, "perf_event_open of PERF_COUNT_HW_CPU_CYCLES"));
    if (strcmp(others[i], "Utilization.foo") == 0)
      ASSERT(strstr(err, "queue named 'foo'"));
    free(err);
  }
  /* `stat -e` checks the same way. */
  const char *one = has(&listed, "cycles") ? "Utilization.foo" : "cycles";
  char *sargv[] = {(char *)cli, "stat",      "-e", (char *)one,
                   "--",        "/bin/true", NULL};
  char *out = NULL;
  ASSERT_EQ(ocl_run(sargv, NULL, 120, &out, &err), 2);
  ASSERT(strstr(err, "unknown counter"));
  free(out);
  free(err);
  for (int i = 0; i < listed.n; i++)
    free(listed.v[i]);
  free(text);
}
