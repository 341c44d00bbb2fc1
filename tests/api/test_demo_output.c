/*
 * test_demo_output.c - `gpuperf demo -o FILE` (a library session,
 * gp_session_start() with a path) never destroys the file it replaces:
 * killed midway or failing to start it leaves it as it was, on a full disk
 * it keeps it as FILE.old, and a file the user may only write is written
 * in place.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "perfetto/proto.h"
#include "unit/writer_util.h"

static const char *cli(void) {
  const char *c = getenv("GPUPERF_CLI");
  if (!c || !*c)
    SKIP("GPUPERF_CLI is not set (run through `make test`)");
  return c;
}

static void sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The demo trace at path is whole packets with more than min GPU events. */
static void assert_whole_demo(const char *path, int min) {
  wt_trace t;
  wt_load(&t, path);
  ASSERT_EQ(t.valid, t.size);
  ASSERT_GT(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), min);
  wt_free(&t);
}

/* `gpuperf demo -o` (a library session) never destroys the file it
 * replaces: killed midway, or failing to start, it leaves it as it was;
 * a trace that completes takes its place, with nothing left beside it. */
TEST(demo_keeps_an_existing_output) {
  char dir[1100], out[1200], cmd[4096];
  snprintf(dir, sizeof(dir), "%s/demo-keep", gp_test_tmpdir());
  ASSERT_EQ(mkdir(dir, 0755), 0);
  snprintf(out, sizeof(out), "%s/d.pftrace", dir);
  FILE *f = fopen(out, "w");
  fputs("precious", f);
  fclose(f);
  /* SIGKILL while it writes. */
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execl(cli(), "gpuperf", "demo", "-q", "--steps", "1000000", "-o", out,
          (char *)NULL);
    _exit(127);
  }
  /* Until the trace beside it has grown, so the kill lands mid-write. */
  char tmp[1400] = "";
  struct stat st;
  for (int i = 0; i < 1000; i++) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
      if (strncmp(e->d_name, "d.pftrace.tmp-", 14) == 0)
        snprintf(tmp, sizeof(tmp), "%s/%s", dir, e->d_name);
    if (d)
      closedir(d);
    if (tmp[0] && stat(tmp, &st) == 0 && st.st_size > (1 << 20))
      break;
    sleep_ms(5);
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT(WIFSIGNALED(status));
  ASSERT(tmp[0]);
  char *s = wt_read_text(out);
  ASSERT_STR_EQ(s, "precious");
  free(s);
  ASSERT_EQ(unlink(tmp), 0);
  /* A config naming a counter no device has: exit 2, the file kept, no
   * file left beside it. */
  char cfg[1200];
  snprintf(cfg, sizeof(cfg), "%s/bad.pbtxt", dir);
  f = fopen(cfg, "w");
  fputs("data_sources { config { name: \"gpu.counters\" gpu_counter_config "
        "{ counter_names: \"no_such_counter\" } } }\n",
        f);
  fclose(f);
  snprintf(cmd, sizeof(cmd), "'%s' demo -q -c '%s' -o '%s' 2>/dev/null", cli(),
           cfg, out);
  ASSERT_EQ(wt_system(cmd), 2);
  s = wt_read_text(out);
  ASSERT_STR_EQ(s, "precious");
  free(s);
  ASSERT_EQ(wt_entries_with(dir, "d.pftrace.tmp-"), 0);
  /* A trace that completes replaces it, nothing beside. */
  snprintf(cmd, sizeof(cmd), "'%s' demo -q --steps 3 -o '%s'", cli(), out);
  ASSERT_EQ(wt_system(cmd), 0);
  assert_whole_demo(out, 10);
  ASSERT_EQ(stat(out, &st), 0);
  ASSERT_EQ(st.st_mode & 0777, 0644);
  ASSERT_EQ(wt_entries_with(dir, "d.pftrace."), 0);
}

/* A file the user may write in a folder where they may not create one
 * (run as nobody through setpriv): written in place, as before; a new file
 * there is a clear error naming it. */
