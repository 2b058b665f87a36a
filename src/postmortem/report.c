// SPDX-License-Identifier: MIT
/*
 * rocewatch report: a timeline of what moved in a recording, per device and
 * priority: pause frames and pause time, storm events, retries,
 * out-of-sequence, CNPs, discards, link flaps, configuration changes and
 * alerts, each with its start, end, total and peak rate.
 *
 * Rates are computed between consecutive polls of one run (a restart or a
 * gap in the recording never becomes a spike), and a counter that went
 * backwards restarted from zero (driver reload), as Prometheus' rate() does.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "pm_text.h"
#include "report.h"
#include "util.h"

/* Increases less than this apart are one episode (NIC counters may tick in bursts). */
#define EPISODE_GAP_MS 2000

static const char *const cat_names[RCAT__COUNT] = {
	[RCAT_PAUSE] = "pause",	    [RCAT_PAUSE_TIME] = "pause_time", [RCAT_STORM] = "storm",
	[RCAT_RETRY] = "retry",	    [RCAT_OOS] = "out_of_sequence",   [RCAT_CNP] = "cnp",
	[RCAT_DISCARD] = "discard", [RCAT_LINK] = "link_flap",
};

const char *rep_cat_name(enum report_cat c)
{
	return cat_names[c];
}

void rep_time(int64_t t_ms, bool full, char *buf, size_t len)
{
	char tmp[40];

	rec_format_time(t_ms, tmp, sizeof(tmp));
	/* "2026-12-02T10:00:00.000Z" -> "10:00:00.000" */
	if (!full && strlen(tmp) >= 23)
		snprintf(buf, len, "%.12s", tmp + 11);
	else
		snprintf(buf, len, "%s", tmp);
}

const char *rep_object_name(const struct rec_series *s, char *buf, size_t len)
{
	if (s->kind == OBJ_RDMA_PORT)
		snprintf(buf, len, "%s/%u", s->device, s->port);
	else if (s->kind == OBJ_NODE)
		snprintf(buf, len, "node");
	else
		snprintf(buf, len, "%s", s->device);
	return buf;
}

const char *rep_track_label(const struct track *t, char *buf, size_t len)
{
	const char *dir = t->rep->dir ? t->rep->dir : "";

	if (t->s->prio >= 0)
		snprintf(buf, len, "%s%sprio %d", dir, *dir ? " " : "", t->s->prio);
	else
		snprintf(buf, len, "%s", dir);
	return buf;
}

static bool device_wanted(const struct report *rp, const struct rec_series *s)
{
	return !rp->device || !strcmp(rp->device, s->device) ||
	       (s->kind == OBJ_RDMA_PORT && !strcmp(rp->device, s->netdev));
}

/* Does the report follow this series?  Its row in the field table or counter set says. */
static bool track_for(const struct rec_series *s, struct track *t)
{
	const struct counter_desc *set = NULL, *cd;
	size_t n = 0;

	if (s->config)
		return false;
	if (s->src == REC_FIELD) {
		if (s->field < 0 || fields[s->field].rep.cat == RCAT_NONE)
			return false;
		t->rep = &fields[s->field].rep;
		t->scale = fields[s->field].scale;
		t->row = s->field;
		return true;
	}
	if (s->src == REC_HW) {
		set = hw_counter_descs;
		n = n_hw_counter_descs;
	} else if (s->src == REC_PORT) {
		set = port_counter_descs;
		n = n_port_counter_descs;
	}
	cd = set ? counter_desc_find(set, n, s->name) : NULL;
	if (!cd || cd->rep.cat == RCAT_NONE)
		return false;
	t->rep = &cd->rep;
	t->scale = cd->scale;
	t->row = (int)(cd - set);
	return true;
}

