/*
 * ipc.h - the producer side of Perfetto's tracing protocol: the socket
 * framing, the IPCFrame envelope and the ProducerPort messages gpuperf
 * sends and receives (protos/perfetto/ipc/wire_protocol.proto and
 * producer_port.proto; docs/perfetto.md). Perfetto documents this
 * protocol as a stable ABI; this is our own encoder and decoder of it.
 *
 * On the socket every frame is
 *
 *   offset  size  what
 *   0       4     length L of the IPCFrame, little-endian
 *   4       L     IPCFrame, protobuf-encoded
 *
 * and an IPCFrame carries a request id (field 2) and one of BindService
 * (3), BindServiceReply (4), InvokeMethod (5), InvokeMethodReply (6) or
 * RequestError (7). Method arguments and replies are themselves encoded
 * protobuf messages inside InvokeMethod.args_proto (3) and
 * InvokeMethodReply.reply_proto (3). The service refuses frames larger
 * than its 128 KiB receive buffer: GP_IPC_MAX_FRAME.
 *
 * Decoding never allocates: decoded frames and commands point into the
 * bytes they were read from. Every function here is internal.
 */
#ifndef GPUPERF_PERFETTO_IPC_H
#define GPUPERF_PERFETTO_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pb.h"

#define GP_IPC_MAX_FRAME (128u * 1024u) /* header included */
#define GP_IPC_HEADER 4

/* IPCFrame's msg oneof: the frame types. */
enum {
  GP_IPC_BIND_SERVICE = 3,
  GP_IPC_BIND_SERVICE_REPLY = 4,
  GP_IPC_INVOKE_METHOD = 5,
  GP_IPC_INVOKE_METHOD_REPLY = 6,
  GP_IPC_REQUEST_ERROR = 7
};

/* A decoded IPCFrame; pointers are into the decoded bytes. */
typedef struct gp__ipc_frame {
  uint64_t request_id;
  uint32_t type; /* GP_IPC_*, 0 if the frame has none */
  bool success;  /* BindServiceReply, InvokeMethodReply */
  bool has_more; /* InvokeMethodReply of a streaming method */
  uint32_t service_id;
  const uint8_t *reply; /* InvokeMethodReply.reply_proto */
  size_t reply_len;
  const char *error; /* RequestError.error (not NUL-terminated) */
  size_t error_len;
  const uint8_t *body; /* the payload of the oneof message */
  size_t body_len;
} gp__ipc_frame;

/*
 * Looks at buf[0..len) for one whole frame. Returns the bytes it takes
 * (header included) and points *payload (of *payload_len bytes) at its
 * IPCFrame; 0 if more bytes are needed; GP_ECORRUPT if the length announced is
 * 0 or larger than GP_IPC_MAX_FRAME (the stream cannot be resynchronised).
 */
long gp__ipc_frame_split(const uint8_t *buf, size_t len,
                         const uint8_t **payload, size_t *payload_len);

/*
 * Decodes an IPCFrame (the bytes after the length). Returns 0 or
 * GP_ECORRUPT for bytes that are not a well-formed frame. Unknown fields
 * are skipped, as the protocol's forward compatibility requires.
 */
int gp__ipc_frame_decode(const uint8_t *p, size_t n, gp__ipc_frame *f);

/*
 * In a BindServiceReply frame, the id of the method called name. Returns
 * 0, GP_ENOENT if the service does not have it (an older service), or
 * GP_ECORRUPT.
 */
int gp__ipc_method_id(const gp__ipc_frame *f, const char *name, uint32_t *id);

/*
 * Encoders. Each appends one whole frame (length included) to w; the
 * caller sends gp__pb_size(w) bytes. args is a method's encoded request
 * message (may be NULL when args_len is 0); drop_reply asks the service
 * not to answer.
 */
void gp__ipc_put_bind(gp__pb_writer *w, uint64_t request_id,
                      const char *service);
void gp__ipc_put_invoke(gp__pb_writer *w, uint64_t request_id,
                        uint32_t service_id, uint32_t method_id,
                        const uint8_t *args, size_t args_len, bool drop_reply);
