// SPDX-License-Identifier: MIT
/*
 * The health state file's reader (rules_health_load_buffer) on one file.
 * Contract: whatever it keeps is what rocewatch itself would write — the
 * engine, evaluated once, serializes a file that loads again with nothing
 * refused and serializes to the same bytes — and a refused record is
 * counted, never a crash, a hang or a quadratic load.
 */
#include <errno.h>

#include "engine.h"
#include "fuzz.h"
#include "helpers.h"
#include "strbuf.h"

/* A degraded rule over a counter: both record kinds, esc and ring, have a home. */
static const char yaml[] = "profile: t\n"
			   "params: { escalate_after: 2, escalate_window_hours: 1 }\n"
			   "rules:\n"
			   "  - name: carrier_stable\n"
			   "    scope: netdev\n"
			   "    expr: increase(carrier.changes, 10s) == 0\n"
			   "    class: degraded\n"
			   "    action: reset-link\n";

/* Inside the window of the corpus's files, and "now" for the future check. */
#define T0 1796205600000000000LL

static struct rules_engine *engine(void)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;

	if (rules_load_buffer("fuzz.yaml", yaml, sizeof(yaml) - 1, NULL, &e, &dg))
		abort();
	rules_diags_free(&dg);
	return e;
}

static void evaluate(struct rules_engine *e, struct node_model *m, int64_t t)
{
	m->time.tv_sec = t / 1000000000LL;
	m->time.tv_nsec = 0;
	FUZZ_CHECK(rules_evaluate(e, m, t) == 0, "evaluation failed");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct node_model m;
	static int built;
	struct rules_health_load_stats st;
	struct strbuf a = { 0 }, b = { 0 };
	struct rules_engine *e = engine(), *e2;
	char *text = fuzz_copy(data, size);
	int r;

	if (!built) {
		model_init(&m);
		model_add_netdev(&m, "eth2");
		field_set_int(m.netdevs[0], F_NETDEV_CARRIER_CHANGES, 2);
		built = 1;
	}
	r = rules_health_load_buffer(e, text, size, "boot-a", T0 + 60 * 1000000000LL, &st);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENODATA || r == -ENOMEM, "load: unexpected %d",
		   r);
	if (!r) {
		FUZZ_CHECK(!st.refused || (st.why && st.first_line >= 2),
			   "a refused record without its line and reason");
		evaluate(e, &m, T0 + 30 * 1000000000LL);
		FUZZ_CHECK(rules_health_serialize(e, "boot-a", &a) == 0, "serialize failed");
		/* what it kept is what rocewatch writes: it loads again, whole and unchanged */
		e2 = engine();
		r = rules_health_load_buffer(e2, a.buf, a.len, "boot-a", T0 + 60 * 1000000000LL,
					     &st);
		FUZZ_CHECK(r == 0 && !st.refused && !st.future,
			   "its own file refused (%d, %zu records, line %zu: %s)", r, st.refused,
			   st.first_line, st.why ? st.why : "");
		sb_free(&b);
		/* a.buf was parsed in place: serialize both again and compare */
		evaluate(e2, &m, T0 + 30 * 1000000000LL);
		rules_health_serialize(e, "boot-a", &a);
		rules_health_serialize(e2, "boot-a", &b);
		FUZZ_CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
			   "a reloaded file serializes differently");
		rules_free(e2);
	}
	sb_free(&a);
	sb_free(&b);
	rules_free(e);
	free(text);
	return 0;
}
