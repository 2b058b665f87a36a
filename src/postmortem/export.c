// SPDX-License-Identifier: MIT
/*
 * rocewatch export --format openmetrics: a recording or capture as
 * OpenMetrics text (https://prometheus.io/docs/specs/om/open_metrics_spec/)
 * that `promtool tsdb create-blocks-from openmetrics` turns into TSDB blocks,
 * so an incident can be looked at in Prometheus/Grafana at full resolution.
 *
 * Names and labels are those of /metrics: counter-set series are named by
 * cset_metric(), the function prom.c names them with, field series from the
 * same field_desc rows (tests/unit/test_recorder.c checks both agree), and
 * configuration is rebuilt into a node model and rendered by prom.c itself.
 * OpenMetrics wants a counter family named without its _total suffix and
 * every family's samples together; timestamps are in seconds.
 *
 * The recording stores a value only when it changes; PromQL looks back only
 * 5 minutes for a sample, so a value that stays the same is repeated every
 * REFRESH_MS, at a real poll of the recording (a gap stays a gap).  A series
 * that ends (a port state left, a counter gone absent, a rule outcome that
 * changed) gets a NaN sample where it ended: a scrape would have marked it
 * stale there, and OpenMetrics has no staleness marker, so without it
 * PromQL would carry the last value 5 minutes on (a 16 s DOWN shown as 5
 * minutes of DOWN).  NaN is no value to PromQL's comparisons and graphs.
 *
 * Every sample carries instance and job, as a scrape adds them; with rules
 * (as replay runs them) roce_rule_result, roce_rules_status and the alerts
 * are rendered per poll as serve renders them; rocewatch_build_info (of the
 * exporting binary, prom.c renders it) is kept so a dashboard's instance list
 * finds the node.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "bounded.h"
#include "engine.h"
#include "export.h"
#include "prom.h"
#include "prom_rules.h"
#include "recording.h"
#include "rules_stage.h"
#include "strmap.h"
#include "util.h"

#define REFRESH_MS 120000

struct family {
	char *name; /* as /metrics names it */
	const char *type;
	char *help;
	bool config; /* from the configuration render */
	bool written;
};

struct cfg_entry {
	int fam;
	char *key; /* sample name + labels, as rendered */
	char last[64];
	bool live;
	int64_t last_emit;
	size_t n, cap;
	struct cfg_sample {
		int64_t t;
		char v[40];
	} * s;
};

struct xport {
	struct rec_reader rd;
	FILE *f;
	struct family *fams;
	size_t n_fams, cap_fams;
	struct strmap fam_map;
	int *series_fam;      /* by series id: family, -1 not exported */
	char **series_labels; /* by series id */
	double *series_scale; /* by series id: 0 = integer as recorded */
	int64_t win_first, win_last;
	size_t first_poll; /* index of the first in-window poll */
	/* configuration: rebuilt model, rendered by prom.c */
	struct node_model m;
	struct prom_renderer pr;
	struct strbuf text;
	bool dirty, failed, warned;
	int64_t last_render;
	struct strmap cfg_map;
	struct cfg_entry *ents;
	size_t n_ents, cap_ents;
	uint64_t lines;
	char err[512];
	/* instance="...",job="..." (escaped), put first in every sample's labels */
	struct strbuf base;
	/* the rules, over a model of counters and configuration (replay's) */
	struct rules_engine *e;
	struct node_model rm;
	struct alert_table at;
};

/* ---- families ---- */

static int family(struct xport *x, const char *name, const char *type, const char *help,
		  bool config)
{
	int64_t i = strmap_get(&x->fam_map, name);
	struct family *f;

	if (i >= 0)
		return x->fams[i].config == config ? (int)i : -1;
	if (array_grow(&x->fams, &x->cap_fams, x->n_fams, sizeof(*x->fams), 64))
		return -1;
	f = &x->fams[x->n_fams];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->help = strdup(help ? help : "");
	f->type = type;
	f->config = config;
	if (!f->name || !f->help || strmap_put(&x->fam_map, name, (int64_t)x->n_fams))
		return -1;
	return (int)x->n_fams++;
}

