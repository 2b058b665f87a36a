// SPDX-License-Identifier: MIT
/* The alert state machine: pending -> firing after `for`, flapping, resolve, reload. */
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "alertmanager.h"
#include "alerts.h"
#include "engine.h"
#include "helpers.h"

#define S(x) ((int64_t)(x)*1000000000LL)

static struct alert_obs obs(enum alert_outcome o, int64_t for_ns)
{
	return (struct alert_obs){ .rule = "mtu_at_least_min",
				   .severity = "critical",
				   .profile = "lossless-roce",
				   .device = "eth2",
				   .summary = "MTU 1500 < 4200",
				   .doc = "raise the MTU",
				   .value = "1500",
				   .fingerprint = 42,
				   .for_ns = for_ns,
				   .outcome = o };
}

static struct alert *the(struct alert_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->a[i].alertname, name))
			return &t->a[i];
	return NULL;
}

static void eval_round(struct alert_table *t, enum alert_outcome o, int64_t for_ns, int64_t now)
{
	struct alert_obs ob = obs(o, for_ns);

	alerts_begin(t);
	alerts_observe(t, &ob, now);
	alerts_end(t, now);
}

static void pending_then_firing_after_for(void **state)
{
	struct alert_table t;

	(void)state;
	alerts_init(&t);
	eval_round(&t, AO_FAIL, S(60), S(1000));
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_PENDING);
	eval_round(&t, AO_FAIL, S(60), S(1059));
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_PENDING);
	eval_round(&t, AO_FAIL, S(60), S(1060));
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_FIRING);
	assert_int_equal(the(&t, "mtu_at_least_min")->fired_at, S(1060));
	assert_int_equal(the(&t, "mtu_at_least_min")->active_since, S(1000));
	assert_string_equal(the(&t, "mtu_at_least_min")->summary, "MTU 1500 < 4200");
	assert_int_equal(t.fired_total, 1);
	alerts_free(&t);
}

static void zero_for_fires_at_once(void **state)
{
	struct alert_table t;

	(void)state;
	alerts_init(&t);
	eval_round(&t, AO_FAIL, 0, S(5));
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_FIRING);
	alerts_free(&t);
}

static void flapping_never_fires(void **state)
{
	struct alert_table t;

	(void)state;
	alerts_init(&t);
	for (int i = 0; i < 20; i++)
		eval_round(&t, i % 2 ? AO_PASS : AO_FAIL, S(30), S(100 + i * 20));
	assert_int_equal(t.fired_total, 0);
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_INACTIVE);
	alerts_free(&t);
}

static void resolve_marks_for_delivery(void **state)
{
	struct alert_table t;
	struct alert *a;

	(void)state;
	alerts_init(&t);
	eval_round(&t, AO_FAIL, 0, S(10));
	eval_round(&t, AO_PASS, 0, S(11));
	a = the(&t, "mtu_at_least_min");
	assert_int_equal(a->state, ALERT_INACTIVE);
	assert_true(a->resolved);
	assert_int_equal(a->resolved_at, S(11));
	assert_int_equal(t.resolved_total, 1);
	/* an object that disappears resolves its alert too */
	eval_round(&t, AO_FAIL, 0, S(12));
	alerts_begin(&t);
	alerts_end(&t, S(13));
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_INACTIVE);
	assert_int_equal(t.resolved_total, 2);
	alerts_free(&t);
}

static void unknown_does_not_fire_but_informs(void **state)
{
	struct alert_table t;

	(void)state;
	alerts_init(&t);
	t.unknown_for_ns = S(60);
	eval_round(&t, AO_FAIL, S(30), S(0));
	eval_round(&t, AO_UNKNOWN, S(30), S(40)); /* ends the pending episode */
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_INACTIVE);
	assert_int_equal(the(&t, ALERT_UNKNOWN_NAME)->state, ALERT_PENDING);
	eval_round(&t, AO_UNKNOWN, S(30), S(100));
	assert_int_equal(the(&t, ALERT_UNKNOWN_NAME)->state, ALERT_FIRING);
	assert_string_equal(the(&t, ALERT_UNKNOWN_NAME)->severity, "info");
	assert_string_equal(the(&t, ALERT_UNKNOWN_NAME)->rule, "mtu_at_least_min");
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_INACTIVE);
	/* known again: the unknown alert resolves */
	eval_round(&t, AO_PASS, S(30), S(110));
	assert_int_equal(the(&t, ALERT_UNKNOWN_NAME)->state, ALERT_INACTIVE);
	alerts_free(&t);
}