/* The host side's frames, for tests and the test service. */
void gp__ipc_put_bind_reply(gp__pb_writer *w, uint64_t request_id, bool success,
                            uint32_t service_id, const char *const *methods,
                            size_t n);
void gp__ipc_put_reply(gp__pb_writer *w, uint64_t request_id, bool success,
                       bool has_more, const uint8_t *reply, size_t reply_len);

/* ------------------------------------------------------------------ */
/* ProducerPort messages (request arguments)                            */

/* InitializeConnectionRequest: SMB page size and size hints in bytes. */
void gp__ipc_put_init(gp__pb_writer *w, uint32_t page_size_hint,
                      uint32_t size_hint, const char *producer_name,
                      const char *sdk_version);

/* CommitDataRequest.ChunksToMove entry, and the flush request id (0: no
 * flush is answered). */
typedef struct gp__ipc_chunk_ref {
  uint32_t page, chunk, target_buffer;
} gp__ipc_chunk_ref;
void gp__ipc_put_commit(gp__pb_writer *w, const gp__ipc_chunk_ref *chunks,
                        size_t n, uint64_t flush_request_id);

/* Requests whose only field is a number: NotifyDataSourceStarted/Stopped
 * (data_source_id), UnregisterTraceWriter (trace_writer_id). */
void gp__ipc_put_id(gp__pb_writer *w, uint64_t id);

/* RegisterTraceWriterRequest. */
void gp__ipc_put_register_writer(gp__pb_writer *w, uint32_t writer_id,
                                 uint32_t target_buffer);

/* ------------------------------------------------------------------ */
/* GetAsyncCommandResponse: what the service asks of the producer      */

enum {
  GP_IPC_CMD_NONE = 0,
  GP_IPC_CMD_START = 1,         /* start_data_source */
  GP_IPC_CMD_STOP = 2,          /* stop_data_source */
  GP_IPC_CMD_SETUP_TRACING = 3, /* setup_tracing: the SMB comes with it */
  GP_IPC_CMD_FLUSH = 5,         /* flush */
  GP_IPC_CMD_SETUP = 6,         /* setup_data_source */
  GP_IPC_CMD_CLEAR = 7          /* clear_incremental_state */
};

#define GP_IPC_CMD_MAX_IDS 64

typedef struct gp__ipc_command {
  uint32_t kind;         /* GP_IPC_CMD_* */
  uint64_t instance_id;  /* SETUP, START, STOP */
  const uint8_t *config; /* SETUP, START: DataSourceConfig bytes */
  size_t config_len;
  uint32_t page_size_kb;            /* SETUP_TRACING */
  uint64_t flush_request_id;        /* FLUSH */
  uint64_t flush_flags;             /* FLUSH */
  uint64_t ids[GP_IPC_CMD_MAX_IDS]; /* FLUSH, CLEAR: data source ids */
  uint32_t nids;
  bool all_ids; /* more ids than fit: treat as every data source */
} gp__ipc_command;

/* Decodes a GetAsyncCommandResponse. Returns 0 (kind NONE for a command
 * this producer does not know) or GP_ECORRUPT. */
int gp__ipc_command_decode(const uint8_t *p, size_t n, gp__ipc_command *c);

/* The fields of a DataSourceConfig a producer needs before the rest is
 * read as a trace config (tconfig.c). */
typedef struct gp__ipc_ds_config {
  const char *name; /* not NUL-terminated */
  size_t name_len;
  uint32_t target_buffer;
  uint32_t buffer_exhausted_policy; /* 0 unspecified, 1 drop, 2-3 stall */
  uint64_t tracing_session_id;
} gp__ipc_ds_config;

int gp__ipc_ds_config_decode(const uint8_t *p, size_t n, gp__ipc_ds_config *c);

/* The redundant 4-byte varint of a packet fragment's size in an SMB
 * chunk (and of lengths reserved before they are known). */
static inline void gp__ipc_put_size4(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(0x80 | (v & 0x7f));
  p[1] = (uint8_t)(0x80 | ((v >> 7) & 0x7f));
  p[2] = (uint8_t)(0x80 | ((v >> 14) & 0x7f));
  p[3] = (uint8_t)((v >> 21) & 0x7f);
}

#endif /* GPUPERF_PERFETTO_IPC_H */
