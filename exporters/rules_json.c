// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "rules_json.h"
#include "config.h"
#include "snapshot.h"
#include "util.h"

static json_t *time_json(int64_t ns)
{
	char ts[40];

	format_rfc3339(ns, ts, sizeof(ts));
	return json_string(ts);
}

static json_t *profile_json(const struct rules_engine *e, size_t p)
{
	const struct rules_profile_info *pi = rules_profile(e, p);
	json_t *j = json_object(), *params = json_object(), *req = json_array();

	json_object_set_new(j, "name", json_string(pi->name));
	json_object_set_new(j, "description", json_string(pi->description));
	json_object_set_new(j, "file", json_string(pi->file));
	json_object_set_new(j, "origin", json_string(pi->origin));
	json_object_set_new(j, "rules", json_integer((json_int_t)pi->n_rules));
	for (size_t i = 0; i < pi->n_params; i++) {
		const char *name, *value;

		rules_profile_param(e, p, i, &name, &value);
		json_object_set_new(params, name, json_string(value));
	}
	json_object_set_new(j, "params", params);
	for (int k = 0; k < OBJ__COUNT; k++)
		if (pi->requires[k])
			json_array_append_new(req, json_string(obj_kind_name((enum obj_kind)k)));
	json_object_set_new(j, "requires", req);
	json_object_set_new(j, "requirements_met", json_boolean(pi->requirements_met));
	return j;
}

/*
 * check --nccl: the job's settings as this node judged them (job.* facts,
 * null where absent) and the verdicts of the rules over them, which are also
 * in "results" (node scope) and count there.
 */
/* {"value": raw or null, "effective": NCCL's reading, "note": what NCCL does, or null} */
static json_t *variable_json(const struct nccl_env *job, enum nccl_var v)
{
	const struct nccl_reading *r = &job->out[v];
	json_t *j = json_object(), *eff = NULL;

	json_object_set_new(j, "value", job->val[v] ? json_string(job->val[v]) : json_null());
	switch (r->kind) {
	case NCCL_EFF_LIST:
		eff = json_array();
		for (size_t i = 0; i < r->n; i++)
			json_array_append_new(eff, json_string(r->items[i]));
		break;
	case NCCL_EFF_INT:
		eff = json_integer((json_int_t)r->num);
		break;
	case NCCL_EFF_STR:
		eff = r->n ? json_string(r->items[0]) : NULL;
		break;
	case NCCL_EFF_NONE:
		break;
	}
	json_object_set_new(j, "effective", eff ? eff : json_null());
	json_object_set_new(j, "note", r->note.len ? json_string(nccl_note(r)) : json_null());
	json_object_set_new(j, "warning", json_boolean(r->warn));
	return j;
}

static json_t *job_json(const struct rule_result *res, size_t n, const struct node_model *m,
			const struct nccl_env *job)
{
	json_t *j = json_object(), *facts = json_object(), *results = json_array();

	if (job && job->given) {
		json_t *vars = json_object();

		for (int v = 0; v < NCCL_DEBUG; v++)
			if (nccl_var_reported((enum nccl_var)v) || job->set[v])
				json_object_set_new(vars, nccl_var_name((enum nccl_var)v),
						    variable_json(job, (enum nccl_var)v));
		json_object_set_new(j, "variables", vars);
		vars = json_array();
		for (size_t i = 0; i < job->n_unjudged; i++)
			json_array_append_new(vars, json_string(job->unjudged[i]));
		json_object_set_new(j, "not_judged", vars);
	}

	for (int id = 0; id < F__COUNT; id++) {
		struct strbuf sb = { 0 };
		json_t *v = NULL;

		if (fields[id].obj != OBJ_NODE || fields[id].src != SRC_JOB ||
		    !strcmp(fields[id].path, "job.nccl"))
			continue;
		if (field_present(&m->node, (enum field_id)id) &&
		    !snapshot_value_text(&sb, &fields[id], &m->node.f[id]) && !sb.oom)
			v = json_loadb(sb.buf, sb.len, JSON_DECODE_ANY, NULL);
		sb_free(&sb);
		json_object_set_new(facts, fields[id].path + 4, v ? v : json_null());
	}
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *x = &res[i];
		json_t *r;

		if (x->kind != OBJ_NODE || !rule_reads_job(x->rule))
			continue;
		r = json_object();
		json_object_set_new(r, "rule", json_string(x->rule->name));
		json_object_set_new(r, "severity",
				    json_string(rule_severity_name(x->rule->severity)));
		json_object_set_new(r, "outcome", json_string(rule_outcome_name(x->outcome)));
		json_object_set_new(r, "summary",
				    json_string(x->outcome == RULE_PASS || x->outcome == RULE_FAIL
						    ? x->summary
						    : x->reason));
		json_array_append_new(results, r);
	}
	json_object_set_new(j, "facts", facts);
	json_object_set_new(j, "results", results);
	return j;
}

