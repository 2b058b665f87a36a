// SPDX-License-Identifier: MIT
/*
 * Fleet rules over synthetic sets of nodes (all equal, one outlier, a tie,
 * a node that did not answer, a unit whose value is unknown, rails), their
 * load errors, and Slurm hostlist expansion against Slurm's documented
 * examples.
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
#include "fleet_digest.h"
#include "fleet_prom.h"
#include "hostlist.h"
#include "model.h"
#include "snapshot.h"
#include "strbuf.h"
#include "util.h"

/* ---- hostlist ---- */

struct hl_case {
	const char *expr;
	size_t n;
	const char *first, *second, *last;
};

static void hostlist_expansions(void **state)
{
	static const struct hl_case cases[] = {
		/* slurm_hostlist_create(3) */
		{ "linux[1-3,6]", 4, "linux1", "linux2", "linux6" },
		/* Slurm::Hostlist(3pm): a bracketed list, and names separated by , or space */
		{ "tux[0-5,12,20-25]", 13, "tux0", "tux1", "tux25" },
		{ "node1,node[2-5,12]", 6, "node1", "node2", "node12" },
		{ "node21 node[27-34]", 9, "node21", "node27", "node34" },
		/* slurm.conf(5), NodeName: several numeric ranges in one name */
		{ "rack[0-63]_blade[0-41]", 64 * 42, "rack0_blade0", "rack0_blade1",
		  "rack63_blade41" },
		/* zero padding from the width of the lower bound, as Slurm does */
		{ "gpu[001-064,070]", 65, "gpu001", "gpu002", "gpu070" },
		{ "n[8-10]", 3, "n8", "n9", "n10" },
		{ "n[08-10]", 3, "n08", "n09", "n10" },
		{ "a[1-2]b[3-4]", 4, "a1b3", "a1b4", "a2b4" },
		{ "gpu[1-2]:[9479-9480]", 4, "gpu1:9479", "gpu1:9480", "gpu2:9480" },
		{ "127.0.[1-2].[1-3]:9479", 6, "127.0.1.1:9479", "127.0.1.2:9479",
		  "127.0.2.3:9479" },
		/* an IPv6 literal is an address, not a range */
		{ "[::1]:9479", 1, "[::1]:9479", NULL, "[::1]:9479" },
		{ "[fe80::1]:[1-2]", 2, "[fe80::1]:1", "[fe80::1]:2", "[fe80::1]:2" },
		{ "  gpu1 ,gpu2  ", 2, "gpu1", "gpu2", "gpu2" },
		{ "gpu17", 1, "gpu17", NULL, "gpu17" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hl_case *c = &cases[i];
		struct hostlist hl = { 0 };
		char err[256] = "";
		int r = hostlist_expand(&hl, c->expr, err, sizeof(err));

		if (r)
			fprintf(stderr, "%s: %s\n", c->expr, err);
		assert_int_equal(r, 0);
		if (hl.n != c->n)
			fprintf(stderr, "%s: %zu names, want %zu\n", c->expr, hl.n, c->n);
		assert_int_equal(hl.n, c->n);
		assert_string_equal(hl.names[0], c->first);
		if (c->second)
			assert_string_equal(hl.names[1], c->second);
		assert_string_equal(hl.names[hl.n - 1], c->last);
		hostlist_free(&hl);
	}
}

/* node names become host:port for a URL; a port or an IPv6 literal's own colons are kept */
static void hostlist_ports(void **state)
{
	static const char *const cases[][2] = {
		{ "gpu001", "gpu001:9479" },	 { "gpu001:9100", "gpu001:9100" },
		{ "10.0.0.1", "10.0.0.1:9479" }, { "[::1]", "[::1]:9479" },
		{ "[::1]:9100", "[::1]:9100" },	 { "[fe80::1%eth0]", "[fe80::1%eth0]:9479" },
	};
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hostlist_with_port(cases[i][0], 9479, out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
	}
}

static void hostlist_order_and_errors(void **state)
{
	static const char *const all[] = { "a1b3", "a1b4", "a2b3", "a2b4" };
	static const struct {
		const char *expr, *msg;
		int r;
	} bad[] = {
		{ "gpu[1-", "'[' in 'gpu[1-' is never closed", -EINVAL },
		{ "gpu[]", "empty brackets", -EINVAL },
		{ "gpu[3-1]", "range runs backwards", -EINVAL },
		{ "gpu[a-b]", "a range is digits", -EINVAL },
		{ "gpu[1,]", "a range is digits", -EINVAL },
		{ "gpu[-3]", "a range is digits", -EINVAL },
		{ "bgl[123x456]", "a range is digits", -EINVAL }, /* BlueGene boxes: not here */
		{ "gpu[[1]]", "brackets do not nest", -EINVAL },
		{ "a,,b", "empty name before a comma", -EINVAL },
		{ "a,", "empty name after the last comma", -EINVAL },
		{ "", "empty", -EINVAL },
		{ "n[0-70000]", "more than 65536 names", -E2BIG },
		{ "a[0-300]b[0-300]", "more than 65536 names", -E2BIG },
	};
	struct hostlist hl = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(hostlist_expand(&hl, "a[1-2]b[3-4]", err, sizeof(err)), 0);
	assert_int_equal(hl.n, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(hl.names[i], all[i]);
	hostlist_free(&hl);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(hostlist_expand(&hl, bad[i].expr, err, sizeof(err)), bad[i].r);
		if (!strstr(err, bad[i].msg))
			fprintf(stderr, "%s: got '%s'\n", bad[i].expr, err);
		assert_non_null(strstr(err, bad[i].msg));
		/* the message names the expression */
		assert_non_null(strstr(err, bad[i].expr));
		hostlist_free(&hl);
	}
}

/* ---- synthetic nodes ---- */

#define MAXN 8

struct set {
	struct node_model m[MAXN];
	struct fleet_node n[MAXN];
	char names[MAXN][16];
	size_t count;
};

/* A node with one RoCE netdev eth2 (MTU mtu, or absent when mtu < 0) and its port mlx5_0/1. */
static void add_node(struct set *s, int mtu, int64_t rate0, int64_t rate1)
{
	size_t i = s->count++;
	struct node_model *m = &s->m[i];
	struct object *nd, *p;

	model_init(m);
	snprintf(s->names[i], sizeof(s->names[i]), "n%zu", i);
	strlcpy0(m->host, s->names[i], sizeof(m->host));
	nd = model_add_netdev(m, "eth2");
	model_add_netdev(m, "eno1"); /* no RDMA: not a unit of `when: rdma` rules */
	if (mtu >= 0)
		field_set_int(nd, F_NETDEV_MTU, mtu);
	else
		field_absent(nd, F_NETDEV_MTU, ABS_ERROR, EIO);
	field_set_str(nd, F_NETDEV_TRUST, "dscp");
	p = model_add_port(m, "mlx5_0", 1);
	field_set_str(p, F_PORT_NETDEV, "eth2");
	field_set_int(p, F_PORT_RATE, rate0);
	if (rate1) {
		struct object *p1 = model_add_port(m, "mlx5_1", 1);

		field_set_int(p1, F_PORT_RATE, rate1);
	}
	field_set_int(&m->node, F_NODE_RDMA_DEVICES, rate1 ? 2 : 1);
	model_link_ports(m);
	s->n[i].name = s->names[i];
	s->n[i].m = m;
}

static void set_free(struct set *s)
{
	for (size_t i = 0; i < s->count; i++)
		model_free(&s->m[i]);
}

static const char fleet_yaml[] =
    "profile: t\n"
    "params: { most: 1 }\n"
    "rules:\n"
    "  - name: mtu\n"
    "    scope: fleet\n"
    "    each: netdev\n"
    "    when: rdma\n"
    "    expr: distinct(mtu) == 1\n"
    "    severity: critical\n"
    "    doc: d\n"
    "  - name: few_outliers\n"
    "    scope: fleet\n"
    "    each: netdev\n"
    "    when: rdma\n"
    "    expr: outliers(mtu) <= $most && majority(mtu) >= 4200\n"
    "    summary: \"majority {majority(mtu)}, {outliers(mtu)} outliers on {count_nodes()} nodes\"\n"
    "    severity: warning\n"
    "    doc: d\n"
    "  - name: big_mtu\n"
    "    scope: fleet\n"
    "    each: netdev\n"
    "    when: rdma\n"
    "    expr: majority(mtu) >= 4200\n"
    "    severity: warning\n"
    "    doc: d\n"
    "  - name: rail_speed\n"
    "    scope: fleet\n"
    "    each: rdma_port\n"
    "    by: rail\n"
    "    expr: distinct(rate) == 1\n"
    "    severity: critical\n"
    "    doc: d\n"
    "  - name: outcome\n"
    "    scope: fleet\n"
    "    when: supported(profile_outcome)\n"
    "    expr: distinct(profile_outcome) == 1\n"
    "    severity: warning\n"
    "    doc: d\n"
    "  - name: node_rule\n"
    "    scope: netdev\n"
    "    expr: mtu > 0\n"
    "    severity: info\n"
    "    doc: d\n";

static struct rules_engine *load(const char *yaml)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	int r = rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg);

	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "%s\n", line);
	}
	assert_int_equal(r, 0);
	rules_diags_free(&dg);
	return e;
}

