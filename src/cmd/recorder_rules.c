// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rules_json.h"
#include "recorder_rules.h"
#include "util.h"

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
		.host = rr->rs->d ? rr->rs->d->m.host : "",
		.time_ns = rr->rs->d ? ts_ns(&rr->rs->d->m.time) : 0,
		.reload_ok = rr->rs->st.reload_ok,
		.reload_ns = rr->rs->st.reload_ns,
	};

	return rr->rs->e ? rules_json_write(out, rr->rs->e, &meta, false) : -ENOENT;
}

void recorder_rules_fini(struct recorder_rules *rr)
{
	strmap_free(&rr->last);
}