static size_t suffix_len(const char *name, const char *sfx)
{
	size_t n = strlen(name), k = strlen(sfx);

	return n > k && !strcmp(name + n - k, sfx) ? k : 0;
}

/* "# TYPE" and "# HELP" in OpenMetrics spelling, once, before the first sample. */
static void family_header(struct xport *x, struct family *f)
{
	size_t cut = 0;
	const char *type = f->type;

	if (f->written)
		return;
	f->written = true;
	if (!strcmp(type, "counter")) {
		cut = suffix_len(f->name, "_total");
		if (!cut)
			type = "unknown"; /* an OpenMetrics counter's samples must end in _total */
	} else if (strcmp(type, "gauge")) {
		type = "unknown"; /* untyped */
	}
	fprintf(x->f, "# TYPE %.*s %s\n# HELP %.*s ", (int)(strlen(f->name) - cut), f->name, type,
		(int)(strlen(f->name) - cut), f->name);
	/* OpenMetrics escapes backslash, newline and double quote in HELP */
	for (const char *p = f->help; *p; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', x->f);
		if (*p == '\n')
			fputs("\\n", x->f);
		else
			fputc(*p, x->f);
	}
	fputc('\n', x->f);
}

/* labels: "" or "{a=\"b\"}"; instance and job go first. */
static void sample_line(struct xport *x, const char *name, const char *labels, const char *v,
			int64_t t_ms)
{
	/* OpenMetrics timestamps are seconds; t_ms is never negative here. */
	/* base.buf is "{instance=...,job=..." (prom_label opens the set) */
	fprintf(x->f, "%s%s%s%s %s %" PRId64 ".%03" PRId64 "\n", name, x->base.buf,
		labels[0] ? "," : "}", labels[0] ? labels + 1 : "", v, t_ms / 1000, t_ms % 1000);
	x->lines++;
}

/* ---- counter series: named as prom.c names them ---- */

static void object_of(const struct xport *x, struct object *o, const struct rec_series *s)
{
	memset(o, 0, sizeof(*o));
	o->kind = s->kind;
	strlcpy0(o->name, s->device, sizeof(o->name));
	o->port = s->port;
	/* a netdev's RDMA device, as model_link_ports() names it: the first bound port's */
	for (size_t i = 0; s->kind == OBJ_NETDEV && i < x->rd.n_series; i++) {
		const struct rec_series *p = &x->rd.series[i];

		if (p->used && p->kind == OBJ_RDMA_PORT && !strcmp(p->netdev, s->device) &&
		    (!o->rdma_dev[0] || strcmp(p->device, o->rdma_dev) < 0))
			strlcpy0(o->rdma_dev, p->device, sizeof(o->rdma_dev));
	}
	if (s->kind == OBJ_RDMA_PORT) {
		o->f[F_PORT_NETDEV].state = ABS_NONE;
		strlcpy0(o->f[F_PORT_NETDEV].v.s, s->netdev, sizeof(o->f[F_PORT_NETDEV].v.s));
	} else {
		o->f[F_PORT_NETDEV].state = ABS_NOT_COLLECTED;
	}
}