static const struct fleet_result *result(const struct rules_engine *e, const char *rule,
					 const char *group)
{
	const struct fleet_result *res;
	size_t n = rules_fleet_results(e, &res);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(res[i].rule->name, rule) && !strcmp(res[i].group, group))
			return &res[i];
	fail_msg("no result for %s [%s]", rule, group);
	return NULL;
}

static void expect_detail(const struct set *s, const struct fleet_result *x, const char *want)
{
	char buf[1024];

	rules_fleet_describe(x, s->n, 10, buf, sizeof(buf));
	if (strcmp(buf, want))
		fprintf(stderr, "want: %s\n got: %s\n", want, buf);
	assert_string_equal(buf, want);
}

static void fleet_all_equal(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	for (int i = 0; i < 3; i++)
		add_node(&s, 9000, 400000, 0);
	assert_int_equal(rules_fleet_count(e), 5);
	assert_int_equal(rules_node_count(e), 1);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	assert_int_equal(x->outcome, RULE_PASS);
	assert_int_equal(x->n_values, 1);
	assert_int_equal(x->majority, 0);
	assert_int_equal(x->n_units, 3); /* eno1 has no RDMA: not a unit */
	assert_int_equal(x->n_nodes, 3);
	assert_true(x->per_node);
	expect_detail(&s, x, "3 nodes 9000");
	x = result(e, "few_outliers", "");
	assert_int_equal(x->outcome, RULE_PASS);
	assert_string_equal(x->summary, "majority 9000, 0 outliers on 3 nodes");
	assert_int_equal(result(e, "rail_speed", "rail 0")->outcome, RULE_PASS);
	/* no node outcome given: the rule has no unit and is skipped, with the reason */
	x = result(e, "outcome", "");
	assert_int_equal(x->outcome, RULE_SKIP);
	assert_string_equal(x->reason, "guard false on every node: supported(profile_outcome)");
	rules_free(e);
	set_free(&s);
}

static void fleet_one_outlier(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	add_node(&s, 9000, 400000, 0);
	add_node(&s, 9000, 400000, 0);
	add_node(&s, 1500, 400000, 0);
	add_node(&s, 9000, 400000, 0);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	assert_int_equal(x->outcome, RULE_FAIL);
	assert_int_equal(x->n_values, 2);
	assert_int_equal(x->majority, 0);
	assert_string_equal(x->values[0].text, "9000");
	assert_int_equal(x->values[0].n_units, 3);
	assert_string_equal(x->values[1].text, "1500");
	assert_int_equal(x->values[1].n_units, 1);
	assert_int_equal(x->values[1].units[0].node, 2);
	assert_string_equal(x->values[1].units[0].object, "eth2");
	expect_detail(&s, x, "3 nodes 9000, n2 1500");
	/* one outlier is allowed by $most, and the majority is large enough */
	x = result(e, "few_outliers", "");
	assert_int_equal(x->outcome, RULE_PASS);
	assert_string_equal(x->summary, "majority 9000, 1 outliers on 4 nodes");
	rules_free(e);
	set_free(&s);
}

static void fleet_tie(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	add_node(&s, 9000, 400000, 0);
	add_node(&s, 1500, 400000, 0);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	/* 1 against 1: no side is presumed right, both are named */
	assert_int_equal(x->outcome, RULE_FAIL);
	assert_int_equal(x->majority, -1);
	expect_detail(&s, x, "no majority: n1 1500, n0 9000");
	/* in a tie every unit is an outlier */
	assert_int_equal(result(e, "few_outliers", "")->outcome, RULE_FAIL);
	/* majority() of a tie is unknown, so is a rule that needs it */
	x = result(e, "big_mtu", "");
	assert_int_equal(x->outcome, RULE_UNKNOWN);
	assert_string_equal(x->reason,
			    "majority(mtu): no majority (a tie between the most common values)");
	rules_free(e);
	set_free(&s);

	/* a bigger tie: counts, with names as far as they fit */
	memset(&s, 0, sizeof(s));
	e = load(fleet_yaml);
	for (int i = 0; i < 6; i++)
		add_node(&s, i % 2 ? 1500 : 9000, 400000, 0);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	assert_int_equal(x->majority, -1);
	{
		char buf[512];

		rules_fleet_describe(x, s.n, 4, buf, sizeof(buf));
		assert_string_equal(buf, "no majority: 3 nodes 1500 (n1, n3, n5), 3 nodes 9000 "
					 "(n0, and 2 more)");
	}
	rules_free(e);
	set_free(&s);
}

static void fleet_node_unknown(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	add_node(&s, 9000, 400000, 0);
	add_node(&s, 9000, 400000, 0);
	add_node(&s, 9000, 400000, 0);
	s.n[1].m = NULL; /* it did not answer: not compared (the command reports it) */
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	assert_int_equal(x->outcome, RULE_PASS);
	assert_int_equal(x->n_nodes, 2);
	expect_detail(&s, x, "2 nodes 9000");
	/* no node answered at all */
	for (size_t i = 0; i < s.count; i++)
		s.n[i].m = NULL;
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	assert_int_equal(x->outcome, RULE_SKIP);
	assert_string_equal(x->reason, "no node answered");
	rules_free(e);
	set_free(&s);
}

static void fleet_unit_unknown(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	add_node(&s, 9000, 400000, 0);
	add_node(&s, -1, 400000, 0); /* its MTU could not be read */
	add_node(&s, 9000, 400000, 0);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	/* the known values agree, but n1 could still differ: unknown, not pass */
	assert_int_equal(x->outcome, RULE_UNKNOWN);
	assert_int_equal(x->n_unknown, 1);
	assert_string_equal(x->unknown[0].reason, "mtu absent: error (Input/output error)");
	assert_string_equal(x->reason,
			    "1 of 3 units unknown (n1: mtu absent: error (Input/output error))");
	expect_detail(&s, x, "2 nodes 9000; unknown: n1 (mtu absent: error (Input/output error))");
	rules_free(e);
	set_free(&s);

	/* no known value at all (a driver without the field on every node): unknown, not a pass */
	memset(&s, 0, sizeof(s));
	e = load(fleet_yaml);
	add_node(&s, -1, 400000, 0);
	add_node(&s, -1, 400000, 0);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "mtu", "");
	assert_int_equal(x->outcome, RULE_UNKNOWN);
	assert_int_equal(x->n_values, 0);
	assert_int_equal(x->majority, -1);
	assert_string_equal(
	    x->reason, "no unit has a known value (n0: mtu absent: error (Input/output error))");
	expect_detail(&s, x,
		      "unknown: n0 (mtu absent: error (Input/output error)), n1 (mtu absent: error "
		      "(Input/output error))");
	rules_free(e);
	set_free(&s);

	/* the known values already differ: a failure whatever the unknown one is */
	memset(&s, 0, sizeof(s));
	e = load(fleet_yaml);
	add_node(&s, 9000, 400000, 0);
	add_node(&s, -1, 400000, 0);
	add_node(&s, 1500, 400000, 0);
	add_node(&s, 9000, 400000, 0);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	assert_int_equal(result(e, "mtu", "")->outcome, RULE_FAIL);
	rules_free(e);
	set_free(&s);
}

