/*
 * test_opencl_preload.c - libgpuperf-opencl.so as programs load it, with
 * LD_PRELOAD: what it exports, that it changes nothing a program computes
 * or sees (the sample, a plugin opened RTLD_LOCAL, forked and exec'd
 * children), and that it is harmless in programs without OpenCL.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "backend/opencl/oclInt.h"
#include "harness.h"
#include "opencl/oclutil.h"

static const char *need_build(const char *name, char *buf, size_t size) {
  const char *p = ocl_build_path(name, buf, size);
  if (!p)
    SKIP("GPUPERF_BUILD is not set (run through `make test`)");
  if (access(p, F_OK) != 0)
    gp_test_fail(__FILE__, __LINE__, "%s was not built", p);
  return p;
}

/* "LD_PRELOAD=<build>/libgpuperf-opencl.so", static. */
static char *preload_env(void) {
  static char env[600];
  char lib[512];
  snprintf(env, sizeof(env), "LD_PRELOAD=%s",
           need_build("libgpuperf-opencl.so", lib, sizeof(lib)));
  return env;
}

TEST(opencl_preload_exports_only_entry_points) {
  char lib[512], cmd[1024];
  need_build("libgpuperf-opencl.so", lib, sizeof(lib));
  snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s'", lib);
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  char line[512];
  int n = 0;
  while (fgets(line, sizeof(line), p)) {
    char addr[64], type[8], name[256];
    if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3 ||
        strchr("TDBRVW", type[0]) == NULL)
      continue;
    if (strncmp(name, "_init", 5) == 0 || strncmp(name, "_fini", 5) == 0)
      continue;
    /* libc's, interposed so that a recorded process finishes its trace
     * (src/backend/opencl/exit.c). */
    if (!strcmp(name, "_exit") || !strcmp(name, "_Exit") ||
        !strcmp(name, "abort"))
      continue;
    bool known = false;
    for (uint32_t id = 0; id < GP_CL_ID_COUNT && !known; id++)
      known = strcmp(name, gp__ocl_call_name(id)) == 0;
    if (!known)
      gp_test_fail(__FILE__, __LINE__,
                   "%s exports %s, which is no OpenCL entry point it wraps",
                   lib, name);
    n++;
  }
  int st = pclose(p);
  if (st != 0)
    SKIP("nm is not available");
  ASSERT_EQ(n, GP_CL_ID_COUNT);
  /* It must not pull in a loader of its own (the program's is used), and
   * writes into the process's one libgpuperf. */
  snprintf(cmd, sizeof(cmd), "readelf -d '%s'", lib);
  p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  bool core = false;
  while (fgets(line, sizeof(line), p)) {
    ASSERT(strstr(line, "libOpenCL") == NULL);
    core |= strstr(line, "NEEDED") && strstr(line, "[libgpuperf.so.0]");
  }
  pclose(p);
  ASSERT(core);
}

static int cmp_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the lines of text in place (processes running side by side). */
static void sort_lines(char *text) {
  size_t n = 0, len = strlen(text);
  for (size_t i = 0; i < len; i++)
    n += text[i] == '\n';
  char **lines = calloc(n + 1, sizeof(char *));
  char *copy = strdup(text);
  ASSERT(lines && copy);
  size_t k = 0;
  for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l;
       l = strtok_r(NULL, "\n", &save))
    lines[k++] = l;
  qsort(lines, k, sizeof(char *), cmp_lines);
  char *o = text;
  for (size_t i = 0; i < k; i++)
    o += sprintf(o, "%s\n", lines[i]);
  free(copy);
  free(lines);
}

/* Runs the sample with args, with and without the preload library; both
 * must exit with want and print the same (once sorted, if sorted). Returns
 * the output. */
