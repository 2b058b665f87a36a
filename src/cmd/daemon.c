// SPDX-License-Identifier: MIT
#include <errno.h>
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

static int replay_stat(struct daemon *d, bool *changed)
{
	struct stat st;

	if (stat(d->cfg->from, &st))
		return -errno;
	*changed = st.st_dev != d->replay_dev || st.st_ino != d->replay_ino ||
		   st.st_size != d->replay_size || st.st_mtim.tv_sec != d->replay_mtime.tv_sec ||
		   st.st_mtim.tv_nsec != d->replay_mtime.tv_nsec;
	d->replay_dev = st.st_dev;
	d->replay_ino = st.st_ino;
	d->replay_size = st.st_size;
	d->replay_mtime = st.st_mtim;
	return 0;
}

int daemon_init(struct daemon *d, struct rw_config *cfg, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->cfg = cfg;
	model_init(&d->m);
	pthread_mutex_init(&d->lock, NULL);
	d->stats.start_ns = real_ns();
	get_hostname(d->m.host, sizeof(d->m.host));

	if (cfg->from) {
		bool changed;
		int r = snapshot_open(cfg->from, &d->replay, err, errlen);

		if (r)
			return r;
		replay_stat(d, &changed);
		return 0;
	}
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

int daemon_add_hook(struct daemon *d, const struct daemon_hook *h)
{
	if (d->n_hooks >= DAEMON_MAX_HOOKS)
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

	if (d->replay)
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

static int replay_next(struct daemon *d)
{
	char err[512];
	bool changed = false;
	int r;

	if (replay_stat(d, &changed) == 0 && changed) {
		struct snapshot_file *nsf;

		/* The file was replaced: take the new one if it is valid, keep the old if not. */
		r = snapshot_open(d->cfg->from, &nsf, err, sizeof(err));
		if (r) {
			rw_log_once(LOG_LVL_ERROR, "replay",
				    "--from: %s (keeping the previous data)", err);
		} else {
			rw_log_once_reset("replay");
			snapshot_close(d->replay);
			d->replay = nsf;
			d->replay_pos = 0;
		}
	}
	r = snapshot_apply(d->replay, d->replay_pos, &d->m, err, sizeof(err));
	if (r) {
		rw_log_once(LOG_LVL_ERROR, "replay-apply", "--from: %s", err);
		return r;
	}
	/* --netdev-include/--netdev-exclude filter a replay as they filter the machine */
	if (d->cfg->has_netdev_include || d->cfg->has_netdev_exclude) {
		struct object **nds;
		size_t n = model_objects(&d->m, OBJ_NETDEV, &nds);

		model_begin(&d->m, OBJ_NETDEV);
		for (size_t i = 0; i < n; i++)
			nds[i]->seen = config_netdev_wanted(d->cfg, nds[i]->name);
		model_sweep(&d->m, OBJ_NETDEV);
	}
	/* --rdma-device-include/--rdma-device-exclude: likewise */
	if (d->cfg->has_rdma_include || d->cfg->has_rdma_exclude) {
		struct object **ps;
		size_t n = model_objects(&d->m, OBJ_RDMA_PORT, &ps);

		model_begin(&d->m, OBJ_RDMA_PORT);
		for (size_t i = 0; i < n; i++)
			ps[i]->seen = config_rdma_wanted(d->cfg, ps[i]->name);
		model_sweep(&d->m, OBJ_RDMA_PORT);
	}
	if (d->replay_pos + 1 < snapshot_count(d->replay))
		d->replay_pos++;
	return 0;
}

int daemon_collect(struct daemon *d, unsigned what)
{
	int64_t t0 = mono_ns(), now;
	int r = 0;

	pthread_mutex_lock(&d->lock);
	clock_gettime(CLOCK_REALTIME, &d->m.time);
	clock_gettime(CLOCK_MONOTONIC, &d->m.mono);
	if (d->replay) {
		r = replay_next(d);
		if (d->replay_live_time)
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
	snapshot_close(d->replay);
	pthread_mutex_destroy(&d->lock);
}
