/*
 * test_merge.c - gp_trace_merge() on two hand-made traces, checked packet
 * by packet: machine ids on every packet, the second machine's BOOTTIME
 * moved by exactly its REALTIME offset (timestamps, snapshots, durations,
 * a packet on a sequence-default clock; REALTIME and custom clocks kept),
 * sequences renumbered, uuids, event, flow and correlation ids (plain and
 * packed) made distinct, GPU and process names given the host, and the
 * "clock alignment" summary first.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuperf/error.h"
#include "gpuperf/merge.h"
#include "harness.h"
#include "perfetto/pb.h"
#include "perfetto/proto.h"
#include "writer_util.h"

#define REAL0 1700000000000000000ull

static void snapshot(gp__pb_writer *pb, uint64_t boot, uint64_t real) {
  gp__pb_begin(pb, GP_PB_TRACE_PACKET);
  gp__pb_uint(pb, GP_PB_PACKET_TIMESTAMP, boot);
  gp__pb_uint(pb, GP_PB_PACKET_SEQUENCE_ID, 7);
  gp__pb_begin(pb, GP_PB_PACKET_CLOCK_SNAPSHOT);
  gp__pb_begin(pb, GP_PB_CLOCK_SNAPSHOT_CLOCKS);
  gp__pb_uint(pb, GP_PB_CLOCK_ID, 6);
  gp__pb_uint(pb, GP_PB_CLOCK_TIMESTAMP, boot);
  gp__pb_end(pb);
  gp__pb_begin(pb, GP_PB_CLOCK_SNAPSHOT_CLOCKS);
  gp__pb_uint(pb, GP_PB_CLOCK_ID, 1);
  gp__pb_uint(pb, GP_PB_CLOCK_TIMESTAMP, real);
  gp__pb_end(pb);
  gp__pb_begin(pb, GP_PB_CLOCK_SNAPSHOT_CLOCKS);
  gp__pb_uint(pb, GP_PB_CLOCK_ID, 200); /* a custom clock: kept */
  gp__pb_uint(pb, GP_PB_CLOCK_TIMESTAMP, 42);
  gp__pb_end(pb);
  gp__pb_end(pb);
  gp__pb_end(pb);
}

