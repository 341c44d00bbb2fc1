/*
 * ipc.c - Perfetto's producer protocol: frames and ProducerPort messages
 * (ipc.h). Field numbers are those of Perfetto's wire_protocol.proto,
 * producer_port.proto, commit_data_request.proto and
 * data_source_config.proto, named below where they are used.
 */
#include <string.h>

#include "core/core.h"
#include "ipc.h"

/* IPCFrame */
enum {
  F_FRAME_REQUEST_ID = 2,
  F_BIND_SERVICE_NAME = 1,
  F_BIND_REPLY_SUCCESS = 1,
  F_BIND_REPLY_SERVICE_ID = 2,
  F_BIND_REPLY_METHODS = 3,
  F_METHOD_INFO_ID = 1,
  F_METHOD_INFO_NAME = 2,
  F_INVOKE_SERVICE_ID = 1,
  F_INVOKE_METHOD_ID = 2,
  F_INVOKE_ARGS = 3,
  F_INVOKE_DROP_REPLY = 4,
  F_REPLY_SUCCESS = 1,
  F_REPLY_HAS_MORE = 2,
  F_REPLY_PROTO = 3,
  F_ERROR_TEXT = 1
};

/* ProducerPort requests */
enum {
  F_INIT_PAGE_SIZE_HINT = 1,
  F_INIT_SIZE_HINT = 2,
  F_INIT_PRODUCER_NAME = 3,
  F_INIT_SDK_VERSION = 8,
  F_COMMIT_CHUNKS_TO_MOVE = 1,
  F_COMMIT_FLUSH_REQUEST_ID = 3,
  F_MOVE_PAGE = 1,
  F_MOVE_CHUNK = 2,
  F_MOVE_TARGET_BUFFER = 3,
  F_REGISTER_WRITER_ID = 1,
  F_REGISTER_WRITER_BUFFER = 2
};

/* GetAsyncCommandResponse and its commands */
enum {
  F_CMD_INSTANCE_ID = 1, /* new_instance_id, instance_id */
  F_CMD_CONFIG = 2,
  F_SETUP_TRACING_PAGE_KB = 1,
  F_FLUSH_IDS = 1,
  F_FLUSH_REQUEST_ID = 2,
  F_FLUSH_FLAGS = 3,
  F_CLEAR_IDS = 1
};

/* DataSourceConfig */
enum {
  F_DS_NAME = 1,
  F_DS_TARGET_BUFFER = 2,
  F_DS_TRACING_SESSION_ID = 4,
  F_DS_BUFFER_EXHAUSTED_POLICY = 9
};

/* ------------------------------------------------------------------ */
/* Frames                                                               */

