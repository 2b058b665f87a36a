// SPDX-License-Identifier: MIT
/* The alert state machine: pending -> firing after `for`, flapping, resolve, reload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "alertmanager.h"
#include "alerts.h"

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
