// SPDX-License-Identifier: MIT
/*
 * The snapshot reader (snapshot_open_buffer, snapshot_apply) on one file.
 * Contract: a refused file says where; an accepted one round-trips: what
 * snapshot_write() makes of the model reads back, and writes the same again.
 */
#include <errno.h>

#include "fuzz.h"
#include "snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot_file *sf = NULL, *again = NULL;
	char err[512] = "";
	int r = snapshot_open_buffer("fuzz.json", (const char *)data, size, &sf, err, sizeof(err));

	if (r) {
		FUZZ_CHECK(!strncmp(err, "fuzz.json", 9), "an error that names no file: %s", err);
		return 0;
	}
	for (size_t i = 0; i < snapshot_count(sf); i++) {
		struct strbuf a = { 0 }, b = { 0 };
		struct node_model m, m2;

		model_init(&m);
		model_init(&m2);
		FUZZ_CHECK(!snapshot_apply(sf, i, &m, err, sizeof(err)), "validated, then: %s",
			   err);
		FUZZ_CHECK(!snapshot_write(&a, &m, 0), "cannot write what was read");
		r = snapshot_open_buffer("again.json", a.buf, a.len, &again, err, sizeof(err));
		FUZZ_CHECK(!r, "what it wrote does not read back: %s\n%s", err, a.buf);
		FUZZ_CHECK(!snapshot_apply(again, 0, &m2, err, sizeof(err)), "%s", err);
		FUZZ_CHECK(!snapshot_write(&b, &m2, 0), "cannot write it twice");
		FUZZ_CHECK(a.len == b.len && !memcmp(a.buf, b.buf, a.len),
			   "not the same twice:\n%s\n%s", a.buf, b.buf);
		snapshot_close(again);
		again = NULL;
		sb_free(&a);
		sb_free(&b);
		model_free(&m);
		model_free(&m2);
	}
	snapshot_close(sf);
	return 0;
}