static void fleet_rails(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	add_node(&s, 9000, 400000, 400000);
	add_node(&s, 9000, 400000, 200000); /* rail 1 trained at 200G */
	add_node(&s, 9000, 400000, 400000);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	assert_int_equal(result(e, "rail_speed", "rail 0")->outcome, RULE_PASS);
	x = result(e, "rail_speed", "rail 1");
	assert_int_equal(x->outcome, RULE_FAIL);
	expect_detail(&s, x, "2 nodes 400000, n1 200000");
	rules_free(e);
	set_free(&s);
}

/* Every result as one line: what a report shows of it. */
static size_t result_lines(const struct rules_engine *e, const struct set *s, char out[][1536])
{
	const struct fleet_result *res;
	size_t n = rules_fleet_results(e, &res);

	for (size_t i = 0; i < n; i++) {
		char d[384];

		rules_fleet_describe(&res[i], s->n, 10, d, sizeof(d));
		snprintf(out[i], 1536, "%s [%s] %s | %s | %s | %s", res[i].rule->name, res[i].group,
			 rule_outcome_name(res[i].outcome), d, res[i].summary, res[i].reason);
	}
	return n;
}

/*
 * Nodes added one at a time, in any order, each model freed as soon as it
 * is added (fleet check's way): the same results, in the same order, as all
 * nodes evaluated at once; summaries that print a majority string still do.
 */
static void fleet_streamed_any_order(void **state)
{
	static const char extra[] = "  - name: trust\n"
				    "    scope: fleet\n"
				    "    each: netdev\n"
				    "    when: rdma\n"
				    "    expr: distinct(trust) == 1\n"
				    "    summary: \"trust {majority(trust)}\"\n"
				    "    severity: warning\n"
				    "    doc: d\n";
	static const int mtu[] = { 9000, -1, 1500, 9000, 9000, 4200 };
	static const int64_t rate1[] = { 0, 0, 400000, 200000, 400000, 400000 };
	char yaml[sizeof(fleet_yaml) + sizeof(extra)];
	char want[16][1536], got[16][1536];
	struct rules_engine *e;
	struct set s = { 0 };
	size_t nw, ng;

	(void)state;
	snprintf(yaml, sizeof(yaml), "%s%s", fleet_yaml, extra);
	for (int i = 0; i < 6; i++)
		add_node(&s, mtu[i], 400000, rate1[i]);
	e = load(yaml);
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	nw = result_lines(e, &s, want);
	assert_true(nw >= 6 && nw < 16);
	rules_free(e);

	e = load(yaml);
	assert_int_equal(rules_fleet_begin(e, 0), 0);
	for (size_t k = s.count; k-- > 0;) {
		assert_int_equal(rules_fleet_add(e, k, &s.n[k]), 0);
		/* the model is gone, its memory reused: the units must not point into it */
		model_free(&s.m[k]);
		memset(&s.m[k], 0x5a, sizeof(s.m[k]));
		model_init(&s.m[k]);
		s.n[k].m = NULL;
	}
	assert_int_equal(rules_fleet_finish(e, s.n, s.count), 0);
	ng = result_lines(e, &s, got);
	assert_int_equal(ng, nw);
	for (size_t i = 0; i < nw; i++)
		assert_string_equal(got[i], want[i]);
	assert_non_null(strstr(want[nw - 1], "| trust dscp |"));
	rules_free(e);
	set_free(&s);
}

/*
 * majority() of a value held by pointer (a DSCP map): the values of a group
 * are sorted by count after they are gathered, so the majority seen second
 * moves to the front; it must still read its own map, not the slot it left.
 */
static void fleet_majority_of_a_map(void **state)
{
	static const char yaml[] = "profile: t\n"
				   "rules:\n"
				   "  - name: dscp26\n"
				   "    scope: fleet\n"
				   "    each: netdev\n"
				   "    when: rdma\n"
				   "    expr: majority(dscp2prio)[26] == 3\n"
				   "    summary: \"DSCP 26 -> {majority(dscp2prio)[26]}\"\n"
				   "    severity: warning\n"
				   "    doc: d\n";
	struct rules_engine *e = load(yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	for (int i = 0; i < 3; i++) {
		int8_t map[RW_DSCP_COUNT];

		add_node(&s, 9000, 400000, 0);
		memset(map, -1, sizeof(map));
		map[26] = i == 0 ? 0 : 3; /* n0 first, alone; n1 and n2 the majority */
		field_set_dscp_map(model_netdev(&s.m[i], "eth2"), F_NETDEV_DSCP_MAP, map);
	}
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "dscp26", "");
	assert_int_equal(x->n_values, 2);
	assert_int_equal(x->majority, 0);
	assert_string_equal(x->summary, "DSCP 26 -> 3");
	assert_int_equal(x->outcome, RULE_PASS);
	rules_free(e);
	set_free(&s);
}

static void fleet_profile_outcome(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct fleet_result *x;
	struct set s = { 0 };

	(void)state;
	for (int i = 0; i < 3; i++)
		add_node(&s, 9000, 400000, 0);
	s.n[0].outcome = "OK";
	s.n[1].outcome = "CRITICAL: netdev_mtu";
	s.n[2].outcome = "OK";
	assert_int_equal(rules_evaluate_fleet(e, s.n, s.count, 0), 0);
	x = result(e, "outcome", "");
	assert_int_equal(x->outcome, RULE_FAIL);
	expect_detail(&s, x, "2 nodes \"OK\", n1 \"CRITICAL: netdev_mtu\"");
	rules_free(e);
	set_free(&s);
}

/* Node rules and fleet rules in one engine: each evaluation sees only its own. */
static void fleet_and_node_rules_apart(void **state)
{
	struct rules_engine *e = load(fleet_yaml);
	const struct rule_result *res;
	struct set s = { 0 };
	size_t n;

	(void)state;
	add_node(&s, 9000, 400000, 0);
	assert_int_equal(rules_evaluate(e, &s.m[0], 0), 0);
	n = rules_results(e, &res);
	assert_int_equal(n, 2); /* node_rule on eth2 and eno1; no fleet rule */
	for (size_t i = 0; i < n; i++)
		assert_string_equal(res[i].rule->name, "node_rule");
	rules_reset(e);
	assert_int_equal(rules_results(e, &res), 0);
	rules_free(e);
	set_free(&s);
}

static void expect_load_error(const char *rule, const char *want)
{
	char yaml[2048], line[1024] = "";
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;

	snprintf(yaml, sizeof(yaml), "profile: t\nrules:\n  - name: r\n%s    severity: warning\n",
		 rule);
	assert_int_not_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg), 0);
	assert_null(e);
	for (size_t i = 0; i < dg.n; i++)
		if (!dg.d[i].warning) {
			rules_diag_format(&dg.d[i], line, sizeof(line));
			break;
		}
	if (strcmp(line, want))
		fprintf(stderr, "want: %s\n got: %s\n", want, line);
	assert_string_equal(line, want);
	rules_diags_free(&dg);
}

