// SPDX-License-Identifier: MIT
/*
 * The recording's schema, shared by the writer (recorder.c) and the readers
 * (src/postmortem/).  Samples are keyed by (t_ms, series_id) so a poll's rows
 * are one contiguous run of the B-tree: appending a poll and deleting the
 * oldest ones touch only the two ends, and a reader walks a time window in
 * key order without sorting.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bounded.h"
#include "recording_schema.h"
#include "util.h"

static const char *const source_names[REC__SOURCES] = {
	[REC_FIELD] = "field", [REC_ETHTOOL] = "ethtool", [REC_HW] = "hw",
	[REC_PORT] = "port",   [REC_CC] = "cc",
};

const char *rec_source_name(enum rec_source s)
{
	return s < REC__SOURCES ? source_names[s] : "?";
}

int rec_source_parse(const char *s)
{
	for (int i = 0; i < REC__SOURCES; i++)
		if (!strcmp(source_names[i], s))
			return i;
	return -1;
}

int rec_source_cset(enum rec_source s)
{
	switch (s) {
	case REC_ETHTOOL:
		return CSET_ETHTOOL;
	case REC_HW:
		return CSET_HW;
	case REC_PORT:
		return CSET_PORT;
	case REC_CC:
		return CSET_CC;
	default:
		return -1;
	}
}

#define STR_(x) #x
#define STR(x)	STR_(x)

/*
 * Version 2: the rule profiles serve ran, from the poll at t_ms on (start-up,
 * a reload): pos is the order they were loaded in, source the file read (or
 * built-in:NAME.yaml), origin how it was found (rules_origin_name()),
 * text_hash the FNV-1a 64 of its text in hex, params a JSON array of
 * {"name", "value" (as --param reads it back), "given" (serve's --param,
 * absent for the profile's default)}.
 */
static const char profiles_sql[] =
    "CREATE TABLE IF NOT EXISTS %1$s.profiles (t_ms INTEGER NOT NULL, pos INTEGER NOT NULL,"
    " name TEXT NOT NULL, source TEXT NOT NULL, origin TEXT NOT NULL, text_hash TEXT NOT NULL,"
    " params TEXT NOT NULL, PRIMARY KEY (t_ms, pos)) WITHOUT ROWID";

/*
 * Any change to these statements is a new REC_SCHEMA_VERSION, a step in
 * rec_upgrade_schema() and a section in docs/recording.md.  "%1$s" is the
 * schema name.
 */
static const char *const schema_sql[] = {
	"CREATE TABLE %1$s.meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID",
	"CREATE TABLE %1$s.runs (run INTEGER PRIMARY KEY, t_ms INTEGER NOT NULL, host TEXT NOT "
	"NULL,"
	" version TEXT NOT NULL, interval_ms INTEGER NOT NULL, pid INTEGER)",
	"CREATE TABLE %1$s.series (id INTEGER PRIMARY KEY, object TEXT NOT NULL,"
	" device TEXT NOT NULL, port INTEGER NOT NULL, netdev TEXT NOT NULL, source TEXT NOT NULL,"
	" name TEXT NOT NULL, prio INTEGER NOT NULL, config INTEGER NOT NULL,"
	" UNIQUE (object, device, port, netdev, source, name, prio))",
	"CREATE TABLE %1$s.polls (seq INTEGER PRIMARY KEY, t_ms INTEGER NOT NULL UNIQUE,"
	" run INTEGER NOT NULL, what INTEGER NOT NULL, keyframe INTEGER NOT NULL,"
	" n_samples INTEGER NOT NULL, n_config INTEGER NOT NULL, dropped INTEGER NOT NULL)",
	/* value: INTEGER (u64 as int64 bits), REAL, or NULL = went absent */
	"CREATE TABLE %1$s.samples (t_ms INTEGER NOT NULL, series_id INTEGER NOT NULL, value,"
	" PRIMARY KEY (t_ms, series_id)) WITHOUT ROWID",
	/* value: snapshot JSON of the field, NULL when absent (absent says why) */
	"CREATE TABLE %1$s.config (t_ms INTEGER NOT NULL, series_id INTEGER NOT NULL, value TEXT,"
	" absent TEXT, PRIMARY KEY (t_ms, series_id)) WITHOUT ROWID",
	"CREATE TABLE %1$s.events (id INTEGER PRIMARY KEY, t_ms INTEGER NOT NULL, kind TEXT NOT "
	"NULL,"
	" object TEXT, device TEXT, name TEXT, detail TEXT)",
	"CREATE INDEX %1$s.events_t ON events (t_ms)",
	profiles_sql,
	"INSERT INTO %1$s.meta VALUES ('schema', '" REC_SCHEMA "')",
	"PRAGMA %1$s.user_version = " STR(REC_SCHEMA_VERSION),
};