static int map_series(struct xport *x, const struct rec_series *s, struct object *o)
{
	struct strbuf name = { 0 }, lab = { 0 };
	const char *type = "counter", *help = NULL;
	struct cset_metric cm;
	double scale = 0;
	int first = 1, fam;

	x->series_fam[s->id] = -1;
	if (s->config)
		return 0;
	if (s->src == REC_FIELD) {
		const struct field_desc *d;

		if (s->field < 0)
			return 0;
		d = &fields[s->field];
		if (d->mtype == MT_NONE || !d->metric)
			return 0; /* not on /metrics either */
		sb_puts(&name, d->metric);
		type = d->mtype == MT_COUNTER ? "counter" : "gauge";
		help = d->help;
		/* A family's HELP sits on its first row in fields.c. */
		for (int i = s->field; !help && i > 0 && fields[i - 1].metric &&
				       !strcmp(fields[i - 1].metric, d->metric);
		     i--)
			help = fields[i - 1].help;
		scale = d->scale;
		object_of(x, o, s);
		prom_object_labels(&lab, &first, o);
		if (d->labels && *d->labels) {
			sb_putc(&lab, first ? '{' : ',');
			first = 0;
			sb_puts(&lab, d->labels);
		}
		if (d->type == VT_PRIO_ARRAY && s->prio >= 0) {
			char p[16];

			snprintf(p, sizeof(p), "%d", s->prio);
			prom_label(&lab, &first, d->label, p);
		}
		if (d->type == VT_FLOAT && !scale)
			scale = 1; /* print as a number, not as stored bits */
	} else {
		/* named by the function /metrics names them with */
		if (cset_metric(&name, (enum cset_id)rec_source_cset(s->src), s->name, &cm)) {
			sb_free(&name);
			return 0; /* DCQCN parameters: configuration, rendered with it */
		}
		type = cm.type;
		help = cm.help;
		scale = cm.scale;
		object_of(x, o, s);
		prom_object_labels(&lab, &first, o);
	}
	if (!first)
		sb_putc(&lab, '}');
	if (name.oom || lab.oom) {
		sb_free(&name);
		sb_free(&lab);
		return -ENOMEM;
	}
	fam = family(x, name.buf, type, help, false);
	sb_free(&name);
	if (fam < 0) {
		sb_free(&lab);
		return -ENOMEM;
	}
	x->series_fam[s->id] = fam;
	x->series_labels[s->id] = lab.buf ? lab.buf : strdup("");
	x->series_scale[s->id] = scale;
	return x->series_labels[s->id] ? 0 : -ENOMEM;
}

