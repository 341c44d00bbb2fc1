/*
 * test_live.c - the shared region a recording process publishes for
 * `gpuperf top` (gpuperf/live.h, src/session/live_region.c): a reader
 * racing a writer that rewrites every field of the snapshot as fast as
 * it can never gets a snapshot mixing two of them; a writer stopped
 * mid-update gives GP_EBUSY, not its half-written bytes; what is not a
 * region of this version is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "session/sessionInt.h"

/* Every field of snapshot i says i. */
static void fill(gp_live_snapshot *s, uint64_t i) {
  memset(s, 0, sizeof(*s));
  s->time_ns = i;
  s->interval_ns = i;
  snprintf(s->comm, sizeof(s->comm), "c%llu", (unsigned long long)i);
  s->num_kernels = GP_LIVE_MAX_KERNELS;
  s->num_queues = GP_LIVE_MAX_QUEUES;
  s->num_counters = GP_LIVE_MAX_COUNTERS;
  s->kernels_left_out = (uint32_t)i;
  for (int k = 0; k < GP_LIVE_MAX_KERNELS; k++) {
    snprintf(s->kernels[k].name, sizeof(s->kernels[k].name), "k%llu",
             (unsigned long long)i);
    s->kernels[k].launches = i;
    s->kernels[k].gpu_ns = i;
  }
  for (int q = 0; q < GP_LIVE_MAX_QUEUES; q++)
    s->queues[q].busy_ns = i;
  for (int c = 0; c < GP_LIVE_MAX_COUNTERS; c++)
    s->counters[c].value = (double)i;
}

/* True if every field of s says the same number (or s is the empty
 * snapshot of a region made but not yet published: all zero). */
static bool whole(const gp_live_snapshot *s) {
  uint64_t i = s->time_ns;
  if (i == 0) {
    static const gp_live_snapshot empty;
    return memcmp(s, &empty, sizeof(empty)) == 0;
  }
  char name[32];
  snprintf(name, sizeof(name), "k%llu", (unsigned long long)i);
  if (s->interval_ns != i || s->kernels_left_out != (uint32_t)i)
    return false;
  for (int k = 0; k < GP_LIVE_MAX_KERNELS; k++)
    if (s->kernels[k].launches != i || s->kernels[k].gpu_ns != i ||
        strcmp(s->kernels[k].name, name) != 0)
      return false;
  for (int q = 0; q < GP_LIVE_MAX_QUEUES; q++)
    if (s->queues[q].busy_ns != i)
      return false;
  for (int c = 0; c < GP_LIVE_MAX_COUNTERS; c++)
    if (s->counters[c].value != (double)i)
      return false;
  return true;
}

static atomic_bool writer_stop;
static atomic_ulong published;

static void *writer(void *arg) {
  gp__live_region *r = arg;
  static gp_live_snapshot s;
  for (uint64_t i = 1; !atomic_load(&writer_stop); i++) {
    fill(&s, i);
    gp__live_region_publish(r, &s);
    atomic_store(&published, (unsigned long)i);
  }
  return NULL;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

TEST(live_region_reads_are_never_torn) {
  const char *path = gp_test_path(0, "4242");
  gp__live_region *r = NULL;
  ASSERT_OK(gp__live_region_create(path, 4242, &r));
  static gp_live_snapshot s;
  uint32_t pid = 0;
  ASSERT_OK(gp_live_read(path, &s, &pid)); /* empty, before any publish */
  ASSERT_EQ(pid, 4242);
  ASSERT_EQ(s.time_ns, 0);
  ASSERT_EQ(s.num_kernels, 0);
  atomic_store(&writer_stop, false);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, writer, r), 0);
  uint64_t reads = 0, torn = 0, busy = 0, changes = 0, last = 0;
  double t0 = now_s();
  while (now_s() - t0 < 1.0 || changes < 100) {
    int rc = gp_live_read(path, &s, NULL);
    if (rc == GP_EBUSY) {
      busy++;
      continue;
    }
    ASSERT_OK(rc);
    reads++;
    if (!whole(&s))
      torn++;
    if (s.time_ns != last)
      changes++;
    last = s.time_ns;
    if (now_s() - t0 > 20)
      break; /* a loaded machine: judge what was seen */
  }
  atomic_store(&writer_stop, true);
  pthread_join(t, NULL);
  printf("  %llu reads of %lu snapshots: %llu distinct in a row, %llu torn, "
         "%llu busy\n",
         (unsigned long long)reads, atomic_load(&published),
         (unsigned long long)changes, (unsigned long long)torn,
         (unsigned long long)busy);
  ASSERT_EQ(torn, 0);
  ASSERT_GT(changes, 10); /* the reads did race the writer */
  gp__live_region_destroy(r, true);
  ASSERT_EQ(gp_live_read(path, &s, NULL), -ENOENT);
}

TEST(live_region_mid_update_and_foreign_files) {
  const char *path = gp_test_path(0, "77");
  gp__live_region *r = NULL;
  ASSERT_OK(gp__live_region_create(path, 77, &r));
  static gp_live_snapshot s, got;
  fill(&s, 5);
  gp__live_region_publish(r, &s);
  ASSERT_OK(gp_live_read(path, &got, NULL));
  ASSERT(whole(&got) && got.time_ns == 5);
  /* A writer stopped mid-update (the sequence odd, as it leaves it while
   * copying): the reader gives up, with *out unchanged. */
  int fd = open(path, O_RDWR);
  ASSERT(fd >= 0);
  uint64_t seq;
  ASSERT_EQ(pread(fd, &seq, 8, 24), 8);
  ASSERT_EQ(seq % 2, 0);
  seq++;
  ASSERT_EQ(pwrite(fd, &seq, 8, 24), 8);
  memset(&got, 0xab, sizeof(got));
  ASSERT_ERR(gp_live_read(path, &got, NULL), GP_EBUSY);
  ASSERT_EQ(got.time_ns, 0xababababababababull);
  seq++;
  ASSERT_EQ(pwrite(fd, &seq, 8, 24), 8);
  ASSERT_OK(gp_live_read(path, &got, NULL));
  /* Another version, or another size: not read. */
  uint32_t v = 1;
  ASSERT_EQ(pwrite(fd, &v, 4, 8), 4);
  ASSERT_ERR(gp_live_read(path, &got, NULL), GP_ECORRUPT);
  v = GP_LIVE_VERSION;
  ASSERT_EQ(pwrite(fd, &v, 4, 8), 4);
  ASSERT_OK(gp_live_read(path, &got, NULL));
  ASSERT_EQ(ftruncate(fd, 100), 0);
  ASSERT_ERR(gp_live_read(path, &got, NULL), GP_ECORRUPT);
  close(fd);
  gp__live_region_destroy(r, true);
  ASSERT_ERR(gp_live_read(NULL, &got, NULL), GP_EINVAL);
}