static void reload_keeps_state_of_unchanged_rules(void **state)
{
	struct alert_table t;
	struct alert_obs ob;

	(void)state;
	alerts_init(&t);
	eval_round(&t, AO_FAIL, 0, S(10));
	/* same rule, same fingerprint after a reload: still firing, same start */
	eval_round(&t, AO_FAIL, 0, S(20));
	assert_int_equal(the(&t, "mtu_at_least_min")->fired_at, S(10));
	/* changed definition: a new episode */
	ob = obs(AO_FAIL, S(30));
	ob.fingerprint = 43;
	alerts_begin(&t);
	alerts_observe(&t, &ob, S(30));
	alerts_end(&t, S(30));
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_PENDING);
	assert_int_equal(the(&t, "mtu_at_least_min")->active_since, S(30));
	alerts_free(&t);
}

static void encodes_alertmanager_v2(void **state)
{
	struct alert_table t;
	struct strbuf sb = { 0 };
	const struct alert *list[1];
	json_t *j, *a;
	json_error_t je;

	(void)state;
	alerts_init(&t);
	eval_round(&t, AO_FAIL, 0, 1764672000000000000LL);
	list[0] = the(&t, "mtu_at_least_min");
	assert_int_equal(am_encode(&sb, list, 1, 1764672000000000000LL, S(60), "gpu-node-07",
				   "http://gpu-node-07:9479/"),
			 0);
	j = json_loads(sb.buf, 0, &je);
	assert_non_null(j);
	a = json_array_get(j, 0);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(a, "labels"), "alertname")),
	    "mtu_at_least_min");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(a, "labels"), "instance")),
	    "gpu-node-07");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(a, "labels"), "device")), "eth2");
	assert_null(
	    json_object_get(json_object_get(a, "labels"), "port")); /* empty labels left out */
	assert_string_equal(json_string_value(json_object_get(a, "startsAt")),
			    "2025-12-02T10:40:00.000Z");
	assert_string_equal(json_string_value(json_object_get(a, "endsAt")),
			    "2025-12-02T10:44:00.000Z");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(a, "annotations"), "description")),
	    "raise the MTU");
	json_decref(j);
	sb_free(&sb);
	alerts_free(&t);
}

/* ---- alerts_feed_rules: alerts found by position, resolved once per layout ---- */

static const char two_rules[] = "profile: t\nrules:\n"
				"  - name: mtu_9000\n    scope: netdev\n    severity: warning\n"
				"    expr: mtu >= 9000\n"
				"  - name: pfc_on\n    scope: netdev\n    severity: warning\n"
				"    expr: pfc.enabled == {3}\n";
/* the same rules, the other way round: every result moves */
static const char two_rules_swapped[] =
    "profile: t\nrules:\n"
    "  - name: pfc_on\n    scope: netdev\n    severity: warning\n"
    "    expr: pfc.enabled == {3}\n"
    "  - name: mtu_9000\n    scope: netdev\n    severity: warning\n"
    "    expr: mtu >= 9000\n";

static struct rules_engine *load(const char *yaml)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;

	assert_int_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg), 0);
	rules_diags_free(&dg);
	return e;
}

/* What alerts_feed_rules did before it kept positions: every result looked up by name. */
static void feed_by_name(struct alert_table *t, const struct rules_engine *e, int64_t now)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res);
	static const enum alert_outcome ao[] = { [RULE_PASS] = AO_PASS,
						 [RULE_FAIL] = AO_FAIL,
						 [RULE_UNKNOWN] = AO_UNKNOWN,
						 [RULE_SKIP] = AO_SKIP };

	alerts_begin(t);
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *r = &res[i];
		struct alert_obs o = {
			.rule = r->rule->name,
			.severity = rule_severity_name(r->rule->severity),
			.profile = r->rule->profile,
			.device = r->device,
			.port = "",
			.summary = r->summary,
			.doc = r->rule->doc,
			.value = r->outcome == RULE_UNKNOWN ? r->reason : r->summary,
			.fingerprint = r->rule->fingerprint,
			.for_ns = r->rule->for_ns,
			.outcome = ao[r->outcome],
		};

		alerts_observe(t, &o, now);
	}
	alerts_end(t, now);
}