static int setup_tracks(struct report *rp)
{
	struct rec_reader *rd = &rp->rd;
	size_t n = 0;

	rp->polled = calloc((size_t)rp->nb, 1);
	rp->by_series = calloc(rd->n_series ? rd->n_series : 1, sizeof(*rp->by_series));
	rp->cfg_last = calloc(rd->n_series ? rd->n_series : 1, sizeof(*rp->cfg_last));
	if (!rp->by_series || !rp->cfg_last || !rp->polled)
		return -ENOMEM;
	for (size_t i = 0; i < rd->n_series; i++) {
		struct track probe;

		if (rd->series[i].used && device_wanted(rp, &rd->series[i]) &&
		    track_for(&rd->series[i], &probe))
			n++;
	}
	rp->tracks = calloc(n ? n : 1, sizeof(*rp->tracks));
	if (!rp->tracks)
		return -ENOMEM;
	for (size_t i = 0; i < rd->n_series; i++) {
		const struct rec_series *s = &rd->series[i];
		struct track probe = { .s = s }, *t;

		if (!s->used || !device_wanted(rp, s) || !track_for(s, &probe))
			continue;
		t = &rp->tracks[rp->n_tracks++];
		*t = probe;
		/* every kind the SVG draws: one panel per object and kind that moved */
		t->bucket = calloc((size_t)rp->nb, sizeof(*t->bucket));
		if (!t->bucket)
			return -ENOMEM;
		rp->by_series[i] = t;
	}
	return 0;
}

int rep_bucket(const struct report *rp, int64_t t)
{
	int64_t b;

	if (rp->win_last <= rp->win_first)
		return rp->nb > 0 ? 0 : -1;
	b = (t - rp->win_first) * rp->nb / (rp->win_last - rp->win_first + 1);
	return b >= 0 && b < rp->nb ? (int)b : -1;
}

static void add_increase(struct report *rp, struct track *t, int64_t now, uint64_t delta)
{
	double scale = t->scale ? t->scale : 1.0;
	double amount = (double)delta * scale;
	double rate = amount * 1000.0 / (double)rp->cur_dt;
	struct episode *e;

	if (t->open && now - t->last_inc_t <= EPISODE_GAP_MS + rp->cur_dt) {
		e = &t->ep[t->n_ep - 1];
		e->end = now;
		e->total += amount;
	} else {
		if (array_grow(&t->ep, &t->cap_ep, t->n_ep, sizeof(*t->ep), 4)) {
			rp->oom = true;
			return;
		}
		e = &t->ep[t->n_ep++];
		*e = (struct episode){ .start = now - rp->cur_dt,
				       .first = now,
				       .end = now,
				       .total = amount,
				       .peak_rate = -1 };
		t->open = true;
	}
	if (rate > e->peak_rate) {
		e->peak_rate = rate;
		e->peak_t = now;
	}
	t->last_inc_t = now;
	if (t->bucket) {
		int b = rep_bucket(rp, now);

		if (b >= 0 && rate > t->bucket[b])
			t->bucket[b] = rate;
	}
}

/* A new, zeroed event at t; NULL (and rp->oom) when out of memory. */
static struct rep_event *add_event(struct report *rp, int64_t t)
{
	struct rep_event *e;

	if (array_grow(&rp->events, &rp->cap_events, rp->n_events, sizeof(*rp->events), 16)) {
		rp->oom = true;
		return NULL;
	}
	e = &rp->events[rp->n_events++];
	memset(e, 0, sizeof(*e));
	e->t = t;
	return e;
}

static void on_poll(void *arg, const struct rec_poll *p)
{
	struct report *rp = arg;

	rp->cur_dt = rp->have_prev && p->run == rp->prev_run ? p->t_ms - rp->prev_t : 0;
	if (!p->in_window)
		return;
	if (rp->polled && rep_bucket(rp, p->t_ms) >= 0)
		rp->polled[rep_bucket(rp, p->t_ms)] = 1; /* a bucket without a poll is no zero */
	if (p->dropped)
		rp->dropped += p->dropped;
	if (rp->have_prev && p->run != rp->prev_run && rp->n_events < 100000) {
		struct rep_event *e = add_event(rp, p->t_ms);

		if (!e)
			return;
		strlcpy0(e->kind, "restart", sizeof(e->kind));
		snprintf(e->detail, sizeof(e->detail), "recording resumed after %.1f s",
			 (double)(p->t_ms - rp->prev_t) / 1e3);
	}
}

static void on_poll_end(void *arg, const struct rec_poll *p)
{
	struct report *rp = arg;

	rp->prev_t = p->t_ms;
	rp->prev_run = p->run;
	rp->have_prev = true;
}

