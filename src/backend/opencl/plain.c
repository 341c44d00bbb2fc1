/*
 * plain.c - the wrappers of every call that needs nothing but its API
 * record (rows marked P in cl_api.h): generated from the table.
 *
 * Each forwards its arguments unchanged. The record's return value is the
 * call's cl_int result; for calls that return an object it is the error
 * code, which we ask the driver for through our own variable when the
 * program passed a NULL errcode_ret; for calls returning a plain pointer
 * it is 0, or CL_INVALID_VALUE for NULL. When no API record is wanted the
 * wrapper is a plain forward.
 */
#include "oclInt.h"

#define GP_CL_WRAP_INT(name, ret, params, args)                                \
  GP_CL_ENTRY ret CL_API_CALL name params {                                    \
    __typeof__(&name) real_ = GP_CL_REAL(name);                                \
    if (GP_UNLIKELY(!real_))                                                   \
      return CL_INVALID_OPERATION;                                             \
    if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_API, 0) &&                 \
        !gp__ocl_cb_on(GP_CORE))                                               \
      return real_ args;                                                       \
    gp__ocl_call c_;                                                           \
    gp__ocl_call_begin(&c_, GP_CL_ID_##name, false);                           \
    ret r_ = real_ args;                                                       \
    gp__ocl_call_end(&c_, r_);                                                 \
    return r_;                                                                 \
  }

#define GP_CL_WRAP_OBJ(name, ret, params, args)                                \
  GP_CL_ENTRY ret CL_API_CALL name params {                                    \
    __typeof__(&name) real_ = GP_CL_REAL(name);                                \
    if (GP_UNLIKELY(!real_)) {                                                 \
      if (errcode_ret)                                                         \
        *errcode_ret = CL_INVALID_OPERATION;                                   \
      return NULL;                                                             \
    }                                                                          \
    if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_API, 0) &&                 \
        !gp__ocl_cb_on(GP_CORE))                                               \
      return real_ args;                                                       \
    gp__ocl_call c_;                                                           \
    gp__ocl_call_begin(&c_, GP_CL_ID_##name, false);                           \
    cl_int err_ = CL_SUCCESS;                                                  \
    if (!errcode_ret)                                                          \
      errcode_ret = &err_;                                                     \
    ret r_ = real_ args;                                                       \
    gp__ocl_call_end(&c_, *errcode_ret);                                       \
    return r_;                                                                 \
  }

#define GP_CL_WRAP_PTR(name, ret, params, args)                                \
  GP_CL_ENTRY ret CL_API_CALL name params {                                    \
    __typeof__(&name) real_ = GP_CL_REAL(name);                                \
    if (GP_UNLIKELY(!real_))                                                   \
      return NULL;                                                             \
    if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_API, 0) &&                 \
        !gp__ocl_cb_on(GP_CORE))                                               \
      return real_ args;                                                       \
    gp__ocl_call c_;                                                           \
    gp__ocl_call_begin(&c_, GP_CL_ID_##name, false);                           \
    ret r_ = real_ args;                                                       \
    gp__ocl_call_end(&c_, r_ ? CL_SUCCESS : CL_INVALID_VALUE);                 \
    return r_;                                                                 \
  }

#define GP_CL_WRAP_VOID(name, ret, params, args)                               \
  GP_CL_ENTRY ret CL_API_CALL name params {                                    \
    __typeof__(&name) real_ = GP_CL_REAL(name);                                \
    if (GP_UNLIKELY(!real_))                                                   \
      return;                                                                  \
    if (!GP_CORE->activity_enabled(GP_ACTIVITY_KIND_API, 0) &&                 \
        !gp__ocl_cb_on(GP_CORE)) {                                             \
      real_ args;                                                              \
      return;                                                                  \
    }                                                                          \
    gp__ocl_call c_;                                                           \
    gp__ocl_call_begin(&c_, GP_CL_ID_##name, false);                           \
    real_ args;                                                                \
    gp__ocl_call_end(&c_, CL_SUCCESS);                                         \
  }

#define GP_CL_PLAIN_P(r, name, ret, params, args)                              \
  GP_CL_WRAP_##r(name, ret, params, args)
#define GP_CL_PLAIN_S(r, name, ret, params, args)
#define GP_CL_PLAIN_ROW(h, r, name, ret, params, args)                         \
  GP_CL_PLAIN_##h(r, name, ret, params, args)

GP_CL_API(GP_CL_PLAIN_ROW)
