// SPDX-License-Identifier: MIT
/*
 * The flight recorder's poll-thread side: after each poll (model lock held)
 * the model is diffed into a batch for the writer, with no I/O.  A series is
 * interned once (its id kept per object, field and priority, or counter-set
 * index); a counter gets a row when its value changed, a configuration field
 * when the hash of its value did; a keyframe writes every live series.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "recorder_int.h"
#include "recording_schema.h"
#include "snapshot.h"
#include "util.h"

#define KF_MAX_MS     (300 * 1000) /* a keyframe at least this often */
#define KF_ROW_FACTOR 8		   /* ... or once the deltas outweigh 8 keyframes */

static int64_t ts_ms(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000 + t->tv_nsec / 1000000;
}

/* ---- batches ---- */

void recorder_profset_free(struct profset *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->rows[i].name);
		free(ps->rows[i].source);
		free(ps->rows[i].origin);
		free(ps->rows[i].params);
	}
	free(ps->rows);
	free(ps);
}

void recorder_batch_reset(struct batch *b)
{
	for (size_t i = 0; i < b->n_evs; i++)
		free(b->evs[i].detail);
	recorder_profset_free(b->prof);
	b->prof = NULL;
	b->n_defs = b->n_rows = b->n_crows = b->n_evs = 0;
	b->keyframe = b->first_of_run = b->oom = false;
	b->dropped = 0;
	sb_reset(&b->arena);
}

void recorder_batch_free(struct batch *b)
{
	if (!b)
		return;
	recorder_batch_reset(b);
	free(b->defs);
	free(b->rows);
	free(b->crows);
	free(b->evs);
	sb_free(&b->arena);
	free(b);
}

/* Appending to a batch: out of memory marks it (the poll is dropped and resent in full). */
static void add_row(struct batch *b, int32_t id, uint8_t type, int64_t v)
{
	if (array_grow(&b->rows, &b->cap_rows, b->n_rows, sizeof(*b->rows), 256))
		b->oom = true;
	else
		b->rows[b->n_rows++] = (struct row){ id, type, v };
}

static void add_crow(struct batch *b, int32_t id, uint8_t reason, size_t off)
{
	if (array_grow(&b->crows, &b->cap_crows, b->n_crows, sizeof(*b->crows), 256))
		b->oom = true;
	else
		b->crows[b->n_crows++] = (struct crow){ id, reason, off };
}

static void add_def(struct batch *b, const struct series_def *d)
{
	if (array_grow(&b->defs, &b->cap_defs, b->n_defs, sizeof(*b->defs), 256))
		b->oom = true;
	else
		b->defs[b->n_defs++] = *d;
}

/* A zeroed event row, or NULL. */
struct evrow *recorder_add_event(struct batch *b)
{
	if (array_grow(&b->evs, &b->cap_evs, b->n_evs, sizeof(*b->evs), 16)) {
		b->oom = true;
		return NULL;
	}
	memset(&b->evs[b->n_evs], 0, sizeof(b->evs[b->n_evs]));
	return &b->evs[b->n_evs++];
}

/*
 * Keep the series a lost batch introduced, to send again with a later one
 * (their ids are taken).  Out of memory loses them: their rows then name an
 * id with no series row, which a reader skips.
 */
void recorder_keep_defs(struct series_def **list, size_t *n, size_t *cap, const struct batch *b)
{
	for (size_t i = 0; i < b->n_defs; i++) {
		if (array_grow(list, cap, *n, sizeof(**list), 256))
			return;
		(*list)[(*n)++] = b->defs[i];
	}
}

/* ---- interning (poll thread) ---- */

void recorder_series_key(char *buf, size_t len, enum obj_kind kind, const char *device,
			 uint32_t port, const char *netdev, int src, const char *name, int prio)
{
	/* the widths are those of series_def: a key never truncates */
	snprintf(buf, len, "%d\x1f%.63s\x1f%u\x1f%.63s\x1f%d\x1f%.47s\x1f%d", kind, device, port,
		 netdev, src, name, prio);
}

