/*
 * producerInt.h - what the two halves of the Perfetto producer share:
 * producer.c (the connection: socket, frames, the reader thread, the
 * handshake) and producer_sources.c (data source instances: the service's
 * commands, sessions whose sink is the shared memory buffer).
 *
 * Locks. cmd_lock: the instances (commands, stopping). lock: replies,
 * statistics, dead. send_lock: the socket's write side, request ids and
 * the scratch writers. An instance's own lock guards its SMB writer and
 * framing state. Order: cmd_lock, instance lock, send_lock, lock.
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
  char name[64];
} gp__prod_instance;

#define GP_PROD_RING 16

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
} gp__producer;

extern gp__producer gp__prod;

/* One line on stderr, "gpuperf: producer: ...", unless quiet. */
void gp__prod_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sends gp__prod.args as the arguments of method m; returns the request
 * id, or 0 if the method is missing or the socket failed. The caller holds
 * send_lock. */
uint64_t gp__prod_invoke_locked(int m, bool drop_reply);

/* Sends chunks (and the flush request id, if not 0) as one CommitData. */
void gp__prod_commit(const gp__ipc_chunk_ref *chunks, size_t n,
                     uint64_t flush_id);

/* Sends a request whose only field is id to method m, without a reply. */
void gp__prod_notify(int m, uint64_t id);

/* producer_sources.c: carries out one command of the service (the
 * caller holds cmd_lock). */
void gp__prod_command(const gp__ipc_command *c);

/* producer_sources.c: stops every instance (the caller holds cmd_lock). */
void gp__prod_stop_all(void);

#endif /* GPUPERF_SESSION_PRODUCER_INT_H */
