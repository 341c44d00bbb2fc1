/*
 * test_writer.c - the trace writer through our own decoder: every field
 * written comes back, interning and sequence flags follow the rules, the
 * demo-like workload gives the same bytes twice, a small trace matches its
 * golden text dump, drops clear the incremental state, counter samples and
 * descriptors in both modes, and the dump of Perfetto's own conformance
 * traces matches Perfetto's decoding of them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/core.h"
#include "harness.h"
#include "perfetto/dump.h"
#include "perfetto/pb.h"
#include "perfetto/proto.h"
#include "perfetto/writer.h"
#include "gpuperf/tp.h"
#include "writer_util.h"

#define CHECK(expr) ASSERT_OK(expr)

/* A small workload on one simulated GPU: two streams, an event
 * dependency, copies, a fill, a user range per step, a named stream. */
static void workload(unsigned steps, bool fail) {
  gp_sim_config sc;
  memset(&sc, 0, sizeof(sc));
  sc.num_devices = 1;
  sc.models[0] = GP_SIM_MODEL_COMPUTE;
  CHECK(gp_sim_init(&sc));
  gp_sim_context *ctx;
  gp_sim_stream *s1, *s2;
  gp_sim_event *ev;
  gp_sim_kernel *ka, *kb;
  uint64_t buf;
  static char host[4096];
  CHECK(gp_sim_context_create(0, &ctx));
  CHECK(gp_sim_stream_create(ctx, &s1));
  CHECK(gp_sim_stream_create(ctx, &s2));
  CHECK(gp_sim_stream_set_name(s1, "main"));
  CHECK(gp_sim_event_create(ctx, &ev));
  CHECK(gp_sim_malloc(ctx, 1 << 20, &buf));
  gp_sim_kernel_desc d;
  memset(&d, 0, sizeof(d));
  d.name = "_Z7producePfi";
  d.demangled_name = "produce(float*, int)";
  d.flops_per_thread = 100;
  d.bytes_per_thread = 8;
  d.read_fraction = 0.5;
  d.registers_per_thread = 32;
  d.static_shared_memory = 2048;
  CHECK(gp_sim_kernel_create(&d, &ka));
  d.name = "_Z7consumePKfi";
  d.demangled_name = "consume(float const*, int)";
  d.static_shared_memory = 0;
  CHECK(gp_sim_kernel_create(&d, &kb));
  const gp_sim_dim3 grid = {64, 2, 1}, block = {128, 1, 1};
  for (unsigned i = 1; i <= steps; i++) {
    char name[32];
    snprintf(name, sizeof(name), "step %u", i);
    CHECK(gp_range_push("test", name));
    CHECK(
        gp_sim_memcpy_async(s1, buf, GP_SIM_HOST(host), 4096, GP_MEMCPY_HTOD));
    CHECK(gp_sim_launch(s1, ka, grid, block, 0));
    CHECK(gp_sim_event_record(ev, s1));
    CHECK(gp_sim_stream_wait_event(s2, ev));
    CHECK(gp_sim_launch(s2, kb, grid, block, 1024));
    CHECK(gp_sim_memset_async(s2, buf, 0, 4096));
    if (fail && i == 1) {
      const gp_sim_dim3 bad = {0, 1, 1};
      ASSERT_ERR(gp_sim_launch(s1, ka, bad, block, 0), GP_EINVAL);
    }
    CHECK(gp_sim_context_synchronize(ctx));
    CHECK(gp_range_pop());
  }
  CHECK(gp_sim_context_destroy(ctx));
}

/* Records the workload in this process with a session into path. */
static void record_workload(const char *path, const char *config,
                            unsigned steps, bool fail) {
  gp_trace_config *cfg;
  char err[256];
  CHECK(gp_trace_config_parse(config, strlen(config), &cfg, err, sizeof(err)));
  gp_session_options o;
  memset(&o, 0, sizeof(o));
  o.flags = GP_SESSION_DETERMINISTIC;
  gp_session *s;
  CHECK(gp_session_start(cfg, path, &o, &s));
  gp_trace_config_destroy(cfg);
  workload(steps, fail);
  CHECK(gp_session_stop(s));
  gp_session_stats st;
  CHECK(gp_session_get_stats(s, &st));
  ASSERT_EQ(st.dropped, 0);
  gp_session_destroy(s);
}

static const char render_config[] =
    "data_sources { config { name: \"gpu.renderstages\" } }\n"
    "data_sources { config { name: \"gpu.log\" } }\n";