int recorder_series_reserve(struct recorder *r, size_t id)
{
	if (id < r->cap_st)
		return 0;
	size_t nc = r->cap_st ? r->cap_st : 4096;

	while (nc <= id)
		nc *= 2;
	if (array_resize(&r->st, nc, sizeof(*r->st)))
		return -ENOMEM;
	memset(r->st + r->cap_st, 0, (nc - r->cap_st) * sizeof(*r->st));
	r->cap_st = nc;
	return 0;
}

static int32_t intern(struct recorder *r, struct batch *b, const struct objrec * or, int src,
		      const char *name, int prio, bool config)
{
	char key[320];
	int64_t id;
	struct series_def d = { 0 };

	recorder_series_key(key, sizeof(key), or->kind, or->kind == OBJ_NODE ? "" : or->name,
			    or->port, or->netdev, src, name, prio);
	id = strmap_get(&r->series_map, key);
	if (id > 0)
		return (int32_t)id;
	if (r->max_id >= INT32_MAX - 1 || recorder_series_reserve(r, (size_t)r->max_id + 1) ||
	    strmap_put(&r->series_map, key, r->max_id + 1)) {
		b->oom = true;
		return -1;
	}
	id = ++r->max_id;
	d.id = (int32_t)id;
	d.kind = (uint8_t) or->kind;
	d.src = (uint8_t)src;
	d.prio = (int8_t)prio;
	d.config = config;
	d.port = or->port;
	strlcpy0(d.device, or->kind == OBJ_NODE ? "" : or->name, sizeof(d.device));
	strlcpy0(d.netdev, or->netdev, sizeof(d.netdev));
	strlcpy0(d.name, name, sizeof(d.name));
	r->st[id] = (struct series_state){ .config = config };
	add_def(b, &d);
	return (int32_t)id;
}

static struct objrec *objrec_get(struct recorder *r, const struct object *o)
{
	char key[200];
	const char *nd = "";
	struct objrec * or ;
	int64_t i;

	/* The netdev label as /metrics writes it (prom.c object_labels). */
	if (o->kind == OBJ_RDMA_PORT && o->netdev)
		nd = o->netdev->name;
	else if (o->kind == OBJ_RDMA_PORT && field_present(o, F_PORT_NETDEV))
		nd = o->f[F_PORT_NETDEV].v.s;
	snprintf(key, sizeof(key), "%d\x1f%s\x1f%u\x1f%s", o->kind, o->name, o->port, nd);
	i = strmap_get(&r->obj_map, key);
	if (i >= 0)
		return r->objs[i];
	if (array_grow(&r->objs, &r->cap_objs, r->n_objs, sizeof(*r->objs), 32))
		return NULL;
	or = calloc(1, sizeof(* or));
	if (! or)
		return NULL;
	or->kind = o->kind;
	strlcpy0(or->name, o->name, sizeof(or->name));
	or->port = o->port;
	strlcpy0(or->netdev, nd, sizeof(or->netdev));
	if (strmap_put(&r->obj_map, key, (int64_t)r->n_objs)) {
		free(or);
		return NULL;
	}
	r->objs[r->n_objs++] = or ;
	return or ;
}

void recorder_objrec_free(struct objrec * or)
{
	for (int c = 0; c < CSET__COUNT; c++) {
		free(or->cs[c].id);
		free(or->cs[c].name);
	}
	free(or);
}

/* ---- diffing (poll thread) ---- */

static bool is_counter(const struct field_desc *d)
{
	return !d->config && (d->type == VT_INT || d->type == VT_PRIO_ARRAY || d->type == VT_FLOAT);
}

static void emit_counter(struct recorder *r, struct batch *b, int32_t id, bool present,
			 uint8_t type, int64_t v, bool kf)
{
	struct series_state *s = &r->st[id];

	s->touch = (uint64_t)r->seq;
	if (!present) {
		if (s->live) {
			add_row(b, id, ROW_NULL, 0);
			s->live = 0;
			r->n_live--;
		}
		return;
	}
	if (!s->live) {
		s->live = 1;
		r->n_live++;
	} else if (!kf && s->v == v && s->type == type) {
		return;
	}
	s->v = v;
	s->type = type;
	add_row(b, id, type, v);
	r->live_rows++;
}

