// SPDX-License-Identifier: MIT
/*
 * A flight recording as the source of the node model (model_source.h):
 * each collect() rebuilds the model as of the next recorded poll, through
 * the recording's one reader (recording.h), and the model's time is that
 * poll's.  Pulled a poll at a time, so the daemon and every stage hooked
 * into it run over a recording exactly as over this machine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "model_source.h"
#include "recording.h"
#include "util.h"

struct recording_source {
	struct model_source src;
	struct rec_reader rd;
	struct rec_cursor *cur;
	const char *who;      /* "rocewatch replay": the prefix of what it says */
	struct node_model *m; /* the model the current collect() fills */
	const struct rec_poll *poll;
	bool warned, ended;
	char err[512];
};

static void on_sample(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const struct rec_value *v)
{
	struct recording_source *rs = arg;

	(void)p;
	rec_model_sample(rs->m, s, v);
}

static void on_config(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const char *json, const char *absent)
{
	struct recording_source *rs = arg;
	char err[256];

	(void)p;
	if (rec_model_config(rs->m, s, json, absent, err, sizeof(err)) && !rs->warned) {
		rs->warned = true; /* a value a newer rocewatch wrote: say so once */
		fprintf(stderr, "%s: %s: %s (that field stays absent)\n", rs->who, rs->rd.path,
			err);
	}
}

static void on_poll_end(void *arg, const struct rec_poll *p)
{
	struct recording_source *rs = arg;

	rec_model_sweep(rs->m);
	rs->m->time = ns_ts(p->t_ms * 1000000LL);
}

static const struct rec_scan_ops scan_ops = {
	.sample = on_sample,
	.config = on_config,
	.poll_end = on_poll_end,
};

static int recording_collect(struct model_source *src, struct node_model *m, unsigned what)
{
	struct recording_source *rs = (struct recording_source *)src;
	int r;

	(void)what;
	if (rs->ended)
		return -ENODATA;
	rs->m = m;
	r = rec_cursor_next(rs->cur, &rs->poll, rs->err, sizeof(rs->err));
	if (r <= 0)
		rs->ended = true;
	if (rs->poll) /* also on the last poll's -EIO: its rows were read */
		m->time = ns_ts(rs->poll->t_ms * 1000000LL);
	return r < 0 ? r : r ? 0 : -ENODATA;
}

static size_t recording_samples(const struct model_source *src)
{
	return ((const struct recording_source *)src)->rd.n_polls;
}

static void recording_close(struct model_source *src)
{
	struct recording_source *rs = (struct recording_source *)src;

	if (!rs)
		return;
	rec_cursor_close(rs->cur);
	rec_close(&rs->rd);
	free(rs);
}

int recording_source_open(struct model_source **out, const char *db, int64_t since_ms,
			  int64_t until_ms, const char *who, char *err, size_t errlen)
{
	struct recording_source *rs = calloc(1, sizeof(*rs));
	int r;

	*out = NULL;
	if (!rs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rs->src = (struct model_source){ .name = "recording",
					 .derived = true,
					 .collect = recording_collect,
					 .samples = recording_samples,
					 .close = recording_close };
	rs->who = who;
	r = rec_open(&rs->rd, db, err, errlen);
	if (!r) {
		rs->rd.who = who;
		r = rec_load(&rs->rd, since_ms, until_ms, err, errlen);
	}
	if (!r)
		r = rec_cursor_open(&rs->cur, &rs->rd, &scan_ops, rs, err, errlen);
	if (r) {
		rec_bad_summary(&rs->rd);
		recording_close(&rs->src);
		return r;
	}
	*out = &rs->src;
	return 0;
}

struct rec_reader *recording_source_reader(struct model_source *src)
{
	return &((struct recording_source *)src)->rd;
}

const struct rec_poll *recording_source_poll(const struct model_source *src)
{
	return ((const struct recording_source *)src)->poll;
}

const char *recording_source_error(const struct model_source *src)
{
	return ((const struct recording_source *)src)->err;
}
