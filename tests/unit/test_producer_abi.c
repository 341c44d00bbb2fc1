/*
 * test_producer_abi.c - the producer side of Perfetto's tracing protocol
 * against byte sequences worked out by hand from the documented ABI
 * (docs/perfetto.md): the socket framing, IPCFrame, the ProducerPort
 * messages and async commands, binary DataSourceConfigs read with the same
 * meaning as the text format, and the layout of pages, chunks and
 * fragments in the shared memory buffer.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuperf/gpuperf.h"
#include "fuzz/ipc_input.h"
#include "harness.h"
#include "perfetto/ipc.h"
#include "perfetto/smb.h"
#include "perfetto/tconfig.h"

/* The writer's bytes, flattened (malloc'ed). */
static uint8_t *flat(gp__pb_writer *w, size_t *n) {
  *n = (size_t)gp__pb_size(w);
  uint8_t *b = malloc(*n ? *n : 1);
  gp__pb_copy(w, b);
  return b;
}

TEST(producer_abi_frames_match_the_documented_bytes) {
  /* BindService { service_name: "producer_port" }, request 1: the length
   * (22, little-endian), request_id (field 2), msg_bind_service (field 3,
   * a length written as a 4-byte varint), service_name (field 1). */
  static const uint8_t bind[] = {0x16, 0x00, 0x00, 0x00, 0x10, 0x01, 0x1a,
                                 0x8f, 0x80, 0x80, 0x00, 0x0a, 0x0d, 'p',
                                 'r',  'o',  'd',  'u',  'c',  'e',  'r',
                                 '_',  'p',  'o',  'r',  't'};
  gp__pb_writer w;
  gp__pb_writer_init(&w);
  gp__ipc_put_bind(&w, 1, "producer_port");
  size_t n;
  uint8_t *b = flat(&w, &n);
  ASSERT_EQ(n, sizeof(bind));
  ASSERT(memcmp(b, bind, n) == 0);
  free(b);

  /* InvokeMethod { service_id 42, method_id 5, args_proto "\x08\x07",
   * drop_reply }, request 3. */
  static const uint8_t invoke[] = {0x11, 0x00, 0x00, 0x00, 0x10, 0x03, 0x2a,
                                   0x8a, 0x80, 0x80, 0x00, 0x08, 0x2a, 0x10,
                                   0x05, 0x1a, 0x02, 0x08, 0x07, 0x20, 0x01};
  static const uint8_t args[] = {0x08, 0x07};
  gp__pb_writer_reset(&w);
  gp__ipc_put_invoke(&w, 3, 42, 5, args, sizeof(args), true);
  b = flat(&w, &n);
  ASSERT_EQ(n, sizeof(invoke));
  ASSERT(memcmp(b, invoke, n) == 0);
  free(b);
  gp__pb_writer_fini(&w);
}