/* A machine whose BOOTTIME is `boot_off` ahead of the first one's. */
static void make_trace(const char *path, uint64_t boot_off, const char *host) {
  gp__pb_writer pb;
  gp__pb_writer_init(&pb);
  snapshot(&pb, 1000000 + boot_off, REAL0 + 1000000);
  /* Host identity. */
  gp__pb_begin(&pb, GP_PB_TRACE_PACKET);
  gp__pb_uint(&pb, GP_PB_PACKET_TIMESTAMP, 1000000 + boot_off);
  gp__pb_uint(&pb, GP_PB_PACKET_SEQUENCE_ID, 7);
  gp__pb_begin(&pb, GP_PB_PACKET_TRACK_EVENT);
  gp__pb_uint(&pb, GP_PB_TE_TYPE, GP_PB_TE_TYPE_INSTANT);
  gp__pb_uint(&pb, GP_PB_TE_TRACK_UUID, 4097);
  gp__pb_string(&pb, GP_PB_TE_NAME, "gpuperf host");
  gp__pb_begin(&pb, GP_PB_TE_DEBUG_ANNOTATIONS);
  gp__pb_string(&pb, GP_PB_DA_NAME, "hostname");
  gp__pb_string(&pb, GP_PB_DA_STRING_VALUE, host);
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  /* Process track, GPU. */
  gp__pb_begin(&pb, GP_PB_TRACE_PACKET);
  gp__pb_uint(&pb, GP_PB_PACKET_SEQUENCE_ID, 7);
  gp__pb_begin(&pb, GP_PB_PACKET_TRACK_DESCRIPTOR);
  gp__pb_uint(&pb, GP_PB_TD_UUID, 4097);
  gp__pb_begin(&pb, GP_PB_TD_PROCESS);
  gp__pb_uint(&pb, GP_PB_PD_PID, 1000);
  gp__pb_string(&pb, GP_PB_PD_PROCESS_NAME, "train");
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  gp__pb_begin(&pb, GP_PB_TRACE_PACKET);
  gp__pb_uint(&pb, GP_PB_PACKET_SEQUENCE_ID, 7);
  gp__pb_begin(&pb, GP_PB_PACKET_GPU_INFO);
  gp__pb_begin(&pb, GP_PB_GPU_INFO_GPUS);
  gp__pb_string(&pb, GP_PB_GPU_NAME, "GPU");
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  /* GPU work with a packed wait list, and the call that launched it. */
  gp__pb_begin(&pb, GP_PB_TRACE_PACKET);
  gp__pb_uint(&pb, GP_PB_PACKET_TIMESTAMP, 2000000 + boot_off);
  gp__pb_uint(&pb, GP_PB_PACKET_SEQUENCE_ID, 7);
  gp__pb_begin(&pb, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT);
  gp__pb_uint(&pb, GP_PB_RSE_EVENT_ID, 257);
  gp__pb_uint(&pb, GP_PB_RSE_DURATION, 5000);
  uint8_t packed[2] = {0x81, 0x01}; /* 129 */
  gp__pb_bytes(&pb, GP_PB_RSE_EVENT_WAIT_IDS, packed, 2);
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  gp__pb_begin(&pb, GP_PB_TRACE_PACKET);
  gp__pb_uint(&pb, GP_PB_PACKET_TIMESTAMP, 1500000 + boot_off);
  gp__pb_uint(&pb, GP_PB_PACKET_SEQUENCE_ID, 7);
  gp__pb_begin(&pb, GP_PB_PACKET_TRACK_EVENT);
  gp__pb_uint(&pb, GP_PB_TE_TYPE, GP_PB_TE_TYPE_SLICE_BEGIN);
  gp__pb_uint(&pb, GP_PB_TE_TRACK_UUID, 4097);
  gp__pb_fixed64(&pb, 47, 5); /* flow_ids */
  gp__pb_begin(&pb, GP_PB_TE_GPU_CORRELATION);
  gp__pb_uint(&pb, GP_PB_CORR_SUBMISSION_IDS, 257);
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  /* A packet on REALTIME: kept as is. */
  gp__pb_begin(&pb, GP_PB_TRACE_PACKET);
  gp__pb_uint(&pb, GP_PB_PACKET_TIMESTAMP, REAL0 + 1700000);
  gp__pb_uint(&pb, GP_PB_PACKET_TIMESTAMP_CLOCK_ID, 1);
  gp__pb_uint(&pb, GP_PB_PACKET_SEQUENCE_ID, 8);
  gp__pb_begin(&pb, GP_PB_PACKET_GPU_LOG);
  gp__pb_string(&pb, GP_PB_LOG_TAG, "t");
  gp__pb_end(&pb);
  gp__pb_end(&pb);
  snapshot(&pb, 9000000 + boot_off, REAL0 + 9000000);
  size_t n = (size_t)gp__pb_size(&pb);
  uint8_t *b = malloc(n);
  ASSERT_NOT_NULL(b);
  gp__pb_copy(&pb, b);
  FILE *f = fopen(path, "wb");
  ASSERT_NOT_NULL(f);
  ASSERT_EQ(fwrite(b, 1, n, f), n);
  fclose(f);
  free(b);
  gp__pb_writer_fini(&pb);
}

typedef struct seen {
  uint64_t machine, seq, ts, clock;
  bool has_ts;
} seen;

/* The values of field `id` (varint or fixed) inside msg, up to max. */
static size_t find_all(const uint8_t *d, size_t n, uint32_t id, uint64_t *out,
                       size_t max) {
  gp__pb_reader r;
  gp__pb_field f;
  size_t k = 0;
  gp__pb_reader_init(&r, d, n, 0);
  while (gp__pb_next(&r, &f) == 1)
    if (f.id == id && k < max)
      out[k++] =
          f.wire_type == GP_PB_LEN ? (uint64_t)(uintptr_t)f.data : f.value;
  return k;
}

static bool sub(const uint8_t *d, size_t n, uint32_t id, const uint8_t **sd,
                size_t *sn) {
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, d, n, 0);
  while (gp__pb_next(&r, &f) == 1)
    if (f.id == id && f.wire_type == GP_PB_LEN) {
      *sd = f.data;
      *sn = f.size;
      return true;
    }
  return false;
}

static bool has_string(const uint8_t *d, size_t n, uint32_t id, const char *s) {
  const uint8_t *sd;
  size_t sn;
  return sub(d, n, id, &sd, &sn) && sn == strlen(s) && memcmp(sd, s, sn) == 0;
}

