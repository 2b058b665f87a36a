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

static int opt_time(void *base, const char *name, const char *arg)
{
	struct rec_args *a = base;
	bool since = !strcmp(name, "since");

	if (rec_parse_time(arg, a->now_ms, since ? &a->since_ms : &a->until_ms)) {
		fprintf(stderr,
			"rocewatch %s: --%s: '%s' is not a time (RFC 3339, 'now' or -10m)\n",
			a->cmd, name, arg);
		return -EINVAL;
	}
	return 0;
}

const struct cli_opt rec_args_opts[] = {
	{ .name = "db",
	  .kind = CLI_STRING,
	  CLI_AT(struct rec_args, db),
	  .usage = "  --db DIR                   the recording directory (or its rocewatch.db)\n" },
	{ .name = "since",
	  .kind = CLI_CALL,
	  .fn = opt_time,
	  .usage =
	      "  --since T, --until T       the window: RFC 3339 (2026-12-02T10:00:00Z, or with\n"
	      "                             an offset), 'now', or relative to now (-10m, -1h)\n" },
	{ .name = "until", .kind = CLI_CALL, .fn = opt_time },
	{ 0 },
};

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