static void fleet_load_errors(void **state)
{
	(void)state;
	/* "    expr: " is 10 columns */
	expect_load_error("    scope: fleet\n    each: netdev\n    expr: mtu == 9000\n",
			  "t.yaml:6:11: error: expr: a fleet rule reads 'mtu' through distinct(), "
			  "majority() or outliers(), which compare it across nodes");
	expect_load_error(
	    "    scope: fleet\n    each: netdev\n    expr: distinct(mtu) == 1 && distinct(speed) "
	    "== "
	    "1\n",
	    "t.yaml:6:42: error: expr: a fleet rule compares one value: 'speed' here, 'mtu' before "
	    "(write one rule per value)");
	expect_load_error("    scope: fleet\n    each: netdev\n    expr: count_nodes() > 1\n",
			  "t.yaml:6:11: error: expr: a fleet rule compares a value across nodes "
			  "with distinct(), majority() or outliers()");
	expect_load_error("    scope: fleet\n    each: netdev\n    when: distinct(mtu) == 1\n"
			  "    expr: distinct(mtu) == 1\n",
			  "t.yaml:6:11: error: when: distinct() compares units across nodes: only "
			  "at the top of a fleet rule's expr or summary (not inside when or "
			  "another aggregate)");
	expect_load_error("    scope: fleet\n    each: netdev\n    expr: distinct(distinct(mtu)) "
			  "== 1\n",
			  "t.yaml:6:20: error: expr: distinct() compares units across nodes: only "
			  "at the top of a fleet rule's expr or summary (not inside when or "
			  "another aggregate)");
	expect_load_error(
	    "    scope: fleet\n    each: netdev\n    expr: distinct(increase(mtu, 5m)) == 1\n",
	    "t.yaml:6:20: error: expr: increase(): a fleet rule sees one sample per node, so no "
	    "counter history");
	expect_load_error(
	    "    scope: fleet\n    each: rdma_port\n    expr: distinct(gids) == 1\n",
	    "t.yaml:6:20: error: expr: distinct(): a GID table is not compared across "
	    "nodes");
	expect_load_error("    scope: netdev\n    each: netdev\n    expr: mtu > 0\n",
			  "t.yaml:5:11: error: each: only fleet rules (scope: fleet) have it");
	expect_load_error("    scope: fleet\n    by: rail\n    expr: distinct(rdma_devices) == 1\n",
			  "t.yaml:5:9: error: by: a node has one unit per node; group netdevs or "
			  "rdma_ports");
	expect_load_error("    scope: fleet\n    each: port\n    expr: distinct(rate) == 1\n",
			  "t.yaml:5:11: error: each must be node, netdev or rdma_port, not 'port'");
	expect_load_error(
	    "    scope: fleet\n    each: netdev\n    when: profile_outcome == \"OK\"\n"
	    "    expr: distinct(mtu) == 1\n",
	    "t.yaml:6:11: error: when: profile_outcome is the node's own profile "
	    "outcome: only in a fleet rule with each: node");
	expect_load_error("    scope: netdev\n    expr: distinct(mtu) == 1\n",
			  "t.yaml:5:11: error: expr: distinct() compares units across nodes: only "
			  "at the top of a fleet rule's expr or summary");
	expect_load_error("    scope: fleet\n    each: netdev\n    expr: distinct(mtu) == 1\n"
			  "    summary: \"{mtu}\"\n",
			  "t.yaml:7:16: error: summary: a fleet rule reads 'mtu' through "
			  "distinct(), majority() or outliers(), which compare it across nodes");
}

