// SPDX-License-Identifier: MIT
/*
 * The daemon and its model sources.  A fake source: the daemon asks it once
 * per poll and does not know what it is; the hooks run after it, in the
 * order added, also after a failed poll; the hook array holds what was
 * reserved and says so past it; a source's samples are what
 * daemon_samples() says.  The live source over a fake collector table and
 * a fake clock (no test here waits on the machine): a collector that cannot
 * start is retried after 60 s and not before; one whose collect() fails is
 * backed off 2, 4, 8 ... polls, at most 60 s, and collects every poll again
 * once it succeeds; one enabled by name that cannot start fails
 * daemon_start() with its name, before any other collector starts.  An
 * event pass re-reads only the sources a notification names, configuration
 * only, runs the hooks' after_event with those sources' fields marked, and
 * counts no poll; one where objects came or went asks for a poll instead.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector.h"
#include "daemon.h"
#include "util.h"

#define SEC 1000000000LL

static const char *snap = "good.json";

struct fake {
	struct model_source src;
	int polls, fail_at;
	size_t samples;
	char order[16];
	int n_order;
};

static int fake_collect(struct model_source *src, struct node_model *m, unsigned what)
{
	struct fake *f = (struct fake *)src;

	(void)what;
	f->polls++;
	m->time.tv_sec = 1000 + f->polls; /* the source's own time */
	f->order[f->n_order++] = 's';
	return f->polls == f->fail_at ? -EIO : 0;
}

static size_t fake_samples(const struct model_source *src)
{
	return ((const struct fake *)src)->samples;
}

static void fake_close(struct model_source *src)
{
	struct fake *f = (struct fake *)src;

	f->order[f->n_order++] = 'x';
}

static void hook_a(void *arg, struct node_model *m, unsigned what)
{
	struct fake *f = arg;

	(void)m;
	(void)what;
	f->order[f->n_order++] = 'a';
}

static void hook_b(void *arg, struct node_model *m, unsigned what)
{
	struct fake *f = arg;

	(void)m;
	(void)what;
	f->order[f->n_order++] = 'b';
}

/* A daemon over the fake source f (not a snapshot file, not the collectors). */
static void daemon_on(struct daemon **d, struct rw_config *cfg, struct fake *f)
{
	char err[256] = "";

	config_defaults(cfg);
	*f = (struct fake){ .src = { .name = "fake",
				     .collect = fake_collect,
				     .samples = fake_samples,
				     .close = fake_close },
			    .samples = 3 };
	assert_int_equal(daemon_open(d, cfg, &f->src), 0);
	/* a source without start(): nothing to start */
	assert_int_equal(daemon_start(*d, err, sizeof(err)), 0);
}

static void polls_ask_the_source_then_the_hooks(void **state)
{
	struct rw_config cfg;
	struct daemon *d;
	struct fake f;
	bool running[RW_MAX_COLLECTORS];
	int fds[2], idx[2];

	(void)state;
	daemon_on(&d, &cfg, &f);
	assert_int_equal(daemon_samples(d), 3);
	/* a source with no collectors and no events: none running, nothing to wait on */
	memset(running, 1, sizeof(running));
	daemon_running(d, running);
	for (int i = 0; i < RW_MAX_COLLECTORS; i++)
		assert_false(running[i]);
	assert_int_equal(daemon_event_fds(d, fds, idx, 2), 0);
	assert_int_equal(daemon_reserve_hooks(d, 2), 0);
	assert_int_equal(
	    daemon_add_hook(d,
			    &(struct daemon_hook){ .name = "a", .after_poll = hook_a, .arg = &f }),
	    0);
	assert_int_equal(
	    daemon_add_hook(d,
			    &(struct daemon_hook){ .name = "b", .after_poll = hook_b, .arg = &f }),
	    0);
	/* past what was reserved: said, not dropped silently */
	assert_int_equal(daemon_add_hook(d, &(struct daemon_hook){ .name = "c" }), -ENOSPC);
	f.fail_at = 2;
	assert_int_equal(daemon_collect(d, COLLECT_FAST | COLLECT_SLOW), 0);
	assert_int_equal(daemon_model(d)->time.tv_sec, 1001);
	assert_int_equal(daemon_collect(d, COLLECT_FAST), -EIO);
	assert_int_equal(daemon_collect(d, COLLECT_FAST), 0);
	assert_int_equal(f.polls, 3);
	assert_int_equal(daemon_stats(d)->fast_polls, 3);
	assert_int_equal(daemon_stats(d)->slow_polls, 1);
	daemon_close(d);
	/* the source, then the hooks in the order added, also after the failed poll; closed once */
	assert_string_equal(f.order, "sabsabsabx");
	config_free(&cfg);
}

