/*
 * session_salvage.c - the recorder's side of a recorded process killed by
 * SIGKILL: writing the records it had committed but not yet written,
 * which its death page still holds (session_lost.c describes the page).
 *
 * The records refer to the dead process's strings and devices, which the
 * page holds copies of; the trace writer encodes them through a context
 * (perfetto/writer.h, gp__tw_context) that answers from those copies
 * instead of this process's core. They go, after the part's last whole
 * packet, into a packet sequence of their own (the part's own sequence
 * cannot be continued: its interning and track ids lived in the dead
 * process), on the tracks of the same process (found by its pid).
 *
 * Everything read from the page is checked as untrusted input: a page cut
 * short or scribbled over gives GP_ECORRUPT or fewer records, never a read
 * outside it. Time and memory are linear in the page and the part.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sessionInt.h"

#define SALVAGE_SEQ_BIT (1u << 22)
/* salvage_into(): written, from a page damaged in places. */
#define GP_EDAMAGED_PAGE (-100000)

typedef struct sv_str {
  char *s; /* NUL-terminated copy */
  uint32_t len;
} sv_str;

typedef struct salvage {
  sv_str *strs; /* by id; strs[0] unused */
  uint32_t nstr, capstr, maxid;
  uint32_t *hidx; /* open addressing: ids, 0 = empty */
  uint32_t hmask;
  gp__death_device *devs; /* private copies, strings NUL-terminated */
  uint32_t ndev;
  bool damaged; /* the string log or devices did not hold up: cut there */
} salvage;

static void hidx_put(salvage *v, uint32_t id) {
  const sv_str *e = &v->strs[id];
  uint32_t i = (uint32_t)gp__string_hash(e->s, e->len) & v->hmask;
  while (v->hidx[i])
    i = (i + 1) & v->hmask;
  v->hidx[i] = id;
}

/* Room for one more string at id (ids grow by one); 0 or GP_ENOMEM. */
static int sv_reserve(salvage *v, uint32_t id) {
  if (id >= v->capstr) {
    if (id >= UINT32_MAX / 2)
      return GP_ENOMEM;
    uint32_t cap = v->capstr ? v->capstr * 2 : 256;
    while (cap <= id)
      cap *= 2;
    sv_str *n = realloc(v->strs, cap * sizeof(*n));
    if (!n)
      return GP_ENOMEM;
    memset(n + v->capstr, 0, (cap - v->capstr) * sizeof(*n));
    v->strs = n;
    v->capstr = cap;
  }
  if ((uint64_t)(v->nstr + 1) * 2 > (uint64_t)v->hmask + 1 || !v->hidx) {
    uint32_t cap = v->hidx ? (v->hmask + 1) * 2 : 1024;
    while ((uint64_t)(v->nstr + 1) * 2 > cap)
      cap *= 2;
    uint32_t *h = calloc(cap, sizeof(*h));
    if (!h)
      return GP_ENOMEM;
    free(v->hidx);
    v->hidx = h;
    v->hmask = cap - 1;
    for (uint32_t i = 1; i < v->capstr; i++)
      if (v->strs[i].s)
        hidx_put(v, i);
  }
  return 0;
}

/* Adds s as string id (no check that it is new). */
static int sv_add(salvage *v, uint32_t id, const char *s, size_t len) {
  if (len > UINT32_MAX || sv_reserve(v, id) != 0)
    return GP_ENOMEM;
  char *c = malloc(len + 1);
  if (!c)
    return GP_ENOMEM;
  memcpy(c, s, len);
  c[len] = '\0';
  free(v->strs[id].s);
  v->strs[id].s = c;
  v->strs[id].len = (uint32_t)len;
  v->nstr++;
  if (id > v->maxid)
    v->maxid = id;
  hidx_put(v, id);
  return 0;
}

static const char *ctx_string(void *user, uint32_t id) {
  salvage *v = user;
  return id < v->capstr && v->strs[id].s ? v->strs[id].s : "";
}

static uint32_t ctx_intern(void *user, const char *s, size_t len) {
  salvage *v = user;
  if (v->hidx) {
    uint32_t i = (uint32_t)gp__string_hash(s, len) & v->hmask;
    for (; v->hidx[i]; i = (i + 1) & v->hmask) {
      const sv_str *e = &v->strs[v->hidx[i]];
      if (e->len == len && memcmp(e->s, s, len) == 0)
        return v->hidx[i];
    }
  }
  uint32_t id = v->maxid + 1;
  return id != 0 && sv_add(v, id, s, len) == 0 ? id : 0;
}

