// SPDX-License-Identifier: MIT
/*
 * The flight recorder: open (the directory lock, the database in WAL mode,
 * the series an earlier run left, the writer and capture threads) and close.
 * See recorder.h for the threads and recorder_int.h for which file does
 * what; recording.c and docs/recording.md for the schema.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder_int.h"
#include "recording_schema.h"
#include "util.h"

#define DELETE_CHUNK 20000 /* rows per retention transaction, at most */

static int prepare(struct recorder *r, sqlite3_stmt **st, const char *sql, char *err, size_t errlen)
{
	if (sqlite3_prepare_v3(r->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) == SQLITE_OK)
		return 0;
	snprintf(err, errlen, "%s: %s", r->db_path, sqlite3_errmsg(r->db));
	return -EIO;
}

static int load_series_map(struct recorder *r, char *err, size_t errlen)
{
	struct rec_series_row row;
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(r->db, rec_series_sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		enum rec_series_check how = rec_series_row(st, &row);
		char key[320];

		if (how == REC_SERIES_BAD_ID || row.id >= INT32_MAX ||
		    recorder_series_reserve(r, (size_t)row.id)) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "%s: series id %" PRId64 " out of range", r->db_path,
				 row.id);
			return -EINVAL;
		}
		if (row.id > r->max_id)
			r->max_id = (int32_t)row.id;
		if (how != REC_SERIES_OK)
			continue; /* written by a newer rocewatch: keep its id reserved */
		r->st[row.id].config = row.config;
		recorder_series_key(key, sizeof(key), row.kind, row.device, (uint32_t)row.port,
				    row.netdev, row.src, row.name, (int)row.prio);
		if (strmap_put(&r->series_map, key, row.id)) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return 0;
fail:
	snprintf(err, errlen, "%s: reading series: %s", r->db_path, sqlite3_errmsg(r->db));
	return -EIO;
}

static void remove_stale_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX + 256];

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!strncmp(e->d_name, "capture-", 8) && n > 7 &&
		    !strcmp(e->d_name + n - 7, ".db.tmp")) {
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			unlink(p); /* a capture a killed serve was writing: incomplete */
		}
	}
	closedir(d);
}

/*
 * serve runs as root where it records: a link planted at DIR/rocewatch.db (or
 * at its WAL, its shared memory or the lock) would have it create or write a
 * file wherever the link points.  Refuse links, dangling or not.
 */
static int refuse_links(struct recorder *r, char *err, size_t errlen)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[PATH_MAX + 16];
	struct stat st;

	for (size_t i = 0; i <= ARRAY_SIZE(sfx); i++) {
		if (i == ARRAY_SIZE(sfx))
			snprintf(p, sizeof(p), "%s/rocewatch.lock", r->dir);
		else
			snprintf(p, sizeof(p), "%s%s", r->db_path, sfx[i]);
		if (!lstat(p, &st) && S_ISLNK(st.st_mode)) {
			snprintf(err, errlen,
				 "--record: %s is a symbolic link: refusing to follow it (remove "
				 "it, or give --record the directory it should be in)",
				 p);
			return -ELOOP;
		}
	}
	return 0;
}

