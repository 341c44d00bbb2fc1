/*
 * activity_lttng.h - the LTTng-UST tracepoint bench/activity compares a
 * gpuperf record with: one event carrying what a MARKER record carries
 * most of (an id, a name id, a thread id). Read twice by lttng-ust's
 * macros (LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ), hence no plain guard.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER gpuperf_bench
#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "activity_lttng.h"

#if !defined(GP_BENCH_ACTIVITY_LTTNG_H) ||                                     \
    defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define GP_BENCH_ACTIVITY_LTTNG_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    gpuperf_bench, marker,
    LTTNG_UST_TP_ARGS(uint64_t, id, uint32_t, name_id, uint32_t, tid),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, id, id)
                            lttng_ust_field_integer(uint32_t, name_id, name_id)
                                lttng_ust_field_integer(uint32_t, tid, tid)))

#endif

#include <lttng/tracepoint-event.h>
