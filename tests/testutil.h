/*
 * testutil.h - helpers shared by tests: capturing delivered activity
 * records through the real buffer callbacks, and walking them.
 */
#ifndef GPUPERF_TESTS_TESTUTIL_H
#define GPUPERF_TESTS_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "gpuperf/gpuperf.h"

/*
 * Registers buffer callbacks that hand out malloc'ed buffers of
 * buffer_size bytes (max_records per buffer, 0 = no limit) and append
 * every completed record to an in-memory log. Records are copied, in
 * delivery order.
 */
void tu_capture(size_t buffer_size, size_t max_records);

/* Makes the completion callback sleep this long per buffer. */
void tu_capture_delay(unsigned us);

/* Makes the request callback decline (return no buffer) while on. */
void tu_capture_decline(int on);

/* The captured log: concatenated records, and its size in bytes. */
const uint8_t *tu_log(size_t *size);

/* Number of captured records of a kind (0: all kinds). */
size_t tu_count(uint32_t kind);

/* Number of buffers completed so far, and buffers requested. */
size_t tu_buffers_completed(void);
size_t tu_buffers_requested(void);

/* The i-th captured record of a kind, or NULL. */
const gp_activity *tu_find(uint32_t kind, size_t i);

/* Forgets everything captured so far. */
void tu_clear(void);

/* A one-dimensional grid or block of x. */
gp_sim_dim3 tu_dim(uint32_t x);

/* The id of counter name on device dev (asserts it exists). */
uint32_t tu_counter_id(uint32_t dev, const char *name);

/* A fixed, small kernel description for tests. */
gp_sim_kernel_desc tu_kernel_desc(const char *name, double flops, double bytes);

#endif /* GPUPERF_TESTS_TESTUTIL_H */
