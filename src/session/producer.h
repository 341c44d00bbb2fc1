/*
 * producer.h - the internal side of the Perfetto producer (producer.c;
 * the public side is in gpuperf/session.h).
 */
#ifndef GPUPERF_SESSION_PRODUCER_H
#define GPUPERF_SESSION_PRODUCER_H

/* In a child after fork(): the connection is the parent's; forget it. */
void gp__producer_after_fork(void);

/* GPUPERF_PRODUCER=perfetto: connects on the process's first GPU work
 * (called from the activation hook; once). */
void gp__producer_activate(void);

#endif /* GPUPERF_SESSION_PRODUCER_H */
