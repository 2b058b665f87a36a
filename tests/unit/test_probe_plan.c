// SPDX-License-Identifier: MIT
/* The fleet probe's planner (src/probe/probe_plan.h): coverage, incast, the budget. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "probe_fabric.h"
#include "probe_plan.h"

/*
 * Walk every slice: each (node, port) hears from at least min(3, N_r - 1)
 * distinct peers on its rail, and from at most one sender in any slot; every
 * rail entry stays on its rail; host entries stay in the host.
 */
static void check_plan(const struct probe_plan *p, const struct fabric *fb)
{
	size_t np = fb->n * fb->rails;
	/* [port][slot]: a bitmap would do; slots are few enough in these tests */
	uint32_t *heard_in_slot = calloc(np * p->n_slots, sizeof(uint32_t));
	/* distinct senders: the steps are distinct mod N, so counting entries counts peers */
	uint32_t *peers = calloc(np, sizeof(uint32_t));
	struct probe_entry *s = malloc(probe_plan_slice_len(p, 0) * sizeof(*s) + 1);
	uint64_t total = 0;

	assert_non_null(heard_in_slot);
	assert_non_null(peers);
	assert_non_null(s);
	for (size_t i = 0; i < fb->n; i++) {
		size_t n = probe_plan_slice(p, i, s);

		assert_int_equal(n, probe_plan_slice_len(p, i));
		total += n;
		for (size_t k = 0; k < n; k++) {
			const struct probe_entry *e = &s[k];
			size_t dst = (size_t)e->dst * fb->rails + e->dst_port;

			assert_true(e->slot < p->n_slots);
			if (k)
				assert_true(e->slot >= s[k - 1].slot); /* slot order */
			assert_true(++heard_in_slot[dst * p->n_slots + e->slot] == 1);
			if (e->kind == PROBE_PAIR_RAIL) {
				assert_int_not_equal(e->dst, i);
				assert_int_equal(probe_plan_port_rail(p, e->dst, e->dst_port),
						 e->rail);
				assert_true(e->slot < p->rail_slots);
				peers[dst]++;
			} else {
				assert_int_equal(e->dst, i);
				assert_true(e->slot >= p->rail_slots);
				assert_int_equal(e->kind == PROBE_PAIR_LOOP,
						 e->port == e->dst_port);
			}
		}
	}
	assert_true(total == p->pairs);
	for (size_t x = 0; x < np; x++) {
		size_t want = fb->n - 1 < PROBE_PLAN_MIN_PEERS ? fb->n - 1 : PROBE_PLAN_MIN_PEERS;

		assert_true(peers[x] >= want);
	}
	assert_true(p->duration_ns ==
		    1000000000LL + (int64_t)p->n_slots * p->slot_ns + 250000000LL + 500000000LL);
	free(heard_in_slot);
	free(peers);
	free(s);
}

static void full_mesh(void **state)
{
	struct fabric fb;
	struct probe_plan p;
	struct probe_plan_opts o;
	char err[256];

	(void)state;
	assert_int_equal(fabric_init(&fb, 64, 8, 16, true), 0);
	probe_plan_defaults(&o);
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_false(p.sparse);
	assert_false(p.over_budget);
	assert_true(p.duration_ns <= o.budget_ns);
	assert_int_equal(p.n_rails, 8);
	assert_int_equal(p.rail_slots, 63);
	assert_int_equal(p.host_slots, 7);
	assert_int_equal(p.n_slots, 63 + 7 + 1);
	/* 3 sizes x 2 + 8 labels = 14 probes a slot at 8000/s */
	assert_int_equal(p.slot_ns, 1750000);
	check_plan(&p, &fb);
	/* every pair of a rail, once in each direction; 8 x 8 inside each host */
	assert_true(p.pairs == 64ULL * 8 * 63 + 64 * 64);
	probe_plan_free(&p);
	/* without the pairs inside the hosts: the rails and the loopbacks */
	o.no_host_pairs = true;
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_int_equal(p.n_slots, 63 + 1);
	assert_true(p.pairs == 64ULL * 8 * 63 + 64 * 8);
	check_plan(&p, &fb);
	probe_plan_free(&p);
	fabric_free(&fb);
}

/* 1 000 nodes x 8 rails: full mesh within 5 s; 3 000: sparse, O(N log N), still within it. */
static void budget_decides(void **state)
{
	struct fabric fb;
	struct probe_plan p;
	struct probe_plan_opts o;
	char err[256];

	(void)state;
	probe_plan_defaults(&o);
	assert_int_equal(fabric_init(&fb, 1000, 8, 32, true), 0);
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_false(p.sparse);
	assert_true(p.duration_ns <= o.budget_ns);
	probe_plan_free(&p);
	fabric_free(&fb);

	assert_int_equal(fabric_init(&fb, 3000, 8, 32, true), 0);
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_true(p.sparse);
	assert_false(p.over_budget);
	assert_true(p.duration_ns <= o.budget_ns);
	/* {1, -1, 2 .. 2048 (11), 8 random}: 21 steps */
	for (size_t r = 0; r < p.n_rails; r++)
		assert_int_equal(p.rails[r].n_steps, 21);
	check_plan(&p, &fb);
	probe_plan_free(&p);

	/* a tighter budget turns 1 000 nodes sparse too; a forced full mesh says it is over */
	fabric_free(&fb);
	assert_int_equal(fabric_init(&fb, 1000, 8, 32, true), 0);
	o.budget_ns = 2000000000LL;
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_true(p.sparse);
	assert_true(p.duration_ns <= o.budget_ns);
	probe_plan_free(&p);
	o.mode = PROBE_PLAN_FULL;
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_false(p.sparse);
	assert_true(p.over_budget);
	probe_plan_free(&p);
	fabric_free(&fb);
}

