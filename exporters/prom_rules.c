// SPDX-License-Identifier: MIT
/*
 * One roce_rule_result series per (rule, object) carrying its outcome as a
 * label, value 1: `roce_rule_result{outcome="fail"}` selects what fails,
 * and an outcome change replaces the series (Prometheus marks the old one
 * stale at the next scrape).  Results whose guard is false (skip) and rules
 * not evaluated yet have no series, so netdevs without RDMA do not add
 * hundreds of series.
 */
#include <stdio.h>
#include <stdlib.h>

#include "alerts.h"
#include "prom.h"
#include "prom_rules.h"

static void alert_series(struct strbuf *sb, const char *name, const struct alert *a)
{
	int first = 1;

	prom_sample_begin(sb, name);
	prom_label(sb, &first, "alertname", a->alertname);
	prom_label(sb, &first, "severity", a->severity);
	prom_label(sb, &first, "profile", a->profile);
	prom_label(sb, &first, "device", a->device);
	prom_label(sb, &first, "port", a->port);
	if (a->rule[0]) {
		prom_label(sb, &first, "rule", a->rule);
		/*
		 * RoceRuleUnknown: why ("pfc.enabled absent: unsupported"), a few
		 * values per rule, so Prometheus can group one alert per rule and
		 * reason instead of one per object
		 */
		prom_label(sb, &first, "reason", a->value);
	}
	prom_sample_end_u64(sb, first, 1);
}

void prom_alerts_render(struct strbuf *sb, const struct alert_table *t)
{
	prom_family(sb, "roce_alert_firing", "gauge",
		    "1 for every alert that is firing (rule failed for at least its `for:`).");
	for (size_t i = 0; i < t->n; i++)
		if (t->a[i].state == ALERT_FIRING)
			alert_series(sb, "roce_alert_firing", &t->a[i]);
	prom_family(sb, "roce_alert_pending", "gauge",
		    "1 for every alert whose rule fails but not yet for its `for:` duration.");
	for (size_t i = 0; i < t->n; i++)
		if (t->a[i].state == ALERT_PENDING)
			alert_series(sb, "roce_alert_pending", &t->a[i]);
}

static void object_labels(struct strbuf *sb, int *first, const struct rule_result *x)
{
	char port[12];

	prom_label(sb, first, "profile", x->rule->profile);
	prom_label(sb, first, "rule", x->rule->name);
	if (x->kind != OBJ_NODE)
		prom_label(sb, first, "device", x->device);
	if (x->kind == OBJ_RDMA_PORT) {
		snprintf(port, sizeof(port), "%u", x->port);
		prom_label(sb, first, "port", port);
		prom_label(sb, first, "netdev", x->netdev);
	}
}

/* Per RDMA device and health class: the share of its link-health rules that watch it. */
static void render_coverage(struct strbuf *sb, const struct rules_engine *e)
{
	struct rule_coverage *c;
	size_t n;

	if (rules_coverage(e, &c, &n))
		return;
	prom_family(sb, "rocewatch_rule_coverage", "gauge",
		    "Share (0-1) of the link-health rules of a class that watch an RDMA device: "
		    "the others are skipped because its driver does not give what they read.");
	for (size_t i = 0; i < n; i++)
		for (int k = RCLASS_FATAL; k <= RCLASS_DEGRADED; k++) {
			int first = 1;

			if (!c[i].total[k])
				continue;
			prom_sample_begin(sb, "rocewatch_rule_coverage");
			prom_label(sb, &first, "rule_class", rule_class_name((enum rule_class)k));
			prom_label(sb, &first, "device", c[i].device);
			prom_sample_end_double(sb, first, (double)c[i].watched[k] / c[i].total[k]);
		}
	free(c);
}

/* Health over time: the node verdict, and per degraded result its episodes and escalation. */
static void render_health(struct strbuf *sb, const struct rules_engine *e,
			  const struct rule_result *res, size_t n)
{
	int first;

	prom_family(sb, "roce_node_verdict", "gauge",
		    "Node verdict of the rules: 0 healthy, 1 degraded (slow: look soon), 2 fatal "
		    "(jobs fail: drain), 3 unknown.");
	prom_sample1_u64(sb, "roce_node_verdict", NULL, NULL, (uint64_t)rules_verdict(e));
	prom_family(sb, "roce_rule_failure_episodes", "gauge",
		    "Times a degraded health rule started failing on the object within its "
		    "escalation window (kept across restarts with --state-dir).");
	for (size_t i = 0; i < n; i++) {
		if (res[i].rule->cls != RCLASS_DEGRADED || res[i].outcome >= RULE__OUTCOMES)
			continue;
		first = 1;
		prom_sample_begin(sb, "roce_rule_failure_episodes");
		object_labels(sb, &first, &res[i]);
		prom_sample_end_u64(sb, first, res[i].episodes);
	}
	prom_family(sb, "roce_rule_escalated", "gauge",
		    "1 if a degraded health rule failed escalate_after times within its window "
		    "and now counts as fatal.");
	for (size_t i = 0; i < n; i++) {
		if (res[i].rule->cls != RCLASS_DEGRADED || res[i].outcome >= RULE__OUTCOMES)
			continue;
		first = 1;
		prom_sample_begin(sb, "roce_rule_escalated");
		object_labels(sb, &first, &res[i]);
		prom_sample_end_u64(sb, first, res[i].escalated);
	}
	render_coverage(sb, e);
}