/* First poll at or after t (index), or n_polls. */
static size_t poll_at_or_after(const struct xport *x, int64_t t)
{
	size_t lo = x->first_poll, hi = x->rd.n_polls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->rd.polls[mid].t_ms < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct cstate {
	int64_t id;
	bool have, emitted;
	char val[48];
	int64_t last_emit;
};

static void cs_emit(struct xport *x, struct cstate *c, int64_t t)
{
	struct family *f = &x->fams[x->series_fam[c->id]];

	family_header(x, f);
	sample_line(x, f->name, x->series_labels[c->id], c->val, t);
	c->last_emit = t;
	c->emitted = true;
}

/* Repeat the current value at polls every REFRESH_MS in (last_emit, to). */
static void cs_fill(struct xport *x, struct cstate *c, int64_t to)
{
	size_t i;

	if (!c->have || !c->emitted)
		return;
	for (i = poll_at_or_after(x, c->last_emit + REFRESH_MS);
	     i < x->rd.n_polls && x->rd.polls[i].t_ms < to;
	     i = poll_at_or_after(x, x->rd.polls[i].t_ms + REFRESH_MS))
		cs_emit(x, c, x->rd.polls[i].t_ms);
}

static void cs_finish(struct xport *x, struct cstate *c)
{
	if (c->id <= 0 || !c->have)
		return;
	if (!c->emitted)
		cs_emit(x, c, x->win_first); /* carried in from before the window */
	cs_fill(x, c, x->win_last);
	if (c->last_emit < x->win_last)
		cs_emit(x, c, x->win_last); /* the value held to the end */
}

static void format_value(const struct xport *x, int64_t id, sqlite3_stmt *st, int col, char *buf,
			 size_t len)
{
	double scale = x->series_scale[id];

	if (sqlite3_column_type(st, col) == SQLITE_FLOAT) {
		struct strbuf sb = { 0 };

		sb_double(&sb, sqlite3_column_double(st, col) * (scale ? scale : 1));
		snprintf(buf, len, "%s", sb.buf ? sb.buf : "NaN");
		sb_free(&sb);
	} else if (scale) {
		struct strbuf sb = { 0 };

		sb_double(&sb, (double)(uint64_t)sqlite3_column_int64(st, col) * scale);
		snprintf(buf, len, "%s", sb.buf ? sb.buf : "NaN");
		sb_free(&sb);
	} else {
		snprintf(buf, len, "%" PRIu64, (uint64_t)sqlite3_column_int64(st, col));
	}
}

static int cmp_series_rank(const void *a, const void *b, void *arg)
{
	const struct xport *x = arg;
	int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
	int r = strcmp(x->fams[x->series_fam[i]].name, x->fams[x->series_fam[j]].name);

	return r ? r : strcmp(x->series_labels[i], x->series_labels[j]);
}

/*
 * All counter samples, family by family: a temporary table ranks the series
 * in output order and SQLite's sorter (on disk when large) orders the rows.
 */
static int export_counters(struct xport *x)
{
	sqlite3 *db = x->rd.db;
	sqlite3_stmt *ins = NULL, *st = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	struct cstate c = { 0 };
	int rc = -EIO, r;

	ids = calloc(x->rd.n_series ? x->rd.n_series : 1, sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < x->rd.n_series; i++)
		if (x->rd.series[i].used && x->series_fam[i] >= 0)
			ids[n++] = (int64_t)i;
	qsort_r(ids, n, sizeof(*ids), cmp_series_rank, x);
	if (sqlite3_exec(db, "CREATE TEMP TABLE xrank (id INTEGER PRIMARY KEY, rank INTEGER)", NULL,
			 NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO temp.xrank VALUES (?1, ?2)", -1, &ins, NULL) !=
		SQLITE_OK)
		goto sql_err;
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(ins, 1, ids[i]);
		sqlite3_bind_int64(ins, 2, (int64_t)i);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto sql_err;
		sqlite3_reset(ins);
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	if (!x->rd.n_polls) {
		rc = 0;
		goto out;
	}
	if (sqlite3_prepare_v2(db,
			       "SELECT s.series_id, s.t_ms, s.value FROM main.samples s"
			       " JOIN temp.xrank k ON k.id = s.series_id"
			       " WHERE s.t_ms >= ?1 AND s.t_ms <= ?2 ORDER BY k.rank, s.t_ms",
			       -1, &st, NULL) != SQLITE_OK)
		goto sql_err;
	sqlite3_bind_int64(st, 1, x->rd.polls[0].t_ms);
	sqlite3_bind_int64(st, 2, x->win_last);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0), t = sqlite3_column_int64(st, 1);

		if (id != c.id) {
			cs_finish(x, &c);
			c = (struct cstate){ .id = id };
		}
		if (sqlite3_column_type(st, 2) == SQLITE_TEXT ||
		    sqlite3_column_type(st, 2) == SQLITE_BLOB ||
		    (sqlite3_column_type(st, 2) == SQLITE_FLOAT &&
		     !isfinite(sqlite3_column_double(st, 2)))) {
			char v[96];
			const char *q = (const char *)sqlite3_column_text(st, 2);

			rec_bad(&x->rd,
				"sample at %" PRId64 " of series %" PRId64
				" (%s %s): value '%s' is no number",
				t, id, x->rd.series[id].device, x->rd.series[id].name,
				text_escape_ctl_n(q ? q : "",
						  q ? (size_t)sqlite3_column_bytes(st, 2) : 0, v,
						  sizeof(v)));
			continue;
		}
		if (sqlite3_column_type(st, 2) == SQLITE_NULL) {
			/* went absent: keep repeating only up to here, and end it there */
			if (t > x->win_first)
				cs_fill(x, &c, t);
			if (c.have && c.emitted && t >= x->win_first && t <= x->win_last) {
				strlcpy0(c.val, "NaN", sizeof(c.val));
				cs_emit(x, &c, t);
			}
			c.have = false;
			c.emitted = false;
			continue;
		}
		if (t < x->win_first) {
			format_value(x, id, st, 2, c.val, sizeof(c.val));
			c.have = true;
			continue;
		}
		if (c.have && !c.emitted && t > x->win_first)
			cs_emit(x, &c, x->win_first);
		cs_fill(x, &c, t);
		format_value(x, id, st, 2, c.val, sizeof(c.val));
		c.have = true;
		cs_emit(x, &c, t);
	}
	if (r != SQLITE_DONE)
		goto sql_err;
	cs_finish(x, &c);
	rc = 0;
	goto out;
sql_err:
	snprintf(x->err, sizeof(x->err), "%.300s: %s", x->rd.path, sqlite3_errmsg(db));
out:
	sqlite3_finalize(ins);
	sqlite3_finalize(st);
	free(ids);
	return rc;
}

