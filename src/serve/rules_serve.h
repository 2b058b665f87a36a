/* SPDX-License-Identifier: MIT */
/*
 * The rule engine inside `serve`: loads the profiles at start-up, evaluates
 * them after every poll (a daemon hook), appends the results to /metrics,
 * serves /api/v1/checks, and reloads the rule files on SIGHUP (a failed
 * reload keeps the old rules and says so in the log and in
 * rocewatch_rules_reload_success).
 */
#ifndef ROCEWATCH_RULES_SERVE_H
#define ROCEWATCH_RULES_SERVE_H

#include <pthread.h>

#include "prom_rules.h"
#include "engine.h"
#include "cli.h"
#include "daemon.h"

struct rules_serve {
	struct rules_spec spec;
	const char *rail_map; /* --rail-map */
	struct rules_engine *e;
	struct prom_rules_state st;
	struct daemon *d;
	bool announced;
	/* monotonic: when the last pass's evaluation ended (the rule_evaluated stage) */
	int64_t eval_done_ns;
	bool reset_api; /* --web.enable-health-api */
	/* SIGHUP reloads so far, and the first error of the last one that failed */
	uint64_t reloads;
	/* engines loaded (start-up, reloads that worked): e changed when this did (the model lock)
	 */
	uint64_t loads;
	char reload_error[512];
	/*
	 * A reload parses on a thread of its own, so that no rule file, however
	 * large, delays a poll; it swaps the engine under the daemon's lock.
	 */
	pthread_mutex_t rl_lock; /* the three flags below */
	pthread_t rl_thr;
	bool rl_running, rl_again, rl_joinable;
	/* health memory: DIR/health.state, "" without one */
	char state_path[4096];
	char boot_id[40];
	int64_t state_saved_ns; /* monotonic: last save */
	int state_err;		/* last write's -errno, said once (the writer's) */
	int lock_fd;		/* DIR/health.state.lock, flock()ed: one serve per DIR */
	bool locked;		/* lock_fd is open */
	/*
	 * The memory is serialized under the model lock (memory only) and
	 * written by a thread of its own: no disk, however slow, and nothing
	 * planted in the state directory ever holds the lock or a poll.
	 */
	pthread_mutex_t wr_lock; /* what follows */
	pthread_cond_t wr_cond;
	pthread_t wr_thr;
	bool wr_started, wr_pending, wr_stop, wr_busy;
	struct strbuf wr_buf;  /* the newest text, waiting for the writer */
	struct strbuf ser_buf; /* the poll thread's, swapped with wr_buf */
};

/* --profile / --param; base: struct rules_serve (cli.h). */
extern const struct cli_opt rules_serve_opts[];
/*
 * The rails-and-roles configuration of engine e and the --rail-map file
 * (NULL: none) handed to the daemon for its next polls.  0, or -errno with err.
 */
int rules_fabric_setup(const struct rules_engine *e, const char *rail_map, struct daemon *d,
		       char *err, size_t errlen);
/* Load the rules for daemon d; errors are printed. 0 or -errno. */
int rules_serve_start(struct rules_serve *rs, struct daemon *d);
/* The daemon hook that runs them (after every poll, in event passes): serve adds it. */
struct daemon_hook rules_serve_hook(struct rules_serve *rs);
/*
 * SIGHUP: load the files again on the reload thread (another SIGHUP meanwhile
 * makes it load once more); keep the old rules if that fails.
 */
void rules_serve_reload(struct rules_serve *rs);
/* Wait for a reload in progress; before the daemon goes (the reload takes its lock). */
void rules_serve_stop(struct rules_serve *rs);
/* GET /api/v1/checks (an http_route render callback; arg is the rules_serve). */
int rules_serve_render_checks(void *arg, struct strbuf *out);
/* DIR/health.state.lock, flock()ed: 0 with *fd, -EBUSY with the holder's pid, -errno. */
int rules_state_lock(const char *dir, int *fd, char *holder, size_t len);
/* POST /api/v1/health/reset?rule=R&object=O (an http_route render_args callback). */
struct http_args;
int rules_serve_render_reset(void *arg, const struct http_args *a, struct strbuf *out);
void rules_serve_fini(struct rules_serve *rs);

#endif