/* A hash of what a configuration field holds; only a change is encoded and stored. */
static int64_t field_hash(const struct field_desc *d, const struct field_val *f)
{
	uint64_t h = fnv1a(&f->state, 1, FNV1A_INIT);

	h = fnv1a(&f->err, sizeof(f->err), h);
	if (f->state != ABS_NONE)
		return (int64_t)h;
	switch (d->type) {
	case VT_INT:
	case VT_BOOL:
		return (int64_t)fnv1a(&f->v.i, sizeof(f->v.i), h);
	case VT_FLOAT:
		return (int64_t)fnv1a(&f->v.d, sizeof(f->v.d), h);
	case VT_STR:
		return (int64_t)fnv1a(f->v.s, strnlen(f->v.s, sizeof(f->v.s)), h);
	case VT_PRIOSET:
		return (int64_t)fnv1a(&f->v.set, sizeof(f->v.set), h);
	case VT_DSCPSET:
		return (int64_t)fnv1a(&f->v.dset, sizeof(f->v.dset), h);
	case VT_PRIO_ARRAY:
		h = fnv1a(&f->mask, 1, h);
		for (int p = 0; p < RW_PRIO_COUNT; p++)
			if (f->mask & (1u << p))
				h = fnv1a(&f->v.arr[p], sizeof(f->v.arr[p]), h);
		return (int64_t)h;
	case VT_DSCP_MAP:
		return (int64_t)fnv1a(f->v.dscp, sizeof(f->v.dscp), h);
	case VT_GIDS:
		if (f->v.gids && f->v.gids->n)
			h = fnv1a(f->v.gids->e, f->v.gids->n * sizeof(*f->v.gids->e), h);
		return (int64_t)fnv1a(&(size_t){ f->v.gids ? f->v.gids->n : 0 }, sizeof(size_t), h);
	case VT_PCI_PAIRS:
		if (f->v.pairs && f->v.pairs->n)
			h = fnv1a(f->v.pairs->e, f->v.pairs->n * sizeof(*f->v.pairs->e), h);
		return (int64_t)fnv1a(&(size_t){ f->v.pairs ? f->v.pairs->n : 0 }, sizeof(size_t),
				      h);
	}
	return (int64_t)h;
}

static bool config_changed(struct recorder *r, int32_t id, int64_t h, bool kf)
{
	struct series_state *s = &r->st[id];

	s->touch = (uint64_t)r->seq;
	if (!s->live) {
		s->live = 1;
		r->n_live++;
	} else if (!kf && s->v == h) {
		return false;
	}
	s->v = h;
	r->live_rows++;
	return true;
}

static void emit_config_field(struct recorder *r, struct batch *b, int32_t id,
			      const struct field_desc *d, const struct field_val *f, bool kf)
{
	size_t off;

	if (!config_changed(r, id, field_hash(d, f), kf))
		return;
	if (f->state != ABS_NONE) {
		add_crow(b, id, f->state, SIZE_MAX);
		return;
	}
	off = b->arena.len;
	if (snapshot_value_text(&b->arena, d, f)) {
		b->oom = true;
		return;
	}
	sb_putc(&b->arena, '\0');
	add_crow(b, id, ABS_NONE, off);
}

static void emit_config_u64(struct recorder *r, struct batch *b, int32_t id, bool present,
			    uint64_t v, bool kf)
{
	size_t off;

	if (!present) {
		struct series_state *s = &r->st[id];

		s->touch = (uint64_t)r->seq;
		if (s->live) {
			add_crow(b, id, ABS__COUNT, SIZE_MAX);
			s->live = 0;
			r->n_live--;
		}
		return;
	}
	if (!config_changed(r, id, (int64_t)v, kf))
		return;
	off = b->arena.len;
	sb_u64(&b->arena, v);
	sb_putc(&b->arena, '\0');
	add_crow(b, id, ABS_NONE, off);
}

