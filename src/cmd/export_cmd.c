// SPDX-License-Identifier: MIT
/* rocewatch export: flags and output around src/postmortem/export.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "engine_opts.h"
#include "commands.h"
#include "engine.h"
#include "export.h"
#include "rec_args.h"
#include "replay.h"

struct export_args {
	struct rec_args ra;
	struct rules_spec spec;
	const char *out, *instance, *job;
	int format; /* openmetrics, the only one */
	bool no_rules;
};

static const char *const export_formats[] = { "openmetrics", NULL };

/* --instance / --job: a label value, never empty (an empty label is no label). */
static int opt_label(const struct cli_opt *o, void *member, const char *arg)
{
	if (!arg[0]) {
		fprintf(stderr, "rocewatch export: --%s: empty\n", o->name);
		return -EINVAL;
	}
	*(const char **)member = arg;
	return 0;
}

static const struct cli_opt export_opts[] = {
	{ .name = "format",
	  CLI_CHOICE_AT(struct export_args, format, export_formats),
	  .metavar = "openmetrics",
	  .help = "the only format (and the default)" },
	{ .name = "instance",
	  CLI_CALL_AT(struct export_args, instance, opt_label),
	  .metavar = "NAME",
	  .help = "the instance label (default: the recording's host;\n"
		  "give what Prometheus scraped, e.g. HOST:9479, to\n"
		  "line the backfill up with live data)" },
	{ .name = "job",
	  CLI_CALL_AT(struct export_args, job, opt_label),
	  .metavar = "NAME",
	  .help = "the job label (default rocewatch)" },
	CLI_OPT_RULES(struct export_args, spec,
		      "profile whose rules run over the recording\n"
		      "(repeatable; default: the ones serve ran, with\n"
		      "the values of their parameters, as the\n"
		      "recording says; else " RULES_DEFAULT_PROFILE ")"),
	{ .name = "no-rules",
	  CLI_FLAG_AT(struct export_args, no_rules),
	  .help = "no rule results or alerts" },
	CLI_OPT_OUTPUT(struct export_args, out),
	CLI_OPT_HELP,
	{ 0 },
};

const struct cli_cmd export_cli = {
	.name = "export",
	.synopsis = "(--db DIR | CAPTURE) [--format openmetrics] [--since T]\n"
		    "[--until T] [--instance NAME] [--job NAME]\n"
		    "[--profile NAME|FILE]... [--param KEY=VALUE]...\n"
		    "[--no-rules] [-o FILE]",
	.head = "Write a recording (serve --record DIR) or a capture file as OpenMetrics text,\n"
		"for `promtool tsdb create-blocks-from openmetrics FILE DIR`, so an incident\n"
		"looks in Prometheus and Grafana as it did live.  Metric names and labels are\n"
		"those of /metrics, with the instance and job labels a scrape adds; a value that\n"
		"did not change is repeated every 2 minutes so PromQL finds it, and a series\n"
		"that ends (a state left, a counter gone) gets a NaN sample there, as a scrape\n"
		"marks it stale.  The rules run over the recording as replay runs them: their\n"
		"results (roce_rule_result, roce_rules_status) and alerts (roce_alert_firing,\n"
		"roce_alert_pending) are exported too.\n\n"
		"Options:\n",
	.tail = "\nExit status: 0 written, 1 the recording cannot be read or written, 2 bad usage\n"
		"or bad rule files.\n",
	.tables = { CLI_SUB(rec_args_opts, struct export_args, ra), CLI_TABLE(export_opts) },
};

int cmd_export(int argc, char **argv)
{
	struct export_args ea = { .out = "-" };
	struct replay_rules rules = { 0 };
	struct rules_diags dg = { 0 };
	struct export_opts eo = { 0 };
	struct xport *x = NULL;
	struct rec_args *ra = &ea.ra;
	const char *out;
	char err[512] = "";
	int rc = 2, r, first;
	FILE *f;

	rec_args_init(ra, "export");
	r = cli_parse(&export_cli, &ea, argc, argv, &first);
	if (r) {
		rc = r == 1 ? 0 : 2;
		goto free_spec;
	}
	if (rec_args_finish(ra, "export", argc, argv, first))
		goto free_spec;
	if (ea.no_rules && (ea.spec.n_profiles || ea.spec.n_params)) {
		fprintf(stderr, "rocewatch export: --no-rules and --profile/--param: one or the "
				"other\n");
		goto free_spec;
	}
	if (!ea.no_rules) {
		/* the rules replay runs: serve's, as the recording says, unless the flags say */
		r = replay_rules_load(&rules, ra->db, &ea.spec, ra->since_ms, ra->until_ms, &dg,
				      err, sizeof(err));
		for (size_t i = 0; i < dg.n; i++) {
			char line[1024];

			rules_diag_format(&dg.d[i], line, sizeof(line));
			fprintf(stderr, "rocewatch export: %s\n", line);
		}
		if (r) {
			fprintf(stderr, "rocewatch export: %s\n", err);
			rc = dg.n_errors ? 2 : 1; /* the rule files, or the recording */
			goto free_spec;
		}
		/* what the exported rule results were computed with, where it is not plain */
		for (size_t i = rules.plain_first; i < rules.n_notes; i++)
			fprintf(stderr, "rocewatch export: %s\n", rules.notes[i]);
		eo.e = rules.e;
	}
	rc = 1;
	out = ea.out;
	eo.instance = ea.instance;
	eo.job = ea.job;
	eo.db = ra->db;
	eo.since_ms = ra->since_ms;
	eo.until_ms = ra->until_ms;
	r = export_open(&x, &eo, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch export: %s\n", err);
		goto free_x;
	}
	f = cli_open_output("export", out);
	if (!f)
		goto free_x;
	r = export_write(x, f, err, sizeof(err));
	if (r)
		fprintf(stderr, "rocewatch export: %s\n", err);
	if (!cli_close_output("export", out, f) && !r)
		rc = 0;
free_x:
	export_free(x);
free_spec:
	replay_rules_free(&rules);
	rules_diags_free(&dg);
	rules_spec_free(&ea.spec);
	return rc;
}
