/*
 * seqfence.h - the fence of the core's sequence locks (clock.c,
 * clock_device.c): they order their relaxed data accesses with fences.
 * GCC's ThreadSanitizer does not support atomic_thread_fence: in a TSan
 * build a read-modify-write of a word of our own stands in for it (a full
 * barrier on the machines we build for; TSan itself sees only atomics
 * here, which never race).
 */
#ifndef GPUPERF_CORE_SEQFENCE_H
#define GPUPERF_CORE_SEQFENCE_H

#include <stdatomic.h>

#if defined(__SANITIZE_THREAD__)
static atomic_uint gp__seq_fence_word;
#define SEQ_FENCE(order)                                                       \
  atomic_fetch_add_explicit(&gp__seq_fence_word, 0, order)
#else
#define SEQ_FENCE(order) atomic_thread_fence(order)
#endif

#endif /* GPUPERF_CORE_SEQFENCE_H */
