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

/* A parameter the replay runs with, and where its value came from. */
struct replay_param {
	char profile[64], name[64], value[256];
	/*
	 * "--param" (replay's), "serve --param" (recorded: serve was given it),
	 * "recording" (recorded: the declared value serve ran), "profile" (the
	 * declared value today; the recording does not say)
	 */
	const char *from;
};

/* Which rules a replay runs (replay_rules.c), and the lines that say why. */
struct replay_rules {
	struct rules_engine *e;
	bool recorded; /* the recording said which rules serve ran */
	/*
	 * Where the rules and their values come from, one line each: what serve
	 * ran, then whatever differs (flags, changed files, a reload).
	 */
	char **notes;
	size_t n_notes;
	bool plain_first; /* notes[0] says only that they are serve's, as recorded */
	struct replay_param *params;
	size_t n_params;
};

/*
 * Load the rules to replay recording db with: the profiles and parameters the
 * recording says serve ran at the window's start (since_ms, INT64_MIN for
 * its first poll; the set in force then), with the profiles of user, when it
 * names any, instead of the recorded ones, and its --param over any value.
 * Diagnostics of the load go to dg.  0, or -errno with err set (or, when the
 * rules do not load, dg).
 */
int replay_rules_load(struct replay_rules *out, const char *db, const struct rules_spec *user,
		      int64_t since_ms, int64_t until_ms, struct rules_diags *dg, char *err,
		      size_t errlen);
void replay_rules_free(struct replay_rules *rr);

struct replay_opts {
	const char *db;		/* recording directory or capture file */
	int64_t since_ms;	/* transitions in [since, until] are reported */
	int64_t until_ms;	/* (INT64_MIN / INT64_MAX: all) */
	struct rules_engine *e; /* the rules to run; the caller keeps it */
	/* where they come from (notes and parameters in the output), or NULL */
	const struct replay_rules *rules;
	int width; /* text: columns to fit (0: PM_DEFAULT_WIDTH) */
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
