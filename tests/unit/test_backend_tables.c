/*
 * test_backend_tables.c - the tables through which libraries outside
 * libgpuperf.so (the OpenCL preload, the CUDA injection library) reach the
 * process's one core and its counters: which versions and sizes they are
 * handed out for, and that the entries are the functions themselves.
 */
#include <stddef.h>

#include "core/backend.h"
#include "counters/backend.h"
#include "harness.h"

TEST(backend_tables_by_version_and_size) {
  const size_t v2 = offsetof(gp_backend_ops, activity_remove_flush_hook);
  const gp_backend_ops *c =
      gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, sizeof(*c));
  ASSERT_NOT_NULL(c);
  ASSERT_EQ(c->version, GP_BACKEND_INTERFACE_VERSION);
  ASSERT_EQ(c->size, sizeof(*c));
  /* (Reserve and commit are inline in the library; the table holds their
   * out-of-line copies.) */
  ASSERT(c->activity_reserve == gp__activity_reserve_out);
  ASSERT(c->activity_commit == gp__activity_commit_out);
  ASSERT(c->activate == gp__activate);
  ASSERT(c->activity_add_drops == gp__activity_add_drops);
  ASSERT(c->glob_match == gp__glob_match);
  ASSERT(c->activity_work_in_flight == gp__activity_work_in_flight);
  ASSERT(c->hud_view == gp__hud_view);
  ASSERT(c->hud_feed == gp__hud_feed);
  ASSERT(c->death_in_handler == gp__death_in_handler);
  ASSERT(c->death_point == gp__death_point);
  /* A library built for version 2 gets the same table, and reads the
   * prefix it knows. */
  ASSERT(gp_backend_interface(2, v2) == c);
  const size_t v3 = offsetof(gp_backend_ops, activity_work_in_flight);
  ASSERT(gp_backend_interface(3, v3) == c);
  /* Version 5 ended before the HUD's entries (version 6). */
  const size_t v5 = offsetof(gp_backend_ops, hud_view);
  ASSERT(gp_backend_interface(5, v5) == c);
  ASSERT(gp_backend_interface(5, sizeof(*c)) == NULL);
  ASSERT(gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, v5) == NULL);
  /* Version 6 ended before the death entries (version 7). */
  const size_t v6 = offsetof(gp_backend_ops, death_in_handler);
  ASSERT(gp_backend_interface(6, v6) == c);
  ASSERT(gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, v6) == NULL);
  /* Anything else is another build. */
  ASSERT(gp_backend_interface(2, sizeof(*c)) == NULL);
  ASSERT(gp_backend_interface(GP_BACKEND_INTERFACE_VERSION, v2) == NULL);
  ASSERT(gp_backend_interface(1, v2) == NULL);
  ASSERT(gp_backend_interface(GP_BACKEND_INTERFACE_VERSION + 1,
                              sizeof(*c) + 8) == NULL);

  const gp_counters_backend_ops *k =
      gp_counters_backend_interface(GP_COUNTERS_BACKEND_VERSION, sizeof(*k));
  ASSERT_NOT_NULL(k);
  ASSERT(k->counters_register == gp__counters_register);
  ASSERT(k->counter_emit == gp__counter_emit);
  ASSERT(k->sampler_instrument == gp__sampler_instrument);
  ASSERT(gp_counters_backend_interface(GP_COUNTERS_BACKEND_VERSION,
                                       sizeof(*k) - 8) == NULL);
  ASSERT(gp_counters_backend_interface(GP_COUNTERS_BACKEND_VERSION + 1,
                                       sizeof(*k)) == NULL);
}
