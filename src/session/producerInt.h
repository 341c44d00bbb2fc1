/*
 * producerInt.h - what the two halves of the Perfetto producer share:
 * producer.c (the connection: socket, frames, the reader thread, the
 * handshake) and producer_sources.c (data source instances: the service's
 * commands, sessions whose sink is the shared memory buffer).
 *
 * Locks. cmd_lock: the instances (commands, stopping). lock: replies,
 * statistics, dead, the keeper's state. send_lock: the socket's write
 * side, request ids and the scratch writers. An instance's own lock
 * guards its SMB writer and framing state. Order: cmd_lock, instance
 * lock, send_lock, lock.
 *
 * Service lost. When the connection ends while instances run, they are
 * orphaned: their sessions run on with a sink that counts the packets it
 * is given and keeps none, and the packets that sat in the shared memory
 * uncommitted are counted too. The keeper thread reconnects (backing off
 * from 100 ms to 2 s) and registers again. The first instance the new
 * service starts stops the orphans once it runs (so no record falls
 * between them: one of the overlap may be in both) and carries their
 * count, as the counter "gpuperf lost while no tracing service"; if the
 * new service starts nothing, they are stopped when the handshake ends.
 */
#ifndef GPUPERF_SESSION_PRODUCER_INT_H
#define GPUPERF_SESSION_PRODUCER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "perfetto/ipc.h"
#include "perfetto/smb.h"
#include "sessionInt.h"

/* The ProducerPort methods used (ids from the service's bind reply). */
enum {
  M_INIT,
  M_REGISTER,
  M_COMMIT,
  M_ASYNC,
  M_STOPPED,
  M_REGISTER_WRITER,
  M_UNREGISTER_WRITER,
  M_SYNC,
  M_UPDATE,
  M_COUNT
};

typedef struct gp__prod_instance {
  bool used;
  uint64_t id;
  gp_trace_config *cfg; /* from SetupDataSource (or StartDataSource) */
  gp_session *s;        /* running: started */
  pthread_mutex_t lock; /* w and the framing state below */
  gp__smb_writer w;
  bool have_writer;
  uint32_t policy;
  uint64_t stall_start_ns;
  /* Framing of the writer's bytes: tag and length of the next packet. */
  uint8_t hdr[20];
  unsigned nhdr;
  size_t pkt_left;
  uint64_t drops_seen;
  bool orphan;        /* the service went away: packets are counted, not kept */
  uint64_t lost;      /* packets no service took: commits that failed, then
                         everything once orphaned */
  bool commit_failed; /* the last CommitData could not be sent */
  char name[64];
} gp__prod_instance;

#define GP_PROD_RING 16

/* The process counter key (writer.h) of "gpuperf lost while no tracing
 * service": the last of the 64, above the host counters' catalog indices. */
#define GP_PROD_LOST_KEY 63

typedef struct gp__producer {
  pthread_mutex_t cmd_lock, lock, send_lock;
  pthread_cond_t cond;
  int fd;
  bool dead; /* the connection ended (read atomically) */
  pthread_t reader;
  bool reader_running;
  uint64_t next_request; /* under send_lock */
  uint32_t service_id;
  uint32_t method[M_COUNT];
  uint64_t async_request; /* under lock */
  struct {
    uint64_t id;
    bool ok;
  } ring[GP_PROD_RING];
  unsigned ring_next;
  char last_error[256];
  int pending_fd; /* the last file descriptor received, -1 none */
  gp__smb smb;
  void *smb_base;
  size_t smb_size;
  bool have_smb;
  gp__prod_instance inst[MAX_SESSIONS];
  uint16_t next_writer;
  gp__pb_writer out, args; /* under send_lock */
  gp_producer_stats st;    /* under lock */
  bool quiet;
  bool counters_registered; /* gpu.counters sources were registered */
  /* Reconnecting (under lock): the keeper thread, the name and flags to
   * connect with again, and the count of packets lost while no service
   * was there, waiting for an instance of the next service to carry it. */
  char name[64];
  uint32_t flags;
  bool stopping; /* gp_producer_stop() runs: no reconnecting */
  pthread_t keeper;
  bool keeper_running;
  uint64_t reconnects;
  uint64_t lost_pending;                     /* packets; 0: nothing to report */
  uint64_t lost_until_ts;                    /* trace clock */
  uint64_t lost_since_mono, lost_until_mono; /* CLOCK_MONOTONIC */
} gp__producer;

extern gp__producer gp__prod;

/* One line on stderr, "gpuperf: producer: ...", unless quiet. */
void gp__prod_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sends gp__prod.args as the arguments of method m; returns the request
 * id, or 0 if the method is missing or the socket failed. The caller holds
 * send_lock. */
uint64_t gp__prod_invoke_locked(int m, bool drop_reply);

/* Sends chunks (and the flush request id, if not 0) as one CommitData.
 * Returns false if it could not be sent (no service to take them). */
bool gp__prod_commit(const gp__ipc_chunk_ref *chunks, size_t n,
                     uint64_t flush_id);

/* Sends a request whose only field is id to method m, without a reply. */
void gp__prod_notify(int m, uint64_t id);

/* producer_sources.c: carries out one command of the service (the
 * caller holds cmd_lock). */
void gp__prod_command(const gp__ipc_command *c);

/* producer_sources.c: stops every instance (the caller holds cmd_lock). */
void gp__prod_stop_all(void);

/* producer_sources.c: the service is gone: every running instance is
 * orphaned (its packets counted from now on, the uncommitted ones in the
 * shared memory included) and the others are forgotten; the shared
 * memory is then unmapped. The caller holds cmd_lock. */
void gp__prod_orphan_all(void);

/* producer_sources.c: stops the orphans and adds the packets they lost
 * to what the next instance started reports. The caller holds cmd_lock. */
void gp__prod_count_orphans(void);

#endif /* GPUPERF_SESSION_PRODUCER_INT_H */
