// SPDX-License-Identifier: MIT
/* rocewatch replay: flags, rules and exit code around src/postmortem/replay.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "engine_opts.h"
#include "term.h"
#include "commands.h"
#include "engine.h"
#include "rec_args.h"
#include "replay.h"

struct replay_args {
	struct rec_args ra;
	struct rules_spec spec;
	bool json;
};

static const struct cli_opt replay_opts[] = {
	/* the lines of --since's help that are replay's */
	CLI_TEXT_ROW(
	    "                             (the rules still see the polls before --since, from\n"
	    "                             the keyframe at or before it)\n"),
	CLI_OPT_RULES(struct replay_args, spec,
		      "profile to run (repeatable; default: those serve\n"
		      "ran, with its parameters, as the recording says;\n"
		      "else " RULES_DEFAULT_PROFILE "); --param overrides one value"),
	{ .name = "format",
	  CLI_FORMAT_AT(struct replay_args, json),
	  .metavar = "text|json",
	  .help = "output (default text); -j is json" },
	{ .name = "", .short_name = 'j', CLI_FLAG_AT(struct replay_args, json) },
	CLI_OPT_HELP,
	{ 0 },
};

const struct cli_cmd replay_cli = {
	.name = "replay",
	.synopsis = "(CAPTURE | --db DIR) [--profile NAME|FILE]...\n"
		    "[--param KEY=VALUE]... [--since T] [--until T]\n"
		    "[--format text|json]",
	.head = "Run the rule profiles over a recording (serve --record DIR) or a capture file,\n"
		"poll by poll at the recorded times, and print when each alert would have fired\n"
		"and resolved (for: and counter functions included), with its class and action.\n"
		"By default the rules are the ones serve ran, with the parameters it ran them\n"
		"with; --profile replays a new rule against an old incident, --param another\n"
		"threshold, and the output says what differs from what serve ran.\n\n"
		"Options:\n",
	.tail = "\nExit status: 0 no alert fired, 1 a warning alert fired, 2 a critical alert\n"
		"fired, 3 the recording or the rules cannot be read, or bad usage.\n",
	.tables = { CLI_SUB(rec_args_opts, struct replay_args, ra), CLI_TABLE(replay_opts) },
};

int cmd_replay(int argc, char **argv)
{
	struct replay_args a = { 0 };
	struct rules_spec *spec_p = &a.spec;
	struct rules_diags dg = { 0 };
	struct replay_rules rules = { 0 };
	struct replay_opts ro = { 0 };
	struct replay *rp = NULL;
	struct rec_args *ra = &a.ra;
	char err[512] = "";
	int rc = 3, r, first;

	rec_args_init(ra, "replay");
	r = cli_parse(&replay_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	if (r)
		goto free_spec;
	if (rec_args_finish(ra, "replay", argc, argv, first))
		goto free_spec;
	/* what serve ran, as the recording says, unless the flags say otherwise */
	r = replay_rules_load(&rules, ra->db, spec_p, ra->since_ms, ra->until_ms, &dg, err,
			      sizeof(err));
	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch replay: %s\n", line);
	}
	if (r) {
		fprintf(stderr, "rocewatch replay: %s\n", err);
		goto free_spec;
	}
	ro.e = rules.e;
	ro.rules = &rules;
	ro.db = ra->db;
	ro.since_ms = ra->since_ms;
	ro.until_ms = ra->until_ms;
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
	r = replay_write(rp, a.json, stdout);
	if (fflush(stdout) || r) {
		fprintf(stderr, "rocewatch replay: write error\n");
		goto free_replay;
	}
	rc = replay_worst_fired(rp);
free_replay:
	replay_free(rp);
free_spec:
	replay_rules_free(&rules);
	rules_diags_free(&dg);
	rules_spec_free(spec_p);
	return rc;
}
