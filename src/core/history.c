// SPDX-License-Identifier: MIT
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

void history_init(struct history *h, int64_t step_ns, const struct hist_shape shape[OBJ__COUNT])
{
	memset(h, 0, sizeof(*h));
	memcpy(h->shape, shape, sizeof(h->shape));
	h->step_ns = step_ns > 0 ? step_ns : 1000000000LL;
}

static void obj_free(struct hist_obj *o)
{
	if (!o)
		return;
	free(o->prev);
	free(o->valid);
	free(o->fed);
	free(o->cache);
	free(o->acc);
	free(o->acc_ok);
	free(o->pts);
	free(o);
}

void history_free(struct history *h)
{
	for (size_t i = 0; i < h->n_obj; i++)
		obj_free(h->obj[i]);
	h->n_obj = 0;
}

void history_begin(struct history *h, int64_t t_ns)
{
	h->t_now = t_ns;
	if (!h->started) {
		h->started = true;
		h->t_step = t_ns;
	}
	for (size_t i = 0; i < h->n_obj; i++) {
		struct hist_obj *o = h->obj[i];

		o->seen = false;
		memset(o->fed, 0, h->shape[o->kind].n_inputs);
	}
}

static struct hist_obj *obj_new(const struct history *h, enum obj_kind kind, const char *name,
				uint32_t port)
{
	const struct hist_shape *sh = &h->shape[kind];
	struct hist_obj *o = calloc(1, sizeof(*o));
	size_t np = (size_t)sh->n_series * HIST_POINTS;

	if (!o)
		return NULL;
	o->kind = kind;
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->port = port;
	o->prev = calloc(sh->n_inputs + 1, sizeof(*o->prev));
	o->valid = calloc(sh->n_inputs + 1, 1);
	o->fed = calloc(sh->n_inputs + 1, 1);
	o->cache = malloc((sh->n_inputs + 1) * sizeof(*o->cache));
	o->acc = calloc(sh->n_series + 1, sizeof(*o->acc));
	o->acc_ok = calloc(sh->n_series + 1, 1);
	o->pts = malloc((np + 1) * sizeof(*o->pts));
	if (!o->prev || !o->valid || !o->fed || !o->cache || !o->acc || !o->acc_ok || !o->pts) {
		obj_free(o);
		return NULL;
	}
	for (unsigned i = 0; i < sh->n_inputs; i++)
		o->cache[i] = -1;
	/* before it appeared there was nothing to measure: gaps, not zeros */
	for (size_t i = 0; i < np; i++)
		o->pts[i] = NAN;
	return o;
}

struct hist_obj *history_obj(struct history *h, enum obj_kind kind, const char *name, uint32_t port)
{
	struct hist_obj *o = (struct hist_obj *)history_find(h, kind, name, port);

	if (!o) {
		if (h->n_obj >= HIST_MAX_OBJECTS) {
			h->dropped_objects++;
			return NULL;
		}
		o = obj_new(h, kind, name, port);
		if (!o)
			return NULL;
		h->obj[h->n_obj++] = o;
	}
	o->seen = true;
	return o;
}

void history_feed(struct history *h, struct hist_obj *o, unsigned input, unsigned series,
		  uint64_t total)
{
	const struct hist_shape *sh;

	if (!o)
		return;
	sh = &h->shape[o->kind];
	if (input >= sh->n_inputs || series >= sh->n_series)
		return;
	if (o->valid[input]) {
		/* a counter that went back was reset: what it holds now is new */
		uint64_t d = total >= o->prev[input] ? total - o->prev[input] : total;

		o->acc[series] += (double)d;
		o->acc_ok[series] = 1;
	}
	o->prev[input] = total;
	o->valid[input] = 1;
	o->fed[input] = 1;
}

void history_end(struct history *h)
{
	double dt = (double)(h->t_now - h->t_step) / 1e9;
	bool commit = h->t_now - h->t_step >= h->step_ns;
	size_t slot = h->head, keep = 0;

	for (size_t i = 0; i < h->n_obj; i++) {
		struct hist_obj *o = h->obj[i];
		const struct hist_shape *sh = &h->shape[o->kind];

		if (!o->seen) {
			obj_free(o);
			continue;
		}
		h->obj[keep++] = o;
		for (unsigned k = 0; k < sh->n_inputs; k++)
			if (!o->fed[k])
				o->valid[k] = 0;
		if (!commit)
			continue;
		for (unsigned s = 0; s < sh->n_series; s++) {
			o->pts[(size_t)s * HIST_POINTS + slot] =
			    o->acc_ok[s] ? (float)(o->acc[s] / dt) : NAN;
			o->acc[s] = 0;
			o->acc_ok[s] = 0;
		}
	}
	h->n_obj = keep;
	if (!commit)
		return;
	h->t[slot] = h->t_now;
	h->head = (slot + 1) % HIST_POINTS;
	if (h->n < HIST_POINTS)
		h->n++;
	h->t_step = h->t_now;
}

const struct hist_obj *history_find(const struct history *h, enum obj_kind kind, const char *name,
				    uint32_t port)
{
	for (size_t i = 0; i < h->n_obj; i++) {
		const struct hist_obj *o = h->obj[i];

		if (o->kind == kind && o->port == port && !strcmp(o->name, name))
			return o;
	}
	return NULL;
}

size_t history_len(const struct history *h)
{
	return h->n;
}

static size_t ring_slot(const struct history *h, size_t i)
{
	return (h->head + HIST_POINTS - h->n + i) % HIST_POINTS;
}

int64_t history_time(const struct history *h, size_t i)
{
	return i < h->n ? h->t[ring_slot(h, i)] : 0;
}

float history_value(const struct history *h, const struct hist_obj *o, unsigned series, size_t i)
{
	if (!o || i >= h->n || series >= h->shape[o->kind].n_series)
		return NAN;
	return o->pts[(size_t)series * HIST_POINTS + ring_slot(h, i)];
}
