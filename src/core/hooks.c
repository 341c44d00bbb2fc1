/*
 * hooks.c - the core's only way up: a hook the layer above installs.
 *
 * The core sits at the bottom (libc and the public headers), but backends
 * and markers must tell the session layer that a process begins GPU work,
 * so that a recorded process joins its recording then and not when it
 * loads the library. Rather than call src/session, the core owns a hook
 * that src/session fills in at load time (see core.h, gp__activate).
 * The counters layer's derived windows learn in the same way when a flush
 * has delivered what was committed before it (settle hooks), and a
 * library that draws the HUD in a window reaches the HUD's values (HUD
 * hooks).
 */
#include <stdatomic.h>
#include <stddef.h>

#include "core.h"

static _Atomic(gp__activate_hook) activate_hook;
static _Atomic(gp__finalize_hook) finalize_hook;

/* See core.h. */
void gp__activate(void) {
  gp__activate_hook h =
      atomic_load_explicit(&activate_hook, memory_order_acquire);
  if (GP_UNLIKELY(h != NULL))
    h();
}

/* See core.h. */
void gp__activate_set_hook(gp__activate_hook hook) {
  atomic_store_explicit(&activate_hook, hook, memory_order_release);
}

/* See core.h. */
void gp__finalize_set_hook(gp__finalize_hook hook) {
  atomic_store_explicit(&finalize_hook, hook, memory_order_release);
}

/* See core.h. */
void gp__finalizing(void) {
  gp__finalize_hook h =
      atomic_load_explicit(&finalize_hook, memory_order_acquire);
  if (h)
    h();
}

#define MAX_SETTLE_HOOKS 4
static _Atomic(gp__settle_hook) settle_hooks[MAX_SETTLE_HOOKS];

/* See core.h. */
int gp__activity_add_settle_hook(gp__settle_hook hook) {
  for (int i = 0; i < MAX_SETTLE_HOOKS; i++) {
    gp__settle_hook none = NULL;
    if (atomic_load(&settle_hooks[i]) == hook ||
        atomic_compare_exchange_strong(&settle_hooks[i], &none, hook))
      return 0;
  }
  return GP_ENOSPC;
}

/* See core.h. */
void gp__settle(int phase) {
  for (int i = 0; i < MAX_SETTLE_HOOKS; i++) {
    gp__settle_hook h = atomic_load(&settle_hooks[i]);
    if (h)
      h(phase);
  }
}

static _Atomic(const gp__hud_hooks *) hud_hooks;

/* See core.h. */
void gp__hud_set_hooks(const gp__hud_hooks *hooks) {
  atomic_store_explicit(&hud_hooks, hooks, memory_order_release);
}

/* See core.h. */
int gp__hud_view(struct gp_hud_view *view) {
  const gp__hud_hooks *h =
      atomic_load_explicit(&hud_hooks, memory_order_acquire);
  return h ? h->view(view) : GP_ENOENT;
}

/* See core.h. */
void gp__hud_feed(uint32_t what, uint64_t t_ns, double value) {
  const gp__hud_hooks *h =
      atomic_load_explicit(&hud_hooks, memory_order_acquire);
  if (h)
    h->feed(what, t_ns, value);
}