static int cscache_fit(struct cscache *c, uint32_t n)
{
	if (n <= c->n)
		return 0;
	if (array_resize(&c->id, n, sizeof(*c->id)) || array_resize(&c->name, n, sizeof(*c->name)))
		return -ENOMEM;
	memset(c->id + c->n, 0, (n - c->n) * sizeof(*c->id));
	memset(c->name + c->n, 0, (n - c->n) * sizeof(*c->name));
	c->n = n;
	return 0;
}

static const enum rec_source cset_source[CSET__COUNT] = {
	[CSET_ETHTOOL] = REC_ETHTOOL,
	[CSET_HW] = REC_HW,
	[CSET_PORT] = REC_PORT,
	[CSET_CC] = REC_CC,
};

static void diff_object(struct recorder *r, struct batch *b, const struct object *o, bool kf)
{
	struct objrec * or = objrec_get(r, o);

	if (! or) {
		b->oom = true;
		return;
	}
	for (int id = 0; id < F__COUNT; id++) {
		const struct field_desc *d = &fields[id];
		const struct field_val *f = &o->f[id];
		int32_t *sid = or->fid[id];

		if (d->obj != o->kind)
			continue;
		if (!is_counter(d)) {
			/* A field no collector fills here is not history worth a series. */
			if (!*sid && f->state == ABS_NOT_COLLECTED)
				continue;
			if (!*sid && (*sid = intern(r, b, or, REC_FIELD, d->path, -1, true)) < 0)
				return;
			emit_config_field(r, b, *sid, d, f, kf);
			continue;
		}
		if (d->type == VT_PRIO_ARRAY) {
			for (int p = 0; p < RW_PRIO_COUNT; p++) {
				bool present = f->state == ABS_NONE && (f->mask & (1u << p));

				if (!sid[p] && !present)
					continue;
				if (!sid[p] &&
				    (sid[p] = intern(r, b, or, REC_FIELD, d->path, p, false)) < 0)
					return;
				emit_counter(r, b, sid[p], present, ROW_INT, (int64_t)f->v.arr[p],
					     kf);
			}
			continue;
		}
		if (!*sid && f->state != ABS_NONE)
			continue;
		if (!*sid && (*sid = intern(r, b, or, REC_FIELD, d->path, -1, false)) < 0)
			return;
		if (d->type == VT_FLOAT) {
			int64_t bits;

			memcpy(&bits, &f->v.d, sizeof(bits));
			emit_counter(r, b, *sid, f->state == ABS_NONE, ROW_FLOAT, bits, kf);
		} else {
			emit_counter(r, b, *sid, f->state == ABS_NONE, ROW_INT, f->v.i, kf);
		}
	}
	for (int c = 0; c < CSET__COUNT; c++) {
		const struct counter_set *cs = &o->cs[c];
		struct cscache *cc = & or->cs[c];

		if (!cs->n)
			continue;
		if (cscache_fit(cc, cs->n)) {
			b->oom = true;
			return;
		}
		for (uint32_t i = 0; i < cs->n; i++) {
			int32_t *sid = &cc->id[i];

			/* Names keep their index across polls; re-resolve only when one moved. */
			if (!*sid || strcmp(cc->name[i], cs->names[i])) {
				strlcpy0(cc->name[i], cs->names[i], sizeof(cc->name[i]));
				if (c == CSET_ETHTOOL &&
				    (!r->o.ethtool_include ||
				     regexec(r->o.ethtool_include, cs->names[i], 0, NULL, 0))) {
					*sid = -1;
				} else {
					*sid = intern(r, b, or, cset_source[c], cs->names[i], -1,
						      c == CSET_CC);
					if (*sid < 0) {
						*sid = 0;
						return;
					}
				}
			}
			if (*sid < 0)
				continue;
			if (c == CSET_CC)
				emit_config_u64(r, b, *sid, cs->present[i], cs->vals[i], kf);
			else
				emit_counter(r, b, *sid, cs->present[i], ROW_INT,
					     (int64_t)cs->vals[i], kf);
		}
	}
}

