/*
 * gpuperf/markers.h - user markers and ranges, in the manner of NVTX.
 *
 * A program marks instants and ranges of its own work; each becomes a
 * MARKER record (when that kind is enabled) and, for push/pop ranges, the
 * thread's current range stack is what the counter filters test activity
 * against ("instrument kernels inside a 'training*' range"). The stack is
 * kept even when MARKER records are disabled.
 *
 * domain may be NULL for the default domain. Strings are copied.
 */
#ifndef GPUPERF_MARKERS_H
#define GPUPERF_MARKERS_H

#include <stdint.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Deepest push/pop nesting kept per thread; deeper pushes fail. */
#define GP_RANGE_MAX_DEPTH 64

/*
 * What a marker or range can carry besides its name, as NVTX's event
 * attributes do: a colour, a category, a payload. Given to the *_ex calls;
 * each becomes a MARKER_DATA record (CUPTI's CUpti_ActivityMarkerData)
 * just before the marker's MARKER record, with the same id, and args of
 * the marker's slice in a trace ("debug.color", "debug.category",
 * "debug.payload").
 */
typedef enum gp_marker_payload_kind {
  GP_MARKER_PAYLOAD_NONE = 0,
  GP_MARKER_PAYLOAD_UINT64 = 1,
  GP_MARKER_PAYLOAD_INT64 = 2,
  GP_MARKER_PAYLOAD_DOUBLE = 3
} gp_marker_payload_kind;

/* A payload's value, by its gp_marker_payload_kind. */
typedef union gp_marker_payload {
  uint64_t u64;
  int64_t i64;
  double f64;
} gp_marker_payload;

#define GP_MARKER_ATTR_COLOR (1u << 0)    /* color is set */
#define GP_MARKER_ATTR_CATEGORY (1u << 1) /* category is set */

typedef struct gp_marker_attrs {
  uint32_t flags;        /* GP_MARKER_ATTR_* */
  uint32_t color;        /* 0xAARRGGBB, with GP_MARKER_ATTR_COLOR */
  uint32_t category;     /* with GP_MARKER_ATTR_CATEGORY */
  uint32_t payload_kind; /* gp_marker_payload_kind */
  gp_marker_payload payload;
} gp_marker_attrs;

/* Marks an instant. Returns GP_EINVAL if name is NULL. */
GP_EXPORT int gp_marker_instant(const char *domain, const char *name);

/*
 * Opens a range on the calling thread's stack. Returns 0, GP_EINVAL if name
 * is NULL, GP_ENOSPC past GP_RANGE_MAX_DEPTH (nothing pushed).
 */
GP_EXPORT int gp_range_push(const char *domain, const char *name);

/* Closes the innermost range of the calling thread. GP_ESTATE if none. */
GP_EXPORT int gp_range_pop(void);

/*
 * Starts a range that may end on another thread and does not nest; stores
 * its id in *range_id. Returns GP_EINVAL for NULL name or range_id.
 */
GP_EXPORT int gp_range_start(const char *domain, const char *name,
                             uint64_t *range_id);

/* Ends a range started with gp_range_start(). GP_ENOENT if not open. */
GP_EXPORT int gp_range_end(uint64_t range_id);

/*
 * gp_marker_instant, gp_range_push and gp_range_start with attributes
 * (attrs may be NULL: none). GP_EINVAL also for an unknown payload kind or
 * flag.
 */
GP_EXPORT int gp_marker_instant_ex(const char *domain, const char *name,
                                   const gp_marker_attrs *attrs);
GP_EXPORT int gp_range_push_ex(const char *domain, const char *name,
                               const gp_marker_attrs *attrs);
GP_EXPORT int gp_range_start_ex(const char *domain, const char *name,
                                const gp_marker_attrs *attrs,
                                uint64_t *range_id);

/*
 * Returns the depth of the calling thread's push/pop stack, and stores up to
 * cap string ids of its ranges, outermost first, in ids (may be NULL).
 */
GP_EXPORT uint32_t gp_range_stack(uint32_t *ids, uint32_t cap);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_MARKERS_H */
