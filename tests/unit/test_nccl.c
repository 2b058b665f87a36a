// SPDX-License-Identifier: MIT
/*
 * NCCL's list syntax against the examples of NCCL's Environment Variables
 * documentation (NCCL_IB_HCA, NCCL_SOCKET_IFNAME), the KEY=VALUE job file,
 * and the job.* facts nccl_apply() writes for a small model.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "nccl.h"
#include "util.h"

struct sel_case {
	const char *list;
	const char *name;
	int port; /* -1: an interface */
	bool selected;
};

static const struct sel_case cases[] = {
	/* "mlx5: Use all ports of all cards starting with mlx5" */
	{ "mlx5", "mlx5_0", 1, true },
	{ "mlx5", "mlx5_3", 2, true },
	{ "mlx5", "mlx4_0", 1, false },
	/* "=mlx5_0:1,mlx5_1:1: Use ports 1 of cards mlx5_0 and mlx5_1" */
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_0", 1, true },
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_1", 1, true },
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_0", 2, false },
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_10", 1, false },
	/* "^=mlx5_1,mlx5_4: Do not use cards mlx5_1 and mlx5_4" */
	{ "^=mlx5_1,mlx5_4", "mlx5_1", 1, false },
	{ "^=mlx5_1,mlx5_4", "mlx5_4", 2, false },
	{ "^=mlx5_1,mlx5_4", "mlx5_0", 1, true },
	{ "^=mlx5_1,mlx5_4", "mlx5_10", 1, true },
	/* without '=', mlx5_1 is a prefix: it selects mlx5_10 .. mlx5_19 too */
	{ "mlx5_1", "mlx5_1", 1, true },
	{ "mlx5_1", "mlx5_10", 1, true },
	{ "mlx5_1", "mlx5_2", 1, false },
	{ "^mlx5_1", "mlx5_17", 1, false },
	{ "^mlx5_1", "mlx5_2", 1, true },
	/* a port restricts one entry only */
	{ "mlx5_0:1,mlx5_1", "mlx5_1", 2, true },
	{ "mlx5_0:1,mlx5_1", "mlx5_0", 2, false },
	/* NCCL_SOCKET_IFNAME: "eth: Use all interfaces starting with eth, e.g. eth0, eth1" */
	{ "eth", "eth0", -1, true },
	{ "eth", "eth1", -1, true },
	{ "eth", "ens1f0", -1, false },
	/* "=eth0: Use only interface eth0" */
	{ "=eth0", "eth0", -1, true },
	{ "=eth0", "eth01", -1, false },
	/* "=eth0,eth1: Use only interfaces eth0 and eth1" */
	{ "=eth0,eth1", "eth1", -1, true },
	{ "=eth0,eth1", "eth2", -1, false },
	/* "^docker: Do not use any interface starting with docker" */
	{ "^docker", "docker0", -1, false },
	{ "^docker", "eth0", -1, true },
	/* "^=docker0: Do not use interface docker0" */
	{ "^=docker0", "docker0", -1, false },
	{ "^=docker0", "docker1", -1, true },
};

static void list_syntax(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct nccl_list l;

		assert_int_equal(nccl_list_parse(cases[i].list, &l), 0);
		if (nccl_list_selects(&l, cases[i].name, cases[i].port) != cases[i].selected)
			fail_msg("%s: %s:%d should%s be selected", cases[i].list, cases[i].name,
				 cases[i].port, cases[i].selected ? "" : " not");
	}
}

static void list_parse(void **state)
{
	static const char *const bad[] = { ",mlx5_0",  "mlx5_0,", "mlx5_0,,mlx5_1", "mlx5_0:",
					   "mlx5_0:x", ":1",	  "mlx5_0:1:2",	    "mlx5_0:-1" };
	struct nccl_list l;

	(void)state;
	assert_int_equal(nccl_list_parse("^=mlx5_0:1,mlx5_1", &l), 0);
	assert_true(l.exclude);
	assert_true(l.exact);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.e[0].name, "mlx5_0");
	assert_int_equal(l.e[0].port, 1);
	assert_int_equal(l.e[1].port, -1);
	/* NCCL takes '^' off before '=': "=^x" is an exact match of "^x" */
	assert_int_equal(nccl_list_parse("=^x", &l), 0);
	assert_false(l.exclude);
	assert_string_equal(l.e[0].name, "^x");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (nccl_list_parse(bad[i], &l) != -EINVAL)
			fail_msg("'%s' should not parse", bad[i]);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void env_file(void **state)
{
	char path[] = "/tmp/rocewatch-nccl.XXXXXX", err[256];
	struct nccl_env env;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path, "# a job's environment\n"
			 "\n"
			 "export NCCL_IB_HCA=\"=mlx5_0:1,mlx5_1:1\"\n"
			 "  NCCL_SOCKET_IFNAME='eth0'  \n"
			 "NCCL_IB_TC=106\r\n"
			 "OMP_NUM_THREADS=8\n"
			 "NCCL_DEBUG=\n");
	memset(&env, 0, sizeof(env));
	assert_int_equal(nccl_env_read_file(&env, path, err, sizeof(err)), 0);
	assert_true(env.given);
	assert_string_equal(env.val[NCCL_IB_HCA], "=mlx5_0:1,mlx5_1:1");
	assert_string_equal(env.val[NCCL_SOCKET_IFNAME], "eth0");
	assert_string_equal(env.val[NCCL_IB_TC], "106");
	assert_true(env.set[NCCL_DEBUG]);
	assert_string_equal(env.val[NCCL_DEBUG], "");
	assert_false(env.set[NCCL_ALGO]);

	/* a bad line: one error naming the file and the line */
	write_file(path, "NCCL_IB_HCA=mlx5_0\nthis is not an assignment\n");
	memset(&env, 0, sizeof(env));
	assert_int_equal(nccl_env_read_file(&env, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":2: expected KEY=VALUE"));
	assert_int_equal(strncmp(err, path, strlen(path)), 0);
	write_file(path, "NCCL_IB_HCA=\"mlx5_0\n");
	assert_int_equal(nccl_env_read_file(&env, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":1: NCCL_IB_HCA: unterminated quote"));
	unlink(path);
	assert_int_equal(nccl_env_read_file(&env, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "No such file"));
}