TEST(merge_rewrites_every_id_and_time) {
  char a[1100], b[1100], out[1100];
  snprintf(a, sizeof(a), "%s/a.pftrace", gp_test_tmpdir());
  snprintf(b, sizeof(b), "%s/b.pftrace", gp_test_tmpdir());
  snprintf(out, sizeof(out), "%s/m.pftrace", gp_test_tmpdir());
  const uint64_t off = 5000000000ull;
  make_trace(a, 0, "hostA");
  make_trace(b, off, "hostB");
  const char *in[2] = {a, b};
  gp_merge_machine m[2];
  char err[256] = "";
  ASSERT_OK(gp_trace_merge(in, 2, out, NULL, m, err, sizeof(err)));
  ASSERT_STR_EQ(m[1].hostname, "hostB");
  ASSERT_EQ(m[1].offset_ns, -(int64_t)off);
  ASSERT_EQ(m[0].machine_id, 1);
  ASSERT_EQ(m[1].machine_id, 2);

  size_t n;
  uint8_t *d = wt_read_file(out, &n);
  gp__pb_reader r;
  gp__pb_field f;
  gp__pb_reader_init(&r, d, n, 0);
  int packets = 0, per_machine[3] = {0}, alignments = 0;
  uint64_t seqs[2][2] = {{0}};
  while (gp__pb_next(&r, &f) == 1) {
    ASSERT_EQ(f.id, 1);
    const uint8_t *p = f.data;
    size_t pn = f.size;
    uint64_t v[4];
    ASSERT_EQ(find_all(p, pn, GP_PB_PACKET_MACHINE_ID, v, 4), 1);
    uint64_t mach = v[0];
    ASSERT(mach == 1 || mach == 2);
    if (packets++ == 0)
      ASSERT_EQ(mach, 1); /* the summary first: machine 1 is adopted */
    per_machine[mach]++;
    uint64_t x = mach == 2 ? 1ull << 48 : 0; /* input k: k << 48 */
    const uint8_t *s;
    size_t sn;
    uint64_t ts = 0, clock = 0, seq = 0;
    bool has_ts = find_all(p, pn, GP_PB_PACKET_TIMESTAMP, v, 4) == 1;
    if (has_ts)
      ts = v[0];
    if (find_all(p, pn, GP_PB_PACKET_TIMESTAMP_CLOCK_ID, v, 4) == 1)
      clock = v[0];
    if (find_all(p, pn, GP_PB_PACKET_SEQUENCE_ID, v, 4) == 1)
      seq = v[0];
    if (sub(p, pn, GP_PB_PACKET_TRACK_EVENT, &s, &sn) &&
        has_string(s, sn, GP_PB_TE_NAME, "clock alignment")) {
      alignments++;
      continue;
    }
    if (sub(p, pn, GP_PB_PACKET_TRACK_DESCRIPTOR, &s, &sn) &&
        has_string(s, sn, GP_PB_TD_NAME, "gpuperf merge"))
      continue;
    /* Each input's sequences 7 and 8 get distinct new ids. */
    if (seq) {
      int which = mach == 2;
      int slot = seqs[which][0] == 0 || seqs[which][0] == seq ? 0 : 1;
      if (!seqs[which][slot])
        seqs[which][slot] = seq;
      ASSERT_EQ(seqs[which][slot], seq);
    }
    if (clock == 1) {
      ASSERT_EQ(ts, REAL0 + 1700000); /* REALTIME: kept */
      continue;
    }
    if (sub(p, pn, GP_PB_PACKET_CLOCK_SNAPSHOT, &s, &sn)) {
      /* BOOTTIME moved (onto machine 1's), REALTIME and clock 200 kept. */
      ASSERT(ts == 1000000 || ts == 9000000);
      gp__pb_reader cr, kr;
      gp__pb_field cf, kf;
      int clocks = 0;
      gp__pb_reader_init(&cr, s, sn, 0);
      while (gp__pb_next(&cr, &cf) == 1) {
        if (cf.id != GP_PB_CLOCK_SNAPSHOT_CLOCKS)
          continue;
        uint64_t id = 0, val = 0;
        gp__pb_reader_init(&kr, cf.data, cf.size, 0);
        while (gp__pb_next(&kr, &kf) == 1) {
          if (kf.id == GP_PB_CLOCK_ID)
            id = kf.value;
          else if (kf.id == GP_PB_CLOCK_TIMESTAMP)
            val = kf.value;
        }
        if (id == 6)
          ASSERT_EQ(val, ts);
        else if (id == 1)
          ASSERT_UEQ(val, REAL0 + ts);
        else
          ASSERT(id == 200 && val == 42);
        clocks++;
      }
      ASSERT_EQ(clocks, 3);
      continue;
    }
    if (sub(p, pn, GP_PB_PACKET_GPU_RENDER_STAGE_EVENT, &s, &sn)) {
      ASSERT_EQ(ts, 2000000);
      ASSERT_EQ(find_all(s, sn, GP_PB_RSE_EVENT_ID, v, 4), 1);
      ASSERT_UEQ(v[0], 257 ^ x);
      ASSERT_EQ(find_all(s, sn, GP_PB_RSE_EVENT_WAIT_IDS, v, 4), 1);
      ASSERT_UEQ(v[0], 129 ^ x);
      ASSERT_EQ(find_all(s, sn, GP_PB_RSE_DURATION, v, 4), 1);
      ASSERT_EQ(v[0], 5000);
      continue;
    }
    if (sub(p, pn, GP_PB_PACKET_TRACK_DESCRIPTOR, &s, &sn)) {
      ASSERT_EQ(find_all(s, sn, GP_PB_TD_UUID, v, 4), 1);
      ASSERT_UEQ(v[0], 4097 ^ x);
      const uint8_t *pd;
      size_t pdn;
      ASSERT(sub(s, sn, GP_PB_TD_PROCESS, &pd, &pdn));
      ASSERT(has_string(pd, pdn, GP_PB_PD_PROCESS_NAME,
                        mach == 2 ? "hostB: train" : "hostA: train"));
      continue;
    }
    if (sub(p, pn, GP_PB_PACKET_GPU_INFO, &s, &sn)) {
      const uint8_t *g;
      size_t gn;
      ASSERT(sub(s, sn, GP_PB_GPU_INFO_GPUS, &g, &gn));
      ASSERT(has_string(g, gn, GP_PB_GPU_NAME,
                        mach == 2 ? "hostB: GPU" : "hostA: GPU"));
      continue;
    }
    if (sub(p, pn, GP_PB_PACKET_TRACK_EVENT, &s, &sn)) {
      ASSERT_EQ(find_all(s, sn, GP_PB_TE_TRACK_UUID, v, 4), 1);
      ASSERT_UEQ(v[0], 4097 ^ x);
      if (find_all(s, sn, 47, v, 4) == 1) {
        ASSERT_EQ(ts, 1500000);
        ASSERT_UEQ(v[0], 5 ^ x);
        const uint8_t *c;
        size_t cn;
        ASSERT(sub(s, sn, GP_PB_TE_GPU_CORRELATION, &c, &cn));
        ASSERT_EQ(find_all(c, cn, GP_PB_CORR_SUBMISSION_IDS, v, 4), 1);
        ASSERT_UEQ(v[0], 257 ^ x);
      } else {
        ASSERT_EQ(ts, 1000000); /* the host instant */
      }
      continue;
    }
    ASSERT(!"unexpected packet");
  }
  ASSERT_EQ(alignments, 2);
  ASSERT_EQ(per_machine[2], 8);
  ASSERT(seqs[0][0] && seqs[0][1] && seqs[1][0] && seqs[1][1]);
  ASSERT(seqs[0][0] != seqs[1][0] && seqs[0][1] != seqs[1][1] &&
         seqs[0][0] != seqs[1][1] && seqs[0][1] != seqs[1][0]);
  free(d);
}

