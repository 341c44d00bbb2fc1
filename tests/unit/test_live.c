/*
 * test_live.c - the shared region a recording process publishes for
 * `gpuperf top` (gpuperf/live.h, src/session/live_region.c): a reader
 * racing a writer that rewrites every field of the snapshot as fast as
 * it can never gets a snapshot mixing two of them; a writer stopped
 * mid-update gives GP_EBUSY, not its half-written bytes; what is not a
 * region of this version is refused. Regions of processes that are gone
 * (or whose pid a later process has) are found and removed; and what the
 * recording side (live.c) publishes from records is each piece of work's
 * part within the interval, late records and launches in flight apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
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

/* A pid that no process has: a child's, once it is reaped. */
static pid_t dead_pid(void) {
  pid_t p = fork();
  if (p == 0)
    _exit(0);
  ASSERT_GT(p, 0);
  ASSERT_EQ(waitpid(p, NULL, 0), p);
  return p;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ASSERT_NOT_NULL(f);
  fputs(text, f);
  fclose(f);
}

TEST(live_region_stale_files_removed) {
  char dir[600], own[700], reused[700], dead[700], deadtmp[700], owntmp[700],
      other[700];
  snprintf(dir, sizeof(dir), "%s/live", gp_test_tmpdir());
  ASSERT_EQ(mkdir(dir, 0700), 0);
  pid_t gone = dead_pid();
  snprintf(own, sizeof(own), "%s/%d", dir, (int)getpid());
  snprintf(reused, sizeof(reused), "%s/%d", dir, (int)getppid());
  snprintf(dead, sizeof(dead), "%s/%d", dir, (int)gone);
  snprintf(deadtmp, sizeof(deadtmp), "%s/%d.tmp", dir, (int)gone);
  snprintf(owntmp, sizeof(owntmp), "%s/%d.tmp", dir, (int)getpid());
  snprintf(other, sizeof(other), "%s/notes.txt", dir);
  gp__live_region *a = NULL, *b = NULL, *c = NULL;
  ASSERT_OK(gp__live_region_create(own, (uint32_t)getpid(), &a));
  ASSERT_OK(gp__live_region_create(dead, (uint32_t)gone, &b));
  /* The parent runs, but its start time is not the one recorded: the
   * region of an earlier process that had the same pid. */
  ASSERT_OK(gp__live_region_create(reused, (uint32_t)getppid(), &c));
  int fd = open(reused, O_RDWR);
  ASSERT(fd >= 0);
  uint64_t start = 0;
  ASSERT_EQ(pread(fd, &start, 8, 32), 8);
  ASSERT_GT(start, 0); /* the header holds it */
  start += 1;
  ASSERT_EQ(pwrite(fd, &start, 8, 32), 8);
  close(fd);
  write_file(deadtmp, "half made");
  write_file(owntmp, "being made");
  write_file(other, "not ours");
  ASSERT_EQ(gp_live_owner_alive(own), 1);
  ASSERT_EQ(gp_live_owner_alive(dead), 0);
  ASSERT_EQ(gp_live_owner_alive(reused), 0);
  ASSERT_ERR(gp_live_owner_alive(owntmp), GP_ECORRUPT);
  uint32_t removed = 0;
  ASSERT_OK(gp_live_remove_stale(dir, &removed));
  ASSERT_EQ(removed, 3);
  ASSERT_EQ(access(own, F_OK), 0);
  ASSERT_EQ(access(owntmp, F_OK), 0);
  ASSERT_EQ(access(other, F_OK), 0);
  ASSERT(access(dead, F_OK) != 0);
  ASSERT(access(deadtmp, F_OK) != 0);
  ASSERT(access(reused, F_OK) != 0);
  gp__live_region_destroy(a, true);
  gp__live_region_destroy(b, false);
  gp__live_region_destroy(c, false);
  ASSERT_ERR(gp_live_remove_stale(gp_test_path(1, "none"), NULL), -ENOENT);
}

#define MS 1000000ull

static void put_kernel(uint32_t dev, uint32_t stream, const char *name,
                       uint64_t s, uint64_t e, uint64_t corr) {
  gp_activity_kernel *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_KERNEL, sizeof(*r), 0, stream);
  ASSERT_NOT_NULL(r);
  memset((char *)r + sizeof(r->hdr), 0, sizeof(*r) - sizeof(r->hdr));
  r->correlation_id = corr;
  r->start = s;
  r->end = e;
  r->device_id = dev;
  r->stream_id = stream;
  r->name_id = gp__string_intern(name);
  gp__activity_commit(r);
}

static void put_launch(uint64_t corr, uint64_t t) {
  gp_activity_api *r =
      gp__activity_reserve(GP_ACTIVITY_KIND_API, sizeof(*r), 0, 0);
  ASSERT_NOT_NULL(r);
  memset((char *)r + sizeof(r->hdr), 0, sizeof(*r) - sizeof(r->hdr));
  r->correlation_id = corr;
  r->start = t;
  r->end = t + 1000;
  r->domain = GP_API_DOMAIN_OPENCL;
  r->name_id = gp__string_intern("clEnqueueNDRangeKernel");
  gp__activity_commit(r);
}

static const gp_live_kernel *kernel_named(const gp_live_snapshot *s,
                                          const char *name) {
  for (uint32_t i = 0; i < s->num_kernels; i++)
    if (!strcmp(s->kernels[i].name, name))
      return &s->kernels[i];
  return NULL;
}

