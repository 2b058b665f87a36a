// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules_json.h"
#include "recorder_rules.h"
#include "util.h"

#define PARAM_ARG_MAX 256

/* serve's --param for key, the last one given (the one the loader applied), or NULL */
static const char *given_param(const struct rules_spec *spec, const char *key)
{
	const char *v = NULL;

	for (size_t i = 0; i < spec->n_params; i++)
		if (!strcmp(spec->params[i].key, key))
			v = spec->params[i].value;
	return v;
}

/* The profiles of rs->e with every parameter's value, to the recorder. */
static int note_profiles(struct recorder_rules *rr)
{
	const struct rules_engine *e = rr->rs->e;
	size_t np = rules_profile_count(e), total = 0, k = 0;
	struct rec_profile *prof = calloc(np ? np : 1, sizeof(*prof));
	struct rec_param *params;
	char(*args)[PARAM_ARG_MAX];
	int r = -ENOMEM;

	for (size_t p = 0; p < np; p++)
		total += rules_profile(e, p)->n_params;
	params = calloc(total ? total : 1, sizeof(*params));
	args = calloc(total ? total : 1, sizeof(*args));
	if (!prof || !params || !args)
		goto free_all;
	for (size_t p = 0; p < np; p++) {
		const struct rules_profile_info *pi = rules_profile(e, p);

		prof[p] = (struct rec_profile){ .name = pi->name,
						.source = pi->file,
						.origin = pi->origin,
						.text_hash = pi->text_hash,
						.params = &params[k],
						.n_params = pi->n_params };
		for (size_t i = 0; i < pi->n_params; i++, k++) {
			const char *text;

			rules_profile_param(e, p, i, &params[k].name, &text);
			rules_profile_param_arg(e, p, i, args[k], sizeof(args[k]));
			params[k].value = args[k];
			params[k].given = given_param(&rr->rs->spec, params[k].name);
		}
	}
	r = recorder_note_profiles(rr->rec, prof, np);
free_all:
	free(args);
	free(params);
	free(prof);
	return r;
}

void recorder_rules_after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct recorder_rules *rr = arg;
	const struct rule_result *res;
	int64_t t_ms = (int64_t)m->time.tv_sec * 1000 + m->time.tv_nsec / 1000000;
	uint64_t evals;
	size_t n;

	(void)what;
	if (!rr->rs->e)
		return;
	/* new rules (start-up, a reload): the recorder dates them by this poll */
	if (rr->rs->loads != rr->noted_loads) {
		if (note_profiles(rr))
			rw_log_once(LOG_LVL_ERROR, "recorder-profiles",
				    "recorder: out of memory noting the rules in the recording "
				    "(replay will not know which parameters serve ran)");
		else
			rr->noted_loads = rr->rs->loads;
	}
	evals = rules_evaluations(rr->rs->e);
	if (evals == rr->seen_evals)
		return; /* the rules did not run this poll */
	rr->seen_evals = evals;
	n = rules_results(rr->rs->e, &res);
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *r = &res[i];
		char key[24], detail[RULE_SUMMARY_MAX + RULE_REASON_MAX + 64];
		int64_t prev;

		snprintf(key, sizeof(key), "%" PRIx64, r->key);
		prev = strmap_get(&rr->last, key);
		if (prev == (int64_t)r->outcome)
			continue;
		if (strmap_put(&rr->last, key, r->outcome))
			return;
		/* The first outcome of a rule is where it starts, not a change; skips are noise. */
		if (prev < 0 || (prev != RULE_FAIL && r->outcome != RULE_FAIL))
			continue;
		snprintf(detail, sizeof(detail), "%s -> %s%s%s",
			 rule_outcome_name((enum rule_outcome)prev), rule_outcome_name(r->outcome),
			 r->summary[0] ? ": " : "",
			 r->outcome == RULE_UNKNOWN ? r->reason : r->summary);
		if (r->kind == OBJ_RDMA_PORT) {
			char d2[sizeof(detail) + 16];

			snprintf(d2, sizeof(d2), "port %u: %s", r->port, detail);
			recorder_event(rr->rec, t_ms, "rule", obj_kind_name(r->kind), r->device,
				       r->rule->name, d2);
		} else {
			recorder_event(rr->rec, t_ms, "rule", obj_kind_name(r->kind), r->device,
				       r->rule->name, detail);
		}
	}
}

int recorder_rules_results(void *arg, struct strbuf *out)
{
	struct recorder_rules *rr = arg;
	struct rules_json_meta meta = {
		.host = rr->rs->d ? daemon_host(rr->rs->d) : "",
		.time_ns = rr->rs->d ? ts_ns(&daemon_model(rr->rs->d)->time) : 0,
		.reload_ok = rr->rs->st.reload_ok,
		.reload_ns = rr->rs->st.reload_ns,
	};

	return rr->rs->e ? rules_json_write(out, rr->rs->e, &meta, false) : -ENOENT;
}

void recorder_rules_fini(struct recorder_rules *rr)
{
	strmap_free(&rr->last);
}
