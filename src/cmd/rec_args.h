/* SPDX-License-Identifier: MIT */
/*
 * The flags that say which recording and which window: --db DIR (or a
 * capture file as the one positional argument), --since, --until.  Shared by
 * report, replay and export so the three read and complain alike.
 */
#ifndef ROCEWATCH_REC_ARGS_H
#define ROCEWATCH_REC_ARGS_H

#include <getopt.h>
#include <stdint.h>

enum {
	OPT_REC_DB = 3000, /* clear of every command's own option ids */
	OPT_REC_SINCE,
	OPT_REC_UNTIL,
};

#define REC_ARGS_OPTIONS                                         \
	{ "db", required_argument, NULL, OPT_REC_DB },           \
	    { "since", required_argument, NULL, OPT_REC_SINCE }, \
	{                                                        \
		"until", required_argument, NULL, OPT_REC_UNTIL  \
	}

#define REC_ARGS_HELP                                                                        \
	"  --db DIR                   the recording directory (or its rocewatch.db)\n"       \
	"  --since T, --until T       the window: RFC 3339 (2026-12-02T10:00:00Z, or with\n" \
	"                             an offset), 'now', or relative to now (-10m, -1h)\n"

struct rec_args {
	const char *db;
	int64_t since_ms, until_ms; /* INT64_MIN / INT64_MAX when not given */
	int64_t now_ms;		    /* what relative times are relative to */
};

void rec_args_init(struct rec_args *a);
/* One of the options above: 0 taken, 1 not one of ours, -EINVAL (printed). */
int rec_args_option(struct rec_args *a, const char *cmd, int opt, const char *arg);
/*
 * After getopt: take the positional recording, refuse leftovers, a missing
 * recording and --since after --until.  0, or -EINVAL (printed).
 */
int rec_args_finish(struct rec_args *a, const char *cmd, int argc, char **argv, int optind_now);

#endif
