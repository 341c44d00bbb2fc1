/*
 * smb.c - TracePackets into the shared memory buffer, per the layout in
 * smb.h. The service reads what this writes at any time from another
 * process: every change of a page's state is one atomic compare-and-swap
 * of its header bitmap, and a chunk's header is complete before its page
 * says "complete" (release order).
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "smb.h"

#define LAYOUT_SHIFT 28
#define LAYOUT_ONE_CHUNK 1u /* kPageDiv1 */

/* See smb.h. */
int gp__smb_init(gp__smb *m, void *base, size_t size, size_t page_size) {
  if (!m || !base || page_size == 0 || page_size % 4096 || page_size > 65536 ||
      ((uintptr_t)base & 4095) || size == 0 || size % page_size)
    return GP_EINVAL;
  m->base = base;
  m->size = size;
  m->page_size = page_size;
  m->npages = size / page_size;
  return 0;
}

/* See smb.h. */
void gp__smb_writer_init(gp__smb_writer *w, gp__smb *m, uint16_t id,
                         uint32_t target_buffer, gp__smb_starved_fn starved,
                         void *user) {
  memset(w, 0, sizeof(*w));
  w->smb = m;
  w->id = id;
  w->target_buffer = target_buffer;
  w->starved = starved;
  w->starved_user = user;
}

/* See smb.h. */
void gp__smb_writer_fini(gp__smb_writer *w) {
  gp__smb_complete(w);
  free(w->done);
  w->done = NULL;
  w->ndone = w->capdone = 0;
}

static uint32_t *page_header(const gp__smb *m, size_t page) {
  return (uint32_t *)(void *)(m->base + page * m->page_size);
}

