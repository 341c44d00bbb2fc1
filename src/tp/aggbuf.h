/*
 * aggbuf.h - what the interval engines share: aggregates that collect
 * rows into a buffer owned by the gp_tp handle and return a 16-byte
 * handle to it (SQL passes the handle, not megabytes of blob), and the
 * table-valued functions that read them back.
 *
 *   __gp_iv_agg(id, ts, dur, p...)        -> handle (intersect.c reads it)
 *   __gp_ci_agg(id, ts, track_id, value)  -> handle (counter_intervals.c)
 */
#ifndef GPUPERF_TP_AGGBUF_H
#define GPUPERF_TP_AGGBUF_H

#include <stdbool.h>
#include <stdint.h>

#include "tp/sqlInt.h"

#define MAX_TABLES 15
#define MAX_PARTS 4
#define IV_MAGIC 0x31564947u /* "GIV1" */
#define CI_MAGIC 0x31494347u /* "GCI1" */

/* A counter row as __gp_ci_agg stores it. */
typedef struct ci_rec {
  int64_t id, ts, track;
  double value;
} ci_rec;

/*
 * The buffer a handle argument names, or NULL: *empty is true for the
 * handle of an aggregate over no rows, false for a value that is not a
 * handle of this kind (magic).
 */
gp__tp_buf *gp__tp_arg_buf(gp_tp *tp, sqlite3_value *v, uint32_t magic,
                           bool *empty);

/* xBestIndex of a table-valued function whose arguments are the hidden
 * columns [first_hidden, first_hidden + nhidden): all must be usable
 * (else SQLITE_CONSTRAINT); idxNum is the mask of those given. */
int gp__tp_hidden_best_index(sqlite3_index_info *info, int first_hidden,
                             int nhidden);

/* Sets tab's error message; returns SQLITE_ERROR. */
int gp__tp_vtab_error(sqlite3_vtab *tab, const char *msg);

/* The modules (intersect.c, counter_intervals.c). */
extern sqlite3_module gp__tp_intersect_module;
extern sqlite3_module gp__tp_counter_intervals_module;

#endif /* GPUPERF_TP_AGGBUF_H */