static void live_time_stamps_the_poll(void **state)
{
	struct rw_config cfg;
	struct daemon *d;
	struct fake f;

	(void)state;
	daemon_on(&d, &cfg, &f);
	daemon_set_live_time(d, true); /* serve --from: the sample is now */
	assert_int_equal(daemon_collect(d, COLLECT_FAST), 0);
	assert_true(daemon_model(d)->time.tv_sec > 1000000000);
	daemon_close(d);
	config_free(&cfg);
}

/* The configuration picks the source: --from FILE holds its file's samples, else the machine. */
static void configuration_picks_the_source(void **state)
{
	struct model_source *src;
	struct rw_config cfg;
	struct daemon *d;
	char err[256] = "";

	(void)state;
	config_defaults(&cfg);
	cfg.from = snap;
	assert_int_equal(model_source_open(&src, &cfg, err, sizeof(err)), 0);
	assert_int_equal(daemon_open(&d, &cfg, src), 0);
	assert_int_equal(daemon_start(d, err, sizeof(err)), 0);
	assert_int_equal(daemon_samples(d), 2); /* seq-ok.json: two snapshots */
	assert_int_equal(daemon_collect(d, COLLECT_FAST | COLLECT_SLOW), 0);
	daemon_close(d);

	cfg.from = "/nonexistent/snap.json";
	assert_int_not_equal(model_source_open(&src, &cfg, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "/nonexistent/snap.json"));

	/* no --from: this machine's collectors, as many samples as polled */
	cfg.from = NULL;
	assert_int_equal(model_source_open(&src, &cfg, err, sizeof(err)), 0);
	assert_int_equal(daemon_open(&d, &cfg, src), 0);
	assert_int_equal(daemon_samples(d), 0);
	daemon_close(d); /* never started: nothing of the collectors to undo */
	config_free(&cfg);
}

/* The fake collector table: what each does is set by the test, what happened is counted. */
static int64_t fake_now;

static int64_t fake_clock(void)
{
	return fake_now;
}

struct fake_coll {
	int init_fails;	   /* init() fails this many times, then succeeds */
	int init_err;	   /* with this */
	int collect_fails; /* collect() fails while > 0 (counted down); < 0: always */
	int inits, collects, finis, events;
	int pipe[2];
};

static struct fake_coll fc[3];

static int fc_init(struct collector_ctx *cc)
{
	struct fake_coll *c = &fc[cc->idx];

	c->inits++;
	if (c->init_fails-- > 0) {
		snprintf(cc->detail, sizeof(cc->detail), "no device here");
		return c->init_err;
	}
	return 0;
}

static int fc_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct fake_coll *c = &fc[cc->idx];

	(void)m;
	(void)what;
	c->collects++;
	if (c->collect_fails) {
		if (c->collect_fails > 0)
			c->collect_fails--;
		return -EIO;
	}
	return 0;
}

static void fc_fini(struct collector_ctx *cc)
{
	fc[cc->idx].finis++;
}

static int fc_event_fd(struct collector_ctx *cc)
{
	return fc[cc->idx].pipe[0];
}

static int fc_event(struct collector_ctx *cc)
{
	fc[cc->idx].events++;
	return 1;
}