/* Takes a free page whole; false if none is free now. */
static bool try_acquire(gp__smb_writer *w) {
  gp__smb *m = w->smb;
  for (size_t k = 0; k < m->npages; k++) {
    size_t page = (w->next_page + k) % m->npages;
    uint32_t *hdr = page_header(m, page);
    uint32_t expect = 0;
    if (__atomic_load_n(hdr, __ATOMIC_RELAXED) != 0)
      continue;
    uint32_t want = LAYOUT_ONE_CHUNK << LAYOUT_SHIFT | GP_SMB_WRITING;
    if (!__atomic_compare_exchange_n(hdr, &expect, want, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      continue;
    uint8_t *c = m->base + page * m->page_size + GP_SMB_PAGE_HEADER;
    __atomic_store_n((uint32_t *)(void *)c, w->next_chunk_id++,
                     __ATOMIC_RELAXED);
    __atomic_store_n((uint16_t *)(void *)(c + 4), w->id, __ATOMIC_RELAXED);
    __atomic_store_n((uint16_t *)(void *)(c + 6), (uint16_t)0,
                     __ATOMIC_RELEASE);
    w->chunk = c;
    w->p = c + GP_SMB_CHUNK_HEADER;
    w->end = c + gp__smb_chunk_size(m->page_size, 1);
    w->page = (uint32_t)page;
    w->count = 0;
    w->flags = 0;
    w->next_page = (page + 1) % m->npages;
    w->chunks++;
    return true;
  }
  return false;
}

/* A free page, waiting as starved allows; after it once said stop, not
 * again until a page was free: a buffer nobody drains (a service that
 * died, or hangs) then costs one wait, not one for every chunk, so that a
 * flush or the program's exit is never held for long. */
static bool acquire(gp__smb_writer *w) {
  for (unsigned attempt = 0;; attempt++) {
    if (try_acquire(w)) {
      w->gave_up = false;
      return true;
    }
    if (w->gave_up || !w->starved || !w->starved(w->starved_user, attempt)) {
      w->gave_up = true;
      return false;
    }
  }
}

static bool queue_done(gp__smb_writer *w, uint32_t page) {
  if (w->ndone == w->capdone) {
    size_t cap = w->capdone ? 2 * w->capdone : 16;
    gp__ipc_chunk_ref *d = realloc(w->done, cap * sizeof(*d));
    if (!d)
      return false;
    w->done = d;
    w->capdone = cap;
  }
  w->done[w->ndone].page = page;
  w->done[w->ndone].chunk = 0;
  w->done[w->ndone].target_buffer = w->target_buffer;
  w->ndone++;
  return true;
}

/* See smb.h. */
void gp__smb_complete(gp__smb_writer *w) {
  if (!w->chunk)
    return;
  uint16_t packets = (uint16_t)((w->count & GP_SMB_MAX_FRAGMENTS) |
                                (uint16_t)(w->flags << 10));
  __atomic_store_n((uint16_t *)(void *)(w->chunk + 6), packets,
                   __ATOMIC_RELEASE);
  uint32_t *hdr = page_header(w->smb, w->page);
  uint32_t cur = __atomic_load_n(hdr, __ATOMIC_RELAXED);
  bool ok = false;
  /* Defensive: only a chunk still being written may become complete (a
   * service that broke the protocol is not followed into a bad state). */
  while ((cur & 3u) == GP_SMB_WRITING) {
    uint32_t next = (cur & ~3u) | GP_SMB_COMPLETE;
    if (__atomic_compare_exchange_n(hdr, &cur, next, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
      ok = true;
      break;
    }
  }
  if (ok && !queue_done(w, w->page)) {
    /* Out of memory for the list: the chunk is complete but cannot be
     * named to the service; it stays taken (counted as dropped). */
    w->dropped++;
  }
  w->chunk = NULL;
  w->frag = NULL;
  w->frag_room = 0;
}

/* Opens a fragment of (up to) remaining bytes, in the current chunk if it
 * has room, else in a new one; continues: it carries on a packet. */
static bool open_fragment(gp__smb_writer *w, size_t remaining, bool continues) {
  size_t need = GP_SMB_FRAGMENT_HEADER + (remaining ? 1 : 0);
  if (w->chunk &&
      ((size_t)(w->end - w->p) < need || w->count >= GP_SMB_MAX_FRAGMENTS))
    gp__smb_complete(w);
  if (!w->chunk) {
    if (!acquire(w))
      return false;
    if (continues)
      w->flags |= GP_SMB_FIRST_CONTINUES;
  }
  size_t room = (size_t)(w->end - w->p) - GP_SMB_FRAGMENT_HEADER;
  size_t len = remaining < room ? remaining : room;
  gp__ipc_put_size4(w->p, (uint32_t)len);
  w->frag = w->p;
  w->p += GP_SMB_FRAGMENT_HEADER;
  w->frag_room = len;
  w->count++;
  return true;
}

static void drop_rest(gp__smb_writer *w) {
  w->dropping = true;
  w->dropped++;
  w->frag = NULL;
  w->frag_room = 0;
}

/* See smb.h. */
int gp__smb_packet_begin(gp__smb_writer *w, size_t len) {
  if (w->left > 0 && !w->dropping) {
    /* Defensive: the previous packet never ended. Its fragment is padded
     * with zeros to the size it announced, which the service's validator
     * refuses as malformed rather than misreading what follows. */
    if (w->frag) {
      memset(w->p, 0, w->frag_room);
      w->p += w->frag_room;
    }
    w->dropped++;
  }
  w->dropping = false;
  w->left = len;
  if (!open_fragment(w, len, false)) {
    drop_rest(w);
    if (len == 0)
      w->dropping = false;
    return GP_ENOSPC;
  }
  if (len == 0) {
    w->frag = NULL;
    w->packets++;
  }
  return 0;
}

/* See smb.h. */
int gp__smb_packet_write(gp__smb_writer *w, const uint8_t *d, size_t n) {
  if (n > w->left)
    n = w->left; /* defensive: never past the announced length */
  int rc = 0;
  while (n > 0) {
    if (w->dropping) {
      w->left -= n;
      break;
    }
    if (w->frag_room == 0) {
      /* The chunk is full and the packet goes on in the next one. */
      w->flags |= GP_SMB_LAST_CONTINUES;
      gp__smb_complete(w);
      if (!open_fragment(w, w->left, true)) {
        drop_rest(w);
        rc = GP_ENOSPC;
        continue;
      }
    }
    size_t k = n < w->frag_room ? n : w->frag_room;
    memcpy(w->p, d, k);
    w->p += k;
    w->frag_room -= k;
    w->left -= k;
    w->bytes += k;
    d += k;
    n -= k;
  }
  if (w->left == 0) {
    if (!w->dropping)
      w->packets++;
    w->dropping = false;
    w->frag = NULL;
  }
  return rc;
}

/* See smb.h. */
size_t gp__smb_take_done(gp__smb_writer *w, gp__ipc_chunk_ref *out,
                         size_t max) {
  size_t n = w->ndone < max ? w->ndone : max;
  memcpy(out, w->done, n * sizeof(*out));
  memmove(w->done, w->done + n, (w->ndone - n) * sizeof(*out));
  w->ndone -= n;
  return n;
}
