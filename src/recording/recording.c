// SPDX-License-Identifier: MIT
/*
 * The reading side of a recording (the schema is src/recording/recording_schema.c).
 * Samples are keyed by (t_ms, series_id) so a poll's rows are one contiguous
 * run of the B-tree: appending a poll and deleting the oldest ones touch only
 * the two ends, and a reader walks a time window in key order without sorting.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bounded.h"
#include "recording.h"
#include "snapshot.h"
#include "util.h"

int rec_open(struct rec_reader *r, const char *arg, char *err, size_t errlen)
{
	char buf[64];
	int rc;

	memset(r, 0, sizeof(*r));
	if (rec_db_path(arg, r->path, sizeof(r->path))) {
		snprintf(err, errlen, "%s: path too long", arg);
		return -ENAMETOOLONG;
	}
	if (access(r->path, R_OK)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", r->path, strerror(errno));
		return rc;
	}
	/*
	 * Read-only, but not immutable: serve may be appending right now, and WAL
	 * lets this reader see a consistent snapshot while it does.
	 */
	rc = sqlite3_open_v2(r->path, &r->db, SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", r->path,
			 r->db ? sqlite3_errmsg(r->db) : "cannot open");
		rec_close(r);
		return -EIO;
	}
	sqlite3_busy_timeout(r->db, 5000);
	if (rec_q_int(r->db, "SELECT count(*) FROM sqlite_master", -1) < 0) {
		snprintf(err, errlen, "%s: not an SQLite database (%s)", r->path,
			 sqlite3_errmsg(r->db));
		rec_close(r);
		return -EINVAL;
	}
	rc = rec_check_schema(r->db, r->path, err, errlen);
	if (rc) {
		rec_close(r);
		return rc;
	}
	rec_q_meta(r->db, "host", r->host, sizeof(r->host));
	rec_q_meta(r->db, "capture_reason", r->capture_reason, sizeof(r->capture_reason));
	rec_q_meta(r->db, "capture_trigger_ms", buf, sizeof(buf));
	if (buf[0])
		parse_i64(buf, &r->capture_trigger_ms);
	{
		sqlite3_stmt *st;

		if (!r->host[0] &&
		    sqlite3_prepare_v2(r->db, "SELECT host FROM runs ORDER BY run DESC LIMIT 1", -1,
				       &st, NULL) == SQLITE_OK) {
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
				strlcpy0(r->host, (const char *)sqlite3_column_text(st, 0),
					 sizeof(r->host));
			sqlite3_finalize(st);
		}
	}
	/* shown on the terminal and in reports: no control bytes */
	if (text_has_ctl(r->host)) {
		char tmp[sizeof(r->host)];

		strlcpy0(r->host, text_escape_ctl(r->host, tmp, sizeof(tmp)), sizeof(r->host));
	}
	if (text_has_ctl(r->capture_reason)) {
		char tmp[sizeof(r->capture_reason)];

		strlcpy0(r->capture_reason, text_escape_ctl(r->capture_reason, tmp, sizeof(tmp)),
			 sizeof(r->capture_reason));
	}
	if (r->capture_trigger_ms < 0 || r->capture_trigger_ms > REC_T_MAX_MS)
		r->capture_trigger_ms = 0;
	/* only the rows in range count; rec_load names the others */
	r->interval_ms = rec_q_int(r->db,
				   "SELECT max(interval_ms) FROM runs WHERE typeof(interval_ms) = "
				   "'integer' AND interval_ms BETWEEN 1 AND 86400000",
				   1000);
	r->first_ms = rec_q_int(r->db,
				"SELECT min(t_ms) FROM polls WHERE typeof(t_ms) = 'integer' AND "
				"t_ms BETWEEN 0 AND 9223372036854",
				0);
	r->last_ms = rec_q_int(r->db,
			       "SELECT max(t_ms) FROM polls WHERE typeof(t_ms) = 'integer' AND "
			       "t_ms BETWEEN 0 AND 9223372036854",
			       0);
	return 0;
}

