/*
 * missing.c - saying so when a program uses a GPU API whose gpuperf
 * library is not there.
 *
 * `gpuperf record` and `gpuperf stat` reach Vulkan, OpenCL and CUDA
 * programs through libraries of their own (the Vulkan layer,
 * libgpuperf-opencl.so, libgpuperf-cuda.so), each built only where its
 * dependencies were installed at build time. Without one, the program's
 * work on that API is simply not seen, and the recording says nothing
 * was done. So before the program runs, the APIs its executable links
 * (DT_NEEDED: libvulkan, libOpenCL, libcuda, libcudart) are compared with
 * the libraries found, and each one missing gets a warning that names the
 * fix; when nothing was recorded, the libraries missing are named again.
 * A program that loads an API with dlopen (or through a script) is not
 * seen here: only the second message covers it.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_cuda.h"

enum { API_VULKAN, API_OPENCL, API_CUDA, API_COUNT };

/* Resolves prog as execvp would (a name with no '/' on PATH) into buf.
 * False if no executable file is found. */
static bool find_program(const char *prog, char *buf, size_t size) {
  if (strchr(prog, '/')) {
    snprintf(buf, size, "%s", prog);
    return access(buf, X_OK) == 0;
  }
  const char *path = getenv("PATH");
  for (const char *p = path ? path : "/usr/bin:/bin"; p && *p;) {
    const char *c = strchr(p, ':');
    int n = c ? (int)(c - p) : (int)strlen(p);
    snprintf(buf, size, "%.*s/%s", n, n ? p : ".", prog);
    struct stat st;
    if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
      return true;
    p = c ? c + 1 : NULL;
  }
  return false;
}

/* Reads n bytes at off of fd into buf. */
static bool read_at(int fd, void *buf, size_t n, uint64_t off) {
  return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* Sets uses[api] for each GPU API the 64-bit ELF file at path names in
 * its DT_NEEDED entries (read through the section headers: .dynamic and
 * the string table it links). Anything else (a script, a 32-bit or
 * stripped-of-sections file) sets nothing. */
static void needed_apis(const char *path, bool uses[API_COUNT]) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  Elf64_Ehdr eh;
  if (!read_at(fd, &eh, sizeof(eh), 0) ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum > 4096)
    goto out;
  for (uint32_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh, str;
    if (!read_at(fd, &sh, sizeof(sh), eh.e_shoff + i * sizeof(sh)))
      goto out;
    if (sh.sh_type != SHT_DYNAMIC || sh.sh_link >= eh.e_shnum ||
        !read_at(fd, &str, sizeof(str), eh.e_shoff + sh.sh_link * sizeof(str)))
      continue;
    for (uint64_t k = 0; k + sizeof(Elf64_Dyn) <= sh.sh_size && k < 1 << 20;
         k += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      if (!read_at(fd, &d, sizeof(d), sh.sh_offset + k) || d.d_tag == DT_NULL)
        break;
      char name[64] = "";
      if (d.d_tag != DT_NEEDED || d.d_un.d_val >= str.sh_size ||
          pread(fd, name, sizeof(name) - 1,
                (off_t)(str.sh_offset + d.d_un.d_val)) <= 0)
        continue;
      if (strncmp(name, "libvulkan.so", 12) == 0)
        uses[API_VULKAN] = true;
      else if (strncmp(name, "libOpenCL.so", 12) == 0)
        uses[API_OPENCL] = true;
      else if (strncmp(name, "libcuda.so", 10) == 0 ||
               strncmp(name, "libcudart.so", 12) == 0)
        uses[API_CUDA] = true;
    }
  }
out:
  close(fd);
}

/* Writes into buf why api's gpuperf library is missing and what to do,
 * or "" when it is there (or its use is turned off by the user). */