/* The k-th packet with data_id whose data has `field` equal to v. */
static const wt_packet *find_packet(const wt_trace *t, uint32_t data_id,
                                    uint32_t field, uint64_t v) {
  for (size_t i = 0; i < t->n; i++) {
    uint64_t x;
    if (t->p[i].data_id == data_id &&
        wt_u64(t->p[i].data, t->p[i].data_size, field, &x) && x == v)
      return &t->p[i];
  }
  return NULL;
}

/* The iid an interned name entry (field) has in the trace, 0 if none. */
static uint64_t iid_of(const wt_trace *t, uint32_t field, const char *name) {
  for (size_t i = 0; i < t->n; i++) {
    const uint8_t *e;
    size_t en;
    for (size_t k = 0;
         t->p[i].interned &&
         wt_sub(t->p[i].interned, t->p[i].interned_size, field, k, &e, &en);
         k++) {
      uint64_t iid;
      if (wt_str_is(e, en, 2, 0, name) && wt_u64(e, en, 1, &iid))
        return iid;
    }
  }
  return 0;
}

static bool has_track(const wt_trace *t, const char *name) {
  for (size_t i = 0; i < t->n; i++)
    if (t->p[i].data_id == GP_PB_PACKET_TRACK_DESCRIPTOR &&
        wt_str_is(t->p[i].data, t->p[i].data_size, GP_PB_TD_NAME, 0, name))
      return true;
  return false;
}