/* ---- configuration: rebuild, render with prom.c, keep what changed ---- */

static void on_config(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const char *json, const char *absent)
{
	struct xport *x = arg;
	char err[256];

	(void)p;
	if (x->e)
		rec_model_config(&x->rm, s, json, absent, err, sizeof(err));
	if (rec_model_config(&x->m, s, json, absent, err, sizeof(err)) && !x->warned) {
		/* A value this build cannot read (a newer rocewatch's): say so once, go on. */
		x->warned = true;
		fprintf(stderr, "rocewatch export: %s: %s: %s (skipped)\n", x->rd.path, s->name,
			err);
	}
	x->dirty = true;
}

static struct cfg_entry *cfg_entry(struct xport *x, const char *key, int fam)
{
	int64_t i = strmap_get(&x->cfg_map, key);
	struct cfg_entry *e;

	if (i >= 0)
		return &x->ents[i];
	if (array_grow(&x->ents, &x->cap_ents, x->n_ents, sizeof(*x->ents), 256))
		return NULL;
	e = &x->ents[x->n_ents];
	memset(e, 0, sizeof(*e));
	e->fam = fam;
	e->key = strdup(key);
	if (!e->key || strmap_put(&x->cfg_map, key, (int64_t)x->n_ents))
		return NULL;
	x->n_ents++;
	return e;
}

static int cfg_push(struct cfg_entry *e, int64_t t, const char *v)
{
	if (array_grow(&e->s, &e->cap, e->n, sizeof(*e->s), 8))
		return -ENOMEM;
	e->s[e->n].t = t;
	strlcpy0(e->s[e->n].v, v, sizeof(e->s[e->n].v));
	e->n++;
	e->last_emit = t;
	return 0;
}

/* Parse our own exposition: "# HELP", "# TYPE", and NAME{LABELS} VALUE lines. */
static void take_render(struct xport *x, int64_t t, bool refresh)
{
	char *line = x->text.buf, *nl;
	char type[16] = "", help[512] = "";
	int fam = -1;

	for (size_t i = 0; i < x->n_ents; i++)
		x->ents[i].live = false;
	for (; line && *line; line = nl ? nl + 1 : NULL) {
		char *sp, *brace, *val;
		struct cfg_entry *e;
		bool changed;

		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(line, "# HELP ", 7)) {
			char *name = line + 7, *h = strchr(name, ' ');

			snprintf(help, sizeof(help), "%s", h ? h + 1 : "");
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			char *name = line + 7, *ty = strchr(name, ' ');

			if (!ty)
				continue;
			*ty++ = '\0';
			snprintf(type, sizeof(type), "%s", ty);
			fam = -1;
			/* the exporter's own families, but for the one a dashboard lists nodes by
			 */
			if (strncmp(name, "rocewatch_", 10) ||
			    !strcmp(name, "rocewatch_build_info"))
				fam = family(x, name,
					     !strcmp(type, "counter") ? "counter"
					     : !strcmp(type, "gauge") ? "gauge"
								      : "untyped",
					     help, true);
			help[0] = '\0';
			continue;
		}
		if (fam < 0 || line[0] == '#' || !line[0])
			continue;
		/* the value follows the last space outside the label set */
		brace = strchr(line, '{');
		sp = brace ? strrchr(line, '}') : strchr(line, ' ');
		if (!sp || !(val = strchr(sp, ' ')))
			continue;
		*val++ = '\0';
		e = cfg_entry(x, line, fam);
		if (!e) {
			x->failed = true;
			continue;
		}
		e->live = true;
		changed = strcmp(e->last, val) != 0 || !e->n;
		if (changed || refresh || t - e->last_emit >= REFRESH_MS) {
			if (cfg_push(e, t, val))
				x->failed = true;
			strlcpy0(e->last, val, sizeof(e->last));
		}
	}
	for (size_t i = 0; i < x->n_ents; i++) {
		struct cfg_entry *e = &x->ents[i];

		if (e->live)
			continue;
		/* gone: ends here (a scrape's staleness); a comeback is a new sample */
		if (e->last[0] && cfg_push(e, t, "NaN"))
			x->failed = true;
		e->last[0] = '\0';
	}
}