static const struct alert *alert_of(const struct alert_table *t, const char *name, const char *rule,
				    const char *dev)
{
	const struct alert *hit = NULL;

	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->a[i].alertname, name) && !strcmp(t->a[i].rule, rule) &&
		    !strcmp(t->a[i].device, dev)) {
			assert_null(hit); /* never two alerts for one (rule, object) */
			hit = &t->a[i];
		}
	return hit;
}

/* Both tables hold the same alerts in the same states. */
static void same_tables(const struct alert_table *t, const struct alert_table *ref)
{
	assert_int_equal(t->n, ref->n);
	assert_int_equal(t->fired_total, ref->fired_total);
	assert_int_equal(t->resolved_total, ref->resolved_total);
	for (size_t i = 0; i < ref->n; i++) {
		const struct alert *r = &ref->a[i];
		const struct alert *a = alert_of(t, r->alertname, r->rule, r->device);

		assert_non_null(a);
		assert_string_equal(a->profile, r->profile);
		assert_string_equal(a->summary, r->summary);
		assert_string_equal(a->value, r->value);
		assert_int_equal(a->state, r->state);
		assert_int_equal(a->active_since, r->active_since);
		assert_int_equal(a->fired_at, r->fired_at);
		assert_int_equal(a->resolved, r->resolved);
		assert_int_equal(a->resolved_at, r->resolved_at);
		assert_int_equal(a->last_eval, r->last_eval);
	}
}

/* One poll: evaluate, feed both tables, compare, collect garbage as serve does. */
static void poll_both(struct rules_engine *e, struct node_model *m, struct alert_table *t,
		      struct alert_table *ref, int64_t now)
{
	assert_int_equal(rules_evaluate(e, m, now), 0);
	alerts_feed_rules(t, e, now);
	feed_by_name(ref, e, now);
	same_tables(t, ref);
	assert_true(t->idx_layout == rules_layout(e));
	alerts_gc(t, false);
	alerts_gc(ref, false);
}

static void drop_netdev(struct node_model *m, const char *name)
{
	struct object **nds;
	size_t n = model_objects(m, OBJ_NETDEV, &nds);

	model_begin(m, OBJ_NETDEV);
	for (size_t i = 0; i < n; i++)
		nds[i]->seen = strcmp(nds[i]->name, name) != 0;
	model_sweep(m, OBJ_NETDEV);
	model_link_ports(m);
}

static void feed_rules_remaps_on_reload_and_objects(void **state)
{
	struct alert_table t, ref;
	struct node_model m;
	struct rules_engine *e, *e2;
	struct object *eth1;
	uint64_t layout;

	(void)state;
	build_model(&m); /* eth2: MTU 9000, PFC on 3; eth3: MTU 1500, PFC absent */
	alerts_init(&t);
	alerts_init(&ref);
	t.unknown_for_ns = ref.unknown_for_ns = S(2);
	e = load(two_rules);
	poll_both(e, &m, &t, &ref, S(1));
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth3")->state, ALERT_FIRING);
	assert_int_equal(alert_of(&t, ALERT_UNKNOWN_NAME, "pfc_on", "eth3")->state, ALERT_PENDING);
	assert_null(alert_of(&t, ALERT_UNKNOWN_NAME, "pfc_on", "eth2"));

	/* steady state: the index stays, nothing is made again */
	layout = t.idx_layout;
	poll_both(e, &m, &t, &ref, S(2));
	poll_both(e, &m, &t, &ref, S(3));
	assert_true(t.idx_layout == layout);
	assert_int_equal(t.n, 2); /* eth3's mtu_9000 and unknown: a passing rule has no alert */
	assert_int_equal(alert_of(&t, ALERT_UNKNOWN_NAME, "pfc_on", "eth3")->state, ALERT_FIRING);

	/* an object sorted before the others appears: every netdev result moves */
	eth1 = model_add_netdev(&m, "eth1");
	field_set_int(eth1, F_NETDEV_MTU, 1500);
	field_set_set(eth1, F_NETDEV_PFC_ENABLED, 1u << 3);
	poll_both(e, &m, &t, &ref, S(4));
	assert_true(t.idx_layout != layout);
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth3")->fired_at, S(1));
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth1")->fired_at, S(4));
	assert_int_equal(alert_of(&t, ALERT_UNKNOWN_NAME, "pfc_on", "eth3")->fired_at, S(3));

	/* one goes: its alerts resolve, gc moves the rest, the next poll still finds them */
	drop_netdev(&m, "eth3");
	poll_both(e, &m, &t, &ref, S(5));
	assert_int_equal(t.resolved_total, 2);
	assert_null(alert_of(&t, "mtu_9000", "", "eth3"));
	poll_both(e, &m, &t, &ref, S(6));
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth1")->fired_at, S(4));
	assert_int_equal(t.fired_total, 3);

	/* a reload with the rules in another order: same alerts, same episodes */
	e2 = load(two_rules_swapped);
	rules_adopt_history(e2, e);
	rules_free(e);
	poll_both(e2, &m, &t, &ref, S(7));
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth1")->fired_at, S(4));
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth1")->state, ALERT_FIRING);
	assert_int_equal(t.fired_total, 3);
	assert_int_equal(t.n, 1); /* eth1's mtu_9000 */

	/* the object comes back: its alerts start over */
	field_set_int(model_add_netdev(&m, "eth3"), F_NETDEV_MTU, 1500);
	poll_both(e2, &m, &t, &ref, S(8));
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth3")->fired_at, S(8));
	poll_both(e2, &m, &t, &ref, S(9));

	rules_free(e2);
	alerts_free(&t);
	alerts_free(&ref);
	model_free(&m);
}