TEST(writer_roundtrip_every_field) {
  const char *path = gp_test_path(0, "t.pftrace");
  record_workload(path, render_config, 3, true);
  wt_trace t;
  wt_load(&t, path);
  ASSERT_EQ(t.valid, t.size);
  wt_check_sequences(&t);

  /* The first packet: a host clock snapshot, BOOTTIME the trace clock. */
  ASSERT_EQ(t.p[0].data_id, GP_PB_PACKET_CLOCK_SNAPSHOT);
  ASSERT(t.p[0].flags & GP_PB_SEQ_INCREMENTAL_STATE_CLEARED);
  ASSERT_EQ(wt_count(t.p[0].data, t.p[0].data_size, 1), 3);
  uint64_t v;
  ASSERT(wt_u64(t.p[0].data, t.p[0].data_size, 2, &v));
  ASSERT_EQ(v, GP_CLOCK_BOOTTIME);
  /* Device clocks are snapshotted too, with sequence-scoped ids. */
  bool device_clock = false;
  for (size_t i = 0; i < t.n; i++) {
    const uint8_t *c;
    size_t cn;
    if (t.p[i].data_id != GP_PB_PACKET_CLOCK_SNAPSHOT)
      continue;
    for (size_t k = 0; wt_sub(t.p[i].data, t.p[i].data_size, 1, k, &c, &cn);
         k++)
      if (wt_u64(c, cn, 1, &v) && v == wt_trace_clock(GP_CLOCK_FIRST_DEVICE))
        device_clock = true;
  }
  ASSERT(device_clock);

  /* 3 steps x (2 kernels, 1 copy, 1 fill). */
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT), 12);
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_INFO), 1);
  const wt_packet *gi = NULL;
  for (size_t i = 0; i < t.n && !gi; i++)
    if (t.p[i].data_id == GP_PB_PACKET_GPU_INFO)
      gi = &t.p[i];
  const uint8_t *g;
  size_t gn;
  ASSERT(wt_sub(gi->data, gi->data_size, GP_PB_GPU_INFO_GPUS, 0, &g, &gn));
  ASSERT(wt_str_is(g, gn, GP_PB_GPU_NAME, 0, "Sim Compute GPU #0"));
  ASSERT(wt_str_is(g, gn, GP_PB_GPU_PCI_BDF, 0, "0000:17:00.0"));

  /* The consume kernel: every field, and its interned entries. */
  uint64_t consume_name = iid_of(&t, GP_PB_INTERNED_EVENT_NAMES, "consume");
  ASSERT_NE(consume_name, 0);
  const wt_packet *k = find_packet(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT,
                                   GP_PB_RSE_NAME_IID, consume_name);
  ASSERT_NOT_NULL(k);
  ASSERT(wt_u64(k->data, k->data_size, GP_PB_RSE_EVENT_ID, &v));
  ASSERT_EQ(v & 0xff, 1); /* the sequence id, in the low byte */
  ASSERT(wt_u64(k->data, k->data_size, GP_PB_RSE_DURATION, &v) && v > 0);
  ASSERT(wt_u64(k->data, k->data_size, GP_PB_RSE_GPU_ID, &v) && v == 0);
  ASSERT_EQ(wt_count(k->data, k->data_size, GP_PB_RSE_EVENT_WAIT_IDS), 1);
  uint64_t wait;
  ASSERT(wt_u64(k->data, k->data_size, GP_PB_RSE_EVENT_WAIT_IDS, &wait));
  ASSERT_NOT_NULL(find_packet(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT,
                              GP_PB_RSE_EVENT_ID, wait));
  const uint8_t *l, *dim;
  size_t ln, dn;
  ASSERT(wt_sub(k->data, k->data_size, GP_PB_RSE_LAUNCH, 0, &l, &ln));
  ASSERT(wt_sub(l, ln, GP_PB_LAUNCH_GRID_SIZE, 0, &dim, &dn));
  ASSERT(wt_u64(dim, dn, GP_PB_DIM3_X, &v) && v == 64);
  ASSERT(wt_u64(dim, dn, GP_PB_DIM3_Y, &v) && v == 2);
  ASSERT(wt_u64(dim, dn, GP_PB_DIM3_Z, &v) && v == 1);
  ASSERT(wt_sub(l, ln, GP_PB_LAUNCH_WORKGROUP_SIZE, 0, &dim, &dn));
  ASSERT(wt_u64(dim, dn, GP_PB_DIM3_X, &v) && v == 128);
  uint64_t dyn = iid_of(&t, GP_PB_INTERNED_COMPUTE_ARG_NAMES,
                        "launch__shared_mem_per_block_dynamic");
  uint64_t threads =
      iid_of(&t, GP_PB_INTERNED_COMPUTE_ARG_NAMES, "launch__thread_count");
  ASSERT_NE(dyn, 0);
  bool saw_dyn = false, saw_threads = false;
  const uint8_t *a;
  size_t an;
  for (size_t i = 0; wt_sub(l, ln, GP_PB_LAUNCH_ARGS, i, &a, &an); i++) {
    uint64_t name, val;
    ASSERT(wt_u64(a, an, GP_PB_ARG_NAME_IID, &name));
    ASSERT(wt_u64(a, an, GP_PB_ARG_UINT_VALUE, &val));
    if (name == dyn)
      saw_dyn = val == 1024;
    if (name == threads)
      saw_threads = val == 64 * 2 * 128;
  }
  ASSERT(saw_dyn && saw_threads);
  /* The interned kernel: mangled and demangled names, architecture. */
  ASSERT(wt_u64(k->data, k->data_size, GP_PB_RSE_KERNEL_IID, &v));
  bool kernel_ok = false;
  for (size_t i = 0; i < t.n && !kernel_ok; i++) {
    const uint8_t *e;
    size_t en;
    uint64_t iid;
    for (size_t j = 0;
         t.p[i].interned && wt_sub(t.p[i].interned, t.p[i].interned_size,
                                   GP_PB_INTERNED_COMPUTE_KERNELS, j, &e, &en);
         j++)
      if (wt_u64(e, en, 1, &iid) && iid == v)
        kernel_ok = wt_str_is(e, en, GP_PB_KERNEL_NAME, 0, "_Z7consumePKfi") &&
                    wt_str_is(e, en, GP_PB_KERNEL_DEMANGLED_NAME, 0,
                              "consume(float const*, int)") &&
                    wt_str_is(e, en, GP_PB_KERNEL_ARCH, 0, "simt-100");
  }
  ASSERT(kernel_ok);
  /* Kernels are COMPUTE stages; the context says which process. */
  uint64_t stage;
  ASSERT(wt_u64(k->data, k->data_size, GP_PB_RSE_STAGE_IID, &stage));
  bool stage_ok = false;
  for (size_t i = 0; i < t.n; i++) {
    const uint8_t *e;
    size_t en;
    uint64_t iid, cat;
    for (size_t j = 0; t.p[i].interned &&
                       wt_sub(t.p[i].interned, t.p[i].interned_size,
                              GP_PB_INTERNED_GPU_SPECIFICATIONS, j, &e, &en);
         j++)
      if (wt_u64(e, en, 1, &iid) && iid == stage)
        stage_ok = wt_u64(e, en, GP_PB_SPEC_CATEGORY, &cat) &&
                   cat == GP_PB_STAGE_CATEGORY_COMPUTE &&
                   wt_str_is(e, en, GP_PB_SPEC_NAME, 0, "Kernel");
  }
  ASSERT(stage_ok);

  /* The copy: its bytes as extra data. */
  uint64_t htod = iid_of(&t, GP_PB_INTERNED_GPU_SPECIFICATIONS, "Memcpy HtoD");
  const wt_packet *m = find_packet(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT,
                                   GP_PB_RSE_STAGE_IID, htod);
  ASSERT_NOT_NULL(m);
  const uint8_t *x;
  size_t xn;
  ASSERT(wt_sub(m->data, m->data_size, GP_PB_RSE_EXTRA_DATA, 0, &x, &xn));
  ASSERT(wt_str_is(x, xn, GP_PB_EXTRA_NAME, 0, "bytes"));
  ASSERT(wt_str_is(x, xn, GP_PB_EXTRA_VALUE, 0, "4096"));

  /* API calls: balanced slices; launches name the work they submitted. */
  uint64_t launch = iid_of(&t, GP_PB_INTERNED_EVENT_NAMES, "gp_sim_launch");
  ASSERT_NE(launch, 0);
  size_t begins = 0, ends = 0, launches = 0, linked = 0;
  for (size_t i = 0; i < t.n; i++) {
    const wt_packet *p = &t.p[i];
    if (p->data_id != GP_PB_PACKET_TRACK_EVENT)
      continue;
    uint64_t type = 0, name = 0;
    wt_u64(p->data, p->data_size, GP_PB_TE_TYPE, &type);
    begins += type == GP_PB_TE_TYPE_SLICE_BEGIN;
    ends += type == GP_PB_TE_TYPE_SLICE_END;
    const uint8_t *c;
    size_t cn;
    if (!wt_u64(p->data, p->data_size, GP_PB_TE_NAME_IID, &name) ||
        name != launch ||
        !wt_sub(p->data, p->data_size, GP_PB_TE_GPU_CORRELATION, 0, &c, &cn))
      continue;
    launches++;
    uint64_t id;
    ASSERT(wt_u64(c, cn, GP_PB_CORR_SUBMISSION_IDS, &id));
    linked += find_packet(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT,
                          GP_PB_RSE_EVENT_ID, id) != NULL;
  }
  ASSERT_EQ(begins, ends);
  ASSERT_EQ(launches, 7); /* 6 kernels and the failed launch */
  ASSERT_EQ(linked, 6);
  /* Synchronisation waits name the work waited for. */
  bool waited = false;
  for (size_t i = 0; i < t.n && !waited; i++) {
    const uint8_t *c;
    size_t cn;
    if (t.p[i].data_id == GP_PB_PACKET_TRACK_EVENT &&
        wt_sub(t.p[i].data, t.p[i].data_size, GP_PB_TE_GPU_CORRELATION, 0, &c,
               &cn) &&
        wt_u64(c, cn, GP_PB_CORR_WAIT_IDS, &v))
      waited = find_packet(&t, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT,
                           GP_PB_RSE_EVENT_ID, v) != NULL;
  }
  ASSERT(waited);

  /* User ranges, the track tree, the failed call in the log. */
  ASSERT_NE(iid_of(&t, GP_PB_INTERNED_EVENT_NAMES, "step 3"), 0);
  ASSERT_NE(iid_of(&t, GP_PB_INTERNED_EVENT_CATEGORIES, "test"), 0);
  ASSERT(has_track(&t, "Simulated GPUs"));
  ASSERT(has_track(&t, "Device #0"));
  /* Stream ids count from the context's default stream (#1). */
  ASSERT(has_track(&t, "Stream #2 (main)"));
  ASSERT(has_track(&t, "gpuperf dropped records"));
  ASSERT_EQ(wt_count_packets(&t, GP_PB_PACKET_GPU_LOG), 1);
  wt_free(&t);
}

