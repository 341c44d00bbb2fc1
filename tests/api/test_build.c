/*
 * test_build.c - what the build promises: the shared library exports the
 * public API and nothing else (and _exit, _Exit, abort); the CLI's exit codes
 * and messages.
 */
#include <sys/wait.h>

#include "harness.h"

static const char *env_or_skip(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v)
    SKIP("%s is not set (run through `make test`)", name);
  return v;
}

TEST(build_shared_library_exports_only_the_api) {
  const char *build = env_or_skip("GPUPERF_BUILD");
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s/libgpuperf.so'", build);
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  char line[512];
  int api = 0;
  while (fgets(line, sizeof(line), p)) {
    char addr[64], type[8], name[256];
    if (sscanf(line, "%63s %7s %255s", addr, type, name) != 3)
      continue;
    if (strcmp(type, "T") != 0 && strcmp(type, "D") != 0 &&
        strcmp(type, "B") != 0 && strcmp(type, "R") != 0)
      continue;
    if (strncmp(name, "_init", 5) == 0 || strncmp(name, "_fini", 5) == 0)
      continue;
    /* libc's, interposed so that a recorded process that calls them
     * still finishes its trace (docs/recording.md). */
    if (strcmp(name, "_exit") == 0 || strcmp(name, "_Exit") == 0 ||
        strcmp(name, "abort") == 0)
      continue;
    if (strncmp(name, "gp_", 3) != 0 || strncmp(name, "gp__", 4) == 0)
      gp_test_fail(__FILE__, __LINE__, "exported symbol %s is not public API",
                   name);
    api++;
  }
  ASSERT_EQ(pclose(p), 0);
  ASSERT_GT(api, 40);
}

/* Runs the CLI with args; returns its exit status and stderr's first line. */
static int run_cli(const char *args, char *err, size_t errsize) {
  const char *cli = env_or_skip("GPUPERF_CLI");
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1 >/dev/null", cli, args);
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  err[0] = '\0';
  if (!fgets(err, (int)errsize, p))
    err[0] = '\0';
  char sink[256];
  while (fgets(sink, sizeof(sink), p)) {
  }
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(cli_exit_codes_and_messages) {
  char err[512];
  ASSERT_EQ(run_cli("--version", err, sizeof(err)), 0);
  ASSERT_EQ(run_cli("no-such-command", err, sizeof(err)), 1);
  ASSERT(strstr(err, "'no-such-command' is not a gpuperf command"));
  ASSERT_EQ(run_cli("demo --steps 0", err, sizeof(err)), 1);
  ASSERT(strstr(err, "--steps"));
  ASSERT_EQ(run_cli("demo --gpus abc", err, sizeof(err)), 1);
  ASSERT_EQ(run_cli("demo extra", err, sizeof(err)), 1);
  ASSERT_EQ(run_cli("list --device 99", err, sizeof(err)), 2);
  ASSERT(strstr(err, "no device 99"));
  ASSERT_EQ(run_cli("list --json", err, sizeof(err)), 0);
  char demo_args[600];
  snprintf(demo_args, sizeof(demo_args), "demo --steps 2 -o %s",
           gp_test_path(0, "demo.pftrace"));
  ASSERT_EQ(run_cli(demo_args, err, sizeof(err)), 0);
}
