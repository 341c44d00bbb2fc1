/*
 * ftrace_desc.h - the names and field types of Perfetto's ftrace events,
 * as its FtraceEvent proto (v58.2) declares them, for the ftrace_event
 * table: an event's name by its field number in FtraceEvent, and each of
 * its fields' name and value type by field number. Also the names of the
 * vmstat keys (SysStats). The data is generated (ftrace_desc.c, by
 * scripts/gen-ftrace-desc.py); this header is written by hand.
 */
#ifndef GPUPERF_TP_FTRACE_DESC_H
#define GPUPERF_TP_FTRACE_DESC_H

#include <stddef.h>
#include <stdint.h>

/* How a field's value becomes an arg (Perfetto's InsertFieldIntoArgs). */
enum {
  GP_TP_FT_NONE,   /* no such field, or a message: no arg */
  GP_TP_FT_INT,    /* int32/64, sfixed, bool, enum: the value as int */
  GP_TP_FT_UINT,   /* uint32/64, fixed32/64: the value as uint */
  GP_TP_FT_SINT,   /* sint32/64: zigzag-decoded, as int */
  GP_TP_FT_STRING, /* string, bytes */
  GP_TP_FT_DOUBLE,
  GP_TP_FT_FLOAT,
};

typedef struct gp__tp_fdesc_event {
  uint32_t name;  /* offset in names; 0 ("") for no event */
  uint32_t first; /* row of field 1 in fields */
  uint32_t top;   /* the highest field number */
} gp__tp_fdesc_event;

typedef struct gp__tp_fdesc_field {
  uint32_t name; /* offset in names; 0 for none */
  uint32_t type; /* GP_TP_FT_* */
} gp__tp_fdesc_field;

typedef struct gp__tp_fdesc {
  const char *names;
  const gp__tp_fdesc_event *events;
  uint32_t nevents; /* event ids are below this */
  const gp__tp_fdesc_field *fields;
  uint32_t nfields;
  const int32_t *vmstat;
  uint32_t nvmstat;
} gp__tp_fdesc;

extern const gp__tp_fdesc gp__tp_ftrace_desc;

/* The number of FtraceEvent field numbers described: Perfetto ignores
 * (no ftrace_event row) an event whose number is not below it. */
static inline uint32_t gp__tp_ftrace_nevents(void) {
  return gp__tp_ftrace_desc.nevents;
}

/* The name of event id, or NULL if there is no such event (a number
 * below gp__tp_ftrace_nevents() that FtraceEvent does not use). */
static inline const char *gp__tp_ftrace_event_name(uint32_t id) {
  const gp__tp_fdesc *d = &gp__tp_ftrace_desc;
  if (id >= d->nevents || d->events[id].name == 0)
    return NULL;
  return d->names + d->events[id].name;
}

/* Field `field` of event id: its row in the field table into *row (for
 * a caller's cache of its interned name), its name into *name (NULL:
 * none), and its GP_TP_FT_* type (GP_TP_FT_NONE when it is not an arg). */
static inline uint32_t gp__tp_ftrace_field(uint32_t id, uint32_t field,
                                           uint32_t *row, const char **name) {
  const gp__tp_fdesc *d = &gp__tp_ftrace_desc;
  *name = NULL;
  if (id >= d->nevents || field == 0 || field > d->events[id].top)
    return GP_TP_FT_NONE;
  *row = d->events[id].first + field - 1;
  const gp__tp_fdesc_field *f = &d->fields[*row];
  if (f->name == 0)
    return GP_TP_FT_NONE;
  *name = d->names + f->name;
  return f->type;
}

/* The name of VmstatCounters value k, or NULL if it has none. */
static inline const char *gp__tp_vmstat_name(uint64_t k) {
  const gp__tp_fdesc *d = &gp__tp_ftrace_desc;
  if (k >= d->nvmstat || d->vmstat[k] < 0)
    return NULL;
  return d->names + d->vmstat[k];
}

#endif /* GPUPERF_TP_FTRACE_DESC_H */
