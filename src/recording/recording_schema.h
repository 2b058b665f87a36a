/* SPDX-License-Identifier: MIT */
/*
 * The flight recording's schema: an SQLite database (docs/recording.md)
 * written by the recorder in `serve --record DIR` (recorder.c), and read
 * back by `report`, `export` and `replay` (src/recording/recording.c),
 * from DIR or from a capture file.
 */
#ifndef ROCEWATCH_RECORDING_SCHEMA_H
#define ROCEWATCH_RECORDING_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "model.h"

#define REC_SCHEMA	   "rocewatch-recording"
#define REC_SCHEMA_VERSION 2 /* PRAGMA user_version */
/* The oldest version readers still read (1: no profiles table), and the writer upgrades. */
#define REC_SCHEMA_VERSION_MIN 1
#define REC_DB_NAME	       "rocewatch.db"

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
/*
 * Check user_version (REC_SCHEMA_VERSION_MIN up to REC_SCHEMA_VERSION) and
 * the meta schema name: 0, or -EINVAL with err set.
 */
/*
 * One row of the `series` table, decoded for the writer (re-opening a
 * recording) and the reader alike: rec_series_sql selects the columns in
 * the order rec_series_row() reads them.  The texts point into the
 * statement's row (valid until the next step).
 */
extern const char rec_series_sql[];
enum rec_series_check {
	REC_SERIES_OK,
	REC_SERIES_BAD_ID,     /* not an integer above 0 */
	REC_SERIES_NO_OBJECT,  /* no object or source text */
	REC_SERIES_BAD_PRIO,   /* element neither -1 nor a priority or DSCP */
	REC_SERIES_BAD_PORT,   /* port outside 0..UINT32_MAX */
	REC_SERIES_NEWER_KIND, /* an object or source this build does not know */
};
struct rec_series_row {
	int64_t id, port, prio;
	int kind, src; /* -1 when unknown */
	const char *object, *source, *device, *netdev, *name;
	bool config;
};
enum rec_series_check rec_series_row(sqlite3_stmt *st, struct rec_series_row *row);
int rec_check_schema(sqlite3 *db, const char *path, char *err, size_t errlen);
/*
 * The writer, on opening a recording an older rocewatch wrote: add what
 * this version has (the profiles table) and stamp the version.  0 or -EIO.
 */
int rec_upgrade_schema(sqlite3 *db, char *err, size_t errlen);
/* Does the recording have table (one a newer schema added)? */
bool rec_has_table(sqlite3 *db, const char *schema, const char *table);

/* The database file of a recording directory (or the argument if it is a file). */
int rec_db_path(const char *arg, char *out, size_t outlen);

/* One value of a query (dflt when it fails or is NULL); one meta value ("" when missing). */
int64_t rec_q_int(sqlite3 *db, const char *sql, int64_t dflt);
void rec_q_meta(sqlite3 *db, const char *key, char *out, size_t len);

#endif