TEST(producer_abi_bind_reply_and_split) {
  /* The reply of the protocol document's example: success, service 42,
   * methods {2, InitializeConnection} and {5, RegisterDataSource}. */
  static const uint8_t reply[] = {
      0x3a, 0x00, 0x00, 0x00, 0x10, 0x01, 0x22, 0x36, 0x08, 0x01, 0x10,
      0x2a, 0x1a, 0x18, 0x08, 0x02, 0x12, 0x14, 'I',  'n',  'i',  't',
      'i',  'a',  'l',  'i',  'z',  'e',  'C',  'o',  'n',  'n',  'e',
      'c',  't',  'i',  'o',  'n',  0x1a, 0x16, 0x08, 0x05, 0x12, 0x12,
      'R',  'e',  'g',  'i',  's',  't',  'e',  'r',  'D',  'a',  't',
      'a',  'S',  'o',  'u',  'r',  'c',  'e'};
  ASSERT_EQ(sizeof(reply), 62);
  const uint8_t *p;
  size_t pn;
  /* Cut anywhere: more bytes are needed. */
  for (size_t cut = 0; cut < sizeof(reply); cut++)
    ASSERT_EQ(gp__ipc_frame_split(reply, cut, &p, &pn), 0);
  ASSERT_EQ(gp__ipc_frame_split(reply, sizeof(reply), &p, &pn), 62);
  ASSERT_EQ(pn, 58);
  gp__ipc_frame f;
  ASSERT_OK(gp__ipc_frame_decode(p, pn, &f));
  ASSERT_EQ(f.request_id, 1);
  ASSERT_EQ(f.type, GP_IPC_BIND_SERVICE_REPLY);
  ASSERT(f.success);
  ASSERT_EQ(f.service_id, 42);
  uint32_t id = 0;
  ASSERT_OK(gp__ipc_method_id(&f, "RegisterDataSource", &id));
  ASSERT_EQ(id, 5);
  ASSERT_OK(gp__ipc_method_id(&f, "InitializeConnection", &id));
  ASSERT_EQ(id, 2);
  ASSERT_ERR(gp__ipc_method_id(&f, "Sync", &id), GP_ENOENT);
  /* A length of 0 or past the service's buffer cannot be resynchronised. */
  static const uint8_t zero[] = {0, 0, 0, 0, 0x10};
  static const uint8_t huge[] = {0x00, 0x00, 0x02, 0x00, 0x10};
  ASSERT_ERR(gp__ipc_frame_split(zero, sizeof(zero), &p, &pn), GP_ECORRUPT);
  ASSERT_ERR(gp__ipc_frame_split(huge, sizeof(huge), &p, &pn), GP_ECORRUPT);
  /* A frame whose length runs past its bytes is corrupt. */
  static const uint8_t bad[] = {0x10, 0x01, 0x22, 0x30, 0x08};
  ASSERT_ERR(gp__ipc_frame_decode(bad, sizeof(bad), &f), GP_ECORRUPT);
}

/* GetAsyncCommandResponse { start_data_source { new_instance_id: 7
 * config { name: "gpu.counters" target_buffer: 1 gpu_counter_config {
 * counter_period_ns: 500000 counter_names: "Utilization" } } } }, with
 * gpu_counter_config as field 108 (tag bytes e2 06), and fields the
 * service adds: tracing_session_id (4) 99, buffer_exhausted_policy (9)
 * DROP. */
static const uint8_t start_cmd[] = {
    0x0a, 0x2c, 0x08, 0x07, 0x12, 0x28, 0x0a, 0x0c, 'g',  'p',  'u',  '.',
    'c',  'o',  'u',  'n',  't',  'e',  'r',  's',  0x10, 0x01, 0x20, 0x63,
    0x48, 0x01, 0xe2, 0x06, 0x11, 0x08, 0xa0, 0xc2, 0x1e, 0x32, 0x0b, 'U',
    't',  'i',  'l',  'i',  'z',  'a',  't',  'i',  'o',  'n'};

TEST(producer_abi_commands_decode) {
  gp__ipc_command c;
  ASSERT_OK(gp__ipc_command_decode(start_cmd, sizeof(start_cmd), &c));
  ASSERT_EQ(c.kind, GP_IPC_CMD_START);
  ASSERT_EQ(c.instance_id, 7);
  ASSERT_EQ(c.config_len, 40);
  gp__ipc_ds_config ds;
  ASSERT_OK(gp__ipc_ds_config_decode(c.config, c.config_len, &ds));
  ASSERT_EQ(ds.name_len, 12);
  ASSERT(memcmp(ds.name, "gpu.counters", 12) == 0);
  ASSERT_EQ(ds.target_buffer, 1);
  ASSERT_EQ(ds.tracing_session_id, 99);
  ASSERT_EQ(ds.buffer_exhausted_policy, 1);

  /* flush { data_source_ids: 5 data_source_ids: 6 request_id: 9 } and
   * setup_tracing { shared_buffer_page_size_kb: 32 }. */
  static const uint8_t flush[] = {0x2a, 0x06, 0x08, 0x05,
                                  0x08, 0x06, 0x10, 0x09};
  ASSERT_OK(gp__ipc_command_decode(flush, sizeof(flush), &c));
  ASSERT_EQ(c.kind, GP_IPC_CMD_FLUSH);
  ASSERT_EQ(c.nids, 2);
  ASSERT_EQ(c.ids[0], 5);
  ASSERT_EQ(c.ids[1], 6);
  ASSERT_EQ(c.flush_request_id, 9);
  static const uint8_t setup[] = {0x1a, 0x02, 0x08, 0x20};
  ASSERT_OK(gp__ipc_command_decode(setup, sizeof(setup), &c));
  ASSERT_EQ(c.kind, GP_IPC_CMD_SETUP_TRACING);
  ASSERT_EQ(c.page_size_kb, 32);
  /* A command this producer does not know is no error. */
  static const uint8_t later[] = {0x52, 0x00};
  ASSERT_OK(gp__ipc_command_decode(later, sizeof(later), &c));
  ASSERT_EQ(c.kind, GP_IPC_CMD_NONE);
  ASSERT_ERR(gp__ipc_command_decode(start_cmd, sizeof(start_cmd) - 3, &c),
             GP_ECORRUPT);
}