static char *same_with_and_without(char *const argv[], int want, bool sorted) {
  char *plain = NULL, *traced = NULL, *err = NULL;
  char *env[] = {preload_env(), NULL};
  int rc = ocl_run(argv, NULL, 120, &plain, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  if (rc != want)
    gp_test_fail(__FILE__, __LINE__, "%s exited %d (want %d):\n%s", argv[0], rc,
                 want, err ? err : "");
  free(err);
  rc = ocl_run(argv, env, 120, &traced, &err);
  if (rc != want)
    gp_test_fail(__FILE__, __LINE__, "preloaded %s exited %d (want %d):\n%s",
                 argv[0], rc, want, err ? err : "");
  ASSERT_STR_EQ(err, "");
  free(err);
  if (sorted) {
    sort_lines(plain);
    sort_lines(traced);
  }
  ASSERT_STR_EQ(traced, plain);
  free(traced);
  return plain;
}

TEST(opencl_preload_sample_unchanged) {
  ocl_env();
  char sample[512];
  char *argv[] = {
      (char *)need_build("tests/opencl-sample", sample, sizeof(sample)),
      "--exit-status", "3", NULL};
  char *out = same_with_and_without(argv, 3, false);
  ASSERT(strstr(out, "main refcounts pending=") != NULL);
  ASSERT(strstr(out, "main count commands=") != NULL);
  free(out);
}

TEST(opencl_preload_plugin_opened_local) {
  ocl_env();
  char host[512], plugin[512];
  char *argv[] = {
      (char *)need_build("tests/opencl-plugin-host", host, sizeof(host)),
      (char *)need_build("tests/libopencl-plugin.so", plugin, sizeof(plugin)),
      NULL};
  char *out = same_with_and_without(argv, 0, false);
  ASSERT(strstr(out, "main count commands=") != NULL);
  free(out);
}

TEST(opencl_preload_fork_and_exec) {
  ocl_env();
  char sample[512];
  char *fork_argv[] = {
      (char *)need_build("tests/opencl-sample", sample, sizeof(sample)),
      "--fork", NULL};
  char *out = same_with_and_without(fork_argv, 0, true);
  ASSERT(strstr(out, "parent count commands=") != NULL);
  ASSERT(strstr(out, "child count commands=") != NULL);
  free(out);
  char *exec_argv[] = {sample, "--exec", NULL};
  out = same_with_and_without(exec_argv, 0, false);
  ASSERT(strstr(out, "main count commands=") != NULL);
  ASSERT(strstr(out, "exec count commands=") != NULL);
  free(out);
}

TEST(opencl_preload_harmless_without_opencl) {
  char *env[] = {preload_env(), NULL};
  char *out = NULL, *err = NULL;
  char *argv[] = {"/bin/sh", "-c", "echo hello; exit 5", NULL};
  ASSERT_EQ(ocl_run(argv, env, 30, &out, &err), 5);
  ASSERT_STR_EQ(out, "hello\n");
  ASSERT_STR_EQ(err, "");
  free(out);
  free(err);
}

/* Launches of kernel name the sample printed ("count kernel NAME ..."
 * lines, all shapes, failed ones included: stat counts every record). */
static unsigned sample_launches(const char *out, const char *name) {
  unsigned total = 0;
  char key[96];
  snprintf(key, sizeof(key), " count kernel %s ", name);
  for (const char *p = out; (p = strstr(p, key)) != NULL; p++) {
    unsigned l = 0, f = 0;
    const char *q = strstr(p, "launches=");
    if (q && sscanf(q, "launches=%u failed=%u", &l, &f) == 2)
      total += l + f;
  }
  return total;
}

TEST(opencl_stat_per_kernel_totals) {
  ocl_env();
  const char *cli = getenv("GPUPERF_CLI");
  if (!cli || !*cli)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
#if GP_TEST_SANITIZED
  SKIP("gpuperf stat preloads nothing in a sanitizer build");
#endif
  char sample[512];
  need_build("tests/opencl-sample", sample, sizeof(sample));
  char *argv[] = {(char *)cli, "stat",          "--", sample, "-n",
                  "2",         "--exit-status", "4",  NULL};
  char *out = NULL, *err = NULL;
  int rc = ocl_run(argv, NULL, 120, &out, &err);
  if (rc == 77)
    SKIP("no OpenCL device");
  ASSERT_EQ(rc, 4); /* the program's status */
  const char *names[] = {"scale",   "add",  "reduce", "blur2d",
                         "fixed16", "task", "svm_inc"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    unsigned want = sample_launches(out, names[i]);
    ASSERT_GT(want, 0);
    char key[96];
    snprintf(key, sizeof(key), "kernel %s: ", names[i]);
    const char *p = strstr(err, key);
    if (!p)
      gp_test_fail(__FILE__, __LINE__, "no line for %s in:\n%s", names[i], err);
    unsigned got = 0;
    ASSERT_EQ(sscanf(p + strlen(key), "%u launch", &got), 1);
    ASSERT_EQ(got, want);
  }
  ASSERT(strstr(err, "Host CPU (perf_event") != NULL ||
         strstr(err, "host CPU counters unavailable") != NULL);
  /* Recorded (kernels), the program computed and saw what it does alone. */
  char *plain = NULL;
  ASSERT_EQ(ocl_run(argv + 3, NULL, 120, &plain, NULL), 4);
  ASSERT_STR_EQ(out, plain);
  free(plain);
  free(out);
  free(err);
}