void rec_bad(struct rec_reader *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (r->n_bad++ >= REC_BAD_SHOWN)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s; skipped\n", r->who ? r->who : "rocewatch", r->path, msg);
	if (r->n_bad == REC_BAD_SHOWN)
		fprintf(stderr, "%s: %s: more bad rows are skipped without a line each\n",
			r->who ? r->who : "rocewatch", r->path);
}

void rec_bad_summary(struct rec_reader *r)
{
	if (r->n_bad > REC_BAD_SHOWN)
		fprintf(stderr, "%s: %s: %" PRIu64 " bad rows skipped in all\n",
			r->who ? r->who : "rocewatch", r->path, r->n_bad);
}

/* A column's value as SQL writes it (text quoted), control bytes escaped: what a bad row held. */
static const char *col_text(sqlite3_stmt *st, int col, char *buf, size_t len)
{
	int type = sqlite3_column_type(st, col);
	const char *q = (const char *)sqlite3_column_text(st, col);
	bool quote = type == SQLITE_TEXT || type == SQLITE_BLOB;
	char tmp[64];

	if (!q)
		return snprintf(buf, len, "NULL"), buf;
	text_escape_ctl_n(q, (size_t)sqlite3_column_bytes(st, col), tmp, sizeof(tmp));
	snprintf(buf, len, "%s%s%s", quote ? "'" : "", tmp, quote ? "'" : "");
	return buf;
}

/* Every row of a table whose time is not an integer in range, named; SQL has the filter. */
static void bad_times(struct rec_reader *r, const char *sql, const char *what)
{
	sqlite3_stmt *st;
	char v[96];

	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW)
		rec_bad(r,
			"%s %" PRId64 ": %s %s is not a time in range (ms since 1970 up to %lld)",
			what, (int64_t)sqlite3_column_int64(st, 0), sqlite3_column_name(st, 1),
			col_text(st, 1, v, sizeof(v)), (long long)REC_T_MAX_MS);
	sqlite3_finalize(st);
}

/*
 * The recorder hands out series ids one by one from 1 and never deletes a
 * series (a failed transaction re-inserts its new series with the next
 * one), and report and export index their per-series arrays by id.  So ids
 * are dense, and the reader allocates by the highest one only when it is
 * near the number of series: one row with id 50,000,000 in an otherwise
 * small file is damage (or not a recording rocewatch wrote), and refused
 * before anything is allocated for it.
 */
#define REC_SERIES_MAX	 (10 * 1000 * 1000) /* ~2 GiB of series; 8 mlx5 NICs need ~20,000 */
#define REC_SERIES_SLACK 1024		    /* ids a crashed writer may have skipped */

static void series_bad_id(struct rec_reader *r, sqlite3_stmt *st)
{
	char a[96];

	rec_bad(r, "a series with id %s", col_text(st, 0, a, sizeof(a)));
}

/* A decoded row into r->series, or the reason it is skipped (don't guess). */
static void series_keep(struct rec_reader *r, const struct rec_series_row *row,
			enum rec_series_check how)
{
	struct rec_series *s = &r->series[row->id];
	char a[96];

	switch (how) {
	case REC_SERIES_NO_OBJECT:
		rec_bad(r, "series %" PRId64 ": no object or source", row->id);
		return;
	case REC_SERIES_BAD_PRIO:
		rec_bad(r, "series %" PRId64 ": element %" PRId64 " is no priority or DSCP",
			row->id, row->prio);
		return;
	case REC_SERIES_BAD_PORT:
		rec_bad(r, "series %" PRId64 ": port %" PRId64 " out of range", row->id, row->port);
		return;
	case REC_SERIES_NEWER_KIND:
		s->id = row->id;
		rec_bad(r, "series %" PRId64 ": %s '%s' unknown to this rocewatch", row->id,
			row->kind < 0 ? "object" : "source",
			text_escape_ctl(row->kind < 0 ? row->object : row->source, a, sizeof(a)));
		return;
	default:
		break;
	}
	s->id = row->id;
	s->kind = row->kind;
	s->src = row->src;
	/* labels on the terminal and in reports: control bytes escaped */
	strlcpy0(s->device, text_escape_ctl(row->device, a, sizeof(a)), sizeof(s->device));
	s->port = (uint32_t)row->port;
	strlcpy0(s->netdev, text_escape_ctl(row->netdev, a, sizeof(a)), sizeof(s->netdev));
	strlcpy0(s->name, text_escape_ctl(row->name, a, sizeof(a)), sizeof(s->name));
	s->prio = (int)row->prio;
	s->config = row->config;
	s->field = row->src == REC_FIELD ? field_lookup(row->kind, s->name) : -1;
	s->used = true;
}

