/*
 * gpuperf/export.h - symbol visibility for the public C API.
 *
 * The library is built with -fvisibility=hidden; only declarations marked
 * GP_EXPORT are visible from libgpuperf.so. Internal functions are named
 * gp__name and stay hidden.
 */
#ifndef GPUPERF_EXPORT_H
#define GPUPERF_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define GP_EXPORT __attribute__((visibility("default")))
#else
#define GP_EXPORT
#endif

#endif /* GPUPERF_EXPORT_H */
