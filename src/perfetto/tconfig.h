/*
 * tconfig.h - trace configs that arrive encoded (internal; the public
 * side of tconfig.c is in gpuperf/session.h).
 */
#ifndef GPUPERF_PERFETTO_TCONFIG_H
#define GPUPERF_PERFETTO_TCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpuperf/counters.h"
#include "gpuperf/session.h"

/*
 * Makes a config of one data source from p[0..n), a DataSourceConfig in
 * the protobuf binary format (as Perfetto's service sends it to a
 * producer): read against the same schema and checked by the same code
 * as the text format, so both mean the same. Fields gpuperf does not use
 * are ignored. Returns 0 and the config in *out (destroy it with
 * gp_trace_config_destroy), GP_ECORRUPT for bytes that are not a
 * well-formed message, GP_EPARSE for a config gpuperf refuses (err says
 * why), GP_EINVAL, GP_ENOMEM.
 */
int gp__trace_config_from_source(const uint8_t *p, size_t n,
                                 gp_trace_config **out, char *err,
                                 size_t err_size);

/*
 * Whether a data source's vendor suffix names device di: the suffix equals,
 * ignoring case, the device's vendor or one word of it (words are runs of
 * letters and digits: "nvidia" names "NVIDIA Corporation", "v3d" a DRM
 * card whose driver is v3d, "broadcom" the simulated V3D of vendor
 * "Broadcom (simulated)"). The device's name, model and architecture are
 * not looked at. The suffix "gpuperf" names gpuperf itself (its producer
 * registers gpu.counters.gpuperf) and so every device.
 */
bool gp__vendor_suffix_matches(const char *suffix, const gp_device_info *di);

/*
 * Whether the config asks for the records of code and devices in its
 * trace (gpuperf_options { code_objects: true }): MODULE, FUNCTION and
 * DEVICE_ATTRIBUTE. Off by default: what they add to a trace (instants on
 * process tracks, GpuInfo extra_info) has not been read by Perfetto's own
 * trace processor yet (docs/activity.md).
 */
bool gp__trace_config_code_objects(const gp_trace_config *c);

/*
 * Whether the config asks for the source-level records in its trace
 * (gpuperf_options { source_level: true }): SOURCE_LOCATOR, GLOBAL_ACCESS,
 * SHARED_ACCESS, BRANCH and INSTRUCTION_EXECUTION, as instants with their
 * counts (writer_source.c). Off by default: a kernel launch can bring a
 * dozen.
 */
bool gp__trace_config_source_level(const gp_trace_config *c);

/*
 * The index of the data source of kind `kind` (GP_DATA_SOURCE_GPU_COUNTERS
 * or GP_DATA_SOURCE_GPU_RENDERSTAGES) of c that applies to device di: one
 * whose vendor suffix names it, else one without a suffix (or the suffix
 * "gpuperf"). -1 when none does: the device takes no part in that data
 * source (counters: no samples, no environment readings; render stages:
 * none of its GPU work is written).
 */
int gp__trace_config_source_for(const gp_trace_config *c, uint32_t kind,
                                const gp_device_info *di);

#endif /* GPUPERF_PERFETTO_TCONFIG_H */
