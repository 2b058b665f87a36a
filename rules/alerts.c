// SPDX-License-Identifier: MIT
#include <errno.h>
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
	for (size_t i = 0; i < t->n; i++)
		free(t->a[i].description);
	free(t->a);
	free(t->idx_alert);
	free(t->idx_unknown);
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

/*
 * The description held as its own string, not a fixed field: alerts are
 * kept for every failing result, and 768 bytes each of mostly padding was
 * a quarter of serve's heap on a node failing many rules.  The same text
 * (every poll but the first) is kept; out of memory keeps the old one.
 */
static void set_description(struct alert *a, const char *text)
{
	char *d;

	if (a->description && !strcmp(a->description, text))
		return;
	d = strdup(text);
	if (!d)
		return;
	free(a->description);
	a->description = d;
}

static void describe(struct alert *a, const struct alert_obs *o)
{
	strlcpy0(a->severity, o->severity ? o->severity : "warning", sizeof(a->severity));
	strlcpy0(a->cls, o->cls ? o->cls : "", sizeof(a->cls));
	strlcpy0(a->action, o->action ? o->action : "", sizeof(a->action));
	strlcpy0(a->summary, o->summary ? o->summary : "", sizeof(a->summary));
	set_description(a, o->doc ? o->doc : "");
	strlcpy0(a->value, o->value ? o->value : "", sizeof(a->value));
}

/*
 * RoceRuleUnknown's text, made again only when what it is made from (the
 * reason, the hint) changed: an unknown rule stays unknown for many polls.
 */
static void describe_unknown(struct alert *u, const struct alert_obs *o)
{
	const char *why = o->value ? o->value : "a field is absent";
	/* the reason is compared, not hashed: it is read every poll, and it is short */
	uint64_t k = (o->unknown_doc ? fnv1a_str(o->unknown_doc) : 0) | 1; /* 0: never described */
	struct alert_obs uo = *o;
	char summary[256], hint[512];

	if (u->described == k && strnlen(why, sizeof(u->value)) < sizeof(u->value) &&
	    !strcmp(u->value, why))
		return; /* describe() below keeps why as the value */
	u->described = k;
	snprintf(summary, sizeof(summary), "rule %s cannot be evaluated: %s", o->rule, why);
	uo.severity = "info";
	uo.cls = uo.action = NULL; /* undecided: nothing to drain for, nothing to do yet */
	uo.summary = summary;
	if (o->unknown_doc) {
		uo.doc = o->unknown_doc;
	} else if (o->unknown_of) {
		rules_unknown_hint(o->unknown_of, hint, sizeof(hint));
		uo.doc = hint;
	} else {
		uo.doc = "Not decided: a fact the rule needs could not be read "
			 "(nothing was seen to fail); `rocewatch check` says which "
			 "and how to let rocewatch read it.";
	}
	describe(u, &uo);
}

/*
 * The state machine for one observation, its alerts already found: *ai is
 * the rule's own alert, *ui its RoceRuleUnknown, either -1 when there is
 * none (then it is made here when the outcome calls for it -- a failure, an
 * unknown -- and the index says where).  A rule that passes has no alert:
 * most of them, every poll.  Indices, not pointers: making an alert may move
 * the table.
 */
static void observe_at(struct alert_table *t, long *ai, long *ui, const struct alert_obs *o,
		       const char *profile, const char *dev, const char *port, int64_t now)
{
	struct alert *a, *u;

	if (*ai < 0 && o->outcome == AO_FAIL) {
		a = get(t, o->rule, "", profile, dev, port);
		if (a)
			*ai = a - t->a;
	}
	if (*ai >= 0) {
		a = &t->a[*ai];
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
	}

	/* RoceRuleUnknown: one per (rule, object), after unknown_for, severity info. */
	if (*ui < 0 && o->outcome == AO_UNKNOWN) {
		u = get(t, ALERT_UNKNOWN_NAME, o->rule, profile, dev, port);
		if (u)
			*ui = u - t->a;
	}
	if (*ui < 0)
		return;
	u = &t->a[*ui];
	u->seen = true;
	if (o->outcome == AO_UNKNOWN)
		describe_unknown(u, o);
	step(t, u, o->outcome == AO_UNKNOWN, t->unknown_for_ns, now);
}

void alerts_observe(struct alert_table *t, const struct alert_obs *o, int64_t now)
{
	const char *dev = o->device ? o->device : "", *port = o->port ? o->port : "";
	const char *profile = o->profile ? o->profile : "";
	struct alert *a = find(t, o->rule, "", profile, dev, port);
	struct alert *u = find(t, ALERT_UNKNOWN_NAME, o->rule, profile, dev, port);
	long ai = a ? a - t->a : -1, ui = u ? u - t->a : -1;

	observe_at(t, &ai, &ui, o, profile, dev, port, now);
}

