/*
 * sqlInt.h - what the SQL side of the trace processor shares: the table
 * catalogue that vtab.c exposes, the gp_tp handle, and the entry points
 * of the PerfettoSQL layer.
 *
 * Two ways to hold the tables. In memory (the default), the imported
 * columnar store (store.h) is presented by the virtual-table module
 * "gp_table": one virtual table per intrinsic table, named like
 * Perfetto's (__intrinsic_slice, ...). With a database file (--db), the
 * same tables are materialised as ordinary SQLite tables with indexes,
 * under the same names, so the views on top (slice, gpu_slice, ...) are
 * identical text either way and the file is usable from plain sqlite3.
 */
#ifndef GPUPERF_TP_SQLINT_H
#define GPUPERF_TP_SQLINT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpuperf/tp.h"
#include "tp/store.h"

/* Bump when the tables of a saved database change meaning. */
#define GP_TP_DB_FORMAT 4 /* 4: ftrace_event, cpu */

/* ------------------------------------------------------------------ */
/* Table catalogue (tables.c)                                            */

/* Per-cursor scratch the accessors may use to walk rows cheaply. */
typedef struct gp__tp_cache {
  uint64_t set;   /* args: set of the last row, UINT64_MAX = none */
  uint64_t first; /* its first row */
  uint32_t size;  /* its size */
} gp__tp_cache;

typedef struct gp__tp_coldef {
  const char *name;
  const char *type; /* SQL type: INTEGER, REAL, TEXT */
} gp__tp_coldef;

enum {
  GP_TP_COL_SORTED = 1,  /* int values never decrease with the row */
  GP_TP_COL_INDEXED = 2, /* equality lookups may build an index */
  GP_TP_COL_ID = 4,      /* value == row */
};

typedef struct gp__tp_tabdef {
  const char *name; /* e.g. "__intrinsic_slice" */
  const gp__tp_coldef *cols;
  int ncols;
  const uint8_t *flags; /* GP_TP_COL_* per column */
  uint64_t (*rows)(const gp__tp_db *db);
  /* Sets ctx to the value of (row, col). */
  void (*value)(const gp__tp_db *db, uint64_t row, int col,
                sqlite3_context *ctx, gp__tp_cache *cache);
  /* Integer value of (row, col) for sorted and indexed columns; false if
   * NULL. */
  bool (*int_value)(const gp__tp_db *db, uint64_t row, int col, int64_t *out,
                    gp__tp_cache *cache);
  /* Indexes to create when the table is saved to a database file. */
  const char *const *db_indexes;
} gp__tp_tabdef;

extern const gp__tp_tabdef *const gp__tp_tables[];
extern const int gp__tp_ntables;

/* ------------------------------------------------------------------ */
/* The handle                                                            */

/* A lazily built index: the rows of a table sorted by a column's value. */
typedef struct gp__tp_colindex {
  uint32_t *rows;
  int64_t *vals;
  uint64_t n;
  bool built;
} gp__tp_colindex;

#define GP_TP_MAX_COLS 32
#define GP_TP_MAX_TABLES 24

typedef struct gp__tp_macro gp__tp_macro;
typedef struct gp__tp_fn gp__tp_fn;

/* A buffer an aggregate hands to a table-valued function (intervals.c):
 * SQL passes a 16-byte handle, not megabytes of blob. Freed when the
 * query's rows are. */
typedef struct gp__tp_buf {
  uint64_t id;
  uint8_t *p;
  size_t n, cap;
  uint64_t count;  /* records */
  uint32_t nparts; /* interval tables: partition columns */
  uint32_t magic;  /* the kind of records (aggbuf.h) */
  /* What a reader computed from the records once (counter_intervals.c),
   * freed with the buffer by free_derived; NULL until then. */
  void *derived;
  void (*free_derived)(void *);
} gp__tp_buf;

