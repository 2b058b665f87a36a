// SPDX-License-Identifier: MIT
/*
 * The daemon driven by a fake model source: it asks the source once per
 * poll and does not know what it is; the hooks run after it, in the order
 * added, also after a failed poll; the hook array holds what was reserved
 * and says so past it; a source's samples are what daemon_samples() says.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon.h"

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
	(void)src;
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

/* A daemon whose source is f (it starts on a snapshot file, then swaps it). */
static void daemon_on(struct daemon *d, struct rw_config *cfg, struct fake *f)
{
	char err[256] = "";

	config_defaults(cfg);
	cfg->from = snap;
	assert_int_equal(daemon_init(d, cfg, err, sizeof(err)), 0);
	assert_int_equal(daemon_start(d, err, sizeof(err)), 0);
	d->src->close(d->src);
	*f = (struct fake){ .src = { .name = "fake",
				     .collect = fake_collect,
				     .samples = fake_samples,
				     .close = fake_close },
			    .samples = 3 };
	d->src = &f->src;
}

static void polls_ask_the_source_then_the_hooks(void **state)
{
	struct rw_config cfg;
	struct daemon d;
	struct fake f;

	(void)state;
	daemon_on(&d, &cfg, &f);
	assert_int_equal(daemon_samples(&d), 3);
	assert_int_equal(daemon_reserve_hooks(&d, 2), 0);
	assert_int_equal(
	    daemon_add_hook(&d,
			    &(struct daemon_hook){ .name = "a", .after_poll = hook_a, .arg = &f }),
	    0);
	assert_int_equal(
	    daemon_add_hook(&d,
			    &(struct daemon_hook){ .name = "b", .after_poll = hook_b, .arg = &f }),
	    0);
	/* past what was reserved: said, not dropped silently */
	assert_int_equal(daemon_add_hook(&d, &(struct daemon_hook){ .name = "c" }), -ENOSPC);
	f.fail_at = 2;
	assert_int_equal(daemon_collect(&d, COLLECT_FAST | COLLECT_SLOW), 0);
	assert_int_equal(d.m.time.tv_sec, 1001);
	assert_int_equal(daemon_collect(&d, COLLECT_FAST), -EIO);
	assert_int_equal(daemon_collect(&d, COLLECT_FAST), 0);
	assert_int_equal(f.polls, 3);
	/* the source, then the hooks in the order added: also after the failed poll */
	assert_string_equal(f.order, "sabsabsab");
	assert_int_equal(d.stats.fast_polls, 3);
	assert_int_equal(d.stats.slow_polls, 1);
	d.src = NULL; /* ours, on the stack */
	daemon_fini(&d);
	config_free(&cfg);
}

static void live_time_stamps_the_poll(void **state)
{
	struct rw_config cfg;
	struct daemon d;
	struct fake f;

	(void)state;
	daemon_on(&d, &cfg, &f);
	d.live_time = true; /* serve --from: the sample is now */
	assert_int_equal(daemon_collect(&d, COLLECT_FAST), 0);
	assert_true(d.m.time.tv_sec > 1000000000);
	d.src = NULL;
	daemon_fini(&d);
	config_free(&cfg);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(polls_ask_the_source_then_the_hooks),
		cmocka_unit_test(live_time_stamps_the_poll),
	};

	if (argc > 1)
		snap = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
