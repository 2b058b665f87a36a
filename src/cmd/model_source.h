/* SPDX-License-Identifier: MIT */
/*
 * Where a poll's node model comes from when it is not this machine's
 * collectors: a source the daemon asks for each poll without knowing what
 * it is.  The one such source today is a snapshot file (--from: one snapshot
 * or a JSON array of them, followed when the file is replaced).  Commands
 * ask the daemon how many samples its source holds (daemon_samples()), never
 * what it is.
 */
#ifndef ROCEWATCH_MODEL_SOURCE_H
#define ROCEWATCH_MODEL_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "model.h"

struct model_source {
	const char *name; /* "snapshot": in messages */
	/* Fill m for one poll (what: COLLECT_FAST/COLLECT_SLOW): 0 or -errno (said once). */
	int (*collect)(struct model_source *src, struct node_model *m, unsigned what);
	/* How many samples it holds: each collect() moves to the next, the last repeats. */
	size_t (*samples)(const struct model_source *src);
	void (*close)(struct model_source *src);
};

/* --from FILE as a source: 0, or -errno with err naming the file and why. */
int snapshot_source_open(struct model_source **out, const struct rw_config *cfg, char *err,
			 size_t errlen);

#endif