TEST(producer_abi_binary_config_means_what_the_text_means) {
  gp__ipc_command c;
  ASSERT_OK(gp__ipc_command_decode(start_cmd, sizeof(start_cmd), &c));
  gp_trace_config *bin = NULL, *txt = NULL;
  char err[256];
  ASSERT_OK(gp__trace_config_from_source(c.config, c.config_len, &bin, err,
                                         sizeof(err)));
  static const char text[] =
      "data_sources { config { name: \"gpu.counters\" target_buffer: 1 "
      "gpu_counter_config { counter_period_ns: 500000 counter_names: "
      "\"Utilization\" } } }";
  ASSERT_OK(
      gp_trace_config_parse(text, sizeof(text) - 1, &txt, err, sizeof(err)));
  char a[1024], b[1024];
  size_t na, nb;
  ASSERT_OK(gp_trace_config_format(bin, a, sizeof(a), &na));
  ASSERT_OK(gp_trace_config_format(txt, b, sizeof(b), &nb));
  ASSERT_STR_EQ(a, b);
  gp_data_source_info ds;
  ASSERT_OK(gp_trace_config_get_data_source(bin, 0, &ds));
  ASSERT_EQ(ds.counters.counter_period_ns, 500000);
  ASSERT_EQ(ds.counters.num_counter_names, 1);
  gp_trace_config_destroy(bin);
  gp_trace_config_destroy(txt);

  /* The same rules: ids and names together are refused, naming the
   * field; a packed list of ids is read. */
  static const uint8_t both[] = {0x0a, 0x0c, 'g',  'p',  'u',  '.',  'c',  'o',
                                 'u',  'n',  't',  'e',  'r',  's',  0xe2, 0x06,
                                 0x07, 0x12, 0x02, 0x03, 0x04, 0x32, 0x01, 'U'};
  ASSERT_ERR(
      gp__trace_config_from_source(both, sizeof(both), &bin, err, sizeof(err)),
      GP_EPARSE);
  ASSERT(strstr(err, "field ") != NULL);
  static const uint8_t ids[] = {0x0a, 0x0c, 'g',  'p',  'u',  '.',  'c',
                                'o',  'u',  'n',  't',  'e',  'r',  's',
                                0xe2, 0x06, 0x04, 0x12, 0x02, 0x03, 0x04};
  ASSERT_OK(
      gp__trace_config_from_source(ids, sizeof(ids), &bin, err, sizeof(err)));
  ASSERT_OK(gp_trace_config_get_data_source(bin, 0, &ds));
  ASSERT_EQ(ds.counters.num_counter_ids, 2);
  ASSERT_EQ(ds.counters.counter_ids[1], 4);
  gp_trace_config_destroy(bin);
  /* Not ours, and not protobuf. */
  static const uint8_t other[] = {0x0a, 0x0c, 'l', 'i', 'n', 'u', 'x',
                                  '.',  'f',  't', 'r', 'a', 'c', 'e'};
  ASSERT_ERR(gp__trace_config_from_source(other, sizeof(other), &bin, err,
                                          sizeof(err)),
             GP_EPARSE);
  ASSERT_ERR(gp__trace_config_from_source(start_cmd, 5, &bin, err, sizeof(err)),
             GP_ECORRUPT);
}

