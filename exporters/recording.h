/* SPDX-License-Identifier: MIT */
/*
 * The flight recording: an SQLite database (schema in docs/recording.md)
 * written by the recorder in `serve --record DIR`, and read back by
 * `report`, `export` and `replay`, from DIR or from a capture file.  This
 * file owns the schema and the reading side; recorder.c owns the writing.
 */
#ifndef ROCEWATCH_RECORDING_H
#define ROCEWATCH_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "../src/model.h"

#define REC_SCHEMA	   "rocewatch-recording"
#define REC_SCHEMA_VERSION 1 /* PRAGMA user_version */
#define REC_DB_NAME	   "rocewatch.db"

/* Where a series' values come from: a field of the table, or a counter set. */
enum rec_source {
	REC_FIELD,
	REC_ETHTOOL, /* CSET_ETHTOOL */
	REC_HW,	     /* CSET_HW */
	REC_PORT,    /* CSET_PORT */
	REC_CC,	     /* CSET_CC: DCQCN parameters, recorded as configuration */
	REC__SOURCES,
};

const char *rec_source_name(enum rec_source s);
int rec_source_parse(const char *s);
/* The counter set a source reads, or -1 for REC_FIELD. */
int rec_source_cset(enum rec_source s);

/*
 * Create the tables in schema ("main", or an attached capture) and stamp
 * user_version.  Idempotent for a fresh file only.
 */
int rec_create_schema(sqlite3 *db, const char *schema, char *err, size_t errlen);
/* Check user_version and the meta schema name: 0, or -EINVAL with err set. */
int rec_check_schema(sqlite3 *db, const char *path, char *err, size_t errlen);

/* The database file of a recording directory (or the argument if it is a file). */
int rec_db_path(const char *arg, char *out, size_t outlen);

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

struct rec_reader {
	sqlite3 *db;
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

/* A string -> int64 map (open addressing) for identities. */
struct rec_map {
	size_t n, cap;
	char **keys;
	int64_t *vals;
};
int64_t rec_map_get(const struct rec_map *m, const char *k); /* -1 when missing */
int rec_map_put(struct rec_map *m, const char *k, int64_t v);
void rec_map_free(struct rec_map *m);

/* Times: ms since the epoch as RFC 3339 UTC with milliseconds. */
void rec_format_time(int64_t t_ms, char *buf, size_t len);
/*
 * --since / --until: RFC 3339 ("2026-12-02T10:00:00Z", "...+02:00"), "now",
 * or relative to now ("-10m", "-1h30m").  0 or -EINVAL.
 */
int rec_parse_time(const char *s, int64_t now_ms, int64_t *t_ms);

#endif
