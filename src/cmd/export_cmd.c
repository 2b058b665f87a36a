// SPDX-License-Identifier: MIT
/* rocewatch export: flags and output around src/postmortem/export.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "export.h"
#include "rec_args.h"

struct export_args {
	struct rec_args ra;
	const char *out;
};

static int opt_format(void *base, const char *name, const char *arg)
{
	(void)base;
	(void)name;
	if (strcmp(arg, "openmetrics")) {
		fprintf(stderr, "rocewatch export: --format: '%s' is not openmetrics\n", arg);
		return -EINVAL;
	}
	return 0;
}

static const struct cli_opt export_opts[] = {
	{ .name = "format",
	  .kind = CLI_CALL,
	  .fn = opt_format,
	  .usage = "  --format openmetrics       the only format (and the default)\n" },
	{ .name = "output",
	  .short_name = 'o',
	  .kind = CLI_STRING,
	  CLI_AT(struct export_args, out),
	  .usage = "  -o, --output FILE          write to FILE instead of standard output\n" },
	{ .name = "help",
	  .short_name = 'h',
	  .kind = CLI_HELP,
	  .usage = "  -h, --help                 this help\n" },
	{ 0 },
};

const struct cli_cmd export_cli = {
	.name = "export",
	.head = "Usage: rocewatch export (--db DIR | CAPTURE) [--format openmetrics] [--since T]\n"
		"                        [--until T] [-o FILE]\n\n"
		"Write a recording (serve --record DIR) or a capture file as OpenMetrics text,\n"
		"for `promtool tsdb create-blocks-from openmetrics FILE DIR`.  Metric names and\n"
		"labels are those of /metrics; a value that did not change is repeated every\n"
		"2 minutes so PromQL finds it.\n\n"
		"Options:\n",
	.tail =
	    "\nExit status: 0 written, 1 the recording cannot be read or written, 2 bad usage.\n",
	.tables = { rec_args_opts, export_opts },
};

int cmd_export(int argc, char **argv)
{
	struct export_args ea = { .out = "-" };
	struct export_opts eo = { 0 };
	struct xport *x = NULL;
	struct rec_args *ra = &ea.ra;
	const char *out;
	char err[512] = "";
	int rc = 1, r, first;
	FILE *f;

	rec_args_init(ra, "export");
	r = cli_parse(&export_cli, (void *const[]){ ra, &ea }, argc, argv, &first);
	if (r)
		return r == 1 ? 0 : 2;
	if (rec_args_finish(ra, "export", argc, argv, first))
		return 2;
	out = ea.out;
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
	return rc;
}