/* See ipc.h. */
long gp__ipc_frame_split(const uint8_t *buf, size_t len,
                         const uint8_t **payload, size_t *payload_len) {
  if (len < GP_IPC_HEADER)
    return 0;
  uint32_t n = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 |
               (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
  if (n == 0 || n > GP_IPC_MAX_FRAME - GP_IPC_HEADER)
    return GP_ECORRUPT;
  if (len - GP_IPC_HEADER < n)
    return 0;
  *payload = buf + GP_IPC_HEADER;
  *payload_len = n;
  return (long)(n + GP_IPC_HEADER);
}

static int decode_body(gp__ipc_frame *f) {
  gp__pb_reader r;
  gp__pb_field x;
  int rc;
  gp__pb_reader_init(&r, f->body, f->body_len, 0);
  while ((rc = gp__pb_next(&r, &x)) > 0) {
    switch (f->type) {
    case GP_IPC_BIND_SERVICE_REPLY:
      if (x.id == F_BIND_REPLY_SUCCESS && x.wire_type == GP_PB_VARINT)
        f->success = x.value != 0;
      else if (x.id == F_BIND_REPLY_SERVICE_ID && x.wire_type == GP_PB_VARINT)
        f->service_id = (uint32_t)x.value;
      break;
    case GP_IPC_INVOKE_METHOD_REPLY:
      if (x.id == F_REPLY_SUCCESS && x.wire_type == GP_PB_VARINT)
        f->success = x.value != 0;
      else if (x.id == F_REPLY_HAS_MORE && x.wire_type == GP_PB_VARINT)
        f->has_more = x.value != 0;
      else if (x.id == F_REPLY_PROTO && x.wire_type == GP_PB_LEN) {
        f->reply = x.data;
        f->reply_len = x.size;
      }
      break;
    case GP_IPC_REQUEST_ERROR:
      if (x.id == F_ERROR_TEXT && x.wire_type == GP_PB_LEN) {
        f->error = (const char *)x.data;
        f->error_len = x.size;
      }
      break;
    case GP_IPC_INVOKE_METHOD:
      if (x.id == F_INVOKE_SERVICE_ID && x.wire_type == GP_PB_VARINT)
        f->service_id = (uint32_t)x.value;
      else if (x.id == F_INVOKE_ARGS && x.wire_type == GP_PB_LEN) {
        f->reply = x.data; /* the arguments, for the host side */
        f->reply_len = x.size;
      }
      break;
    default:
      break;
    }
  }
  return rc < 0 ? GP_ECORRUPT : 0;
}

/* See ipc.h. */
int gp__ipc_frame_decode(const uint8_t *p, size_t n, gp__ipc_frame *f) {
  memset(f, 0, sizeof(*f));
  gp__pb_reader r;
  gp__pb_field x;
  int rc;
  gp__pb_reader_init(&r, p, n, 0);
  while ((rc = gp__pb_next(&r, &x)) > 0) {
    if (x.id == F_FRAME_REQUEST_ID && x.wire_type == GP_PB_VARINT) {
      f->request_id = x.value;
    } else if (x.id >= GP_IPC_BIND_SERVICE && x.id <= GP_IPC_REQUEST_ERROR &&
               x.wire_type == GP_PB_LEN) {
      /* A oneof: the last one wins, as in any protobuf decoder. */
      f->type = x.id;
      f->body = x.data;
      f->body_len = x.size;
    }
  }
  if (rc < 0)
    return GP_ECORRUPT;
  return f->type ? decode_body(f) : 0;
}

/* See ipc.h. */
int gp__ipc_method_id(const gp__ipc_frame *f, const char *name, uint32_t *id) {
  if (f->type != GP_IPC_BIND_SERVICE_REPLY)
    return GP_ENOENT;
  size_t want = strlen(name);
  gp__pb_reader r;
  gp__pb_field x;
  int rc;
  gp__pb_reader_init(&r, f->body, f->body_len, 0);
  while ((rc = gp__pb_next(&r, &x)) > 0) {
    if (x.id != F_BIND_REPLY_METHODS || x.wire_type != GP_PB_LEN)
      continue;
    gp__pb_reader m;
    gp__pb_field y;
    uint64_t mid = 0;
    bool match = false;
    int mrc;
    gp__pb_reader_sub(&m, &r, &x);
    while ((mrc = gp__pb_next(&m, &y)) > 0) {
      if (y.id == F_METHOD_INFO_ID && y.wire_type == GP_PB_VARINT)
        mid = y.value;
      else if (y.id == F_METHOD_INFO_NAME && y.wire_type == GP_PB_LEN)
        match = y.size == want && memcmp(y.data, name, want) == 0;
    }
    if (mrc < 0)
      return GP_ECORRUPT;
    if (match) {
      *id = (uint32_t)mid;
      return 0;
    }
  }
  return rc < 0 ? GP_ECORRUPT : GP_ENOENT;
}

/* Every frame starts with 4 bytes of length, patched by frame_end(). The
 * writer must be empty: the frame is its first bytes. */
static void frame_begin(gp__pb_writer *w, uint64_t request_id) {
  if (!gp__pb_reserve(w, GP_IPC_HEADER))
    return;
  memset(w->p, 0, GP_IPC_HEADER);
  w->p += GP_IPC_HEADER;
  gp__pb_uint(w, F_FRAME_REQUEST_ID, request_id);
}

static void frame_end(gp__pb_writer *w) {
  if (gp__pb_error(w) || !w->head)
    return;
  uint64_t n = gp__pb_size(w) - GP_IPC_HEADER;
  if (n > GP_IPC_MAX_FRAME - GP_IPC_HEADER) {
    w->oom = true; /* the service would refuse it */
    return;
  }
  for (int i = 0; i < 4; i++)
    w->head->data[i] = (uint8_t)(n >> (8 * i));
}

/* See ipc.h. */
void gp__ipc_put_bind(gp__pb_writer *w, uint64_t request_id,
                      const char *service) {
  frame_begin(w, request_id);
  gp__pb_begin(w, GP_IPC_BIND_SERVICE);
  gp__pb_string(w, F_BIND_SERVICE_NAME, service);
  gp__pb_end(w);
  frame_end(w);
}

/* See ipc.h. */
void gp__ipc_put_invoke(gp__pb_writer *w, uint64_t request_id,
                        uint32_t service_id, uint32_t method_id,
                        const uint8_t *args, size_t args_len, bool drop_reply) {
  frame_begin(w, request_id);
  gp__pb_begin(w, GP_IPC_INVOKE_METHOD);
  gp__pb_uint(w, F_INVOKE_SERVICE_ID, service_id);
  gp__pb_uint(w, F_INVOKE_METHOD_ID, method_id);
  gp__pb_bytes(w, F_INVOKE_ARGS, args, args_len);
  if (drop_reply)
    gp__pb_uint(w, F_INVOKE_DROP_REPLY, 1);
  gp__pb_end(w);
  frame_end(w);
}

/* See ipc.h. Method ids are 1-based positions in methods[]. */
void gp__ipc_put_bind_reply(gp__pb_writer *w, uint64_t request_id, bool success,
                            uint32_t service_id, const char *const *methods,
                            size_t n) {
  frame_begin(w, request_id);
  gp__pb_begin(w, GP_IPC_BIND_SERVICE_REPLY);
  gp__pb_uint(w, F_BIND_REPLY_SUCCESS, success);
  gp__pb_uint(w, F_BIND_REPLY_SERVICE_ID, service_id);
  for (size_t i = 0; i < n; i++) {
    gp__pb_begin(w, F_BIND_REPLY_METHODS);
    gp__pb_uint(w, F_METHOD_INFO_ID, i + 1);
    gp__pb_string(w, F_METHOD_INFO_NAME, methods[i]);
    gp__pb_end(w);
  }
  gp__pb_end(w);
  frame_end(w);
}

/* See ipc.h. */
void gp__ipc_put_reply(gp__pb_writer *w, uint64_t request_id, bool success,
                       bool has_more, const uint8_t *reply, size_t reply_len) {
  frame_begin(w, request_id);
  gp__pb_begin(w, GP_IPC_INVOKE_METHOD_REPLY);
  gp__pb_uint(w, F_REPLY_SUCCESS, success);
  if (has_more)
    gp__pb_uint(w, F_REPLY_HAS_MORE, 1);
  gp__pb_bytes(w, F_REPLY_PROTO, reply, reply_len);
  gp__pb_end(w);
  frame_end(w);
}

/* ------------------------------------------------------------------ */
/* Requests                                                             */

/* See ipc.h. */
void gp__ipc_put_init(gp__pb_writer *w, uint32_t page_size_hint,
                      uint32_t size_hint, const char *producer_name,
                      const char *sdk_version) {
  gp__pb_uint(w, F_INIT_PAGE_SIZE_HINT, page_size_hint);
  gp__pb_uint(w, F_INIT_SIZE_HINT, size_hint);
  gp__pb_string(w, F_INIT_PRODUCER_NAME, producer_name);
  if (sdk_version)
    gp__pb_string(w, F_INIT_SDK_VERSION, sdk_version);
}

/* See ipc.h. */
void gp__ipc_put_commit(gp__pb_writer *w, const gp__ipc_chunk_ref *chunks,
                        size_t n, uint64_t flush_request_id) {
  for (size_t i = 0; i < n; i++) {
    gp__pb_short s = gp__pb_begin_short(w, F_COMMIT_CHUNKS_TO_MOVE);
    gp__pb_uint(w, F_MOVE_PAGE, chunks[i].page);
    gp__pb_uint(w, F_MOVE_CHUNK, chunks[i].chunk);
    gp__pb_uint(w, F_MOVE_TARGET_BUFFER, chunks[i].target_buffer);
    gp__pb_end_short(w, s);
  }
  if (flush_request_id)
    gp__pb_uint(w, F_COMMIT_FLUSH_REQUEST_ID, flush_request_id);
}

/* See ipc.h. */
void gp__ipc_put_id(gp__pb_writer *w, uint64_t id) {
  gp__pb_uint(w, 1, id);
}

/* See ipc.h. */
void gp__ipc_put_register_writer(gp__pb_writer *w, uint32_t writer_id,
                                 uint32_t target_buffer) {
  gp__pb_uint(w, F_REGISTER_WRITER_ID, writer_id);
  gp__pb_uint(w, F_REGISTER_WRITER_BUFFER, target_buffer);
}

/* ------------------------------------------------------------------ */
/* Commands                                                             */

/* Repeated uint64 ids, packed or not. */
static int add_ids(gp__ipc_command *c, const gp__pb_field *x) {
  if (x->wire_type == GP_PB_VARINT) {
    if (c->nids < GP_IPC_CMD_MAX_IDS)
      c->ids[c->nids++] = x->value;
    else
      c->all_ids = true;
    return 0;
  }
  if (x->wire_type != GP_PB_LEN)
    return 0;
  const uint8_t *p = x->data, *end = x->data + x->size;
  while (p < end) {
    uint64_t v;
    size_t k = gp__pb_get_varint(p, end, &v);
    if (k == 0)
      return GP_ECORRUPT;
    p += k;
    if (c->nids < GP_IPC_CMD_MAX_IDS)
      c->ids[c->nids++] = v;
    else
      c->all_ids = true;
  }
  return 0;
}

static int decode_command(gp__ipc_command *c, const gp__pb_field *cmd) {
  gp__pb_reader r;
  gp__pb_field x;
  int rc;
  gp__pb_reader_init(&r, cmd->data, cmd->size, 0);
  while ((rc = gp__pb_next(&r, &x)) > 0) {
    switch (c->kind) {
    case GP_IPC_CMD_SETUP:
    case GP_IPC_CMD_START:
    case GP_IPC_CMD_STOP:
      if (x.id == F_CMD_INSTANCE_ID && x.wire_type == GP_PB_VARINT)
        c->instance_id = x.value;
      else if (x.id == F_CMD_CONFIG && x.wire_type == GP_PB_LEN &&
               c->kind != GP_IPC_CMD_STOP) {
        c->config = x.data;
        c->config_len = x.size;
      }
      break;
    case GP_IPC_CMD_SETUP_TRACING:
      if (x.id == F_SETUP_TRACING_PAGE_KB && x.wire_type == GP_PB_VARINT)
        c->page_size_kb = (uint32_t)x.value;
      break;
    case GP_IPC_CMD_FLUSH:
      if (x.id == F_FLUSH_IDS) {
        if (add_ids(c, &x))
          return GP_ECORRUPT;
      } else if (x.id == F_FLUSH_REQUEST_ID && x.wire_type == GP_PB_VARINT) {
        c->flush_request_id = x.value;
      } else if (x.id == F_FLUSH_FLAGS && x.wire_type == GP_PB_VARINT) {
        c->flush_flags = x.value;
      }
      break;
    case GP_IPC_CMD_CLEAR:
      if (x.id == F_CLEAR_IDS && add_ids(c, &x))
        return GP_ECORRUPT;
      break;
    default:
      break;
    }
  }
  return rc < 0 ? GP_ECORRUPT : 0;
}

/* See ipc.h. */
int gp__ipc_command_decode(const uint8_t *p, size_t n, gp__ipc_command *c) {
  memset(c, 0, sizeof(*c));
  gp__pb_reader r;
  gp__pb_field x, cmd = {0};
  int rc;
  gp__pb_reader_init(&r, p, n, 0);
  while ((rc = gp__pb_next(&r, &x)) > 0) {
    switch (x.id) {
    case GP_IPC_CMD_START:
    case GP_IPC_CMD_STOP:
    case GP_IPC_CMD_SETUP_TRACING:
    case GP_IPC_CMD_FLUSH:
    case GP_IPC_CMD_SETUP:
    case GP_IPC_CMD_CLEAR:
      if (x.wire_type == GP_PB_LEN) { /* a oneof: the last one wins */
        c->kind = x.id;
        cmd = x;
      }
      break;
    default:
      break;
    }
  }
  if (rc < 0)
    return GP_ECORRUPT;
  return c->kind ? decode_command(c, &cmd) : 0;
}

/* See ipc.h. */
int gp__ipc_ds_config_decode(const uint8_t *p, size_t n, gp__ipc_ds_config *c) {
  memset(c, 0, sizeof(*c));
  gp__pb_reader r;
  gp__pb_field x;
  int rc;
  gp__pb_reader_init(&r, p, n, 0);
  while ((rc = gp__pb_next(&r, &x)) > 0) {
    if (x.id == F_DS_NAME && x.wire_type == GP_PB_LEN) {
      c->name = (const char *)x.data;
      c->name_len = x.size;
    } else if (x.id == F_DS_TARGET_BUFFER && x.wire_type == GP_PB_VARINT) {
      c->target_buffer = (uint32_t)x.value;
    } else if (x.id == F_DS_TRACING_SESSION_ID && x.wire_type == GP_PB_VARINT) {
      c->tracing_session_id = x.value;
    } else if (x.id == F_DS_BUFFER_EXHAUSTED_POLICY &&
               x.wire_type == GP_PB_VARINT) {
      c->buffer_exhausted_policy = (uint32_t)x.value;
    }
  }
  return rc < 0 ? GP_ECORRUPT : 0;
}