TEST(merge_bad_arguments_change_nothing) {
  char err[256] = "";
  ASSERT_ERR(gp_trace_merge(NULL, 0, "x", NULL, NULL, err, sizeof(err)),
             GP_EINVAL);
  char missing[1100];
  snprintf(missing, sizeof(missing), "%s/none.pftrace", gp_test_tmpdir());
  const char *in[1] = {missing};
  char out[1100];
  snprintf(out, sizeof(out), "%s/o.pftrace", gp_test_tmpdir());
  ASSERT(gp_trace_merge(in, 1, out, NULL, NULL, err, sizeof(err)) < 0);
  ASSERT(strstr(err, "none.pftrace"));
  FILE *f = fopen(out, "rb");
  ASSERT(f == NULL); /* nothing written before the inputs were read */
}

/* Writes the bytes of hex (pairs of digits) to path. */
static void write_hex(const char *path, const char *hex) {
  FILE *f = fopen(path, "wb");
  ASSERT(f != NULL);
  for (size_t i = 0; hex[i] && hex[i + 1]; i += 2) {
    unsigned b;
    ASSERT_EQ(sscanf(hex + i, "%2x", &b), 1);
    fputc((int)b, f);
  }
  ASSERT_EQ(fclose(f), 0);
}

/* A merge that fails once writing has begun (the second input's times
 * fall before the first's clock) leaves an existing output as it was and
 * no temporary file beside it. */