/* RoceRuleUnknown describes what could not be read, never the rule's fix for a failure. */
static void unknown_alert_describes_the_unread_fact(void **state)
{
	static const char yaml[] = "profile: t\nrules:\n"
				   "  - name: pfc_on\n    scope: netdev\n    severity: warning\n"
				   "    expr: pfc.enabled == {3}\n"
				   "    doc: \"Fix: `dcb pfc set dev IF prio-pfc 3:on`.\"\n";
	struct alert_table t;
	struct node_model m;
	struct rules_engine *e = load(yaml);
	const struct alert *u, *a;

	(void)state;
	build_model(&m); /* eth3: PFC absent (unsupported) */
	alerts_init(&t);
	t.unknown_for_ns = 0;
	assert_int_equal(rules_evaluate(e, &m, S(1)), 0);
	alerts_feed_rules(&t, e, S(1));
	u = alert_of(&t, ALERT_UNKNOWN_NAME, "pfc_on", "eth3");
	assert_non_null(u);
	assert_int_equal(u->state, ALERT_FIRING);
	assert_null(strstr(u->description, "dcb pfc set"));
	assert_non_null(strstr(u->description, "Not decided"));
	assert_non_null(strstr(u->description, "pfc.enabled"));
	/* the rule's own alert keeps its fix for when it fails; where it passes it has none */
	a = alert_of(&t, "pfc_on", "", "eth2");
	assert_null(a);
	field_set_set(model_netdev(&m, "eth2"), F_NETDEV_PFC_ENABLED, 1u << 4);
	assert_int_equal(rules_evaluate(e, &m, S(1)), 0);
	alerts_feed_rules(&t, e, S(1));
	a = alert_of(&t, "pfc_on", "", "eth2");
	assert_non_null(a);
	assert_non_null(strstr(a->description, "dcb pfc set"));
	/* the text is made again when the reason changes, and only then */
	field_absent(model_netdev(&m, "eth3"), F_NETDEV_PFC_ENABLED, ABS_PERMISSION, 13);
	assert_int_equal(rules_evaluate(e, &m, S(2)), 0);
	alerts_feed_rules(&t, e, S(2));
	u = alert_of(&t, ALERT_UNKNOWN_NAME, "pfc_on", "eth3");
	assert_non_null(strstr(u->description, "not allowed to read pfc.enabled"));
	assert_non_null(strstr(u->summary, "absent: permission"));
	assert_int_equal(u->state, ALERT_FIRING);
	rules_free(e);
	alerts_free(&t);
	model_free(&m);
}

/*
 * An event pass (serve, after a carrier notification): only the rules that
 * read the changed facts are made again, at the pass's time; a `for: 0`
 * rule fires in that pass; a `for:` is not served by results older than it;
 * a counter rule waits for the poll, though it reads the fact too.
 */
