// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "process.h"
#include "util.h"

struct daemon {
	struct rw_config *cfg;
	struct node_model m;
	pthread_mutex_t lock;	  /* the model, for HTTP render callbacks */
	struct model_source *src; /* owned: closed by daemon_close() */
	bool live_time;		  /* serve: a sample's time is the poll's, not the source's own */
	struct poll_stats stats;
	struct daemon_hook *hooks; /* daemon_reserve_hooks() */
	int n_hooks, max_hooks;
	/* rails and roles, derived after every collection (fabric.h) */
	struct fabric_config fabric;
	struct daemon_pass pass; /* the pass the hooks run in */
};

volatile sig_atomic_t rw_sig_stop, rw_sig_hup, rw_sig_usr1;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		rw_sig_hup = 1;
	else if (sig == SIGUSR1)
		rw_sig_usr1 = 1;
	else
		rw_sig_stop = 1;
}

void daemon_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the poll loop's wait must wake up on a signal. */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void get_hostname(char *buf, size_t len)
{
	if (gethostname(buf, len))
		strlcpy0(buf, "unknown", len);
	buf[len - 1] = '\0';
}

int daemon_open(struct daemon **out, struct rw_config *cfg, struct model_source *src)
{
	struct daemon *d = calloc(1, sizeof(*d));

	*out = d;
	if (!d) {
		src->close(src);
		return -ENOMEM;
	}
	d->cfg = cfg;
	d->src = src;
	model_init(&d->m);
	fabric_config_init(&d->fabric);
	pthread_mutex_init(&d->lock, NULL);
	d->stats.start_ns = real_ns();
	get_hostname(d->m.host, sizeof(d->m.host));
	return 0;
}

void daemon_set_live_time(struct daemon *d, bool on)
{
	d->live_time = on;
}

struct node_model *daemon_model_lock(struct daemon *d)
{
	pthread_mutex_lock(&d->lock);
	return &d->m;
}

void daemon_model_unlock(struct daemon *d)
{
	pthread_mutex_unlock(&d->lock);
}

struct node_model *daemon_model(struct daemon *d)
{
	return &d->m;
}

struct poll_stats *daemon_stats(struct daemon *d)
{
	return &d->stats;
}

bool daemon_started(const struct daemon *d)
{
	return d->stats.fast_polls > 0;
}

const struct rw_config *daemon_config(const struct daemon *d)
{
	return d->cfg;
}

const char *daemon_host(const struct daemon *d)
{
	return d->m.host;
}

const struct daemon_pass *daemon_pass(const struct daemon *d)
{
	return &d->pass;
}

int daemon_reserve_hooks(struct daemon *d, int n)
{
	free(d->hooks);
	d->n_hooks = d->max_hooks = 0;
	d->hooks = n ? calloc((size_t)n, sizeof(*d->hooks)) : NULL;
	if (n && !d->hooks)
		return -ENOMEM;
	d->max_hooks = n;
	return 0;
}

int daemon_add_hook(struct daemon *d, const struct daemon_hook *h)
{
	if (d->n_hooks >= d->max_hooks)
		return -ENOSPC;
	d->hooks[d->n_hooks++] = *h;
	return 0;
}

int daemon_start(struct daemon *d, char *err, size_t errlen)
{
	return d->src->start ? d->src->start(d->src, &d->m, err, errlen) : 0;
}

size_t daemon_samples(const struct daemon *d)
{
	return d->src->samples ? d->src->samples(d->src) : 0;
}

void daemon_running(const struct daemon *d, bool running[RW_MAX_COLLECTORS])
{
	memset(running, 0, RW_MAX_COLLECTORS * sizeof(*running));
	if (d->src->running)
		d->src->running(d->src, running);
}

int daemon_collect(struct daemon *d, unsigned what)
{
	return daemon_collect_at(d, what, 0);
}