static void on_sample(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const struct rec_value *v)
{
	struct xport *x = arg;

	(void)p;
	rec_model_sample(&x->rm, s, v);
}

/*
 * The rules at this poll, through serve's and replay's rules stage (the
 * polls before the window too: history).  Export reads the recording once
 * for two models, this one and the one it renders, so it rebuilds this one
 * itself rather than through the recording source.
 */
static void evaluate(struct xport *x, const struct rec_poll *p)
{
	const struct rules_stage st = { .e = x->e, .alerts = &x->at };
	const struct rules_pass pass = { .now_ns = p->t_ms * 1000000 };

	rec_model_sweep(&x->rm);
	model_link_ports(&x->rm);
	x->rm.time = ns_ts(p->t_ms * 1000000LL);
	rules_stage_run(&st, &x->rm, &pass); /* out of memory: the results stay as they were */
}

static void on_poll_end(void *arg, const struct rec_poll *p)
{
	struct xport *x = arg;
	bool first = p->in_window && (x->last_render < x->win_first);
	bool last = p->t_ms == x->win_last;
	struct prom_input in = { .m = &x->m };

	if (x->e)
		evaluate(x, p);
	if (!p->in_window)
		return;
	/* rule results may change at any poll: with rules, every poll is looked at */
	if (!x->e && !x->dirty && !first && !last && p->t_ms - x->last_render < REFRESH_MS)
		return;
	model_link_ports(&x->m);
	if (prom_render(&x->pr, &x->text, &in)) {
		x->failed = true;
		return;
	}
	if (x->e) {
		prom_rules_render(&x->text, x->e, NULL);
		prom_alerts_render(&x->text, &x->at);
	}
	if (x->text.oom) {
		x->failed = true;
		return;
	}
	take_render(x, p->t_ms, first || last);
	x->last_render = p->t_ms;
	x->dirty = false;
}

static int cmp_ent(const void *a, const void *b, void *arg)
{
	const struct xport *x = arg;
	const struct cfg_entry *e = a, *f = b;
	int r = strcmp(x->fams[e->fam].name, x->fams[f->fam].name);

	return r ? r : strcmp(e->key, f->key);
}

static void write_config(struct xport *x)
{
	if (x->n_ents)
		qsort_r(x->ents, x->n_ents, sizeof(*x->ents), cmp_ent, x);
	for (size_t i = 0; i < x->n_ents; i++) {
		struct cfg_entry *e = &x->ents[i];
		struct family *f = &x->fams[e->fam];

		if (!e->n)
			continue;
		const char *brace = strchr(e->key, '{');
		char name[256];

		family_header(x, f);
		snprintf(name, sizeof(name), "%.*s", (int)(brace ? brace - e->key : 255), e->key);
		for (size_t k = 0; k < e->n; k++)
			sample_line(x, name, brace ? brace : "", e->s[k].v, e->s[k].t);
	}
}