static const struct collector coll_a = { .name = "alpha",
					 .source = SRC_NONE,
					 .default_enabled = true,
					 .init = fc_init,
					 .collect = fc_collect,
					 .fini = fc_fini,
					 .event_fd = fc_event_fd,
					 .event = fc_event };
static const struct collector coll_b = { .name = "beta",
					 .source = SRC_NONE,
					 .default_enabled = true,
					 .init = fc_init,
					 .collect = fc_collect,
					 .fini = fc_fini };
static const struct collector coll_c = { .name = "gamma",
					 .source = SRC_NONE,
					 .default_enabled = false,
					 .init = fc_init,
					 .collect = fc_collect,
					 .fini = fc_fini };
static const struct collector *const table[] = { &coll_a, &coll_b, &coll_c };

static int setup_live(void **state)
{
	(void)state;
	memset(fc, 0, sizeof(fc));
	for (size_t i = 0; i < ARRAY_SIZE(fc); i++)
		fc[i].pipe[0] = fc[i].pipe[1] = -1;
	fake_now = 1000 * SEC;
	return 0;
}

/* A daemon over the fake table; daemon_start()'s result. */
static int live_on(struct daemon **d, struct rw_config *cfg, char *err, size_t errlen)
{
	struct model_source *src;

	assert_int_equal(
	    live_source_open(&src, cfg, table, (int)ARRAY_SIZE(table), fake_clock, err, errlen), 0);
	assert_int_equal(daemon_open(d, cfg, src), 0);
	return daemon_start(*d, err, errlen);
}

/* One poll at fake time t (seconds after the start); did collector i collect in it? */
static bool poll_at(struct daemon *d, int64_t t, int i)
{
	int before = fc[i].collects;

	fake_now = 1000 * SEC + t;
	assert_int_equal(daemon_collect(d, COLLECT_FAST), 0);
	return fc[i].collects > before;
}

static void start_is_retried_after_60s(void **state)
{
	struct rw_config cfg;
	struct daemon *d;
	bool running[RW_MAX_COLLECTORS];
	int fds[4], idx[4];
	char err[256] = "";

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(pipe(fc[0].pipe), 0);
	fc[0].init_fails = 2;
	fc[0].init_err = -ENODEV;
	/* default-enabled and cannot start: not an error, logged and retried */
	assert_int_equal(live_on(&d, &cfg, err, sizeof(err)), 0);
	assert_int_equal(fc[0].inits, 1);
	assert_int_equal(fc[0].finis, 1); /* a failed init is undone */
	assert_int_equal(fc[1].inits, 1);
	assert_int_equal(fc[2].inits, 0); /* off by default: never started */
	assert_string_equal(daemon_model(d)->coll[0].name, "alpha");
	assert_true(daemon_model(d)->coll[0].enabled);
	assert_false(daemon_model(d)->coll[2].enabled);
	assert_int_equal(daemon_model(d)->coll[0].err, -ENODEV);
	assert_int_equal(daemon_model(d)->coll[0].failures, 1);
	assert_string_equal(daemon_model(d)->coll[0].detail, "no device here");
	daemon_running(d, running);
	assert_false(running[0]);
	assert_true(running[1]);
	assert_false(running[2]);
	/* no events from a collector that has not started */
	assert_int_equal(daemon_event_fds(d, fds, idx, 4), 0);

	/* every poll of the first minute: not tried again, the others collect */
	for (int64_t t = 0; t < 60 * SEC; t += SEC / 2) {
		assert_false(poll_at(d, t, 0));
		assert_int_equal(fc[1].collects, (int)(t / (SEC / 2)) + 1);
	}
	assert_false(poll_at(d, 60 * SEC - 1, 0));
	assert_int_equal(fc[0].inits, 1);
	/* at 60 s: tried, fails again; the next try is 60 s after that */
	assert_false(poll_at(d, 60 * SEC, 0));
	assert_int_equal(fc[0].inits, 2);
	assert_int_equal(daemon_model(d)->coll[0].failures, 2);
	assert_false(poll_at(d, 120 * SEC - 1, 0));
	assert_int_equal(fc[0].inits, 2);
	/* at 120 s it starts and collects in the same poll; its failures are forgotten */
	assert_true(poll_at(d, 120 * SEC, 0));
	assert_int_equal(fc[0].inits, 3);
	assert_int_equal(daemon_model(d)->coll[0].failures, 0);
	assert_int_equal(daemon_model(d)->coll[0].err, 0);
	assert_string_equal(daemon_model(d)->coll[0].detail, "");
	assert_true(poll_at(d, 121 * SEC, 0));
	daemon_running(d, running);
	assert_true(running[0]);
	/* started: its notifications are the daemon's to wait on */
	assert_int_equal(daemon_event_fds(d, fds, idx, 4), 1);
	assert_int_equal(fds[0], fc[0].pipe[0]);
	assert_true(daemon_event(d, idx[0]));
	assert_int_equal(fc[0].events, 1);
	daemon_close(d);
	assert_int_equal(fc[0].finis, 3); /* two failed starts, then the close */
	assert_int_equal(fc[1].finis, 1);
	assert_int_equal(fc[2].finis, 0);
	close(fc[0].pipe[0]);
	close(fc[0].pipe[1]);
	config_free(&cfg);
}