static void why_missing(int api, char *buf, size_t size) {
  char where[4200];
  buf[0] = '\0';
  switch (api) {
  case API_VULKAN: {
    const char *off = getenv("GPUPERF_VULKAN");
    if ((off && strcmp(off, "0") == 0) ||
        cli_vulkan_manifest_dir(where, sizeof(where)))
      return;
    const char *env = getenv("GPUPERF_VULKAN_LAYER_DIR");
    if (env && *env)
      snprintf(buf, size,
               "gpuperf's Vulkan layer is not found: GPUPERF_VULKAN_LAYER_DIR"
               "=%s has no vulkan/implicit_layer.d/gpuperf_layer.json (point "
               "it at the build's vulkan/ folder, or unset it)",
               env);
    else
      snprintf(buf, size,
               "gpuperf's Vulkan layer (libgpuperf-vulkan.so) is not built: "
               "no %s/vulkan/implicit_layer.d/gpuperf_layer.json; install "
               "libvulkan-dev (`make deps`) and run `make` again",
               where);
    return;
  }
  case API_OPENCL: {
    const char *off = getenv("GPUPERF_OPENCL");
    if ((off && strcmp(off, "0") == 0) ||
        cli_opencl_library(where, sizeof(where)))
      return;
    snprintf(buf, size, "gpuperf's OpenCL library is not %s: no %s; %s",
             getenv("GPUPERF_OPENCL_LIB") ? "found" : "built", where,
             getenv("GPUPERF_OPENCL_LIB")
                 ? "point GPUPERF_OPENCL_LIB at it, or unset it"
                 : "install ocl-icd-opencl-dev (`make deps`) and run `make` "
                   "again");
    return;
  }
  case API_CUDA:
    if (cli_cuda_library(where, sizeof(where)))
      return;
    snprintf(buf, size, "gpuperf's CUDA collector is not %s: no %s; %s",
             getenv("GPUPERF_CUDA_LIB") ? "found" : "built", where,
             getenv("GPUPERF_CUDA_LIB")
                 ? "point GPUPERF_CUDA_LIB at it, or unset it"
                 : "it is built where the CUDA toolkit with CUPTI is found "
                   "(CUDA_HOME, mk/cuda.mk): install it and run `make` again");
    return;
  }
}

/* See cli.h. */
int cli_warn_missing_libraries(const char *tool, char *const *cmd) {
  char path[4200];
  bool uses[API_COUNT] = {false};
  if (!cmd || !cmd[0] || !find_program(cmd[0], path, sizeof(path)))
    return 0;
  needed_apis(path, uses);
  static const char *const names[API_COUNT] = {"Vulkan", "OpenCL", "CUDA"};
  int n = 0;
  for (int api = 0; api < API_COUNT; api++) {
    char why[4600];
    /* OpenCL's preload already warns for every program (preload.c). */
    if (!uses[api] || api == API_OPENCL)
      continue;
    why_missing(api, why, sizeof(why));
    if (!why[0])
      continue;
    fprintf(stderr,
            "gpuperf %s: warning: '%s' uses %s, but its %s work will not be "
            "%s: %s\n",
            tool, cmd[0], names[api], names[api],
            strcmp(tool, "stat") == 0 ? "counted" : "recorded", why);
    n++;
  }
  return n;
}

/* See cli.h. */
size_t cli_missing_libraries(char *const *cmd, char *buf, size_t size) {
  size_t o = 0;
  if (size)
    buf[0] = '\0';
  /* The APIs the executable links, if it names any; else every one (it
   * may load them with dlopen). */
  char path[4200];
  bool uses[API_COUNT] = {false}, any = false;
  if (cmd && cmd[0] && find_program(cmd[0], path, sizeof(path)))
    needed_apis(path, uses);
  for (int api = 0; api < API_COUNT; api++)
    any |= uses[api];
  for (int api = 0; api < API_COUNT && o < size; api++) {
    char why[4600];
    if (any && !uses[api])
      continue;
    why_missing(api, why, sizeof(why));
    if (!why[0])
      continue;
    int k = snprintf(buf + o, size - o, "%s%s", o ? "; " : "", why);
    if (k < 0)
      break;
    o += (size_t)k < size - o ? (size_t)k : size - o - 1;
  }
  return o;
}
