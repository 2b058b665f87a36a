// SPDX-License-Identifier: MIT
/*
 * The fleet probe's localizer (src/probe/probe_locate.h) on loss matrices from
 * a fabric model with injected faults (probe_fabric.h): each class alone,
 * two at once, a clean fabric, a node that returned nothing, a sparse plan.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "probe_fabric.h"
#include "probe_locate.h"
#include "probe_plan.h"

struct run {
	struct fabric fb;
	struct probe_plan p;
	struct probe_result **res;
	struct probe_findings f;
};

static void locate(struct run *r, enum probe_plan_mode mode, bool cross_nic)
{
	struct probe_plan_opts o;
	struct probe_locate_opts lo = { .cross_nic = cross_nic };
	char err[256];

	probe_plan_defaults(&o);
	o.mode = mode;
	assert_int_equal(probe_plan_build(&r->p, r->fb.nodes, r->fb.n, &o, err, sizeof(err)), 0);
	r->res = calloc(r->fb.n, sizeof(*r->res));
	assert_non_null(r->res);
	for (size_t i = 0; i < r->fb.n; i++) {
		size_t n = probe_plan_slice_len(&r->p, i);
		struct probe_entry *s = malloc(n * sizeof(*s));

		assert_non_null(s);
		probe_plan_slice(&r->p, i, s);
		if (!fabric_node_down(&r->fb, (uint32_t)i)) {
			r->res[i] = malloc(n * sizeof(**r->res));
			assert_non_null(r->res[i]);
			fabric_results(&r->fb, &r->p, i, s, n, r->res[i]);
		}
		free(s);
	}
	assert_int_equal(
	    probe_locate(&r->p, (const struct probe_result *const *)r->res, &lo, &r->f), 0);
}

static void run_free(struct run *r)
{
	for (size_t i = 0; i < r->fb.n; i++)
		free(r->res[i]);
	free(r->res);
	probe_findings_free(&r->f);
	probe_plan_free(&r->p);
	fabric_free(&r->fb);
}

static void dump(const struct run *r)
{
	for (size_t k = 0; k < r->f.n; k++) {
		const struct probe_finding *f = &r->f.f[k];

		printf("# %s %s nodes=%zu(%s..) rails=%zu leaf=%s: %s\n", probe_class_name(f->cls),
		       probe_action_name(f->action), f->n_nodes,
		       f->n_nodes ? r->fb.names[f->nodes[0]] : "", f->n_rails, f->leaf,
		       f->evidence);
	}
}

/* Exactly one finding, of this class, about these nodes (count, first) and rails. */
static const struct probe_finding *expect_one(const struct run *r, enum probe_class c,
					      size_t n_nodes, uint32_t first, size_t n_rails,
					      uint16_t rail)
{
	const struct probe_finding *f;

	dump(r);
	assert_int_equal(r->f.n, 1);
	f = &r->f.f[0];
	assert_string_equal(probe_class_name(f->cls), probe_class_name(c));
	assert_int_equal(f->n_nodes, n_nodes);
	if (n_nodes)
		assert_int_equal(f->nodes[0], first);
	assert_int_equal(f->n_rails, n_rails);
	assert_int_equal(f->rails[0], rail);
	return f;
}

static void init(struct run *r, size_t n, size_t rails, size_t per_leaf, bool leaves)
{
	memset(r, 0, sizeof(*r));
	assert_int_equal(fabric_init(&r->fb, n, rails, per_leaf, leaves), 0);
}

static void clean(void **state)
{
	struct run r;

	(void)state;
	init(&r, 48, 4, 8, true);
	locate(&r, PROBE_PLAN_AUTO, false);
	dump(&r);
	assert_int_equal(r.f.n, 0);
	assert_true(r.f.rails[0].tested == 48 * 47);
	assert_true(r.f.rails[0].ok == 48 * 47);
	assert_true(r.f.rails[0].rtt_p50_ns > 3000 && r.f.rails[0].rtt_p50_ns < 6000);
	assert_true(r.f.host.ok == r.f.host.tested && r.f.host.tested == 48 * 12);
	assert_true(r.f.loop.ok == 48 * 4);
	run_free(&r);
}

