/* SPDX-License-Identifier: MIT */
/*
 * Alert state per (rule, object): inactive -> pending (for `for:`) ->
 * firing -> resolved.  Fed with rule outcomes after every evaluation; knows
 * nothing about where outcomes come from or where alerts go.
 */
#ifndef ROCEWATCH_ALERTS_H
#define ROCEWATCH_ALERTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum alert_outcome {
	AO_PASS,
	AO_FAIL,
	AO_UNKNOWN,
	AO_SKIP
};
enum alert_state {
	ALERT_INACTIVE,
	ALERT_PENDING,
	ALERT_FIRING
};

#define ALERT_UNKNOWN_NAME "RoceRuleUnknown"

struct alert {
	char alertname[64];
	char rule[64]; /* for RoceRuleUnknown: the rule that is unknown */
	char severity[16];
	char cls[12];	 /* "fatal", "degraded", "" (what the node verdict counts it as) */
	char action[32]; /* "fix-config", ...; "" for none */
	char profile[64];
	char device[64];
	char port[12];
	char summary[256];
	char *description; /* the rule's doc text, its own copy (a rule's text is ~100-700 bytes) */
	char value[96];	   /* the value or reason behind the outcome */
	uint64_t fingerprint; /* of the rule definition: a changed rule starts over */
	uint64_t described;   /* RoceRuleUnknown: hash of its unknown_doc (with value: what its
			       * text was made from), 0 before it was made */
	enum alert_state state;
	int64_t active_since; /* ns: first failing evaluation of this episode */
	int64_t fired_at;     /* ns: when it became firing */
	int64_t resolved_at;  /* ns: set on resolve, until delivered */
	int64_t last_eval;
	int64_t last_sent; /* ns: last delivery to Alertmanager (0: never) */
	bool seen;	   /* observed in the current evaluation */
	bool resolved;	   /* resolved, endsAt not yet delivered */
};

struct alert_table {
	struct alert *a;
	size_t n, cap;
	int64_t unknown_for_ns; /* how long a rule must stay unknown to say so */
	/* transitions, for tests and logs */
	uint64_t fired_total, resolved_total;
	/*
	 * alerts_feed_rules' index: for result i of the engine layout
	 * idx_layout (rules_layout()), the position in a of its alert and of
	 * its RoceRuleUnknown (-1: none yet).  Resolved by name once per
	 * layout, so a poll compares no strings; 0 when stale (a new layout,
	 * or alerts_gc moved alerts).
	 */
	uint64_t idx_layout;
	int32_t *idx_alert, *idx_unknown;
	size_t idx_cap;
};

struct alert_obs {
	const char *rule, *severity, *profile, *device, *port;
	const char *cls, *action; /* NULL: none */
	const char *summary, *doc, *value;
	/*
	 * RoceRuleUnknown's description: what could not be read and how to let
	 * rocewatch read it (rules_unknown_hint()); never doc, the fix for a
	 * failure nobody saw.  NULL: a generic line.
	 */
	const char *unknown_doc;
	/* Or the result to make it from (rules_unknown_hint()), only when it changes. */
	const struct rule_result *unknown_of;
	uint64_t fingerprint;
	int64_t for_ns;
	enum alert_outcome outcome;
};

void alerts_init(struct alert_table *t);
void alerts_free(struct alert_table *t);
/* Start an evaluation round. */
void alerts_begin(struct alert_table *t);
/* One (rule, object) outcome at time now (ns, realtime). */
void alerts_observe(struct alert_table *t, const struct alert_obs *o, int64_t now);
/* End the round: (rule, object) pairs not observed are resolved and forgotten. */
void alerts_end(struct alert_table *t, int64_t now);
/*
 * Drop inactive alerts: resolved ones whose endsAt was delivered (or that
 * nobody delivers), and those of rules that pass.  Only failing (pending,
 * firing) and unknown rules have an alert.
 */
void alerts_gc(struct alert_table *t, bool keep_undelivered);
/* The alert of (alertname, rule, profile, device, port) (NULL strings: ""), or NULL. */
const struct alert *alerts_find(const struct alert_table *t, const char *alertname,
				const char *rule, const char *profile, const char *device,
				const char *port);
size_t alerts_count(const struct alert_table *t, enum alert_state s);

struct rules_engine;
/* One round from the engine's last evaluation: begin, observe every result, end. */
void alerts_feed_rules(struct alert_table *t, const struct rules_engine *e, int64_t now);
/*
 * The same after rules_evaluate_changed(): each result advances its alert at
 * its own evaluation time, so one the pass did not make again moves nothing
 * (a `for:` is not served by a result older than now).
 */
void alerts_feed_changed(struct alert_table *t, const struct rules_engine *e, int64_t now);

#endif
