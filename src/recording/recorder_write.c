// SPDX-License-Identifier: MIT
/*
 * The flight recorder's writer thread: it owns the database connection,
 * commits the batches the poll loop queues (one transaction a poll), and
 * between them applies retention in bounded steps.  Durability and deltas:
 * recorder_int.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "recorder_int.h"
#include "recording_schema.h"
#include "util.h"

#define AGE_CHECK_NS (10LL * 1000000000LL)

static int step_done(struct recorder *r, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : rc;
	(void)r;
}

static int64_t pragma_int(sqlite3_stmt *st)
{
	int64_t v = -1;

	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

static const char *reason_text(uint8_t reason)
{
	return reason == ABS__COUNT ? ABS_GONE_NAME : absent_reason_name(reason);
}

static int write_profiles(struct recorder *r, const struct profset *ps)
{
	int rc = 0;

	for (size_t i = 0; ps && i < ps->n && !rc; i++) {
		const struct profrow *w = &ps->rows[i];
		char hash[20];

		snprintf(hash, sizeof(hash), "%016" PRIx64, w->text_hash);
		sqlite3_bind_int64(r->st_profile, 1, ps->t_ms);
		sqlite3_bind_int64(r->st_profile, 2, (int64_t)i);
		sqlite3_bind_text(r->st_profile, 3, w->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_profile, 4, w->source, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_profile, 5, w->origin, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_profile, 6, hash, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(r->st_profile, 7, w->params, -1, SQLITE_STATIC);
		rc = step_done(r, r->st_profile);
	}
	return rc;
}

/* The run's row and the host, before its first poll. */
static int write_run(struct recorder *r, const struct batch *b)
{
	int rc;

	sqlite3_bind_int64(r->st_run, 1, b->t_ms);
	sqlite3_bind_text(r->st_run, 2, b->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(r->st_run, 3, ROCEWATCH_VERSION, -1, SQLITE_STATIC);
	sqlite3_bind_int64(r->st_run, 4, r->o.interval_ns / 1000000);
	sqlite3_bind_int64(r->st_run, 5, getpid());
	if ((rc = step_done(r, r->st_run)))
		return rc;
	r->run = sqlite3_last_insert_rowid(r->db);
	sqlite3_bind_text(r->st_host, 1, b->host, -1, SQLITE_STATIC);
	return step_done(r, r->st_host);
}

/* The series a failed transaction lost first, then the batch's new ones. */
static int write_defs(struct recorder *r, const struct batch *b)
{
	int rc;

	for (size_t i = 0; i < r->n_retry + b->n_defs; i++) {
		const struct series_def *d =
		    i < r->n_retry ? &r->retry[i] : &b->defs[i - r->n_retry];

		sqlite3_bind_int64(r->st_series, 1, d->id);
		sqlite3_bind_text(r->st_series, 2, obj_kind_name(d->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_series, 3, d->device, -1, SQLITE_STATIC);
		sqlite3_bind_int64(r->st_series, 4, d->port);
		sqlite3_bind_text(r->st_series, 5, d->netdev, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_series, 6, rec_source_name(d->src), -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_series, 7, d->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(r->st_series, 8, d->prio);
		sqlite3_bind_int64(r->st_series, 9, d->config);
		if ((rc = step_done(r, r->st_series)))
			return rc;
	}
	return 0;
}

static int write_poll(struct recorder *r, const struct batch *b)
{
	sqlite3_bind_int64(r->st_poll, 1, b->seq);
	sqlite3_bind_int64(r->st_poll, 2, b->t_ms);
	sqlite3_bind_int64(r->st_poll, 3, r->run);
	sqlite3_bind_int64(r->st_poll, 4, b->what);
	sqlite3_bind_int64(r->st_poll, 5, b->keyframe);
	sqlite3_bind_int64(r->st_poll, 6, (int64_t)b->n_rows);
	sqlite3_bind_int64(r->st_poll, 7, (int64_t)b->n_crows);
	sqlite3_bind_int64(r->st_poll, 8, b->dropped);
	return step_done(r, r->st_poll);
}

static int write_samples(struct recorder *r, const struct batch *b)
{
	int rc;

	for (size_t i = 0; i < b->n_rows; i++) {
		const struct row *w = &b->rows[i];

		sqlite3_bind_int64(r->st_sample, 1, b->t_ms);
		sqlite3_bind_int64(r->st_sample, 2, w->id);
		if (w->type == ROW_INT) {
			sqlite3_bind_int64(r->st_sample, 3, w->v);
		} else if (w->type == ROW_FLOAT) {
			double d;

			memcpy(&d, &w->v, sizeof(d));
			sqlite3_bind_double(r->st_sample, 3, d);
		}
		/* ROW_NULL: unbound parameters are NULL */
		if ((rc = step_done(r, r->st_sample)))
			return rc;
	}
	return 0;
}

static int write_config_rows(struct recorder *r, const struct batch *b)
{
	int rc;

	for (size_t i = 0; i < b->n_crows; i++) {
		const struct crow *w = &b->crows[i];

		sqlite3_bind_int64(r->st_config, 1, b->t_ms);
		sqlite3_bind_int64(r->st_config, 2, w->id);
		if (w->off != SIZE_MAX)
			sqlite3_bind_text(r->st_config, 3, b->arena.buf + w->off, -1,
					  SQLITE_STATIC);
		else
			sqlite3_bind_text(r->st_config, 4, reason_text(w->reason), -1,
					  SQLITE_STATIC);
		if ((rc = step_done(r, r->st_config)))
			return rc;
	}
	return 0;
}

static int write_events(struct recorder *r, const struct batch *b)
{
	int rc;

	for (size_t i = 0; i < b->n_evs; i++) {
		const struct evrow *e = &b->evs[i];

		sqlite3_bind_int64(r->st_event, 1, e->t_ms);
		sqlite3_bind_text(r->st_event, 2, e->kind, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_event, 3, e->object, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_event, 4, e->device, -1, SQLITE_STATIC);
		sqlite3_bind_text(r->st_event, 5, e->name, -1, SQLITE_STATIC);
		if (e->detail)
			sqlite3_bind_text(r->st_event, 6, e->detail, -1, SQLITE_STATIC);
		if ((rc = step_done(r, r->st_event)))
			return rc;
	}
	return 0;
}

/* A poll's transaction: its rows, in the order the reader's keys need them. */
static int write_rows(struct recorder *r, struct batch *b)
{
	int rc = step_done(r, r->st_begin);

	if (!rc && b->first_of_run)
		rc = write_run(r, b);
	if (!rc)
		rc = write_defs(r, b);
	if (!rc)
		rc = write_poll(r, b);
	if (!rc)
		rc = write_samples(r, b);
	if (!rc)
		rc = write_config_rows(r, b);
	/* an older set a failed transaction lost first: the newer one then replaces it */
	if (!rc)
		rc = write_profiles(r, r->retry_prof);
	if (!rc)
		rc = write_profiles(r, b->prof);
	if (!rc)
		rc = write_events(r, b);
	if (!rc)
		rc = step_done(r, r->st_commit);
	return rc;
}

/* A lost transaction: say so once, keep what the next one must write again. */
static int write_failed(struct recorder *r, struct batch *b, int rc)
{
	if (!r->failing++)
		log_err("recorder: %s: writing poll %" PRId64 ": %s; polls are not recorded until "
			"a write works again",
			r->db_path, b->seq, sqlite3_errstr(rc));
	step_done(r, r->st_rollback);
	/* The series this batch introduced are known by id from now on: insert them next time. */
	recorder_keep_defs(&r->retry, &r->n_retry, &r->cap_retry, b);
	/*
	 * The rules this poll ran with, kept for the next transaction: only the
	 * newest set, since the polls that ran the older one are lost.
	 */
	if (b->prof) {
		recorder_profset_free(r->retry_prof);
		r->retry_prof = b->prof;
		b->prof = NULL;
	}
	CNT_ADD(r, write_errors, 1);
	CNT_ADD(r, dropped, 1);
	/* What the poll loop believes is stored is not: make it send every value again. */
	pthread_mutex_lock(&r->mu);
	r->resync = true;
	pthread_mutex_unlock(&r->mu);
	return -EIO;
}

static int write_batch(struct recorder *r, struct batch *b)
{
	int64_t t0 = mono_ns();
	int rc = write_rows(r, b);

	if (rc)
		return write_failed(r, b, rc);
	r->n_retry = 0;
	recorder_profset_free(r->retry_prof);
	r->retry_prof = NULL;
	CNT_ADD(r, polls, 1);
	CNT_ADD(r, samples, b->n_rows);
	CNT_ADD(r, config_rows, b->n_crows);
	CNT_SET(r, last_seq, b->seq);
	CNT_SET(r, last_t_ms, b->t_ms);
	__atomic_store_n(&r->commit_ns, mono_ns() - t0, __ATOMIC_RELAXED);
	if (r->failing) {
		/* the failure was said once: say its end too, or the log reads as still failing */
		log_info("recorder: %s: recording again from poll %" PRId64 " (%" PRIu64
			 " polls were not recorded)",
			 r->db_path, b->seq, r->failing);
		r->failing = 0;
	}
	rw_log_once_reset("recorder-write");
	return 0;
}

static int exec1(struct recorder *r, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(r->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		rw_log_once(LOG_LVL_ERROR, "recorder-maint", "recorder: %s: %s", r->db_path,
			    msg ? msg : "?");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

int64_t recorder_q1(sqlite3 *db, const char *sql, int64_t a, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (int64_t)st.st_size;
}

void recorder_update_size(struct recorder *r)
{
	char wal[PATH_MAX + 8];

	snprintf(wal, sizeof(wal), "%s-wal", r->db_path);
	CNT_SET(r, db_bytes, (uint64_t)(file_size(r->db_path) + file_size(wal)));
}

/*
 * Delete the oldest polls, at most r->delete_chunk rows per transaction, up to
 * (not including) the keyframe at `keep`.  Returns 1 while more is to do.
 */
static int delete_before(struct recorder *r, int64_t keep)
{
	sqlite3_stmt *st;
	int64_t upto = -1, rows = 0, polls = 0;
	char sql[160];
	int rc;

	rc = sqlite3_prepare_v2(
	    r->db, "SELECT t_ms, n_samples + n_config FROM polls WHERE t_ms < ?1 ORDER BY t_ms", -1,
	    &st, NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int64(st, 1, keep);
	while (sqlite3_step(st) == SQLITE_ROW) {
		upto = sqlite3_column_int64(st, 0);
		rows += sqlite3_column_int64(st, 1);
		polls++;
		if (rows >= r->delete_chunk)
			break;
	}
	sqlite3_finalize(st);
	if (upto < 0)
		return 0;
	if (exec1(r, "BEGIN"))
		return -EIO;
	static const char *const tables[] = { "samples", "config", "polls", "events" };
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE t_ms <= %" PRId64, tables[i],
			 upto);
		if (exec1(r, sql)) {
			exec1(r, "ROLLBACK");
			return -EIO;
		}
	}
	/* the sets of rules no poll left ran with: all but the one in force at the oldest poll */
	if (exec1(r, "DELETE FROM profiles WHERE t_ms < (SELECT max(t_ms) FROM profiles"
		     " WHERE t_ms <= (SELECT min(t_ms) FROM polls))")) {
		exec1(r, "ROLLBACK");
		return -EIO;
	}
	if (exec1(r, "COMMIT")) {
		exec1(r, "ROLLBACK");
		return -EIO;
	}
	CNT_ADD(r, deleted_polls, (uint64_t)polls);
	return upto < keep ? 1 : 0;
}

/* The poll loop should write its next poll in full (a keyframe). */
static void request_keyframe(struct recorder *r)
{
	pthread_mutex_lock(&r->mu);
	r->kf_request = true;
	pthread_mutex_unlock(&r->mu);
}

/*
 * Where a size cut should go: the poll by which `want` rows (plus one per
 * poll, for the polls row itself) have been passed, oldest first.
 */
static int64_t size_cut(struct recorder *r, int64_t used)
{
	int64_t total =
	    recorder_q1(r->db, "SELECT sum(n_samples + n_config) + count(*) FROM polls", 0, 0);
	int64_t want = (int64_t)((double)total * (double)(used - r->low_bytes) / (double)used);
	int64_t acc = 0, cut = -1;
	sqlite3_stmt *st;

	if (want <= 0 ||
	    sqlite3_prepare_v2(r->db,
			       "SELECT t_ms, n_samples + n_config + 1 FROM polls ORDER BY t_ms", -1,
			       &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		acc += sqlite3_column_int64(st, 1);
		cut = sqlite3_column_int64(st, 0);
		if (acc >= want)
			break;
	}
	sqlite3_finalize(st);
	return cut;
}

/*
 * One step of retention (a bounded transaction); true while more steps are
 * due.  Age: delete before the newest keyframe older than the retention.
 * Size: when the used pages pass 90 % of the bound, delete the oldest polls
 * down to 75 %, up to the next keyframe.  Deleted pages are reused by new
 * rows, so the file stops growing at about the bound.
 */
static bool maintain(struct recorder *r)
{
	int64_t pages = pragma_int(r->st_pages), freep = pragma_int(r->st_free);
	int64_t used = (pages - freep) * r->page_size;
	int64_t now_ms = real_ns() / 1000000;
	bool over = used > r->target_bytes;
	int rc;

	if (r->maint_keep < 0) {
		int64_t keep = -1;

		if (!over && mono_ns() < r->next_age_check)
			return false;
		if (mono_ns() >= r->next_age_check) {
			/* A short retention (tests) is checked more often than every 10 s. */
			int64_t every = r->o.retention_ns / 4 < AGE_CHECK_NS ? r->o.retention_ns / 4
									     : AGE_CHECK_NS;

			r->next_age_check = mono_ns() + (every > 100000000LL ? every : 100000000LL);
			keep = recorder_q1(
			    r->db, "SELECT max(t_ms) FROM polls WHERE keyframe AND t_ms <= ?1",
			    now_ms - r->o.retention_ns / 1000000, -1);
		}
		if (over) {
			int64_t cut = size_cut(r, used), k2 = -1;

			if (cut >= 0)
				k2 = recorder_q1(
				    r->db,
				    "SELECT min(t_ms) FROM polls WHERE keyframe AND t_ms > ?1", cut,
				    -1);
			if (k2 < 0)
				request_keyframe(r); /* nothing to cut at yet: make a place */
			if (k2 > keep)
				keep = k2;
		}
		if (keep < 0)
			return false;
		r->maint_keep = keep;
	}
	rc = delete_before(r, r->maint_keep);
	if (rc > 0)
		return true;
	r->maint_keep = -1;
	if (rc == 0) {
		/* Hand pages beyond the bound back to the file system (auto_vacuum=INCREMENTAL). */
		int64_t excess = pages * r->page_size - ((int64_t)r->o.max_size - r->wal_budget);

		if (excess > 0 && freep > 0) {
			char sql[64];

			snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%" PRId64 ")",
				 excess / r->page_size + 1);
			exec1(r, sql);
		}
	}
	return false;
}

void *recorder_writer_main(void *arg)
{
	struct recorder *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct batch *b;
		bool more;

		while (!ring_len(&r->q) && !r->stop_writer && !r->maint_more) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += 1;
			pthread_cond_timedwait(&r->cv_writer, &r->mu, &ts);
			if (mono_ns() >= r->next_age_check)
				break;
		}
		if (!ring_len(&r->q) && r->stop_writer)
			break;
		b = NULL;
		b = ring_pop(&r->q);
		if (b)
			r->writing = true;
		pthread_mutex_unlock(&r->mu);
		if (b)
			write_batch(r, b);
		more = maintain(r);
		recorder_update_size(r);
		pthread_mutex_lock(&r->mu);
		if (b) {
			recorder_batch_reset(b);
			r->free_b[r->n_free++] = b;
			r->writing = false;
		}
		r->maint_more = more;
		if (!ring_len(&r->q) && !r->writing)
			pthread_cond_broadcast(&r->cv_idle);
		pthread_cond_broadcast(&r->cv_capture);
	}
	pthread_cond_broadcast(&r->cv_idle);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}