static uint32_t ctx_device_count(void *user) {
  return ((salvage *)user)->ndev;
}

static int ctx_device_info(void *user, uint32_t id, gp_device_info *di) {
  salvage *v = user;
  if (id >= v->ndev || v->devs[id].id != id || !v->devs[id].name[0])
    return GP_ENODEV;
  const gp__death_device *d = &v->devs[id];
  memset(di, 0, sizeof(*di));
  di->id = id;
  di->api = d->api;
  di->name = d->name;
  di->vendor = d->vendor;
  di->model = d->model;
  di->architecture = d->architecture;
  di->driver_version = d->driver_version;
  memcpy(di->uuid, d->uuid, 16);
  di->pci_domain = d->pci_domain;
  di->pci_bus = d->pci_bus;
  di->pci_device = d->pci_device;
  di->pci_function = d->pci_function;
  di->global_memory_bytes = d->global_memory_bytes;
  di->memory_bandwidth_bytes_per_s = d->memory_bandwidth_bytes_per_s;
  di->compute_units = d->compute_units;
  di->core_clock_khz = d->core_clock_khz;
  di->memory_clock_khz = d->memory_clock_khz;
  di->max_threads_per_block = d->max_threads_per_block;
  di->max_shared_memory_per_block = d->max_shared_memory_per_block;
  di->num_queues = d->num_queues;
  di->clock_id = d->clock_id;
  di->flags = d->flags;
  return 0;
}

static int ctx_device_queue(void *user, uint32_t id, uint32_t queue,
                            gp_device_queue_info *q) {
  salvage *v = user;
  if (id >= v->ndev || v->devs[id].id != id)
    return GP_ENODEV;
  const gp__death_device *d = &v->devs[id];
  if (queue >= d->num_queues || queue >= GP_DEATH_DEV_QUEUES ||
      !d->queues[queue].name[0])
    return GP_ENOENT; /* the writer names it "Queue N" */
  memset(q, 0, sizeof(*q));
  q->name = d->queues[queue].name;
  q->description = "";
  q->kind = d->queues[queue].kind;
  return 0;
}

static void sv_free(salvage *v) {
  for (uint32_t i = 0; i < v->capstr; i++)
    free(v->strs[i].s);
  free(v->strs);
  free(v->hidx);
  free(v->devs);
}

/*
 * Reads the string log and the devices of the page (m, size bytes). The
 * log holds ids 1, 2, 3, ... in order (gp__string_mirror), each entry at
 * least 8 bytes: an entry that breaks the rule, or runs past the log, ends
 * it there (v->damaged), so what is kept is bounded by the page's size.
 * Devices that do not fit the page are dropped the same way.
 */
static int sv_load(salvage *v, const uint8_t *m, size_t size) {
  const gp__death_page *h = (const gp__death_page *)m;
  uint64_t used = h->str_used;
  if (h->str_offset > size || h->str_cap > size - h->str_offset ||
      used > h->str_cap) {
    used = 0;
    v->damaged = true;
  }
  const uint8_t *log = used ? m + h->str_offset : m;
  for (uint64_t at = 0; at + 8 <= used;) {
    uint32_t head[2];
    memcpy(head, log + at, 8);
    if (head[0] != v->maxid + 1 || head[1] > used - at - 8) {
      v->damaged = true;
      break;
    }
    if (sv_add(v, head[0], (const char *)log + at + 8, head[1]) != 0)
      return GP_ENOMEM;
    at += GP_ALIGN8(8 + (uint64_t)head[1]);
  }
  uint64_t nd = h->dev_count;
  if (nd > h->dev_max || h->dev_offset > size ||
      nd * sizeof(gp__death_device) > size - h->dev_offset) {
    nd = 0;
    v->damaged = true;
  }
  if (nd > 0) {
    v->devs = malloc(nd * sizeof(*v->devs));
    if (!v->devs)
      return GP_ENOMEM;
    memcpy(v->devs, m + h->dev_offset, nd * sizeof(*v->devs));
    for (uint64_t i = 0; i < nd; i++) {
      gp__death_device *d = &v->devs[i];
      d->name[sizeof(d->name) - 1] = d->vendor[sizeof(d->vendor) - 1] = 0;
      d->model[sizeof(d->model) - 1] = 0;
      d->architecture[sizeof(d->architecture) - 1] = 0;
      d->driver_version[sizeof(d->driver_version) - 1] = 0;
      for (int q = 0; q < GP_DEATH_DEV_QUEUES; q++)
        d->queues[q].name[sizeof(d->queues[q].name) - 1] = 0;
    }
  }
  v->ndev = (uint32_t)nd;
  return 0;
}