static void on_sample(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const struct rec_value *v)
{
	struct report *rp = arg;
	struct track *t = rp->by_series[s->id];
	uint64_t val;

	if (!t)
		return;
	if (!v->present) {
		t->have = false;
		return;
	}
	if (v->is_float && !(v->d >= 0 && v->d < 18446744073709551616.0)) {
		/* no counter reading: converting it would be undefined, not a wrap */
		rec_bad(&rp->rd,
			"sample at %" PRId64 " of series %" PRId64
			" (%s %s): %g is no counter value",
			p->t_ms, s->id, s->device, s->name, v->d);
		t->have = false;
		return;
	}
	val = v->is_float ? (uint64_t)v->d : (uint64_t)v->i;
	if (t->have && rp->cur_dt > 0 && p->in_window) {
		/* Went backwards: the counter restarted from 0 (driver reload, 32-bit wrap). */
		uint64_t delta = val >= t->last ? val - t->last : val;

		if (delta)
			add_increase(rp, t, p->t_ms, delta);
	}
	t->last = val;
	t->have = true;
}

static void on_config(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const char *json, const char *absent)
{
	struct report *rp = arg;
	char buf[96];
	char *cur, *prev = rp->cfg_last[s->id];

	if (!device_wanted(rp, s))
		return;
	if (json) {
		cur = strdup(json);
	} else {
		snprintf(buf, sizeof(buf), "(absent: %s)", absent ? absent : "?");
		cur = strdup(buf);
	}
	if (!cur) {
		rp->oom = true;
		return;
	}
	if (p->in_window && prev && strcmp(prev, cur)) {
		struct rep_change *c;

		if (array_grow(&rp->changes, &rp->cap_changes, rp->n_changes, sizeof(*rp->changes),
			       16)) {
			free(cur);
			rp->oom = true;
			return;
		}
		c = &rp->changes[rp->n_changes++];
		c->t = p->t_ms;
		c->s = s;
		c->old = prev;
		c->new = strdup(cur);
		prev = NULL; /* owned by the change now */
	}
	free(prev);
	rp->cfg_last[s->id] = cur;
}

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
	struct report *rp = arg;
	int64_t now = mono_ns();

	if (!rp->progress)
		return;
	if (!rp->progress_t0)
		rp->progress_t0 = now;
	if (done >= total) {
		if (rp->progress_shown)
			fputs("\r\033[K", stderr); /* leave the terminal as it was */
		rp->progress_shown = false;
		return;
	}
	/* Only a report that takes a while says how far it is, at most 4 times a second. */
	if (now - rp->progress_t0 < 500000000LL || now - rp->last_progress_ns < 250000000LL)
		return;
	rp->last_progress_ns = now;
	rp->progress_shown = true;
	fprintf(stderr, "\rrocewatch report: reading %" PRIu64 " of %" PRIu64 " rows (%3.0f %%)",
		done, total, 100.0 * (double)done / (double)total);
}

static void on_event(void *arg, const struct rec_event *ev)
{
	struct report *rp = arg;
	struct rep_event *e;

	if (rp->device && ev->device[0] && strcmp(rp->device, ev->device))
		return;
	e = add_event(rp, ev->t_ms);
	if (!e)
		return;
	strlcpy0(e->kind, ev->kind, sizeof(e->kind));
	strlcpy0(e->device, ev->device, sizeof(e->device));
	strlcpy0(e->name, ev->name, sizeof(e->name));
	strlcpy0(e->detail, ev->detail, sizeof(e->detail));
}

static int cmp_event(const void *a, const void *b)
{
	const struct rep_event *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* ---- output ---- */

/* One line of the timeline: an episode of a track, or a configuration change. */
struct line {
	int64_t t;
	const struct rec_series *s;
	const struct track *tr;
	const struct episode *ep;
	const struct rep_change *ch;
};

static int obj_order(const struct rec_series *a, const struct rec_series *b)
{
	int r;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	r = strcmp(a->device, b->device);
	if (r)
		return r;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* Two tracks of one object: by category, then counter set, then table row. */
static int track_order(const struct track *a, const struct track *b)
{
	if (a->rep->cat != b->rep->cat)
		return a->rep->cat < b->rep->cat ? -1 : 1;
	if (a->s->src != b->s->src)
		return a->s->src < b->s->src ? -1 : 1;
	return a->row < b->row ? -1 : a->row > b->row;
}

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	int r = obj_order(x->s, y->s);

	if (r)
		return r;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->tr && y->tr && (r = track_order(x->tr, y->tr)))
		return r;
	return x->s->prio < y->s->prio ? -1 : x->s->prio > y->s->prio;
}

static struct line *collect_lines(const struct report *rp, size_t *n_out)
{
	size_t n = rp->n_changes, k = 0;
	struct line *l;