/* What a recording process publishes: each kernel's part within the
 * interval (a long one that began before it, overlapping launches of
 * one kernel counted once in BUSY), work that ran wholly before it
 * (a late record) counted in none, and a launch whose kernel is not
 * reported yet in flight, its device's time after its last work
 * assumed busy; never over the interval. */
TEST(live_publishes_work_within_the_interval) {
  char dir[600], path[700];
  snprintf(dir, sizeof(dir), "%s/live", gp_test_tmpdir());
  setenv("GPUPERF_LIVE_DIR", dir, 1);
  gp_activity_enable(GP_ACTIVITY_KIND_KERNEL);
  gp_activity_enable(GP_ACTIVITY_KIND_API);
  gp_device_info di;
  memset(&di, 0, sizeof(di));
  di.api = GP_API_OPEN_CL;
  di.name = "test cl device";
  di.num_queues = 1;
  gp_device_queue_info q = {0};
  q.name = "compute";
  uint32_t dev = 0;
  ASSERT_OK(gp__device_register(&di, &q, 1, &dev));
  static gp_live_snapshot s;
  uint64_t t0 = 0;
  /* The first snapshot must come after the records were delivered: a
   * machine so loaded that a second passed in between gets a new try. */
  for (int attempt = 0; attempt < 5; attempt++) {
    gp__live_start();
    t0 = gp_get_timestamp(); /* the interval starts before */
    snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
    ASSERT_EQ(gp_live_owner_alive(path), 1);
    uint64_t c = (uint64_t)attempt * 100; /* correlation ids of this try */
    /* Began 5 s before the interval; and a second launch of it. */
    put_kernel(dev, 1, "long", t0 - 5000 * MS, t0 + 200 * MS, c + 1);
    put_kernel(dev, 1, "long", t0 + 250 * MS, t0 + 350 * MS, c + 2);
    /* Reported now, ran 3 s ago: late. */
    put_kernel(dev, 1, "late", t0 - 3000 * MS, t0 - 2000 * MS, c + 3);
    /* Two launches of one kernel overlapping on two queues. */
    put_kernel(dev, 1, "pair", t0 + 400 * MS, t0 + 500 * MS, c + 4);
    put_kernel(dev, 2, "pair", t0 + 450 * MS, t0 + 550 * MS, c + 5);
    /* Launches: one whose kernel comes, one whose kernel came first, and
     * one still in flight. */
    put_launch(c + 6, t0 + 555 * MS);
    put_kernel(dev, 1, "quick", t0 + 560 * MS, t0 + 570 * MS, c + 6);
    put_kernel(dev, 1, "quick", t0 + 575 * MS, t0 + 580 * MS, c + 7);
    put_launch(c + 7, t0 + 572 * MS);
    put_launch(c + 8, t0 + 600 * MS);
    ASSERT_OK(gp_activity_flush_all(0));
    uint64_t delivered = gp_get_timestamp();
    double t_start = now_s();
    do {
      usleep(100000);
      ASSERT_OK(gp_activity_flush_all(0));
      ASSERT_OK(gp_live_read(path, &s, NULL));
    } while (s.time_ns == 0 && now_s() - t_start < 30);
    gp__live_stop();
    if (s.time_ns >= delivered)
      break;
    printf("  published before the records came: again\n");
  }
  ASSERT(access(path, F_OK) != 0);     /* removed at stop */
  ASSERT_GT(s.time_ns, t0 + 600 * MS); /* published after a second */
  uint64_t from = s.time_ns - s.interval_ns;
  ASSERT_LE(from, t0);
  const gp_live_kernel *k = kernel_named(&s, "long");
  ASSERT_NOT_NULL(k);
  ASSERT_EQ(k->launches, 2);
  ASSERT_UEQ(k->gpu_ns, t0 + 200 * MS - from + 100 * MS);
  ASSERT_UEQ(k->busy_ns, k->gpu_ns);
  ASSERT(kernel_named(&s, "late") == NULL);
  ASSERT_UEQ(s.late_ns, 1000 * MS);
  k = kernel_named(&s, "pair");
  ASSERT_NOT_NULL(k);
  ASSERT_EQ(k->launches, 2);
  ASSERT_UEQ(k->gpu_ns, 200 * MS);
  ASSERT_UEQ(k->busy_ns, 150 * MS); /* the union */
  ASSERT_EQ(s.num_devices, 1);
  const gp_live_device *d = &s.devices[0];
  ASSERT_STR_EQ(d->name, "test cl device");
  ASSERT_UEQ(d->busy_ns, t0 + 200 * MS - from + 100 * MS + 150 * MS + 15 * MS);
  ASSERT_EQ(d->in_flight, 1);
  ASSERT_EQ(s.in_flight_unplaced, 0);
  ASSERT_UEQ(d->in_flight_since_ns, t0 + 600 * MS);
  ASSERT_UEQ(d->assumed_ns, s.time_ns - (t0 + 600 * MS));
  ASSERT_LE(d->busy_ns + d->assumed_ns, s.interval_ns);
  /* The queues: their own unions. */
  ASSERT_EQ(s.num_queues, 2);
  for (uint32_t i = 0; i < s.num_kernels; i++)
    ASSERT_LE(s.kernels[i].busy_ns, s.interval_ns);
}