static void failing_collect_backs_off(void **state)
{
	/* polls at which beta collects while it keeps failing: gaps 2, 4, 8, 16, 32, then 60 s */
	static const int64_t tries[] = { 0, 2, 6, 14, 30, 62, 122, 182 };
	struct rw_config cfg;
	struct daemon *d;
	char err[256] = "";
	size_t k = 0;

	(void)state;
	config_defaults(&cfg); /* --interval 1s: a poll a second */
	fc[1].collect_fails = -1;
	assert_int_equal(live_on(&d, &cfg, err, sizeof(err)), 0);
	for (int64_t t = 0; t <= 182; t++) {
		bool ran = poll_at(d, t * SEC, 1);

		if (ran) {
			assert_true(k < ARRAY_SIZE(tries));
			assert_int_equal(t, tries[k]);
			k++;
			assert_int_equal(daemon_model(d)->coll[1].failures, k);
			assert_int_equal(daemon_model(d)->coll[1].err, -EIO);
			assert_string_equal(daemon_model(d)->coll[1].detail, strerror(EIO));
		} else {
			assert_true(k < ARRAY_SIZE(tries) && t < tries[k]);
		}
		/* alpha, which works, collects every poll meanwhile */
		assert_int_equal(fc[0].collects, (int)t + 1);
	}
	assert_int_equal(k, ARRAY_SIZE(tries));
	/* it works again: collected at its next try, then every poll */
	fc[1].collect_fails = 0;
	for (int64_t t = 183; t < 242; t++)
		assert_false(poll_at(d, t * SEC, 1));
	assert_true(poll_at(d, 242 * SEC, 1));
	assert_int_equal(daemon_model(d)->coll[1].failures, 0);
	assert_int_equal(daemon_model(d)->coll[1].err, 0);
	assert_string_equal(daemon_model(d)->coll[1].detail, "");
	for (int64_t t = 243; t < 250; t++)
		assert_true(poll_at(d, t * SEC, 1));
	/* a new failure starts the backoff from 2 polls again */
	fc[1].collect_fails = 1;
	assert_true(poll_at(d, 250 * SEC, 1));
	assert_false(poll_at(d, 251 * SEC, 1));
	assert_true(poll_at(d, 252 * SEC, 1));
	assert_true(poll_at(d, 253 * SEC, 1));
	daemon_close(d);
	config_free(&cfg);
}

