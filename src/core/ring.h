/* SPDX-License-Identifier: MIT */
/*
 * A bounded queue of pointers, oldest first, on storage the caller gives
 * (the recorder's batches between the poll loop and the writer) or that
 * ring_alloc() takes (an Alertmanager's batches while it is away).  Not
 * locked: its users hold their own lock around it.
 */
#ifndef ROCEWATCH_RING_H
#define ROCEWATCH_RING_H

#include <stdbool.h>
#include <stddef.h>

struct ring {
	void **slot;
	size_t cap, head, n;
	bool owned; /* slot is ring_alloc()'s */
};

/* On cap slots of the caller's. */
void ring_init(struct ring *q, void **slot, size_t cap);
/* On cap slots of its own: 0 or -ENOMEM. */
int ring_alloc(struct ring *q, size_t cap);
/* Its own slots back (not what they point at). */
void ring_free(struct ring *q);

static inline size_t ring_len(const struct ring *q)
{
	return q->n;
}

/* At the end (newest), or first in line (a retry): false when full. */
bool ring_push(struct ring *q, void *p);
bool ring_push_front(struct ring *q, void *p);
/* The oldest, taken off / only looked at; NULL when empty. */
void *ring_pop(struct ring *q);
void *ring_peek(const struct ring *q);

#endif
