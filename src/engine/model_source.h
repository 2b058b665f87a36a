/* SPDX-License-Identifier: MIT */
/*
 * Where a poll's node model comes from: a source the daemon asks once per
 * poll without knowing what it is.  Two exist:
 *
 *   live_source.c    this machine's collectors (a collector table): starts
 *                    them, retries those that cannot start every 60 s,
 *                    backs off those whose collect() fails (2, 4, 8 ...
 *                    polls, at most 60 s) and keeps their collector_status
 *                    in the model.
 *   model_source.c   a snapshot file (--from: one snapshot or a JSON array
 *                    of them, followed when the file is replaced), and
 *                    model_source_open(), which picks one of the two from
 *                    the configuration.
 *   recording_source.c  a flight recording between two times: each
 *                    collect() is the next recorded poll (pull, not push),
 *                    at that poll's time (replay, and its test against
 *                    serve's stages).
 *
 * A source fills objects and facts; the daemon links ports to their
 * netdevs (model_link_ports()) after it, whichever it is.
 *
 * Commands open the source the configuration names and hand it to the
 * daemon (daemon_open()); after that they ask the daemon, never the source,
 * and do not know which it is (daemon_samples() says how many samples it
 * holds, daemon_running() which collectors run).
 */
#ifndef ROCEWATCH_MODEL_SOURCE_H
#define ROCEWATCH_MODEL_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "model.h"

struct collector;

struct model_source {
	const char *name; /* "snapshot", "live", "recording": in messages */
	/*
	 * Its models carry the rails and roles already (a recording holds
	 * what serve derived then): the daemon does not derive them again.
	 */
	bool derived;
	/*
	 * Optional: start now, before the first collect(): 0, or -errno with
	 * err saying why (the source cannot be used).
	 */
	int (*start)(struct model_source *src, struct node_model *m, char *err, size_t errlen);
	/* Fill m for one poll (what: COLLECT_FAST/COLLECT_SLOW): 0 or -errno (said once). */
	int (*collect)(struct model_source *src, struct node_model *m, unsigned what);
	/* Optional: how many samples it holds; each collect() moves to the next, the last repeats.
	 */
	size_t (*samples)(const struct model_source *src);
	/* Optional: running[i] for each collector of the table that has started. */
	void (*running)(const struct model_source *src, bool running[RW_MAX_COLLECTORS]);
	/* Optional: fds that become readable on a kernel notification, up to max; idx[] for
	 * event(). */
	int (*event_fds)(struct model_source *src, int *fds, int *idx, int max);
	/* Drain notification idx; true when configuration must be re-read now. */
	bool (*event)(struct model_source *src, int idx);
	/*
	 * Optional: after event(idx) said so, re-read only what notification idx
	 * may have changed (its collector's event_sources, configuration only:
	 * no counter is read) and mark in changed[] every field of those
	 * sources.  0; 1 when objects came or went (every collector must fill
	 * the new ones: poll configuration now); -errno.
	 */
	int (*refresh)(struct model_source *src, struct node_model *m, int idx,
		       bool changed[F__COUNT]);
	/*
	 * Optional: the fields the last collect() may have written (a fast poll
	 * writes counters and .fast rows, and blanks every field of a source
	 * that failed); without it, every field counts.
	 */
	void (*changed)(const struct model_source *src, bool changed[F__COUNT]);
	/* Safe after a failed start(). */
	void (*close)(struct model_source *src);
};

/*
 * The source cfg names: --from FILE, else this machine's collectors (the
 * table in collectors/collectors.c).  0, or -errno with err saying why.
 */
int model_source_open(struct model_source **out, const struct rw_config *cfg, char *err,
		      size_t errlen);

/* --from FILE as a source: 0, or -errno with err naming the file and why. */
int snapshot_source_open(struct model_source **out, const struct rw_config *cfg, char *err,
			 size_t errlen);

/*
 * A collector table (n entries, at most RW_MAX_COLLECTORS) as a source;
 * cfg->collector_enable[] is indexed by position in it.  A collector the
 * user enabled by name (collector_enable[i] > 0) that cannot start makes
 * start() fail naming it; default-enabled ones that cannot start are logged
 * once and retried by collect() every 60 s.  now: the monotonic clock in ns
 * (NULL: mono_ns()), which times the retries, the backoff and each
 * collector's duration.  0, or -errno with err saying why.
 */
int live_source_open(struct model_source **out, const struct rw_config *cfg,
		     const struct collector *const *table, int n, int64_t (*now)(void), char *err,
		     size_t errlen);

/*
 * Recording db (a directory holding rocewatch.db, a database or capture
 * file) from the keyframe at or before since_ms to until_ms (INT64_MIN /
 * INT64_MAX: all): samples() is its number of polls, and each collect()
 * rebuilds the model as of the next one, at its time; after the last it is
 * -ENODATA.  who ("rocewatch replay") prefixes what it says on stderr (bad
 * rows, a value this build cannot read).  0, or -errno with err set.
 */
struct rec_reader;
struct rec_poll;
int recording_source_open(struct model_source **out, const char *db, int64_t since_ms,
			  int64_t until_ms, const char *who, char *err, size_t errlen);
/* Its reader: the recording's host, path, times and bad rows. */
struct rec_reader *recording_source_reader(struct model_source *src);
/* The poll the last collect() rebuilt (NULL before the first). */
const struct rec_poll *recording_source_poll(const struct model_source *src);
/* Why the last collect() failed ("" when none did). */
const char *recording_source_error(const struct model_source *src);

#endif
