/*
 * textproto_bin.c - the protobuf binary format read against the schemas
 * of textproto.h, into the tree the text parser makes: a config that
 * arrives encoded (a DataSourceConfig sent by Perfetto's tracing service)
 * then means exactly what the same config means written as text.
 */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "pb.h"
#include "textproto.h"

typedef struct bin_parser {
  const uint32_t *numbers;
  gp__arena *arena;
  char *err;
  size_t err_size;
} bin_parser;

static const gp__tp_field *field_by_number(const bin_parser *bp,
                                           const gp__tp_message *msg,
                                           uint32_t number) {
  for (const gp__tp_field *f = msg->fields; f->name; f++)
    if (bp->numbers[f->id] == number)
      return f;
  return NULL;
}

static int fail(bin_parser *bp, uint64_t off, const char *what,
                const gp__tp_field *f) {
  if (bp->err && bp->err_size)
    snprintf(bp->err, bp->err_size, "offset %llu: %s%s%s",
             (unsigned long long)off, what, f ? " in field " : "",
             f ? f->name : "");
  return GP_ECORRUPT;
}

/* Appends a node for f to the list (head, tail); a singular field seen before
 * is reused (its value replaced, as the last one wins). */
static gp__tp_node *node_for(bin_parser *bp, const gp__tp_field *f,
                             gp__tp_node **head, gp__tp_node **tail) {
  if (!f->repeated)
    for (gp__tp_node *n = *head; n; n = n->next)
      if (n->field == f)
        return n;
  gp__tp_node *n = gp__arena_alloc(bp->arena, sizeof(*n));
  if (!n)
    return NULL;
  n->field = f;
  if (*tail)
    (*tail)->next = n;
  else
    *head = n;
  *tail = n;
  return n;
}

static int number_value(bin_parser *bp, const gp__tp_field *f, uint64_t v,
                        uint64_t off, gp__tp_node **head, gp__tp_node **tail) {
  if (f->type == GP_TP_U32 && v > UINT32_MAX)
    return fail(bp, off, "value out of range", f);
  if (f->type == GP_TP_BOOL)
    v = v != 0;
  if (f->type == GP_TP_ENUM) {
    size_t count = 0;
    while (f->enum_values[count])
      count++;
    if (v >= count)
      return fail(bp, off, "unknown enum value", f);
  }
  gp__tp_node *n = node_for(bp, f, head, tail);
  if (!n)
    return GP_ENOMEM;
  n->u = v;
  return 0;
}

static int parse_message(bin_parser *bp, gp__pb_reader *r,
                         const gp__tp_message *msg, gp__tp_node **out);

static int field_value(bin_parser *bp, gp__pb_reader *r, const gp__pb_field *x,
                       const gp__tp_field *f, uint64_t off, gp__tp_node **head,
                       gp__tp_node **tail) {
  switch (f->type) {
  case GP_TP_U32:
  case GP_TP_U64:
  case GP_TP_BOOL:
  case GP_TP_ENUM:
    if (x->wire_type == GP_PB_VARINT)
      return number_value(bp, f, x->value, off, head, tail);
    if (x->wire_type == GP_PB_LEN && f->repeated) { /* packed */
      const uint8_t *p = x->data, *end = x->data + x->size;
      while (p < end) {
        uint64_t v;
        size_t k = gp__pb_get_varint(p, end, &v);
        if (k == 0)
          return fail(bp, off, "truncated packed number", f);
        p += k;
        int rc = number_value(bp, f, v, off, head, tail);
        if (rc)
          return rc;
      }
      return 0;
    }
    return fail(bp, off, "wrong wire type", f);
  case GP_TP_STRING: {
    if (x->wire_type != GP_PB_LEN)
      return fail(bp, off, "wrong wire type", f);
    gp__tp_node *n = node_for(bp, f, head, tail);
    if (!n ||
        !(n->s = gp__arena_strndup(bp->arena, (const char *)x->data, x->size)))
      return GP_ENOMEM;
    n->len = x->size;
    return 0;
  }
  case GP_TP_MESSAGE: {
    if (x->wire_type != GP_PB_LEN)
      return fail(bp, off, "wrong wire type", f);
    gp__tp_node *n = node_for(bp, f, head, tail);
    if (!n)
      return GP_ENOMEM;
    gp__pb_reader sub;
    gp__pb_reader_sub(&sub, r, x);
    n->child = NULL; /* a second occurrence replaces the first */
    return parse_message(bp, &sub, f->message, &n->child);
  }
  }
  return fail(bp, off, "unsupported field type", f);
}

static int parse_message(bin_parser *bp, gp__pb_reader *r,
                         const gp__tp_message *msg, gp__tp_node **out) {
  gp__tp_node *head = NULL, *tail = NULL;
  gp__pb_field x;
  int rc;
  for (;;) {
    uint64_t off = gp__pb_offset(r);
    if ((rc = gp__pb_next(r, &x)) <= 0)
      break;
    const gp__tp_field *f = field_by_number(bp, msg, x.id);
    if (!f)
      continue;
    if ((rc = field_value(bp, r, &x, f, off, &head, &tail)) != 0)
      return rc;
  }
  if (rc < 0)
    return fail(bp, gp__pb_offset(r), "malformed protobuf", NULL);
  *out = head;
  return 0;
}

/* See textproto.h. */
int gp__tp_parse_binary(const uint8_t *p, size_t n, const gp__tp_message *msg,
                        const uint32_t *numbers, gp__arena *arena,
                        gp__tp_node **root, char *err, size_t err_size) {
  bin_parser bp = {numbers, arena, err, err_size};
  gp__pb_reader r;
  gp__pb_reader_init(&r, p, n, 0);
  *root = NULL;
  return parse_message(&bp, &r, msg, root);
}
