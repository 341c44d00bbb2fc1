/*
 * gpuperf/gpuperf.h - umbrella header: the whole public C API.
 *
 * gpuperf records what GPUs did (kernels, copies, fills, API calls, user
 * ranges) and what their counters said, through one stream of activity
 * records modelled on CUPTI's activity API.
 */
#ifndef GPUPERF_GPUPERF_H
#define GPUPERF_GPUPERF_H

#include "gpuperf/activity.h"
#include "gpuperf/clock.h"
#include "gpuperf/counters.h"
#include "gpuperf/drm.h"
#include "gpuperf/error.h"
#include "gpuperf/hud.h"
#include "gpuperf/live.h"
#include "gpuperf/markers.h"
#include "gpuperf/perfmon.h"
#include "gpuperf/session.h"
#include "gpuperf/callback.h"
#include "gpuperf/sim.h"

#define GP_VERSION_MAJOR 0
#define GP_VERSION_MINOR 1
#define GP_VERSION_PATCH 0
#define GP_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* Returns GP_VERSION_STRING of the library actually loaded. */
GP_EXPORT const char *gp_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_GPUPERF_H */