/* Series of objects that vanished (or values nobody visited this poll) go absent. */
static void sweep(struct recorder *r, struct batch *b)
{
	for (int32_t id = 1; id <= r->max_id; id++) {
		struct series_state *s = &r->st[id];

		if (!s->live || s->touch == (uint64_t)r->seq)
			continue;
		s->live = 0;
		r->n_live--;
		if (s->config)
			add_crow(b, id, ABS__COUNT, SIZE_MAX);
		else
			add_row(b, id, ROW_NULL, 0);
	}
}

void recorder_after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct recorder *r = arg;
	struct batch *b = NULL;
	int64_t t = ts_ms(&m->time);
	bool kf, resync;

	/* polls.t_ms is unique: a clock step back must not collide with rows we have. */
	if (t <= r->last_t_ms) {
		if (t < r->last_t_ms - 1000)
			rw_log_once(
			    LOG_LVL_WARN, "recorder-clock",
			    "recorder: the clock went back %.3f s; polls recorded 1 ms apart "
			    "until it catches up",
			    (double)(r->last_t_ms - t) / 1e3);
		t = r->last_t_ms + 1;
	}
	r->seq++;
	pthread_mutex_lock(&r->mu);
	if (strcmp(r->host, m->host))
		strlcpy0(r->host, m->host, sizeof(r->host));
	if (r->n_free)
		b = r->free_b[--r->n_free];
	resync = r->resync;
	r->resync = false;
	if (r->kf_request)
		r->need_kf = true;
	r->kf_request = false;
	pthread_mutex_unlock(&r->mu);
	if (resync)
		r->need_kf = true;
	if (!b) {
		/* The writer is behind: drop this poll, write the next one in full. */
		r->dropped_pending++;
		r->need_kf = true;
		CNT_ADD(r, dropped, 1);
		rw_log_once(LOG_LVL_WARN, "recorder-drop",
			    "recorder: the database is not keeping up; dropping polls (counted in "
			    "rocewatch_recorder_dropped_polls_total)");
		return;
	}
	recorder_batch_reset(b);
	b->seq = r->seq;
	b->t_ms = t;
	b->what = what;
	b->dropped = r->dropped_pending;
	strlcpy0(b->host, m->host, sizeof(b->host));
	b->first_of_run = !r->run_sent;
	kf = r->need_kf || t - r->last_kf_ms >= KF_MAX_MS ||
	     r->rows_since_kf >= (uint64_t)(KF_ROW_FACTOR * (r->n_live + 1)) ||
	     r->rows_since_kf >= r->kf_max_rows;
	for (size_t i = 0; i < r->n_carry; i++)
		add_def(b, &r->carry[i]);
	r->n_carry = 0;
	r->live_rows = 0;
	diff_object(r, b, &m->node, kf);
	for (size_t i = 0; i < m->n_netdevs; i++)
		diff_object(r, b, m->netdevs[i], kf);
	for (size_t i = 0; i < m->n_ports; i++)
		diff_object(r, b, m->ports[i], kf);
	sweep(r, b);

	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < r->n_pend_ev; i++) {
		struct evrow *e = recorder_add_event(b);

		if (!e)
			break;
		*e = r->pend_ev[i];
		r->pend_ev[i].detail = NULL;
	}
	r->n_pend_ev = 0;
	pthread_mutex_unlock(&r->mu);
	if (r->jobs)
		recorder_capture_snapshots(r, b, m);

	if (b->oom) {
		/*
		 * Out of memory mid-diff: the state above no longer matches; start
		 * over in full, keeping the series already given ids.
		 */
		recorder_keep_defs(&r->carry, &r->n_carry, &r->cap_carry, b);
		recorder_batch_reset(b);
		pthread_mutex_lock(&r->mu);
		r->free_b[r->n_free++] = b;
		pthread_mutex_unlock(&r->mu);
		r->need_kf = true;
		r->dropped_pending++;
		CNT_ADD(r, dropped, 1);
		rw_log_once(LOG_LVL_ERROR, "recorder-oom", "recorder: out of memory; poll dropped");
		return;
	}
	/* The rules it was evaluated with, when they are new: dated by this poll. */
	pthread_mutex_lock(&r->mu);
	b->prof = r->pend_prof;
	r->pend_prof = NULL;
	pthread_mutex_unlock(&r->mu);
	if (b->prof)
		b->prof->t_ms = t;
	/* A poll that rewrote every live series is a keyframe whatever we planned. */
	b->keyframe = kf || r->live_rows == r->n_live;
	if (b->keyframe) {
		r->last_kf_ms = t;
		r->rows_since_kf = 0;
	} else {
		r->rows_since_kf += b->n_rows + b->n_crows;
	}
	r->need_kf = false;
	r->run_sent = true;
	r->dropped_pending = 0;
	r->last_t_ms = t;
	CNT_SET(r, series, (uint64_t)r->max_id);

	pthread_mutex_lock(&r->mu);
	ring_push(&r->q, b); /* never full: it has room for all of free_b */
	pthread_cond_signal(&r->cv_writer);
	pthread_mutex_unlock(&r->mu);
}