static void event_pass_runs_the_rules_that_read_the_change(void **state)
{
	static const char yaml[] =
	    "profile: t\nrules:\n"
	    "  - name: carrier_up\n    scope: netdev\n    severity: critical\n"
	    "    expr: carrier\n"
	    "  - name: carrier_held\n    scope: netdev\n    severity: warning\n"
	    "    expr: carrier\n    for: 1m\n"
	    "  - name: mtu_9000\n    scope: netdev\n    severity: warning\n"
	    "    expr: mtu >= 9000\n"
	    "  - name: flaps_flat\n    scope: netdev\n    severity: warning\n"
	    "    when: carrier\n    expr: increase(carrier.changes, 5m) == 0\n";
	bool changed[F__COUNT] = { 0 };
	const struct rule_result *res;
	struct alert_table t;
	struct node_model m;
	struct rules_engine *e = load(yaml);
	struct object *eth2;
	uint64_t fired;
	size_t n, ran;

	(void)state;
	build_model(&m);
	eth2 = model_netdev(&m, "eth2");
	field_set_bool(eth2, F_NETDEV_CARRIER, true);
	field_set_int(eth2, F_NETDEV_CARRIER_CHANGES, 4);
	alerts_init(&t);
	/* before any poll there is nothing to make again from */
	changed[F_NETDEV_CARRIER] = true;
	assert_int_equal(rules_evaluate_changed(e, &m, S(1), changed, 0, &ran), -EAGAIN);
	assert_int_equal(ran, 0);
	assert_int_equal(rules_evaluate(e, &m, S(10)), 0);
	alerts_feed_rules(&t, e, S(10));
	assert_null(alert_of(&t, "carrier_up", "", "eth2")); /* passes: no alert */

	/* the carrier goes: carrier_up and carrier_held run, mtu_9000 and the counter rule not */
	field_set_bool(eth2, F_NETDEV_CARRIER, false);
	field_set_int(eth2, F_NETDEV_MTU, 1500); /* not marked: not looked at */
	assert_int_equal(rules_evaluate_changed(e, &m, S(11), changed, 0, &ran), 0);
	assert_int_equal(ran, 2);
	n = rules_results(e, &res);
	for (size_t i = 0; i < n; i++) {
		bool made = !strcmp(res[i].rule->name, "carrier_up") ||
			    !strcmp(res[i].rule->name, "carrier_held");

		if (strcmp(res[i].device, "eth2"))
			continue;
		assert_true(res[i].eval_ns == (made ? S(11) : S(10)));
		if (!strcmp(res[i].rule->name, "mtu_9000"))
			assert_int_equal(res[i].outcome, RULE_PASS); /* still the poll's 9000 */
		if (made)
			assert_int_equal(res[i].outcome, RULE_FAIL);
	}
	fired = t.fired_total;
	alerts_feed_changed(&t, e, S(11));
	assert_int_equal(alert_of(&t, "carrier_up", "", "eth2")->state, ALERT_FIRING);
	assert_true(alert_of(&t, "carrier_up", "", "eth2")->fired_at == S(11));
	assert_int_equal(alert_of(&t, "carrier_held", "", "eth2")->state, ALERT_PENDING);
	assert_int_equal(t.fired_total, fired + 1); /* that one alone */

	/* a pass of another source's facts makes nothing, and a minute on moves no `for:` */
	memset(changed, 0, sizeof(changed));
	changed[F_NETDEV_PFC_ENABLED] = true;
	assert_int_equal(rules_evaluate_changed(e, &m, S(80), changed, 0, &ran), 0);
	assert_int_equal(ran, 0);
	alerts_feed_changed(&t, e, S(80));
	assert_int_equal(alert_of(&t, "carrier_held", "", "eth2")->state, ALERT_PENDING);
	assert_null(alert_of(&t, "mtu_9000", "", "eth2")); /* not made again: still passes */

	/* the poll makes everything again: now the held rule has failed for a minute */
	assert_int_equal(rules_evaluate(e, &m, S(81)), 0);
	alerts_feed_rules(&t, e, S(81));
	assert_int_equal(alert_of(&t, "carrier_held", "", "eth2")->state, ALERT_FIRING);
	assert_int_equal(alert_of(&t, "mtu_9000", "", "eth2")->state, ALERT_FIRING);

	/* objects came: the pass refuses, a poll must lay the results out */
	model_add_netdev(&m, "eth4");
	changed[F_NETDEV_CARRIER] = true;
	assert_int_equal(rules_evaluate_changed(e, &m, S(82), changed, 0, &ran), -EAGAIN);
	rules_free(e);
	alerts_free(&t);
	model_free(&m);
}

/*
 * A fast poll re-read the counters alone: the counter rules run, and the rules
 * over counter fields; a rule over configuration keeps its result (it could not
 * decide otherwise), and runs again when the configuration is read.
 */
