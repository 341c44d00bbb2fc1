/*
 * test_fuzz_replay.c - replays the importer's fuzz corpus and every input
 * that ever crashed it (tests/fuzz/corpus/importer, tests/fuzz/crashes)
 * through the normal build, so a fixed crash stays fixed without clang
 * or libFuzzer. Each input must open or fail cleanly; what opens must
 * answer queries over every table.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tp/tputil.h"

static int replay_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    size_t size;
    char *data = tp_read_file(path, &size);
    if (!data)
      continue;
    for (uint32_t flags = 0; flags <= GP_TP_ALLOW_TRUNCATED; flags++) {
      gp_tp_options o = {.size = sizeof(o), .flags = flags, .db_path = NULL};
      gp_tp *tp;
      gp_tp_error err;
      int rc = gp_tp_open_buffer(data, size, e->d_name, &o, &tp, &err);
      if (rc) {
        ASSERT(err.message[0] != '\0');
        continue;
      }
      static const char *const q[] = {
          "SELECT * FROM slice",
          "SELECT * FROM gpu_slice",
          "SELECT * FROM args",
          "SELECT * FROM counter",
          "SELECT * FROM track",
          "SELECT * FROM flow",
          "SELECT * FROM gpu",
          "SELECT * FROM stats",
          "SELECT * FROM process JOIN thread USING (upid)"};
      for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
        free(tp_csv(tp, q[i]));
      gp_tp_close(tp);
    }
    free(data);
    n++;
  }
  closedir(d);
  return n;
}

TEST(tp_fuzz_replay) {
  int corpus = replay_dir("tests/fuzz/corpus/importer");
  if (corpus < 0)
    SKIP("tests/fuzz/corpus/importer not found (run from the source tree)");
  int crashes = replay_dir("tests/fuzz/crashes");
  printf("replayed %d corpus inputs and %d past crashes\n", corpus,
         crashes < 0 ? 0 : crashes);
  ASSERT_GT(corpus, 0);
}
