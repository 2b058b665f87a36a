// SPDX-License-Identifier: MIT
/*
 * The verbs collector touches the live machine's devices only: with a
 * fixture tree it leaves the ports' verbs fields "not_collected"; on this
 * machine a port that has no verbs device gets active_mtu absent as
 * "unsupported", never 0.
 *
 * argv[1]: tests/fixtures/sysfs
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "helpers.h"

extern const struct collector rdma_collector;
extern const struct collector verbs_collector;

static const char *fixtures;

static void poll_with(const struct collector *c, struct rw_config *cfg, struct node_model *m,
		      struct collector_ctx *cc)
{
	memset(cc, 0, sizeof(*cc));
	cc->cfg = cfg;
	cc->idx = collector_index(c->name);
	m->obj_free_cb[cc->idx] = c->obj_free;
	assert_int_equal(c->init(cc), 0);
	assert_int_equal(c->collect(cc, m, COLLECT_SLOW | COLLECT_FAST), 0);
}

static void fixture_is_not_this_machine(void **state)
{
	struct collector_ctx rc, vc;
	struct rw_config cfg;
	struct node_model m;
	char root[PATH_MAX];
	struct object *p;

	(void)state;
	snprintf(root, sizeof(root), "%s/mlx5-roce", fixtures);
	config_defaults(&cfg);
	cfg.sysfs_root = root;
	model_init(&m);
	poll_with(&rdma_collector, &cfg, &m, &rc);
	poll_with(&verbs_collector, &cfg, &m, &vc);
	p = model_port(&m, "mlx5_0", 1);
	assert_non_null(p);
	assert_int_equal(p->f[F_PORT_ACTIVE_MTU].state, ABS_NOT_COLLECTED);
	assert_int_equal(p->f[F_PORT_MAX_MTU].state, ABS_NOT_COLLECTED);
	/* and it did not overwrite what rdma found */
	assert_string_equal(p->f[F_PORT_STATE].v.s, "ACTIVE");
	verbs_collector.fini(&vc);
	model_free(&m);
	rdma_collector.fini(&rc);
}

static void port_without_verbs_device(void **state)
{
	struct collector_ctx vc;
	struct rw_config cfg;
	struct node_model m;
	struct object *p;

	(void)state;
	config_defaults(&cfg); /* /sys: the live machine */
	model_init(&m);
	p = model_add_port(&m, "mlx5_97", 1); /* as if rdma had found it */
	p->seen = true;
	poll_with(&verbs_collector, &cfg, &m, &vc);
	assert_false(field_present(p, F_PORT_ACTIVE_MTU));
	assert_int_equal(p->f[F_PORT_ACTIVE_MTU].state, ABS_UNSUPPORTED);
	assert_int_equal(p->f[F_PORT_MAX_MTU].state, ABS_UNSUPPORTED);
	/* a second poll (device list refreshed, contexts kept) changes nothing */
	assert_int_equal(verbs_collector.collect(&vc, &m, COLLECT_SLOW), 0);
	assert_int_equal(p->f[F_PORT_ACTIVE_MTU].state, ABS_UNSUPPORTED);
	/* the fast loop is not verbs' business */
	assert_int_equal(verbs_collector.collect(&vc, &m, COLLECT_FAST), 0);
	verbs_collector.fini(&vc);
	model_free(&m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fixture_is_not_this_machine),
		cmocka_unit_test(port_without_verbs_device),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES/sysfs\n", argv[0]);
		return 2;
	}
	fixtures = argv[1];
	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
