/* SPDX-License-Identifier: MIT */
/*
 * Reading a flight recording back (report, replay, export): its series and
 * polls, a walk through the rows in time order, and a node model rebuilt
 * from them.  The schema is the writer's (src/recording/recording_schema.h).
 */
#ifndef ROCEWATCH_RECORDING_H
#define ROCEWATCH_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "recording_schema.h"

/* One series: what identifies it in the `series` table. */
struct rec_series {
	int64_t id;
	bool used; /* false for holes in the id space */
	enum obj_kind kind;
	char device[RW_NAME_MAX]; /* netdev or RDMA device name; "" for the node */
	uint32_t port;
	char netdev[RW_NAME_MAX]; /* rdma_port: the bound netdev (a label) */
	enum rec_source src;
	char name[RW_CNAME_MAX]; /* field path or counter name */
	int prio;		 /* per-priority element, or -1 */
	bool config;		 /* rows live in `config` (JSON), not `samples` */
	int field;		 /* REC_FIELD: the F_* id in this build, -1 if unknown */
};

struct rec_poll {
	int64_t seq, t_ms;
	int64_t run;
	unsigned what;
	bool keyframe;
	int64_t n_samples, n_config, dropped;
	bool in_window; /* t_ms >= since: before it, rows only build the state */
};

struct rec_value {
	bool present; /* false: the series went absent (object gone, field absent) */
	bool is_float;
	int64_t i; /* u64 counters are stored as their int64 bit pattern */
	double d;
};

static inline double rec_value_num(const struct rec_value *v)
{
	return v->is_float ? v->d : (double)(uint64_t)v->i;
}

struct rec_event {
	int64_t t_ms;
	const char *kind, *object, *device, *name, *detail;
};

/*
 * Times a recording may hold, in ms since the epoch: 1970 up to where the
 * nanoseconds the rules and the formatting work in still fit an int64 (2262).
 * A row outside, or one whose time is not an integer, is named and skipped.
 */
#define REC_T_MAX_MS (INT64_MAX / 1000000)
/* A run's poll interval: 1 ms to a day. */
#define REC_INTERVAL_MAX_MS (86400LL * 1000)
/* Bad rows named one line each, per reader; the rest are counted. */
#define REC_BAD_SHOWN 20

struct rec_reader {
	sqlite3 *db;
	const char *who; /* "rocewatch report": the prefix of the lines naming bad rows */
	uint64_t n_bad;	 /* rows skipped: out of range, of the wrong type, unknown */
	char path[4096];
	char host[RW_NAME_MAX];
	char capture_reason[64]; /* capture files only */
	int64_t capture_trigger_ms;
	struct rec_series *series; /* indexed by id */
	size_t n_series;	   /* max id + 1 */
	struct rec_poll *polls;	   /* from the keyframe at or before since to until */
	size_t n_polls;
	int64_t since_ms, until_ms;
	int64_t interval_ms;	   /* the recording runs' fast interval (the largest) */
	int64_t first_ms, last_ms; /* whole recording */
};

/* Open read-only: a directory holding rocewatch.db, or a database/capture file. */
int rec_open(struct rec_reader *r, const char *arg, char *err, size_t errlen);
/* Load series and the polls of [since, until] (INT64_MIN/MAX for all). */
int rec_load(struct rec_reader *r, int64_t since_ms, int64_t until_ms, char *err, size_t errlen);
void rec_close(struct rec_reader *r);
/*
 * A bad row: one line on stderr ("WHO: PATH: MSG; skipped"), the first
 * REC_BAD_SHOWN of them, and counted.  Text from the recording in msg must
 * have gone through text_escape_ctl().
 */
void rec_bad(struct rec_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After the reading: how many bad rows were skipped, when not all were named. */
void rec_bad_summary(struct rec_reader *r);

/* A reader's walk through the rows, poll by poll, in time order. */
struct rec_scan_ops {
	void (*poll)(void *arg, const struct rec_poll *p);
	void (*sample)(void *arg, const struct rec_poll *p, const struct rec_series *s,
		       const struct rec_value *v);
	void (*config)(void *arg, const struct rec_poll *p, const struct rec_series *s,
		       const char *json, const char *absent);
	/* After all rows of a poll. */
	void (*poll_end)(void *arg, const struct rec_poll *p);
	/* Rows read so far out of about total; for a progress line. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
};

int rec_scan(struct rec_reader *r, const struct rec_scan_ops *ops, void *arg, char *err,
	     size_t errlen);
/*
 * The same walk a poll at a time, for a reader that pulls (the recording
 * model source): rec_cursor_next() runs ops over the rows of the next poll
 * and sets *polled to it: 1, 0 when no poll is left, -errno with err set.
 * rec_scan() is these three in a loop.
 */
struct rec_cursor;
int rec_cursor_open(struct rec_cursor **out, struct rec_reader *r, const struct rec_scan_ops *ops,
		    void *arg, char *err, size_t errlen);
int rec_cursor_next(struct rec_cursor *c, const struct rec_poll **polled, char *err, size_t errlen);
/* Safe on NULL and after a failed rec_cursor_open(). */
void rec_cursor_close(struct rec_cursor *c);
/* Events (alerts, captures, restarts) in [since, until], in time order. */
int rec_events(struct rec_reader *r, void (*cb)(void *arg, const struct rec_event *e), void *arg);

/*
 * Rebuild a node model from the rows (replay, export): the object a series
 * belongs to (created on first use), and one row applied to it.
 */
struct object *rec_model_object(struct node_model *m, const struct rec_series *s);
void rec_model_sample(struct node_model *m, const struct rec_series *s, const struct rec_value *v);
int rec_model_config(struct node_model *m, const struct rec_series *s, const char *json,
		     const char *absent, char *err, size_t errlen);
/* After a poll's rows: drop the objects none of whose facts is present any more. */
void rec_model_sweep(struct node_model *m);

/*
 * The rule profiles serve ran (the profiles table, schema 2): one set from
 * the poll at t_ms on.  Text is the recording's, control bytes escaped.
 */
struct rec_param_row {
	char *name, *value;
	char *given; /* serve's --param text, NULL: the profile's default */
};

struct rec_profile_row {
	char *name, *source, *origin;
	uint64_t text_hash;
	struct rec_param_row *params;
	size_t n_params;
};

struct rec_rules {
	bool recorded; /* the recording says which rules serve ran at `at` */
	int64_t t_ms;  /* when that set began */
	struct rec_profile_row *p;
	size_t n;
	/* a different set begins after `at`, up to `until`: the first such time (else 0) */
	int64_t changed_ms;
};

/*
 * The set in force at at_ms: the newest one at or before it, else the
 * first one after it.  A recording without the table, or with none in it,
 * gives recorded = false (bad rows are named with rec_bad() and skipped).
 * 0, or -ENOMEM / -EIO with err set.
 */
int rec_rules_at(struct rec_reader *r, int64_t at_ms, int64_t until_ms, struct rec_rules *out,
		 char *err, size_t errlen);
void rec_rules_free(struct rec_rules *rr);

/* Times: ms since the epoch as RFC 3339 UTC with milliseconds. */
void rec_format_time(int64_t t_ms, char *buf, size_t len);
/*
 * --since / --until: RFC 3339 ("2026-12-02T10:00:00Z", "...+02:00"), "now",
 * or relative to now ("-10m", "-1h30m").  0 or -EINVAL.
 */
int rec_parse_time(const char *s, int64_t now_ms, int64_t *t_ms);

#endif
