/*
 * writer_clocks.c - the trace writer's clock snapshots: the host's
 * (BOOTTIME, MONOTONIC, REALTIME; at the start, every trace second and at
 * the end) and each device clock's (BOOTTIME and the device clock, as
 * the clock's consumer hands them over), which the trace processor
 * converts every other timestamp by.
 */
#include "writerInt.h"

/* See writerInt.h. */
void gp__tw_write_host_snapshot(gp__tw *w, uint64_t hint) {
  uint64_t boot, mono, real;
  if (w->o.deterministic || gp__clock_is_virtual()) {
    boot = w->o.deterministic && hint ? hint : gp_get_timestamp();
    mono = boot;
    real = boot + TW_VIRTUAL_REALTIME_EPOCH;
  } else {
    boot = gp_get_timestamp();
    mono = gp_clock_read_host(GP_CLOCK_MONOTONIC);
    real = gp_clock_read_host(GP_CLOCK_REALTIME);
  }
  if (w->o.service_sequenced) {
    /* A Perfetto service writes the host clocks' snapshots itself, on its
     * own sequence. Ours beside them, from several writers whose chunks
     * it reads in no set order, would make BOOTTIME in that clock family
     * seem to go backwards ("the trace clock is not monotonic"). */
    w->host_snap_ts = boot;
    return;
  }
  gp__pb_writer *pb = &w->pb;
  gp__tw_packet_begin(w, boot, 0);
  gp__pb_begin(pb, GP_PB_PACKET_CLOCK_SNAPSHOT);
  static const uint32_t ids[3] = {GP_CLOCK_BOOTTIME, GP_CLOCK_MONOTONIC,
                                  GP_CLOCK_REALTIME};
  const uint64_t vals[3] = {boot, mono, real};
  for (int i = 0; i < 3; i++) {
    gp__pb_begin(pb, GP_PB_CLOCK_SNAPSHOT_CLOCKS);
    gp__pb_uint(pb, GP_PB_CLOCK_ID, ids[i]);
    gp__pb_uint(pb, GP_PB_CLOCK_TIMESTAMP, vals[i]);
    gp__pb_end(pb);
  }
  gp__pb_uint(pb, GP_PB_CLOCK_SNAPSHOT_PRIMARY_TRACE_CLOCK, GP_CLOCK_BOOTTIME);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
  w->host_snap_ts = boot;
}

/*
 * The id a device clock has in the trace: sequence-scoped (64 + n, for the
 * n-th registered clock), since a device clock is the process's that reads
 * it. As a global id (128 + n) two processes', or two writers' of one
 * process, would be one clock to Perfetto, whose snapshots then disagree
 * or seem to go backwards. Beyond 64 clocks: the global id, as before.
 */
static uint32_t trace_clock_id(uint32_t clock_id) {
  if (clock_id >= GP_CLOCK_FIRST_DEVICE &&
      clock_id < GP_CLOCK_FIRST_DEVICE + 64)
    return 64 + (clock_id - GP_CLOCK_FIRST_DEVICE);
  return clock_id;
}

/* Puts a ClockSnapshot.Clock at p (27 bytes reserved); returns its end. */
static inline uint8_t *put_clock(uint8_t *p, uint32_t clock_id, uint64_t ts) {
  _Static_assert(GP_PB_PACKET_CLOCK_SNAPSHOT < 16 &&
                     GP_PB_CLOCK_SNAPSHOT_CLOCKS < 16,
                 "one-byte tags");
  *p++ = (GP_PB_CLOCK_SNAPSHOT_CLOCKS << 3) | GP_PB_LEN;
  uint8_t *len = p;
  p += 4;
  p = gp__pb_put_uint(p, GP_PB_CLOCK_ID, clock_id);
  p = gp__pb_put_uint(p, GP_PB_CLOCK_TIMESTAMP, ts);
  gp__pb_put_len4(len, (uint64_t)(p - len - 4));
  return p;
}

/* One device clock snapshot: BOOTTIME and the device clock. */
static void write_device_snapshot(gp__tw *w, uint32_t clock_id,
                                  const gp_clock_snapshot *s) {
  clock_id = trace_clock_id(clock_id);
  /* In one reservation: the snapshot's tag and 4 length bytes, and two
   * clocks of as many and two fields (11 each) at most; the lengths as
   * gp__pb_begin() puts them. */
  uint8_t *p = gp__tw_packet_open(w, s->trace_ts, 0, 5 + 2 * (5 + 22));
  if (p) {
    *p++ = (GP_PB_PACKET_CLOCK_SNAPSHOT << 3) | GP_PB_LEN;
    uint8_t *len = p;
    p += 4;
    p = put_clock(p, GP_CLOCK_BOOTTIME, s->trace_ts);
    p = put_clock(p, clock_id, s->device_ts);
    gp__pb_put_len4(len, (uint64_t)(p - len - 4));
  }
  gp__tw_packet_close(w, p);
}

/*
 * Writes the device-clock snapshots taken since the last ones written,
 * those before `bound` (trace time) only: later ones wait for a later
 * call. The writer's consumer (clock.c) keeps every snapshot until it is
 * read, however many the producer takes meanwhile, so which snapshots a
 * trace holds does not depend on when the collector runs. Snapshots the
 * clock could not keep (it keeps 65536 for a lagging reader) are a loss
 * the next packet reports.
 */
void gp__tw_write_device_snapshots(gp__tw *w, uint64_t bound) {
  gp_clock_snapshot snaps[64];
  if (!w->clock_consumer) /* another process's clocks: not ours to read */
    return;
  for (uint32_t d = 0; d < w->num_devices; d++) {
    const tw_device *dv = &w->dev[d];
    if (!dv->known || !dv->clock_id)
      continue;
    size_t n;
    do {
      uint64_t lost = 0;
      if (gp__clock_consume(w->clock_consumer, dv->clock_id, bound, snaps,
                            GP_ARRAY_SIZE(snaps), &n, &lost) != 0)
        break;
      if (lost) {
        w->st.clock_lost += lost;
        gp__tw_reset_incremental(w, true);
      }
      for (size_t i = 0; i < n; i++)
        write_device_snapshot(w, dv->clock_id, &snaps[i]);
    } while (n == GP_ARRAY_SIZE(snaps));
  }
}
