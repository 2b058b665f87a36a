// SPDX-License-Identifier: MIT
/* This machine's collectors as the source of the node model (model_source.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "model_source.h"
#include "util.h"
#include "vendors.h"

/* A collector that cannot start is tried again this long after. */
#define START_RETRY_NS ((int64_t)60e9)
/* The longest a failing collector is left alone. */
#define BACKOFF_MAX_NS ((int64_t)60e9)

struct live_source {
	struct model_source src;
	const struct rw_config *cfg;
	const struct collector *const *table;
	int n;
	int64_t (*now)(void);
	bool bound; /* the model's collector_status rows are ours */
	struct collector_ctx cc[RW_MAX_COLLECTORS];
	bool on[RW_MAX_COLLECTORS];	     /* enabled by configuration */
	bool ready[RW_MAX_COLLECTORS];	     /* init() succeeded */
	int64_t retry_ns[RW_MAX_COLLECTORS]; /* start retry or backoff: next attempt */
	/*
	 * The parts (COLLECT_*) of the runs that failed since the failure was
	 * logged: "collecting again" waits for a run of those parts, so a
	 * configuration poll that fails every time (a tree with no class/net)
	 * between fast polls that succeed is said once, not at every poll.
	 */
	unsigned failed_what[RW_MAX_COLLECTORS];
	/* the last collect(): what it ran, and the sources blanked by a failure in it */
	unsigned last_what;
	bool blanked[SRC__COUNT];
};

/* Name the model's collector rows and hand it the collectors' obj_free (once). */
static void live_bind(struct live_source *ls, struct node_model *m)
{
	if (ls->bound)
		return;
	for (int i = 0; i < ls->n; i++) {
		struct collector_status *cs = &m->coll[i];

		strlcpy0(cs->name, ls->table[i]->name, sizeof(cs->name));
		cs->enabled = ls->on[i];
		m->obj_free_cb[i] = ls->table[i]->obj_free;
	}
	ls->bound = true;
}

/* What failed, in the collector's words if it gave any. */
static void set_detail(struct collector_status *cs, const struct collector_ctx *cc, int r)
{
	strlcpy0(cs->detail, cc->detail[0] ? cc->detail : strerror(-r), sizeof(cs->detail));
}

/*
 * Start (or retry) collector i; one that cannot start is retried after
 * START_RETRY_NS.  warn: log the failure (once); start() reports it itself.
 */
static bool collector_ready(struct live_source *ls, struct node_model *m, int i, int64_t now,
			    bool warn)
{
	const struct collector *c = ls->table[i];
	struct collector_status *cs = &m->coll[i];
	int r;

	if (ls->ready[i])
		return true;
	if (now < ls->retry_ns[i])
		return false;
	ls->cc[i].detail[0] = '\0';
	r = c->init ? c->init(&ls->cc[i]) : 0;
	if (!r) {
		ls->ready[i] = true;
		return true;
	}
	if (c->fini)
		c->fini(&ls->cc[i]);
	cs->err = r;
	cs->ran = true;
	cs->failures++;
	set_detail(cs, &ls->cc[i], r);
	if (warn)
		rw_log_once(LOG_LVL_WARN, c->name, "%s: cannot start: %s", c->name, cs->detail);
	ls->retry_ns[i] = now + START_RETRY_NS;
	return false;
}

static int live_start(struct model_source *src, struct node_model *m, char *err, size_t errlen)
{
	struct live_source *ls = (struct live_source *)src;
	int64_t now = ls->now();

	live_bind(ls, m);
	/*
	 * Those asked for by name first: failing to start is the user's error
	 * to see now, in one line, before anything else has started or logged.
	 */
	for (int i = 0; i < ls->n; i++) {
		if (!ls->on[i] || ls->cfg->collector_enable[i] <= 0 ||
		    collector_ready(ls, m, i, now, false))
			continue;
		snprintf(err, errlen, "%s: cannot start: %s", ls->table[i]->name,
			 m->coll[i].detail);
		return m->coll[i].err < 0 ? m->coll[i].err : -EIO;
	}
	for (int i = 0; i < ls->n; i++)
		if (ls->on[i])
			collector_ready(ls, m, i, now, true);
	return 0;
}

/* Back off a collector that keeps failing: 2, 4, 8 ... polls, at most BACKOFF_MAX_NS. */
static int64_t backoff_ns(const struct live_source *ls, uint64_t failures)
{
	int shift = failures < 6 ? (int)failures : 6;
	int64_t delay = ls->cfg->interval_ns << shift;

	return delay > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : delay;
}

static void run_collector(struct live_source *ls, struct node_model *m, int i, unsigned what)
{
	const struct collector *c = ls->table[i];
	struct collector_status *cs = &m->coll[i];
	int64_t t0 = ls->now(), t1;
	int r;

	ls->cc[i].detail[0] = '\0';
	r = c->collect(&ls->cc[i], m, what);
	t1 = ls->now();
	cs->duration = (double)(t1 - t0) / 1e9;
	cs->ran = true;
	cs->err = r;
	if (!r) {
		if (ls->failed_what[i] && (what & ls->failed_what[i]) == ls->failed_what[i]) {
			log_info("%s: collecting again", c->name);
			ls->failed_what[i] = 0;
			rw_log_once_reset(c->name);
		}
		cs->failures = 0;
		cs->detail[0] = '\0';
		return;
	}
	ls->failed_what[i] |= what;
	set_detail(cs, &ls->cc[i], r);
	/* What it filled last time is not true now, and backing off keeps it from refilling. */
	collector_blank(c, m, r);
	ls->blanked[c->source] = true;
	cs->failures++;
	ls->retry_ns[i] = t1 + backoff_ns(ls, cs->failures);
	rw_log_once(LOG_LVL_WARN, c->name, "%s: %s (backing off; said once)", c->name, cs->detail);
}