int rec_create_schema(sqlite3 *db, const char *schema, char *err, size_t errlen)
{
	char sql[640];
	char *msg = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(schema_sql); i++) {
		snprintf(sql, sizeof(sql), schema_sql[i], schema);
		if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
			snprintf(err, errlen, "creating the schema: %s", msg ? msg : "?");
			sqlite3_free(msg);
			return -EIO;
		}
	}
	return 0;
}

int rec_upgrade_schema(sqlite3 *db, char *err, size_t errlen)
{
	int64_t v = rec_q_int(db, "PRAGMA user_version", -1);
	char sql[640];
	char *msg = NULL;

	if (v >= REC_SCHEMA_VERSION)
		return 0;
	/* 1 -> 2: one table more; the polls before it say nothing of the rules */
	snprintf(sql, sizeof(sql), profiles_sql, "main");
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA main.user_version = " STR(REC_SCHEMA_VERSION), NULL, NULL,
			 &msg) != SQLITE_OK ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "upgrading the recording from schema version %" PRId64 ": %s",
			 v, msg ? msg : "?");
		sqlite3_free(msg);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -EIO;
	}
	return 0;
}

bool rec_has_table(sqlite3 *db, const char *schema, const char *table)
{
	char sql[160];
	sqlite3_stmt *st;
	bool has = false;

	snprintf(sql, sizeof(sql),
		 "SELECT 1 FROM %s.sqlite_master WHERE type = 'table' AND name = ?1", schema);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	has = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return has;
}

int64_t rec_q_int(sqlite3 *db, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

void rec_q_meta(sqlite3 *db, const char *key, char *out, size_t len)
{
	sqlite3_stmt *st;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		strlcpy0(out, (const char *)sqlite3_column_text(st, 0), len);
	sqlite3_finalize(st);
}

int rec_check_schema(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	int64_t v = rec_q_int(db, "PRAGMA user_version", -1);
	char name[64];

	if (v == 0) {
		/* an SQLite file, but no recording in it (user_version is 0 by default) */
		snprintf(err, errlen, "%s: not a rocewatch recording (no schema version)", path);
		return -EINVAL;
	}
	if (v < REC_SCHEMA_VERSION_MIN || v > REC_SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s: recording schema version %" PRId64
			 ", this rocewatch reads versions %d to %d",
			 path, v, REC_SCHEMA_VERSION_MIN, REC_SCHEMA_VERSION);
		return -EINVAL;
	}
	rec_q_meta(db, "schema", name, sizeof(name));
	if (strcmp(name, REC_SCHEMA)) {
		char shown[sizeof(name) * 4];

		/* whatever the file holds goes to the terminal: control bytes escaped */
		snprintf(err, errlen, "%s: not a rocewatch recording (meta.schema is '%s')", path,
			 text_escape_ctl(name, shown, sizeof(shown)));
		return -EINVAL;
	}
	return 0;
}

int rec_db_path(const char *arg, char *out, size_t outlen)
{
	struct stat st;

	if (!stat(arg, &st) && S_ISDIR(st.st_mode)) {
		if ((size_t)snprintf(out, outlen, "%s/%s", arg, REC_DB_NAME) >= outlen)
			return -ENAMETOOLONG;
		return 0;
	}
	if (strlen(arg) >= outlen)
		return -ENAMETOOLONG;
	strlcpy0(out, arg, outlen);
	return 0;
}

const char rec_series_sql[] = "SELECT id, object, device, port, netdev, source, name, prio, config "
			      "FROM series ORDER BY id";

enum rec_series_check rec_series_row(sqlite3_stmt *st, struct rec_series_row *row)
{
	const char *t;

	row->id = sqlite3_column_int64(st, 0);
	row->object = (const char *)sqlite3_column_text(st, 1);
	row->source = (const char *)sqlite3_column_text(st, 5);
	t = (const char *)sqlite3_column_text(st, 2);
	row->device = t ? t : "";
	row->port = sqlite3_column_int64(st, 3);
	t = (const char *)sqlite3_column_text(st, 4);
	row->netdev = t ? t : "";
	t = (const char *)sqlite3_column_text(st, 6);
	row->name = t ? t : "";
	row->prio = sqlite3_column_int64(st, 7);
	row->config = sqlite3_column_int64(st, 8) != 0;
	row->kind = row->object ? obj_kind_parse(row->object) : -1;
	row->src = row->source ? rec_source_parse(row->source) : -1;
	if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || row->id <= 0)
		return REC_SERIES_BAD_ID;
	if (!row->object || !row->source)
		return REC_SERIES_NO_OBJECT;
	if (row->prio < -1 || row->prio >= RW_DSCP_COUNT)
		return REC_SERIES_BAD_PRIO;
	if (row->port < 0 || row->port > UINT32_MAX)
		return REC_SERIES_BAD_PORT;
	if (row->kind < 0 || row->src < 0)
		return REC_SERIES_NEWER_KIND;
	return REC_SERIES_OK;
}
