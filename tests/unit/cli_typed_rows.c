// SPDX-License-Identifier: MIT
/*
 * Rows whose member is not of the kind's type: each BAD_* must not compile
 * (tests/unit/cli-typed-rows.sh), the file without one must.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

struct t {
	int32_t ms;
	int flag;
	char *owned;
	const char *word;
	bool on;
	double ratio;
	uint16_t port;
	int choice;
};

static const struct cli_opt rows[] = {
	{ .name = "port", CLI_COUNT_AT(struct t, port) },
	{ .name = "word", CLI_STRING_AT(struct t, word) },
	{ .name = "on", CLI_FLAG_AT(struct t, on) },
	{ .name = "choice", CLI_SET_AT(struct t, choice, 1) },
#ifdef BAD_DURATION
	{ .name = "ms", CLI_DURATION_AT(struct t, ms) }, /* an int32_t, not int64_t ns */
#endif
#ifdef BAD_FLAG
	{ .name = "flag", CLI_FLAG_AT(struct t, flag) }, /* an int, not bool */
#endif
#ifdef BAD_STRING
	{ .name = "owned", CLI_STRING_AT(struct t, owned) }, /* char *: CLI_STRDUP_AT */
#endif
#ifdef BAD_STRDUP
	{ .name = "word", CLI_STRDUP_AT(struct t, word) }, /* const char *: not freeable */
#endif
#ifdef BAD_COUNT
	{ .name = "ratio", CLI_COUNT_AT(struct t, ratio) }, /* not an integer */
#endif
#ifdef BAD_COUNT_BOOL
	{ .name = "on", CLI_COUNT_AT(struct t, on) },
#endif
#ifdef BAD_CHOICE
	{ .name = "port", CLI_CHOICE_AT(struct t, port, cli_text_json) }, /* not int-sized */
#endif
	{ 0 },
};

const struct cli_opt *cli_typed_rows(void)
{
	return rows;
}
