/* SPDX-License-Identifier: MIT */
/* Rule results in the Prometheus exposition (families documented in docs/rules.md). */
#ifndef ROCEWATCH_PROM_RULES_H
#define ROCEWATCH_PROM_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "strbuf.h"

struct prom_rules_state {
	bool reload_ok;	   /* the last load (start-up or SIGHUP) succeeded */
	int64_t reload_ns; /* realtime of the last load attempt */
	uint64_t reload_failures;
	double eval_seconds; /* duration of the last evaluation */
	/* health memory: kept in a state file, and the last save's -errno (its writer's) */
	bool memory_on;
	int memory_err;
};

struct alert_table;

/*
 * roce_alert_firing and roce_alert_pending: one series per alert in that
 * state, value 1 (serve's /metrics, and export's backfill of a recording).
 */
void prom_alerts_render(struct strbuf *sb, const struct alert_table *t);

/* Append the rule families; e may be NULL (then only the self metrics). */
void prom_rules_render(struct strbuf *sb, const struct rules_engine *e,
		       const struct prom_rules_state *st);

#endif
