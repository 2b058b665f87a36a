/* SPDX-License-Identifier: MIT */
/*
 * serve's glue between the rule engine and the flight recorder: the rules
 * loaded (each profile, its file's hash and every parameter's value) are
 * noted at the first poll they run, so `replay` runs what serve ran; rule
 * outcomes that change are noted as events in the recording (`report`
 * lists them next to the counters that moved), and captures carry the rule
 * results of their trigger's poll.
 */
#ifndef ROCEWATCH_RECORDER_RULES_H
#define ROCEWATCH_RECORDER_RULES_H

#include "recorder.h"
#include "strmap.h"
#include "rules_serve.h"

struct recorder_rules {
	struct recorder *rec;
	struct rules_serve *rs;
	struct strmap last; /* rule result key -> last outcome */
	uint64_t seen_evals;
	uint64_t noted_loads; /* rules_serve.loads last noted in the recording */
};

/* Daemon hook, after the rules' (model lock held). */
void recorder_rules_after_poll(void *arg, struct node_model *m, unsigned what);
/* recorder_opts.rule_results: /api/v1/checks JSON of the last evaluation (lock held). */
int recorder_rules_results(void *arg, struct strbuf *out);
void recorder_rules_fini(struct recorder_rules *rr);

#endif
