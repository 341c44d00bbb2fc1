/*
 * test_perf_event.c - the host CPU as a counter source through Linux
 * perf_event: its catalog, perfmons that count this process, periodic
 * sampling, and the error that names kernel.perf_event_paranoid when the
 * kernel refuses (made to happen with a seccomp filter, as container
 * runtimes do, and by dropping privileges where the sysctl forbids it).
 */
#include <pwd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "programs/refuse_perf.h"
#include "testutil.h"

static uint32_t host_device(void) {
  uint32_t id = 0, again = 0;
  ASSERT_OK(gp_host_device_register(&id));
  ASSERT_OK(gp_host_device_register(&again));
  ASSERT_EQ(id, again);
  return id;
}

static void need_perf(void) {
  char msg[512];
  if (gp_host_perf_status(msg, sizeof(msg)) != 0)
    SKIP("%s", msg);
}

static uint32_t cid(uint32_t dev, const char *name) {
  const char *names[1] = {name};
  uint32_t id = 0;
  size_t n = 0;
  ASSERT_OK(gp_counter_select(dev, names, 1, &id, 1, &n));
  return id;
}

static void burn_ms(int ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  volatile double x = 0;
  do {
    for (int i = 0; i < 10000; i++)
      x += i;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    (void)x;
  } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 <
           ms);
}

TEST(perf_event_host_catalog_and_perfmon) {
  uint32_t dev = host_device();
  gp_device_info di;
  ASSERT_OK(gp_device_get_info(dev, &di));
  ASSERT(strncmp(di.name, "Host CPU", 8) == 0);
  gp_counter_catalog_info ci;
  ASSERT_OK(gp_counter_catalog(dev, &ci));
  ASSERT_GE(ci.num_counters, 9);
  ASSERT_EQ(ci.supports_instrumented, 0);
  gp_counter_info c;
  ASSERT_OK(gp_counter_lookup(dev, cid(dev, "task-clock"), &c));
  ASSERT_EQ(c.numerator_units[0], GP_UNIT_NANOSECOND);
  cid(dev, "context-switches");
  cid(dev, "page-faults");
  need_perf();
  uint32_t ids[] = {cid(dev, "task-clock"), cid(dev, "page-faults")};
  gp_perfmon *pm;
  ASSERT_OK(gp_perfmon_create(dev, ids, 2, &pm));
  gp_counter_value v0[2], v1[2];
  ASSERT_OK(gp_perfmon_get_values(pm, v0, 0)); /* never pending */
  burn_ms(30);
  volatile char *mem = malloc(8 << 20);
  ASSERT_NOT_NULL(mem);
  for (size_t i = 0; i < (8u << 20); i += 4096)
    mem[i] = 1; /* page faults */
  ASSERT_OK(gp_perfmon_get_values(pm, v1, 0));
  free((void *)mem);
  ASSERT_GE(v1[0].i64 - v0[0].i64, 25000000); /* >= 25 ms of CPU */
  ASSERT_GE(v1[1].i64 - v0[1].i64, 1000);
  /* The counters of another device stay theirs. */
  ASSERT_ERR(gp_perfmon_set_global(pm), GP_ENOTSUP);
  ASSERT_ERR(gp_counters_start(dev, &(gp_counter_config){.instrumented = 1,
                                                         .counter_ids = ids,
                                                         .num_counter_ids = 1}),
             GP_ENOTSUP);
  gp_perfmon_destroy(pm);
}

