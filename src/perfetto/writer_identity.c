/*
 * writer_identity.c - the host identity a trace carries, so that traces of
 * several machines can be told apart and merged (`gpuperf merge`).
 *
 * At the start of its sequence a writer with `host_identity` set writes
 *   - a SystemInfo packet (TracePacket 45) with the kernel's utsname
 *     (sysname, version, release, machine), which Perfetto's importer
 *     files in the `machine` table, and
 *   - an instant "gpuperf host" on the process track whose debug
 *     annotations `hostname` and `boot_id` name the machine and its boot
 *     (/proc/sys/kernel/random/boot_id): BOOTTIME restarts with each boot,
 *     so the pair says which BOOTTIME clock the trace's timestamps are on.
 * GPUPERF_HOSTNAME and GPUPERF_BOOT_ID override both (containers that
 * share a kernel, and `gpuperf demo --machines`, which simulates nodes).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "writerInt.h"

enum {
  PB_PACKET_SYSTEM_INFO = 45,
  PB_SYSTEM_INFO_UTSNAME = 1,
  PB_UTSNAME_SYSNAME = 1,
  PB_UTSNAME_VERSION = 2,
  PB_UTSNAME_RELEASE = 3,
  PB_UTSNAME_MACHINE = 4
};

/* See writerInt.h. */
void gp__tw_host_id_get(char *host, size_t hsize, char *boot, size_t bsize) {
  const char *e = getenv("GPUPERF_HOSTNAME");
  if (e && *e)
    snprintf(host, hsize, "%s", e);
  else if (gethostname(host, hsize) != 0 || !host[0])
    snprintf(host, hsize, "unknown");
  host[hsize - 1] = '\0';
  e = getenv("GPUPERF_BOOT_ID");
  if (e && *e) {
    snprintf(boot, bsize, "%s", e);
    return;
  }
  boot[0] = '\0';
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (!fgets(boot, (int)bsize, f))
      boot[0] = '\0';
    fclose(f);
  }
  boot[strcspn(boot, "\r\n")] = '\0';
}

/* See writerInt.h. */
void gp__tw_host_identity(gp__tw *w, uint64_t ts) {
  gp__pb_writer *pb = &w->pb;
  struct utsname u;
  if (uname(&u) == 0) {
    gp__tw_packet_begin(w, TW_NO_TS, TW_PACKET_LARGE);
    gp__pb_begin(pb, PB_PACKET_SYSTEM_INFO);
    gp__pb_begin(pb, PB_SYSTEM_INFO_UTSNAME);
    gp__pb_string(pb, PB_UTSNAME_SYSNAME, u.sysname);
    gp__pb_string(pb, PB_UTSNAME_VERSION, u.version);
    gp__pb_string(pb, PB_UTSNAME_RELEASE, u.release);
    gp__pb_string(pb, PB_UTSNAME_MACHINE, u.machine);
    gp__pb_end(pb);
    gp__pb_end(pb);
    gp__tw_packet_end(w);
  }
  char host[256], boot[64];
  gp__tw_host_id_get(host, sizeof(host), boot, sizeof(boot));
  uint64_t track = gp__tw_process_track(w);
  gp__tw_packet_begin(w, ts, TW_PACKET_LARGE);
  gp__pb_begin(pb, GP_PB_PACKET_TRACK_EVENT);
  gp__pb_uint(pb, GP_PB_TE_TYPE, GP_PB_TE_TYPE_INSTANT);
  gp__pb_uint(pb, GP_PB_TE_TRACK_UUID, track);
  gp__pb_string(pb, GP_PB_TE_NAME, GP_TW_HOST_EVENT);
  gp__tw_annotate_string(pb, "hostname", host);
  gp__tw_annotate_string(pb, "boot_id", boot);
  gp__pb_end(pb);
  gp__tw_packet_end(w);
  w->st.track_events++;
}