static void small_rings(void **state)
{
	struct probe_plan_opts o;

	(void)state;
	probe_plan_defaults(&o);
	o.mode = PROBE_PLAN_SPARSE;
	for (size_t n = 1; n <= 9; n++) {
		struct fabric fb;
		struct probe_plan p;
		char err[256];

		assert_int_equal(fabric_init(&fb, n, 2, 4, false), 0);
		assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
		check_plan(&p, &fb);
		probe_plan_free(&p);
		fabric_free(&fb);
	}
}

/* The same seed gives the same plan; another gives other random steps. */
static void seeded(void **state)
{
	struct fabric fb;
	struct probe_plan a, b;
	struct probe_plan_opts o;
	char err[256];

	(void)state;
	probe_plan_defaults(&o);
	o.mode = PROBE_PLAN_SPARSE;
	assert_int_equal(fabric_init(&fb, 500, 2, 32, true), 0);
	assert_int_equal(probe_plan_build(&a, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_int_equal(probe_plan_build(&b, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_int_equal(a.rails[0].n_steps, b.rails[0].n_steps);
	assert_memory_equal(a.rails[0].steps, b.rails[0].steps, a.rails[0].n_steps * 4);
	probe_plan_free(&b);
	o.seed++;
	assert_int_equal(probe_plan_build(&b, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_memory_not_equal(a.rails[0].steps, b.rails[0].steps, a.rails[0].n_steps * 4);
	probe_plan_free(&a);
	probe_plan_free(&b);
	fabric_free(&fb);
}

/* Flow labels only across leaves (or where they are unknown); sizes up to the smaller MTU. */
static void pairs_and_sizes(void **state)
{
	struct fabric fb;
	struct probe_plan p;
	struct probe_plan_opts o;
	struct probe_entry *s;
	unsigned sz[PROBE_PLAN_MAX_SIZES];
	char err[256];
	size_t n;

	(void)state;
	assert_int_equal(fabric_init(&fb, 8, 2, 4, true), 0);
	fb.ports[1 * 2 + 0].active_mtu = 1024; /* node 1, rail 0 */
	probe_plan_defaults(&o);
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	s = malloc(probe_plan_slice_len(&p, 0) * sizeof(*s));
	assert_non_null(s);
	n = probe_plan_slice(&p, 0, s);
	for (size_t k = 0; k < n; k++) {
		if (s[k].kind == PROBE_PAIR_RAIL)
			assert_int_equal(s[k].labels, s[k].dst / 4 == 0 ? 0 : 8);
		else if (s[k].kind == PROBE_PAIR_HOST)
			assert_int_equal(s[k].labels, 8); /* two rails: two leaves */
		else
			assert_int_equal(s[k].labels, 0);
		if (s[k].kind == PROBE_PAIR_RAIL && s[k].rail == 0 && s[k].dst == 1)
			assert_int_equal(s[k].mtu, 1024);
		else
			assert_int_equal(s[k].mtu, 4096);
	}
	free(s);
	probe_plan_free(&p);
	assert_int_equal(probe_plan_sizes(4096, sz), 3);
	assert_int_equal(sz[0], 64);
	assert_int_equal(sz[1], 1024);
	assert_int_equal(sz[2], 4096);
	assert_int_equal(probe_plan_sizes(1024, sz), 2);
	assert_int_equal(probe_plan_sizes(512, sz), 2);
	assert_int_equal(sz[1], 512);
	assert_int_equal(probe_plan_sizes(0, sz), 2);
	fabric_free(&fb);
}

static void bad_input(void **state)
{
	struct fabric fb;
	struct probe_plan p;
	struct probe_plan_opts o;
	char err[256];

	(void)state;
	probe_plan_defaults(&o);
	assert_int_equal(fabric_init(&fb, 4, 2, 4, true), 0);
	fb.ports[2 * 2 + 1].rail = fb.keys[0];
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "node gpu00003: ports mlx5_0/1 and mlx5_1/1 both on rail '0': "
				 "a rail has one port per node");
	probe_plan_free(&p);
	fb.ports[2 * 2 + 1].rail = "";
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "node gpu00003: port mlx5_1/1: no rail key");
	probe_plan_free(&p);
	fb.ports[2 * 2 + 1].rail = fb.keys[1];
	o.paths = 33;
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "paths: 33 flow labels per pair, at most 32");
	probe_plan_free(&p);
	fabric_free(&fb);
}

/* A node without a port on a rail is left out of that ring only. */
static void missing_rail(void **state)
{
	struct fabric fb;
	struct probe_plan p;
	struct probe_plan_opts o;
	char err[256];

	(void)state;
	probe_plan_defaults(&o);
	assert_int_equal(fabric_init(&fb, 10, 3, 4, true), 0);
	fb.nodes[4].n_ports = 2; /* no rail-2 port */
	assert_int_equal(probe_plan_build(&p, fb.nodes, fb.n, &o, err, sizeof(err)), 0);
	assert_int_equal(p.rails[2].n, 9);
	assert_int_equal(p.rails[0].n, 10);
	assert_int_equal(p.port_of[4 * 3 + 2], -1);
	assert_int_equal(probe_plan_slice_len(&p, 4), 9 + 9 + 4);
	probe_plan_free(&p);
	fabric_free(&fb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_mesh),	   cmocka_unit_test(budget_decides),
		cmocka_unit_test(small_rings),	   cmocka_unit_test(seeded),
		cmocka_unit_test(pairs_and_sizes), cmocka_unit_test(bad_input),
		cmocka_unit_test(missing_rail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
