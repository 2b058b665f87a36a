// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"
#include "process.h"
#include "util.h"
#include "vendors.h"

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

int daemon_init(struct daemon *d, struct rw_config *cfg, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->cfg = cfg;
	model_init(&d->m);
	pthread_mutex_init(&d->lock, NULL);
	d->stats.start_ns = real_ns();
	get_hostname(d->m.host, sizeof(d->m.host));

	if (cfg->from)
		return snapshot_source_open(&d->src, cfg, err, errlen);
	for (int i = 0; i < n_collectors; i++) {
		const struct collector *c = collectors[i];
		struct collector_status *cs = &d->m.coll[i];

		strlcpy0(cs->name, c->name, sizeof(cs->name));
		d->c_on[i] = cfg->collector_enable[i] < 0 ? c->default_enabled
							  : cfg->collector_enable[i] > 0;
		cs->enabled = d->c_on[i];
		d->cc[i].cfg = cfg;
		d->cc[i].idx = i;
		d->m.obj_free_cb[i] = c->obj_free;
	}
	return 0;
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

/*
 * Start (or retry) a collector; a failed start is retried with backoff.
 * warn: log the failure (once); daemon_start() reports it itself instead.
 */
static bool collector_ready(struct daemon *d, int i, int64_t now, bool warn)
{
	const struct collector *c = collectors[i];
	struct collector_status *cs = &d->m.coll[i];
	int r;

	if (d->c_ready[i])
		return true;
	if (now < d->c_retry_ns[i])
		return false;
	d->cc[i].detail[0] = '\0';
	r = c->init ? c->init(&d->cc[i]) : 0;
	if (!r) {
		d->c_ready[i] = true;
		return true;
	}
	if (c->fini)
		c->fini(&d->cc[i]);
	cs->err = r;
	cs->ran = true;
	cs->failures++;
	strlcpy0(cs->detail, d->cc[i].detail[0] ? d->cc[i].detail : strerror(-r),
		 sizeof(cs->detail));
	if (warn)
		rw_log_once(LOG_LVL_WARN, c->name, "%s: cannot start: %s", c->name, cs->detail);
	d->c_retry_ns[i] = now + (int64_t)60e9;
	return false;
}

int daemon_start(struct daemon *d, char *err, size_t errlen)
{
	int64_t now = mono_ns();

	if (d->src)
		return 0;
	/*
	 * Those asked for by name first: failing to start is the user's error
	 * to see now, in one line, before anything else has started or logged.
	 */
	for (int i = 0; i < n_collectors; i++) {
		if (!d->c_on[i] || d->cfg->collector_enable[i] <= 0 ||
		    collector_ready(d, i, now, false))
			continue;
		snprintf(err, errlen, "%s: cannot start: %s", collectors[i]->name,
			 d->m.coll[i].detail);
		return d->m.coll[i].err < 0 ? d->m.coll[i].err : -EIO;
	}
	for (int i = 0; i < n_collectors; i++)
		if (d->c_on[i])
			collector_ready(d, i, now, true);
	return 0;
}

static void run_collector(struct daemon *d, int i, unsigned what)
{
	const struct collector *c = collectors[i];
	struct collector_status *cs = &d->m.coll[i];
	int64_t t0 = mono_ns(), t1;
	int r;

	d->cc[i].detail[0] = '\0';
	r = c->collect(&d->cc[i], &d->m, what);
	t1 = mono_ns();
	cs->duration = (double)(t1 - t0) / 1e9;
	cs->ran = true;
	cs->err = r;
	if (!r) {
		if (cs->failures)
			log_info("%s: collecting again", c->name);
		cs->failures = 0;
		cs->detail[0] = '\0';
		rw_log_once_reset(c->name);
		return;
	}
	strlcpy0(cs->detail, d->cc[i].detail[0] ? d->cc[i].detail : strerror(-r),
		 sizeof(cs->detail));
	/* What it filled last time is not true now, and backing off keeps it from refilling. */
	collector_blank(c, &d->m, r);
	cs->failures++;
	/* Back off a source that keeps failing: 2, 4, 8 ... polls, at most 60 s. */
	{
		int shift = cs->failures < 6 ? (int)cs->failures : 6;
		int64_t delay = d->cfg->interval_ns << shift;

		if (delay > (int64_t)60e9)
			delay = (int64_t)60e9;
		d->c_retry_ns[i] = t1 + delay;
	}
	rw_log_once(LOG_LVL_WARN, c->name, "%s: %s (backing off; said once)", c->name, cs->detail);
}

size_t daemon_samples(const struct daemon *d)
{
	return d->src ? d->src->samples(d->src) : 0;
}

int daemon_collect(struct daemon *d, unsigned what)
{
	int64_t t0 = mono_ns(), now;
	int r = 0;

	pthread_mutex_lock(&d->lock);
	clock_gettime(CLOCK_REALTIME, &d->m.time);
	clock_gettime(CLOCK_MONOTONIC, &d->m.mono);
	if (d->src) {
		r = d->src->collect(d->src, &d->m, what);
		if (d->live_time)
			clock_gettime(CLOCK_REALTIME, &d->m.time);
	} else {
		now = mono_ns();
		for (int i = 0; i < n_collectors; i++) {
			if (!d->c_on[i] || !collector_ready(d, i, now, true))
				continue;
			if (d->m.coll[i].failures && now < d->c_retry_ns[i])
				continue;
			run_collector(d, i, what);
		}
		if (what & COLLECT_SLOW)
			model_link_ports(&d->m);
		/* pause counters from dcbnl where the driver has no names of its own */
		vendor_fill_netdevs(&d->m);
	}
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

struct hooks_arg {
	struct daemon *d;
};

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
	int n = 0;

	for (int i = 0; i < n_collectors && n < max; i++) {
		int fd;

		if (!d->c_ready[i] || !collectors[i]->event_fd)
			continue;
		fd = collectors[i]->event_fd(&d->cc[i]);
		if (fd < 0)
			continue;
		fds[n] = fd;
		idx[n++] = i;
	}
	return n;
}

bool daemon_event(struct daemon *d, int idx)
{
	return collectors[idx]->event(&d->cc[idx]) > 0;
}

void daemon_fini(struct daemon *d)
{
	/* Objects first: their per-collector state is freed by obj_free, not fini. */
	model_free(&d->m);
	for (int i = 0; i < n_collectors; i++)
		if (d->c_ready[i] && collectors[i]->fini)
			collectors[i]->fini(&d->cc[i]);
	if (d->src)
		d->src->close(d->src);
	d->src = NULL;
	free(d->hooks);
	d->hooks = NULL;
	d->n_hooks = d->max_hooks = 0;
	pthread_mutex_destroy(&d->lock);
}