/* ids a crashed writer may have skipped */

static int load_series(struct rec_reader *r, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int64_t max = rec_q_int(r->db, "SELECT max(id) FROM series", 0);
	int64_t count = rec_q_int(r->db, "SELECT count(*) FROM series", 0);
	int rc;

	if (max < 0 || count < 0 || count > REC_SERIES_MAX) {
		snprintf(err, errlen,
			 "%s: %" PRId64 " series (highest id %" PRId64
			 "): not a recording this reader can hold (at most %d series)",
			 r->path, count, max, REC_SERIES_MAX);
		return -EINVAL;
	}
	if (max > 2 * count + REC_SERIES_SLACK) {
		snprintf(err, errlen,
			 "%s: series id %" PRId64 " among %" PRId64
			 " series: the ids are not the dense ones the recorder writes "
			 "(a damaged recording?)",
			 r->path, max, count);
		return -EINVAL;
	}
	r->series = calloc((size_t)max + 1, sizeof(*r->series));
	if (!r->series)
		return -ENOMEM;
	r->n_series = (size_t)max + 1;
	rc = sqlite3_prepare_v2(r->db, rec_series_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto sql_err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rec_series_row row;
		enum rec_series_check how = rec_series_row(st, &row);

		if (how != REC_SERIES_BAD_ID && row.id <= max)
			series_keep(r, &row, how);
		else
			series_bad_id(r, st);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto sql_err;
	return 0;
sql_err:
	snprintf(err, errlen, "%s: reading series: %s", r->path, sqlite3_errmsg(r->db));
	return -EIO;
}

int rec_load(struct rec_reader *r, int64_t since_ms, int64_t until_ms, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int64_t start;
	size_t cap = 0;
	int rc;

	rc = load_series(r, err, errlen);
	if (rc)
		return rc;
	r->since_ms = since_ms;
	r->until_ms = until_ms;
	bad_times(r,
		  "SELECT seq, t_ms FROM polls WHERE typeof(t_ms) != 'integer' OR t_ms < 0 OR "
		  "t_ms > 9223372036854 ORDER BY seq",
		  "poll");
	{
		char v[96];

		rc = sqlite3_prepare_v2(
		    r->db,
		    "SELECT run, interval_ms FROM runs WHERE typeof(interval_ms) "
		    "!= 'integer' OR interval_ms NOT BETWEEN 1 AND 86400000",
		    -1, &st, NULL);
		if (rc != SQLITE_OK)
			goto sql_err;
		while (sqlite3_step(st) == SQLITE_ROW)
			rec_bad(r, "run %" PRId64 ": interval_ms %s out of range 1..%lld",
				(int64_t)sqlite3_column_int64(st, 0), col_text(st, 1, v, sizeof(v)),
				(long long)REC_INTERVAL_MAX_MS);
		sqlite3_finalize(st);
	}
	/* State at `since` is the keyframe before it plus the changes after. */
	rc = sqlite3_prepare_v2(
	    r->db,
	    "SELECT coalesce((SELECT max(t_ms) FROM polls WHERE keyframe AND t_ms <= ?1"
	    " AND typeof(t_ms) = 'integer' AND t_ms >= 0),"
	    " (SELECT min(t_ms) FROM polls WHERE typeof(t_ms) = 'integer' AND t_ms >= 0))",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto sql_err;
	sqlite3_bind_int64(st, 1, since_ms);
	start = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	rc = sqlite3_prepare_v2(
	    r->db,
	    "SELECT seq, t_ms, run, what, keyframe, n_samples, n_config, dropped "
	    "FROM polls WHERE typeof(t_ms) = 'integer' AND t_ms >= max(?1, 0)"
	    " AND t_ms <= min(?2, 9223372036854) ORDER BY t_ms",
	    -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto sql_err;
	sqlite3_bind_int64(st, 1, start);
	sqlite3_bind_int64(st, 2, until_ms);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rec_poll *p;

		if (array_grow(&r->polls, &cap, r->n_polls, sizeof(*r->polls), 4096)) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
		p = &r->polls[r->n_polls++];
		p->seq = sqlite3_column_int64(st, 0);
		p->t_ms = sqlite3_column_int64(st, 1);
		p->run = sqlite3_column_int64(st, 2);
		p->what = (unsigned)sqlite3_column_int64(st, 3);
		p->keyframe = sqlite3_column_int64(st, 4) != 0;
		p->n_samples = sqlite3_column_int64(st, 5);
		p->n_config = sqlite3_column_int64(st, 6);
		p->dropped = sqlite3_column_int64(st, 7);
		p->in_window = p->t_ms >= since_ms;
		/* counts only feed the progress line, but summed: keep them sane */
		if (p->n_samples < 0 || p->n_config < 0 || p->n_samples > INT32_MAX ||
		    p->n_config > INT32_MAX) {
			rec_bad(r,
				"poll %" PRId64 ": claims %" PRId64 " samples and %" PRId64
				" configuration rows",
				p->seq, p->n_samples, p->n_config);
			r->n_polls--;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		goto sql_err;
	return 0;
sql_err:
	snprintf(err, errlen, "%s: reading polls: %s", r->path, sqlite3_errmsg(r->db));
	return -EIO;
}

void rec_close(struct rec_reader *r)
{
	if (r->db)
		sqlite3_close(r->db);
	free(r->series);
	free(r->polls);
	memset(r, 0, sizeof(*r));
}

static const struct rec_series *series_of(const struct rec_reader *r, int64_t id)
{
	if (id <= 0 || (uint64_t)id >= r->n_series || !r->series[id].used)
		return NULL;
	return &r->series[id];
}

struct rec_cursor {
	struct rec_reader *r;
	const struct rec_scan_ops *ops;
	void *arg;
	sqlite3_stmt *ss, *cs;
	int rs, rcfg; /* the last step of each statement */
	size_t next;  /* the poll the next rec_cursor_next() reads */
	uint64_t total, done, next_progress;
};

int rec_cursor_open(struct rec_cursor **out, struct rec_reader *r, const struct rec_scan_ops *ops,
		    void *arg, char *err, size_t errlen)
{
	struct rec_cursor *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->r = r;
	c->ops = ops;
	c->arg = arg;
	if (!r->n_polls)
		return 0;
	for (size_t i = 0; i < r->n_polls; i++)
		c->total +=
		    (uint64_t)((ops->sample ? r->polls[i].n_samples : 0) + r->polls[i].n_config);
	/* Without a sample callback (configuration only) the samples are not even read. */
	if (sqlite3_prepare_v2(r->db,
			       ops->sample
				   ? "SELECT t_ms, series_id, value FROM samples "
				     "WHERE t_ms >= ?1 AND t_ms <= ?2 ORDER BY t_ms, series_id"
				   : "SELECT 0, 0, 0 WHERE 0",
			       -1, &c->ss, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db,
			       "SELECT t_ms, series_id, value, absent FROM config "
			       "WHERE t_ms >= ?1 AND t_ms <= ?2 ORDER BY t_ms, series_id",
			       -1, &c->cs, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", r->path, sqlite3_errmsg(r->db));
		return -EIO;
	}
	if (ops->sample) {
		sqlite3_bind_int64(c->ss, 1, r->polls[0].t_ms);
		sqlite3_bind_int64(c->ss, 2, r->polls[r->n_polls - 1].t_ms);
	}
	sqlite3_bind_int64(c->cs, 1, r->polls[0].t_ms);
	sqlite3_bind_int64(c->cs, 2, r->polls[r->n_polls - 1].t_ms);
	c->rs = sqlite3_step(c->ss);
	c->rcfg = sqlite3_step(c->cs);
	return 0;
}

/* A sample row of poll p (the cursor is on it): decoded, or named as bad. */
static void cursor_sample(struct rec_cursor *c, const struct rec_poll *p,
			  const struct rec_series *s)
{
	sqlite3_stmt *ss = c->ss;
	struct rec_value v = { 0 };
	char t[96];
	bool bad = false;

	switch (sqlite3_column_type(ss, 2)) {
	case SQLITE_INTEGER:
		v.present = true;
		v.i = sqlite3_column_int64(ss, 2);
		break;
	case SQLITE_FLOAT:
		v.present = v.is_float = true;
		v.d = sqlite3_column_double(ss, 2);
		bad = !isfinite(v.d);
		break;
	case SQLITE_NULL:
		break; /* the series went absent */
	default:
		bad = true;
		break;
	}
	if (bad)
		rec_bad(c->r,
			"sample at %" PRId64 " of series %" PRId64
			" (%s %s): value %s is no number",
			p->t_ms, s->id, s->device, s->name, col_text(ss, 2, t, sizeof(t)));
	else
		c->ops->sample(c->arg, p, s, &v);
}

/* A configuration row of poll p (the cursor is on it). */
static void cursor_config(struct rec_cursor *c, const struct rec_poll *p,
			  const struct rec_series *s)
{
	sqlite3_stmt *cs = c->cs;
	const char *j = (const char *)sqlite3_column_text(cs, 2);
	const char *a = (const char *)sqlite3_column_text(cs, 3);
	char t[96];

	/* JSON has no raw control bytes, nor does an absence reason */
	if (text_has_ctl(j) || text_has_ctl(a) ||
	    (j && strlen(j) != (size_t)sqlite3_column_bytes(cs, 2)))
		rec_bad(c->r,
			"configuration at %" PRId64 " of series %" PRId64
			" (%s %s): %s holds control bytes",
			p->t_ms, s->id, s->device, s->name, col_text(cs, 2, t, sizeof(t)));
	else
		c->ops->config(c->arg, p, s, j, a);
}

int rec_cursor_next(struct rec_cursor *c, const struct rec_poll **polled, char *err, size_t errlen)
{
	const struct rec_scan_ops *ops = c->ops;
	const struct rec_poll *p;

	if (polled)
		*polled = NULL;
	if (c->next >= c->r->n_polls)
		return 0;
	p = &c->r->polls[c->next++];
	if (ops->poll)
		ops->poll(c->arg, p);
	/* Rows whose t_ms has no poll (none are written so) are skipped, not misfiled. */
	while (c->rs == SQLITE_ROW && sqlite3_column_int64(c->ss, 0) <= p->t_ms) {
		const struct rec_series *s = series_of(c->r, sqlite3_column_int64(c->ss, 1));

		if (s && !s->config && sqlite3_column_int64(c->ss, 0) == p->t_ms && ops->sample)
			cursor_sample(c, p, s);
		c->done++;
		c->rs = sqlite3_step(c->ss);
	}
	while (c->rcfg == SQLITE_ROW && sqlite3_column_int64(c->cs, 0) <= p->t_ms) {
		const struct rec_series *s = series_of(c->r, sqlite3_column_int64(c->cs, 1));

		if (s && sqlite3_column_int64(c->cs, 0) == p->t_ms && ops->config)
			cursor_config(c, p, s);
		c->done++;
		c->rcfg = sqlite3_step(c->cs);
	}
	if (ops->poll_end)
		ops->poll_end(c->arg, p);
	if (ops->progress && c->done >= c->next_progress) {
		ops->progress(c->arg, c->done, c->total);
		c->next_progress = c->done + c->total / 200 + 1;
	}
	if (polled)
		*polled = p;
	if (c->next < c->r->n_polls)
		return 1;
	/* the last poll: the statements must have ended well */
	if (ops->progress)
		ops->progress(c->arg, c->total, c->total);
	if ((c->rs != SQLITE_ROW && c->rs != SQLITE_DONE) ||
	    (c->rcfg != SQLITE_ROW && c->rcfg != SQLITE_DONE)) {
		snprintf(err, errlen, "%s: reading samples: %s", c->r->path,
			 sqlite3_errmsg(c->r->db));
		return -EIO;
	}
	return 1;
}

void rec_cursor_close(struct rec_cursor *c)
{
	if (!c)
		return;
	sqlite3_finalize(c->ss);
	sqlite3_finalize(c->cs);
	free(c);
}

int rec_scan(struct rec_reader *r, const struct rec_scan_ops *ops, void *arg, char *err,
	     size_t errlen)
{
	struct rec_cursor *c;
	int ret = rec_cursor_open(&c, r, ops, arg, err, errlen);

	while (!ret && (ret = rec_cursor_next(c, NULL, err, errlen)) == 1)
		ret = 0;
	rec_cursor_close(c);
	return ret;
}

int rec_events(struct rec_reader *r, void (*cb)(void *arg, const struct rec_event *e), void *arg)
{
	sqlite3_stmt *st;
	int rc;

	bad_times(r,
		  "SELECT id, t_ms FROM events WHERE typeof(t_ms) != 'integer' OR t_ms < 0 OR "
		  "t_ms > 9223372036854 ORDER BY id",
		  "event");
	rc = sqlite3_prepare_v2(r->db,
				"SELECT t_ms, kind, object, device, name, detail, id FROM events "
				"WHERE typeof(t_ms) = 'integer' AND t_ms >= max(?1, 0) AND "
				"t_ms <= min(?2, 9223372036854) ORDER BY t_ms, id",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, r->since_ms);
	sqlite3_bind_int64(st, 2, r->until_ms);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* an event's text goes to the terminal: control bytes escaped, NULs shown */
		char txt[5][512];
		struct rec_event e = { .t_ms = sqlite3_column_int64(st, 0) };
		const char **f[5] = { &e.kind, &e.object, &e.device, &e.name, &e.detail };

		for (int i = 0; i < 5; i++) {
			const char *v = (const char *)sqlite3_column_text(st, i + 1);

			*f[i] = v ? text_escape_ctl_n(v, (size_t)sqlite3_column_bytes(st, i + 1),
						      txt[i], sizeof(txt[i]))
				  : "";
		}
		if (!e.kind[0]) {
			rec_bad(r, "event %" PRId64 ": no kind",
				(int64_t)sqlite3_column_int64(st, 6));
			continue;
		}
		cb(arg, &e);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

struct object *rec_model_object(struct node_model *m, const struct rec_series *s)
{
	struct object *o;

	switch (s->kind) {
	case OBJ_NODE:
		return &m->node;
	case OBJ_NETDEV:
		o = model_netdev(m, s->device);
		return o ? o : model_add_netdev(m, s->device);
	case OBJ_RDMA_PORT:
		o = model_port(m, s->device, s->port);
		return o ? o : model_add_port(m, s->device, s->port);
	default:
		return NULL;
	}
}

void rec_model_sample(struct node_model *m, const struct rec_series *s, const struct rec_value *v)
{
	struct object *o = rec_model_object(m, s);
	int c = rec_source_cset(s->src);

	if (!o)
		return;
	if (c >= 0) {
		int idx;

		if (v->present) {
			cset_set(&o->cs[c], s->name, (uint64_t)v->i);
		} else if ((idx = cset_find(&o->cs[c], s->name)) >= 0) {
			o->cs[c].present[idx] = 0;
		}
		return;
	}
	if (s->field < 0)
		return;
	switch (fields[s->field].type) {
	case VT_PRIO_ARRAY: {
		struct field_val *f = &o->f[s->field];

		if (s->prio < 0 || s->prio >= RW_PRIO_COUNT)
			return;
		if (v->present) {
			field_set_prio(o, s->field, s->prio, (uint64_t)v->i);
		} else if (f->state == ABS_NONE) {
			f->mask &= (uint8_t) ~(1u << s->prio);
			if (!f->mask)
				field_absent(o, s->field, ABS_NOT_COLLECTED, 0);
		}
		return;
	}
	case VT_FLOAT:
		if (v->present)
			field_set_float(o, s->field, rec_value_num(v));
		else
			field_absent(o, s->field, ABS_NOT_COLLECTED, 0);
		return;
	default:
		if (v->present)
			field_set_int(o, s->field, v->i);
		else
			field_absent(o, s->field, ABS_NOT_COLLECTED, 0);
		return;
	}
}

int rec_model_config(struct node_model *m, const struct rec_series *s, const char *json,
		     const char *absent, char *err, size_t errlen)
{
	struct object *o = rec_model_object(m, s);
	int c = rec_source_cset(s->src);

	if (!o)
		return -ENOMEM;
	if (c >= 0) {
		uint64_t v;
		int idx;

		if (json && !parse_u64(json, &v))
			return cset_set(&o->cs[c], s->name, v) < 0 ? -ENOMEM : 0;
		if ((idx = cset_find(&o->cs[c], s->name)) >= 0)
			o->cs[c].present[idx] = 0;
		return 0;
	}
	if (s->field < 0)
		return 0;
	if (!json) {
		int reason = absent ? absent_reason_parse(absent) : -1;

		field_absent(o, s->field,
			     reason > 0 ? (enum absent_reason)reason : ABS_NOT_COLLECTED, 0);
		return 0;
	}
	return snapshot_value_parse(o, s->field, json, err, errlen);
}

void rec_format_time(int64_t t_ms, char *buf, size_t len)
{
	/* the reader keeps rows in range; --since/--until may reach year 9999 */
	if (t_ms < -REC_T_MAX_MS || t_ms > REC_T_MAX_MS)
		snprintf(buf, len, "(%" PRId64 " ms)", t_ms);
	else
		format_rfc3339(t_ms * 1000000LL, buf, len);
}

int rec_parse_time(const char *s, int64_t now_ms, int64_t *t_ms)
{
	int64_t ns, sec, frac;
	const char *p;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "now")) {
		*t_ms = now_ms;
		return 0;
	}
	if (*s == '-' || *s == '+') {
		/* parse_duration() refuses what does not fit; ms of it plus now fit an int64 */
		if (parse_duration(s + 1, &ns))
			return -EINVAL;
		*t_ms = now_ms + (*s == '-' ? -1 : 1) * (ns / 1000000);
		return 0;
	}
	if (rfc3339_datetime(s, &sec, &frac, &p))
		return -EINVAL;
	/* years end at 9999: seconds * 1000 cannot overflow */
	*t_ms = sec * 1000 + frac / 1000000;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if ((*p == '+' || *p == '-') && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
		   p[2] <= '9' && p[3] == ':' && p[4] >= '0' && p[4] <= '9' && p[5] >= '0' &&
		   p[5] <= '9') {
		/* local time at that offset: UTC is local minus the offset */
		int off =
		    ((p[1] - '0') * 10 + (p[2] - '0')) * 60 + (p[4] - '0') * 10 + (p[5] - '0');

		*t_ms -= (*p == '+' ? 1 : -1) * (int64_t)off * 60000;
		p += 6;
	} else {
		return -EINVAL;
	}
	return *p ? -EINVAL : 0;
}

void rec_model_sweep(struct node_model *m)
{
	static const enum obj_kind kinds[] = { OBJ_NETDEV, OBJ_RDMA_PORT };

	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
		struct object **objs;
		size_t n;

		model_begin(m, kinds[k]);
		n = model_objects(m, kinds[k], &objs);
		for (size_t i = 0; i < n; i++) {
			struct object *o = objs[i];

			/* rdma is recomputed by model_link_ports: it says nothing of the object */
			for (int f = 0; f < F__COUNT && !o->seen; f++)
				o->seen = fields[f].obj == o->kind && f != F_NETDEV_RDMA &&
					  o->f[f].state == ABS_NONE;
			for (int c = 0; c < CSET__COUNT && !o->seen; c++)
				for (uint32_t j = 0; j < o->cs[c].n && !o->seen; j++)
					o->seen = o->cs[c].present[j];
		}
		model_sweep(m, kinds[k]);
	}
}