TEST(perf_event_periodic_sampling) {
  uint32_t dev = host_device();
  need_perf();
  tu_capture(1 << 20, 0);
  ASSERT_OK(gp_activity_enable(GP_ACTIVITY_KIND_COUNTER));
  uint32_t id = cid(dev, "task-clock");
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = 5000000;
  c.counter_ids = &id;
  c.num_counter_ids = 1;
  ASSERT_ERR(
      gp_counters_start(dev, &(gp_counter_config){.counter_period_ns = 1000,
                                                  .counter_ids = &id,
                                                  .num_counter_ids = 1}),
      GP_EINVAL); /* below 1 ms */
  ASSERT_OK(gp_counters_start(dev, &c));
  burn_ms(40);
  ASSERT_OK(gp_counters_stop(dev));
  ASSERT_OK(gp_activity_flush_all(0));
  int64_t sum = 0;
  size_t n = 0;
  uint64_t prev_end = 0;
  const gp_activity *r;
  for (size_t i = 0; (r = tu_find(GP_ACTIVITY_KIND_COUNTER, i)); i++) {
    const gp_activity_counter *x = (const gp_activity_counter *)r;
    ASSERT_EQ(x->device_id, dev);
    ASSERT_EQ(x->counter_id, id);
    ASSERT_LE(x->window_start, x->timestamp);
    if (prev_end)
      ASSERT_EQ(x->window_start, prev_end);
    prev_end = x->timestamp;
    sum += x->value.i64;
    n++;
  }
  ASSERT_GE(n, 3);
  ASSERT_GE(sum, 35000000); /* the windows add up to the CPU time burnt */
}

static int paranoid(void) {
  FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
  int v = -100;
  if (f) {
    if (fscanf(f, "%d", &v) != 1)
      v = -100;
    fclose(f);
  }
  return v;
}

TEST(perf_event_refused_names_paranoid) {
  uint32_t dev = host_device(); /* catalog probed before the filter */
  if (!refuse_perf_event_open())
    SKIP("cannot install a seccomp filter on this architecture/kernel");
  char msg[512] = "";
  ASSERT_ERR(gp_host_perf_status(msg, sizeof(msg)), -EACCES);
  char want[96];
  snprintf(want, sizeof(want), "kernel.perf_event_paranoid is %d", paranoid());
  if (!strstr(msg, want))
    gp_test_fail(__FILE__, __LINE__, "message lacks '%s': %s", want, msg);
  ASSERT(strstr(msg, "refused"));
  /* Nothing is created; the next perfmon still gets the next id. */
  uint32_t ids[] = {cid(dev, "task-clock")};
  gp_perfmon *pm = NULL;
  ASSERT_ERR(gp_perfmon_create(dev, ids, 1, &pm), -EACCES);
  ASSERT(pm == NULL);
  gp_counter_config c;
  memset(&c, 0, sizeof(c));
  c.counter_period_ns = 10000000;
  c.counter_ids = ids;
  c.num_counter_ids = 1;
  ASSERT_ERR(gp_counters_start(dev, &c), -EACCES);
  ASSERT_ERR(gp_counters_stop(dev), GP_ESTATE);
}

/* An unprivileged process: at kernel.perf_event_paranoid <= 2 it counts
 * its own user-space events (the provider falls back to them); above, it
 * gets the refusal naming the sysctl. */
TEST(perf_event_unprivileged_process) {
  if (geteuid() != 0)
    SKIP("needs root to drop to an unprivileged user");
  if (gp_host_perf_status(NULL, 0) != 0)
    SKIP("perf_event_open is refused even to root here");
  struct passwd *pw = getpwnam("nobody");
  uid_t uid = pw ? pw->pw_uid : 65534;
  gid_t gid = pw ? pw->pw_gid : 65534;
  uint32_t dev = host_device();
  if (setgid(gid) != 0 || setuid(uid) != 0)
    SKIP("cannot drop privileges");
  char msg[512];
  int rc = gp_host_perf_status(msg, sizeof(msg));
  uint32_t ids[] = {cid(dev, "task-clock")};
  gp_perfmon *pm = NULL;
  if (paranoid() <= 2) {
    ASSERT_OK(rc);
    ASSERT_OK(gp_perfmon_create(dev, ids, 1, &pm));
    burn_ms(10);
    gp_counter_value v;
    ASSERT_OK(gp_perfmon_get_values(pm, &v, 0));
    ASSERT_GE(v.i64, 5000000);
    gp_perfmon_destroy(pm);
  } else {
    ASSERT_NE(rc, 0);
    ASSERT(strstr(msg, "kernel.perf_event_paranoid is"));
    ASSERT_NE(gp_perfmon_create(dev, ids, 1, &pm), 0);
  }
}