static void fast_poll_runs_the_counter_rules(void **state)
{
	static const char yaml[] =
	    "profile: t\nrules:\n"
	    "  - name: mtu_9000\n    scope: netdev\n    severity: warning\n"
	    "    expr: mtu >= 9000\n"
	    "  - name: flaps_flat\n    scope: netdev\n    severity: warning\n"
	    "    expr: increase(carrier.changes, 5m) == 0\n"
	    "  - name: few_flaps\n    scope: netdev\n    severity: warning\n"
	    "    expr: carrier.changes < 10\n"
	    "  - name: discards\n    scope: netdev\n    severity: warning\n"
	    "    expr: ethtool[\"rx_discards_phy\"] < 100\n";
	bool fast[F__COUNT];
	const struct rule_result *res;
	struct node_model m;
	struct rules_engine *e = load(yaml);
	struct object *eth2;
	size_t n, ran;

	(void)state;
	build_model(&m);
	eth2 = model_netdev(&m, "eth2");
	field_set_int(eth2, F_NETDEV_CARRIER_CHANGES, 4);
	for (int f = 0; f < F__COUNT; f++)
		fast[f] = field_fast((enum field_id)f);
	assert_true(fast[F_NETDEV_CARRIER_CHANGES]);
	assert_false(fast[F_NETDEV_MTU]);
	assert_true(fast[F_NETDEV_FEC_ACTIVE]); /* configuration, read with the FEC counters */
	assert_int_equal(rules_evaluate(e, &m, S(10)), 0);

	field_set_int(eth2, F_NETDEV_MTU, 1500); /* not re-read by a fast poll: not looked at */
	field_set_int(eth2, F_NETDEV_CARRIER_CHANGES, 40);
	cset_set(&eth2->cs[CSET_ETHTOOL], "rx_discards_phy", 700);
	assert_int_equal(rules_evaluate_changed(e, &m, S(11), fast, RULES_EVAL_COUNTERS, &ran), 0);
	assert_int_equal(ran, 3);
	n = rules_results(e, &res);
	for (size_t i = 0; i < n; i++) {
		bool config = !strcmp(res[i].rule->name, "mtu_9000");

		if (strcmp(res[i].device, "eth2"))
			continue;
		assert_true(res[i].eval_ns == (config ? S(10) : S(11)));
		if (config)
			assert_int_equal(res[i].outcome, RULE_PASS);
		else
			assert_int_equal(res[i].outcome, RULE_FAIL); /* each saw its new counter */
	}
	/* the configuration poll: everything */
	assert_int_equal(rules_evaluate(e, &m, S(12)), 0);
	n = rules_results(e, &res);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(res[i].device, "eth2") && !strcmp(res[i].rule->name, "mtu_9000"))
			assert_int_equal(res[i].outcome, RULE_FAIL);
	rules_free(e);
	model_free(&m);
}

/* Durations in summaries, written without printf: what printf wrote before. */
static void durations_read_as_before(void **state)
{
	static const int64_t ns[] = { 0,
				      250000000,
				      1000000000,
				      1500000000,
				      2450000000LL, /* a tie in decimal, not in binary: "2.5s" */
				      2350000000LL,
				      100000000,
				      49999999,
				      50000000,
				      9940000000LL,
				      9950000000LL,
				      9999999999LL,
				      10000000000LL,
				      59999999999LL,
				      60000000000LL,
				      65000000000LL,
				      3599000000000LL,
				      3600000000000LL,
				      7200000000000LL,
				      7260000000000LL,
				      -5000000000LL,
				      INT64_MAX };
	char got[32], want[32];

	(void)state;
	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		int64_t s = ns[i] / 1000000000LL;

		if (ns[i] >= 3600000000000LL && !(ns[i] % 3600000000000LL))
			snprintf(want, sizeof(want), "%" PRId64 "h", s / 3600);
		else if (ns[i] >= 60000000000LL && !(ns[i] % 60000000000LL))
			snprintf(want, sizeof(want), "%" PRId64 "m", s / 60);
		else if (ns[i] >= 60000000000LL)
			snprintf(want, sizeof(want), "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
		else if (ns[i] >= 10000000000LL || !(ns[i] % 1000000000LL))
			snprintf(want, sizeof(want), "%" PRId64 "s", s);
		else
			snprintf(want, sizeof(want), "%.1fs", (double)ns[i] / 1e9);
		rules_format_duration(ns[i], got, sizeof(got));
		assert_string_equal(got, want);
	}
	rules_format_duration(7260000000000LL, got, 3); /* cut, never overrun */
	assert_string_equal(got, "12");
}