static void node_rail_cable(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_PORT_CABLE, 5, 2, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_NODE_RAIL, 1, 5, 1, 2);
	assert_int_equal(f->action, PROBE_ACT_RESEAT_CABLE);
	assert_int_equal(f->severity, PROBE_SEV_CRITICAL);
	assert_non_null(strstr(f->evidence, "rail 2 mlx5_2/1: lost with 94 of 94 pairs"));
	assert_non_null(strstr(f->evidence, "its loopback answers: not the NIC"));
	assert_non_null(strstr(f->evidence, "link_downed 3"));
	run_free(&r);
}

static void node_rail_nic(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_PORT_NIC, 40, 0, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_NODE_RAIL, 1, 40, 1, 0);
	assert_int_equal(f->action, PROBE_ACT_DRAIN_NODE);
	assert_non_null(strstr(f->evidence, "its loopback fails: the NIC"));
	run_free(&r);
}

/* A node that dies: no result of its own, lost on every rail. */
static void node_down(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_NODE_DOWN, 17, 0, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_NODE_RAIL, 1, 17, 4, 0);
	assert_int_equal(f->action, PROBE_ACT_DRAIN_NODE);
	assert_non_null(strstr(f->evidence, "no result from the node"));
	assert_int_equal(r.f.nodes_without_result, 1);
	run_free(&r);
}

static void leaf_uplinks(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_LEAF_UPLINKS, 0, 1, 2, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_LEAF, 8, 16, 1, 1);
	assert_string_equal(f->leaf, "leaf-r1-2");
	assert_int_equal(f->action, PROBE_ACT_RESEAT_CABLE);
	assert_non_null(strstr(f->evidence, "pairs inside it pass (56 of 56): its uplinks"));
	run_free(&r);

	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_LEAF_DEAD, 0, 3, 5, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_LEAF, 8, 40, 1, 3);
	assert_int_equal(f->action, PROBE_ACT_DRAIN_NODE);
	assert_non_null(strstr(f->evidence, "the leaf itself"));
	run_free(&r);
}

static void spine_paths(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_SPINE, 0, 3, 4, 2, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_SPINE_PATHS, 8, 32, 1, 3);
	assert_string_equal(f->leaf, "leaf-r3-4");
	assert_int_equal(f->action, PROBE_ACT_RESEAT_CABLE);
	assert_non_null(strstr(f->evidence, "of them go through leaf leaf-r3-4"));
	run_free(&r);

	/* leaves unknown: every pair gets the labels; the nodes behind that leaf stand out */
	init(&r, 48, 4, 8, false);
	fabric_fault(&r.fb, FAB_SPINE, 0, 3, 4, 2, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_SPINE_PATHS, 8, 32, 1, 3);
	assert_string_equal(f->leaf, "");
	run_free(&r);
}

static void path_mtu(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_MTU_PORT, 9, 0, 0, 0, 1600);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_PATH_MTU, 1, 9, 1, 0);
	assert_int_equal(f->action, PROBE_ACT_FIX_CONFIG);
	assert_non_null(strstr(f->evidence, "path-MTU probes (4096 bytes) lost with 94 of 94"));
	run_free(&r);

	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_MTU_LEAF, 0, 2, 1, 0, 1600);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_PATH_MTU, 8, 8, 1, 2);
	assert_string_equal(f->leaf, "leaf-r2-1");
	run_free(&r);
}

static void rail_only(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_RAIL_ONLY, 0, 0, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_RAIL_ONLY, 48, 0, 4, 0);
	assert_int_equal(f->severity, PROBE_SEV_WARNING);
	assert_int_equal(f->action, PROBE_ACT_FIX_CONFIG);
	assert_non_null(strstr(f->evidence, "a rail-only fabric"));
	run_free(&r);

	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_RAIL_ONLY, 0, 0, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, true);
	f = expect_one(&r, PROBE_RAIL_ONLY, 48, 0, 4, 0);
	assert_int_equal(f->severity, PROBE_SEV_CRITICAL);
	assert_non_null(strstr(f->evidence, "NCCL_CROSS_NIC=1 will hang"));
	run_free(&r);
}

/*
 * The VM tier's shape: two nodes, two rails, leaves unknown.  Clean, then
 * no traffic between the rails: each host's two cross-rail pairs are the
 * evidence, the four same-rail pairs pass, and no port is to blame.
 */