static json_t *result_json(const struct rule_result *x, const struct node_model *m)
{
	char doc[4096];

	const struct rule_info *ri = x->rule;
	json_t *j = json_object(), *o = json_object();

	json_object_set_new(j, "profile", json_string(ri->profile));
	json_object_set_new(j, "rule", json_string(ri->name));
	/* the severity it counts with: critical once a degraded rule escalated */
	json_object_set_new(j, "severity",
			    json_string(rule_severity_name(rule_result_severity(x))));
	json_object_set_new(j, "scope", json_string(obj_kind_name(ri->scope)));
	if (ri->cls) {
		json_object_set_new(j, "class", json_string(rule_class_name(rule_result_class(x))));
		json_object_set_new(j, "escalated", json_boolean(x->escalated));
		if (ri->cls == RCLASS_DEGRADED)
			json_object_set_new(j, "episodes", json_integer(x->episodes));
	}
	if (ri->action)
		json_object_set_new(j, "action", json_string(rule_action_name(ri->action)));
	json_object_set_new(o, "kind", json_string(obj_kind_name(x->kind)));
	if (x->kind != OBJ_NODE)
		json_object_set_new(o, "device", json_string(x->device));
	if (x->kind == OBJ_RDMA_PORT) {
		json_object_set_new(o, "port", json_integer(x->port));
		json_object_set_new(o, "netdev",
				    x->netdev[0] ? json_string(x->netdev) : json_null());
	}
	json_object_set_new(j, "object", o);
	json_object_set_new(j, "outcome", json_string(rule_outcome_name(x->outcome)));
	json_object_set_new(j, "summary", json_string(x->summary));
	/* rate/increase/delta: the window the rule asks for and the span it had */
	json_object_set_new(j, "window_seconds",
			    x->window_ns ? json_real((double)x->window_ns / 1e9) : json_null());
	json_object_set_new(j, "observed_seconds",
			    x->window_ns ? json_real((double)x->observed_ns / 1e9) : json_null());
	json_object_set_new(j, "reason", x->reason[0] ? json_string(x->reason) : json_null());
	json_object_set_new(j, "since", x->since_ns ? time_json(x->since_ns) : json_null());
	json_object_set_new(j, "for_seconds", json_real((double)ri->for_ns / 1e9));
	json_object_set_new(j, "key", json_sprintf("%016llx", (unsigned long long)x->key));
	/* of the definition and the parameters it uses: equal means the same rule */
	json_object_set_new(j, "fingerprint",
			    json_sprintf("%016llx", (unsigned long long)ri->fingerprint));
	/* unknown: what could not be read and how to let rocewatch read it, never the fix */
	if (m || x->outcome == RULE_UNKNOWN)
		rules_doc_for(x, m, doc, sizeof(doc));
	json_object_set_new(j, "doc", json_string(m || x->outcome == RULE_UNKNOWN ? doc : ri->doc));
	return j;
}

/* Link-health coverage per RDMA device (rules_coverage), [] when none. */
static json_t *coverage_json(const struct rules_engine *e)
{
	struct rule_coverage *c;
	json_t *arr = json_array();
	size_t n;

	if (!arr || rules_coverage(e, &c, &n))
		return arr;
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		char text[RULE_COVERAGE_NAMES * 2 + 160];

		json_object_set_new(o, "device", json_string(c[i].device));
		json_object_set_new(o, "netdev",
				    c[i].netdev[0] ? json_string(c[i].netdev) : json_null());
		for (int k = RCLASS_FATAL; k <= RCLASS_DEGRADED; k++) {
			json_t *cl = json_object();

			json_object_set_new(cl, "watched", json_integer(c[i].watched[k]));
			json_object_set_new(cl, "rules", json_integer(c[i].total[k]));
			json_object_set_new(o, rule_class_name((enum rule_class)k), cl);
		}
		json_object_set_new(o, "watching", json_string(c[i].watching));
		json_object_set_new(o, "missing", json_string(c[i].missing));
		json_object_set_new(o, "missing_fatal", json_string(c[i].missing_fatal));
		rules_coverage_text(&c[i], text, sizeof(text));
		json_object_set_new(o, "text", json_string(text));
		json_array_append_new(arr, o);
	}
	free(c);
	return arr;
}

