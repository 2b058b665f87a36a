/* SPDX-License-Identifier: MIT */
/*
 * A short in-memory history of counter rates, for what a person looks at
 * (the status page's sparklines): per object, a fixed number of series,
 * each a ring of HIST_POINTS per-second rates, one point per step (at least
 * one poll).  A series is the sum of one or more counter inputs; each input
 * keeps its previous value, so a point is the sum of the inputs' increases
 * over the step divided by the step's length.  A counter that goes back
 * (a reset) counts from 0; an input absent in a poll forgets its previous
 * value (the next increase would span an unknown time); a series none of
 * whose inputs was seen in a step is NaN for that point, never 0.
 *
 * Bounded: at most HIST_MAX_OBJECTS objects; the memory of an object is
 * allocated when it first appears and freed when a poll no longer has it,
 * so a poll in steady state allocates nothing.  Not thread-safe: the caller
 * holds the lock that guards the model it is fed from.
 */
#ifndef ROCEWATCH_HISTORY_H
#define ROCEWATCH_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define HIST_POINTS	 300 /* 5 minutes at one point a second */
#define HIST_MAX_OBJECTS 256

/* What each kind of object holds: its series, and the counters summed into them. */
struct hist_shape {
	unsigned n_series, n_inputs;
};

struct hist_obj {
	enum obj_kind kind;
	char name[RW_NAME_MAX];
	uint32_t port;
	bool seen;	 /* in the current poll */
	uint64_t *prev;	 /* [n_inputs] */
	uint8_t *valid;	 /* [n_inputs]: prev holds a value of the previous poll */
	uint8_t *fed;	 /* [n_inputs]: fed in the current poll */
	int32_t *cache;	 /* [n_inputs]: the feeder's own (a counter set index), -1 at first */
	double *acc;	 /* [n_series]: increases within the current step */
	uint8_t *acc_ok; /* [n_series]: an increase was seen in the current step */
	float *pts;	 /* [n_series][HIST_POINTS], ring in step with history.t */
};

struct history {
	struct hist_shape shape[OBJ__COUNT];
	int64_t step_ns;
	int64_t t_now, t_step; /* the current poll; the start of the current step */
	bool started;
	/* the ring of point times (realtime ns, end of their step) */
	int64_t t[HIST_POINTS];
	size_t head, n; /* next slot; points held */
	struct hist_obj *obj[HIST_MAX_OBJECTS];
	size_t n_obj;
	uint64_t dropped_objects; /* objects beyond HIST_MAX_OBJECTS, not tracked */
};

/* step_ns: the shortest time a point covers (the poll interval, or more). */
void history_init(struct history *h, int64_t step_ns, const struct hist_shape shape[OBJ__COUNT]);
void history_free(struct history *h);

/* A poll at t_ns (realtime): feed its objects, then history_end(). */
void history_begin(struct history *h, int64_t t_ns);
/* The object (added when new: NULL when out of memory or over HIST_MAX_OBJECTS). */
struct hist_obj *history_obj(struct history *h, enum obj_kind kind, const char *name,
			     uint32_t port);
/* Counter input i (a running total) of o, summed into series s. */
void history_feed(struct history *h, struct hist_obj *o, unsigned input, unsigned series,
		  uint64_t total);
/* Close the poll: a point when the step is over; objects not seen are dropped. */
void history_end(struct history *h);

/* The object named so, or NULL. */
const struct hist_obj *history_find(const struct history *h, enum obj_kind kind, const char *name,
				    uint32_t port);
/* Points held (0 .. HIST_POINTS), oldest first: point i's time and value. */
size_t history_len(const struct history *h);
int64_t history_time(const struct history *h, size_t i);
float history_value(const struct history *h, const struct hist_obj *o, unsigned series, size_t i);

#endif
