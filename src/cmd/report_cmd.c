// SPDX-License-Identifier: MIT
/* rocewatch report: flags and output around the analysis in src/postmortem/report.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "term.h"
#include "commands.h"
#include "rec_args.h"
#include "report.h"

enum {
	FMT_TEXT,
	FMT_JSON,
	FMT_SVG
};

/*
 * Is what was asked for in the recording?  A --device it never saw and a
 * window without a poll are errors naming what the recording does hold.
 */
static bool in_recording(const struct report *rp, const struct report_opts *ro)
{
	const struct rec_reader *rd = &rp->rd;
	char a[40], b[40], devs[512] = "";
	size_t n = 0;
	bool found = false;

	if (!rp->n_window_polls) {
		rep_time(rd->first_ms, true, a, sizeof(a));
		rep_time(rd->last_ms, true, b, sizeof(b));
		fprintf(stderr,
			"rocewatch report: %s: no poll in the window asked for (--since/--until); "
			"the recording holds %s .. %s\n",
			ro->db, a, b);
		return false;
	}
	if (!ro->device)
		return true;
	for (size_t i = 0; i < rd->n_series && !found; i++) {
		const struct rec_series *s = &rd->series[i];

		if (s->used && (!strcmp(s->device, ro->device) ||
				(s->kind == OBJ_RDMA_PORT && !strcmp(s->netdev, ro->device))))
			found = true;
	}
	if (found)
		return true;
	for (size_t i = 0; i < rd->n_series; i++) {
		const struct rec_series *s = &rd->series[i];
		bool dup = false;

		if (!s->used || !s->device[0])
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = rd->series[j].used && !strcmp(rd->series[j].device, s->device);
		if (dup || strlen(devs) + strlen(s->device) + 8 > sizeof(devs))
			continue;
		snprintf(devs + strlen(devs), sizeof(devs) - strlen(devs), "%s%s", n++ ? ", " : "",
			 s->device);
	}
	fprintf(stderr, "rocewatch report: %s: no device '%s' in the recording (it has: %s)\n",
		ro->db, ro->device, n ? devs : "none");
	return false;
}

struct report_args {
	struct rec_args ra;
	const char *device, *out;
	int fmt;
};

static const char *const report_formats[] = { "text", "json", "svg", NULL }; /* FMT_* */

static const struct cli_opt report_opts[] = {
	{ .name = "device",
	  CLI_STRING_AT(struct report_args, device),
	  .metavar = "D",
	  .help = "only this netdev, RDMA device, or ports bound to it" },
	{ .name = "format",
	  CLI_CHOICE_AT(struct report_args, fmt, report_formats),
	  .metavar = "text|json|svg",
	  .help = "text (default), json, or svg (rates over time)" },
	{ .name = "",
	  .short_name = 'j',
	  CLI_SET_AT(struct report_args, fmt, FMT_JSON),
	  .help = "same as --format json" },
	CLI_OPT_OUTPUT(struct report_args, out),
	CLI_OPT_HELP,
	{ 0 },
};

const struct cli_cmd report_cli = {
	.name = "report",
	.synopsis = "(--db DIR | CAPTURE) [--since T] [--until T]\n"
		    "[--device D] [--format text|json|svg] [-o FILE]",
	.head = "What moved in a recording (serve --record DIR) or a capture file, per device and\n"
		"priority: pause frames and time paused, pause storms, transport retries,\n"
		"out-of-sequence, CNPs, discards, link flaps, configuration changes and alerts,\n"
		"each with when it started and ended, how much, and its peak rate and when.\n\n"
		"Options:\n",
	.tail = "\nExit status: 0 report written, 1 the recording cannot be read or does not hold\n"
		"what was asked (a --device it never saw, a window without a poll), 2 bad usage.\n",
	.tables = { CLI_SUB(rec_args_opts, struct report_args, ra), CLI_TABLE(report_opts) },
};

int cmd_report(int argc, char **argv)
{
	struct report_args a = { .out = "-", .fmt = FMT_TEXT };
	struct report rp = { 0 };
	struct report_opts ro = { 0 };
	struct rec_args *ra = &a.ra;
	const char *out;
	int fmt, rc = 1, r, first;
	char err[512] = "";
	FILE *f;

	rec_args_init(ra, "report");
	r = cli_parse(&report_cli, &a, argc, argv, &first);
	if (r)
		return r == 1 ? 0 : 2;
	if (rec_args_finish(ra, "report", argc, argv, first))
		return 2;
	out = a.out;
	fmt = a.fmt;
	ro.device = a.device;
	ro.db = ra->db;
	ro.since_ms = ra->since_ms;
	ro.until_ms = ra->until_ms;
	ro.now_ms = ra->now_ms;
	ro.progress = isatty(STDERR_FILENO) && !getenv("ROCEWATCH_NO_PROGRESS");
	/* the text fits COLUMNS, else the terminal's width, else 80 (as check's) */
	ro.width = term_width(stdout);
	r = report_build(&rp, &ro, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch report: %s\n", err);
		goto free_report;
	}
	/* "nothing moved" must mean nothing moved, not "nothing was there to look at" */
	if (!in_recording(&rp, &ro))
		goto free_report;
	f = cli_open_output("report", out);
	if (!f)
		goto free_report;
	r = fmt == FMT_SVG ? report_svg(&rp, f) : report_write(&rp, fmt == FMT_JSON, f);
	if (r == -ENOMEM)
		fprintf(stderr, "rocewatch report: out of memory\n");
	if (!cli_close_output("report", out, f) && !r)
		rc = 0;
free_report:
	report_free(&rp);
	return rc;
}
