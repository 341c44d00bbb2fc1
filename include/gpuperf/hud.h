/*
 * gpuperf/hud.h - GPUPERF_HUD, the live display of counters that any
 * program loading libgpuperf.so shows (docs/counters.md, "The HUD").
 *
 * The HUD starts by itself when the library is loaded, from the
 * environment: GPUPERF_HUD names the counters to show (or is "help"),
 * GPUPERF_HUD_PERIOD_MS and GPUPERF_HUD_FILE shape it. A program that
 * starts other programs for them to be watched, as the gpuperf command
 * line does for `record` and `stat`, keeps the HUD to those programs by
 * defining, with default visibility so that the dynamic linker sees it,
 *
 *     GP_EXPORT const int gp_hud_at_load = 0;
 *
 * which the library reads, through a weak reference, before it acts on
 * GPUPERF_HUD (programs that do not define it are unaffected). Such a
 * program may still show the HUD for itself with gp_hud_start_from_env().
 */
#ifndef GPUPERF_HUD_H
#define GPUPERF_HUD_H

#include <stdio.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by a program that starts the HUD itself (see above); never by
 * the library, which only reads it. */
GP_EXPORT extern const int gp_hud_at_load;

/*
 * Starts the HUD in this process from GPUPERF_HUD and its companions, as
 * loading the library does where the program does not define
 * gp_hud_at_load as 0. With GPUPERF_HUD=help, prints what
 * gp_hud_help_print() prints to stdout and exits with status 0 (1 if it
 * could not be written). Returns 0 once started, GP_ENOENT if GPUPERF_HUD
 * is not set, GP_EINVAL if it is malformed (after a message on stderr),
 * GP_ESTATE if the HUD already runs in this process, or GP_ENOSPC if the
 * buffers cannot be observed. Not thread-safe with itself.
 */
GP_EXPORT int gp_hud_start_from_env(void);

/*
 * Prints to out what GPUPERF_HUD=help shows: a line of help, then every
 * device this machine offers and its counters, as `gpuperf list` does
 * (the simulated GPUs, the host CPU and the DRM cards, registered in this
 * process, then the OpenCL and Vulkan devices their loaders report: see
 * GP_LIST_LOADERS). Returns 0, or what gp_device_list_print() returns.
 */
GP_EXPORT int gp_hud_help_print(FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_HUD_H */
