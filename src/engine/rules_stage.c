// SPDX-License-Identifier: MIT
/* The rules -> alerts step every command that runs rules over models shares (rules_stage.h). */
#include <errno.h>

#include "rules_stage.h"

int rules_stage_evaluate(const struct rules_stage *st, const struct node_model *m,
			 const struct rules_pass *p, size_t *n)
{
	int r = -EAGAIN;

	if (n)
		*n = 0;
	if (p->changed)
		r = rules_evaluate_changed(st->e, m, p->now_ns, p->changed, p->flags, n);
	/* an event pass has no fallback: the next poll evaluates everything */
	if (r == -EAGAIN && !p->event)
		r = rules_evaluate(st->e, m, p->now_ns);
	return r;
}

void rules_stage_alerts(const struct rules_stage *st, const struct rules_pass *p)
{
	struct alert_table *t = st->alerts;

	if (!t)
		return;
	if (p->event)
		alerts_feed_changed(t, st->e, p->now_ns);
	else
		alerts_feed_rules(t, st->e, p->now_ns);
	if (st->fed)
		st->fed(st->arg, p->now_ns);
	for (size_t i = 0; st->alert && i < t->n; i++)
		st->alert(st->arg, &t->a[i], p->now_ns);
	if (!st->deliver || !st->deliver(st->arg, t, p->now_ns))
		for (size_t i = 0; i < t->n; i++)
			t->a[i].resolved = false; /* nobody sends them */
	alerts_gc(t, false);
}

int rules_stage_run(const struct rules_stage *st, const struct node_model *m,
		    const struct rules_pass *p)
{
	int r = rules_stage_evaluate(st, m, p, NULL);

	if (!r)
		rules_stage_alerts(st, p);
	return r;
}