/* ---- delivery: one Alertmanager that never answers beside a healthy one ---- */

/* A loopback listener on an ephemeral port; *port set. */
static int listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

struct healthy_am {
	int fd;
	int posts; /* POSTs answered 200, under lock */
	pthread_mutex_t lock;
};

/* Answers every request with 200 once its body (Content-Length) is in. */
static void *healthy_serve(void *arg)
{
	struct healthy_am *h = arg;
	int c;

	while ((c = accept(h->fd, NULL, NULL)) >= 0) {
		char buf[65536];
		size_t got = 0;
		ssize_t r;

		for (;;) {
			char *end, *cl;

			r = read(c, buf + got, sizeof(buf) - 1 - got);
			if (r <= 0)
				break;
			got += (size_t)r;
			buf[got] = '\0';
			end = strstr(buf, "\r\n\r\n");
			cl = strcasestr(buf, "content-length:");
			if (!end || !cl)
				continue;
			if (got - (size_t)(end + 4 - buf) < strtoul(cl + 15, NULL, 10))
				continue;
			pthread_mutex_lock(&h->lock);
			h->posts++;
			pthread_mutex_unlock(&h->lock);
			dprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
			got = 0;
		}
		close(c);
	}
	return NULL;
}

static void silent_alertmanager_does_not_starve_a_healthy_one(void **state)
{
	struct healthy_am h = { .lock = PTHREAD_MUTEX_INITIALIZER };
	char silent_url[64], healthy_url[64], err[256] = "";
	struct alert_table t;
	struct am_pusher *p = NULL;
	struct am_status st;
	pthread_t thr;
	int silent_port, healthy_port, posts = 0;
	/* never accept()ed: the kernel completes the handshake, nothing ever answers */
	int silent = listener(&silent_port);

	(void)state;
	h.fd = listener(&healthy_port);
	assert_int_equal(pthread_create(&thr, NULL, healthy_serve, &h), 0);
	snprintf(silent_url, sizeof(silent_url), "http://127.0.0.1:%d", silent_port);
	snprintf(healthy_url, sizeof(healthy_url), "http://127.0.0.1:%d", healthy_port);
	/* the silent one first: one sender for both would wait out its timeout each batch */
	struct am_config cfg = { .urls = { silent_url, healthy_url },
				 .n_urls = 2,
				 .resend_ns = S(1),
				 .timeout_ns = S(5),
				 .instance = "n1" };
	assert_int_equal(am_start(&p, &cfg, err, sizeof(err)), 0);
	alerts_init(&t);
	eval_round(&t, AO_FAIL, 0, S(100));
	assert_int_equal(the(&t, "mtu_at_least_min")->state, ALERT_FIRING);
	/* three batches: each submit is a resend interval after the last */
	for (int i = 0; i < 3; i++)
		am_submit(p, &t, S(100 + i), NULL);
	/* until the healthy one has all three or the silent one's first POST timed out */
	do {
		usleep(10000);
		am_get_status(p, &st);
	} while (st.u[1].sent < 3 && !st.u[0].errors);
	pthread_mutex_lock(&h.lock);
	posts = h.posts;
	pthread_mutex_unlock(&h.lock);
	assert_int_equal(posts, 3);
	assert_int_equal(st.u[1].sent, 3);
	/* all three went to the healthy one before the silent one's first POST timed out */
	assert_int_equal(st.u[0].sent, 0);
	assert_int_equal(st.u[0].errors, 0);
	am_stop(p);
	shutdown(h.fd, SHUT_RDWR);
	pthread_join(thr, NULL);
	close(h.fd);
	close(silent);
	alerts_free(&t);
}

/* A sample line of rendered exposition text, its value; -1 when absent. */
static double sample(const struct strbuf *sb, const char *line)
{
	const char *p = strstr(sb->buf, line);

	return p ? strtod(p + strlen(line), NULL) : -1;
}

/*
 * rocewatch_alert_latency_seconds: a batch that carries a state change is
 * timed through every stage, from one origin; a resend is not; buckets are
 * cumulative, the count in +Inf.
 */