void prom_rules_render(struct strbuf *sb, const struct rules_engine *e,
		       const struct prom_rules_state *st)
{
	const struct rule_result *res;
	size_t n = e ? rules_results(e, &res) : 0;
	char port[12];
	int first;

	if (e) {
		prom_family(
		    sb, "roce_rule_result", "gauge",
		    "Outcome (pass, fail, unknown) of a rocewatch rule on an object, as of the "
		    "last poll; value is always 1. Rules whose guard is false have no series.");
		for (size_t i = 0; i < n; i++) {
			const struct rule_result *x = &res[i];

			if (x->outcome != RULE_PASS && x->outcome != RULE_FAIL &&
			    x->outcome != RULE_UNKNOWN)
				continue;
			first = 1;
			prom_sample_begin(sb, "roce_rule_result");
			prom_label(sb, &first, "profile", x->rule->profile);
			prom_label(sb, &first, "rule", x->rule->name);
			prom_label(sb, &first, "severity", rule_severity_name(x->rule->severity));
			if (x->kind != OBJ_NODE)
				prom_label(sb, &first, "device", x->device);
			if (x->kind == OBJ_RDMA_PORT) {
				snprintf(port, sizeof(port), "%u", x->port);
				prom_label(sb, &first, "port", port);
				prom_label(sb, &first, "netdev", x->netdev);
			}
			prom_label(sb, &first, "outcome", rule_outcome_name(x->outcome));
			prom_sample_end_u64(sb, first, 1);
		}
		prom_family(
		    sb, "roce_rules_status", "gauge",
		    "Overall result of the rules as a Nagios code: 0 OK, 1 WARNING, 2 CRITICAL, "
		    "3 UNKNOWN (what `rocewatch check` would exit with).");
		prom_sample1_u64(sb, "roce_rules_status", NULL, NULL, (uint64_t)rules_status(e));
		render_health(sb, e, res, n);
		prom_family(sb, "rocewatch_rules_loaded", "gauge", "Rules loaded, per profile.");
		for (size_t p = 0; p < rules_profile_count(e); p++) {
			prom_sample1_u64(sb, "rocewatch_rules_loaded", "profile",
					 rules_profile(e, p)->name, rules_profile(e, p)->n_rules);
		}
		prom_family(
		    sb, "rocewatch_rules_requirements_met", "gauge",
		    "1 if the objects the profile requires (e.g. an RDMA port) exist, 0 if not.");
		for (size_t p = 0; p < rules_profile_count(e); p++) {
			prom_sample1_u64(sb, "rocewatch_rules_requirements_met", "profile",
					 rules_profile(e, p)->name,
					 rules_profile(e, p)->requirements_met);
		}
		prom_family(sb, "rocewatch_rules_evaluations_total", "counter",
			    "Rule evaluations since the rules were (re)loaded.");
		prom_sample1_u64(sb, "rocewatch_rules_evaluations_total", NULL, NULL,
				 rules_evaluations(e));
		prom_family(sb, "rocewatch_rules_standing_total", "counter",
			    "Counter rule results that stood on a fast poll, not evaluated again, "
			    "since the rules were (re)loaded: settled (their counters did not "
			    "move) or frozen (their windows whole as well: nothing touched).");
		prom_sample1_u64(sb, "rocewatch_rules_standing_total", "how", "settled",
				 rules_settled_total(e) - rules_frozen_total(e));
		prom_sample1_u64(sb, "rocewatch_rules_standing_total", "how", "frozen",
				 rules_frozen_total(e));
	}
	if (!st)
		return;
	prom_family(sb, "rocewatch_rules_evaluation_duration_seconds", "gauge",
		    "How long the last evaluation of all rules took, in seconds.");
	prom_sample1_double(sb, "rocewatch_rules_evaluation_duration_seconds", NULL, NULL,
			    st->eval_seconds);
	prom_family(sb, "rocewatch_rules_reload_success", "gauge",
		    "1 if the last load of the rule files (start-up or SIGHUP) succeeded; 0 if it "
		    "failed and the previous rules are still in use.");
	prom_sample1_u64(sb, "rocewatch_rules_reload_success", NULL, NULL, st->reload_ok);
	prom_family(sb, "rocewatch_rules_last_reload_timestamp_seconds", "gauge",
		    "Unix time of the last attempt to load the rule files.");
	prom_sample1_double(sb, "rocewatch_rules_last_reload_timestamp_seconds", NULL, NULL,
			    (double)st->reload_ns / 1e9);
	prom_family(sb, "rocewatch_rules_reload_failures_total", "counter",
		    "Reloads of the rule files (SIGHUP) that failed.");
	prom_sample1_u64(sb, "rocewatch_rules_reload_failures_total", NULL, NULL,
			 st->reload_failures);
	prom_family(sb, "rocewatch_health_memory_kept", "gauge",
		    "1 if health memory (escalations, counter history) is kept across restarts in "
		    "--state-dir and its last save succeeded; 0 if it is off or the save failed.");
	prom_sample1_u64(sb, "rocewatch_health_memory_kept", NULL, NULL,
			 st->memory_on && !__atomic_load_n(&st->memory_err, __ATOMIC_RELAXED));
}