static struct object *port(struct node_model *m, const char *dev, const char *state, const char *ll)
{
	struct object *p = model_add_port(m, dev, 1);

	assert_non_null(p);
	field_set_str(p, F_PORT_STATE, state);
	field_set_str(p, F_PORT_LINK_LAYER, ll);
	return p;
}

static void apply(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	struct object *n = &m.node;

	(void)state;
	model_init(&m);
	port(&m, "mlx5_0", "ACTIVE", "Ethernet");
	port(&m, "mlx5_1", "DOWN", "Ethernet");
	port(&m, "mlx5_2", "ACTIVE", "InfiniBand");

	nccl_apply(&env, &m);
	/* unset: NCCL's defaults, nothing to say; the optional ones absent, not 0 */
	assert_true(n->f[F_JOB_NCCL].v.i);
	assert_string_equal(n->f[F_JOB_IB_HCA_PROBLEM].v.s, "");
	assert_int_equal(n->f[F_JOB_IB_GID_INDEX].state, ABS_UNSUPPORTED);
	assert_int_equal(n->f[F_JOB_IB_TC].state, ABS_UNSUPPORTED);
	assert_int_equal(n->f[F_JOB_CROSS_NIC].v.i, 2);
	assert_false(n->f[F_JOB_IB_DISABLE].v.i);

	nccl_env_put(&env, "NCCL_IB_HCA", "=mlx5_0");
	nccl_apply(&env, &m);
	assert_string_equal(n->f[F_JOB_IB_HCA_PROBLEM].v.s, "");
	nccl_env_put(&env, "NCCL_IB_HCA", "mlx5");
	nccl_apply(&env, &m);
	assert_string_equal(n->f[F_JOB_IB_HCA_PROBLEM].v.s, "mlx5_1:1 is DOWN");
	nccl_env_put(&env, "NCCL_IB_HCA", "=mlx5_2:1");
	nccl_apply(&env, &m);
	assert_string_equal(n->f[F_JOB_IB_HCA_PROBLEM].v.s, "mlx5_2:1 is InfiniBand, not RoCE");
	nccl_env_put(&env, "NCCL_IB_HCA", "=mlx5_0:2");
	nccl_apply(&env, &m);
	assert_string_equal(n->f[F_JOB_IB_HCA_PROBLEM].v.s, "mlx5_0:2: no such RDMA port");
	nccl_env_put(&env, "NCCL_IB_HCA", "^mlx5");
	nccl_apply(&env, &m);
	assert_string_equal(n->f[F_JOB_IB_HCA_PROBLEM].v.s, "selects no RDMA port of this node");

	/* a GID index over a port whose GID table is unknown: absent, so the rule is unknown */
	nccl_env_put(&env, "NCCL_IB_HCA", "=mlx5_0");
	nccl_env_put(&env, "NCCL_IB_GID_INDEX", "3");
	nccl_apply(&env, &m);
	assert_int_equal(n->f[F_JOB_IB_GID_INDEX].v.i, 3);
	assert_int_equal(n->f[F_JOB_IB_GID_INDEX_PROBLEM].state, ABS_NOT_COLLECTED);
	nccl_env_put(&env, "NCCL_IB_TC", "106");
	nccl_env_put(&env, "NCCL_IB_DISABLE", "1");
	nccl_env_put(&env, "NCCL_NET_GDR_LEVEL", "bogus");
	nccl_apply(&env, &m);
	assert_int_equal(n->f[F_JOB_IB_TC_DSCP].v.i, 26);
	assert_int_equal(n->f[F_JOB_IB_TC_ECN].v.i, 2);
	assert_true(n->f[F_JOB_IB_DISABLE].v.i);
	assert_int_equal(n->f[F_JOB_NET_GDR_LEVEL].state, ABS_ERROR);

	/* no --nccl: every job fact absent, not collected */
	env.given = false;
	nccl_apply(&env, &m);
	assert_int_equal(n->f[F_JOB_NCCL].state, ABS_NOT_COLLECTED);
	assert_int_equal(n->f[F_JOB_IB_HCA].state, ABS_NOT_COLLECTED);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(list_syntax),
		cmocka_unit_test(list_parse),
		cmocka_unit_test(env_file),
		cmocka_unit_test(apply),
	};

	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