/* The shipped profile loads, and every rule in it is a fleet rule with a doc. */
static void fleet_shipped_profile(void **state)
{
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	bool used[F__COUNT];

	(void)state;
	assert_int_equal(rules_spec_add_profile(&spec, "fleet"), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	assert_int_equal(dg.n, 0);
	assert_int_equal(rules_fleet_count(e), rules_count(e));
	assert_true(rules_count(e) >= 12);
	for (size_t i = 0; i < rules_count(e); i++)
		assert_true(rules_rule(e, i)->doc[0]);
	rules_fields_used(e, used);
	assert_true(used[F_NETDEV_MTU] && used[F_PORT_ACTIVE_MTU] && used[F_NETDEV_RDMA] &&
		    used[F_PORT_ROCEV2_IPV4_GID_INDEX] && used[F_PORT_RATE]);
	assert_false(used[F_NETDEV_PFC_RX_PAUSE]);
	rules_free(e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
}

/* Two RDMA netdevs and their ports, given a host name and an MTU for eth3 (digest cases). */
static void digest_model(struct node_model *m, const char *host, int64_t mtu3, bool reversed)
{
	const char *nd[2] = { "eth2", "eth3" }, *dev[2] = { "mlx5_0", "mlx5_1" };

	model_init(m);
	strlcpy0(m->host, host, sizeof(m->host));
	field_set_int(&m->node, F_NODE_RDMA_DEVICES, 2);
	for (int k = 0; k < 2; k++) {
		int i = reversed ? 1 - k : k;
		struct object *n = model_add_netdev(m, nd[i]), *p = model_add_port(m, dev[i], 1);

		field_set_bool(n, F_NETDEV_RDMA, true);
		field_set_int(n, F_NETDEV_MTU, i ? mtu3 : 9000);
		field_set_set(n, F_NETDEV_PFC_ENABLED, 1u << 3);
		field_set_int(p, F_PORT_ACTIVE_MTU, 4096);
		field_set_str(p, F_PORT_FW, "28.39.1002");
		/* a GUID differs on every node: not covered */
		field_set_str(p, F_PORT_NODE_GUID,
			      i ? "b8ce:f603:00aa:0001" : "b8ce:f603:00aa:0000");
	}
}

/*
 * The fleet digest (src/core/fleet_digest.c): the same for nodes alike
 * whatever their names, GUIDs, other netdevs or the order their model was
 * built in; another for a covered fact that differs.  And the shipped fleet
 * profile reads nothing the digest leaves out, and its netdev rules see RDMA
 * netdevs only: else fleet check --job could not let one node stand for another.
 */
static void fleet_digest_alike(void **state)
{
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	struct node_model a, b;
	char da[FLEET_DIGEST_HEX + 1], db[FLEET_DIGEST_HEX + 1];
	bool used[F__COUNT];

	(void)state;
	digest_model(&a, "gpu001", 9000, false);
	digest_model(&b, "gpu002", 9000, true);
	field_set_str(model_port(&b, "mlx5_0", 1), F_PORT_NODE_GUID, "0c42:a103:0001:0000");
	field_set_int(model_add_netdev(&b, "veth1a2b3c"), F_NETDEV_MTU, 1500);
	assert_int_equal(fleet_digest(&a, da), 0);
	assert_int_equal(fleet_digest(&b, db), 0);
	assert_int_equal(strlen(da), FLEET_DIGEST_HEX);
	assert_string_equal(da, db);
	model_free(&b);
	digest_model(&b, "gpu002", 1500, false);
	assert_int_equal(fleet_digest(&b, db), 0);
	assert_string_not_equal(da, db);
	model_free(&b);
	digest_model(&b, "gpu002", 9000, false);
	field_set_str(model_port(&b, "mlx5_1", 1), F_PORT_FW, "28.40.1000");
	assert_int_equal(fleet_digest(&b, db), 0);
	assert_string_not_equal(da, db);
	model_free(&a);
	model_free(&b);
	assert_int_equal(strlen(fleet_digest_schema()), FLEET_DIGEST_HEX);

	assert_int_equal(rules_spec_add_profile(&spec, "fleet"), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	rules_fields_used(e, used);
	for (int id = 0; id < F__COUNT; id++)
		if (used[id] && fields[id].metric && fields[id].mtype != MT_NONE &&
		    !fleet_digest_field(id))
			fail_msg(
			    "the fleet profile reads %s, which the fleet digest does not cover",
			    fields[id].path);
	for (size_t k = 0; k < rules_fleet_count(e); k++)
		assert_true(rules_fleet_rdma_netdevs(e, k));
	rules_free(e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
}

/* A body that is not a snapshot: the error names the node and the place. */
static void snapshot_from_buffer(void **state)
{
	static const char garbage[] = "<html>oops</html>";
	static const char wrong[] = "{\"schema\": \"other\"}";
	static const char empty[] = "[]";
	struct node_model m;
	char err[512];

	(void)state;
	model_init(&m);
	assert_int_equal(
	    snapshot_read_last("gpu017", garbage, strlen(garbage), 0, &m, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "gpu017:1:1: "));
	assert_int_equal(
	    snapshot_read_last("gpu018", wrong, strlen(wrong), 0, &m, err, sizeof(err)), -EINVAL);
	assert_string_equal(
	    err, "gpu018: $: not a rocewatch snapshot (schema must be \"rocewatch-snapshot\")");
	assert_int_equal(
	    snapshot_read_last("gpu019", empty, strlen(empty), 0, &m, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "gpu019: $: empty snapshot sequence");
	model_free(&m);
}

#define SNAP_HEAD "{\"schema\":\"rocewatch-snapshot\",\"schema_version\":2,\"host\":\"h\","
#define SNAP_NODE "\"node\":{\"fields\":{},\"absent\":{}},\"rdma_ports\":[],"

/* Counter sets left out of the model are still validated; the last sample of an array wins. */
static void snapshot_without_counters(void **state)
{
	static const char good[] =
	    "[" SNAP_HEAD SNAP_NODE "\"netdevs\":[{\"name\":\"eth2\",\"fields\":{\"mtu\":1500},"
	    "\"counters\":{\"ethtool\":{\"a\":1,\"b\":2}}}]}," SNAP_HEAD SNAP_NODE
	    "\"netdevs\":[{\"name\":\"eth2\",\"fields\":{\"mtu\":9000},"
	    "\"counters\":{\"ethtool\":{\"a\":3,\"b\":4}}}]}]";
	static const char bad[] =
	    SNAP_HEAD SNAP_NODE "\"netdevs\":[{\"name\":\"eth2\",\"fields\":{},"
				"\"counters\":{\"ethtool\":{\"a\":-1}}}]}";
	struct node_model m;
	char err[512] = "";

	(void)state;
	model_init(&m);
	assert_int_equal(snapshot_read_last("n", good, strlen(good), 0, &m, err, sizeof(err)), 0);
	assert_int_equal(m.netdevs[0]->f[F_NETDEV_MTU].v.i, 9000);
	assert_int_equal(m.netdevs[0]->cs[CSET_ETHTOOL].n, 2);
	assert_int_equal(
	    m.netdevs[0]->cs[CSET_ETHTOOL].vals[cset_find(&m.netdevs[0]->cs[CSET_ETHTOOL], "b")],
	    4);
	model_free(&m);
	model_init(&m);
	assert_int_equal(
	    snapshot_read_last("n", good, strlen(good), SNAPSHOT_NO_COUNTERS, &m, err, sizeof(err)),
	    0);
	assert_int_equal(m.netdevs[0]->cs[CSET_ETHTOOL].n, 0);
	model_free(&m);
	model_init(&m);
	assert_int_equal(
	    snapshot_read_last("n", bad, strlen(bad), SNAPSHOT_NO_COUNTERS, &m, err, sizeof(err)),
	    -EINVAL);
	assert_string_equal(err, "n: $.netdevs[0].counters.ethtool: counter 'a': expected a "
				 "non-negative integer");
	model_free(&m);
}

/* A Prometheus answer read by hand: escapes, key order, IPv6 instances, DSCP maps, errors. */
static void prometheus_answers(void **state)
{
	static const char mtu[] =
	    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
	    "{\"metric\":{\"device\":\"eth\\u0030\",\"instance\":\"n\\u0031:9479\","
	    "\"x\":\"\\ud83d\\ude00 \\\"q\\\" \\\\\"},\"value\":[1.5,\"9000\"]},"
	    "{\"value\":[1,\"1500\"],\"metric\":{\"instance\":\"n2:9479\",\"device\":\"eth0\"}},"
	    "{\"metric\":{\"instance\":\"other:9479\",\"device\":\"eth0\"},\"value\":[1,\"1\"]}"
	    "]}}";
	/* encoded as fleet check asks: (priority + 1) * 9^(dscp mod 16), a number per 16 DSCPs */
	static const char dscp[] =
	    "{\"status\":\"success\",\"data\":{\"result\":["
	    "{\"metric\":{\"device\":\"eth0\",\"rocewatch_dscp_group\":\"1\","
	    "\"instance\":\"[::1]:9479\"},\"value\":[1,\"13947137604\"]},"
	    "{\"metric\":{\"device\":\"eth0\",\"rocewatch_dscp_group\":\"3\","
	    "\"instance\":\"[::1]:9479\"},\"value\":[1,\"7\"]}],\"resultType\":\"vector\"}}";
	/* a priority set as a bitmask, and one number the encoding cannot give */
	static const char pfc[] = "{\"status\":\"success\",\"data\":{\"result\":["
				  "{\"metric\":{\"device\":\"eth0\",\"instance\":\"n1:9479\"},"
				  "\"value\":[1,\"8\"]}]}}";
	static const char pfc_bad[] = "{\"status\":\"success\",\"data\":{\"result\":["
				      "{\"metric\":{\"device\":\"eth0\",\"instance\":\"n1:9479\"},"
				      "\"value\":[1,\"8.5\"]}]}}";
	static const char error[] = "{\"status\":\"error\",\"errorType\":\"bad_data\","
				    "\"error\":\"1:1: parse error\"}";
	const char *names[] = { "n1", "n2", "[::1]" };
	struct fleet_prom_node nodes[3];
	struct node_model m[3];
	const struct object *o;
	char err[256];

	(void)state;
	for (int i = 0; i < 3; i++) {
		model_init(&m[i]);
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].name = names[i];
		nodes[i].m = &m[i];
	}
	assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", mtu, strlen(mtu), 0, nodes, 3,
					 err, sizeof(err)),
			 0);
	assert_true(nodes[0].found);
	assert_string_equal(nodes[0].instance, "n1:9479"); /* \u0031 decoded */
	o = model_netdev(&m[0], "eth0");
	assert_non_null(o);
	assert_int_equal(o->f[F_NETDEV_MTU].v.i, 9000);
	assert_int_equal(model_netdev(&m[1], "eth0")->f[F_NETDEV_MTU].v.i, 1500);
	assert_false(nodes[2].found);

	assert_int_equal(fleet_prom_read("roce_dscp_priority", dscp, strlen(dscp), 0, nodes, 3, err,
					 sizeof(err)),
			 0);
	o = model_netdev(&m[2], "eth0");
	assert_non_null(o);
	assert_int_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp[26], 3);
	assert_int_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp[48], 6);
	assert_int_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp[0], -1);
	assert_int_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp[25], -1);

	assert_int_equal(
	    fleet_prom_read("roce_pfc_enabled", pfc, strlen(pfc), 0, nodes, 3, err, sizeof(err)),
	    0);
	assert_int_equal(model_netdev(&m[0], "eth0")->f[F_NETDEV_PFC_ENABLED].v.set, 1u << 3);
	assert_int_equal(fleet_prom_read("roce_pfc_enabled", pfc_bad, strlen(pfc_bad), 0, nodes, 3,
					 err, sizeof(err)),
			 -ERANGE);
	assert_non_null(strstr(err, "query roce_pfc_enabled"));

	assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", error, strlen(error), 0, nodes, 3,
					 err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "Prometheus: query roce_netdev_mtu_bytes: 1:1: parse error");
	assert_int_equal(
	    fleet_prom_read("roce_netdev_mtu_bytes", mtu, 100, 0, nodes, 3, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "query roce_netdev_mtu_bytes: invalid JSON"));
	for (int i = 0; i < 3; i++)
		model_free(&m[i]);
}

/*
 * The compact DSCP map and PFC set (one series per netdev, the whole value in
 * a label), as serve exports them: every map a model can hold reads back
 * exactly, through the text and through an answer, and anything else is an
 * error naming the query and the node.
 */
