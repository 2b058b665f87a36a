/* SPDX-License-Identifier: MIT */
/*
 * The collector interface.  A collector reads one source of facts and fills
 * its fields of the node model, or marks them absent with a reason.  It
 * never talks HTTP and never knows about rules.
 */
#ifndef ROCEWATCH_COLLECTOR_H
#define ROCEWATCH_COLLECTOR_H

#include <stdbool.h>

#include "config.h"
#include "model.h"

/* enum collect_what (COLLECT_FAST, COLLECT_SLOW): model.h, the vocabulary of a poll. */

struct collector_ctx {
	const struct rw_config *cfg;
	int idx;    /* position in the collector table: obj->cpriv[idx] is ours */
	void *priv; /* the collector's own state */
	/* Set by a collector when its cause of failure is a plain "not here". */
	char detail[160];
};

struct collector {
	const char *name;
	/* The fields it fills are those whose row names this source (fields[].src). */
	enum field_source source;
	const char *help;
	bool default_enabled;
	/* 0, or -errno: the collector cannot run (it is then disabled, with detail). */
	int (*init)(struct collector_ctx *cc);
	/* Fill the model.  -errno only when the whole source failed. */
	int (*collect)(struct collector_ctx *cc, struct node_model *m, unsigned what);
	void (*fini)(struct collector_ctx *cc);
	/* Optional: an fd that becomes readable on a kernel notification. */
	int (*event_fd)(struct collector_ctx *cc);
	/* Drain notifications; > 0 when configuration must be re-read now. */
	int (*event)(struct collector_ctx *cc);
	/*
	 * The sources (1u << SRC_...) whose facts a notification may have
	 * changed: their collectors re-read configuration at once, and the
	 * rules that read those facts run, before the next poll (0: its own
	 * source alone).
	 */
	unsigned event_sources;
	/* Free what the collector hung on obj->cpriv[idx]. */
	void (*obj_free)(void *cpriv);
};

/* The explicit table, in collection order (link first: it makes the netdevs). */
extern const struct collector *const collectors[];
extern const int n_collectors;
int collector_index(const char *name);
/*
 * The whole source failed (collect() returned err): every field it fills,
 * on every object, absent with err, so none keeps the last poll's value.
 */
void collector_blank(const struct collector *c, struct node_model *m, int err);

#endif