static int live_collect(struct model_source *src, struct node_model *m, unsigned what)
{
	struct live_source *ls = (struct live_source *)src;
	int64_t now = ls->now();

	live_bind(ls, m);
	ls->last_what = what;
	memset(ls->blanked, 0, sizeof(ls->blanked));
	for (int i = 0; i < ls->n; i++) {
		if (!ls->on[i] || !collector_ready(ls, m, i, now, true))
			continue;
		if (m->coll[i].failures && now < ls->retry_ns[i])
			continue;
		run_collector(ls, m, i, what);
	}
	/* pause counters from dcbnl where the driver has no names of its own */
	vendor_fill_netdevs(m);
	return 0;
}

static void live_running(const struct model_source *src, bool running[RW_MAX_COLLECTORS])
{
	const struct live_source *ls = (const struct live_source *)src;

	for (int i = 0; i < ls->n; i++)
		running[i] = ls->ready[i];
}

static int live_event_fds(struct model_source *src, int *fds, int *idx, int max)
{
	struct live_source *ls = (struct live_source *)src;
	int n = 0;

	for (int i = 0; i < ls->n && n < max; i++) {
		int fd;

		if (!ls->ready[i] || !ls->table[i]->event_fd)
			continue;
		fd = ls->table[i]->event_fd(&ls->cc[i]);
		if (fd < 0)
			continue;
		fds[n] = fd;
		idx[n++] = i;
	}
	return n;
}

static bool live_event(struct model_source *src, int idx)
{
	struct live_source *ls = (struct live_source *)src;

	return ls->table[idx]->event(&ls->cc[idx]) > 0;
}

static void live_changed(const struct model_source *src, bool changed[F__COUNT])
{
	const struct live_source *ls = (const struct live_source *)src;

	for (int f = 0; f < F__COUNT; f++)
		changed[f] = (ls->last_what & COLLECT_SLOW) || field_fast((enum field_id)f) ||
			     ls->blanked[fields[f].src];
}

/* Which objects the model holds, as one number: names in model order. */
static uint64_t objects_hash(const struct node_model *m)
{
	uint64_t h = fnv1a(&m->n_netdevs, sizeof(m->n_netdevs), FNV1A_INIT);

	for (size_t i = 0; i < m->n_netdevs; i++)
		h = fnv1a(m->netdevs[i]->name, strlen(m->netdevs[i]->name) + 1, h);
	h = fnv1a(&m->n_ports, sizeof(m->n_ports), h);
	for (size_t i = 0; i < m->n_ports; i++) {
		h = fnv1a(m->ports[i]->name, strlen(m->ports[i]->name) + 1, h);
		h = fnv1a(&m->ports[i]->port, sizeof(m->ports[i]->port), h);
	}
	return h;
}

static int live_refresh(struct model_source *src, struct node_model *m, int idx,
			bool changed[F__COUNT])
{
	struct live_source *ls = (struct live_source *)src;
	const struct collector *c = ls->table[idx];
	unsigned srcs = c->event_sources ? c->event_sources : 1u << c->source;
	uint64_t before = objects_hash(m);
	int64_t now = ls->now();

	live_bind(ls, m);
	for (int i = 0; i < ls->n; i++) {
		if (!(srcs & (1u << ls->table[i]->source)) || !ls->on[i] || !ls->ready[i])
			continue;
		if (m->coll[i].failures && now < ls->retry_ns[i])
			continue;
		run_collector(ls, m, i, COLLECT_SLOW);
	}
	for (int f = 0; f < F__COUNT; f++)
		changed[f] = (srcs >> fields[f].src) & 1;
	/* the same objects: the daemon links their ports again */
	return objects_hash(m) != before;
}

/* After the model is freed: objects' per-collector state goes through obj_free, not fini. */
static void live_close(struct model_source *src)
{
	struct live_source *ls = (struct live_source *)src;

	for (int i = 0; i < ls->n; i++)
		if (ls->ready[i] && ls->table[i]->fini)
			ls->table[i]->fini(&ls->cc[i]);
	free(ls);
}

int live_source_open(struct model_source **out, const struct rw_config *cfg,
		     const struct collector *const *table, int n, int64_t (*now)(void), char *err,
		     size_t errlen)
{
	struct live_source *ls;

	if (n < 0 || n > RW_MAX_COLLECTORS) {
		snprintf(err, errlen, "%d collectors: at most %d", n, RW_MAX_COLLECTORS);
		return -EINVAL;
	}
	ls = calloc(1, sizeof(*ls));
	if (!ls) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ls->src = (struct model_source){ .name = "live",
					 .start = live_start,
					 .collect = live_collect,
					 .running = live_running,
					 .event_fds = live_event_fds,
					 .event = live_event,
					 .refresh = live_refresh,
					 .changed = live_changed,
					 .close = live_close };
	ls->cfg = cfg;
	ls->table = table;
	ls->n = n;
	ls->now = now ? now : mono_ns;
	for (int i = 0; i < n; i++) {
		ls->on[i] = cfg->collector_enable[i] < 0 ? table[i]->default_enabled
							 : cfg->collector_enable[i] > 0;
		ls->cc[i].cfg = cfg;
		ls->cc[i].idx = i;
	}
	*out = &ls->src;
	return 0;
}