static void prometheus_compact_answers(void **state)
{
	static const char head[] = "{\"status\":\"success\",\"data\":{\"result\":[";
	const char *names[] = { "n1", "n2" };
	struct fleet_prom_node nodes[2];
	struct node_model m[2], src;
	struct object *o, *so;
	struct strbuf body = { 0 };
	char err[256], text[RW_DSCP_COUNT + 1];
	int8_t map[RW_DSCP_COUNT];

	(void)state;
	model_init(&src);
	so = model_add_netdev(&src, "eth0");
	/* every priority and unmapped, in a pattern no two DSCPs repeat in step */
	for (int d = 0; d < RW_DSCP_COUNT; d++)
		map[d] = (int8_t)(d * 7 % 9 == 8 ? -1 : d * 7 % 9);
	field_set_dscp_map(so, F_NETDEV_DSCP_MAP, map);
	field_set_set(so, F_NETDEV_PFC_ENABLED, 0x89);
	assert_int_equal(
	    field_compact_text(&so->f[F_NETDEV_DSCP_MAP], VT_DSCP_MAP, text, sizeof(text)), 0);
	assert_int_equal(strlen(text), 64);
	assert_int_equal(text[5], '-');
	assert_int_equal(text[1], '7');
	assert_int_equal(
	    field_compact_text(&so->f[F_NETDEV_DSCP_MAP], VT_DSCP_MAP, text, RW_DSCP_COUNT),
	    -EINVAL);
	for (int i = 0; i < 2; i++) {
		model_init(&m[i]);
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].name = names[i];
		nodes[i].m = &m[i];
	}
	sb_puts(&body, head);
	field_compact_text(&so->f[F_NETDEV_DSCP_MAP], VT_DSCP_MAP, text, sizeof(text));
	sb_printf(&body,
		  "{\"metric\":{\"__name__\":\"roce_dscp_map_info\",\"device\":\"eth0\","
		  "\"instance\":\"n1:9479\",\"map\":\"%s\"},\"value\":[1,\"1\"]}]}}",
		  text);
	assert_int_equal(fleet_prom_read("roce_dscp_map_info", body.buf, body.len, 0, nodes, 2, err,
					 sizeof(err)),
			 0);
	o = model_netdev(&m[0], "eth0");
	assert_non_null(o);
	assert_int_equal(o->f[F_NETDEV_DSCP_MAP].state, ABS_NONE);
	assert_memory_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp, map, sizeof(map));
	assert_false(nodes[1].found);

	sb_reset(&body);
	sb_puts(&body, head);
	field_compact_text(&so->f[F_NETDEV_PFC_ENABLED], VT_PRIOSET, text, sizeof(text));
	assert_string_equal(text, "10010001");
	sb_printf(
	    &body,
	    "{\"metric\":{\"device\":\"eth0\",\"instance\":\"n2:9479\",\"priorities\":\"%s\"},"
	    "\"value\":[1,\"1\"]}]}}",
	    text);
	assert_int_equal(fleet_prom_read("roce_pfc_enabled_info", body.buf, body.len, 0, nodes, 2,
					 err, sizeof(err)),
			 0);
	assert_int_equal(model_netdev(&m[1], "eth0")->f[F_NETDEV_PFC_ENABLED].v.set, 0x89);

	/* 63 characters, a priority 8, an escape, a missing label: errors, never a map */
	static const char *const bad[] = {
		"\"map\":\"000000001111111122222222333333334444444455555555666666667777777\"",
		"\"map\":\"0000000011111111222222223333333344444444555555556666666677777778\"",
		"\"map\":\"\\u001b[2J\"",
		"\"mapx\":\"0000000011111111222222223333333344444444555555556666666677777777\"",
	};
	static const char *const why[] = {
		"device eth1: "
		"map=\"000000001111111122222222333333334444444455555555666666667777777\" "
		"is not 64 characters 0-7 or -",
		"device eth1: "
		"map=\"0000000011111111222222223333333344444444555555556666666677777778\" "
		"is not 64 characters 0-7 or -",
		"device eth1: map=\"?[2J\" is not 64", /* the control byte made printable */
		"device eth1: no map label: not decoded",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		sb_reset(&body);
		sb_puts(&body, head);
		sb_printf(&body,
			  "{\"metric\":{\"device\":\"eth1\",\"instance\":\"n1:9479\",%s},"
			  "\"value\":[1,\"1\"]}]}}",
			  bad[i]);
		assert_int_equal(fleet_prom_read("roce_dscp_map_info", body.buf, body.len, 0, nodes,
						 2, err, sizeof(err)),
				 -ERANGE);
		assert_non_null(strstr(err, "Prometheus: query roce_dscp_map_info: n1:9479 "));
		assert_non_null(strstr(err, why[i]));
		assert_int_equal(
		    model_netdev(&m[0], "eth1")->f[F_NETDEV_DSCP_MAP].state != ABS_NONE, true);
	}
	sb_free(&body);
	model_free(&src);
	for (int i = 0; i < 2; i++)
		model_free(&m[i]);
}

/* Nodes n1, n2 for fleet_prom_read(), their models in m. */
static void prom_nodes(struct fleet_prom_node *nodes, struct node_model *m, size_t n)
{
	static const char *const names[] = { "n1", "n2", "[::1]" };

	for (size_t i = 0; i < n; i++) {
		model_init(&m[i]);
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].name = names[i];
		nodes[i].m = &m[i];
	}
}

static void prom_nodes_free(struct node_model *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		model_free(&m[i]);
}

/*
 * An answer as a transfer hands it over, in pieces of any size: the same
 * series read, the same errors at the same bytes, whatever the cuts.
 */
static void prometheus_answer_in_pieces(void **state)
{
	static const char mtu[] =
	    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[ "
	    "{\"metric\":{\"device\":\"eth\\u0030\",\"instance\":\"n\\u0031:9479\","
	    "\"x\":\"\\ud83d\\ude00 \\\"q\\\" \\\\\"},\"value\":[1.5,\"9000\"]} ,\n"
	    "{\"value\":[1,\"1500\"],\"metric\":{\"instance\":\"n2:9479\",\"device\":\"eth0\"}}"
	    " ]},\"warnings\":[\"a warning\"]}";
	static const char bad[] =
	    "{\"status\":\"success\",\"data\":{\"result\":["
	    "{\"metric\":{\"instance\":\"n2:9479\",\"device\":\"eth0\"},\"value\":[1,\"1\"]},"
	    "{\"metric\":{\"instance\":\"n1:9479\",\"device\":\"eth0\"},\"value\":[1,\"1\"]} x]}}";
	static const char error[] = "{\"status\":\"error\",\"errorType\":\"bad_data\","
				    "\"error\":\"1:1: parse error\"}";
	static const size_t pieces[] = { 0, 1, 2, 3, 7, 64, 1000 };
	struct fleet_prom_node nodes[2];
	struct node_model m[2];
	char err[256];

	(void)state;
	for (size_t p = 0; p < ARRAY_SIZE(pieces); p++) {
		prom_nodes(nodes, m, 2);
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", mtu, strlen(mtu),
						 pieces[p], nodes, 2, err, sizeof(err)),
				 0);
		assert_string_equal(nodes[0].instance, "n1:9479");
		assert_int_equal(model_netdev(&m[0], "eth0")->f[F_NETDEV_MTU].v.i, 9000);
		assert_int_equal(model_netdev(&m[1], "eth0")->f[F_NETDEV_MTU].v.i, 1500);
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", mtu, strlen(mtu) - 10,
						 pieces[p], nodes, 2, err, sizeof(err)),
				 -EINVAL);
		/* cut in what follows the result array: that is read whole, by jansson */
		assert_string_equal(err, "Prometheus: query roce_netdev_mtu_bytes: invalid JSON: "
					 "premature end of input near '\"a '");
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", mtu, 200, pieces[p],
						 nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(
		    err,
		    "Prometheus: query roce_netdev_mtu_bytes: invalid JSON: result is cut short");
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", bad, strlen(bad),
						 pieces[p], nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err,
				    "Prometheus: query roce_netdev_mtu_bytes: invalid JSON: byte "
				    "170 of the answer is neither ',' nor ']' after a series");
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", error, strlen(error),
						 pieces[p], nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err,
				    "Prometheus: query roce_netdev_mtu_bytes: 1:1: parse error");
		prom_nodes_free(m, 2);
	}
}

