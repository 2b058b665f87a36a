/* SPDX-License-Identifier: MIT */
/*
 * The collection engine shared by every command: asks its model source
 * (model_source.h: this machine's collectors or a snapshot file, it does not
 * know which) for the node model once per poll, under the model lock, and
 * times the polls; `serve` drives the fast and slow loops.  Consumers of the
 * model (rules, recorder, exporters) hook in after each poll; they never
 * call collectors or sources themselves.
 */
#ifndef ROCEWATCH_DAEMON_H
#define ROCEWATCH_DAEMON_H

#include <signal.h>
#include <stdbool.h>

#include "poll_stats.h"
#include "prom.h"
#include "config.h"
#include "fabric.h"
#include "model.h"
#include "model_source.h"
#include "snapshot.h"

/* An event pass: what a kernel notification made the source re-read (daemon_event_pass()). */
struct daemon_event {
	int64_t t_ns;	       /* CLOCK_REALTIME of the pass: the time its results carry */
	const bool *changed;   /* [F__COUNT]: the fields re-read */
	const char *collector; /* whose notification */
};

struct daemon_hook {
	const char *name;
	/* Called with the model lock held, after every poll. */
	void (*after_poll)(void *arg, struct node_model *m, unsigned what);
	/* Optional, with the model lock held: after an event pass (no counter was read). */
	void (*after_event)(void *arg, struct node_model *m, const struct daemon_event *ev);
	/* Append exposition families (rendered with the lock held). */
	void (*render)(struct strbuf *sb, void *arg);
	void *arg;
};

/*
 * The pass the hooks run in (daemon_pass(), read under the model lock):
 * where its fault was seen, monotonic ns (the notification's arrival, or
 * the poll's start), and when the model held it -- the first stages of
 * rocewatch_alert_latency_seconds; and what it may have changed:
 * changed[f] for every field the source wrote (a poll) or re-read (an
 * event pass); all of them when all (a configuration poll, or a source
 * that cannot tell).
 */
struct daemon_pass {
	int64_t origin_ns, model_ns;
	bool all;
	bool changed[F__COUNT];
};

/* Opaque (daemon.c): the other rooms ask it through the functions below. */
struct daemon;

/*
 * Take fc's rails-and-roles configuration (the profiles' roles, rail_source
 * and the --rail-map file) for the next polls; fc is left initialised.
 */
void daemon_set_fabric(struct daemon *d, struct fabric_config *fc);

/* Signals: the only mutable globals (set by handlers, read by the loop). */
extern volatile sig_atomic_t rw_sig_stop, rw_sig_hup, rw_sig_usr1;
void daemon_install_signals(void);

/*
 * A daemon over src (model_source_open()), which it owns from now on:
 * daemon_close() closes it, and so does a failure here.  0 or -ENOMEM.
 */
int daemon_open(struct daemon **out, struct rw_config *cfg, struct model_source *src);
/* serve: a sample's time is the poll's, not the source's own (a snapshot file's). */
void daemon_set_live_time(struct daemon *d, bool on);
/*
 * The model, with its lock taken: HTTP render callbacks and threads other
 * than the poll loop read it so; hooks already hold it.  daemon_model_unlock()
 * gives it back.
 */
struct node_model *daemon_model_lock(struct daemon *d);
void daemon_model_unlock(struct daemon *d);
/*
 * The model without taking the lock: for a caller that holds it already
 * (a hook, a callback of one) or that is the only thread (check, snapshot).
 */
struct node_model *daemon_model(struct daemon *d);
/*
 * The poll statistics: read and written under the model lock, but for
 * last_poll_ns (atomic: the health check reads it without the lock).
 */
struct poll_stats *daemon_stats(struct daemon *d);
/* A fast poll has run: the model holds counters (under the model lock). */
bool daemon_started(const struct daemon *d);
const struct rw_config *daemon_config(const struct daemon *d);
/* This machine's name, as the model carries it (set once, read without the lock). */
const char *daemon_host(const struct daemon *d);
/* In a hook: the pass it runs in. */
const struct daemon_pass *daemon_pass(const struct daemon *d);
/* daemon_set_fabric() for a caller that holds the model lock (a reload). */
void daemon_swap_fabric(struct daemon *d, struct fabric_config *fc);
/*
 * Start the source now, before the first poll.  For this machine's
 * collectors: one the user enabled by name (--collector.NAME) that cannot
 * start is an error: -errno, err says which and why; default-enabled ones
 * that cannot start are logged once and retried every 60 s.
 */
int daemon_start(struct daemon *d, char *err, size_t errlen);
/*
 * How many samples the model's source holds: 0 for this machine's
 * collectors (as many as polled), N for a snapshot file of N.
 */
size_t daemon_samples(const struct daemon *d);
/* running[i]: collector i of the table has started (all false for a snapshot file). */
void daemon_running(const struct daemon *d, bool running[RW_MAX_COLLECTORS]);
/*
 * One pass (COLLECT_FAST and/or COLLECT_SLOW): the source's 0 or -errno.
 * Runs the hooks, also after a failed pass.
 */
int daemon_collect(struct daemon *d, unsigned what);
/* The same for a poll a notification asked for: origin_ns (monotonic) is when it arrived. */
int daemon_collect_at(struct daemon *d, unsigned what, int64_t origin_ns);
/*
 * Room for exactly n hooks (serve sizes it from its pipeline table), before
 * any is added: 0 or -ENOMEM.  daemon_add_hook() beyond it is -ENOSPC.
 */
int daemon_reserve_hooks(struct daemon *d, int n);
int daemon_add_hook(struct daemon *d, const struct daemon_hook *h);
/* Render /metrics from the model (lock held by the caller). */
int daemon_render_metrics(struct daemon *d, struct prom_renderer *pr, struct strbuf *out);
/* Safe on NULL. */
void daemon_close(struct daemon *d);

/* How many event fds the source has (none for a snapshot file); fills fds/idx (up to max). */
int daemon_event_fds(struct daemon *d, int *fds, int *idx, int max);
/* Drain notification idx's events; true when configuration must be re-read. */
bool daemon_event(struct daemon *d, int idx);
/*
 * After daemon_event(idx) said so: the event pass.  The source re-reads the
 * facts the notification may have changed (configuration only) and the
 * hooks' after_event run under the lock -- the rules that read those facts,
 * then the alerts -- before the next poll, which it does not count or move.
 * received_ns: monotonic, when the notification arrived.  0; 1 when it
 * cannot be done that way (objects came or went, or the source re-reads
 * only whole polls): poll configuration now; -errno.
 */
int daemon_event_pass(struct daemon *d, int idx, int64_t received_ns);

#endif
