// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "rec_args.h"
#include "recording.h"
#include "util.h"

void rec_args_init(struct rec_args *a)
{
	a->db = NULL;
	a->since_ms = INT64_MIN;
	a->until_ms = INT64_MAX;
	a->now_ms = real_ns() / 1000000;
}

int rec_args_option(struct rec_args *a, const char *cmd, int opt, const char *arg)
{
	switch (opt) {
	case OPT_REC_DB:
		a->db = arg;
		return 0;
	case OPT_REC_SINCE:
	case OPT_REC_UNTIL:
		if (rec_parse_time(arg, a->now_ms,
				   opt == OPT_REC_SINCE ? &a->since_ms : &a->until_ms)) {
			fprintf(stderr,
				"rocewatch %s: --%s: '%s' is not a time (RFC 3339, 'now' or "
				"-10m)\n",
				cmd, opt == OPT_REC_SINCE ? "since" : "until", arg);
			return -EINVAL;
		}
		return 0;
	}
	return 1;
}

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
