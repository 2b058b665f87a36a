/* SPDX-License-Identifier: MIT */
/*
 * The one rules -> alerts step: the rules evaluated over the model at the
 * pass's time, the results fed to the alert table, each alert shown to the
 * caller (what it does with a transition is its own: serve logs, records and
 * pushes it; replay lists it), the table handed on, then collected.  serve
 * (rules_serve.c, alerts_serve.c), replay and export all run it, so what
 * replay says would have fired is what serve fires.
 */
#ifndef ROCEWATCH_RULES_STAGE_H
#define ROCEWATCH_RULES_STAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alerts.h"
#include "engine.h"
#include "model.h"

/* What one pass re-read, and when. */
struct rules_pass {
	int64_t now_ns; /* CLOCK_REALTIME the results carry: the poll's (or event's) time */
	/*
	 * The fields it may have changed ([F__COUNT], rules_evaluate_changed()),
	 * NULL: every field (a configuration poll, a source that cannot tell).
	 */
	const bool *changed;
	unsigned flags; /* rules_evaluate_changed()'s, with changed */
	bool event;	/* an event pass: only the results made again move their alerts */
};

struct rules_stage {
	struct rules_engine *e;	    /* the rules; the owner keeps (and may swap) them */
	struct alert_table *alerts; /* what the results move; NULL: rules only */
	/* Optional: after the results moved the alerts, before they are shown. */
	void (*fed)(void *arg, int64_t now_ns);
	/*
	 * Optional: each alert, in table order, after the results moved it:
	 * it fired in this pass when a->state == ALERT_FIRING && a->fired_at
	 * == now_ns, resolved when a->resolved && a->resolved_at == now_ns.
	 */
	void (*alert)(void *arg, struct alert *a, int64_t now_ns);
	/*
	 * Optional: hand the table on (Alertmanager).  True when it takes the
	 * resolved alerts (their flag stays until it has sent them); without it,
	 * or false, nobody delivers them and the flag is cleared.
	 */
	bool (*deliver)(void *arg, struct alert_table *t, int64_t now_ns);
	void *arg;
};

/*
 * The rules over m: only those reading p->changed when it is given (all
 * of them when that cannot be done), else all.  n: results made again
 * (NULL: not wanted).  0 or -errno (the results stay as they were).
 */
int rules_stage_evaluate(const struct rules_stage *st, const struct node_model *m,
			 const struct rules_pass *p, size_t *n);
/* The results as they stand -> the alerts -> alert(), deliver(), gc. */
void rules_stage_alerts(const struct rules_stage *st, const struct rules_pass *p);
/* Both: the alerts move only when the evaluation worked.  0 or its -errno. */
int rules_stage_run(const struct rules_stage *st, const struct node_model *m,
		    const struct rules_pass *p);

#endif