/* A counter-intervals aggregate's result, kept for the statement's other
 * evaluations of the same subquery (psql_cte.c, __gp_ci_memo). */
typedef struct gp__tp_memo {
  uint64_t key, id; /* id: the buffer (0: no rows) */
} gp__tp_memo;

struct gp_tp {
  sqlite3 *sql;
  gp__tp_db *db; /* NULL when the tables come from a database file */
  gp_tp_info info;
  gp__tp_colindex index[GP_TP_MAX_TABLES][GP_TP_MAX_COLS];
  /* PerfettoSQL state. */
  gp__tp_macro *macros;
  gp__tp_fn *fns;
  uint64_t modules;           /* bitmask of included modules */
  sqlite3_stmt *extract_stmt; /* database mode: extract_arg's lookup */
  GP_TP_VEC(gp__tp_buf) bufs;
  GP_TP_VEC(gp__tp_memo) memos; /* cleared with bufs */
  uint64_t next_buf;
  uint32_t live_rows; /* gp_tp_rows not yet destroyed: bufs may be in use */
  char warning[512];  /* gp_tp_warning(); "" = none */
  char *db_path;      /* the database file the tables come from, or NULL */
  bool spilled;       /* opened with GP_TP_SPILL: ends it when closed */
};

/* Frees the buffers aggregates handed over (at the end of a query). */
void gp__tp_bufs_clear(gp_tp *tp);

/* Registers the gp_table module and creates the intrinsic virtual
 * tables over tp->db. */
int gp__tp_vtab_register(gp_tp *tp, char *err, size_t errsize);

/* xOpen of a virtual table whose cursor (size bytes, its
 * sqlite3_vtab_cursor first) starts zeroed; xClose of one that holds
 * nothing besides. vtab.c. */
int gp__tp_cursor_open(size_t size, sqlite3_vtab_cursor **out);
int gp__tp_cursor_close(sqlite3_vtab_cursor *cur);

/* The lazily built index of (table, col); NULL if memory runs out. */
const gp__tp_colindex *gp__tp_index(gp_tp *tp, int table, int col);

/* Registers extract_arg, trace_start/end/dur, the interval and counter
 * helpers (sqlfn.c, intervals.c). */
int gp__tp_functions_register(gp_tp *tp);
int gp__tp_intervals_register(gp_tp *tp);

/* Creates the Perfetto views over the intrinsic tables (schema.c). */
int gp__tp_views_create(gp_tp *tp, const char *schema, char *err,
                        size_t errsize);

/* Saves the tables to a database file (atomically) with the trace's
 * identity, telling o's progress callback (if any) table by table; loads
 * one back if it matches. schema.c. */
int gp__tp_db_save(gp_tp *tp, const char *path, const char *trace_path,
                   const gp_tp_options *o, char *err, size_t errsize);

/*
 * Opens path if it holds tables of this trace (same size, mtime, content
 * hash and format): 1 and *out set; 0 if absent or stale (a damaged
 * database file is stale too, and warn gets a line naming it; warn is
 * left alone otherwise); negative on error.
 */
int gp__tp_db_load(const char *path, const char *trace_path, sqlite3 **out,
                   gp_tp_info *info, char *err, size_t errsize, char *warn,
                   size_t warnsize);

/* ------------------------------------------------------------------ */
/* PerfettoSQL (psql.c)                                                  */

/*
 * Runs every statement of sql but the last; prepares the last (after
 * PerfettoSQL rewriting) into *stmt (NULL if there is none). Errors
 * carry a message in err.
 */
int gp__tp_psql_run(gp_tp *tp, const char *sql, sqlite3_stmt **stmt,
                    gp_tp_error *err);

/* Frees macros and functions. */
void gp__tp_psql_free(gp_tp *tp);

/* Fills err (may be NULL) with code, offset and a formatted message;
 * returns code. */
int gp__tp_set_error(gp_tp_error *err, int code, uint64_t offset,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* GPUPERF_TP_SQLINT_H */
