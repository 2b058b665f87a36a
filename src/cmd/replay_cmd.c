// SPDX-License-Identifier: MIT
/* rocewatch replay: flags, rules and exit code around src/postmortem/replay.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "term.h"
#include "commands.h"
#include "engine.h"
#include "rec_args.h"
#include "replay.h"

static const char replay_usage[] =
    "Usage: rocewatch replay (CAPTURE | --db DIR) [--profile NAME|FILE]...\n"
    "                        [--param KEY=VALUE]... [--since T] [--until T]\n"
    "                        [--format text|json]\n\n"
    "Run the rule profiles over a recording (serve --record DIR) or a capture file,\n"
    "poll by poll at the recorded times, and print when each alert would have fired\n"
    "and resolved (for: and counter functions included).  The rules need not be the\n"
    "ones serve ran: replay a new rule against an old incident.\n\n"
    "Options:\n" REC_ARGS_HELP
    "                             (the rules still see the polls before --since, from\n"
    "                             the keyframe at or before it)\n"
    "  --profile NAME|FILE        profile to run (repeatable; default " RULES_DEFAULT_PROFILE ")\n"
    "  --param KEY=VALUE          override a profile parameter (repeatable)\n"
    "  --format text|json         output (default text); -j is json\n"
    "  -h, --help                 this help\n\n"
    "Exit status: 0 no alert fired, 1 a warning alert fired, 2 a critical alert\n"
    "fired, 3 the recording or the rules cannot be read, or bad usage.\n";

enum {
	OPT_PROFILE = 1,
	OPT_PARAM,
	OPT_FORMAT
};

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		REC_ARGS_OPTIONS,
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct replay_opts ro = { 0 };
	struct replay *rp = NULL;
	struct rec_args ra;
	bool json = false;
	char err[512] = "";
	int opt, rc = 3, r;

	rec_args_init(&ra);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		r = rec_args_option(&ra, "replay", opt, optarg);
		if (r < 0)
			goto free_spec;
		if (!r)
			continue;
		switch (opt) {
		case 'h':
			fputs(replay_usage, stdout);
			rc = 0;
			goto free_spec;
		case OPT_PROFILE:
		case OPT_PARAM:
			if (cli_rules_option("replay", &spec, opt == OPT_PARAM, optarg))
				goto free_spec;
			break;
		case 'j':
			json = true;
			break;
		case OPT_FORMAT:
			if (cli_format_json("replay", optarg, &json))
				goto free_spec;
			break;
		default:
			cli_bad_option("replay", argv, optind);
			goto free_spec;
		}
	}
	if (rec_args_finish(&ra, "replay", argc, argv, optind))
		goto free_spec;
	r = rules_load(&spec, &ro.e, &dg);
	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch replay: %s\n", line);
	}
	if (r)
		goto free_spec;
	ro.db = ra.db;
	ro.since_ms = ra.since_ms;
	ro.until_ms = ra.until_ms;
	/* the text fits COLUMNS, else the terminal's width, else 80 (as check's) */
	ro.width = term_width(stdout);
	r = replay_run(&rp, &ro, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch replay: %s\n", err);
		goto free_replay;
	}
	if (replay_eval_errors(rp))
		fprintf(stderr,
			"rocewatch replay: %d polls could not be evaluated (out of memory)\n",
			replay_eval_errors(rp));
	r = replay_write(rp, json, stdout);
	if (fflush(stdout) || r) {
		fprintf(stderr, "rocewatch replay: write error\n");
		goto free_replay;
	}
	rc = replay_worst_fired(rp);
free_replay:
	replay_free(rp);
free_spec:
	rules_free(ro.e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	return rc;
}
