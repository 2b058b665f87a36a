/* SPDX-License-Identifier: MIT */
/*
 * serve's continuous probing (--probe.peers, --probe.interval): the peers'
 * probe info read over HTTP on a thread of its own (every 30 s, every 5 s
 * while one cannot be read), handed to the responder, whose thread sends
 * the probes; the roce_probe_* metrics through a daemon render hook.
 */
#ifndef ROCEWATCH_PROBE_SERVE_H
#define ROCEWATCH_PROBE_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "daemon.h"
#include "hostlist.h"
#include "probe_responder.h"

struct probe_serve {
	struct hostlist peers; /* "host:port" */
	int64_t interval_ns;
	struct probe_responder *r;    /* with peers */
	struct probe_responder *resp; /* serve --probe's, peers or not */
	pthread_t thr;
	bool running, stop, inited;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

void probe_serve_init(struct probe_serve *ps);
/* --probe.peers / --probe.interval; base: struct probe_serve (cli.h). */
extern const struct cli_opt probe_serve_opts[];
/* With peers: configure the responder (dscp from the profiles) before it runs. */
int probe_serve_setup(struct probe_serve *ps, struct probe_responder *r, int dscp);
/* The responder of serve --probe, before probe_serve_start(). */
void probe_serve_attach(struct probe_serve *ps, struct probe_responder *r);
/*
 * After the responder runs: with peers, the fetch thread; and *hook, the
 * daemon hook (the ports' notes after every poll, the roce_probe_* families)
 * serve adds (*n_hooks 1; 0 without a responder).  0 or -errno (printed).
 */
int probe_serve_start(struct probe_serve *ps, struct daemon_hook *hook, int *n_hooks);
/* Stop the thread and free; may be called again. */
void probe_serve_fini(struct probe_serve *ps);
/*
 * roce_dscp of the loaded profiles (the first that declares it); -ENOENT when
 * none does, -EINVAL when it is no DSCP (*bad, if given, names the profile).
 */
struct rules_engine;
int probe_profile_dscp(const struct rules_engine *e, int *dscp, const char **bad);

#endif
