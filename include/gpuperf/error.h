/*
 * gpuperf/error.h - error codes shared by every gpuperf function.
 *
 * Functions that act return int: 0 on success or a negative code. Codes that
 * mean the same thing as an errno value use the negated errno value, so a
 * system failure can be passed through unchanged (-errno) and still be
 * printed by gp_strerror(). Codes with no errno equivalent live at -3000 and
 * below. One table, GP_ERROR_MAP, generates the enum, gp_strerror() and
 * gp_error_name().
 */
#ifndef GPUPERF_ERROR_H
#define GPUPERF_ERROR_H

#include <errno.h>

#include "gpuperf/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message) */
#define GP_ERROR_MAP(X)                                                        \
  X(EINVAL, -EINVAL, "invalid argument")                                       \
  X(ENOMEM, -ENOMEM, "out of memory")                                          \
  X(ENOENT, -ENOENT, "no such entry")                                          \
  X(EAGAIN, -EAGAIN, "not ready yet, try again")                               \
  X(EBUSY, -EBUSY, "resource busy")                                            \
  X(EEXIST, -EEXIST, "already exists")                                         \
  X(ERANGE, -ERANGE, "value out of range")                                     \
  X(ENOSPC, -ENOSPC, "no space left")                                          \
  X(ENODEV, -ENODEV, "no such device")                                         \
  X(ENOTSUP, -ENOTSUP, "operation not supported")                              \
  X(ETIMEDOUT, -ETIMEDOUT, "timed out")                                        \
  X(EIO, -EIO, "input/output error")                                           \
  X(EPERM, -EPERM, "operation not permitted")                                  \
  X(EKIND, -3000, "unknown activity kind")                                     \
  X(ESIZE, -3001, "value size too small")                                      \
  X(EEND, -3002, "no more records")                                            \
  X(ESTATE, -3003, "operation not valid in the current state")                 \
  X(ECORRUPT, -3004, "corrupt or truncated input")                             \
  X(EPARSE, -3005, "syntax error")                                             \
  X(ENOCOUNTER, -3006, "unknown counter")                                      \
  X(ECAPACITY, -3007, "too many counters for the hardware")                    \
  X(ESQL, -3008, "SQL error")                                                  \
  X(ENOCALLBACK, -3009, "no buffer callbacks registered")

typedef enum gp_error {
  GP_OK = 0,
#define GP__ERR_ENUM(name, value, msg) GP_##name = (value),
  GP_ERROR_MAP(GP__ERR_ENUM)
#undef GP__ERR_ENUM
} gp_error;

/*
 * Returns a static, human-readable message for err: one of ours, or
 * strerror() of -err for any other negative errno value. Never NULL.
 */
GP_EXPORT const char *gp_strerror(int err);

/*
 * Returns the symbolic name of err ("GP_EINVAL"), "GP_OK" for 0, or
 * "GP_UNKNOWN" for a code that is not in the table. Never NULL.
 */
GP_EXPORT const char *gp_error_name(int err);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_ERROR_H */