/* Pages of 4 KiB: chunks of (4096 - 8) & ~3 = 4088 bytes, 4080 of them
 * after the chunk header. */
TEST(producer_abi_chunk_layout) {
  uint8_t *mem = aligned_alloc(4096, 3 * 4096);
  memset(mem, 0, 3 * 4096);
  gp__smb m;
  ASSERT_ERR(gp__smb_init(&m, mem, 3 * 4096, 3000), GP_EINVAL);
  ASSERT_ERR(gp__smb_init(&m, mem + 8, 2 * 4096, 4096), GP_EINVAL);
  ASSERT_OK(gp__smb_init(&m, mem, 3 * 4096, 4096));
  ASSERT_EQ(gp__smb_chunk_size(4096, 1), 4088);
  ASSERT_EQ(gp__smb_chunk_size(4096, 14), 292);
  gp__smb_writer w;
  gp__smb_writer_init(&w, &m, 5, 2, NULL, NULL);
  uint8_t small[10], big[6000];
  for (size_t i = 0; i < sizeof(small); i++)
    small[i] = (uint8_t)(0xa0 + i);
  for (size_t i = 0; i < sizeof(big); i++)
    big[i] = (uint8_t)i;
  ASSERT_OK(gp__smb_packet_begin(&w, sizeof(small)));
  ASSERT_OK(gp__smb_packet_write(&w, small, sizeof(small)));
  ASSERT_OK(gp__smb_packet_begin(&w, sizeof(big)));
  ASSERT_OK(gp__smb_packet_write(&w, big, 100)); /* in pieces */
  ASSERT_OK(gp__smb_packet_write(&w, big + 100, sizeof(big) - 100));
  gp__smb_complete(&w);

  /* Page 0: layout 1 (one chunk) in bits 28-30, chunk 0 complete (3). */
  uint32_t h0, cid;
  uint16_t wid, packets;
  memcpy(&h0, mem, 4);
  ASSERT_UEQ(h0, 0x10000003u);
  memcpy(&cid, mem + 8, 4);
  memcpy(&wid, mem + 12, 2);
  memcpy(&packets, mem + 14, 2);
  ASSERT_EQ(cid, 0);
  ASSERT_EQ(wid, 5);
  /* Two fragments; the last continues in the next chunk (flag 2). */
  ASSERT_UEQ(packets, 2u | (2u << 10));
  static const uint8_t frag1[] = {0x8a, 0x80, 0x80, 0x00};
  ASSERT(memcmp(mem + 16, frag1, 4) == 0);
  ASSERT(memcmp(mem + 20, small, sizeof(small)) == 0);
  /* Fragment 2 takes the rest: 4080 - 14 - 4 = 4062 bytes (0x1fde). */
  static const uint8_t frag2[] = {0xde, 0x9f, 0x80, 0x00};
  ASSERT(memcmp(mem + 30, frag2, 4) == 0);
  ASSERT(memcmp(mem + 34, big, 4062) == 0);
  /* Page 1: chunk 1 of writer 5, one fragment continuing the packet
   * (flag 1) with its last 1938 bytes (0x792). */
  uint8_t *pg = mem + 4096;
  uint32_t h1;
  memcpy(&h1, pg, 4);
  ASSERT_UEQ(h1, 0x10000003u);
  memcpy(&cid, pg + 8, 4);
  memcpy(&packets, pg + 14, 2);
  ASSERT_EQ(cid, 1);
  ASSERT_UEQ(packets, 1u | (1u << 10));
  static const uint8_t frag3[] = {0x92, 0x8f, 0x80, 0x00};
  ASSERT(memcmp(pg + 16, frag3, 4) == 0);
  ASSERT(memcmp(pg + 20, big + 4062, 1938) == 0);
  /* Both queued for CommitData, in order, with the target buffer. */
  gp__ipc_chunk_ref refs[4];
  ASSERT_EQ(gp__smb_take_done(&w, refs, 4), 2);
  ASSERT_EQ(refs[0].page, 0);
  ASSERT_EQ(refs[1].page, 1);
  ASSERT_EQ(refs[1].target_buffer, 2);
  ASSERT_EQ(w.packets, 2);
  ASSERT_EQ(w.dropped, 0);

  /* CommitData { chunks_to_move { page 1 chunk 0 target_buffer 2 }
   * flush_request_id 9 }. */
  gp__pb_writer pb;
  gp__pb_writer_init(&pb);
  gp__ipc_put_commit(&pb, &refs[1], 1, 9);
  size_t n;
  uint8_t *b = flat(&pb, &n);
  static const uint8_t commit[] = {0x0a, 0x06, 0x08, 0x01, 0x10,
                                   0x00, 0x18, 0x02, 0x18, 0x09};
  ASSERT_EQ(n, sizeof(commit));
  ASSERT(memcmp(b, commit, n) == 0);
  free(b);
  gp__pb_writer_fini(&pb);
  gp__smb_writer_fini(&w);
  free(mem);
}