TEST(demo_writes_a_writable_file_in_a_closed_folder) {
  if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
    SKIP("needs root and /usr/bin/setpriv to run as another user");
  char dir[1100], out[1200], neu[1200], err[1200], cmd[4096];
  snprintf(dir, sizeof(dir), "%s/closed", gp_test_tmpdir());
  ASSERT_EQ(chmod(gp_test_tmpdir(), 0755), 0);
  ASSERT_EQ(mkdir(dir, 0755), 0);
  snprintf(out, sizeof(out), "%s/open.pftrace", dir);
  snprintf(neu, sizeof(neu), "%s/new.pftrace", dir);
  snprintf(err, sizeof(err), "%s/stderr", gp_test_tmpdir());
  FILE *f = fopen(out, "w");
  fputs("old", f);
  fclose(f);
  ASSERT_EQ(chmod(out, 0666), 0);
  const char *as = "/usr/bin/setpriv --reuid=65534 --regid=65534 "
                   "--clear-groups";
  snprintf(cmd, sizeof(cmd), "%s '%s' --version >/dev/null 2>&1", as, cli());
  if (wt_system(cmd) != 0)
    SKIP("user nobody cannot run %s (a folder on its path is closed)", cli());
  snprintf(cmd, sizeof(cmd), "%s '%s' demo -q --steps 2 -o '%s'", as, cli(),
           out);
  ASSERT_EQ(wt_system(cmd), 0);
  assert_whole_demo(out, 5);
  snprintf(cmd, sizeof(cmd), "%s '%s' demo -q --steps 2 -o '%s' 2>'%s'", as,
           cli(), neu, err);
  ASSERT_EQ(wt_system(cmd), 2);
  char *msg = wt_read_text(err);
  ASSERT(strstr(msg, "new.pftrace: Permission denied"));
  free(msg);
  ASSERT_EQ(wt_entries_with(dir, "new.pftrace"), 0);
}

/* A library session on a full disk: the stop says so, the trace written
 * before the error (whole packets) is at the path, and the file it
 * replaced is kept as path.old. */
TEST(session_full_disk_keeps_the_old_file) {
  char mnt[1024];
  snprintf(mnt, sizeof(mnt), "%s/small", gp_test_tmpdir());
  ASSERT_EQ(mkdir(mnt, 0755), 0);
  if (mount("gpuperf-test", mnt, "tmpfs", 0, "size=200k") != 0)
    SKIP("cannot mount a small tmpfs (%s): needs root", strerror(errno));
  char out[1100], old[1200], cmd[4096], err[1200];
  snprintf(out, sizeof(out), "%s/full.pftrace", mnt);
  snprintf(old, sizeof(old), "%s.old", out);
  snprintf(err, sizeof(err), "%s/demo-stderr", gp_test_tmpdir());
  FILE *f = fopen(out, "w");
  fputs("precious", f);
  fclose(f);
  snprintf(cmd, sizeof(cmd), "'%s' demo -q --steps 200 -o '%s' 2>'%s'", cli(),
           out, err);
  int rc = wt_system(cmd);
  char *kept = wt_read_text(old);
  wt_trace t;
  memset(&t, 0, sizeof(t));
  wt_load(&t, out);
  int beside = wt_entries_with(mnt, "full.pftrace.tmp-");
  umount2(mnt, MNT_DETACH);
  char *msg = wt_read_text(err);
  if (rc != 2)
    gp_test_fail(__FILE__, __LINE__, "status %d, want 2\n%s", rc, msg);
  ASSERT(strcasestr(msg, "no space left"));
  ASSERT(strstr(msg, "full.pftrace.old"));
  ASSERT_STR_EQ(kept, "precious");
  ASSERT_GT(t.size, 0);
  ASSERT_EQ(t.valid, t.size); /* whole packets only */
  ASSERT_EQ(beside, 0);
  wt_free(&t);
  free(kept);
  free(msg);
}
