/* SPDX-License-Identifier: MIT */
/*
 * The flags that say which recording and which window: --db DIR (or a
 * capture file as the one positional argument), --since, --until.  Shared by
 * report, replay and export so the three read and complain alike.
 */
#ifndef ROCEWATCH_REC_ARGS_H
#define ROCEWATCH_REC_ARGS_H

#include <stdint.h>

#include "cli.h"

struct rec_args {
	const char *cmd; /* in messages */
	const char *db;
	int64_t since_ms, until_ms; /* INT64_MIN / INT64_MAX when not given */
	int64_t now_ms;		    /* what relative times are relative to */
};

/* --db, --since, --until; base: struct rec_args. */
extern const struct cli_opt rec_args_opts[];

void rec_args_init(struct rec_args *a, const char *cmd);
/*
 * After cli_parse(): take the positional recording, refuse leftovers, a missing
 * recording and --since after --until.  0, or -EINVAL (printed).
 */
int rec_args_finish(struct rec_args *a, const char *cmd, int argc, char **argv, int optind_now);

#endif