/* The backoff is counted in intervals: at --interval 5s, 10, 20, 40 s, then 60 s. */
static void backoff_follows_the_interval(void **state)
{
	static const int64_t tries[] = { 0, 10, 30, 70, 130, 190 };
	struct rw_config cfg;
	struct daemon *d;
	char err[256] = "";
	size_t k = 0;

	(void)state;
	config_defaults(&cfg);
	cfg.interval_ns = 5 * SEC;
	fc[1].collect_fails = -1;
	assert_int_equal(live_on(&d, &cfg, err, sizeof(err)), 0);
	for (int64_t t = 0; t <= 190; t += 5)
		if (poll_at(d, t * SEC, 1)) {
			assert_true(k < ARRAY_SIZE(tries));
			assert_int_equal(t, tries[k++]);
		}
	assert_int_equal(k, ARRAY_SIZE(tries));
	daemon_close(d);
	config_free(&cfg);
}

static void named_collector_that_cannot_start_fails_start(void **state)
{
	struct rw_config cfg;
	struct daemon *d;
	char err[256] = "";

	(void)state;
	config_defaults(&cfg);
	cfg.collector_enable[2] = 1; /* --collector.gamma */
	fc[2].init_fails = 1000;
	fc[2].init_err = -EACCES;
	assert_int_equal(live_on(&d, &cfg, err, sizeof(err)), -EACCES);
	assert_string_equal(err, "gamma: cannot start: no device here");
	/* said before anything else started */
	assert_int_equal(fc[0].inits, 0);
	assert_int_equal(fc[1].inits, 0);
	daemon_close(d);
	assert_int_equal(fc[2].finis, 1); /* its failed init, undone once */

	/* the same collector only on by default: logged, not an error */
	cfg.collector_enable[2] = -1;
	memset(fc, 0, sizeof(fc));
	fc[0].init_fails = 1000;
	fc[0].init_err = -EACCES;
	assert_int_equal(live_on(&d, &cfg, err, sizeof(err)), 0);
	assert_int_equal(fc[1].inits, 1);
	daemon_close(d);

	/* --no-collector.beta: never started, never collected */
	memset(fc, 0, sizeof(fc));
	cfg.collector_enable[1] = 0;
	assert_int_equal(live_on(&d, &cfg, err, sizeof(err)), 0);
	assert_false(poll_at(d, 0, 1));
	assert_int_equal(fc[1].inits, 0);
	assert_false(daemon_model(d)->coll[1].enabled);
	daemon_close(d);
	config_free(&cfg);
}

static void live_source_refuses_a_table_too_long(void **state)
{
	struct model_source *src = NULL;
	struct rw_config cfg;
	char err[256] = "";

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(
	    live_source_open(&src, &cfg, table, RW_MAX_COLLECTORS + 1, NULL, err, sizeof(err)),
	    -EINVAL);
	assert_null(src);
	assert_non_null(strstr(err, "at most"));
}

/* ---- event passes: a fake link, dcb and rdma collector, and a notifier for two sources ---- */

struct ev_coll {
	int collects;
	unsigned what;	 /* of the last collect */
	bool add_netdev; /* the next collect adds a netdev (objects come) */
	bool carrier;	 /* what link reads */
	int fail;	 /* collect() returns this */
};

static struct ev_coll evc[4];

static int ev_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	struct ev_coll *c = &evc[cc->idx];

	c->collects++;
	c->what = what;
	if (cc->idx == 0) { /* the link collector: the netdevs */
		struct object *o = model_add_netdev(m, "eth0");

		field_set_bool(o, F_NETDEV_CARRIER, c->carrier);
		if (c->add_netdev)
			model_add_netdev(m, "eth1");
		c->add_netdev = false;
	}
	return c->fail;
}

static int ev_event(struct collector_ctx *cc)
{
	(void)cc;
	return 1;
}

static const struct collector ev_link = { .name = "link",
					  .source = SRC_LINK,
					  .default_enabled = true,
					  .collect = ev_collect,
					  .event = ev_event };
static const struct collector ev_dcb = { .name = "dcb",
					 .source = SRC_DCB,
					 .default_enabled = true,
					 .collect = ev_collect,
					 .event = ev_event };
