/*
 * textproto.h - the protobuf text format, read against a schema.
 *
 * The parser turns text such as
 *
 *   duration_ms: 1000            # comment
 *   data_sources { config { name: "gpu.counters" } }
 *
 * into a tree of nodes, one per field occurrence, each with its line and
 * column. The schema (tables of field definitions) decides what is
 * allowed: unknown fields, values of the wrong type or out of range, and
 * a second occurrence of a singular field are errors, reported as
 * "line L, column C: ...". Accepted syntax: `name: value`, `name { ... }`
 * or `name: { ... }` (also with < >), lists `name: [a, b]`, optional ','
 * or ';' after a field, "..." and '...' strings with C escapes (adjacent
 * strings join), decimal and 0x numbers, enum names or numbers, and
 * true/false/t/f/1/0 for booleans.
 *
 * Every node and string lives in an arena owned by the caller.
 */
#ifndef GPUPERF_PERFETTO_TEXTPROTO_H
#define GPUPERF_PERFETTO_TEXTPROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An arena: blocks freed together. */
typedef struct gp__arena {
  struct gp__arena_block *head;
} gp__arena;

/* Returns n zeroed bytes (8-aligned) from the arena, NULL without memory. */
void *gp__arena_alloc(gp__arena *a, size_t n);
/* Copies n bytes and a NUL. */
char *gp__arena_strndup(gp__arena *a, const char *s, size_t n);
void gp__arena_free(gp__arena *a);

typedef enum gp__tp_type {
  GP_TP_U32,
  GP_TP_U64,
  GP_TP_BOOL,
  GP_TP_STRING,
  GP_TP_ENUM,
  GP_TP_MESSAGE
} gp__tp_type;

typedef struct gp__tp_message gp__tp_message;

typedef struct gp__tp_field {
  const char *name;
  int id; /* the caller's tag for the field */
  gp__tp_type type;
  bool repeated;
  const gp__tp_message *message;  /* GP_TP_MESSAGE */
  const char *const *enum_values; /* GP_TP_ENUM: names by value, NULL-ended */
} gp__tp_field;

struct gp__tp_message {
  const char *name;
  const gp__tp_field *fields; /* ended by a field with NULL name */
};

typedef struct gp__tp_node {
  const gp__tp_field *field;
  uint32_t line, column;
  uint64_t u;    /* numbers, bools, enum values */
  const char *s; /* strings (NUL-terminated; may hold NULs: see len) */
  size_t len;
  struct gp__tp_node *child; /* messages: first field */
  struct gp__tp_node *next;  /* next field of the same message */
} gp__tp_node;

/*
 * Parses text[0..len) as a message of type msg. Stores the first field
 * node (NULL for empty text) in *root. On error returns GP_EPARSE (or
 * GP_ENOMEM) and writes "line L, column C: what" into err.
 */
int gp__tp_parse(const char *text, size_t len, const gp__tp_message *msg,
                 gp__arena *arena, gp__tp_node **root, char *err,
                 size_t err_size);

/*
 * Reads p[0..n), a message of type msg in the protobuf binary format, into
 * the same tree gp__tp_parse() makes of its text, so that one converter
 * gives both the same meaning. numbers[field id] is each schema field's
 * protobuf field number. Fields the schema does not name are skipped (a
 * DataSourceConfig from Perfetto's service carries many); a singular
 * field given twice keeps its last value, as protobuf decoders do; packed
 * and unpacked repeated numbers are both read. Nodes have line 0: errors
 * about them name the field instead. Returns 0, GP_ECORRUPT (err says
 * where) or GP_ENOMEM (textproto_bin.c).
 */
int gp__tp_parse_binary(const uint8_t *p, size_t n, const gp__tp_message *msg,
                        const uint32_t *numbers, gp__arena *arena,
                        gp__tp_node **root, char *err, size_t err_size);

/* Formats "line L, column C: " + message for node n into err ("field F: "
 * for a node read from the binary format). */
void gp__tp_error_at(const gp__tp_node *n, char *err, size_t err_size,
                     const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* GPUPERF_PERFETTO_TEXTPROTO_H */