/* Length of the prefix of the part made of whole `packet` fields. */
static int part_whole(int fd, uint64_t *whole) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return -errno;
  size_t n = (size_t)st.st_size, off = 0;
  uint8_t *d = n ? malloc(n) : NULL;
  if (n && !d)
    return GP_ENOMEM;
  size_t got = 0;
  while (got < n) {
    ssize_t k = pread(fd, d + got, n - got, (off_t)got);
    if (k <= 0)
      break;
    got += (size_t)k;
  }
  while (off < got) {
    size_t p = off;
    if (d[p++] != 0x0a) /* field 1, length-delimited */
      break;
    uint64_t len = 0;
    int shift = 0;
    bool more = true;
    while (more && p < got && shift < 64) {
      len |= (uint64_t)(d[p] & 0x7f) << shift;
      more = (d[p++] & 0x80) != 0;
      shift += 7;
    }
    if (more || len > got - p)
      break;
    off = p + (size_t)len;
  }
  free(d);
  *whole = off;
  return 0;
}

/* The words of cell i of the page (m; its private copy). */
static uint64_t *cell_of(uint8_t *m, const gp__death_page *h, uint64_t i) {
  return (uint64_t *)(m + h->cells_offset + i * h->stride);
}

/*
 * The delivery that was under way when the process died (core.h,
 * gp__delivery): if its records were written, its thread's cell says so
 * now; if they were being written, the part is cut back to where they
 * began (they are salvaged from the thread's buffer instead). Either way
 * the page's written count is made what it was before them, plus them if
 * they were written (the process counts them only after writing them,
 * and may have died in between).
 */
/* The queued entry of the page (its private copy) for buffer word and
 * base, or NULL. */
static uint64_t *queued_of(gp__death_page *h, uint64_t word, uint64_t base) {
  uint64_t n = h->nqueued < GP_DEATH_QUEUED ? h->nqueued : GP_DEATH_QUEUED;
  for (uint64_t i = 0; word && i < n; i++)
    if (h->queued[i][0] == word && h->queued[i][1] == base)
      return h->queued[i];
  return NULL;
}

static int settle_delivery(uint8_t *m, gp__death_page *h, int part) {
  const gp__delivery *d = &h->delivery;
  if (d->state != 1)
    return 0;
  if (d->part_before != UINT64_MAX)
    h->written = h->delivery_written +
                 (d->part_after != UINT64_MAX ? h->delivery_records : 0);
  /* Where the records are now: the thread's cell, or the queued entry of
   * a buffer handed over (since the copy was made, for a flush's). */
  uint64_t *c = NULL, *q = NULL;
  if (d->cell < h->ncells) {
    c = cell_of(m, h, d->cell);
    if (c[1] != d->buf || c[2] != d->base)
      c = NULL;
  }
  if (!c && (d->cell < h->ncells || d->cell == GP_DELIVERY_QUEUED))
    q = queued_of(h, d->buf, d->base);
  if (!c && !q)
    return 0;
  if (d->part_after != UINT64_MAX) { /* written */
    if (c)
      c[3] = d->to;
    else if (d->cell == GP_DELIVERY_QUEUED)
      q[0] = 0; /* all of them */
    else
      q[2] = d->to;
    return 0;
  }
  struct stat st;
  if (d->part_before != UINT64_MAX && fstat(part, &st) == 0 &&
      d->part_before < (uint64_t)st.st_size &&
      ftruncate(part, (off_t)d->part_before) != 0)
    return -errno;
  return 0;
}

/* Hands the writer the records of each buffer handed over and not yet
 * written (those in bytes [from, to) of a queued entry), unless a cell
 * still holds it (the thread died handing it over: the cell's then);
 * counts them (not the kinds it does not write) in *n. */
