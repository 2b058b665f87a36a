// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alerts.h"
#include "engine.h"
#include "util.h"

void alerts_init(struct alert_table *t)
{
	memset(t, 0, sizeof(*t));
	t->unknown_for_ns = 60LL * 1000000000LL;
}

void alerts_free(struct alert_table *t)
{
	free(t->a);
	memset(t, 0, sizeof(*t));
}

void alerts_begin(struct alert_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		t->a[i].seen = false;
}

static struct alert *find(struct alert_table *t, const char *alertname, const char *rule,
			  const char *profile, const char *device, const char *port)
{
	for (size_t i = 0; i < t->n; i++) {
		struct alert *a = &t->a[i];

		if (!strcmp(a->alertname, alertname) && !strcmp(a->rule, rule) &&
		    !strcmp(a->profile, profile) && !strcmp(a->device, device) &&
		    !strcmp(a->port, port))
			return a;
	}
	return NULL;
}

static struct alert *get(struct alert_table *t, const char *alertname, const char *rule,
			 const char *profile, const char *device, const char *port)
{
	struct alert *a = find(t, alertname, rule, profile, device, port);

	if (a)
		return a;
	if (array_grow(&t->a, &t->cap, t->n, sizeof(*t->a), 16))
		return NULL;
	a = &t->a[t->n++];
	memset(a, 0, sizeof(*a));
	strlcpy0(a->alertname, alertname, sizeof(a->alertname));
	strlcpy0(a->rule, rule, sizeof(a->rule));
	strlcpy0(a->profile, profile, sizeof(a->profile));
	strlcpy0(a->device, device, sizeof(a->device));
	strlcpy0(a->port, port, sizeof(a->port));
	return a;
}

static void resolve(struct alert_table *t, struct alert *a, int64_t now)
{
	if (a->state == ALERT_FIRING) {
		a->resolved = true;
		a->resolved_at = now;
		t->resolved_total++;
	}
	a->state = ALERT_INACTIVE;
	a->active_since = 0;
}

/* Advance one alert with a "bad" (fail or long-unknown) or "good" observation. */
static void step(struct alert_table *t, struct alert *a, bool bad, int64_t for_ns, int64_t now)
{
	a->last_eval = now;
	if (!bad) {
		resolve(t, a, now);
		return;
	}
	if (a->state == ALERT_INACTIVE) {
		a->state = ALERT_PENDING;
		a->active_since = now;
		a->resolved = false;
	}
	if (a->state == ALERT_PENDING && now - a->active_since >= for_ns) {
		a->state = ALERT_FIRING;
		a->fired_at = now;
		a->last_sent = 0;
		t->fired_total++;
	}
}

static void describe(struct alert *a, const struct alert_obs *o)
{
	strlcpy0(a->severity, o->severity ? o->severity : "warning", sizeof(a->severity));
	strlcpy0(a->summary, o->summary ? o->summary : "", sizeof(a->summary));
	strlcpy0(a->description, o->doc ? o->doc : "", sizeof(a->description));
	strlcpy0(a->value, o->value ? o->value : "", sizeof(a->value));
}

void alerts_observe(struct alert_table *t, const struct alert_obs *o, int64_t now)
{
	const char *dev = o->device ? o->device : "", *port = o->port ? o->port : "";
	const char *profile = o->profile ? o->profile : "";
	struct alert *a = get(t, o->rule, "", profile, dev, port), *u;

	if (!a)
		return;
	a->seen = true;
	/* A changed rule definition starts a new episode. */
	if (a->fingerprint != o->fingerprint) {
		if (a->fingerprint && a->state != ALERT_INACTIVE)
			resolve(t, a, now);
		a->fingerprint = o->fingerprint;
	}
	switch (o->outcome) {
	case AO_FAIL:
		describe(a, o);
		step(t, a, true, o->for_ns, now);
		break;
	case AO_PASS:
	case AO_SKIP:
		step(t, a, false, 0, now);
		break;
	case AO_UNKNOWN:
		/*
		 * Unknown never fires the rule's own alert: a pending episode
		 * ends, but a firing alert is not resolved either (nobody
		 * knows it is fixed).
		 */
		a->last_eval = now;
		if (a->state == ALERT_PENDING) {
			a->state = ALERT_INACTIVE;
			a->active_since = 0;
		}
		break;
	}

	/* RoceRuleUnknown: one per (rule, object), after unknown_for, severity info. */
	u = o->outcome == AO_UNKNOWN ? get(t, ALERT_UNKNOWN_NAME, o->rule, profile, dev, port)
				     : find(t, ALERT_UNKNOWN_NAME, o->rule, profile, dev, port);
	if (u) {
		u->seen = true;
		if (o->outcome == AO_UNKNOWN) {
			struct alert_obs uo = *o;
			char summary[256];

			snprintf(summary, sizeof(summary), "rule %s cannot be evaluated: %s",
				 o->rule, o->value ? o->value : "a field is absent");
			uo.severity = "info";
			uo.summary = summary;
			describe(u, &uo);
		}
		step(t, u, o->outcome == AO_UNKNOWN, t->unknown_for_ns, now);
	}
}

void alerts_end(struct alert_table *t, int64_t now)
{
	for (size_t i = 0; i < t->n; i++)
		if (!t->a[i].seen)
			resolve(t, &t->a[i], now);
}

void alerts_gc(struct alert_table *t, bool keep_undelivered)
{
	size_t w = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct alert *a = &t->a[i];
		bool drop =
		    a->state == ALERT_INACTIVE && !a->seen && !(keep_undelivered && a->resolved);

		if (!drop)
			t->a[w++] = *a;
	}
	t->n = w;
}

size_t alerts_count(const struct alert_table *t, enum alert_state s)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += t->a[i].state == s;
	return n;
}

static enum alert_outcome outcome_of(enum rule_outcome o)
{
	switch (o) {
	case RULE_FAIL:
		return AO_FAIL;
	case RULE_UNKNOWN:
		return AO_UNKNOWN;
	case RULE_SKIP:
		return AO_SKIP;
	default:
		return AO_PASS;
	}
}

void alerts_feed_rules(struct alert_table *t, const struct rules_engine *e, int64_t now)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res);

	alerts_begin(t);
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *r = &res[i];
		char port[12] = "";
		struct alert_obs o = {
			.rule = r->rule->name,
			.severity = rule_severity_name(r->rule->severity),
			.profile = r->rule->profile,
			.device = r->device,
			.port = port,
			.summary = r->summary,
			.doc = r->rule->doc,
			.value = r->outcome == RULE_UNKNOWN ? r->reason : r->summary,
			.fingerprint = r->rule->fingerprint,
			.for_ns = r->rule->for_ns,
			.outcome = outcome_of(r->outcome),
		};

		if (r->kind == OBJ_RDMA_PORT)
			snprintf(port, sizeof(port), "%u", r->port);
		alerts_observe(t, &o, now);
	}
	alerts_end(t, now);
}