/*
 * What one series may hold: a label value of LABEL_MAX (4 KiB) bytes is
 * read, one byte more is refused naming the query and the label, however
 * the answer comes; a series that goes on past 256 KiB is refused before it
 * ends, and an envelope without a result array after 64 KiB.
 */
static void prometheus_answer_bounds(void **state)
{
	static const char head[] = "{\"status\":\"success\",\"data\":{\"result\":[";
	struct fleet_prom_node nodes[2];
	struct node_model m[2];
	struct strbuf body = { 0 }, v = { 0 };
	char err[320];

	(void)state;
	for (int i = 0; i < 4096; i++)
		sb_putc(&v, 'a');
	for (size_t piece = 0; piece <= 4096; piece += 4096) {
		prom_nodes(nodes, m, 2);
		sb_reset(&body);
		sb_printf(&body,
			  "%s{\"metric\":{\"instance\":\"n1:9479\",\"device\":\"eth0\","
			  "\"x\":\"%s\"},\"value\":[1,\"9000\"]}]}}",
			  head, v.buf);
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, piece,
						 nodes, 2, err, sizeof(err)),
				 0);
		assert_int_equal(model_netdev(&m[0], "eth0")->f[F_NETDEV_MTU].v.i, 9000);
		sb_reset(&body);
		/* one more byte, as an escape */
		sb_printf(&body,
			  "%s{\"metric\":{\"instance\":\"n1:9479\",\"dev\\u0069ce\":\"eth0\","
			  "\"x\":\"%s\\u0062\"},\"value\":[1,\"9000\"]}]}}",
			  head, v.buf);
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, piece,
						 nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err,
				    "Prometheus: query roce_netdev_mtu_bytes: a series at byte "
				    "38 (instance n1:9479): label x is longer than 4 KiB (no "
				    "label rocewatch reads is): refused");
		/* a series with a label of 300 KiB, cut before it ends: refused all the same */
		sb_reset(&body);
		sb_printf(&body, "%s{\"metric\":{\"x\":\"", head);
		for (int i = 0; i < 75; i++)
			sb_add(&body, v.buf, v.len);
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len,
						 piece ? piece : 1, nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err,
				    "Prometheus: query roce_netdev_mtu_bytes: a series at byte "
				    "38: label x is longer than 4 KiB (no label rocewatch reads "
				    "is): refused");
		/* 300 KiB of one series' whitespace */
		sb_reset(&body);
		sb_printf(&body, "%s{\"metric\":{}, ", head);
		for (int i = 0; i < 300 << 10; i++)
			sb_putc(&body, ' ');
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, piece,
						 nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err,
				    "Prometheus: query roce_netdev_mtu_bytes: a series at byte "
				    "38 is longer than 256 KiB: refused");
		/* 65 labels */
		sb_reset(&body);
		sb_printf(&body, "%s{\"metric\":{", head);
		for (int i = 0; i < 65; i++)
			sb_printf(&body, "%s\"l%d\":\"v\"", i ? "," : "", i);
		sb_puts(&body, "},\"value\":[1,\"1\"]}]}}");
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, piece,
						 nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err,
				    "Prometheus: query roce_netdev_mtu_bytes: a series at byte "
				    "38 has more than 64 labels: refused");
		/* 70 KiB before a result array */
		sb_reset(&body);
		sb_puts(&body, "{\"status\":\"success\",\"x\":\"");
		for (int i = 0; i < 70 << 10; i++)
			sb_putc(&body, 'a');
		sb_printf(&body, "\",\"data\":{\"result\":[]}}");
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, piece,
						 nodes, 2, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, "Prometheus: query roce_netdev_mtu_bytes: not a result "
					 "vector: no \"result\" array in the first 64 KiB of the "
					 "answer");
		prom_nodes_free(m, 2);
	}
	sb_free(&body);
	sb_free(&v);
}

/*
 * A sample value is a number as Prometheus writes it (Go's strconv 'f' or
 * 'e', -1, and +Inf, -Inf, NaN), never whatever strtod() takes: "0x2328"
 * is not 9000, and the answer holding it is refused.
 */
static void prometheus_sample_values(void **state)
{
	static const struct {
		const char *v;
		int64_t mtu; /* -1: no value (+Inf, -Inf, NaN: the series skipped) */
	} good[] = {
		{ "9000", 9000 }, { "-0", 0 },	  { "0.5", 1 },	  { "9e+03", 9000 },
		{ "1.5e-07", 0 }, { "+Inf", -1 }, { "-Inf", -1 }, { "NaN", -1 },
	};
	static const char *const bad[] = {
		"0x2328", "inf", "nan", "Infinity", "+Inf ",  " 1", "+1",   "1e5",
		"1E+21",  "1.",	 ".5",	"01",	    "1e+999", "",   "1e+1",
	};
	struct fleet_prom_node nodes[2];
	struct node_model m[2];
	struct strbuf body = { 0 }, want = { 0 };
	char err[320];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		const struct object *o;

		prom_nodes(nodes, m, 2);
		sb_reset(&body);
		sb_printf(&body,
			  "{\"status\":\"success\",\"data\":{\"result\":[{\"metric\":{\"instance\":"
			  "\"n1:9479\",\"device\":\"eth0\"},\"value\":[1,\"%s\"]}]}}",
			  good[i].v);
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, 0,
						 nodes, 2, err, sizeof(err)),
				 0);
		o = model_netdev(&m[0], "eth0");
		if (good[i].mtu < 0) {
			assert_null(o);
		} else {
			assert_non_null(o);
			assert_int_equal(o->f[F_NETDEV_MTU].v.i, good[i].mtu);
		}
		prom_nodes_free(m, 2);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		prom_nodes(nodes, m, 2);
		sb_reset(&body);
		sb_printf(&body,
			  "{\"status\":\"success\",\"data\":{\"result\":[{\"metric\":{\"instance\":"
			  "\"n1:9479\",\"device\":\"eth0\"},\"value\":[1,\"%s\"]}]}}",
			  bad[i]);
		assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, 0,
						 nodes, 2, err, sizeof(err)),
				 -EINVAL);
		sb_reset(&want);
		sb_printf(&want,
			  "Prometheus: query roce_netdev_mtu_bytes: n1:9479 device eth0: the value "
			  "\"%s\" is not a number as Prometheus writes one: refused",
			  bad[i]);
		assert_string_equal(err, want.buf);
		prom_nodes_free(m, 2);
	}
	/* whoever's series it is: an answer with such a value is not Prometheus's */
	prom_nodes(nodes, m, 2);
	sb_reset(&body);
	sb_puts(&body, "{\"status\":\"success\",\"data\":{\"result\":[{\"metric\":{\"instance\":"
		       "\"other:9479\"},\"value\":[1,\"0x10\"]}]}}");
	assert_int_equal(fleet_prom_read("up", body.buf, body.len, 0, nodes, 2, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "Prometheus: query up: other:9479: the value \"0x10\" is not a "
				 "number as Prometheus writes one: refused");
	prom_nodes_free(m, 2);
	sb_free(&body);
	sb_free(&want);
}

/*
 * Two series for one fact of one node (two scrape jobs of a target, two HA
 * replicas behind one URL): the same value is taken once and counted, two
 * values make the node UNKNOWN naming both; series of other objects or
 * other elements (priorities, GID indexes) are not repeats.
 */
