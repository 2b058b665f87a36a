// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>

#include "ring.h"

void ring_init(struct ring *q, void **slot, size_t cap)
{
	*q = (struct ring){ .slot = slot, .cap = cap };
}

int ring_alloc(struct ring *q, size_t cap)
{
	void **slot = calloc(cap ? cap : 1, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	ring_init(q, slot, cap);
	q->owned = true;
	return 0;
}

void ring_free(struct ring *q)
{
	if (q->owned)
		free(q->slot);
	*q = (struct ring){ 0 };
}

bool ring_push(struct ring *q, void *p)
{
	if (q->n == q->cap)
		return false;
	q->slot[(q->head + q->n++) % q->cap] = p;
	return true;
}

bool ring_push_front(struct ring *q, void *p)
{
	if (q->n == q->cap)
		return false;
	q->head = (q->head + q->cap - 1) % q->cap;
	q->slot[q->head] = p;
	q->n++;
	return true;
}

void *ring_pop(struct ring *q)
{
	void *p;

	if (!q->n)
		return NULL;
	p = q->slot[q->head];
	q->head = (q->head + 1) % q->cap;
	q->n--;
	return p;
}

void *ring_peek(const struct ring *q)
{
	return q->n ? q->slot[q->head] : NULL;
}