static const struct collector ev_rdma = {
	.name = "rdma", .source = SRC_RDMA, .default_enabled = true, .collect = ev_collect
};
static const struct collector ev_verbs = { .name = "verbs",
					   .source = SRC_VERBS,
					   .default_enabled = true,
					   .collect = ev_collect,
					   .event = ev_event,
					   .event_sources = 1u << SRC_RDMA | 1u << SRC_VERBS };
static const struct collector *const ev_table[] = { &ev_link, &ev_dcb, &ev_rdma, &ev_verbs };

struct ev_hook {
	int polls, events;
	bool carrier_marked, pfc_marked, port_state_marked;
	int64_t origin, model;
	bool carrier_seen;
};

static void evh_poll(void *arg, struct node_model *m, unsigned what)
{
	(void)m;
	(void)what;
	((struct ev_hook *)arg)->polls++;
}

static void evh_event(void *arg, struct node_model *m, const struct daemon_event *ev)
{
	struct ev_hook *h = arg;
	struct object *o = model_netdev(m, "eth0");

	h->events++;
	h->carrier_marked = ev->changed[F_NETDEV_CARRIER];
	h->pfc_marked = ev->changed[F_NETDEV_PFC_ENABLED];
	h->port_state_marked = ev->changed[F_PORT_STATE];
	h->carrier_seen = o && field_present(o, F_NETDEV_CARRIER) && o->f[F_NETDEV_CARRIER].v.i;
	assert_string_equal(ev->collector, ev_table[h->events == 1 ? 0 : 3]->name);
}

