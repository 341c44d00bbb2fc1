/*
 * ipc_input.h - what a producer does with the bytes a tracing service
 * sends it (src/perfetto/ipc.c, tconfig.c), as one function: the fuzz
 * target fuzz_ipc.c and the replay of its corpus in the normal suite
 * (test_producer_abi.c) both run it. The input is the byte stream of the
 * socket: frames one after another.
 */
#ifndef GPUPERF_TESTS_IPC_INPUT_H
#define GPUPERF_TESTS_IPC_INPUT_H

#include <stdlib.h>

#include "gpuperf/gpuperf.h"
#include "perfetto/ipc.h"
#include "perfetto/tconfig.h"

/* Returns how many frames decoded. Aborts if a decoder breaks a promise
 * (a config accepted that cannot be written back). */
static inline int ipc_input(const uint8_t *data, size_t size) {
  int frames = 0;
  const uint8_t *p;
  size_t n;
  long used;
  while ((used = gp__ipc_frame_split(data, size, &p, &n)) > 0) {
    data += used;
    size -= (size_t)used;
    gp__ipc_frame f;
    if (gp__ipc_frame_decode(p, n, &f) != 0)
      continue;
    frames++;
    uint32_t id;
    gp__ipc_method_id(&f, "CommitData", &id);
    if (f.type != GP_IPC_INVOKE_METHOD_REPLY || !f.reply)
      continue;
    gp__ipc_command c;
    if (gp__ipc_command_decode(f.reply, f.reply_len, &c) != 0 || !c.config)
      continue;
    gp__ipc_ds_config ds;
    gp__ipc_ds_config_decode(c.config, c.config_len, &ds);
    gp_trace_config *cfg = NULL;
    char err[256];
    if (gp__trace_config_from_source(c.config, c.config_len, &cfg, err,
                                     sizeof(err)) == 0) {
      size_t need = 0;
      gp_trace_config_format(cfg, NULL, 0, &need);
      char *text = malloc(need + 1);
      gp_trace_config *back = NULL;
      if (!text || gp_trace_config_format(cfg, text, need + 1, &need) != 0 ||
          gp_trace_config_parse(text, need, &back, err, sizeof(err)) != 0)
        abort();
      gp_trace_config_destroy(back);
      free(text);
      gp_trace_config_destroy(cfg);
    }
  }
  return frames;
}

#endif /* GPUPERF_TESTS_IPC_INPUT_H */