	for (size_t i = 0; i < rp->n_tracks; i++)
		n += rp->tracks[i].n_ep;
	l = calloc(n ? n : 1, sizeof(*l));
	if (!l)
		return NULL;
	for (size_t i = 0; i < rp->n_tracks; i++)
		for (size_t e = 0; e < rp->tracks[i].n_ep; e++)
			l[k++] = (struct line){ rp->tracks[i].ep[e].start, rp->tracks[i].s,
						&rp->tracks[i], &rp->tracks[i].ep[e], NULL };
	for (size_t i = 0; i < rp->n_changes; i++)
		l[k++] = (struct line){ rp->changes[i].t, rp->changes[i].s, NULL, NULL,
					&rp->changes[i] };
	qsort(l, k, sizeof(*l), cmp_line);
	*n_out = k;
	return l;
}

static void fmt_amount(char *buf, size_t len, double v, const char *unit)
{
	if (!strcmp(unit, "s"))
		snprintf(buf, len, "%.3f s paused", v);
	else
		snprintf(buf, len, "%.0f %s", v, unit);
}

static void fmt_rate(char *buf, size_t len, double r, const char *unit)
{
	if (!strcmp(unit, "s")) /* seconds paused per second */
		snprintf(buf, len, "%.1f %% of the time", r * 100.0);
	else if (r >= 100)
		snprintf(buf, len, "%.0f/s", r);
	else
		snprintf(buf, len, "%.2f/s", r);
}

static void write_text(const struct report *rp, const struct line *l, size_t n, FILE *f)
{
	char a[40], b[40], c[40], obj[160], lab[32], amt[64], rate[64], head[160], text[4400];
	const struct rec_series *prev = NULL;
	bool full = rp->win_first / 86400000 != rp->win_last / 86400000;
	int w = rp->width;

	rep_time(rp->win_first, true, a, sizeof(a));
	rep_time(rp->win_last, true, b, sizeof(b));
	snprintf(text, sizeof(text), "rocewatch report: %s, %s .. %s",
		 rp->rd.host[0] ? rp->rd.host : "?", a, b);
	pm_wrap(f, 0, w, 2, text);
	snprintf(text, sizeof(text), "%zu polls, every %" PRId64 " ms; %s%s%s%s",
		 rp->n_window_polls, rp->rd.interval_ms, rp->rd.path,
		 rp->rd.capture_reason[0] ? " (capture: " : "", rp->rd.capture_reason,
		 rp->rd.capture_reason[0] ? ")" : "");
	pm_wrap(f, 0, w, 2, text);
	if (rp->dropped)
		fprintf(f, "note: %" PRId64 " polls were not recorded (writer behind)\n",
			rp->dropped);
	if (!full)
		fprintf(f, "times are UTC on %.10s\n", a);
	if (!n)
		fprintf(f, "\nnothing moved%s%s.\n", rp->device ? " on " : "",
			rp->device ? rp->device : "");
	/* a row: when, what kind, which counter, then its text beside or below (indent 6) */
	for (size_t i = 0; i < n; i++) {
		const struct rec_series *s = l[i].s;

		if (!prev || obj_order(prev, s)) {
			rep_object_name(s, obj, sizeof(obj));
			if (s->kind == OBJ_RDMA_PORT && s->netdev[0])
				fprintf(f, "\n%s (RDMA port, netdev %s)\n", obj, s->netdev);
			else
				fprintf(f, "\n%s%s\n", obj,
					s->kind == OBJ_NETDEV ? " (netdev)" : "");
			prev = s;
		}
		if (l[i].ch) {
			const char *field = s->name;

			rep_time(l[i].t, full, a, sizeof(a));
			snprintf(head, sizeof(head), "  %-30s  %-10s ", a, "config");
			snprintf(text, sizeof(text), "%s%s%s: %s -> %s",
				 s->src == REC_FIELD ? "" : rec_source_name(s->src),
				 s->src == REC_FIELD ? "" : ".", field, l[i].ch->old, l[i].ch->new);
			pm_row(f, w, 6, head, text);
			continue;
		}
		const struct episode *e = l[i].ep;
		const struct track *t = l[i].tr;

		rep_time(e->start, full, a, sizeof(a));
		rep_time(e->end, full, b, sizeof(b));
		rep_time(e->peak_t, full, c, sizeof(c));
		fmt_amount(amt, sizeof(amt), e->total, t->rep->unit);
		fmt_rate(rate, sizeof(rate), e->peak_rate, t->rep->unit);
		if (e->first == e->end) {
			/* one poll: a step, not a rate worth a peak */
			snprintf(head, sizeof(head), "  %-30s  %-10s  %-9s", b,
				 rep_cat_name(t->rep->cat), rep_track_label(t, lab, sizeof(lab)));
			snprintf(text, sizeof(text), "%s: %s", t->rep->what, amt);
		} else {
			char span[96];

			snprintf(span, sizeof(span), "%s .. %s", a, b);
			snprintf(head, sizeof(head), "  %-30s  %-10s  %-9s", span,
				 rep_cat_name(t->rep->cat), rep_track_label(t, lab, sizeof(lab)));
			snprintf(text, sizeof(text), "%s: %s in %.1f s, peak %s at %s",
				 t->rep->what, amt, (double)(e->end - e->start) / 1e3, rate, c);
		}
		pm_row(f, w, 6, head, text);
	}
	if (rp->n_events) {
		fprintf(f, "\nevents\n");
		for (size_t i = 0; i < rp->n_events; i++) {
			const struct rep_event *e = &rp->events[i];

			rep_time(e->t, full, a, sizeof(a));
			snprintf(head, sizeof(head), "  %-30s  %-10s ", a, e->kind);
			snprintf(text, sizeof(text), "%s%s%s%s%s", e->name,
				 e->device[0] ? " on " : "", e->device, e->detail[0] ? ": " : "",
				 e->detail);
			pm_row(f, w, 6, head, text);
		}
	}
}

