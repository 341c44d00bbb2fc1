/*
 * calls.c - API records of OpenCL calls, and the records of host waits.
 *
 * Each wrapped call reads the trace clock on entry and on exit and writes
 * one API record (domain GP_API_DOMAIN_OPENCL, cbid = the call's row in
 * cl_api.h) with the call's correlation id; an enqueue's command carries
 * the same id. The first record a thread writes is preceded by a NAME
 * record with the thread's name, and the first of the process by one with
 * the process's name. When no kind we write is collected, a call costs a
 * few relaxed loads on top of the driver's own work.
 */
#include <errno.h>
#include <string.h>

#include "oclInt.h"

static _Atomic bool process_named;

GP_TLS gp__ocl_caller gp__ocl_me;
_Atomic uint32_t gp__ocl_call_name_ids[GP_CL_ID_COUNT];
static pthread_once_t my_once = PTHREAD_ONCE_INIT;

/* In a fork's child, the one thread is the one that forked. */
static void my_ids_forget(void) {
  gp__ocl_me.pid = 0;
}

static void my_ids_init(void) {
  pthread_atfork(NULL, NULL, my_ids_forget);
}

static void my_ids_read(void) {
  pthread_once(&my_once, my_ids_init);
  gp__ocl_me.pid = GP_CORE->pid();
  gp__ocl_me.tid = GP_CORE->tid();
}

/* See oclInt.h. */
bool gp__ocl_recording(void) {
  return GP_CORE->activity_enabled(GP_ACTIVITY_KIND_API, 0) ||
         gp__ocl_cb_on(GP_CORE) ||
         GP_CORE->activity_enabled(GP_ACTIVITY_KIND_KERNEL, 0) ||
         GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MEMCPY, 0) ||
         GP_CORE->activity_enabled(GP_ACTIVITY_KIND_MEMSET, 0) ||
         GP_CORE->activity_enabled(GP_ACTIVITY_KIND_SYNCHRONIZATION, 0);
}

static void name_thread(void) {
  gp__ocl_me.named = true;
  if (!atomic_exchange(&process_named, true))
    GP_CORE->emit_name(GP_OBJECT_PROCESS, 0, 0, 0, 0,
                       program_invocation_short_name);
  char name[32] = "";
  pthread_getname_np(pthread_self(), name, sizeof(name));
  GP_CORE->emit_name(GP_OBJECT_THREAD, 0, 0, 0, GP_CORE->tid(), name);
}

/* See oclInt.h. */
void gp__ocl_call_begin(gp__ocl_call *c, uint32_t id, bool want_corr) {
  gp__ocl_call_begin_api(c, id, want_corr,
                         GP_CORE->activity_enabled(GP_ACTIVITY_KIND_API, 0));
}

/* See oclInt.h. */
void gp__ocl_call_enter(gp__ocl_call *c, uint32_t context, uint32_t stream) {
  if (GP_UNLIKELY(gp__ocl_me.pid == 0))
    my_ids_read();
  c->cbc.d = (gp_callback_api_data){.api_domain = GP_API_DOMAIN_OPENCL,
                                    .cbid = c->id,
                                    .function_name = gp__ocl_call_name(c->id),
                                    .correlation_id = c->corr,
                                    .context_id = context,
                                    .stream_id = stream,
                                    .thread_id = gp__ocl_me.tid};
  GP_CORE->callback_api(&c->cbc, GP_CALLBACK_SITE_ENTER, 0);
}

/* See oclInt.h. */
void gp__ocl_call_exit(gp__ocl_call *c, int32_t rv) {
  c->cb = false; /* once */
  GP_CORE->callback_api(&c->cbc, GP_CALLBACK_SITE_EXIT, rv);
}

/* See oclInt.h. */
void gp__ocl_call_end_at(gp__ocl_call *c, int32_t rv, uint64_t end) {
  if (GP_UNLIKELY(c->cb))
    gp__ocl_call_exit(c, rv);
  if (!c->api)
    return;
  if (GP_UNLIKELY(!gp__ocl_me.named))
    name_thread();
  uint32_t name_id =
      atomic_load_explicit(&gp__ocl_call_name_ids[c->id], memory_order_relaxed);
  if (GP_UNLIKELY(name_id == 0)) {
    name_id = GP_CORE->string_intern(gp__ocl_call_name(c->id));
    atomic_store_explicit(&gp__ocl_call_name_ids[c->id], name_id,
                          memory_order_relaxed);
  }
  if (GP_UNLIKELY(gp__ocl_me.pid == 0))
    my_ids_read();
  gp__ocl_api_record(GP_CORE, c, rv, end, name_id);
}

/* See oclInt.h. */
void gp__ocl_call_end(gp__ocl_call *c, int32_t rv) {
  if (c->api || c->cb)
    gp__ocl_call_end_at(c, rv, gp_get_timestamp());
}

/* See oclInt.h. */
void gp__ocl_emit_sync(const gp__ocl_call *c, uint64_t end, uint32_t sync_kind,
                       uint32_t device_id, uint32_t context_id,
                       uint32_t stream_id, uint64_t wait_id) {
  if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_SYNCHRONIZATION, context_id))
    return;
  gp_activity_sync *r = GP_CORE->activity_reserve(
      GP_ACTIVITY_KIND_SYNCHRONIZATION, sizeof(*r), context_id, stream_id);
  if (!r)
    return;
  r->correlation_id = c->corr;
  r->start = c->start;
  r->end = end;
  r->wait_id = wait_id;
  r->sync_kind = sync_kind;
  r->device_id = device_id;
  r->context_id = context_id;
  r->stream_id = stream_id;
  r->event_id = 0;
  r->reserved0 = 0;
  GP_CORE->activity_commit(r);
}