int daemon_collect_at(struct daemon *d, unsigned what, int64_t origin_ns)
{
	int64_t t0 = mono_ns(), now;
	struct timespec poll_time;
	int r;

	pthread_mutex_lock(&d->lock);
	clock_gettime(CLOCK_REALTIME, &d->m.time);
	clock_gettime(CLOCK_MONOTONIC, &d->m.mono);
	poll_time = d->m.time;
	r = d->src->collect(d->src, &d->m, what);
	/*
	 * Ports to their netdevs, then rails and roles, read configuration:
	 * after a configuration poll, and after every poll of a source that
	 * sets every field again (a snapshot file, a recording)
	 */
	if ((what & COLLECT_SLOW) || !d->src->changed) {
		model_link_ports(&d->m);
		if (!d->src->derived)
			fabric_derive(&d->m, &d->fabric);
	}
	if (d->live_time)
		d->m.time = poll_time; /* the poll's time, not a snapshot's own */
	d->pass.origin_ns = origin_ns && origin_ns <= t0 ? origin_ns : t0;
	d->pass.model_ns = mono_ns();
	d->pass.all = (what & COLLECT_SLOW) || !d->src->changed;
	if (!d->pass.all)
		d->src->changed(d->src, d->pass.changed);
	for (int i = 0; i < d->n_hooks; i++)
		if (d->hooks[i].after_poll)
			d->hooks[i].after_poll(d->hooks[i].arg, &d->m, what);

	/* under the lock: /metrics is rendered by the HTTP thread, at scrape time */
	now = mono_ns();
	if (what & COLLECT_SLOW) {
		d->stats.slow_polls++;
		d->stats.last_slow_seconds = (double)(now - t0) / 1e9;
	}
	if (what & COLLECT_FAST) {
		d->stats.fast_polls++;
		d->stats.last_fast_seconds = (double)(now - t0) / 1e9;
	}
	__atomic_store_n(&d->stats.last_poll_ns, real_ns(), __ATOMIC_RELAXED);
	pthread_mutex_unlock(&d->lock);
	return r;
}

static void render_hooks(struct strbuf *sb, void *arg)
{
	struct daemon *d = arg;

	for (int i = 0; i < d->n_hooks; i++)
		if (d->hooks[i].render)
			d->hooks[i].render(sb, d->hooks[i].arg);
}

int daemon_render_metrics(struct daemon *d, struct prom_renderer *pr, struct strbuf *out)
{
	struct process_stats ps;
	struct prom_input in = {
		.proc = process_read_self(&ps) ? NULL : &ps,
		.m = &d->m,
		.stats = &d->stats,
		.ethtool_include = d->cfg->has_ethtool_include ? &d->cfg->ethtool_include : NULL,
		.extra = render_hooks,
		.extra_arg = d,
	};

	return prom_render(pr, out, &in);
}

int daemon_event_fds(struct daemon *d, int *fds, int *idx, int max)
{
	return d->src->event_fds ? d->src->event_fds(d->src, fds, idx, max) : 0;
}

bool daemon_event(struct daemon *d, int idx)
{
	return d->src->event(d->src, idx);
}

void daemon_swap_fabric(struct daemon *d, struct fabric_config *fc)
{
	fabric_config_free(&d->fabric);
	d->fabric = *fc;
	fabric_config_init(fc);
}

void daemon_set_fabric(struct daemon *d, struct fabric_config *fc)
{
	pthread_mutex_lock(&d->lock);
	daemon_swap_fabric(d, fc);
	pthread_mutex_unlock(&d->lock);
}

int daemon_event_pass(struct daemon *d, int idx, int64_t received_ns)
{
	struct daemon_event ev = { .changed = d->pass.changed };
	int r;

	if (!d->src->refresh)
		return 1;
	pthread_mutex_lock(&d->lock);
	d->pass.all = false;
	r = d->src->refresh(d->src, &d->m, idx, d->pass.changed);
	if (r) {
		pthread_mutex_unlock(&d->lock);
		return r;
	}
	model_link_ports(&d->m);
	if (!d->src->derived)
		fabric_derive(&d->m,
			      &d->fabric); /* a port's state and address are what roles read */
	d->pass.origin_ns = received_ns;
	d->pass.model_ns = mono_ns();
	ev.t_ns = real_ns();
	ev.collector = idx >= 0 && idx < RW_MAX_COLLECTORS ? d->m.coll[idx].name : "";
	for (int i = 0; i < d->n_hooks; i++)
		if (d->hooks[i].after_event)
			d->hooks[i].after_event(d->hooks[i].arg, &d->m, &ev);
	d->stats.event_passes++;
	pthread_mutex_unlock(&d->lock);
	return 0;
}

void daemon_close(struct daemon *d)
{
	if (!d)
		return;
	/* Objects first: their per-collector state is freed by obj_free, not the source's close. */
	model_free(&d->m);
	if (d->src)
		d->src->close(d->src);
	free(d->hooks);
	fabric_config_free(&d->fabric);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
