// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "rec_args.h"
#include "recording.h"
#include "util.h"

void rec_args_init(struct rec_args *a, const char *cmd)
{
	a->cmd = cmd;
	a->db = NULL;
	a->since_ms = INT64_MIN;
	a->until_ms = INT64_MAX;
	a->now_ms = real_ns() / 1000000;
}

/* --since / --until T: a time in ms, RFC 3339 or relative to now_ms. */
static int opt_time(const struct cli_opt *o, void *member, const char *arg)
{
	const struct rec_args *a = (const struct rec_args *)((char *)member - o->value);

	return rec_parse_time(arg, a->now_ms, member) ? CLI_BAD : 0;
}

#define TIME_AT(member)                                 \
	CLI_CALL_AT(struct rec_args, member, opt_time), \
	    .value = offsetof(struct rec_args, member), .bad = "a time (RFC 3339, 'now' or -10m)"
const struct cli_opt rec_args_opts[] = {
	{ .name = "db",
	  CLI_STRING_AT(struct rec_args, db),
	  .metavar = "DIR",
	  .help = "the recording directory (or its rocewatch.db)" },
	{ .name = "since",
	  TIME_AT(since_ms),
	  .metavar = "T, --until T",
	  .help = "the window: RFC 3339 (2026-12-02T10:00:00Z, or with\n"
		  "an offset), 'now', or relative to now (-10m, -1h)" },
	{ .name = "until", TIME_AT(until_ms) },
	{ 0 },
};
#undef TIME_AT

int rec_args_finish(struct rec_args *a, const char *cmd, int argc, char **argv, int optind_now)
{
	if (optind_now < argc && !a->db)
		a->db = argv[optind_now++];
	if (optind_now < argc) {
		fprintf(stderr, "rocewatch %s: unexpected argument '%s'\n", cmd, argv[optind_now]);
		return -EINVAL;
	}
	if (!a->db) {
		fprintf(stderr, "rocewatch %s: which recording? --db DIR or a capture file\n", cmd);
		return -EINVAL;
	}
	if (a->since_ms > a->until_ms) {
		fprintf(stderr, "rocewatch %s: --since is after --until\n", cmd);
		return -EINVAL;
	}
	return 0;
}
