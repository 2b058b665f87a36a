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

static const char report_usage[] =
    "Usage: rocewatch report (--db DIR | CAPTURE) [--since T] [--until T]\n"
    "                        [--device D] [--format text|json|svg] [-o FILE]\n\n"
    "What moved in a recording (serve --record DIR) or a capture file, per device and\n"
    "priority: pause frames and time paused, pause storms, transport retries,\n"
    "out-of-sequence, CNPs, discards, link flaps, configuration changes and alerts,\n"
    "each with when it started and ended, how much, and its peak rate and when.\n\n"
    "Options:\n" REC_ARGS_HELP
    "  --device D                 only this netdev, RDMA device, or ports bound to it\n"
    "  --format text|json|svg     text (default), json, or svg (rates over time)\n"
    "  -j                         same as --format json\n"
    "  -o, --output FILE          write to FILE instead of standard output\n"
    "  -h, --help                 this help\n\n"
    "Exit status: 0 report written, 1 the recording cannot be read or does not hold\n"
    "what was asked (a --device it never saw, a window without a poll), 2 bad usage.\n";

enum {
	FMT_TEXT,
	FMT_JSON,
	FMT_SVG
};

enum {
	OPT_DEVICE = 1,
	OPT_FORMAT
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

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		REC_ARGS_OPTIONS,
		{ "device", required_argument, NULL, OPT_DEVICE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report rp = { 0 };
	struct report_opts ro = { 0 };
	struct rec_args ra;
	const char *out = "-";
	int fmt = FMT_TEXT, opt, rc = 1, r;
	char err[512] = "";
	FILE *f;

	rec_args_init(&ra);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hjo:", opts, NULL)) != -1) {
		r = rec_args_option(&ra, "report", opt, optarg);
		if (r < 0)
			return 2;
		if (!r)
			continue;
		switch (opt) {
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		case OPT_DEVICE:
			ro.device = optarg;
			break;
		case 'j':
			fmt = FMT_JSON;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "text"))
				fmt = FMT_TEXT;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "svg"))
				fmt = FMT_SVG;
			else {
				fprintf(
				    stderr,
				    "rocewatch report: --format: '%s' is not text, json or svg\n",
				    optarg);
				return 2;
			}
			break;
		case 'o':
			out = optarg;
			break;
		default:
			cli_bad_option("report", argv, optind);
			return 2;
		}
	}
	if (rec_args_finish(&ra, "report", argc, argv, optind))
		return 2;
	ro.db = ra.db;
	ro.since_ms = ra.since_ms;
	ro.until_ms = ra.until_ms;
	ro.now_ms = ra.now_ms;
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
