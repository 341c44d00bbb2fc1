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

/* Runs `make -n demo` in a fresh tree (the sources of this
 * one, no build directory) whose scripts/install-deps.sh is a stand-in:
 * it creates the Vulkan header and library the build looks for only when
 * `creates` is set, as apt-get would. $T (the environment) must name the
 * tree. Returns make's exit status; the end of its output in out. */
static int make_fresh(const char *tree, bool creates, char *out, size_t size) {
  char cmd[4096];
  snprintf(cmd, sizeof(cmd),
           "set -e; T='%s'; rm -rf \"$T\"; mkdir -p \"$T/scripts\"; "
           "cp Makefile \"$T/\"; cp -r mk \"$T/\"; "
           "for d in include src tools tests bench; do ln -s \"$PWD/$d\" "
           "\"$T/$d\"; done; "
           "printf '#!/bin/sh\\n%s\\n' > \"$T/scripts/install-deps.sh\"; "
           "chmod +x \"$T/scripts/install-deps.sh\"; cd \"$T\"; "
           "make -n BUILD=b VK_HEADER=\"$T/fake/vulkan.h\" "
           "VK_LIBS=\"$T/fake/libvulkan.so\" GP_CUDA=0 demo "
           "2>&1",
           tree,
           creates ? "mkdir -p $T/fake && touch $T/fake/vulkan.h "
                     "$T/fake/libvulkan.so"
                   : "true");
  FILE *p = popen(cmd, "r");
  ASSERT_NOT_NULL(p);
  /* All of it read (the link comes last), the end of it kept. */
  size_t n = 0, k;
  char chunk[4096];
  while ((k = fread(chunk, 1, sizeof(chunk), p)) > 0) {
    if (k >= size) {
      k = size - 1;
      n = 0;
    } else if (n + k >= size) {
      size_t drop = n + k - (size - 1);
      memmove(out, out + drop, n - drop);
      n -= drop;
    }
    memcpy(out + n, chunk, k);
    n += k;
  }
  out[n] = '\0';
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A fresh machine builds the Vulkan layer on its first `make demo`:
 * whether to build it is decided after scripts/install-deps.sh installed
 * libvulkan-dev, not when make first reads mk/vulkan.mk, and demo builds
 * what `make` builds (issue 28). */
TEST(build_decides_after_dependencies) {
  if (access("Makefile", R_OK) != 0 || access("mk/vulkan.mk", R_OK) != 0)
    SKIP("not run from the source tree (run through `make test`)");
  char tree[512], out[16384];
  snprintf(tree, sizeof(tree), "%s", gp_test_path(0, "fresh"));
  setenv("T", tree, 1);
  ASSERT_EQ(make_fresh(tree, true, out, sizeof(out)), 0);
  if (!strstr(out, "-soname,libgpuperf-vulkan.so"))
    gp_test_fail(__FILE__, __LINE__, "no link of the layer in:\n%s", out);
  ASSERT(strstr(out, "b/gpuperf demo") != NULL);
  /* The stand-in installed nothing: no layer. */
  ASSERT_EQ(make_fresh(tree, false, out, sizeof(out)), 0);
  ASSERT(strstr(out, "-soname,libgpuperf-vulkan.so") == NULL);
}
