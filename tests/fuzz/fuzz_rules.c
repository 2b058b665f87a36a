// SPDX-License-Identifier: MIT
/*
 * rules_load_buffer() on one profile, and when it loads, two evaluations
 * (a second sample for rate/increase/delta) against the unit tests' model.
 * Contract: a refused profile says why (a diagnostic), a loaded one
 * evaluates without failing.
 */
#include <errno.h>

#include "engine.h"
#include "fuzz.h"
#include "helpers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct node_model m;
	static int built;
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	char *text = fuzz_copy(data, size);
	int r;

	if (!built) {
		build_model(&m);
		built = 1;
	}
	r = rules_load_buffer("fuzz.yaml", text, size, NULL, &e, &dg);
	if (r) {
		FUZZ_CHECK(!e, "refused, but an engine came back");
		FUZZ_CHECK(dg.n_errors > 0 || r == -ENOMEM, "refused (%d) without a diagnostic", r);
	} else {
		FUZZ_CHECK(e, "loaded, but no engine");
		FUZZ_CHECK(rules_evaluate(e, &m, 1000000000LL) == 0, "first evaluation failed");
		FUZZ_CHECK(rules_evaluate(e, &m, 2000000000LL) == 0, "second evaluation failed");
		rules_free(e);
	}
	rules_diags_free(&dg);
	free(text);
	return 0;
}
