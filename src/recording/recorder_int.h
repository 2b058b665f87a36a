/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder's insides, shared by its files (recorder.h is the
 * interface).  Who does what, and what each file exports to the others:
 *
 *   recorder_diff.c     poll thread: the model diffed into a batch (series
 *                       interned, only changed values, keyframes), and
 *                       events and rule profiles queued for the next batch.
 *                       recorder_after_poll(), recorder_event(),
 *                       recorder_note_profiles(); to the others: the batch
 *                       helpers, recorder_profset_free(), recorder_series_key(),
 *                       recorder_series_reserve(), recorder_objrec_free().
 *   recorder_write.c    writer thread: batches committed, retention by age
 *                       and size.  recorder_writer_main(),
 *                       recorder_update_size(), recorder_q1().
 *   recorder_capture.c  capture thread: a window cut into a capture file.
 *                       recorder_capture(); recorder_capture_main(),
 *                       recorder_capture_snapshots() (poll thread, for
 *                       recorder_diff.c), recorder_capture_job_free(),
 *                       recorder_prune_captures().
 *   recorder.c          open (database, series map, threads) and close.
 *                       recorder_open(), recorder_flush(), recorder_close().
 *   recorder_metrics.c  rocewatch_recorder_* for /metrics.
 *                       recorder_get_counters(), recorder_render().
 *
 * Durability: journal_mode=WAL with synchronous=NORMAL.  A COMMIT appends the
 * transaction's pages to the -wal file with write(2) before it returns; only
 * checkpoints fsync.  Once write(2) returned, the bytes are the kernel's:
 * kill -9 of this process cannot take them back, and the next open replays
 * the WAL.  So a killed serve loses at most the poll whose COMMIT had not
 * returned; what NORMAL gives up is durability across an OS crash or power
 * loss (the last transactions may roll back), never consistency
 * (https://www.sqlite.org/pragma.html#pragma_synchronous, "WAL mode is
 * always consistent with synchronous=NORMAL").
 *
 * Deltas: a poll stores only the series whose value changed.  Every so often
 * a poll is a keyframe (every live series has a row): readers start from
 * the keyframe at or before the window they want, and retention only ever
 * deletes up to a keyframe, so the oldest poll left always holds the full
 * state.
 */
#ifndef ROCEWATCH_RECORDER_INT_H
#define ROCEWATCH_RECORDER_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "model.h"
#include "recorder.h"
#include "ring.h"
#include "strbuf.h"
#include "strmap.h"

#define QUEUE_LEN     32     /* batches between the poll loop and the writer */
#define ABS_GONE_NAME "gone" /* config: the object disappeared */

/* ---- what the poll loop hands the writer (recorder_diff.c -> recorder_write.c) ---- */

struct series_def {
	int32_t id;
	uint8_t kind, src;
	int8_t prio;
	bool config;
	uint32_t port;
	char device[RW_NAME_MAX];
	char netdev[RW_NAME_MAX];
	char name[RW_CNAME_MAX];
};

enum {
	ROW_NULL,
	ROW_INT,
	ROW_FLOAT
};

struct row {
	int32_t id;
	uint8_t type;
	int64_t v; /* ROW_FLOAT: the double's bits */
};

struct crow {
	int32_t id;
	uint8_t reason; /* enum absent_reason, or ABS__COUNT for "gone" */
	size_t off;	/* JSON text in the arena; SIZE_MAX when absent */
};

struct evrow {
	int64_t t_ms;
	char kind[32], object[16], device[RW_NAME_MAX], name[128];
	char *detail;
};

/* The profiles table's rows of one set (recorder_note_profiles()). */
struct profrow {
	char *name, *source, *origin, *params; /* params: the JSON array */
	uint64_t text_hash;
};

struct profset {
	int64_t t_ms; /* of the poll it is written with */
	size_t n;
	struct profrow *rows;
};

struct batch {
	int64_t seq, t_ms, dropped;
	unsigned what;
	bool keyframe;
	bool first_of_run;
	char host[RW_NAME_MAX];
	struct series_def *defs;
	size_t n_defs, cap_defs;
	struct row *rows;
	size_t n_rows, cap_rows;
	struct crow *crows;
	size_t n_crows, cap_crows;
	struct evrow *evs;
	size_t n_evs, cap_evs;
	struct profset *prof; /* the rules from this poll on, or NULL */
	struct strbuf arena;
	bool oom;
};

/* Per series: what the database holds once the queue has drained. */
struct series_state {
	int64_t v;	/* counters: value bits; config: hash of the value */
	uint64_t touch; /* seq of the last poll that saw the series */
	uint8_t live;	/* a value (or, for config, a reason) is recorded */
	uint8_t type;	/* ROW_INT / ROW_FLOAT */
	bool config;
};

/* Per object: series ids by field/priority and by counter-set index. */
struct cscache {
	uint32_t n;
	int32_t *id; /* 0 unknown, -1 not recorded, > 0 series id */
	char (*name)[RW_CNAME_MAX];
};

struct objrec {
	enum obj_kind kind;
	char name[RW_NAME_MAX];
	uint32_t port;
	char netdev[RW_NAME_MAX];
	int32_t fid[F__COUNT][RW_PRIO_COUNT];
	struct cscache cs[CSET__COUNT];
};

struct capture_job {
	struct capture_job *next;
	char reason[48];
	char reasons[256];
	char file[PATH_MAX];
	int64_t trigger_ms, start_ms, end_ms;
	bool have_snapshot;
	char *snapshot;
	char *rules;
};

struct recorder {
	struct recorder_opts o;
	char dir[2048]; /* leaves room in PATH_MAX for the file names below it */
	char db_path[PATH_MAX];
	int lock_fd;
	int64_t wal_budget, target_bytes, low_bytes, delete_chunk;
	uint64_t kf_max_rows;

	/* writer thread */
	sqlite3 *db;
	sqlite3_stmt *st_series, *st_poll, *st_sample, *st_config, *st_event, *st_run, *st_host,
	    *st_profile;
	sqlite3_stmt *st_pages, *st_free, *st_begin, *st_commit, *st_rollback;
	int64_t run;
	int64_t page_size;
	/* series of a failed transaction: inserted again with the next one */
	struct series_def *retry;
	size_t n_retry, cap_retry;
	/* a set of profiles whose transaction failed: written with the next one */
	struct profset *retry_prof;
	/* writer thread: polls lost since the last commit that worked (a full disk) */
	uint64_t failing;
	int64_t next_age_check; /* monotonic; 0 = now */
	int64_t maint_keep;	/* a cut in progress: delete before this t_ms; -1 none */
	bool maint_more;

	/* poll-loop side (model lock held) */
	struct strmap series_map, obj_map;
	/*
	 * "device\x1fname" of the alerts whose last event in the recording is
	 * "firing" when this serve started: they were standing before a restart
	 * (value 1), and their first firing now is no new incident (then 0)
	 */
	struct strmap standing;
	size_t n_standing; /* entries still 1 */
	pthread_mutex_t standing_mu;
	struct objrec **objs;
	size_t n_objs, cap_objs;
	struct series_state *st;
	size_t cap_st;
	/* new series of a poll lost to out-of-memory: sent with the next one */
	struct series_def *carry;
	size_t n_carry, cap_carry;
	int32_t max_id;
	int64_t seq, last_t_ms, last_kf_ms, n_live, live_rows;
	uint64_t rows_since_kf;
	bool need_kf, run_sent;
	int64_t dropped_pending;
	char host[RW_NAME_MAX];

	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv_writer, cv_idle, cv_capture;
	void *q_slot[QUEUE_LEN + 1]; /* room for every batch there is (free_b) */
	struct ring q;		     /* batches for the writer, on q_slot */
	struct batch *free_b[QUEUE_LEN + 1];
	size_t n_free;
	bool writing, stop_writer, stop_capture;
	bool resync;	 /* a write failed: send every value again (a keyframe) */
	bool kf_request; /* retention wants a keyframe to cut at */
	struct evrow *pend_ev;
	size_t n_pend_ev, cap_pend_ev;
	struct profset *pend_prof; /* noted, for the next poll's batch */
	struct capture_job *jobs;
	pthread_t writer, capturer;
	bool writer_started, capturer_started;

	/* counters: written by one thread, read by /metrics (relaxed atomics) */
	struct recorder_counters c;
	int64_t commit_ns;
};

#define CNT_ADD(r, f, n) __atomic_add_fetch(&(r)->c.f, (n), __ATOMIC_RELAXED)
#define CNT_SET(r, f, n) __atomic_store_n(&(r)->c.f, (n), __ATOMIC_RELAXED)
#define CNT_GET(r, f)	 __atomic_load_n(&(r)->c.f, __ATOMIC_RELAXED)

/* recorder_diff.c */
void recorder_profset_free(struct profset *ps);
void recorder_batch_reset(struct batch *b);
void recorder_batch_free(struct batch *b);
/* A zeroed event row at the end of b, or NULL (b->oom set). */
struct evrow *recorder_add_event(struct batch *b);
void recorder_keep_defs(struct series_def **list, size_t *n, size_t *cap, const struct batch *b);
/* The identity of a series in the series map (and the series table). */
void recorder_series_key(char *buf, size_t len, enum obj_kind kind, const char *device,
			 uint32_t port, const char *netdev, int src, const char *name, int prio);
/* Room in r->st for series id: 0 or -ENOMEM. */
int recorder_series_reserve(struct recorder *r, size_t id);
void recorder_objrec_free(struct objrec *o);

/* recorder_write.c */
void *recorder_writer_main(void *arg);
/* The database and WAL size for /metrics (and the size bound). */
void recorder_update_size(struct recorder *r);
/* One integer of a query with one bound argument, or dflt. */
int64_t recorder_q1(sqlite3 *db, const char *sql, int64_t a, int64_t dflt);

/* recorder_capture.c */
void *recorder_capture_main(void *arg);
/* Poll thread, model lock held: the snapshot and rule results of new captures. */
void recorder_capture_snapshots(struct recorder *r, struct batch *b, struct node_model *m);
void recorder_capture_job_free(struct capture_job *j);
/* Capture retention: too old, then the oldest while over the size (the newest stays). */
void recorder_prune_captures(struct recorder *r);

#endif