static void rail_only_two_nodes(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 2, 2, 1, false);
	locate(&r, PROBE_PLAN_AUTO, false);
	dump(&r);
	assert_int_equal(r.f.n, 0);
	assert_int_equal(r.f.host.tested, 4);
	assert_int_equal(r.f.host.ok, 4);
	run_free(&r);

	init(&r, 2, 2, 1, false);
	fabric_fault(&r.fb, FAB_RAIL_ONLY, 0, 0, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_RAIL_ONLY, 2, 0, 2, 0);
	assert_int_equal(f->pairs_bad, 4);
	assert_int_equal(f->pairs_tested, 4);
	assert_int_equal(r.f.rails[0].ok, 2);
	assert_int_equal(r.f.rails[1].ok, 2);
	assert_non_null(strstr(f->evidence, "a rail-only fabric"));
	run_free(&r);
}

static void host_path(void **state)
{
	struct run r;
	const struct probe_finding *f;

	(void)state;
	init(&r, 48, 4, 8, true);
	r.fb.nodes[3].host_facts = "ACS on at 0000:3a:00.0";
	r.fb.nodes[3].host_action = PROBE_ACT_FIX_CONFIG;
	fabric_fault(&r.fb, FAB_LOOP_SLOW, 3, 1, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_HOST_PATH, 1, 3, 1, 1);
	assert_int_equal(f->severity, PROBE_SEV_WARNING);
	assert_int_equal(f->action, PROBE_ACT_FIX_CONFIG);
	assert_non_null(strstr(f->evidence, "mlx5_1/1 loopback 500.0 us"));
	assert_non_null(strstr(f->evidence, "host: ACS on at 0000:3a:00.0"));
	run_free(&r);

	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_LOOP_LOST, 30, 2, 0, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	f = expect_one(&r, PROBE_HOST_PATH, 1, 30, 1, 2);
	assert_int_equal(f->severity, PROBE_SEV_CRITICAL);
	assert_int_equal(f->action, PROBE_ACT_DRAIN_NODE);
	run_free(&r);
}

/* Two faults at once, each found alone, worst (most nodes) first. */
static void two_faults(void **state)
{
	struct run r;

	(void)state;
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_PORT_CABLE, 5, 2, 0, 0, 0);
	fabric_fault(&r.fb, FAB_MTU_PORT, 30, 0, 0, 0, 1600);
	locate(&r, PROBE_PLAN_AUTO, false);
	dump(&r);
	assert_int_equal(r.f.n, 2);
	assert_int_equal(r.f.f[0].cls, PROBE_NODE_RAIL);
	assert_int_equal(r.f.f[0].nodes[0], 5);
	assert_int_equal(r.f.f[0].rails[0], 2);
	assert_int_equal(r.f.f[1].cls, PROBE_PATH_MTU);
	assert_int_equal(r.f.f[1].nodes[0], 30);
	assert_int_equal(r.f.f[1].rails[0], 0);
	run_free(&r);

	/* two dead ports on one rail, and a leaf's uplinks on another */
	init(&r, 48, 4, 8, true);
	fabric_fault(&r.fb, FAB_PORT_CABLE, 5, 2, 0, 0, 0);
	fabric_fault(&r.fb, FAB_PORT_CABLE, 44, 2, 0, 0, 0);
	fabric_fault(&r.fb, FAB_LEAF_UPLINKS, 0, 0, 1, 0, 0);
	locate(&r, PROBE_PLAN_AUTO, false);
	dump(&r);
	assert_int_equal(r.f.n, 3);
	assert_int_equal(r.f.f[0].cls, PROBE_LEAF);
	assert_int_equal(r.f.f[1].cls, PROBE_NODE_RAIL);
	assert_int_equal(r.f.f[1].nodes[0], 5);
	assert_int_equal(r.f.f[2].cls, PROBE_NODE_RAIL);
	assert_int_equal(r.f.f[2].nodes[0], 44);
	run_free(&r);
}