static void salvage_queued(gp__tw *w, uint8_t *m, const gp__death_page *h,
                           uint64_t *n) {
  uint64_t nq = h->nqueued < GP_DEATH_QUEUED ? h->nqueued : GP_DEATH_QUEUED;
  for (uint64_t i = 0; i < nq; i++) {
    const uint64_t *q = h->queued[i];
    uint64_t boff = q[0] - 1, from = q[2], to = q[3];
    if (q[0] == 0 || boff % 8 || boff > h->area_size ||
        h->buf_size > h->area_size - boff || from % 8 || from >= to ||
        to > h->buf_size)
      continue;
    bool held = false;
    for (uint64_t c = 0; c < h->ncells && !held; c++) {
      const uint64_t *cw = cell_of(m, h, c);
      held = cw[1] == q[0] && cw[2] == q[1];
    }
    if (held)
      continue;
    const uint8_t *buf = m + h->area_offset + boff;
    uint64_t off = from, keep = 0;
    while (off + sizeof(gp_activity) <= to) {
      const gp_activity *r = (const gp_activity *)(buf + off);
      if (r->size < sizeof(gp_activity) || r->size % 8 || r->size > to - off)
        break;
      if (r->kind != GP_ACTIVITY_KIND_COUNTER &&
          r->kind != GP_ACTIVITY_KIND_ENVIRONMENT)
        keep++;
      off += r->size;
    }
    if (off <= from)
      continue;
    gp__tw_consume(w, buf + from, (size_t)(off - from));
    *n += keep;
  }
}

/* Hands the writer the committed, unwritten records of every thread's
 * buffer; counts them (and the kinds it does not write) in *n. */
static void salvage_cells(gp__tw *w, uint8_t *m, const gp__death_page *h,
                          uint64_t *n) {
  for (uint64_t i = 0; i < h->ncells; i++) {
    const uint64_t *c = cell_of(m, h, i);
    if (c[1] == 0 || c[0] < c[2])
      continue;
    uint64_t boff = c[1] - 1;
    if (boff % 8 || boff > h->area_size || h->buf_size > h->area_size - boff)
      continue;
    const uint8_t *buf = m + h->area_offset + boff;
    uint64_t want = c[0] - c[2], k = 0, off = 0, from = UINT64_MAX, keep = 0;
    while (k < want && off + sizeof(gp_activity) <= h->buf_size) {
      const gp_activity *r = (const gp_activity *)(buf + off);
      if (r->size < sizeof(gp_activity) || r->size % 8 ||
          r->size > h->buf_size - off)
        break;
      if (off >= c[3] && from == UINT64_MAX)
        from = off;
      if (from != UINT64_MAX && r->kind != GP_ACTIVITY_KIND_COUNTER &&
          r->kind != GP_ACTIVITY_KIND_ENVIRONMENT)
        keep++;
      off += r->size;
      k++;
    }
    if (from == UINT64_MAX || off <= from)
      continue;
    gp__tw_consume(w, buf + from, (size_t)(off - from));
    *n += keep;
  }
}

static gp_trace_config *read_config(const char *dir) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/config.pbtxt", dir);
  gp_trace_config *cfg = NULL;
  FILE *f = fopen(path, "rb");
  if (f) {
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
      if (len == cap) {
        char *t = realloc(text, cap = cap ? cap * 2 : 4096);
        if (!t)
          break;
        text = t;
      }
      size_t k = fread(text + len, 1, cap - len, f);
      if (k == 0)
        break;
      len += k;
    }
    fclose(f);
    if (text && gp_trace_config_parse(text, len, &cfg, NULL, 0) != 0)
      cfg = NULL;
    free(text);
  }
  if (!cfg && gp_trace_config_default(&cfg) != 0)
    cfg = NULL;
  return cfg;
}