static void prometheus_repeated_series(void **state)
{
	static const char head[] = "{\"status\":\"success\",\"data\":{\"result\":[";
	struct fleet_prom_node nodes[2];
	struct node_model m[2];
	struct strbuf body = { 0 };
	char err[320];

	(void)state;
	prom_nodes(nodes, m, 2);
	sb_printf(&body,
		  "%s{\"metric\":{\"instance\":\"n1:9479\",\"device\":\"eth0\",\"job\":\"a\"},"
		  "\"value\":[1,\"9000\"]},"
		  "{\"metric\":{\"instance\":\"n1:9479\",\"device\":\"eth1\",\"job\":\"a\"},"
		  "\"value\":[1,\"1500\"]},"
		  "{\"metric\":{\"instance\":\"n1:9479\",\"device\":\"eth0\",\"job\":\"b\"},"
		  "\"value\":[1,\"9000\"]},"
		  "{\"metric\":{\"instance\":\"n2:9479\",\"device\":\"eth0\",\"job\":\"a\"},"
		  "\"value\":[1,\"9000\"]},"
		  "{\"metric\":{\"instance\":\"n2:9479\",\"device\":\"eth0\",\"job\":\"b\"},"
		  "\"value\":[1,\"1500\"]}]}}",
		  head);
	assert_int_equal(fleet_prom_read("roce_netdev_mtu_bytes", body.buf, body.len, 0, nodes, 2,
					 err, sizeof(err)),
			 0);
	assert_int_equal(nodes[0].repeats, 1);
	assert_string_equal(nodes[0].note,
			    "query roce_netdev_mtu_bytes: n1:9479 device eth0: 9000 in two series");
	assert_string_equal(nodes[0].err, "");
	assert_int_equal(model_netdev(&m[0], "eth0")->f[F_NETDEV_MTU].v.i, 9000);
	assert_int_equal(model_netdev(&m[0], "eth1")->f[F_NETDEV_MTU].v.i, 1500);
	assert_int_equal(nodes[1].repeats, 0);
	assert_string_equal(
	    nodes[1].err,
	    "Prometheus: query roce_netdev_mtu_bytes: n2:9479 device eth0: two series "
	    "disagree, 9000 and 1500 (two scrape jobs or HA replicas of one target?): "
	    "which is this node's cannot be told");
	prom_nodes_free(m, 2);

	/* a GID table: index 0 twice alike, index 1 twice with two GIDs; index 2 once */
	prom_nodes(nodes, m, 2);
	sb_reset(&body);
	sb_puts(&body, head);
	static const char *const gids[][3] = {
		{ "0", "fe80:0000:0000:0000:0000:0000:0000:0001", "a" },
		{ "0", "fe80:0000:0000:0000:0000:0000:0000:0001", "b" },
		{ "2", "0000:0000:0000:0000:0000:ffff:0a00:0001", "a" },
		{ "1", "0000:0000:0000:0000:0000:ffff:0a00:0002", "a" },
		{ "1", "0000:0000:0000:0000:0000:ffff:0a00:0003", "b" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(gids); i++)
		sb_printf(&body,
			  "%s{\"metric\":{\"instance\":\"n%d:9479\",\"device\":\"mlx5_0\","
			  "\"port\":\"1\",\"index\":\"%s\",\"gid\":\"%s\",\"type\":\"RoCE v2\","
			  "\"job\":\"%s\"},\"value\":[1,\"1\"]}",
			  i ? "," : "", i < 3 ? 1 : 2, gids[i][0], gids[i][1], gids[i][2]);
	sb_puts(&body, "]}}");
	assert_int_equal(fleet_prom_read("roce_rdma_gid_info", body.buf, body.len, 0, nodes, 2, err,
					 sizeof(err)),
			 0);
	assert_int_equal(nodes[0].repeats, 1);
	assert_string_equal(nodes[0].err, "");
	assert_int_equal(model_port(&m[0], "mlx5_0", 1)->gids.n, 2);
	assert_string_equal(
	    nodes[1].err,
	    "Prometheus: query roce_rdma_gid_info: n2:9479 device mlx5_0 port 1 index "
	    "1: two series disagree, gid=\"0000:0000:0000:0000:0000:ffff:0a00:0002\" and "
	    "gid=\"0000:0000:0000:0000:0000:ffff:0a00:0003\" (two scrape jobs or HA replicas of "
	    "one target?): which is this node's cannot be told");
	prom_nodes_free(m, 2);
	sb_free(&body);
}

/* /api/v1/label/instance/values, read by hand like the query answers. */
static void prometheus_instance_list(void **state)
{
	static const char good[] =
	    "{\"status\":\"success\",\"data\":[\"n1:9479\", \"n\\u0032:9479\","
	    "\"[::1]:9479\"]}";
	static const char *const bad[] = {
		"{\"status\":\"error\",\"data\":[\"n1\"]}",
		"{\"status\":\"success\",\"data\":[\"n1\",]}",
		"{\"status\":\"success\",\"data\":[\"n1\"]} x",
		"{\"status\":\"success\"}",
		"{\"status\":\"success\",\"data\":[1]}",
		"{\"status\":\"success\",\"data\":[\"n1\"\"n2\"]}",
		"404 page not found\n",
	};
	static const char *const names[] = { "n2", "[::1]:9479" };
	static const size_t pieces[] = { 0, 1, 2, 5, 4096 };
	struct fleet_prom_instances *in;
	struct strbuf big = { 0 };

	(void)state;
	for (size_t p = 0; p < ARRAY_SIZE(pieces); p++) {
		assert_int_equal(
		    fleet_prom_instances_parse(good, strlen(good), pieces[p], NULL, 0, &in), 0);
		assert_int_equal(in->n, 3);
		assert_string_equal(in->v[1], "n2:9479");
		assert_string_equal(in->v[2], "[::1]:9479");
		fleet_prom_instances_free(in);
		/* only the nodes' instances are kept: by name, or host:port */
		assert_int_equal(
		    fleet_prom_instances_parse(good, strlen(good), pieces[p], names, 2, &in), 0);
		assert_int_equal(in->n, 2);
		assert_string_equal(in->v[0], "n2:9479");
		assert_string_equal(in->v[1], "[::1]:9479");
		fleet_prom_instances_free(in);
	}
	/* a value past 4 KiB (another target's) is skipped, escaped quotes and all */
	sb_puts(&big, "{\"status\":\"success\",\"data\":[\"n1:9479\",\"");
	for (int i = 0; i < 3000; i++)
		sb_puts(&big, "a\\\"\\\\");
	sb_puts(&big, "\",\"n2:9479\"]}");
	for (size_t p = 0; p < ARRAY_SIZE(pieces); p++) {
		assert_int_equal(
		    fleet_prom_instances_parse(big.buf, big.len, pieces[p], NULL, 0, &in), 0);
		assert_int_equal(in->n, 2);
		assert_string_equal(in->v[0], "n1:9479");
		assert_string_equal(in->v[1], "n2:9479");
		fleet_prom_instances_free(in);
		assert_int_equal(
		    fleet_prom_instances_parse(big.buf, big.len - 3, pieces[p], NULL, 0, &in),
		    -EINVAL);
		assert_null(in);
	}
	sb_free(&big);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(
		    fleet_prom_instances_parse(bad[i], strlen(bad[i]), 0, NULL, 0, &in), -EINVAL);
		assert_null(in);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hostlist_expansions),
		cmocka_unit_test(hostlist_order_and_errors),
		cmocka_unit_test(hostlist_ports),
		cmocka_unit_test(fleet_all_equal),
		cmocka_unit_test(fleet_one_outlier),
		cmocka_unit_test(fleet_tie),
		cmocka_unit_test(fleet_node_unknown),
		cmocka_unit_test(fleet_unit_unknown),
		cmocka_unit_test(fleet_rails),
		cmocka_unit_test(fleet_streamed_any_order),
		cmocka_unit_test(fleet_profile_outcome),
		cmocka_unit_test(fleet_and_node_rules_apart),
		cmocka_unit_test(fleet_majority_of_a_map),
		cmocka_unit_test(fleet_load_errors),
		cmocka_unit_test(fleet_shipped_profile),
		cmocka_unit_test(snapshot_from_buffer),
		cmocka_unit_test(snapshot_without_counters),
		cmocka_unit_test(prometheus_answers),
		cmocka_unit_test(prometheus_compact_answers),
		cmocka_unit_test(prometheus_answer_in_pieces),
		cmocka_unit_test(prometheus_answer_bounds),
		cmocka_unit_test(prometheus_sample_values),
		cmocka_unit_test(prometheus_repeated_series),
		cmocka_unit_test(prometheus_instance_list),
		cmocka_unit_test(fleet_digest_alike),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