TEST(merge_failure_keeps_the_output) {
  char a[1100], b[1100], out[1100];
  snprintf(a, sizeof(a), "%s/A2", gp_test_tmpdir());
  snprintf(b, sizeof(b), "%s/B2", gp_test_tmpdir());
  snprintf(out, sizeof(out), "%s/o", gp_test_tmpdir());
  write_hex(a, "0a1d32190a0908061080a094a58d1d0a0c080110808090bbbad6adf00d5063"
               "0a184085a094a58d1d5001aa030c08011005180058008a01016b");
  write_hex(b, "0a1d32190a0908061080a094a58d1d0a0c08011080c0e7f09f9cadf00d5063"
               "0a184085a094a58d1d5001aa030c08011005180058008a01016b");
  FILE *f = fopen(out, "w");
  ASSERT(f != NULL);
  fputs("precious\n", f);
  ASSERT_EQ(fclose(f), 0);
  const char *in[2] = {a, b};
  char err[256] = "";
  ASSERT(gp_trace_merge(in, 2, out, NULL, NULL, err, sizeof(err)) != 0);
  ASSERT(strstr(err, "earliest recording first") != NULL);
  char buf[64] = "";
  f = fopen(out, "r");
  ASSERT(f != NULL);
  ASSERT(fgets(buf, sizeof(buf), f) != NULL);
  fclose(f);
  ASSERT_STR_EQ(buf, "precious\n");
  DIR *d = opendir(gp_test_tmpdir());
  ASSERT(d != NULL);
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    ASSERT(strstr(e->d_name, ".tmp-") == NULL);
  closedir(d);
  /* The same inputs in the right order merge, over the old file. */
  const char *in2[2] = {b, a};
  ASSERT_EQ(gp_trace_merge(in2, 2, out, NULL, NULL, err, sizeof(err)), 0);
  struct stat st;
  ASSERT_EQ(stat(out, &st), 0);
  ASSERT(st.st_size > 10);
}

/* Issue 35 D4: a render stage at ts 2^63 + 7 (B) once overflowed the
 * clock map (signed, undefined: make test-asan's UBSan stops on it).
 * Each order, and B with itself, is refused with the reason. A merges
 * with itself (the time is ordinary there). */
TEST(merge_time_past_int64_is_refused) {
  char a[1100], b[1100], out[1100];
  snprintf(a, sizeof(a), "%s/A", gp_test_tmpdir());
  snprintf(b, sizeof(b), "%s/B", gp_test_tmpdir());
  snprintf(out, sizeof(out), "%s/m", gp_test_tmpdir());
  write_hex(a, "0a1c32180a080806108094ebdc030a0c080110808090bbbad6adf00d5063"
               "0a17408594ebdc035001aa030c08011005180058008a01016b");
  write_hex(b, "0a1c32180a080806108094ebdc030a0c080110808090bbbad6adf00d5063"
               "0a1c40878080808080808080015001aa030c08011005180058008a01016b");
  const char *pairs[3][2] = {{a, b}, {b, a}, {b, b}};
  for (int i = 0; i < 3; i++) {
    char err[256] = "";
    ASSERT_EQ(gp_trace_merge(pairs[i], 2, out, NULL, NULL, err, sizeof(err)),
              GP_ERANGE);
    ASSERT(strstr(err, "past 2^63 - 1 ns") != NULL);
    ASSERT(strncmp(err, b, strlen(b)) == 0);
    ASSERT(access(out, F_OK) != 0);
  }
  const char *aa[2] = {a, a};
  char err[256] = "";
  ASSERT_EQ(gp_trace_merge(aa, 2, out, NULL, NULL, err, sizeof(err)), 0);
}