static int open_db(struct recorder *r, char *err, size_t errlen)
{
	char sql[128];
	bool fresh;
	int rc;

	/* NOFOLLOW as well: a link made between the check and the open is refused too */
	rc = sqlite3_open_v2(r->db_path, &r->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
			     NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", r->db_path,
			 r->db ? sqlite3_errmsg(r->db) : sqlite3_errstr(rc));
		return -EIO;
	}
	sqlite3_busy_timeout(r->db, 2000);
	sqlite3_extended_result_codes(r->db, 1);
	/* No table yet: a new file (or an empty one); also tells a non-database apart. */
	{
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(r->db, "SELECT count(*) FROM sqlite_master", -1, &st,
				       NULL) != SQLITE_OK)
			goto sql_err;
		rc = sqlite3_step(st);
		fresh = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) == 0;
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			goto sql_err;
	}
	if (fresh) {
		/* Must precede the first table: lets retention give pages back to the file system.
		 */
		if (sqlite3_exec(r->db, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL) !=
		    SQLITE_OK)
			goto sql_err;
	}
	{
		sqlite3_stmt *st;
		const char *mode = "";

		if (sqlite3_prepare_v2(r->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) !=
		    SQLITE_OK)
			goto sql_err;
		if (sqlite3_step(st) == SQLITE_ROW)
			mode = (const char *)sqlite3_column_text(st, 0) ?: "";
		if (strcmp(mode, "wal")) {
			snprintf(err, errlen, "%s: cannot use WAL mode (got '%s'): %s", r->db_path,
				 mode, sqlite3_errmsg(r->db));
			sqlite3_finalize(st);
			return -EIO;
		}
		sqlite3_finalize(st);
	}
	r->page_size = 4096;
	if (sqlite3_exec(r->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	/* Appends touch the right edge of each B-tree only: 512 KiB of cache is plenty. */
	if (sqlite3_exec(r->db, "PRAGMA cache_size = -512", NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	/*
	 * A checkpoint runs once the WAL passes a quarter of its budget and
	 * leaves the file at half of it: what remains is room for the one
	 * transaction that pushes it past (a poll, a retention step).
	 */
	snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit = %" PRId64, r->wal_budget / 2);
	if (sqlite3_exec(r->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	snprintf(sql, sizeof(sql), "PRAGMA wal_autocheckpoint = %" PRId64,
		 r->wal_budget / 4 / r->page_size > 8 ? r->wal_budget / 4 / r->page_size : 8);
	if (sqlite3_exec(r->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		goto sql_err;
	if (fresh) {
		rc = rec_create_schema(r->db, "main", err, errlen);
		if (rc)
			return rc;
		snprintf(sql, sizeof(sql), "INSERT INTO meta VALUES ('created_ms', '%" PRId64 "')",
			 real_ns() / 1000000);
		sqlite3_exec(r->db, sql, NULL, NULL, NULL);
	} else {
		rc = rec_check_schema(r->db, r->db_path, err, errlen);
		if (rc)
			return rc;
		/* an older rocewatch's: from now on it says which rules serve ran too */
		rc = rec_upgrade_schema(r->db, err, errlen);
		if (rc)
			return rc;
	}
	r->page_size = recorder_q1(r->db, "PRAGMA page_size", 0, 4096);
	return 0;
sql_err:
	snprintf(err, errlen, "%s: %s", r->db_path, sqlite3_errmsg(r->db));
	return -EIO;
}

static void standing_key(char *buf, size_t len, const char *device, const char *name)
{
	snprintf(buf, len, "%s\x1f%s", device ? device : "", name ? name : "");
}

/* The alerts the last run left firing (their last event), before anything is written. */
static int load_standing(struct recorder *r, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	char key[RW_NAME_MAX + 200];
	int rc;

	if (sqlite3_prepare_v2(r->db,
			       "SELECT device, name, detail FROM events WHERE kind = 'alert'"
			       " ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		goto sql_err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *dev = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *detail = (const char *)sqlite3_column_text(st, 2);

		standing_key(key, sizeof(key), dev, name);
		if (strmap_put(&r->standing, key,
			       detail && !strncmp(detail, "firing", 6) ? 1 : 0)) {
			sqlite3_finalize(st);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	if (rc != SQLITE_DONE)
		goto sql_err;
	sqlite3_finalize(st);
	r->n_standing = 0;
	for (size_t i = 0; i < r->standing.cap; i++)
		r->n_standing +=
		    r->standing.keys && r->standing.keys[i] && r->standing.vals[i] == 1;
	return 0;
sql_err:
	snprintf(err, errlen, "%s: reading events: %s", r->db_path, sqlite3_errmsg(r->db));
	sqlite3_finalize(st);
	return -EIO;
}

bool recorder_alert_was_standing(struct recorder *r, const char *device, const char *name)
{
	char key[RW_NAME_MAX + 200];
	bool was;

	standing_key(key, sizeof(key), device, name);
	pthread_mutex_lock(&r->standing_mu);
	was = strmap_get(&r->standing, key) == 1;
	if (was && strmap_put(&r->standing, key, 0))
		was = false; /* cannot remember it was asked: say no, a capture too many */
	if (was)
		r->n_standing--;
	pthread_mutex_unlock(&r->standing_mu);
	return was;
}

bool recorder_any_standing(struct recorder *r)
{
	bool any;

	pthread_mutex_lock(&r->standing_mu);
	any = r->n_standing > 0;
	pthread_mutex_unlock(&r->standing_mu);
	return any;
}

void recorder_opts_defaults(struct recorder_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->retention_ns = REC_DEFAULT_RETENTION_NS;
	o->max_size = REC_DEFAULT_MAX_SIZE;
	o->capture_before_ns = REC_DEFAULT_CAPTURE_BEFORE_NS;
	o->capture_after_ns = REC_DEFAULT_CAPTURE_AFTER_NS;
	o->capture_retention_ns = REC_DEFAULT_CAPTURE_RETENTION_NS;
	o->capture_max_size = REC_DEFAULT_CAPTURE_MAX_SIZE;
}

/* The directory's path and the size bound, and the budgets the bound gives. */
static int recorder_bounds(struct recorder *r, const struct recorder_opts *o, char *err,
			   size_t errlen)
{
	if (strlen(o->dir) >= sizeof(r->dir)) {
		snprintf(err, errlen, "--record: path too long");
		return -ENAMETOOLONG;
	}
	strlcpy0(r->dir, o->dir, sizeof(r->dir));
	snprintf(r->db_path, sizeof(r->db_path), "%s/%s", r->dir, REC_DB_NAME);
	if (o->max_size < REC_MIN_MAX_SIZE) {
		snprintf(err, errlen,
			 "--record.max-size: %" PRIu64 " bytes is below the minimum of %llu",
			 o->max_size, REC_MIN_MAX_SIZE);
		return -EINVAL;
	}
	/*
	 * The WAL holds at least one whole transaction (a poll, or a retention
	 * step) before a checkpoint can reset it: a quarter of small bounds.
	 */
	r->wal_budget = (int64_t)(o->max_size / 4 < (4u << 20) ? o->max_size / 4 : (4u << 20));
	/* Used pages stay under 90 % of what the WAL leaves; a cut goes down to 75 %. */
	r->target_bytes = (int64_t)((double)((int64_t)o->max_size - r->wal_budget) * 0.90);
	r->low_bytes = (int64_t)((double)((int64_t)o->max_size - r->wal_budget) * 0.75);
	/*
	 * Deleting a row rewrites its page into the WAL: a retention step stays
	 * at about half the WAL budget (~32 bytes a row with its page overhead).
	 */
	r->delete_chunk = r->wal_budget / 2 / 32;
	if (r->delete_chunk > DELETE_CHUNK)
		r->delete_chunk = DELETE_CHUNK;
	if (r->delete_chunk < 1000)
		r->delete_chunk = 1000;
	/* Keyframes at least every 1/16 of the bound (~24 bytes a row): cuts land close. */
	r->kf_max_rows = (uint64_t)(r->target_bytes / 24 / 16);
	return 0;
}

/* The directory made, checked for links and locked: one recorder per directory. */
static int lock_dir(struct recorder *r, char *err, size_t errlen)
{
	char lock_path[PATH_MAX + 16];
	int rc;

	/* --record /var/lib/x/y: create what is missing (0750, like the directory itself) */
	rc = mkdir_p(r->dir, 0750);
	if (rc) {
		snprintf(err, errlen, "--record: %s: %s", r->dir, strerror(-rc));
		return rc;
	}
	rc = refuse_links(r, err, errlen);
	if (rc)
		return rc;
	snprintf(lock_path, sizeof(lock_path), "%s/rocewatch.lock", r->dir);
	r->lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (r->lock_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "--record: %s: %s", lock_path, strerror(errno));
		return rc;
	}
	if (flock(r->lock_fd, LOCK_EX | LOCK_NB)) {
		rc = -errno;
		snprintf(err, errlen,
			 "--record: %s: another rocewatch is recording into this directory",
			 r->dir);
		return rc;
	}
	return 0;
}

static int prepare_all(struct recorder *r, char *err, size_t errlen)
{
	const struct {
		sqlite3_stmt **st;
		const char *sql;
	} stmts[] = {
		{ &r->st_series,
		  "INSERT OR IGNORE INTO series VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)" },
		{ &r->st_poll, "INSERT INTO polls VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)" },
		{ &r->st_sample, "INSERT INTO samples VALUES (?1, ?2, ?3)" },
		{ &r->st_config, "INSERT INTO config VALUES (?1, ?2, ?3, ?4)" },
		{ &r->st_event, "INSERT INTO events (t_ms, kind, object, device, name, detail)"
				" VALUES (?1, ?2, ?3, ?4, ?5, ?6)" },
		{ &r->st_run, "INSERT INTO runs (t_ms, host, version, interval_ms, pid)"
			      " VALUES (?1, ?2, ?3, ?4, ?5)" },
		{ &r->st_host, "INSERT OR REPLACE INTO meta VALUES ('host', ?1)" },
		{ &r->st_profile,
		  "INSERT OR REPLACE INTO profiles VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)" },
		{ &r->st_pages, "PRAGMA page_count" },
		{ &r->st_free, "PRAGMA freelist_count" },
		{ &r->st_begin, "BEGIN" },
		{ &r->st_commit, "COMMIT" },
		{ &r->st_rollback, "ROLLBACK" },
	};
	int rc;

	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++) {
		rc = prepare(r, stmts[i].st, stmts[i].sql, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static int start_threads(struct recorder *r, char *err, size_t errlen)
{
	int rc;

	if ((rc = -pthread_create(&r->writer, NULL, recorder_writer_main, r))) {
		snprintf(err, errlen, "recorder: cannot start the writer: %s", strerror(-rc));
		return rc;
	}
	r->writer_started = true;
	if ((rc = -pthread_create(&r->capturer, NULL, recorder_capture_main, r))) {
		snprintf(err, errlen, "recorder: cannot start the capture thread: %s",
			 strerror(-rc));
		return rc;
	}
	r->capturer_started = true;
	return 0;
}

int recorder_open(struct recorder **out, const struct recorder_opts *o, char *err, size_t errlen)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->lock_fd = -1;
	pthread_mutex_init(&r->mu, NULL);
	pthread_mutex_init(&r->standing_mu, NULL);
	pthread_cond_init(&r->cv_writer, NULL);
	pthread_cond_init(&r->cv_idle, NULL);
	pthread_cond_init(&r->cv_capture, NULL);
	rc = recorder_bounds(r, o, err, errlen);
	if (!rc)
		rc = lock_dir(r, err, errlen);
	if (rc)
		goto fail;
	remove_stale_tmp(r->dir);
	recorder_prune_captures(r);
	rc = open_db(r, err, errlen);
	if (!rc)
		rc = load_series_map(r, err, errlen);
	if (!rc)
		rc = load_standing(r, err, errlen);
	if (rc)
		goto fail;
	r->seq = recorder_q1(r->db, "SELECT max(seq) FROM polls", 0, 0);
	r->last_t_ms = recorder_q1(r->db, "SELECT max(t_ms) FROM polls", 0, 0);
	CNT_SET(r, last_seq, r->seq);
	CNT_SET(r, last_t_ms, r->last_t_ms);
	CNT_SET(r, series, (uint64_t)r->max_id);
	r->need_kf = true;
	rc = prepare_all(r, err, errlen);
	if (rc)
		goto fail;
	ring_init(&r->q, r->q_slot, QUEUE_LEN + 1);
	for (int i = 0; i <= QUEUE_LEN; i++) {
		struct batch *b = calloc(1, sizeof(*b));

		if (!b) {
			rc = -ENOMEM;
			goto fail;
		}
		r->free_b[r->n_free++] = b;
	}
	recorder_update_size(r);
	r->maint_keep = -1;
	r->next_age_check = 0; /* apply retention to what an earlier run left, now */
	rc = start_threads(r, err, errlen);
	if (rc)
		goto fail;
	*out = r;
	return 0;
fail:
	recorder_close(r);
	return rc ? rc : -EIO;
}

void recorder_flush(struct recorder *r)
{
	pthread_mutex_lock(&r->mu);
	while (r->writer_started && (ring_len(&r->q) || r->writing))
		pthread_cond_wait(&r->cv_idle, &r->mu);
	pthread_mutex_unlock(&r->mu);
}

/* Set a thread's stop flag (under mu), wake it and wait for it. */
static void stop_thread(struct recorder *r, bool *stop, pthread_cond_t *cv, pthread_t t)
{
	pthread_mutex_lock(&r->mu);
	*stop = true;
	pthread_cond_broadcast(cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(t, NULL);
}

void recorder_close(struct recorder *r)
{
	if (!r)
		return;
	if (r->writer_started) /* first: it drains the queue */
		stop_thread(r, &r->stop_writer, &r->cv_writer, r->writer);
	if (r->capturer_started) /* then: pending captures get the data there is */
		stop_thread(r, &r->stop_capture, &r->cv_capture, r->capturer);
	while (r->jobs) {
		struct capture_job *j = r->jobs;

		r->jobs = j->next;
		recorder_capture_job_free(j);
	}
	sqlite3_finalize(r->st_series);
	sqlite3_finalize(r->st_poll);
	sqlite3_finalize(r->st_sample);
	sqlite3_finalize(r->st_config);
	sqlite3_finalize(r->st_event);
	sqlite3_finalize(r->st_run);
	sqlite3_finalize(r->st_host);
	sqlite3_finalize(r->st_profile);
	sqlite3_finalize(r->st_pages);
	sqlite3_finalize(r->st_free);
	sqlite3_finalize(r->st_begin);
	sqlite3_finalize(r->st_commit);
	sqlite3_finalize(r->st_rollback);
	if (r->db)
		sqlite3_close(r->db);
	for (size_t i = 0; i < r->n_free; i++)
		recorder_batch_free(r->free_b[i]);
	for (struct batch *b; (b = ring_pop(&r->q));)
		recorder_batch_free(b);
	for (size_t i = 0; i < r->n_objs; i++)
		recorder_objrec_free(r->objs[i]);
	for (size_t i = 0; i < r->n_pend_ev; i++)
		free(r->pend_ev[i].detail);
	recorder_profset_free(r->pend_prof);
	recorder_profset_free(r->retry_prof);
	free(r->pend_ev);
	free(r->objs);
	free(r->st);
	free(r->carry);
	free(r->retry);
	strmap_free(&r->series_map);
	strmap_free(&r->obj_map);
	strmap_free(&r->standing);
	pthread_mutex_destroy(&r->standing_mu);
	if (r->lock_fd >= 0)
		close(r->lock_fd);
	pthread_cond_destroy(&r->cv_writer);
	pthread_cond_destroy(&r->cv_idle);
	pthread_cond_destroy(&r->cv_capture);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
