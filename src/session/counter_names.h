/*
 * counter_names.h - why a counter name is missing here
 * (counter_names.c), for the HUD and gp_counter_name_check().
 */
#ifndef GPUPERF_SESSION_COUNTER_NAMES_H
#define GPUPERF_SESSION_COUNTER_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Writes into why (size bytes) one line saying why name, a counter name
 * or glob no device has, is missing on this machine, when its family
 * tells (a hardware event of the CPU, a counter of DRM cards, of Vulkan
 * devices, a Utilization of a queue), and returns true; returns false,
 * why empty, when nothing can be said. With loaders, the OpenCL and
 * Vulkan loaders may be asked (counters/loaders.h: it initialises their
 * drivers in this process); without, only what this process knows.
 */
bool gp__counter_explain(const char *name, bool loaders, char *why,
                         size_t size);

#endif /* GPUPERF_SESSION_COUNTER_NAMES_H */