static void latency_of_a_state_change(void **state)
{
	struct healthy_am h = { .lock = PTHREAD_MUTEX_INITIALIZER };
	char url[64], err[256] = "";
	struct alert_latency lat;
	struct alert_table t;
	struct am_pusher *p = NULL;
	struct am_status st;
	struct strbuf sb = { 0 };
	struct alert_stamps stamps;
	int64_t o = mono_ns();
	pthread_t thr;
	int port;

	(void)state;
	alert_latency_init(&lat);
	h.fd = listener(&port);
	assert_int_equal(pthread_create(&thr, NULL, healthy_serve, &h), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	struct am_config cfg = {
		.urls = { url }, .n_urls = 1, .resend_ns = S(1), .instance = "n1", .latency = &lat
	};
	assert_int_equal(am_start(&p, &cfg, err, sizeof(err)), 0);
	alerts_init(&t);
	/* the pass: seen at o, the model 2 ms on, rules 3 ms, the alert 4 ms */
	stamps = (struct alert_stamps){ .origin = o,
					.t = { [AL_MODEL] = o + 2000000,
					       [AL_RULES] = o + 3000000,
					       [AL_ALERT] = o + 4000000 } };
	alert_latency_observe(&lat, &stamps, AL_MODEL, AL_ALERT);
	eval_round(&t, AO_FAIL, 0, S(100)); /* fires at 100 s */
	am_submit(p, &t, S(100), &stamps);
	assert_true(stamps.t[AL_ENQUEUED] >= o);
	/* a resend a second later, with stamps of its own: no state changed, not timed */
	stamps.origin = mono_ns();
	eval_round(&t, AO_FAIL, 0, S(101));
	am_submit(p, &t, S(101), &stamps);
	do {
		usleep(10000);
		am_get_status(p, &st);
	} while (st.u[0].sent < 2);
	am_stop(p);
	alert_latency_render(&lat, &sb);
	assert_false(sb.oom);
	assert_non_null(strstr(sb.buf, "# TYPE rocewatch_alert_latency_seconds histogram\n"));
	/* 2 ms: not in the 1 ms bucket, in 2.5 ms and every one above, and +Inf */
	assert_true(sample(&sb, "rocewatch_alert_latency_seconds_bucket{stage=\"model_updated\","
				"le=\"0.001\"} ") == 0);
	assert_true(sample(&sb, "rocewatch_alert_latency_seconds_bucket{stage=\"model_updated\","
				"le=\"0.0025\"} ") == 1);
	assert_true(sample(&sb, "rocewatch_alert_latency_seconds_bucket{stage=\"model_updated\","
				"le=\"10\"} ") == 1);
	assert_true(sample(&sb, "rocewatch_alert_latency_seconds_bucket{stage=\"model_updated\","
				"le=\"+Inf\"} ") == 1);
	assert_true(fabs(sample(&sb, "rocewatch_alert_latency_seconds_sum{stage=\"alert_state_"
				     "changed\"} ") -
			 0.004) < 1e-9);
	/* one batch of two timed through the queue and the POST, from the same origin */
	for (int s = AL_ENQUEUED; s <= AL_ACCEPTED; s++) {
		char line[128];

		snprintf(line, sizeof(line), "rocewatch_alert_latency_seconds_count{stage=\"%s\"} ",
			 alert_stage_name((enum alert_stage)s));
		assert_true(sample(&sb, line) == 1);
	}
	assert_true(sample(&sb, "rocewatch_alert_latency_seconds_sum{stage=\"alertmanager_"
				"accepted\"} ") >=
		    sample(&sb, "rocewatch_alert_latency_seconds_sum{stage=\"post_sent\"} "));
	sb_free(&sb);
	shutdown(h.fd, SHUT_RDWR);
	pthread_join(thr, NULL);
	close(h.fd);
	alerts_free(&t);
	alert_latency_fini(&lat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pending_then_firing_after_for),
		cmocka_unit_test(zero_for_fires_at_once),
		cmocka_unit_test(flapping_never_fires),
		cmocka_unit_test(resolve_marks_for_delivery),
		cmocka_unit_test(unknown_does_not_fire_but_informs),
		cmocka_unit_test(reload_keeps_state_of_unchanged_rules),
		cmocka_unit_test(encodes_alertmanager_v2),
		cmocka_unit_test(feed_rules_remaps_on_reload_and_objects),
		cmocka_unit_test(unknown_alert_describes_the_unread_fact),
		cmocka_unit_test(event_pass_runs_the_rules_that_read_the_change),
		cmocka_unit_test(fast_poll_runs_the_counter_rules),
		cmocka_unit_test(latency_of_a_state_change),
		cmocka_unit_test(durations_read_as_before),
		cmocka_unit_test(silent_alertmanager_does_not_starve_a_healthy_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