/* Runs record_workload in a fresh process (ids and virtual time start
 * afresh there, as in a new run of a program). */
static void record_in_child(const char *path, unsigned steps) {
  fflush(NULL);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    record_workload(path, render_config, steps, false);
    _exit(0);
  }
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

TEST(writer_deterministic_bytes) {
  const char *a = strdup(gp_test_path(0, "a.pftrace"));
  const char *b = strdup(gp_test_path(1, "b.pftrace"));
  record_in_child(a, 20);
  record_in_child(b, 20);
  size_t na, nb;
  uint8_t *da = wt_read_file(a, &na), *db = wt_read_file(b, &nb);
  ASSERT_GT(na, 1000);
  ASSERT_EQ(na, nb);
  ASSERT(memcmp(da, db, na) == 0);
  free(da);
  free(db);
}

TEST(writer_golden_small_trace) {
  const char *path = gp_test_path(0, "small.pftrace");
  setenv("GPUPERF_HOST_IDENTITY", "0", 1); /* no host names in the golden */
  record_workload(path, render_config, 1, true);
  size_t n;
  uint8_t *d = wt_read_file(path, &n);
  char *text = NULL;
  size_t tn = 0;
  FILE *mem = open_memstream(&text, &tn);
  ASSERT_OK(gp__trace_dump(d, n, mem));
  fclose(mem);
  free(d);
  /* Every field we write has a name in the dump's schema (whose tables
   * match Perfetto's decoding: writer_dump_matches_perfetto_decoding). */
  for (const char *l = text; l && *l;
       l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    while (*l == ' ')
      l++;
    if (*l == '#')
      gp_test_fail(__FILE__, __LINE__, "field unknown to the dump: %.40s", l);
  }
  const char *shared_src = getenv("GPUPERF_SOURCE");
  char golden[1024];
  snprintf(golden, sizeof(golden), "%s/tests/data/writer/golden_small.txt",
           shared_src && *shared_src ? shared_src : ".");
  const char *update = getenv("GPUPERF_UPDATE_GOLDEN");
  if (update && *update == '1') {
    FILE *g = fopen(golden, "w");
    ASSERT_NOT_NULL(g);
    fwrite(text, 1, tn, g);
    fclose(g);
  }
  FILE *g = fopen(golden, "r");
  if (!g)
    SKIP("golden file %s not found (run from the source tree)", golden);
  fclose(g);
  size_t gn;
  uint8_t *want = wt_read_file(golden, &gn);
  if (gn != tn || memcmp(want, text, tn) != 0) {
    const char *out = gp_test_path(1, "small.txt");
    FILE *o = fopen(out, "w");
    fwrite(text, 1, tn, o);
    fclose(o);
    gp_test_fail(__FILE__, __LINE__,
                 "the dump differs from %s; see diff -u %s %s (rerun with "
                 "GPUPERF_UPDATE_GOLDEN=1 if the change is intended)",
                 golden, golden, out);
  }
  free(want);
  free(text);
}