const struct alert *alerts_find(const struct alert_table *t, const char *alertname,
				const char *rule, const char *profile, const char *device,
				const char *port)
{
	return find((struct alert_table *)t, alertname, rule ? rule : "", profile ? profile : "",
		    device ? device : "", port ? port : "");
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
		/* inactive: nothing to say until it fails again (then it is made again) */
		bool drop = a->state == ALERT_INACTIVE && !(keep_undelivered && a->resolved);

		if (drop) {
			free(a->description);
			continue;
		}
		if (w != i) /* an alert is 0.8 KB: most rounds drop none */
			t->a[w] = *a;
		w++;
	}
	/* alerts moved: the positions alerts_feed_rules keeps are wrong now */
	if (w != t->n)
		t->idx_layout = 0;
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

static const char *port_of(const struct rule_result *r, char buf[12])
{
	buf[0] = '\0';
	if (r->kind == OBJ_RDMA_PORT)
		snprintf(buf, 12, "%u", r->port);
	return buf;
}

/*
 * Where each result's alerts are, by name, once per layout of the results
 * (rules loaded, objects came or went, or alerts_gc moved alerts).
 */
static int index_results(struct alert_table *t, const struct rule_result *res, size_t n,
			 uint64_t layout)
{
	if (n > t->idx_cap) {
		if (array_resize(&t->idx_alert, n, sizeof(*t->idx_alert)) ||
		    array_resize(&t->idx_unknown, n, sizeof(*t->idx_unknown)))
			return -ENOMEM;
		t->idx_cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *r = &res[i];
		const char *profile = r->rule->profile ? r->rule->profile : "";
		char port[12];
		struct alert *a;

		port_of(r, port);
		a = find(t, r->rule->name, "", profile, r->device, port);
		t->idx_alert[i] = a ? (int32_t)(a - t->a) : -1;
		a = find(t, ALERT_UNKNOWN_NAME, r->rule->name, profile, r->device, port);
		t->idx_unknown[i] = a ? (int32_t)(a - t->a) : -1;
	}
	t->idx_layout = layout;
	return 0;
}

static void feed(struct alert_table *t, const struct rules_engine *e, int64_t now, bool own_time)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res);
	uint64_t layout = rules_layout(e);
	bool indexed =
	    n && layout && (t->idx_layout == layout || !index_results(t, res, n, layout));

	alerts_begin(t);
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *r = &res[i];
		/* a passing rule with no alert: nothing to do (most results, most polls) */
		if (indexed && t->idx_alert[i] < 0 && t->idx_unknown[i] < 0 &&
		    r->outcome != RULE_FAIL && r->outcome != RULE_UNKNOWN)
			continue;
		const char *profile = r->rule->profile ? r->rule->profile : "";
		char port[12] = "";
		struct alert_obs o = {
			.rule = r->rule->name,
			.severity = rule_severity_name(rule_result_severity(r)),
			.cls = rule_class_name(rule_result_verdict_class(r)),
			.action = rule_action_name(r->rule->action),
			.profile = r->rule->profile,
			.device = r->device,
			.summary = r->summary,
			.doc = r->rule->doc,
			.value = r->outcome == RULE_UNKNOWN ? r->reason : r->summary,
			.fingerprint = r->rule->fingerprint,
			.for_ns = r->rule->for_ns,
			.outcome = outcome_of(r->outcome),
		};
		/* a result not made again since the last round keeps its own time */
		int64_t at = own_time && r->eval_ns && r->eval_ns < now ? r->eval_ns : now;
		long ai, ui;

		if (r->outcome == RULE_UNKNOWN)
			o.unknown_of = r;
		if (!indexed) {
			o.port = port_of(r, port);
			alerts_observe(t, &o, at);
			continue;
		}
		ai = t->idx_alert[i];
		ui = t->idx_unknown[i];
		if ((ai < 0 && o.outcome == AO_FAIL) || (ui < 0 && o.outcome == AO_UNKNOWN))
			port_of(r, port); /* observe_at names the alert it makes */
		observe_at(t, &ai, &ui, &o, profile, r->device, port, at);
		t->idx_alert[i] = (int32_t)ai;
		t->idx_unknown[i] = (int32_t)ui;
	}
	alerts_end(t, now);
}

void alerts_feed_rules(struct alert_table *t, const struct rules_engine *e, int64_t now)
{
	feed(t, e, now, false);
}

void alerts_feed_changed(struct alert_table *t, const struct rules_engine *e, int64_t now)
{
	feed(t, e, now, true);
}
