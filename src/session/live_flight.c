/*
 * live_flight.c - launches in flight, for `gpuperf top` (live.c): GPU
 * launches the program has enqueued and whose work is not reported yet.
 *
 * An OpenCL launch shows twice in the records: at once as its API record
 * (clEnqueueNDRangeKernel, clEnqueueTask, clEnqueueNativeKernel, with
 * the launch's correlation id), and as work (a KERNEL record with the
 * same id) only once it has completed and the backend has written it,
 * which PoCL may do many seconds later, when the program waits for the
 * queue. A launch is in flight between the two. The API record normally
 * comes first; a kernel that comes before its launch is remembered (the
 * latest 2 x DONE_MAX of them) so that its launch is not taken as in
 * flight. Failed calls launch nothing and are left out.
 *
 * A launch whose record never comes (dropped records) would stay in
 * flight: all are forgotten when dropped KERNEL records are reported
 * (which ones is not known), and each after FLIGHT_FORGET_NS. The table
 * holds FLIGHT_SLOTS launches; more are not counted.
 *
 * Everything here runs under live.c's lock.
 */
#include <string.h>

#include "sessionInt.h"

#define FLIGHT_SLOTS 16384
#define FLIGHT_FORGET_NS 600000000000ull /* 10 min */
#define DONE_MAX 4096 /* kernels before their launch, per generation */

/* A launch in flight: correlation id (0: empty) and enqueue time. */
typedef struct flight {
  uint64_t corr, since;
} flight;

/* A set of correlation ids (open addressing; 0: empty). */
typedef struct idset {
  uint64_t v[DONE_MAX * 2];
  uint32_t n;
} idset;

static struct {
  flight fl[FLIGHT_SLOTS];
  uint32_t n;
  idset done[2]; /* kernels seen before their launch: newest first */
  uint32_t launch_names[8], other_names[32]; /* API name ids told apart */
} st;

static size_t hash64(uint64_t key, size_t mask) {
  key ^= key >> 29;
  key *= 0x9e3779b97f4a7c15ull;
  return (size_t)(key >> 40) & mask;
}

static bool idset_has(const idset *s, uint64_t id) {
  for (size_t i = hash64(id, DONE_MAX * 2 - 1);;
       i = (i + 1) & (DONE_MAX * 2 - 1)) {
    if (s->v[i] == id)
      return true;
    if (s->v[i] == 0)
      return false;
  }
}

/* Notes a kernel whose launch was not seen (yet): two generations of at
 * most DONE_MAX each, the older dropped when the newer is full. */
static void done_add(uint64_t id) {
  idset *s = &st.done[0];
  if (s->n == DONE_MAX) {
    st.done[1] = st.done[0];
    memset(s, 0, sizeof(*s));
  }
  size_t i = hash64(id, DONE_MAX * 2 - 1);
  while (s->v[i] && s->v[i] != id)
    i = (i + 1) & (DONE_MAX * 2 - 1);
  if (!s->v[i]) {
    s->v[i] = id;
    s->n++;
  }
}

/* The slot of launch corr, or the empty slot where it would go; NULL
 * when the table is full. */
static flight *slot_of(uint64_t corr) {
  size_t i = hash64(corr, FLIGHT_SLOTS - 1);
  for (size_t probe = 0; probe < FLIGHT_SLOTS;
       probe++, i = (i + 1) & (FLIGHT_SLOTS - 1))
    if (st.fl[i].corr == corr || st.fl[i].corr == 0)
      return &st.fl[i];
  return NULL;
}

/* Removes the launch in slot i, moving the entries after it back so that
 * every entry stays reachable from its hash (linear probing). */
static void remove_at(size_t i) {
  size_t j = i;
  st.fl[i].corr = 0;
  st.n--;
  for (;;) {
    j = (j + 1) & (FLIGHT_SLOTS - 1);
    if (st.fl[j].corr == 0)
      return;
    size_t h = hash64(st.fl[j].corr, FLIGHT_SLOTS - 1);
    /* Entry j stays unless its home lies outside (i, j]. */
    bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
    if (!stays) {
      st.fl[i] = st.fl[j];
      st.fl[j].corr = 0;
      i = j;
    }
  }
}

/* Whether an API call launched a kernel that will have a KERNEL record:
 * the OpenCL launches, told by name once per name id. */
static bool is_launch(const gp_activity_api *a) {
  if (a->domain != GP_API_DOMAIN_OPENCL || a->return_value != 0 || !a->name_id)
    return false;
  for (size_t i = 0; i < GP_ARRAY_SIZE(st.launch_names); i++)
    if (st.launch_names[i] == a->name_id)
      return true;
  for (size_t i = 0; i < GP_ARRAY_SIZE(st.other_names); i++)
    if (st.other_names[i] == a->name_id)
      return false;
  const char *n = gp_activity_string(a->name_id);
  bool launch =
      n && (!strcmp(n, "clEnqueueNDRangeKernel") ||
            !strcmp(n, "clEnqueueTask") || !strcmp(n, "clEnqueueNativeKernel"));
  uint32_t *cache = launch ? st.launch_names : st.other_names;
  size_t size =
      launch ? GP_ARRAY_SIZE(st.launch_names) : GP_ARRAY_SIZE(st.other_names);
  memmove(cache + 1, cache, (size - 1) * sizeof(*cache));
  cache[0] = a->name_id;
  return launch;
}

/* See sessionInt.h. */
void gp__flight_reset(bool all) {
  memset(st.fl, 0, sizeof(st.fl));
  st.n = 0;
  if (all)
    memset(st.done, 0, sizeof(st.done));
}

/* See sessionInt.h. */
void gp__flight_api(const gp_activity_api *a) {
  if (!a->correlation_id || !is_launch(a))
    return;
  if (idset_has(&st.done[0], a->correlation_id) ||
      idset_has(&st.done[1], a->correlation_id))
    return; /* its kernel came first */
  flight *f = slot_of(a->correlation_id);
  if (!f || f->corr)
    return; /* full (not counted), or seen already */
  *f = (flight){a->correlation_id, a->start};
  st.n++;
}

/* See sessionInt.h. */
void gp__flight_done(uint64_t corr) {
  if (!corr)
    return;
  flight *f = st.n ? slot_of(corr) : NULL;
  if (f && f->corr == corr)
    remove_at((size_t)(f - st.fl));
  else
    done_add(corr);
}

/* See sessionInt.h. */
uint32_t gp__flight_count(uint64_t now, uint64_t *oldest) {
  uint64_t since = UINT64_MAX;
  for (size_t i = 0; st.n && i < FLIGHT_SLOTS; i++) {
    const flight *f = &st.fl[i];
    if (!f->corr)
      continue;
    if (now > f->since && now - f->since > FLIGHT_FORGET_NS) {
      remove_at(i);
      i--; /* an entry may have moved into slot i */
      continue;
    }
    if (f->since < since)
      since = f->since;
  }
  *oldest = st.n ? since : 0;
  return st.n;
}
