// SPDX-License-Identifier: MIT
/*
 * Flight recorder captures: a request (SIGUSR1, POST /api/v1/capture, an
 * alert) names a window around now; the poll thread adds the snapshot and
 * rule results at the trigger; once the window's end is committed, the
 * capture thread cuts it from its own read connection into a self-contained
 * capture file, written under a temporary name and renamed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "recorder_int.h"
#include "recording_schema.h"
#include "snapshot.h"
#include "util.h"

static int cap_exec(sqlite3 *db, const char *sql, const int64_t *args, int nargs, char *err,
		    size_t errlen)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK) {
		for (int i = 0; i < nargs; i++)
			sqlite3_bind_int64(st, i + 1, args[i]);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE || rc == SQLITE_ROW)
			return 0;
	}
	snprintf(err, errlen, "%s", sqlite3_errmsg(db));
	return -EIO;
}

/* Statements run in order, each binding the first nargs of the caller's numbers as ?1..?n. */
struct cap_step {
	const char *sql;
	int nargs;
};

static int cap_steps(sqlite3 *db, const struct cap_step *steps, size_t n, const int64_t *args,
		     char *err, size_t errlen)
{
	int rc = 0;

	for (size_t i = 0; i < n && !rc; i++)
		rc = cap_exec(db, steps[i].sql, args, steps[i].nargs, err, errlen);
	return rc;
}

/*
 * The state at the window's start, as a keyframe at its first poll (?1), from
 * the keyframe at or before it (?2), then every row up to the window's end (?3).
 * max() makes SQLite take the bare columns from the row holding the maximum
 * (https://www.sqlite.org/lang_select.html#bareagg): the last value of each
 * series at the first poll.
 */
static const struct cap_step cap_from_first_poll[] = {
	{ "INSERT INTO cap.samples SELECT ?1, series_id, value FROM"
	  " (SELECT series_id, value, max(t_ms) FROM main.samples"
	  "  WHERE t_ms >= ?2 AND t_ms <= ?1 GROUP BY series_id)"
	  " WHERE value IS NOT NULL",
	  2 },
	{ "INSERT INTO cap.config SELECT ?1, series_id, value, absent FROM"
	  " (SELECT series_id, value, absent, max(t_ms) FROM main.config"
	  "  WHERE t_ms >= ?2 AND t_ms <= ?1 GROUP BY series_id)"
	  " WHERE value IS NOT NULL OR absent <> '" ABS_GONE_NAME "'",
	  2 },
	{ "INSERT INTO cap.samples SELECT * FROM main.samples WHERE t_ms > ?1 AND t_ms <= ?3", 3 },
	{ "INSERT INTO cap.config SELECT * FROM main.config WHERE t_ms > ?1 AND t_ms <= ?3", 3 },
	{ "INSERT INTO cap.polls SELECT * FROM main.polls WHERE t_ms >= ?1 AND t_ms <= ?3", 3 },
	{ "UPDATE cap.polls SET keyframe = 1, dropped = 0,"
	  " n_samples = (SELECT count(*) FROM cap.samples WHERE t_ms = ?1),"
	  " n_config = (SELECT count(*) FROM cap.config WHERE t_ms = ?1)"
	  " WHERE t_ms = ?1",
	  1 },
};

/*
 * What every capture holds whatever its window: the series, their runs, the
 * events in [?1, ?2], and the rules serve ran from its first poll (?3) on.
 */
static const struct cap_step cap_always[] = {
	{ "INSERT INTO cap.series SELECT * FROM main.series", 0 },
	{ "INSERT INTO cap.runs SELECT * FROM main.runs WHERE run IN"
	  " (SELECT DISTINCT run FROM cap.polls)",
	  0 },
	{ "INSERT INTO cap.events SELECT * FROM main.events WHERE t_ms >= ?1 AND t_ms <= ?2", 2 },
	{ "INSERT INTO cap.profiles SELECT * FROM main.profiles WHERE t_ms <= ?2 AND t_ms >="
	  " coalesce((SELECT max(t_ms) FROM main.profiles WHERE t_ms <= ?3), 0)",
	  3 },
};