/* The sparse plan localizes as well: 400 nodes, each port heard by ~20 peers. */
static void sparse(void **state)
{
	struct run r;

	(void)state;
	init(&r, 400, 4, 20, true);
	fabric_fault(&r.fb, FAB_PORT_CABLE, 123, 1, 0, 0, 0);
	fabric_fault(&r.fb, FAB_SPINE, 0, 2, 7, 5, 0);
	locate(&r, PROBE_PLAN_SPARSE, false);
	dump(&r);
	assert_true(r.p.sparse);
	assert_int_equal(r.f.n, 2);
	for (size_t k = 0; k < 2; k++) {
		const struct probe_finding *f = &r.f.f[k];

		if (f->cls == PROBE_NODE_RAIL) {
			assert_int_equal(f->nodes[0], 123);
			assert_int_equal(f->rails[0], 1);
		} else {
			assert_int_equal(f->cls, PROBE_SPINE_PATHS);
			assert_string_equal(f->leaf, "leaf-r2-7");
		}
	}
	run_free(&r);

	/*
	 * A leaf's uplinks in a sparse plan: a port's near peers (+-1, 2, 4 ...) are
	 * under its own leaf and answer, so the leaf is judged before its ports.
	 */
	init(&r, 640, 8, 32, true);
	fabric_fault(&r.fb, FAB_LEAF_UPLINKS, 0, 6, 10, 0, 0);
	locate(&r, PROBE_PLAN_SPARSE, false);
	expect_one(&r, PROBE_LEAF, 32, 320, 1, 6);
	assert_string_equal(r.f.f[0].leaf, "leaf-r6-10");
	run_free(&r);
}

/* The localizer's actions are the health rules' words, in their order. */
static void actions(void **state)
{
	(void)state;
	for (int a = 0; a < PROBE__ACTIONS; a++)
		assert_string_equal(probe_action_name((enum probe_action)a),
				    rule_action_name((enum rule_action)(a + 1)));
}

/*
 * A pair whose small probes did not leave (late on both passes) is untested
 * when its path-MTU size is lost, not lost; a small size answered is enough to
 * call its MTU short, and its main path is not judged on probes never sent.
 */
static void late_probes(void **state)
{
	struct probe_result x;

	(void)state;
	x = (struct probe_result){ .sent = { 0, 0, 2 }, .rtt_ns = PROBE_RTT_NONE };
	assert_int_equal(probe_result_outcome(4096, &x), PROBE_OUT_UNTESTED);
	x = (struct probe_result){ .sent = { 2, 2, 2 }, .rtt_ns = PROBE_RTT_NONE };
	assert_int_equal(probe_result_outcome(4096, &x), PROBE_OUT_LOST);
	/* 64 late, 1024 back, 4096 lost */
	x = (struct probe_result){ .sent = { 0, 2, 2 }, .recv = { 0, 2, 0 }, .rtt_ns = 9000 };
	assert_int_equal(probe_result_outcome(4096, &x), PROBE_OUT_MTU);
	/* the flow-label probes (64 bytes) are small: all lost, the pair is */
	x = (struct probe_result){
		.sent = { 0, 0, 2 }, .labels_sent = 8, .labels_lost = 0xff, .rtt_ns = PROBE_RTT_NONE
	};
	assert_int_equal(probe_result_outcome(4096, &x), PROBE_OUT_LOST);
	/* the labels answer, the main path's probes were late: not a partial path set */
	x = (struct probe_result){
		.sent = { 0, 0, 2 }, .recv = { 0, 0, 2 }, .labels_sent = 8, .rtt_ns = 9000
	};
	assert_int_equal(probe_result_outcome(4096, &x), PROBE_OUT_OK);
	/* ... and when they left and were lost, it is */
	x = (struct probe_result){
		.sent = { 2, 2, 2 }, .recv = { 0, 0, 2 }, .labels_sent = 8, .rtt_ns = 9000
	};
	assert_int_equal(probe_result_outcome(4096, &x), PROBE_OUT_PATHS);
	/* a path of MTU 1024 has no size a shorter MTU loses alone */
	x = (struct probe_result){ .sent = { 0, 2 }, .rtt_ns = PROBE_RTT_NONE };
	assert_int_equal(probe_result_outcome(1024, &x), PROBE_OUT_LOST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clean),
		cmocka_unit_test(node_rail_cable),
		cmocka_unit_test(node_rail_nic),
		cmocka_unit_test(node_down),
		cmocka_unit_test(leaf_uplinks),
		cmocka_unit_test(spine_paths),
		cmocka_unit_test(path_mtu),
		cmocka_unit_test(rail_only),
		cmocka_unit_test(rail_only_two_nodes),
		cmocka_unit_test(host_path),
		cmocka_unit_test(two_faults),
		cmocka_unit_test(sparse),
		cmocka_unit_test(actions),
		cmocka_unit_test(late_probes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
