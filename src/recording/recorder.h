/* SPDX-License-Identifier: MIT */
/*
 * The flight recorder (`serve --record DIR`): after every poll, the counters
 * that changed and every configuration change go to DIR/rocewatch.db in one
 * transaction; captures cut a window of it into a self-contained file.
 *
 * Threads: recorder_after_poll() runs in the poll loop with the model lock
 * held and only diffs the model into a batch (no I/O); a writer thread owns
 * the database connection and commits the batches; a capture thread cuts
 * capture files from its own read connection.  A slow disk therefore fills
 * a bounded queue (drops counted, the next poll written in full) instead of
 * stalling the poll loop.
 */
#ifndef ROCEWATCH_RECORDER_H
#define ROCEWATCH_RECORDER_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "strbuf.h"

#define REC_DEFAULT_RETENTION_NS      (24LL * 3600 * 1000000000LL)
#define REC_DEFAULT_MAX_SIZE	      (256ULL << 20)
#define REC_DEFAULT_CAPTURE_BEFORE_NS (5LL * 60 * 1000000000LL)
#define REC_DEFAULT_CAPTURE_AFTER_NS  (60LL * 1000000000LL)
#define REC_MIN_MAX_SIZE	      (256ULL << 10)

/* Capture files are bounded like the recording: by age and by total size. */
#define REC_DEFAULT_CAPTURE_RETENTION_NS (7LL * 24 * 3600 * 1000000000LL)
#define REC_DEFAULT_CAPTURE_MAX_SIZE	 (256ULL << 20)

struct recorder_opts {
	const char *dir;
	int64_t interval_ns;	   /* the fast loop's, stored with each run */
	int64_t retention_ns;	   /* delete polls older than this */
	uint64_t max_size;	   /* database + WAL stay below this many bytes */
	int64_t capture_before_ns; /* a capture holds [t - before, t + after] */
	int64_t capture_after_ns;
	/* capture files: older ones deleted, and the oldest while over the size (0: no bound) */
	int64_t capture_retention_ns;
	uint64_t capture_max_size;
	/*
	 * Driver (ethtool -S) stats recorded besides the fields the table
	 * already names: NULL records none, else those whose name matches.
	 */
	const regex_t *ethtool_include;
	/* Optional: rule results at capture time, as JSON (the rules layer). */
	int (*rule_results)(void *arg, struct strbuf *out);
	void *rule_results_arg;
};

struct recorder;

/* o zeroed, with the defaults above: the caller sets dir and interval_ns. */
void recorder_opts_defaults(struct recorder_opts *o);
/* Open or create DIR/rocewatch.db and start the writer; err says why not. */
int recorder_open(struct recorder **out, const struct recorder_opts *o, char *err, size_t errlen);
/* The daemon hook (model lock held): diff the model into the next batch. */
void recorder_after_poll(void *arg, struct node_model *m, unsigned what);
/* The daemon hook: rocewatch_recorder_* families for /metrics. */
void recorder_render(struct strbuf *sb, void *arg);
/*
 * Ask for a capture (any thread): the window around now is written to
 * DIR/capture-<host>-<UTC time>-<reason>.db once `after` has passed.  A
 * request while one is pending joins it.  file gets the name (may be NULL).
 */
int recorder_capture(struct recorder *r, const char *reason, char *file, size_t filelen);
/*
 * Was this alert (device, event name) firing when the previous serve stopped
 * (its last event in the recording says so)?  true once per alert: a restart
 * is no new incident, and its capture was written then.
 */
bool recorder_alert_was_standing(struct recorder *r, const char *device, const char *name);
/* Are any of those left unasked (a cheap test before asking per alert)? */
bool recorder_any_standing(struct recorder *r);
/* One rule profile as serve runs it (the rules layer's, copied). */
struct rec_param {
	const char *name;
	const char *value; /* effective, as --param reads it back */
	const char *given; /* serve's --param text; NULL: the profile's default */
};

struct rec_profile {
	const char *name, *source, *origin;
	uint64_t text_hash;
	const struct rec_param *params;
	size_t n_params;
};

/*
 * The rules the next poll is evaluated with (start-up, a reload): written to
 * the profiles table in that poll's transaction, at its time, so a replay
 * runs what serve ran.  A set noted before the last one was written
 * replaces it.  0 or -ENOMEM.
 */
int recorder_note_profiles(struct recorder *r, const struct rec_profile *p, size_t n);
/* Note an event (alert firing/resolved, ...) in the events table. */
int recorder_event(struct recorder *r, int64_t t_ms, const char *kind, const char *object,
		   const char *device, const char *name, const char *detail);
/* Wait until every batch queued so far is committed (tests, benchmarks). */
void recorder_flush(struct recorder *r);
/* Drain the queue, finish pending captures with the data there is, close. */
void recorder_close(struct recorder *r);

struct recorder_counters {
	uint64_t polls, dropped, samples, config_rows, write_errors, deleted_polls, captures,
	    capture_errors, captures_deleted;
	int64_t last_seq, last_t_ms;
	uint64_t series;
	uint64_t db_bytes;
	double last_commit_seconds;
};
void recorder_get_counters(struct recorder *r, struct recorder_counters *c);

#endif