/* The parameters as the profiles table keeps them: [{"name", "value", "given"}, ...]. */
static char *params_json(const struct rec_profile *p)
{
	json_t *arr = json_array();
	char *text;

	for (size_t i = 0; arr && i < p->n_params; i++) {
		const struct rec_param *q = &p->params[i];
		json_t *o = json_pack("{s:s,s:s}", "name", q->name, "value", q->value);

		if (o && q->given)
			json_object_set_new(o, "given", json_string(q->given));
		if (!o || json_array_append_new(arr, o)) {
			json_decref(arr);
			return NULL;
		}
	}
	text = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
	json_decref(arr);
	return text;
}

int recorder_note_profiles(struct recorder *r, const struct rec_profile *p, size_t n)
{
	struct profset *ps = calloc(1, sizeof(*ps));

	if (!ps || !(ps->rows = calloc(n ? n : 1, sizeof(*ps->rows))))
		goto oom;
	for (; ps->n < n; ps->n++) {
		struct profrow *w = &ps->rows[ps->n];
		const struct rec_profile *q = &p[ps->n];

		w->name = strdup(q->name);
		w->source = strdup(q->source);
		w->origin = strdup(q->origin ? q->origin : "");
		w->params = params_json(q);
		w->text_hash = q->text_hash;
		if (!w->name || !w->source || !w->origin || !w->params) {
			ps->n++;
			goto oom;
		}
	}
	pthread_mutex_lock(&r->mu);
	recorder_profset_free(r->pend_prof);
	r->pend_prof = ps;
	pthread_mutex_unlock(&r->mu);
	return 0;
oom:
	recorder_profset_free(ps);
	return -ENOMEM;
}

int recorder_event(struct recorder *r, int64_t t_ms, const char *kind, const char *object,
		   const char *device, const char *name, const char *detail)
{
	struct evrow *e;

	pthread_mutex_lock(&r->mu);
	/* Bounded: events wait here for the next poll, which a stalled loop never runs. */
	if (r->n_pend_ev >= 4096 ||
	    array_grow(&r->pend_ev, &r->cap_pend_ev, r->n_pend_ev, sizeof(*r->pend_ev), 16)) {
		pthread_mutex_unlock(&r->mu);
		return -ENOMEM;
	}
	e = &r->pend_ev[r->n_pend_ev++];
	memset(e, 0, sizeof(*e));
	e->t_ms = t_ms;
	strlcpy0(e->kind, kind ? kind : "", sizeof(e->kind));
	strlcpy0(e->object, object ? object : "", sizeof(e->object));
	strlcpy0(e->device, device ? device : "", sizeof(e->device));
	strlcpy0(e->name, name ? name : "", sizeof(e->name));
	e->detail = detail ? strdup(detail) : NULL;
	pthread_mutex_unlock(&r->mu);
	return 0;
}