static unsigned starved_calls;
static bool never(void *user, unsigned attempt) {
  (void)user;
  (void)attempt;
  starved_calls++;
  return false;
}

static bool free_page_once(void *user, unsigned attempt) {
  /* The service copies page 0 and frees it. */
  uint8_t *mem = user;
  starved_calls++;
  if (attempt > 0)
    return false;
  __atomic_store_n((uint32_t *)(void *)mem, 0u, __ATOMIC_RELEASE);
  return true;
}

TEST(producer_abi_full_buffer_drops_and_counts) {
  uint8_t *mem = aligned_alloc(4096, 4096);
  memset(mem, 0, 4096);
  gp__smb m;
  ASSERT_OK(gp__smb_init(&m, mem, 4096, 4096));
  gp__smb_writer w;
  gp__smb_writer_init(&w, &m, 1, 0, never, NULL);
  uint8_t pkt[3000] = {0};
  ASSERT_OK(gp__smb_packet_begin(&w, sizeof(pkt)));
  ASSERT_OK(gp__smb_packet_write(&w, pkt, sizeof(pkt)));
  /* The second does not fit and no page comes free: dropped, counted,
   * its bytes swallowed; the first stays whole. */
  ASSERT_OK(gp__smb_packet_begin(&w, sizeof(pkt)));
  ASSERT_ERR(gp__smb_packet_write(&w, pkt, sizeof(pkt)), GP_ENOSPC);
  ASSERT_EQ(w.dropped, 1);
  ASSERT_EQ(w.packets, 1);
  ASSERT_EQ(starved_calls, 1);
  ASSERT_ERR(gp__smb_packet_begin(&w, 10), GP_ENOSPC);
  ASSERT_OK(gp__smb_packet_write(&w, pkt, 10));
  ASSERT_EQ(w.dropped, 2);
  gp__smb_writer_fini(&w);

  /* With a service that frees the page, the writer waits and goes on. */
  memset(mem, 0, 4096);
  starved_calls = 0;
  gp__smb_writer_init(&w, &m, 1, 0, free_page_once, mem);
  ASSERT_OK(gp__smb_packet_begin(&w, sizeof(pkt)));
  ASSERT_OK(gp__smb_packet_write(&w, pkt, sizeof(pkt)));
  ASSERT_OK(gp__smb_packet_begin(&w, sizeof(pkt)));
  ASSERT_OK(gp__smb_packet_write(&w, pkt, sizeof(pkt)));
  ASSERT_EQ(starved_calls, 1);
  ASSERT_EQ(w.dropped, 0);
  ASSERT_EQ(w.next_chunk_id, 2);
  gp__smb_writer_fini(&w);
  free(mem);
}

/* The fuzz target's corpus and the inputs that once broke it
 * (tests/fuzz/corpus/ipc), through the normal build. */
TEST(producer_abi_fuzz_corpus_replays) {
  DIR *d = opendir("tests/fuzz/corpus/ipc");
  if (!d)
    SKIP("tests/fuzz/corpus/ipc not found (run from the source tree)");
  int files = 0, frames = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char path[512];
    snprintf(path, sizeof(path), "tests/fuzz/corpus/ipc/%s", e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f)
      continue;
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    frames += ipc_input(buf, n);
    files++;
  }
  closedir(d);
  ASSERT_GE(files, 4);
  ASSERT_GE(frames, 10);
}