static void xport_free(struct xport *x)
{
	for (size_t i = 0; i < x->n_fams; i++) {
		free(x->fams[i].name);
		free(x->fams[i].help);
	}
	free(x->fams);
	for (size_t i = 0; x->series_labels && i < x->rd.n_series; i++)
		free(x->series_labels[i]);
	free(x->series_labels);
	free(x->series_fam);
	free(x->series_scale);
	for (size_t i = 0; i < x->n_ents; i++) {
		free(x->ents[i].key);
		free(x->ents[i].s);
	}
	free(x->ents);
	strmap_free(&x->fam_map);
	strmap_free(&x->cfg_map);
	model_free(&x->m);
	model_free(&x->rm);
	alerts_free(&x->at);
	sb_free(&x->base);
	prom_renderer_free(&x->pr);
	sb_free(&x->text);
	rec_close(&x->rd);
}

int export_open(struct xport **out, const struct export_opts *o, char *err, size_t errlen)
{
	struct xport *x = calloc(1, sizeof(*x));
	int r;

	*out = x;
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	model_init(&x->m);
	model_init(&x->rm);
	alerts_init(&x->at);
	x->e = o->e;
	r = rec_open(&x->rd, o->db, x->err, sizeof(x->err));
	if (!r) {
		x->rd.who = "rocewatch export";
		r = rec_load(&x->rd, o->since_ms, o->until_ms, x->err, sizeof(x->err));
	}
	if (r) {
		snprintf(err, errlen, "%s", x->err[0] ? x->err : strerror(-r));
		return r;
	}
	x->first_poll = x->rd.n_polls;
	for (size_t i = 0; i < x->rd.n_polls; i++)
		if (x->rd.polls[i].in_window) {
			if (x->first_poll == x->rd.n_polls) {
				x->first_poll = i;
				x->win_first = x->rd.polls[i].t_ms;
			}
			x->win_last = x->rd.polls[i].t_ms;
		}
	x->last_render = INT64_MIN / 2;
	{
		int first = 1;

		prom_label(&x->base, &first, "instance",
			   o->instance	   ? o->instance
			   : x->rd.host[0] ? x->rd.host
					   : "unknown");
		prom_label(&x->base, &first, "job", o->job ? o->job : "rocewatch");
		if (x->base.oom) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}

int export_write(struct xport *x, FILE *f, char *err, size_t errlen)
{
	struct rec_scan_ops ops = { .sample = x->e ? on_sample : NULL,
				    .config = on_config,
				    .poll_end = on_poll_end };
	size_t n = x->rd.n_series ? x->rd.n_series : 1;
	struct object *tmp = malloc(sizeof(*tmp));
	int r = 0;

	x->series_fam = calloc(n, sizeof(*x->series_fam));
	x->series_labels = calloc(n, sizeof(*x->series_labels));
	x->series_scale = calloc(n, sizeof(*x->series_scale));
	if (!x->series_fam || !x->series_labels || !x->series_scale || !tmp)
		goto oom;
	for (size_t i = 0; i < x->rd.n_series; i++) {
		x->series_fam[i] = -1;
		if (x->rd.series[i].used && map_series(x, &x->rd.series[i], tmp))
			goto oom;
	}
	x->f = f;
	if (x->first_poll < x->rd.n_polls) {
		r = export_counters(x);
		if (!r)
			r = rec_scan(&x->rd, &ops, x, x->err, sizeof(x->err));
		if (r) {
			snprintf(err, errlen, "%s", x->err);
			goto out;
		}
		if (x->failed)
			goto oom;
		write_config(x);
	}
	fputs("# EOF\n", x->f);
	rec_bad_summary(&x->rd);
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
	r = -ENOMEM;
out:
	x->f = NULL;
	free(tmp);
	return r;
}

void export_free(struct xport *x)
{
	if (!x)
		return;
	xport_free(x);
	free(x);
}