static json_t *time_json(int64_t t)
{
	char buf[40];

	rec_format_time(t, buf, sizeof(buf));
	return json_string(buf);
}

static int write_json(const struct report *rp, const struct line *l, size_t n, FILE *f)
{
	json_t *root = json_object(), *acts = json_array(), *chs = json_array(),
	       *evs = json_array();
	char obj[160], lab[32];
	int r;

	json_object_set_new(root, "host", json_string(rp->rd.host));
	json_object_set_new(root, "source", json_string(rp->rd.path));
	if (rp->rd.capture_reason[0])
		json_object_set_new(root, "capture_reason", json_string(rp->rd.capture_reason));
	json_object_set_new(root, "from", time_json(rp->win_first));
	json_object_set_new(root, "to", time_json(rp->win_last));
	json_object_set_new(root, "from_unix_ms", json_integer(rp->win_first));
	json_object_set_new(root, "to_unix_ms", json_integer(rp->win_last));
	json_object_set_new(root, "polls", json_integer((json_int_t)rp->n_window_polls));
	json_object_set_new(root, "interval_ms", json_integer(rp->rd.interval_ms));
	json_object_set_new(root, "dropped_polls", json_integer(rp->dropped));
	for (size_t i = 0; i < n; i++) {
		const struct rec_series *s = l[i].s;

		rep_object_name(s, obj, sizeof(obj));
		if (l[i].ch) {
			json_array_append_new(
			    chs, json_pack("{s:o,s:I,s:s,s:s,s:s,s:s,s:s}", "time",
					   time_json(l[i].t), "time_unix_ms", (json_int_t)l[i].t,
					   "device", obj, "object", obj_kind_name(s->kind), "field",
					   s->name, "old", l[i].ch->old, "new", l[i].ch->new));
			continue;
		}
		const struct episode *e = l[i].ep;
		const struct track *t = l[i].tr;
		json_t *a = json_pack(
		    "{s:s,s:s,s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:I,s:I,s:I,s:f,s:f,s:s,s:f,s:o,s:I}",
		    "device", obj, "object", obj_kind_name(s->kind), "category",
		    rep_cat_name(t->rep->cat), "counter", s->name, "what", t->rep->what, "unit",
		    t->rep->unit, "start", time_json(e->start), "first_increase",
		    time_json(e->first), "end", time_json(e->end), "start_unix_ms",
		    (json_int_t)e->start, "first_increase_unix_ms", (json_int_t)e->first,
		    "end_unix_ms", (json_int_t)e->end, "duration_seconds",
		    (double)(e->end - e->start) / 1e3, "total", e->total, "peak_rate_unit",
		    !strcmp(t->rep->unit, "s") ? "fraction of time" : "per second", "peak_rate",
		    e->peak_rate, "peak_time", time_json(e->peak_t), "peak_unix_ms",
		    (json_int_t)e->peak_t);

		if (!a)
			continue;
		if (t->rep->dir)
			json_object_set_new(a, "direction", json_string(t->rep->dir));
		if (s->prio >= 0)
			json_object_set_new(a, "priority", json_integer(s->prio));
		if (s->kind == OBJ_RDMA_PORT)
			json_object_set_new(a, "netdev", json_string(s->netdev));
		json_object_set_new(a, "label", json_string(rep_track_label(t, lab, sizeof(lab))));
		json_array_append_new(acts, a);
	}
	for (size_t i = 0; i < rp->n_events; i++) {
		const struct rep_event *e = &rp->events[i];

		json_array_append_new(
		    evs, json_pack("{s:o,s:I,s:s,s:s,s:s,s:s}", "time", time_json(e->t),
				   "time_unix_ms", (json_int_t)e->t, "kind", e->kind, "name",
				   e->name, "device", e->device, "detail", e->detail));
	}
	json_object_set_new(root, "activity", acts);
	json_object_set_new(root, "config_changes", chs);
	json_object_set_new(root, "events", evs);
	r = json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	fputc('\n', f);
	json_decref(root);
	return r ? -EIO : 0;
}

