/* SPDX-License-Identifier: MIT */
/* Rule results as JSON (schema in docs/rules.md): `check --format json` and /api/v1/checks. */
#ifndef ROCEWATCH_RULES_JSON_H
#define ROCEWATCH_RULES_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "nccl.h"
#include "strbuf.h"

#define RULES_JSON_SCHEMA  "rocewatch-check"
#define RULES_JSON_VERSION 1

struct rules_json_meta {
	const char *host;
	int64_t time_ns;   /* realtime of the last evaluation */
	unsigned samples;  /* samples evaluated (check) */
	bool reload_ok;	   /* serve: last SIGHUP reload succeeded */
	int64_t reload_ns; /* serve: when (0: never reloaded) */
	/*
	 * check: what the counter rules' verdicts rest on (docs/rules.md):
	 * source "serve", "local" or "snapshot" (NULL: no "history" object).
	 */
	const char *history_source;
	const char *history_url; /* the serve asked, or NULL */
	const char *history_note;
	size_t history_from_serve, history_counter_results;
	/* set: each result's doc has IF/DEV/PORT filled in (rules_doc_for) */
	const struct node_model *m;
	/* check --nccl: each variable's value and NCCL's reading of it ("job" "variables") */
	const struct nccl_env *job;
};

/* Append the report; 0 or -ENOMEM. */
/*
 * The node's health in one object: {"verdict", "actions", "failing": [{rule,
 * profile, object, class, severity, action, escalated, summary}]}, for
 * /api/v1/state beside the model.  NULL on out of memory.
 */
struct json_t *rules_health_json(const struct rules_engine *e);
int rules_json_write(struct strbuf *out, const struct rules_engine *e,
		     const struct rules_json_meta *meta, bool pretty);

#endif