static void event_pass_rereads_what_the_notification_names(void **state)
{
	struct ev_hook h = { 0 };
	struct model_source *src;
	struct rw_config cfg;
	struct daemon *d;
	char err[256] = "";
	int64_t arrived;

	(void)state;
	memset(evc, 0, sizeof(evc));
	config_defaults(&cfg);
	assert_int_equal(live_source_open(&src, &cfg, ev_table, (int)ARRAY_SIZE(ev_table), NULL,
					  err, sizeof(err)),
			 0);
	assert_int_equal(daemon_open(&d, &cfg, src), 0);
	assert_int_equal(daemon_start(d, err, sizeof(err)), 0);
	assert_int_equal(daemon_reserve_hooks(d, 1), 0);
	assert_int_equal(daemon_add_hook(d, &(struct daemon_hook){ .after_poll = evh_poll,
								   .after_event = evh_event,
								   .arg = &h }),
			 0);
	assert_int_equal(daemon_collect(d, COLLECT_FAST | COLLECT_SLOW), 0);
	assert_int_equal(h.polls, 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(evc[i].collects, 1);

	/* the carrier comes up: link's notification re-reads link, and link alone */
	evc[0].carrier = true;
	arrived = mono_ns();
	assert_true(daemon_event(d, 0));
	assert_int_equal(daemon_event_pass(d, 0, arrived), 0);
	assert_int_equal(evc[0].collects, 2);
	assert_int_equal(evc[0].what, COLLECT_SLOW); /* configuration: no counter is read */
	assert_int_equal(evc[1].collects, 1);
	assert_int_equal(evc[2].collects, 1);
	assert_int_equal(evc[3].collects, 1);
	assert_int_equal(h.events, 1);
	assert_int_equal(h.polls, 1);
	assert_true(h.carrier_seen);
	assert_true(h.carrier_marked);
	assert_false(h.pfc_marked);
	assert_false(h.port_state_marked);
	/* no poll is counted; the pass is, and its latency starts at the arrival */
	assert_int_equal(daemon_stats(d)->fast_polls, 1);
	assert_int_equal(daemon_stats(d)->slow_polls, 1);
	assert_int_equal(daemon_stats(d)->event_passes, 1);
	assert_true(daemon_pass(d)->origin_ns == arrived);
	assert_true(daemon_pass(d)->model_ns >= arrived);

	/* a port event re-reads the sources it names: the rdma collector's state and verbs' */
	assert_int_equal(daemon_event_pass(d, 3, mono_ns()), 0);
	assert_int_equal(evc[2].collects, 2);
	assert_int_equal(evc[3].collects, 2);
	assert_int_equal(evc[0].collects, 2);
	assert_int_equal(evc[1].collects, 1);
	assert_true(h.port_state_marked);
	assert_false(h.carrier_marked);
	assert_int_equal(h.events, 2);

	/* a netdev comes: not this pass's to judge, a poll must fill it; the hooks wait for it */
	evc[0].add_netdev = true;
	assert_int_equal(daemon_event_pass(d, 0, mono_ns()), 1);
	assert_int_equal(h.events, 2);
	assert_int_equal(daemon_stats(d)->event_passes, 2);
	daemon_close(d);
	config_free(&cfg);
}

/* A poll says what it may have written: a fast one the counters, and a failed source's all. */
static void fast_poll_says_what_it_wrote(void **state)
{
	struct model_source *src;
	struct rw_config cfg;
	struct daemon *d;
	char err[256] = "";

	(void)state;
	memset(evc, 0, sizeof(evc));
	config_defaults(&cfg);
	assert_int_equal(live_source_open(&src, &cfg, ev_table, (int)ARRAY_SIZE(ev_table), NULL,
					  err, sizeof(err)),
			 0);
	assert_int_equal(daemon_open(&d, &cfg, src), 0);
	assert_int_equal(daemon_start(d, err, sizeof(err)), 0);
	assert_int_equal(daemon_collect(d, COLLECT_FAST | COLLECT_SLOW), 0);
	assert_true(daemon_pass(d)->all);
	assert_int_equal(daemon_collect(d, COLLECT_FAST), 0);
	assert_false(daemon_pass(d)->all);
	assert_true(daemon_pass(d)->changed[F_NETDEV_CARRIER_CHANGES]); /* a counter */
	assert_true(daemon_pass(d)->changed[F_NETDEV_FEC_ACTIVE]);	/* read with counters */
	assert_false(daemon_pass(d)->changed[F_NETDEV_MTU]);
	assert_false(daemon_pass(d)->changed[F_NETDEV_PFC_ENABLED]);
	/* dcb fails: everything it filled is blanked, configuration too */
	evc[1].fail = -EIO;
	assert_int_equal(daemon_collect(d, COLLECT_FAST), 0);
	assert_true(daemon_pass(d)->changed[F_NETDEV_PFC_ENABLED]);
	assert_false(daemon_pass(d)->changed[F_NETDEV_MTU]);
	daemon_close(d);
	config_free(&cfg);
}

/* A snapshot file re-reads nothing between polls: every notification is a poll's. */
static void event_pass_needs_a_source_that_refreshes(void **state)
{
	struct fake f = { .src = { .name = "fake", .collect = fake_collect, .close = fake_close } };
	struct rw_config cfg;
	struct daemon *d;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(daemon_open(&d, &cfg, &f.src), 0);
	assert_int_equal(daemon_event_pass(d, 0, mono_ns()), 1);
	assert_int_equal(daemon_stats(d)->event_passes, 0);
	daemon_close(d);
	config_free(&cfg);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(polls_ask_the_source_then_the_hooks),
		cmocka_unit_test(live_time_stamps_the_poll),
		cmocka_unit_test(configuration_picks_the_source),
		cmocka_unit_test_setup(start_is_retried_after_60s, setup_live),
		cmocka_unit_test_setup(failing_collect_backs_off, setup_live),
		cmocka_unit_test_setup(backoff_follows_the_interval, setup_live),
		cmocka_unit_test_setup(named_collector_that_cannot_start_fails_start, setup_live),
		cmocka_unit_test(live_source_refuses_a_table_too_long),
		cmocka_unit_test(event_pass_rereads_what_the_notification_names),
		cmocka_unit_test(event_pass_needs_a_source_that_refreshes),
		cmocka_unit_test(fast_poll_says_what_it_wrote),
	};

	if (argc > 1)
		snap = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