static int cap_meta(sqlite3 *db, const char *key, const char *val)
{
	sqlite3_stmt *st;
	int rc;

	if (!val)
		return 0;
	rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO cap.meta VALUES (?1, ?2)", -1, &st,
				NULL);
	if (rc != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, val, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int fsync_path(const char *path, bool dir)
{
	int fd = open(path, (dir ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		r = -errno;
	close(fd);
	return r;
}

/*
 * Cut [start, end] out of the recording into a capture file: the state at
 * the window's start (the newest poll at or before it, as a synthetic
 * keyframe), every row after it, the events, the snapshot and rule results
 * taken at the trigger.
 */
static int write_capture(struct recorder *r, struct capture_job *j, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 8], num[32];
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	int64_t p0, kf, a[3];
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", j->file);
	unlink(tmp);
	if (sqlite3_open_v2(r->db_path, &db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
			    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", db ? sqlite3_errmsg(db) : "cannot open");
		rc = -EIO;
		goto close_db;
	}
	sqlite3_busy_timeout(db, 5000);
	rc = sqlite3_prepare_v2(db, "ATTACH ?1 AS cap", -1, &st, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%.300s: %s", tmp, sqlite3_errmsg(db));
		rc = -EIO;
		goto close_db;
	}
	/* Built under a temporary name and renamed: no journal needed, we fsync at the end. */
	if ((rc = cap_exec(db, "PRAGMA cap.journal_mode = OFF", NULL, 0, err, errlen)) ||
	    (rc = cap_exec(db, "PRAGMA cap.synchronous = OFF", NULL, 0, err, errlen)) ||
	    (rc = rec_create_schema(db, "cap", err, errlen)) ||
	    (rc = cap_exec(db, "BEGIN", NULL, 0, err, errlen)))
		goto close_db;
	a[0] = j->start_ms;
	/*
	 * The first poll is the newest one at or before the window's start, so
	 * the capture covers the whole window (the state at its start is that
	 * poll's); only when the recording begins later is it the first poll.
	 */
	p0 = recorder_q1(db,
			 "SELECT coalesce((SELECT max(t_ms) FROM main.polls WHERE t_ms <= ?1),"
			 " (SELECT min(t_ms) FROM main.polls WHERE t_ms > ?1))",
			 j->start_ms, -1);
	if (p0 >= 0 && p0 <= j->end_ms) {
		kf = recorder_q1(
		    db,
		    "SELECT coalesce((SELECT max(t_ms) FROM main.polls WHERE keyframe AND t_ms "
		    "<= ?1),"
		    " (SELECT min(t_ms) FROM main.polls))",
		    p0, p0);
		a[0] = p0;
		a[1] = kf;
		a[2] = j->end_ms;
		if ((rc = cap_steps(db, cap_from_first_poll, ARRAY_SIZE(cap_from_first_poll), a,
				    err, errlen)))
			goto close_db;
	}
	a[0] = j->start_ms;
	a[1] = j->end_ms;
	a[2] = p0 >= 0 && p0 <= j->end_ms ? p0 : j->start_ms;
	if ((rc = cap_steps(db, cap_always, ARRAY_SIZE(cap_always), a, err, errlen)))
		goto close_db;
	pthread_mutex_lock(&r->mu);
	rc = cap_meta(db, "host", r->host);
	pthread_mutex_unlock(&r->mu);
	snprintf(num, sizeof(num), "%" PRId64, j->trigger_ms);
	rc = rc ?: cap_meta(db, "capture_trigger_ms", num);
	snprintf(num, sizeof(num), "%" PRId64, j->start_ms);
	rc = rc ?: cap_meta(db, "window_start_ms", num);
	snprintf(num, sizeof(num), "%" PRId64, j->end_ms);
	rc = rc ?: cap_meta(db, "window_end_ms", num);
	rc = rc ?: cap_meta(db, "capture_reason", j->reason);
	rc = rc ?: cap_meta(db, "capture_reasons", j->reasons);
	rc = rc ?: cap_meta(db, "rocewatch_version", ROCEWATCH_VERSION);
	rc = rc ?: cap_meta(db, "snapshot", j->snapshot);
	rc = rc ?: cap_meta(db, "rule_results", j->rules);
	if (rc) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(db));
		goto close_db;
	}
	if ((rc = cap_exec(db, "COMMIT", NULL, 0, err, errlen)) ||
	    (rc = cap_exec(db, "DETACH cap", NULL, 0, err, errlen)))
		goto close_db;
	sqlite3_close(db);
	db = NULL;
	if ((rc = fsync_path(tmp, false)) || rename(tmp, j->file)) {
		rc = rc ?: -errno;
		snprintf(err, errlen, "%.300s: %s", j->file, strerror(-rc));
		goto close_db;
	}
	fsync_path(r->dir, true);
	return 0;
close_db:
	if (db)
		sqlite3_close(db);
	unlink(tmp);
	return rc ? rc : -EIO;
}

void recorder_capture_job_free(struct capture_job *j)
{
	free(j->snapshot);
	free(j->rules);
	free(j);
}

struct cap_file {
	char name[256];
	off_t size;
	time_t mtime;
};

static int cap_file_cmp(const void *a, const void *b)
{
	const struct cap_file *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime ? 1 : strcmp(x->name, y->name);
}

/*
 * Capture retention, like the recording's: files older than
 * capture_retention_ns go, then the oldest until the rest fit in
 * capture_max_size.  The newest is always kept.  Anyone who may trigger a
 * capture could otherwise fill the disk with them.
 */
void recorder_prune_captures(struct recorder *r)
{
	struct cap_file *f = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	time_t now = time(NULL);
	struct dirent *e;
	DIR *d;

	if (!r->o.capture_retention_ns && !r->o.capture_max_size)
		return;
	d = opendir(r->dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char p[PATH_MAX + 256];
		struct stat st;

		if (strncmp(e->d_name, "capture-", 8) || len < 11 || len >= sizeof(f->name) ||
		    strcmp(e->d_name + len - 3, ".db"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", r->dir, e->d_name);
		if (lstat(p, &st) || !S_ISREG(st.st_mode))
			continue;
		if (array_grow(&f, &cap, n, sizeof(*f), 16))
			break;
		strlcpy0(f[n].name, e->d_name, sizeof(f[n].name));
		f[n].size = st.st_size;
		f[n].mtime = st.st_mtime;
		total += (uint64_t)st.st_size;
		n++;
	}
	closedir(d);
	if (n)
		qsort(f, n, sizeof(*f), cap_file_cmp);
	for (size_t i = 0; i + 1 < n; i++) {
		bool old = r->o.capture_retention_ns &&
			   (int64_t)(now - f[i].mtime) * 1000000000LL > r->o.capture_retention_ns;
		bool big = r->o.capture_max_size && total > r->o.capture_max_size;
		char p[PATH_MAX + 256];

		if (!old && !big)
			break;
		snprintf(p, sizeof(p), "%s/%s", r->dir, f[i].name);
		if (!unlink(p)) {
			total -= (uint64_t)f[i].size;
			CNT_ADD(r, captures_deleted, 1);
			log_info("recorder: capture %s deleted (%s)", f[i].name,
				 old ? "older than --record.capture-retention"
				     : "captures over --record.capture-max-size");
		}
	}
	free(f);
}

void *recorder_capture_main(void *arg)
{
	struct recorder *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct capture_job *j = NULL, **pp;
		int64_t now = real_ns() / 1000000;
		int64_t committed = CNT_GET(r, last_t_ms);
		char err[512];
		int rc;

		for (pp = &r->jobs; *pp; pp = &(*pp)->next) {
			struct capture_job *c = *pp;
			/* The window's tail is committed, or the poll loop has stalled past it. */
			bool due = now >= c->end_ms &&
				   (committed >= c->end_ms ||
				    now >= c->end_ms + 3 * r->o.interval_ns / 1000000 + 5000);

			if (r->stop_capture || (c->have_snapshot && due)) {
				j = c;
				*pp = c->next;
				break;
			}
		}
		if (!j) {
			struct timespec ts = ns_ts(real_ns() + 200 * 1000000LL);

			if (r->stop_capture)
				break;
			pthread_cond_timedwait(&r->cv_capture, &r->mu, &ts);
			continue;
		}
		pthread_mutex_unlock(&r->mu);
		if (j->end_ms > now) /* stopping early: the window ends where the data does */
			j->end_ms = committed > j->start_ms ? committed : now;
		rc = write_capture(r, j, err, sizeof(err));
		if (rc) {
			CNT_ADD(r, capture_errors, 1);
			log_err("recorder: capture %s failed: %s", j->file, err);
		} else {
			CNT_ADD(r, captures, 1);
			log_info("recorder: capture written: %s (%s)", j->file, j->reasons);
			recorder_prune_captures(r);
		}
		recorder_capture_job_free(j);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void sanitize_reason(char *out, size_t len, const char *in)
{
	size_t n = 0;

	for (const char *p = in ? in : ""; *p && n + 1 < len; p++) {
		char c = *p;

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')
			out[n++] = c;
		else if (c >= 'A' && c <= 'Z')
			out[n++] = (char)(c - 'A' + 'a');
		else if (n && out[n - 1] != '_')
			out[n++] = '_';
	}
	out[n] = '\0';
	if (!n)
		strlcpy0(out, "manual", len);
}

int recorder_capture(struct recorder *r, const char *reason, char *file, size_t filelen)
{
	int64_t now = real_ns() / 1000000;
	struct capture_job *j;
	char rs[48], ts[32], host[RW_NAME_MAX];
	time_t sec = (time_t)(now / 1000);
	struct tm tm;

	sanitize_reason(rs, sizeof(rs), reason);
	pthread_mutex_lock(&r->mu);
	for (j = r->jobs; j; j = j->next) {
		if (j->end_ms < now)
			continue;
		/* Pending and still open: this trigger is inside its window already. */
		if (!strstr(j->reasons, rs) &&
		    strlen(j->reasons) + strlen(rs) + 2 < sizeof(j->reasons)) {
			strcat(j->reasons, ",");
			strcat(j->reasons, rs);
		}
		if (file)
			strlcpy0(file, j->file, filelen);
		pthread_mutex_unlock(&r->mu);
		return 0;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		pthread_mutex_unlock(&r->mu);
		return -ENOMEM;
	}
	sanitize_reason(host, sizeof(host), r->host[0] ? r->host : "host");
	gmtime_r(&sec, &tm);
	strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm);
	strlcpy0(j->reason, rs, sizeof(j->reason));
	strlcpy0(j->reasons, rs, sizeof(j->reasons));
	snprintf(j->file, sizeof(j->file), "%s/capture-%s-%s-%s.db", r->dir, host, ts, rs);
	for (int n = 2; !access(j->file, F_OK) && n < 100; n++)
		snprintf(j->file, sizeof(j->file), "%s/capture-%s-%s-%s-%d.db", r->dir, host, ts,
			 rs, n);
	j->trigger_ms = now;
	j->start_ms = now - r->o.capture_before_ns / 1000000;
	j->end_ms = now + r->o.capture_after_ns / 1000000;
	j->next = r->jobs;
	r->jobs = j;
	if (file)
		strlcpy0(file, j->file, filelen);
	pthread_cond_broadcast(&r->cv_capture);
	pthread_mutex_unlock(&r->mu);
	log_info("recorder: capture requested (%s): %s, finalised at +%.0f s", rs, j->file,
		 (double)r->o.capture_after_ns / 1e9);
	return 0;
}

void recorder_capture_snapshots(struct recorder *r, struct batch *b, struct node_model *m)
{
	struct capture_job *j;

	pthread_mutex_lock(&r->mu);
	for (j = r->jobs; j; j = j->next) {
		struct strbuf sb = { 0 };
		struct evrow *e;

		if (j->have_snapshot)
			continue;
		if (!snapshot_write(&sb, m, 0)) {
			j->snapshot = sb.buf;
			sb.buf = NULL;
		}
		sb_free(&sb);
		if (r->o.rule_results) {
			if (!r->o.rule_results(r->o.rule_results_arg, &sb) && !sb.oom) {
				j->rules = sb.buf;
				sb.buf = NULL;
			}
			sb_free(&sb);
		}
		j->have_snapshot = true;
		e = recorder_add_event(b);
		if (!e)
			continue;
		e->t_ms = j->trigger_ms;
		strlcpy0(e->kind, "capture", sizeof(e->kind));
		strlcpy0(e->name, j->reason, sizeof(e->name));
		e->detail = strdup(strrchr(j->file, '/') ? strrchr(j->file, '/') + 1 : j->file);
	}
	pthread_cond_broadcast(&r->cv_capture);
	pthread_mutex_unlock(&r->mu);
}