void report_free(struct report *rp)
{
	for (size_t i = 0; i < rp->n_tracks; i++) {
		free(rp->tracks[i].ep);
		free(rp->tracks[i].bucket);
	}
	free(rp->tracks);
	for (size_t i = 0; rp->cfg_last && i < rp->rd.n_series; i++)
		free(rp->cfg_last[i]);
	free(rp->cfg_last);
	for (size_t i = 0; i < rp->n_changes; i++) {
		free(rp->changes[i].old);
		free(rp->changes[i].new);
	}
	free(rp->changes);
	free(rp->events);
	free(rp->by_series);
	free(rp->polled);
	rec_close(&rp->rd);
}

int report_build(struct report *rp, const struct report_opts *o, char *err, size_t errlen)
{
	struct rec_scan_ops ops = { on_poll, on_sample, on_config, on_poll_end, on_progress };
	int r;

	rp->device = o->device;
	rp->width = o->width > 0 ? o->width : PM_DEFAULT_WIDTH;
	r = rec_open(&rp->rd, o->db, err, errlen);
	if (!r) {
		rp->rd.who = "rocewatch report";
		r = rec_load(&rp->rd, o->since_ms, o->until_ms, err, errlen);
	}
	if (r) {
		if (!err[0])
			snprintf(err, errlen, "%s", strerror(-r));
		return r;
	}
	for (size_t i = 0; i < rp->rd.n_polls; i++) {
		if (!rp->rd.polls[i].in_window)
			continue;
		if (!rp->n_window_polls++)
			rp->win_first = rp->rd.polls[i].t_ms;
		rp->win_last = rp->rd.polls[i].t_ms;
	}
	if (!rp->n_window_polls) {
		rp->win_first = o->since_ms == INT64_MIN ? o->now_ms : o->since_ms;
		rp->win_last = o->until_ms == INT64_MAX ? rp->win_first : o->until_ms;
	}
	rp->nb = rp->n_window_polls < REP_BUCKETS_MAX ? (int)rp->n_window_polls : REP_BUCKETS_MAX;
	if (rp->nb < 1)
		rp->nb = 1;
	rp->progress = o->progress;
	if (setup_tracks(rp))
		goto oom;
	r = rec_scan(&rp->rd, &ops, rp, err, errlen);
	if (!r && rec_events(&rp->rd, on_event, rp)) {
		snprintf(err, errlen, "%s: cannot read the events", rp->rd.path);
		r = -EIO;
	}
	rec_bad_summary(&rp->rd);
	if (r)
		return r;
	if (rp->oom)
		goto oom;
	if (rp->n_events)
		qsort(rp->events, rp->n_events, sizeof(*rp->events), cmp_event);
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -ENOMEM;
}

int report_write(const struct report *rp, bool json, FILE *f)
{
	size_t n_lines = 0;
	struct line *lines = collect_lines(rp, &n_lines);
	int r = 0;

	if (!lines)
		return -ENOMEM;
	if (json)
		r = write_json(rp, lines, n_lines, f);
	else
		write_text(rp, lines, n_lines, f);
	free(lines);
	return r;
}
