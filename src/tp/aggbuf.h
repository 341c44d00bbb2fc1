/*
 * aggbuf.h - what the interval engines share: aggregates that collect
 * rows into a buffer owned by the gp_tp handle and return a 16-byte
 * handle to it (SQL passes the handle, not megabytes of blob), and the
 * table-valued functions that read them back.
 *
 *   __gp_iv_agg(id, ts, dur, p...)        -> handle (intersect.c reads it)
 *   __gp_ci_agg(id, ts, track_id, value)  -> handle (counter_intervals.c)
 *   __gp_iv_ci(ci, trace_end, track_id, p...)
 *                                         -> handle (intersect.c reads it)
 *   __gp_ci_tracks(key, track_id)         -> handle (as __gp_ci_agg's)
 *
 * __gp_iv_ci is an interval table made of whole tracks of counter
 * intervals: each row names a track of a __gp_ci_agg buffer and its
 * partition values, and stands for all of that track's intervals
 * (counter_leading_intervals!'s rows), which the intersection then reads
 * from the counter buffer itself (psql_cte.c writes it). __gp_ci_tracks
 * is __gp_ci_agg over all rows of the counter table of the tracks given
 * (each as often as given), copied from the store (counter_rows.c).
 */
#ifndef GPUPERF_TP_AGGBUF_H
#define GPUPERF_TP_AGGBUF_H

#include <stdbool.h>
#include <stdint.h>

#include "tp/sqlInt.h"

#define MAX_TABLES 15
#define MAX_PARTS 4
#define IV_MAGIC 0x31564947u  /* "GIV1" */
#define CI_MAGIC 0x31494347u  /* "GCI1" */
#define IVC_MAGIC 0x43564947u /* "GIVC": __gp_iv_ci's */

/* A counter row as __gp_ci_agg stores it. */
typedef struct ci_rec {
  int64_t id, ts, track;
  double value;
} ci_rec;

/* The intervals of a buffer's rows (counter_intervals.c): the rows kept,
 * by track, then ts (then input order). Each lasts until the next kept
 * row of its track, the last of a track until trace_end. Computed on
 * first use and kept with the buffer (gp__tp_buf.derived). */
typedef struct ci_kept {
  uint32_t *kept; /* kept rows (indices into the records), by track, ts */
  uint64_t n;
  uint64_t cap;    /* kept has room for this many (the records) */
  uint32_t *by_id; /* positions in kept by id (then position); lazily */
} ci_kept;

/* The kept rows of a CI_MAGIC buffer into *out (owned by b). Returns 0,
 * GP_EINVAL if b's records are not whole, or GP_ENOMEM. */
int gp__tp_ci_kept(gp__tp_buf *b, ci_kept **out);

/* Positions [*lo, *hi) of kept that hold track's rows (empty if none). */
void gp__tp_ci_track(const ci_kept *k, const ci_rec *rec, int64_t track,
                     uint64_t *lo, uint64_t *hi);

/*
 * The counter table's rows of tracks[0..n) into b, a CI_MAGIC buffer but
 * for its id (0): each track's rows in table order,
 * tracks in the given order, as often as given; rows whose value SQL
 * reads as NULL (NaN) left out. Returns 0, GP_ENOMEM or GP_EINVAL (the
 * tables are not in memory); b owns nothing on failure.
 */
int gp__tp_counter_rows(gp_tp *tp, const int64_t *tracks, uint64_t n,
                        gp__tp_buf *b);

/* The buffer with this id (a handle's), or NULL. */
gp__tp_buf *gp__tp_buf_find(gp_tp *tp, uint64_t id);

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

/* The modules (intersect.c, counter_intervals.c, counter_rows.c). */
extern sqlite3_module gp__tp_intersect_module;
extern sqlite3_module gp__tp_counter_intervals_module;
extern sqlite3_module gp__tp_counter_tracks_module;
extern sqlite3_module gp__tp_counter_ids_module;

#endif /* GPUPERF_TP_AGGBUF_H */
