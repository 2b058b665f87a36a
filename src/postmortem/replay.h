/* SPDX-License-Identifier: MIT */
/*
 * The rules run over a recording, poll by poll at the recorded times, and the
 * alert transitions they would have caused (`rocewatch replay`).
 */
#ifndef ROCEWATCH_REPLAY_H
#define ROCEWATCH_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"

struct replay_opts {
	const char *db;		/* recording directory or capture file */
	int64_t since_ms;	/* transitions in [since, until] are reported */
	int64_t until_ms;	/* (INT64_MIN / INT64_MAX: all) */
	struct rules_engine *e; /* the rules to run; the caller keeps it */
	int width;		/* text: columns to fit (0: PM_DEFAULT_WIDTH) */
};

struct replay;

/* Run the rules over the recording: 0, or -errno with err set.  *out is freed by replay_free. */
int replay_run(struct replay **out, const struct replay_opts *o, char *err, size_t errlen);
/* The transitions as text or JSON: 0 or -errno. */
int replay_write(const struct replay *rp, bool json, FILE *f);
/* The most severe alert that fired in the window: 0 none/info, 1 warning, 2 critical. */
int replay_worst_fired(const struct replay *rp);
/* Polls the rules could not evaluate (out of memory). */
int replay_eval_errors(const struct replay *rp);
void replay_free(struct replay *rp);

#endif
