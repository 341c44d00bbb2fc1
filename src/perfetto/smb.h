/*
 * smb.h - writing TracePackets into the shared memory buffer (SMB) a
 * Perfetto tracing service shares with a producer, per Perfetto's
 * documented shared memory ABI (docs/design-docs/api-and-abi.md and
 * shared_memory_abi.h there; docs/perfetto.md here).
 *
 * The SMB is split into pages of one size (a multiple of 4 KiB, at most
 * 64 KiB). Each page starts with an 8-byte header:
 *
 *   offset  size  what
 *   0       4     header bitmap: bits 28-30 the layout (how many chunks
 *                 the page holds: 0 none, 1 one, 2 two, 3 four, 4 seven,
 *                 5 fourteen), bits 2i..2i+1 the state of chunk i
 *                 (0 free, 1 being written, 2 being read, 3 complete)
 *   4       4     reserved
 *
 * and is followed by its chunks, each of size ((page - 8) / n) & ~3.
 * A chunk starts with an 8-byte header:
 *
 *   offset  size  what
 *   0       4     chunk id (per writer, counting up from 0)
 *   4       2     writer id (1 .. 1023 here)
 *   6       2     bits 0-9: fragments begun in the chunk; bits 10-15
 *                 flags: 1 the first fragment continues a packet of the
 *                 previous chunk, 2 the last one continues in the next,
 *                 4 the chunk needs patching (never set here)
 *
 * followed by fragments: a 4-byte redundant varint of the fragment's size,
 * then that many bytes of TracePacket. A packet longer than the room left
 * continues in the writer's next chunk. Pages are taken whole (one chunk
 * per page, the layout Perfetto's own writers use by default) by a single
 * compare-and-swap of the bitmap from 0 (free) to "one chunk, being
 * written"; a full chunk goes to "complete" and is handed to the service
 * with CommitData, which copies it and sets the page free again.
 *
 * A gp__smb_writer is one writer id: one packet sequence of the trace.
 * It is used by one thread at a time; several writers share an SMB
 * without locks.
 */
#ifndef GPUPERF_PERFETTO_SMB_H
#define GPUPERF_PERFETTO_SMB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipc.h"

#define GP_SMB_PAGE_HEADER 8
#define GP_SMB_CHUNK_HEADER 8
#define GP_SMB_FRAGMENT_HEADER 4
#define GP_SMB_MAX_FRAGMENTS 1023 /* 10 bits of count */
#define GP_SMB_MAX_WRITER_ID 1023

/* Chunk states and flags, as in the ABI. */
enum {
  GP_SMB_FREE = 0,
  GP_SMB_WRITING = 1,
  GP_SMB_READING = 2,
  GP_SMB_COMPLETE = 3
};
enum {
  GP_SMB_FIRST_CONTINUES = 1,
  GP_SMB_LAST_CONTINUES = 2,
  GP_SMB_NEEDS_PATCHING = 4
};

typedef struct gp__smb {
  uint8_t *base;
  size_t size, page_size, npages;
} gp__smb;

/*
 * Describes the SMB mapped at base. Returns GP_EINVAL unless page_size is
 * a multiple of 4096 no larger than 65536, base is 4096-aligned and size a
 * non-zero multiple of page_size. Nothing is written to the memory.
 */
int gp__smb_init(gp__smb *m, void *base, size_t size, size_t page_size);

/*
 * Called when no chunk is free: attempt counts from 0. The callee commits
 * what is waiting and may sleep; it returns true to try again, false to
 * give up (the packet is then dropped and counted).
 */
typedef bool (*gp__smb_starved_fn)(void *user, unsigned attempt);

typedef struct gp__smb_writer {
  gp__smb *smb;
  uint16_t id;
  uint32_t target_buffer;
  uint32_t next_chunk_id;
  gp__smb_starved_fn starved;
  void *starved_user;
  /* The chunk being written (chunk == NULL: none). */
  uint8_t *chunk, *p, *end;
  uint32_t page;
  uint16_t count;
  uint8_t flags;
  /* The packet being written. */
  uint8_t *frag;    /* size header of its current fragment */
  size_t frag_room; /* bytes its current fragment may still take */
  size_t left;      /* bytes of the packet still to come */
  bool dropping;    /* the rest of the packet is dropped */
  size_t next_page; /* where the search for a free page starts */
  bool gave_up;     /* starved said stop: no more waiting until a page is
                       free again (a full buffer costs one wait, not one
                       per chunk) */
  /* Complete chunks not yet committed. */
  gp__ipc_chunk_ref *done;
  size_t ndone, capdone;
  /* Totals. */
  uint64_t packets, dropped, chunks, bytes;
} gp__smb_writer;

/* Initialises a writer with id (1 .. GP_SMB_MAX_WRITER_ID) writing for
 * the service's buffer target_buffer. starved may be NULL (never wait). */
void gp__smb_writer_init(gp__smb_writer *w, gp__smb *m, uint16_t id,
                         uint32_t target_buffer, gp__smb_starved_fn starved,
                         void *user);

/* Completes the current chunk (see gp__smb_complete) and frees the
 * writer's memory; the SMB itself is not touched otherwise. */
void gp__smb_writer_fini(gp__smb_writer *w);

/*
 * Starts a packet of exactly len bytes, to be given by
 * gp__smb_packet_write(). A packet still open is dropped (counted).
 * Returns 0, or GP_ENOSPC when no chunk could be had: the packet is
 * dropped, counted, and its bytes are swallowed as they come.
 */
int gp__smb_packet_begin(gp__smb_writer *w, size_t len);

/*
 * Appends n bytes (at most what the packet still lacks) to the open
 * packet, continuing it in new chunks as needed. Returns 0, or GP_ENOSPC
 * when the rest of the packet had to be dropped (counted; the service
 * discards the fragments already committed, as the ABI says).
 */
int gp__smb_packet_write(gp__smb_writer *w, const uint8_t *d, size_t n);

/* Marks the current chunk complete and queues it for commit; does
 * nothing without one. For flushes and the end of a data source. */
void gp__smb_complete(gp__smb_writer *w);

/* Moves up to max queued chunk references into out and returns how many
 * (the oldest first). */
size_t gp__smb_take_done(gp__smb_writer *w, gp__ipc_chunk_ref *out, size_t max);

/* The size of chunks of a page of layout n chunks. */
static inline size_t gp__smb_chunk_size(size_t page_size, unsigned n) {
  return ((page_size - GP_SMB_PAGE_HEADER) / n) & ~(size_t)3;
}

#endif /* GPUPERF_PERFETTO_SMB_H */
