// SPDX-License-Identifier: MIT
/* rocewatch export: flags and output around src/postmortem/export.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "export.h"
#include "rec_args.h"

static const char export_usage[] =
    "Usage: rocewatch export (--db DIR | CAPTURE) [--format openmetrics] [--since T]\n"
    "                        [--until T] [-o FILE]\n\n"
    "Write a recording (serve --record DIR) or a capture file as OpenMetrics text,\n"
    "for `promtool tsdb create-blocks-from openmetrics FILE DIR`.  Metric names and\n"
    "labels are those of /metrics; a value that did not change is repeated every\n"
    "2 minutes so PromQL finds it.\n\n"
    "Options:\n" REC_ARGS_HELP "  --format openmetrics       the only format (and the default)\n"
    "  -o, --output FILE          write to FILE instead of standard output\n"
    "  -h, --help                 this help\n\n"
    "Exit status: 0 written, 1 the recording cannot be read or written, 2 bad usage.\n";

enum {
	OPT_FORMAT = 1
};

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		REC_ARGS_OPTIONS,
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct export_opts eo = { 0 };
	struct xport *x = NULL;
	struct rec_args ra;
	const char *out = "-";
	char err[512] = "";
	int opt, rc = 1, r;
	FILE *f;

	rec_args_init(&ra);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		r = rec_args_option(&ra, "export", opt, optarg);
		if (r < 0)
			return 2;
		if (!r)
			continue;
		switch (opt) {
		case 'h':
			fputs(export_usage, stdout);
			return 0;
		case OPT_FORMAT:
			if (strcmp(optarg, "openmetrics")) {
				fprintf(stderr,
					"rocewatch export: --format: '%s' is not openmetrics\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			out = optarg;
			break;
		default:
			cli_bad_option("export", argv, optind);
			return 2;
		}
	}
	if (rec_args_finish(&ra, "export", argc, argv, optind))
		return 2;
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
	return rc;
}