TEST(writer_machine_id_on_every_packet) {
  const char *path = gp_test_path(0, "m.pftrace");
  const char *config =
      "data_sources { config { name: \"gpu.renderstages\" } }\n"
      "gpuperf_options { machine_id: 1001 }\n";
  record_workload(path, config, 1, false);
  wt_trace t;
  wt_load(&t, path);
  ASSERT_GT(t.n, 10);
  for (size_t i = 0; i < t.n; i++) {
    /* Field 98 of the packet itself. */
    const uint8_t *pkt = t.bytes + t.p[i].offset;
    gp__pb_reader r;
    gp__pb_field f;
    gp__pb_reader_init(&r, pkt, t.size - t.p[i].offset, 0);
    ASSERT_EQ(gp__pb_next(&r, &f), 1);
    uint64_t v;
    ASSERT(wt_u64(f.data, f.size, GP_PB_PACKET_MACHINE_ID, &v));
    ASSERT_EQ(v, 1001);
  }
  wt_free(&t);
}

TEST(session_write_errors_are_reported) {
  if (access("/dev/full", W_OK) != 0)
    SKIP("no /dev/full here");
  gp_trace_config *cfg;
  ASSERT_OK(gp_trace_config_parse(render_config, strlen(render_config), &cfg,
                                  NULL, 0));
  gp_session *s;
  ASSERT_OK(gp_session_start(cfg, "/dev/full", NULL, &s));
  gp_trace_config_destroy(cfg);
  workload(1, false);
  ASSERT_ERR(gp_session_stop(s), -ENOSPC);
  gp_session_destroy(s);
}

TEST(writer_dump_survives_corrupt_traces) {
  /* A real trace, corrupted: the dump prints what it can and reports the
   * first malformed packet; it never reads outside its input. */
  const char *path = gp_test_path(0, "c.pftrace");
  record_workload(path, render_config, 1, false);
  size_t n;
  uint8_t *orig = wt_read_file(path, &n);
  uint8_t *buf = malloc(n);
  uint64_t seed = 7;
  FILE *null = fopen("/dev/null", "w");
  ASSERT_NOT_NULL(null);
  for (int iter = 0; iter < 500; iter++) {
    memcpy(buf, orig, n);
    size_t len = n;
    for (int e = 0; e < 3; e++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      size_t at = (size_t)(seed >> 33) % len;
      if (e == 2 && (seed & 1))
        len = at + 1;
      else
        buf[at] ^= (uint8_t)(1u << ((seed >> 20) & 7));
    }
    /* Exactly: the copy holds len bytes, so a read past it is a bug. */
    uint8_t *exact = malloc(len);
    memcpy(exact, buf, len);
    int rc = gp__trace_dump(exact, len, null);
    ASSERT(rc == 0 || rc == GP_ECORRUPT);
    wt_trace t;
    wt_parse(&t, exact, len); /* takes ownership */
    ASSERT_LE(t.valid, len);
    wt_free(&t);
  }
  fclose(null);
  free(buf);
  free(orig);
}