json_t *rules_health_json(const struct rules_engine *e)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res);
	json_t *h = json_object(), *acts = json_array(), *failing = json_array();
	bool seen[RACT__COUNT] = { false };

	if (!h || !acts || !failing) {
		json_decref(h);
		json_decref(acts);
		json_decref(failing);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *x = &res[i];
		json_t *f, *o;

		if (x->outcome != RULE_FAIL || rule_result_severity(x) == SEV_INFO)
			continue;
		seen[x->rule->action] = true;
		f = json_object();
		o = json_object();
		json_object_set_new(o, "kind", json_string(obj_kind_name(x->kind)));
		if (x->kind != OBJ_NODE)
			json_object_set_new(o, "device", json_string(x->device));
		if (x->kind == OBJ_RDMA_PORT)
			json_object_set_new(o, "port", json_integer(x->port));
		json_object_set_new(f, "rule", json_string(x->rule->name));
		json_object_set_new(f, "profile", json_string(x->rule->profile));
		json_object_set_new(f, "object", o);
		json_object_set_new(f, "class", json_string(rule_class_name(rule_result_class(x))));
		json_object_set_new(f, "severity",
				    json_string(rule_severity_name(rule_result_severity(x))));
		json_object_set_new(f, "action", json_string(rule_action_name(x->rule->action)));
		json_object_set_new(f, "escalated", json_boolean(x->escalated));
		json_object_set_new(f, "summary", json_string(x->summary));
		json_array_append_new(failing, f);
	}
	for (int a = 1; a < RACT__COUNT; a++)
		if (seen[a])
			json_array_append_new(acts,
					      json_string(rule_action_name((enum rule_action)a)));
	json_object_set_new(h, "verdict", json_string(node_verdict_name(rules_verdict(e))));
	json_object_set_new(h, "coverage", coverage_json(e));
	json_object_set_new(h, "actions", acts);
	json_object_set_new(h, "failing", failing);
	return h;
}

int rules_json_write(struct strbuf *out, const struct rules_engine *e,
		     const struct rules_json_meta *meta, bool pretty)
{
	json_t *root = json_object(), *profiles = json_array(), *results = json_array(),
	       *counts = json_object();
	const struct rule_result *res;
	size_t n = rules_results(e, &res), cnt[RULE__OUTCOMES + 1] = { 0 };
	enum rules_status st = rules_status(e);
	int r;

	if (!root || !profiles || !results || !counts) {
		json_decref(root);
		json_decref(profiles);
		json_decref(results);
		json_decref(counts);
		return -ENOMEM;
	}
	json_object_set_new(root, "schema", json_string(RULES_JSON_SCHEMA));
	json_object_set_new(root, "schema_version", json_integer(RULES_JSON_VERSION));
	json_object_set_new(root, "rocewatch_version", json_string(ROCEWATCH_VERSION));
	json_object_set_new(root, "host", json_string(meta->host ? meta->host : ""));
	json_object_set_new(root, "time", meta->time_ns ? time_json(meta->time_ns) : json_null());
	json_object_set_new(root, "evaluations", json_integer((json_int_t)rules_evaluations(e)));
	if (meta->samples)
		json_object_set_new(root, "samples", json_integer(meta->samples));
	if (meta->reload_ns) {
		json_object_set_new(root, "last_reload", time_json(meta->reload_ns));
		json_object_set_new(root, "last_reload_success", json_boolean(meta->reload_ok));
	}
	if (meta->history_source) {
		json_t *h = json_object();

		json_object_set_new(h, "source", json_string(meta->history_source));
		json_object_set_new(h, "serve_url",
				    meta->history_url ? json_string(meta->history_url)
						      : json_null());
		json_object_set_new(h, "counter_results",
				    json_integer((json_int_t)meta->history_counter_results));
		json_object_set_new(h, "from_serve",
				    json_integer((json_int_t)meta->history_from_serve));
		json_object_set_new(h, "note",
				    json_string(meta->history_note ? meta->history_note : ""));
		json_object_set_new(root, "history", h);
	}
	json_object_set_new(root, "status", json_string(rules_status_name(st)));
	json_object_set_new(root, "exit_code", json_integer(st));
	json_object_set_new(root, "verdict", json_string(node_verdict_name(rules_verdict(e))));
	json_object_set_new(root, "coverage", coverage_json(e));
	{
		/* what to do, once per action, in the order of the vocabulary (most local first) */
		json_t *acts = json_array();
		bool seen[RACT__COUNT] = { false };

		for (size_t i = 0; i < n; i++)
			if (res[i].outcome == RULE_FAIL && res[i].rule->action)
				seen[res[i].rule->action] = true;
		for (int a = 1; a < RACT__COUNT; a++)
			if (seen[a])
				json_array_append_new(
				    acts, json_string(rule_action_name((enum rule_action)a)));
		json_object_set_new(root, "actions", acts);
	}
	for (size_t p = 0; p < rules_profile_count(e); p++)
		json_array_append_new(profiles, profile_json(e, p));
	for (size_t i = 0; i < n; i++) {
		cnt[res[i].outcome <= RULE__OUTCOMES ? res[i].outcome : RULE__OUTCOMES]++;
		json_array_append_new(results, result_json(&res[i], meta->m));
	}
	for (int o = 0; o < RULE__OUTCOMES; o++)
		json_object_set_new(counts, rule_outcome_name((enum rule_outcome)o),
				    json_integer((json_int_t)cnt[o]));
	json_object_set_new(root, "counts", counts);
	json_object_set_new(root, "profiles", profiles);
	json_object_set_new(root, "results", results);
	if (meta->m && field_present(&meta->m->node, F_JOB_NCCL))
		json_object_set_new(root, "job", job_json(res, n, meta->m, meta->job));
	r = json_write_sb(out, root, pretty);
	json_decref(root);
	return r;
}