/* Salvages from the page m (private copy) into the part. */
static int salvage_into(const char *dir, uint32_t seq, uint8_t *m, size_t size,
                        int part, uint64_t *salvaged) {
  const gp__death_page *h = (const gp__death_page *)m;
  if (h->area_offset > size || h->area_size > size - h->area_offset ||
      h->area_offset % 8 || h->ncells > (1u << 20) || h->stride < 32 ||
      h->stride % 8 || h->cells_offset > size || h->cells_offset % 8 ||
      (uint64_t)h->ncells * h->stride > size - h->cells_offset)
    return GP_ECORRUPT;
  salvage v;
  memset(&v, 0, sizeof(v));
  int rc = sv_load(&v, m, size);
  gp_trace_config *cfg = rc == 0 ? read_config(dir) : NULL;
  gp__tw *w = NULL;
  uint64_t whole = 0;
  char comm[sizeof(h->comm) + 1];
  memcpy(comm, h->comm, sizeof(h->comm));
  comm[sizeof(h->comm)] = '\0';
  if (rc == 0 && !cfg)
    rc = GP_ENOMEM;
  if (rc == 0)
    rc = settle_delivery(m, (gp__death_page *)m, part);
  /* After the part's last whole packet (a write cut by the death may
   * have left half of one). */
  if (rc == 0 && (rc = part_whole(part, &whole)) == 0 &&
      (ftruncate(part, (off_t)whole) != 0 ||
       lseek(part, (off_t)whole, SEEK_SET) < 0))
    rc = -errno;
  if (rc == 0) {
    gp__tw_context ctx = {.string = ctx_string,
                          .intern = ctx_intern,
                          .device_count = ctx_device_count,
                          .device_info = ctx_device_info,
                          .device_queue = ctx_device_queue,
                          .user = &v,
                          .process_name = comm};
    gp__tw_options o;
    gp__session_writer_options(cfg, SALVAGE_SEQ_BIT | seq, part, false, &o);
    o.counters = false;      /* their catalogs were the dead process's */
    o.host_identity = false; /* the part has it */
    o.ctx = &ctx;
    o.pid = (uint32_t)h->pid;
    if ((rc = gp__tw_create(&o, &w)) == 0) {
      salvage_queued(w, m, h, salvaged); /* the older records first */
      salvage_cells(w, m, h, salvaged);
      rc = *salvaged ? gp__tw_finish(w) : 0;
      gp__tw_destroy(w);
    }
    /* Written, but the page did not hold up everywhere: said, and the
     * records that could be trusted are kept. */
    if (rc == 0 && v.damaged)
      rc = GP_EDAMAGED_PAGE;
  }
  gp_trace_config_destroy(cfg);
  sv_free(&v);
  return rc;
}

/* See session.h. */
int gp_record_salvage(const char *dir, uint32_t seq, uint64_t *salvaged) {
  if (!dir || !salvaged || seq == 0 || seq >= SALVAGE_SEQ_BIT)
    return GP_EINVAL;
  *salvaged = 0;
  char path[4200];
  snprintf(path, sizeof(path), "%s/%u.open", dir, seq);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct stat st;
  int rc = GP_ECORRUPT;
  uint8_t *m = MAP_FAILED;
  size_t size = 0;
  if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= sizeof(gp__death_page)) {
    size = (size_t)st.st_size;
    /* Private: the cell fixed up by settle_delivery() is our business. */
    m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  }
  const gp__death_page *h = m != MAP_FAILED ? (const gp__death_page *)m : NULL;
  if (!h || memcmp(h->magic, GP_DEATH_MAGIC, 8) != 0) {
    rc = h || st.st_size == 0 ? GP_ENOENT : GP_ECORRUPT;
  } else if (h->reserved != 0 || h->area_size == 0 || h->buf_size == 0) {
    rc = GP_ENOENT; /* salvaged already, or nothing to salvage from */
  } else {
    snprintf(path, sizeof(path), "%s/%u.pftrace", dir, seq);
    int part = open(path, O_RDWR | O_CLOEXEC);
    if (part < 0) {
      rc = -errno;
    } else {
      rc = salvage_into(dir, seq, m, size, part, salvaged);
      if (close(part) != 0 && rc == 0)
        rc = -errno;
      /* Noted whatever happened: a second try would write them twice.
       * Records that may not have been written whole stay counted lost. */
      if (rc == GP_EDAMAGED_PAGE)
        rc = GP_ECORRUPT; /* the records that could be trusted are in */
      else if (rc != 0)
        *salvaged = 0;
      uint32_t done = 1;
      uint64_t n = h->salvaged + *salvaged, w = h->written;
      if (pwrite(fd, &done, sizeof(done), offsetof(gp__death_page, reserved)) !=
              sizeof(done) ||
          pwrite(fd, &n, sizeof(n), offsetof(gp__death_page, salvaged)) !=
              sizeof(n) ||
          pwrite(fd, &w, sizeof(w), offsetof(gp__death_page, written)) !=
              sizeof(w))
        rc = rc ? rc : -errno;
    }
  }
  if (m != MAP_FAILED)
    munmap(m, size);
  close(fd);
  return rc;
}
