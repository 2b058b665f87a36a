// SPDX-License-Identifier: MIT
/* rocewatch export: flags and output around src/postmortem/export.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "engine.h"
#include "export.h"
#include "rec_args.h"

static const char export_usage[] =
    "Usage: rocewatch export (--db DIR | CAPTURE) [--format openmetrics] [--since T]\n"
    "                        [--until T] [--instance NAME] [--job NAME]\n"
    "                        [--profile NAME|FILE]... [--param KEY=VALUE]...\n"
    "                        [--no-rules] [-o FILE]\n\n"
    "Write a recording (serve --record DIR) or a capture file as OpenMetrics text,\n"
    "for `promtool tsdb create-blocks-from openmetrics FILE DIR`, so an incident\n"
    "looks in Prometheus and Grafana as it did live.  Metric names and labels are\n"
    "those of /metrics, with the instance and job labels a scrape adds; a value that\n"
    "did not change is repeated every 2 minutes so PromQL finds it, and a series\n"
    "that ends (a state left, a counter gone) gets a NaN sample there, as a scrape\n"
    "marks it stale.  The rules run over the recording as replay runs them: their\n"
    "results (roce_rule_result, roce_rules_status) and alerts (roce_alert_firing,\n"
    "roce_alert_pending) are exported too.\n\n"
    "Options:\n" REC_ARGS_HELP "  --format openmetrics       the only format (and the default)\n"
    "  --instance NAME            the instance label (default: the recording's host;\n"
    "                             give what Prometheus scraped, e.g. HOST:9479, to\n"
    "                             line the backfill up with live data)\n"
    "  --job NAME                 the job label (default rocewatch)\n"
    "  --profile NAME|FILE        profile whose rules run over the recording\n"
    "                             (repeatable; default " RULES_DEFAULT_PROFILE ")\n"
    "  --param KEY=VALUE          override a profile parameter (repeatable)\n"
    "  --no-rules                 no rule results or alerts\n"
    "  -o, --output FILE          write to FILE instead of standard output\n"
    "  -h, --help                 this help\n\n"
    "Exit status: 0 written, 1 the recording cannot be read or written, 2 bad usage\n"
    "or bad rule files.\n";

enum {
	OPT_FORMAT = 1,
	OPT_INSTANCE,
	OPT_JOB,
	OPT_PROFILE,
	OPT_PARAM,
	OPT_NO_RULES,
};

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		REC_ARGS_OPTIONS,
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "instance", required_argument, NULL, OPT_INSTANCE },
		{ "job", required_argument, NULL, OPT_JOB },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "no-rules", no_argument, NULL, OPT_NO_RULES },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct export_opts eo = { 0 };
	struct xport *x = NULL;
	struct rec_args ra;
	const char *out = "-";
	bool no_rules = false;
	char err[512] = "";
	int opt, rc = 2, r;
	FILE *f;

	rec_args_init(&ra);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		r = rec_args_option(&ra, "export", opt, optarg);
		if (r < 0)
			goto free_spec;
		if (!r)
			continue;
		switch (opt) {
		case 'h':
			fputs(export_usage, stdout);
			rc = 0;
			goto free_spec;
		case OPT_FORMAT:
			if (strcmp(optarg, "openmetrics")) {
				fprintf(stderr,
					"rocewatch export: --format: '%s' is not openmetrics\n",
					optarg);
				goto free_spec;
			}
			break;
		case OPT_INSTANCE:
		case OPT_JOB:
			if (!optarg[0]) {
				fprintf(stderr, "rocewatch export: --%s: empty\n",
					opt == OPT_JOB ? "job" : "instance");
				goto free_spec;
			}
			*(opt == OPT_JOB ? &eo.job : &eo.instance) = optarg;
			break;
		case OPT_PROFILE:
		case OPT_PARAM:
			if (cli_rules_option("export", &spec, opt == OPT_PARAM, optarg))
				goto free_spec;
			break;
		case OPT_NO_RULES:
			no_rules = true;
			break;
		case 'o':
			out = optarg;
			break;
		default:
			cli_bad_option("export", argv, optind);
			goto free_spec;
		}
	}
	if (rec_args_finish(&ra, "export", argc, argv, optind))
		goto free_spec;
	if (no_rules && (spec.n_profiles || spec.n_params)) {
		fprintf(stderr, "rocewatch export: --no-rules and --profile/--param: one or the "
				"other\n");
		goto free_spec;
	}
	if (!no_rules) {
		r = rules_load(&spec, &eo.e, &dg);
		for (size_t i = 0; i < dg.n; i++) {
			char line[1024];

			rules_diag_format(&dg.d[i], line, sizeof(line));
			fprintf(stderr, "rocewatch export: %s\n", line);
		}
		if (r)
			goto free_spec;
	}
	rc = 1;
	eo.db = ra.db;
	eo.since_ms = ra.since_ms;
	eo.until_ms = ra.until_ms;
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
	rules_free(eo.e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	return rc;
}
