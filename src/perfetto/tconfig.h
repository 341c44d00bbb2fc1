/*
 * tconfig.h - trace configs that arrive encoded (internal; the public
 * side of tconfig.c is in gpuperf/session.h).
 */
#ifndef GPUPERF_PERFETTO_TCONFIG_H
#define GPUPERF_PERFETTO_TCONFIG_H

#include <stddef.h>
#include <stdint.h>

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

#endif /* GPUPERF_PERFETTO_TCONFIG_H */
