/*
 * error.c - messages and names for gpuperf error codes.
 *
 * Both functions are generated from GP_ERROR_MAP in gpuperf/error.h, so a
 * code added there is named and described everywhere at once.
 */
#include <string.h>

#include "gpuperf/error.h"
#include "gpuperf/gpuperf.h"

/* See error.h. */
const char *gp_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
#define GP__ERR_MSG(name, value, msg)                                          \
  case (value):                                                                \
    return msg;
    GP_ERROR_MAP(GP__ERR_MSG)
#undef GP__ERR_MSG
  default:
    break;
  }
  /* Some other -errno passed through from the system. */
  if (err < 0 && err > -4096)
    return strerror(-err);
  return "unknown error";
}

/* See error.h. */
const char *gp_error_name(int err) {
  switch (err) {
  case 0:
    return "GP_OK";
#define GP__ERR_NAME(name, value, msg)                                         \
  case (value):                                                                \
    return "GP_" #name;
    GP_ERROR_MAP(GP__ERR_NAME)
#undef GP__ERR_NAME
  default:
    return "GP_UNKNOWN";
  }
}

/* See gpuperf.h. */
const char *gp_version(void) {
  return GP_VERSION_STRING;
}
