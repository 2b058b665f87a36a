// SPDX-License-Identifier: MIT
/*
 * A job's NCCL settings read as NCCL's code reads them (src/core/nccl.c).
 * Every expected value below is NCCL's behaviour, from NVIDIA/nccl at the
 * tags named (v2.21.5-1 .. v2.30.7-1):
 *
 *   parseStringList(), matchIfList()   src/misc/utils.cc
 *   '^' / '=' and MAX_IB_DEVS (32)     ncclIbInit(): src/transport/net_ib.cc (to 2.28),
 *                                      ncclIbInitDevices(): net_ib/init.cc (2.29+)
 *   ncclFindInterfaces(), MAX_IFS (16) src/misc/socket.cc; ncclOsFindInterfaces()
 *                                      in src/os/linux.cc (IFF_RUNNING from 2.28)
 *   ncclLoadParam()                    src/misc/param.cc
 *   ncclGetLevel(), topoPathTypeStr[]  src/graph/paths.cc, src/graph/topo.cc
 *   ncclIbGetGidIndex()                net_ib.cc / net_ib/connect.cc (2.29+)
 *   grh.traffic_class (uint8_t)        ncclIbRtrQp() in the same files
 *
 * plus the examples of NCCL's Environment Variables documentation for
 * NCCL_IB_HCA and NCCL_SOCKET_IFNAME, the KEY=VALUE job file, and the job.*
 * facts nccl_apply() writes for small models.
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
#include <sys/socket.h>
#include <unistd.h>

#include "model.h"
#include "nccl.h"
#include "util.h"

/* ---- parseStringList() + matchIfList() ^ searchNot ---- */

struct sel_case {
	const char *list;
	const char *name;
	int port;	   /* -1: an interface */
	bool selected;	   /* NCCL 2.30.7 */
	bool selected_old; /* NCCL 2.21.5 .. 2.30.4 */
};

static const struct sel_case sel_cases[] = {
	/* documentation: "mlx5: Use all ports of all cards starting with mlx5" */
	{ "mlx5", "mlx5_0", 1, true, true },
	{ "mlx5", "mlx5_3", 2, true, true },
	{ "mlx5", "mlx4_0", 1, false, false },
	/* "=mlx5_0:1,mlx5_1:1: Use ports 1 of cards mlx5_0 and mlx5_1" */
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_0", 1, true, true },
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_1", 1, true, true },
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_0", 2, false, false },
	{ "=mlx5_0:1,mlx5_1:1", "mlx5_10", 1, false, false },
	/* "^=mlx5_1,mlx5_4: Do not use cards mlx5_1 and mlx5_4" */
	{ "^=mlx5_1,mlx5_4", "mlx5_1", 1, false, false },
	{ "^=mlx5_1,mlx5_4", "mlx5_4", 2, false, false },
	{ "^=mlx5_1,mlx5_4", "mlx5_0", 1, true, true },
	{ "^=mlx5_1,mlx5_4", "mlx5_10", 1, true, true },
	/* matchIf() without '=' is strncmp(name, ref, strlen(ref)): a prefix */
	{ "mlx5_1", "mlx5_1", 1, true, true },
	{ "mlx5_1", "mlx5_10", 1, true, true },
	{ "mlx5_1", "mlx5_2", 1, false, false },
	{ "^mlx5_1", "mlx5_17", 1, false, false },
	{ "^mlx5_1", "mlx5_2", 1, true, true },
	/* a port restricts its own entry only (matchPort) */
	{ "mlx5_0:1,mlx5_1", "mlx5_1", 2, true, true },
	{ "mlx5_0:1,mlx5_1", "mlx5_0", 2, false, false },
	/* NCCL_SOCKET_IFNAME: "eth: Use all interfaces starting with eth, e.g. eth0, eth1" */
	{ "eth", "eth0", -1, true, true },
	{ "eth", "eth1", -1, true, true },
	{ "eth", "ens1f0", -1, false, false },
	/* "=eth0: Use only interface eth0" */
	{ "=eth0", "eth0", -1, true, true },
	{ "=eth0", "eth01", -1, false, false },
	/* "=eth0,eth1: Use only interfaces eth0 and eth1" */
	{ "=eth0,eth1", "eth1", -1, true, true },
	{ "=eth0,eth1", "eth2", -1, false, false },
	/* "^docker: Do not use any interface starting with docker" */
	{ "^docker", "docker0", -1, false, false },
	{ "^docker", "eth0", -1, true, true },
	/* "^=docker0: Do not use interface docker0" */
	{ "^=docker0", "docker0", -1, false, false },
	{ "^=docker0", "docker1", -1, true, true },
	/* empty entries are skipped (strtok_r in 2.30.7, the ifC > 0 test before) */
	{ "mlx5_0,", "mlx5_0", 1, true, true },
	{ "mlx5_0,,mlx5_1", "mlx5_1", 1, true, true },
	{ ",mlx5_0", "mlx5_0", 1, true, true },
	/* "dev:" - port -1 (any) in 2.30.7, atoi("") = 0 (none) up to 2.30.4 */
	{ "mlx5_0:", "mlx5_0", 1, true, false },
	{ "=mlx5_0:,mlx5_1", "mlx5_0", 1, true, false },
	/* 2.30.7 rail and plane fields; older parsers skip to the ',' */
	{ "=mlx5_0:1:0:0", "mlx5_0", 1, true, true },
	{ "=mlx5_0:1:0:0", "mlx5_0", 2, false, false },
	/* ports through atoi: blanks, a sign, trailing characters */
	{ "=mlx5_0: 1", "mlx5_0", 1, true, true },
	{ "=mlx5_0:+1", "mlx5_0", 1, true, true },
	{ "=mlx5_0:1x", "mlx5_0", 1, true, true },
	{ "=mlx5_0:x", "mlx5_0", 1, false, false }, /* atoi("x") = 0 */
	/*
	 * issue 42 item 12: matchPort() takes only -1 as any port
	 * (src/misc/utils.cc:224-229 at v2.30.7-1, :175-180 at v2.21.5-1):
	 * -2 is a port no device has, so its entry selects nothing
	 */
	{ "=mlx5_0:-1", "mlx5_0", 2, true, true },
	{ "=mlx5_0:-2", "mlx5_0", 1, false, false },
	{ "=mlx5_0:-2", "mlx5_0", 2, false, false },
	{ "^=mlx5_0:-2", "mlx5_0", 1, true, true },
	{ "=eth0:-2", "eth0", -1, true, true }, /* an interface is port -1: any entry port */
	/*
	 * the port is atoi() of the whole text (utils.cc:205 at v2.30.7-1 on the
	 * strsep token, :150 at v2.21.5-1 on the rest of the value), nothing cut:
	 * 40 zeros then 1 is 1; glibc's atoi is (int)strtol, so past the int
	 * range the low 32 bits count and an overflow is LONG_MAX (-1) or LONG_MIN (0)
	 */
	{ "=mlx5_0:00000000000000000000000000000000000000001", "mlx5_0", 1, true, true },
	{ "=mlx5_0:00000000000000000000000000000000000000001", "mlx5_0", 2, false, false },
	{ "=mlx5_0:4294967297", "mlx5_0", 1, true, true },
	{ "=mlx5_0:4294967297", "mlx5_0", 2, false, false },
	{ "=mlx5_0:4294967295", "mlx5_0", 2, true, true },
	{ "=mlx5_0:4294967294", "mlx5_0", 1, false, false },
	{ "=mlx5_0:99999999999999999999", "mlx5_0", 2, true, true },
	{ "=mlx5_0:-99999999999999999999", "mlx5_0", 1, false, false },
	{ "=mlx5_0: \t+1", "mlx5_0", 1, true, true },
	/* no list: everything; '^' of no list: nothing ("^", "^=", "^,") */
	{ "", "mlx5_0", 1, true, true },
	{ "=", "mlx5_0", 1, true, true },
	{ ",", "mlx5_0", 1, true, true },
	{ "^", "mlx5_0", 1, false, false },
	{ "^=", "mlx5_0", 1, false, false },
	{ "^,", "eth0", -1, false, false },
	/* '^' is taken off before '=': "=^x" is an exact "^x" */
	{ "=^x", "^x", -1, true, true },
	{ "=^x", "x", -1, false, false },
	/* an entry without a name is skipped, its port with it */
	{ ":1", "mlx5_0", 1, true, true },
	/* blanks are part of the name */
	{ " mlx5_0", "mlx5_0", 1, false, false },
};

static void list_selection(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sel_cases); i++) {
		const struct sel_case *c = &sel_cases[i];
		struct nccl_list l;

		nccl_list_parse(c->list, NCCL_LIST_MAX, &l);
		if (nccl_list_selects(&l, c->name, c->port, false) != c->selected)
			fail_msg("2.30.7: '%s': %s:%d should%s be selected", c->list, c->name,
				 c->port, c->selected ? "" : " not");
		if (nccl_list_selects(&l, c->name, c->port, true) != c->selected_old)
			fail_msg("2.30.4: '%s': %s:%d should%s be selected", c->list, c->name,
				 c->port, c->selected_old ? "" : " not");
	}
}

static void list_limits(void **state)
{
	char buf[4096], name70[71];
	struct nccl_list l;
	size_t len = 0;

	(void)state;
	nccl_list_parse("^=mlx5_0:1,mlx5_1", NCCL_LIST_MAX, &l);
	assert_true(l.exclude);
	assert_true(l.exact);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.e[0].name, "mlx5_0");
	assert_int_equal(l.e[0].port, 1);
	assert_int_equal(l.e[1].port, -1);

	/* 33 entries: MAX_IB_DEVS is 32, the 33rd is not read */
	for (int i = 0; i < 33; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%sdev%d", i ? "," : "", i);
	nccl_list_parse(buf, NCCL_IB_HCA_MAX, &l);
	assert_int_equal(l.n, 32);
	assert_true(l.notes & NCCL_LN_DROPPED);
	assert_string_equal(l.dropped, "dev32");
	/* NCCL_SOCKET_IFNAME: MAX_IFS is 16 */
	nccl_list_parse(buf, NCCL_IFS_MAX, &l);
	assert_int_equal(l.n, 16);
	assert_string_equal(l.dropped, "dev16");
	/* empty entries do not count toward the limit */
	nccl_list_parse(",,a,,b,", 2, &l);
	assert_int_equal(l.n, 2);
	assert_false(l.notes & NCCL_LN_DROPPED);
	assert_true(l.notes & NCCL_LN_EMPTY_ENTRY);

	/* a name of 64+ characters: 2.30.7's snprintf into prefix[64] keeps 63 */
	memset(name70, 'a', 70);
	name70[70] = '\0';
	nccl_list_parse(name70, NCCL_LIST_MAX, &l);
	assert_int_equal(l.n, 1);
	assert_int_equal(strlen(l.e[0].name), 63);
	assert_true(l.e[0].long_name);

	/* ports: "1:0:0" is port 1 (rail 0, plane 0); ": 1" "+1" "1x" are atoi's 1 */
	nccl_list_parse("a:1:0:0,b: 1,c:+1,d:1x,e:,f:007", NCCL_LIST_MAX, &l);
	assert_int_equal(l.n, 6);
	assert_int_equal(l.e[0].port, 1);
	assert_false(l.e[0].odd_port);
	for (int i = 1; i <= 3; i++) {
		assert_int_equal(l.e[i].port, 1);
		assert_true(l.e[i].odd_port);
	}
	assert_int_equal(l.e[4].port, -1);
	assert_int_equal(l.e[4].port_old, 0);
	assert_int_equal(l.e[5].port, 7); /* atoi is base 10: no octal here */

	/*
	 * issue 42 item 12: atoi over the whole port text, as glibc does it
	 * (utils.cc:205 at v2.30.7-1, :150 at v2.21.5-1); a 41-digit port is
	 * not cut, and a port past the int range is marked as read oddly
	 */
	nccl_list_parse("a:00000000000000000000000000000000000000001,b:4294967297,"
			"c:99999999999999999999,d:-99999999999999999999,e:-2,f:2147483648",
			NCCL_LIST_MAX, &l);
	assert_int_equal(l.n, 6);
	assert_int_equal(l.e[0].port, 1);
	assert_false(l.e[0].odd_port);
	assert_int_equal(l.e[1].port, 1);
	assert_int_equal(l.e[2].port, -1); /* (int)LONG_MAX */
	assert_int_equal(l.e[3].port, 0);  /* (int)LONG_MIN */
	assert_int_equal(l.e[4].port, -2);
	assert_int_equal(l.e[5].port, INT32_MIN);
	for (int i = 1; i < 6; i++) {
		assert_true(l.e[i].odd_port);
		assert_int_equal(l.e[i].port_old, l.e[i].port);
	}
}

/* ---- ncclLoadParam(): strtoll(value, NULL, 0) ---- */

struct num_case {
	const char *s;
	int64_t deflt, want;
	enum nccl_num_note note;
};

static const struct num_case num_cases[] = {
	{ "106", 0, 106, NCCL_NUM_PLAIN },
	{ "0152", 0, 106, NCCL_NUM_OCTAL },
	{ "0x6a", 0, 106, NCCL_NUM_HEX },
	{ "0X6A", 0, 106, NCCL_NUM_HEX },
	{ "3abc", 0, 3, NCCL_NUM_TRAILING },
	{ "08", 0, 0, NCCL_NUM_TRAILING }, /* octal: 8 is not a digit */
	{ "abc", 0, 0, NCCL_NUM_NOT_NUM },
	{ "", -1, -1, NCCL_NUM_DEFAULT }, /* strlen(str) > 0 is tested first */
	{ "", 2, 2, NCCL_NUM_DEFAULT },
	{ "99999999999999999999", 2, 2, NCCL_NUM_RANGE }, /* errno: the default */
	{ " 7", 0, 7, NCCL_NUM_PLAIN },
	{ "-1", 0, -1, NCCL_NUM_PLAIN },
	{ "256", 0, 256, NCCL_NUM_PLAIN },
	{ "0", 5, 0, NCCL_NUM_PLAIN },
};

static void load_param(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(num_cases); i++) {
		enum nccl_num_note n;
		int64_t v = nccl_load_param(num_cases[i].s, num_cases[i].deflt, &n);

		if (v != num_cases[i].want || n != num_cases[i].note)
			fail_msg("'%s': %lld (note %d), want %lld (note %d)", num_cases[i].s,
				 (long long)v, n, (long long)num_cases[i].want, num_cases[i].note);
	}
}

/* ---- ncclGetLevel() ---- */

struct gdr_case {
	const char *s;
	int want; /* enum nccl_path, -1: ignored, -2: undefined */
	int since;
};

static const struct gdr_case gdr_cases[] = {
	{ "LOC", NCCL_PATH_LOC, 21 },
	{ "NVL", NCCL_PATH_NVL, 21 },
	{ "NVB", NCCL_PATH_NVB, 21 },
	{ "C2C", NCCL_PATH_C2C, 26 }, /* topoPathTypeStr[] from v2.26.2 */
	{ "PIX", NCCL_PATH_PIX, 21 },
	{ "PXB", NCCL_PATH_PXB, 21 },
	{ "P2C", NCCL_PATH_P2C, 27 }, /* from v2.27.3 */
	{ "PXN", NCCL_PATH_PXN, 21 },
	{ "PHB", NCCL_PATH_PHB, 21 },
	{ "SYS", NCCL_PATH_SYS, 21 },
	{ "pxb", -1, 21 }, /* strcmp: case-sensitive */
	{ "Sys", -1, 21 },
	{ " PXB", -1, 21 },
	{ "", -1, 21 },
	{ "NET", -1, 21 }, /* in the table, past PATH_SYS: not a level */
	/* levelsOldToNew[]: LOC PIX PXB PHB SYS SYS, above 5 clamped */
	{ "0", NCCL_PATH_LOC, 21 },
	{ "1", NCCL_PATH_PIX, 21 },
	{ "2", NCCL_PATH_PXB, 21 },
	{ "3", NCCL_PATH_PHB, 21 },
	{ "4", NCCL_PATH_SYS, 21 },
	{ "5", NCCL_PATH_SYS, 21 },
	{ "7", NCCL_PATH_SYS, 21 },
	{ "2x", NCCL_PATH_PXB, 21 },
	{ "010", NCCL_PATH_SYS, 21 }, /* strtol(.., 0): octal 8 */
	/*
	 * issue 42 item 13: "int oldLevel = strtol(str, NULL, 0)", clamped from
	 * above only (src/graph/paths.cc:269-272 at v2.30.7-1, :237-240 at
	 * v2.21.5-1): the long wraps to an int; negative is an index before
	 * levelsOldToNew[], undefined (-2)
	 */
	{ "4294967296", NCCL_PATH_LOC, 21 },
	{ "4294967297", NCCL_PATH_PIX, 21 },
	{ "0x100000002", NCCL_PATH_PXB, 21 },
	{ "4294967301", NCCL_PATH_SYS, 21 },
	{ "2147483648", -2, 21 },
	{ "4294967295", -2, 21 },
	{ "99999999999999999999", -2, 21 }, /* LONG_MAX: -1 */
};

static void gdr_level(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(gdr_cases); i++) {
		int since;
		bool numeric;
		int l = nccl_gdr_level(gdr_cases[i].s, &since, &numeric);

		if (l != gdr_cases[i].want || (l >= 0 && since != gdr_cases[i].since))
			fail_msg("'%s': %d (since %d), want %d (since %d)", gdr_cases[i].s, l,
				 since, gdr_cases[i].want, gdr_cases[i].since);
	}
}

/* ---- the job file ---- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void env_file(void **state)
{
	char path[] = "/tmp/rocewatch-nccl.XXXXXX", err[256], *big;
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
	nccl_env_free(&env);

	/* a value as long as NCCL reads (33 entries of 70 characters): kept whole */
	big = malloc(4096);
	assert_non_null(big);
	strcpy(big, "NCCL_IB_HCA=");
	for (size_t i = 0, off = strlen(big); i < 33; i++) {
		memset(big + off, 'a' + (int)(i % 26), 70);
		off += 70;
		big[off++] = i < 32 ? ',' : '\n';
		big[off] = '\0';
	}
	write_file(path, big);
	memset(&env, 0, sizeof(env));
	assert_int_equal(nccl_env_read_file(&env, path, err, sizeof(err)), 0);
	assert_int_equal(strlen(env.val[NCCL_IB_HCA]), 33 * 71 - 1);
	nccl_env_free(&env);
	free(big);

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
	nccl_env_free(&env);
}

/* ---- nccl_apply() on small models ---- */

static struct object *port(struct node_model *m, const char *dev, const char *state, const char *ll)
{
	struct object *p = model_add_port(m, dev, 1);

	assert_non_null(p);
	field_set_str(p, F_PORT_STATE, state);
	field_set_str(p, F_PORT_LINK_LAYER, ll);
	return p;
}

/* "a b c" of a reading's items */
static void items(const struct nccl_reading *r, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", r->items[i]);
}

static void put(struct nccl_env *env, const char *key, const char *val)
{
	if (val) {
		assert_int_equal(nccl_env_put(env, key, val), 0);
		return;
	}
	for (int v = 0; v < NCCL__VARS; v++)
		if (!strcmp(nccl_var_name((enum nccl_var)v), key)) {
			free(env->val[v]);
			env->val[v] = NULL;
			env->set[v] = false;
		}
}

struct hca_case {
	const char *value; /* NULL: unset */
	const char *effective;
	const char *problem;
	bool reading; /* job.reading warns */
};

/*
 * ports (the model keeps them sorted): mlx5_0 ACTIVE RoCE, mlx5_1 DOWN,
 * mlx5_10 ACTIVE RoCE, mlx5_2 ACTIVE InfiniBand
 */
static const struct hca_case hca_cases[] = {
	{ NULL, "mlx5_0:1 mlx5_10:1 mlx5_2:1", "", false },
	{ "", "mlx5_0:1 mlx5_10:1 mlx5_2:1", "", false },
	{ "=mlx5_0", "mlx5_0:1", "", false },
	{ "mlx5_0,", "mlx5_0:1", "", false },
	{ "=mlx5_0,,mlx5_10", "mlx5_0:1 mlx5_10:1", "", false },
	{ "=mlx5_0:", "mlx5_0:1", "", true },
	{ "=mlx5_0:1:0:0", "mlx5_0:1", "", false },
	{ "=mlx5_0: 1", "mlx5_0:1", "", true },
	{ "=mlx5_0:+1", "mlx5_0:1", "", true },
	{ "=mlx5_0:1x", "mlx5_0:1", "", true },
	{ "^", "", "\"^\" excludes every port: NCCL finds no HCA", false },
	{ "^=", "", "\"^=\" excludes every port: NCCL finds no HCA", false },
	{ "mlx5", "mlx5_0:1 mlx5_10:1 mlx5_2:1", "mlx5_1:1 is DOWN", false },
	/* a prefix: mlx5_1 selects mlx5_10 too; NCCL skips the DOWN port */
	{ "mlx5_1", "mlx5_10:1", "mlx5_1:1 is DOWN", false },
	{ "=mlx5_2:1", "mlx5_2:1", "mlx5_2:1 is InfiniBand, not RoCE", false },
	{ "=mlx5_0:2", "", "mlx5_0:2: no such RDMA port", false },
	{ "^mlx5", "", "selects no RDMA port of this node", false },
	{ "^=mlx5_1,mlx5_2", "mlx5_0:1 mlx5_10:1", "", false },
	/* issue 42 item 12: port -2 is no port (matchPort, utils.cc:224 at v2.30.7-1) */
	{ "=mlx5_0:-2", "", "mlx5_0:-2: no such RDMA port", true },
	{ "=mlx5_0:4294967295", "mlx5_0:1", "", true }, /* atoi: -1, any port */
	{ "=mlx5_0:00000000000000000000000000000000000000001", "mlx5_0:1", "", false },
};

static void apply_ib_hca(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	char buf[1024], big[4096];
	size_t len = 0;

	(void)state;
	model_init(&m);
	port(&m, "mlx5_0", "ACTIVE", "Ethernet");
	port(&m, "mlx5_1", "DOWN", "Ethernet");
	port(&m, "mlx5_2", "ACTIVE", "InfiniBand");
	port(&m, "mlx5_10", "ACTIVE", "Ethernet");
	for (size_t i = 0; i < ARRAY_SIZE(hca_cases); i++) {
		const struct hca_case *c = &hca_cases[i];

		put(&env, "NCCL_IB_HCA", c->value);
		nccl_apply(&env, &m);
		items(&env.out[NCCL_IB_HCA], buf, sizeof(buf));
		if (strcmp(buf, c->effective))
			fail_msg("'%s': effective '%s', want '%s'", c->value, buf, c->effective);
		if (strcmp(m.node.f[F_JOB_IB_HCA_PROBLEM].v.s, c->problem))
			fail_msg("'%s': problem '%s', want '%s'", c->value,
				 m.node.f[F_JOB_IB_HCA_PROBLEM].v.s, c->problem);
		if (!m.node.f[F_JOB_READING].v.s[0] != !c->reading)
			fail_msg("'%s': reading '%s'", c->value, m.node.f[F_JOB_READING].v.s);
	}
	/* the 33rd entry is not read: NCCL never sees mlx5_0 */
	for (int i = 0; i < 32; i++)
		len +=
		    (size_t)snprintf(big + len, sizeof(big) - len, "%smlx5_9%d", i ? "," : "=", i);
	snprintf(big + len, sizeof(big) - len, ",mlx5_0");
	put(&env, "NCCL_IB_HCA", big);
	nccl_apply(&env, &m);
	assert_int_equal(env.out[NCCL_IB_HCA].n, 0);
	assert_string_equal(m.node.f[F_JOB_IB_HCA_PROBLEM].v.s, "mlx5_90: no such RDMA device");
	assert_non_null(
	    strstr(nccl_note(&env.out[NCCL_IB_HCA]), "first 32 entries; mlx5_0 and after"));
	assert_true(env.out[NCCL_IB_HCA].warn);
	/* the note says what -2 and the wrap do */
	put(&env, "NCCL_IB_HCA", "=mlx5_0:-2");
	nccl_apply(&env, &m);
	assert_non_null(
	    strstr(nccl_note(&env.out[NCCL_IB_HCA]),
		   "is read as -2 (atoi), which matches no port: the entry selects nothing"));
	put(&env, "NCCL_IB_HCA", "=mlx5_0:4294967295");
	nccl_apply(&env, &m);
	assert_non_null(
	    strstr(nccl_note(&env.out[NCCL_IB_HCA]), "is read as -1 (atoi), which is any port"));
	nccl_env_free(&env);
	model_free(&m);
}

/*
 * Issue 42 item 15: NCCL_IB_MERGE_NICS, what it does to the device list.
 * ncclIbGetPciPath() zeroes the function digit of the device's PCI path,
 * and the device digits with NCCL_IB_MERGE_VFS (net_ib/init.cc:69-72 at
 * v2.30.7-1, net_ib.cc:323-325 at v2.21.5-1); ports of one such device and
 * one link layer are one NIC: ncclTopoAutoMerge() at the default
 * NCCL_NET_MERGE_LEVEL, PORT (src/graph/topo.cc:1375-1440, :1744 at
 * v2.30.7-1), which ncclIbMakeVDeviceInternal() refuses when
 * NCCL_IB_MERGE_NICS=0 (net_ib/init.cc:198) or the link layers differ
 * (:250); ncclIbFindMatchingDev() before 2.24 (net_ib.cc:371-387 at
 * v2.21.5-1, 2 ports a NIC at most), all undone in 2.22-2.23 when the
 * NICs differ in size (net_ib.cc:547-557 at v2.22.3-1).
 */
static struct object *port_on(struct node_model *m, const char *dev, const char *ll,
			      const char *netdev, const char *bus)
{
	struct object *p = port(m, dev, "ACTIVE", ll), *nd = model_add_netdev(m, netdev);

	assert_non_null(nd);
	if (bus)
		field_set_str(nd, F_NETDEV_BUS, bus);
	field_set_str(p, F_PORT_NETDEV, netdev);
	return nd;
}

struct fuse_case {
	const char *hca, *merge, *vfs;
	const char *bus2, *ll1; /* mlx5_2's PCI function, mlx5_1's link layer */
	const char *effective, *note;
};

/* mlx5_0 0000:17:00.0 and mlx5_1 0000:17:00.1 (one card, two functions), mlx5_2 0000:18:00.0 */
static const struct fuse_case fuse_cases[] = {
	{ NULL, NULL, NULL, NULL, NULL, "mlx5_0:1+mlx5_1:1 mlx5_2:1",
	  "NCCL fuses the ports of one PCI device into one NIC (NCCL_IB_MERGE_NICS, default 1): "
	  "mlx5_0:1+mlx5_1:1; NCCL 2.22 and 2.23 fuse none, the NICs not being all of one size" },
	{ NULL, "0", NULL, NULL, NULL, "mlx5_0:1 mlx5_1:1 mlx5_2:1",
	  "NCCL_IB_MERGE_NICS=0: mlx5_0:1+mlx5_1:1 share a PCI device and stay separate NICs" },
	{ NULL, "0x0", NULL, NULL, NULL, "mlx5_0:1 mlx5_1:1 mlx5_2:1", "stay separate NICs" },
	{ NULL, "2", NULL, NULL, NULL, "mlx5_0:1+mlx5_1:1 mlx5_2:1", "NCCL fuses" },
	/* only the ports NCCL keeps are fused */
	{ "=mlx5_0,mlx5_2", NULL, NULL, NULL, NULL, "mlx5_0:1 mlx5_2:1", NULL },
	/* a VF of the same card: its device digits are zeroed too, unless NCCL_IB_MERGE_VFS=0 */
	{ NULL, NULL, NULL, "0000:17:02.3", NULL, "mlx5_0:1+mlx5_1:1+mlx5_2:1",
	  "mlx5_0:1+mlx5_1:1+mlx5_2:1; NCCL 2.21-2.23 fuse 2 ports at most" },
	{ NULL, NULL, "0", "0000:17:02.3", NULL, "mlx5_0:1+mlx5_1:1 mlx5_2:1", "fuses" },
	/* another link layer is not fused */
	{ NULL, NULL, NULL, "0000:17:00.2", "InfiniBand", "mlx5_0:1+mlx5_2:1 mlx5_1:1",
	  "NCCL fuses the ports of one PCI device into one NIC (NCCL_IB_MERGE_NICS, default 1): "
	  "mlx5_0:1+mlx5_2:1; NCCL 2.22" },
	/* no PCI address: not fused, and said */
	{ NULL, NULL, NULL, "", NULL, "mlx5_0:1+mlx5_1:1 mlx5_2:1",
	  "rocewatch does not know the PCI device of mlx5_2" },
};

static void apply_merge_nics(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	struct object *nd2, *p1;
	char buf[1024];

	(void)state;
	model_init(&m);
	port_on(&m, "mlx5_0", "Ethernet", "eth2", "0000:17:00.0");
	port_on(&m, "mlx5_1", "Ethernet", "eth3", "0000:17:00.1");
	nd2 = port_on(&m, "mlx5_2", "Ethernet", "eth4", "0000:18:00.0");
	model_link_ports(&m);
	p1 = model_port(&m, "mlx5_1", 1);
	assert_non_null(p1);
	for (size_t i = 0; i < ARRAY_SIZE(fuse_cases); i++) {
		const struct fuse_case *c = &fuse_cases[i];

		nccl_env_free(&env);
		put(&env, "NCCL_IB_HCA", c->hca);
		put(&env, "NCCL_IB_MERGE_NICS", c->merge);
		put(&env, "NCCL_IB_MERGE_VFS", c->vfs);
		field_set_str(nd2, F_NETDEV_BUS, c->bus2 ? c->bus2 : "0000:18:00.0");
		field_set_str(p1, F_PORT_LINK_LAYER, c->ll1 ? c->ll1 : "Ethernet");
		nccl_apply(&env, &m);
		items(&env.out[NCCL_IB_HCA], buf, sizeof(buf));
		if (strcmp(buf, c->effective) ||
		    (c->note ? !strstr(nccl_note(&env.out[NCCL_IB_HCA]), c->note)
			     : env.out[NCCL_IB_HCA].note.len != 0))
			fail_msg("case %zu: effective '%s', note '%s'", i, buf,
				 nccl_note(&env.out[NCCL_IB_HCA]));
	}
	/* NCCL_NET_MERGE_LEVEL and NCCL_NET_FORCE_MERGE (2.24+) are named, not judged */
	put(&env, "NCCL_NET_MERGE_LEVEL", "LOC");
	put(&env, "NCCL_NET_FORCE_MERGE", "mlx5_0,mlx5_2");
	nccl_apply(&env, &m);
	assert_non_null(
	    strstr(nccl_note(&env.out[NCCL_IB_HCA]),
		   "NCCL_NET_MERGE_LEVEL=LOC: NCCL 2.24 and later fuse NICs up to that"));
	assert_non_null(strstr(nccl_note(&env.out[NCCL_IB_HCA]), "NCCL_NET_FORCE_MERGE=mlx5_0,"));
	assert_int_equal(env.out[NCCL_IB_MERGE_NICS].num, 1);
	nccl_env_free(&env);
	model_free(&m);
}

struct if_case {
	const char *value, *family;
	const char *effective, *problem, *virt;
	bool reading;
};

/*
 * getifaddrs() as NCCL would see it, every IPv4 address before the IPv6
 * ones as glibc lists them: lo (127.0.0.1; ::1 is left out), ib0, eth0,
 * eth1 (an address, not running), dummy0 (operstate unknown, IFF_RUNNING),
 * docker0, virbr0, then the IPv6 addresses of ib0, eth0 and v6only (a
 * global IPv6 address only).
 */
static const struct nccl_ifaddr node_ifs[] = {
	{ "lo", AF_INET, true },      { "ib0", AF_INET, true },	   { "eth0", AF_INET, true },
	{ "eth1", AF_INET, false },   { "dummy0", AF_INET, true }, { "docker0", AF_INET, true },
	{ "virbr0", AF_INET, true },  { "ib0", AF_INET6, true },   { "eth0", AF_INET6, true },
	{ "v6only", AF_INET6, true },
};

/* Every address of interface name in a: renamed to to (NULL: kept), running set. */
static void set_if(struct nccl_ifaddr *a, size_t n, const char *name, const char *to, bool running)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(a[i].name, name))
			continue;
		if (to)
			strlcpy0(a[i].name, to, sizeof(a[i].name));
		a[i].running = running;
	}
}

static const struct if_case if_cases[] = {
	/* unset: ncclFindInterfaces() tries "ib" first */
	{ NULL, NULL, "ib0", "", "", false },
	/* one character: ignored (strlen(env) > 1), NCCL picks itself */
	{ "e", NULL, "ib0", "", "", true },
	{ "eth", NULL, "eth0", "", "", false }, /* eth1 is not running (2.28+) */
	{ "=eth1", NULL, "", "selects no running interface with an address", "", false },
	{ "lo", NULL, "lo", "", "lo", false },
	{ "=v6only", NULL, "v6only", "", "", false },
	{ "=v6only", "AF_INET", "", "selects no running interface with an address", "", false },
	{ "dummy", NULL, "dummy0", "", "", false },
	/* v6only is named at its first address, after every IPv4 one */
	{ "^=ib0,eth0", NULL, "lo dummy0 docker0 virbr0 v6only", "", "lo docker0 virbr0", false },
	{ "^=ib0", "AF_INET6", "eth0 v6only", "", "", false },
	/* "^" is one character: ignored too; "^=" excludes every interface */
	{ "^", NULL, "ib0", "", "", true },
	{ "^=", NULL, "", "selects no running interface with an address", "", false },
	{ "=eth0,", NULL, "eth0", "", "", false },
};

static void apply_socket_ifname(void **state)
{
	struct nccl_ifaddrs ifs = { ARRAY_SIZE(node_ifs), (struct nccl_ifaddr *)node_ifs };
	struct nccl_env env = { .given = true, .ifs = &ifs };
	struct node_model m;
	char buf[1024], big[512];
	size_t len = 0;

	(void)state;
	model_init(&m);
	for (size_t i = 0; i < ARRAY_SIZE(if_cases); i++) {
		const struct if_case *c = &if_cases[i];
		const struct object *n = &m.node;

		put(&env, "NCCL_SOCKET_IFNAME", c->value);
		put(&env, "NCCL_SOCKET_FAMILY", c->family);
		nccl_apply(&env, &m);
		items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
		if (strcmp(buf, c->effective) ||
		    strcmp(n->f[F_JOB_SOCKET_IFNAME_PROBLEM].v.s, c->problem) ||
		    strcmp(n->f[F_JOB_SOCKET_IFNAME_VIRTUAL].v.s, c->virt) ||
		    !n->f[F_JOB_READING].v.s[0] != !c->reading)
			fail_msg("'%s': effective '%s' problem '%s' virtual '%s' reading '%s'",
				 c->value, buf, n->f[F_JOB_SOCKET_IFNAME_PROBLEM].v.s,
				 n->f[F_JOB_SOCKET_IFNAME_VIRTUAL].v.s, n->f[F_JOB_READING].v.s);
	}
	/* job.reading: the first warning's first sentence, cut at a word to fit a field */
	put(&env, "NCCL_SOCKET_IFNAME", "e");
	nccl_apply(&env, &m);
	assert_string_equal(m.node.f[F_JOB_READING].v.s,
			    "NCCL_SOCKET_IFNAME=e: NCCL ignores a value of one character...");
	/* eth1 has an address but is not running: 2.21-2.27 take it, 2.28+ do not */
	put(&env, "NCCL_SOCKET_IFNAME", "eth");
	nccl_apply(&env, &m);
	assert_non_null(
	    strstr(nccl_note(&env.out[NCCL_SOCKET_IFNAME]), "2.21-2.27 also take eth1"));
	/*
	 * issue 42 item 14: the note keeps every sentence.  16 entries whose
	 * ports atoi reads oddly make 16 sentences of about 60 characters, and
	 * the versions' remark (eth1 is not running: IFF_RUNNING is tested from
	 * 2.28, src/misc/socket.cc:153 at v2.28.9-1) comes after them: a
	 * 512-byte note lost it
	 */
	len = 0;
	for (int i = 0; i < 16; i++)
		len +=
		    (size_t)snprintf(big + len, sizeof(big) - len, "%seth%d:+1", i ? "," : "=", i);
	put(&env, "NCCL_SOCKET_IFNAME", big);
	nccl_apply(&env, &m);
	{
		const char *n = nccl_note(&env.out[NCCL_SOCKET_IFNAME]), *p = n;
		int sentences = 1;

		assert_true(strlen(n) > 511);
		while ((p = strstr(p, "; ")))
			sentences++, p += 2;
		assert_int_equal(sentences, 16 + 1);
		assert_non_null(strstr(n, "the port of eth15 is read as 1 (atoi)"));
		assert_non_null(strstr(n, "; NCCL 2.21-2.27 also take eth1, which is not running"));
	}
	len = 0;
	/* MAX_IFS: the 17th entry is not read */
	for (int i = 0; i < 16; i++)
		len += (size_t)snprintf(big + len, sizeof(big) - len, "%sx%d", i ? "," : "=", i);
	snprintf(big + len, sizeof(big) - len, ",eth0");
	put(&env, "NCCL_SOCKET_IFNAME", big);
	nccl_apply(&env, &m);
	assert_int_equal(env.out[NCCL_SOCKET_IFNAME].n, 0);
	assert_true(env.out[NCCL_SOCKET_IFNAME].warn);
	/* ib0 has an address but is not running: 2.28+ go on to "^docker,lo,virbr", older stop at
	 * ib0 */
	{
		struct nccl_ifaddr down[ARRAY_SIZE(node_ifs)];
		struct nccl_ifaddrs difs = { ARRAY_SIZE(node_ifs), down };

		memcpy(down, node_ifs, sizeof(down));
		set_if(down, ARRAY_SIZE(down), "ib0", NULL, false);
		env.ifs = &difs;
		put(&env, "NCCL_SOCKET_IFNAME", NULL);
		nccl_apply(&env, &m);
		items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
		assert_string_equal(buf, "eth0 dummy0 v6only");
		assert_non_null(
		    strstr(nccl_note(&env.out[NCCL_SOCKET_IFNAME]), "take ib0 instead"));
		/* eth1 (not running) is named even beside eth10 */
		set_if(down, ARRAY_SIZE(down), "ib0", "eth10", true);
		put(&env, "NCCL_SOCKET_IFNAME", "eth");
		nccl_apply(&env, &m);
		items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
		assert_string_equal(buf, "eth10 eth0");
		assert_non_null(strstr(nccl_note(&env.out[NCCL_SOCKET_IFNAME]), "also take eth1,"));
		/* without ib*: "^docker,lo,virbr" */
		set_if(down, ARRAY_SIZE(down), "eth10", "ens9", true);
		put(&env, "NCCL_SOCKET_IFNAME", NULL);
		nccl_apply(&env, &m);
		items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
		assert_string_equal(buf, "ens9 eth0 dummy0 v6only");
		env.ifs = &ifs;
	}
	nccl_env_free(&env);
	model_free(&m);
}

/*
 * Issue 42 item 14: with NCCL_SOCKET_FAMILY=AF_INET6 the interfaces come in
 * the order of their IPv6 addresses.  ncclOsFindInterfaces()
 * (src/os/linux.cc:394-440 at v2.30.7-1; findInterfaces(),
 * src/misc/socket.cc:115-156 at v2.21.5-1) walks getifaddrs(), skips an
 * address of another family ("if (sock_family != -1 && family !=
 * sock_family) continue;", linux.cc:408, socket.cc:126) and names an
 * interface at its first address that passes, once (the duplicate test,
 * linux.cc:421-429).  glibc lists every IPv4 address first, so eth1 (IPv4
 * and IPv6) comes before eth0 (IPv6 only) in the interfaces' first
 * addresses but after it among the IPv6 ones: bootstrap uses eth0, the
 * first one named.
 */
static void apply_socket_family_order(void **state)
{
	static const struct nccl_ifaddr addrs[] = {
		{ "lo", AF_INET, true },    { "eth1", AF_INET, true },	{ "eth2", AF_INET, true },
		{ "eth0", AF_INET6, true }, { "eth2", AF_INET6, true }, { "eth1", AF_INET6, true },
	};
	struct nccl_ifaddrs ifs = { ARRAY_SIZE(addrs), (struct nccl_ifaddr *)addrs };
	struct nccl_env env = { .given = true, .ifs = &ifs };
	struct node_model m;
	char buf[256];

	(void)state;
	model_init(&m);
	put(&env, "NCCL_SOCKET_FAMILY", "AF_INET6");
	nccl_apply(&env, &m);
	items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
	assert_string_equal(buf, "eth0 eth2 eth1");
	put(&env, "NCCL_SOCKET_IFNAME", "eth");
	nccl_apply(&env, &m);
	items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
	assert_string_equal(buf, "eth0 eth2 eth1");
	put(&env, "NCCL_SOCKET_IFNAME", "=eth1,eth2");
	nccl_apply(&env, &m);
	items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
	assert_string_equal(buf, "eth2 eth1"); /* the list's order does not count */
	/* any family: each interface at its first address, IPv4 first */
	put(&env, "NCCL_SOCKET_FAMILY", NULL);
	put(&env, "NCCL_SOCKET_IFNAME", "eth");
	nccl_apply(&env, &m);
	items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
	assert_string_equal(buf, "eth1 eth2 eth0");
	put(&env, "NCCL_SOCKET_FAMILY", "AF_INET");
	nccl_apply(&env, &m);
	items(&env.out[NCCL_SOCKET_IFNAME], buf, sizeof(buf));
	assert_string_equal(buf, "eth1 eth2");
	nccl_env_free(&env);
	model_free(&m);
}

struct num_apply_case {
	const char *var, *value;
	enum field_id id;
	int64_t want;
	const char *note; /* a substring of the variable's note, NULL: none */
	bool warn;
};

static const struct num_apply_case num_apply_cases[] = {
	{ "NCCL_IB_TC", NULL, F_JOB_IB_TC, 0, "unset: NCCL sends TC 0", false },
	{ "NCCL_IB_TC", "106", F_JOB_IB_TC, 106, NULL, false },
	{ "NCCL_IB_TC", "0152", F_JOB_IB_TC, 106, "NCCL_IB_TC=0152 is read as 106 (octal)", true },
	{ "NCCL_IB_TC", "0x6a", F_JOB_IB_TC, 106, NULL, false },
	{ "NCCL_IB_TC", "256", F_JOB_IB_TC, 0, "NCCL_IB_TC=256 is read as 0 (the low byte)", true },
	{ "NCCL_IB_TC", "362", F_JOB_IB_TC, 106, "is read as 106 (the low byte)", true },
	{ "NCCL_IB_TC", "3abc", F_JOB_IB_TC, 3, "is read as 3 (strtoll stops at 'a')", true },
	{ "NCCL_IB_TC", "abc", F_JOB_IB_TC, 0, "is not a number: NCCL reads 0", true },
	{ "NCCL_IB_TC", "", F_JOB_IB_TC, 0, "is empty", false },
	{ "NCCL_IB_TC", "-1", F_JOB_IB_TC, 0, "2.21-2.25 TC 255", true },
	{ "NCCL_IB_GID_INDEX", "03", F_JOB_IB_GID_INDEX, 3, "(octal)", true },
	{ "NCCL_IB_GID_INDEX", "0x3", F_JOB_IB_GID_INDEX, 3, NULL, false },
	/*
	 * issue 42 item 13: NCCL keeps these in an int.  "*gidIndex =
	 * ncclParamIbGidIndex()" (net_ib/connect.cc:318 at v2.30.7-1,
	 * net_ib.cc:293 at v2.21.5-1): 4294967299 is GID 3, 4294967295 is -1
	 * (NCCL picks); 2.30.7 passes NCCL_IB_TC as "int envTrafficClass"
	 * (connect.cc:1096, :795) and sends TC 0 when that int is -1
	 * (:999-1001), where 2.26-2.30.4 test the int64_t (connect.cc:821 at
	 * v2.30.4-1) and send its low byte, 255; "int crossNic"
	 * (src/graph/search.cc:1080-1083 at v2.30.7-1)
	 */
	{ "NCCL_IB_GID_INDEX", "4294967299", F_JOB_IB_GID_INDEX, 3,
	  "NCCL_IB_GID_INDEX=4294967299 is read as 3 (NCCL keeps it in an int)", true },
	{ "NCCL_IB_GID_INDEX", "4294967295", F_JOB_IB_GID_INDEX, -1,
	  "is read as -1 (NCCL keeps it in an int): negative, so NCCL picks the GID itself", true },
	{ "NCCL_IB_TC", "4294967295", F_JOB_IB_TC, 0,
	  "2.30.7 sends TC 0 (as if unset: the application's ncclConfig_t.trafficClass, else 0), "
	  "2.21-2.30.4 send TC 255 (the low byte)",
	  true },
	{ "NCCL_IB_TC", "-4294967297", F_JOB_IB_TC, 0, "is -1 as the int NCCL 2.30.7 passes",
	  true },
	{ "NCCL_IB_TC", "4294967299", F_JOB_IB_TC, 3, "is read as 3 (the low byte)", true },
	{ "NCCL_IB_TC", "4294967402", F_JOB_IB_TC, 106, "is read as 106 (the low byte)", true },
	{ "NCCL_CROSS_NIC", "4294967297", F_JOB_CROSS_NIC, 1, "is read as 1 (the graph search",
	  true },
	{ "NCCL_CROSS_NIC", NULL, F_JOB_CROSS_NIC, 2, NULL, false },
	{ "NCCL_CROSS_NIC", "", F_JOB_CROSS_NIC, 2, "NCCL uses its default, 2", false },
	{ "NCCL_CROSS_NIC", "1abc", F_JOB_CROSS_NIC, 1, "is read as 1", true },
	{ "NCCL_CROSS_NIC", "x", F_JOB_CROSS_NIC, 0, "NCCL reads 0", true },
	{ "NCCL_IB_DISABLE", "0x0", F_JOB_IB_DISABLE, 0, NULL, false },
	{ "NCCL_IB_DISABLE", "2", F_JOB_IB_DISABLE, 1, NULL, false },
	{ "NCCL_IB_DISABLE", "yes", F_JOB_IB_DISABLE, 0, "NCCL reads 0", true },
	{ "NCCL_IB_DISABLE", "010", F_JOB_IB_DISABLE, 1, "is read as 8 (octal)", true },
};

static void apply_numbers(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;

	(void)state;
	model_init(&m);
	for (size_t i = 0; i < ARRAY_SIZE(num_apply_cases); i++) {
		const struct num_apply_case *c = &num_apply_cases[i];
		const struct nccl_reading *r;
		int v;

		nccl_env_free(&env);
		put(&env, c->var, c->value);
		nccl_apply(&env, &m);
		for (v = 0; strcmp(nccl_var_name((enum nccl_var)v), c->var); v++)
			;
		r = &env.out[v];
		if (m.node.f[c->id].state != ABS_NONE || m.node.f[c->id].v.i != c->want)
			fail_msg("%s='%s': %lld, want %lld", c->var, c->value,
				 (long long)m.node.f[c->id].v.i, (long long)c->want);
		if (c->note ? !strstr(nccl_note(r), c->note) : r->note.len != 0)
			fail_msg("%s='%s': note '%s', want '%s'", c->var, c->value, nccl_note(r),
				 c->note ? c->note : "");
		if (r->warn != c->warn)
			fail_msg("%s='%s': warn %d", c->var, c->value, r->warn);
	}
	/* the TC splits into DSCP and ECN */
	put(&env, "NCCL_IB_TC", "106");
	nccl_apply(&env, &m);
	assert_int_equal(m.node.f[F_JOB_IB_TC_DSCP].v.i, 26);
	assert_int_equal(m.node.f[F_JOB_IB_TC_ECN].v.i, 2);
	nccl_env_free(&env);
	model_free(&m);
}

/* The TC NCCL sends when unset is 0: DSCP 0, which a node trusting DSCP puts on priority 0. */
static void apply_tc_priority(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	struct object *nd;
	int8_t map[RW_DSCP_COUNT];

	(void)state;
	model_init(&m);
	nd = model_add_netdev(&m, "eth2");
	field_set_str(port(&m, "mlx5_0", "ACTIVE", "Ethernet"), F_PORT_NETDEV, "eth2");
	model_link_ports(&m);
	for (int d = 0; d < RW_DSCP_COUNT; d++)
		map[d] = (int8_t)(d >> 3);
	map[26] = 3;
	field_set_str(nd, F_NETDEV_TRUST, "dscp");
	field_set_dscp_map(nd, F_NETDEV_DSCP_MAP, map);
	nccl_apply(&env, &m);
	assert_int_equal(m.node.f[F_JOB_IB_TC].v.i, 0);
	assert_int_equal(m.node.f[F_JOB_IB_TC_DSCP].v.i, 0);
	assert_int_equal(m.node.f[F_JOB_IB_TC_PRIORITY].v.i, 0);
	assert_non_null(
	    strstr(nccl_note(&env.out[NCCL_IB_TC]), "DSCP 0 lands on priority 0 on eth2"));
	put(&env, "NCCL_IB_TC", "106");
	nccl_apply(&env, &m);
	assert_int_equal(m.node.f[F_JOB_IB_TC_PRIORITY].v.i, 3);
	/* trust pcp: the DSCP does not pick the priority */
	field_set_str(nd, F_NETDEV_TRUST, "pcp");
	nccl_apply(&env, &m);
	assert_int_equal(m.node.f[F_JOB_IB_TC_PRIORITY].state, ABS_UNSUPPORTED);
	nccl_env_free(&env);
	model_free(&m);
}

/*
 * Issue 42 item 15: NCCL_IB_FIFO_TC, the TC of the receiver's
 * clear-to-send writes on RoCE.  Default -1, "the data's TC", compared as
 * the int64_t, its low byte sent (net_ib/connect.cc:21, :1245-1247 at
 * v2.30.7-1; net_ib.cc:100, :1103 at v2.24.3-1); 2.22-2.23 default to 0
 * and take any other value (net_ib.cc:92, :982-983 at v2.22.3-1).
 */
struct fifo_case {
	const char *value;
	int64_t want; /* -2: no reading (unset) */
	const char *note;
	bool warn;
};

static const struct fifo_case fifo_cases[] = {
	{ NULL, -2, NULL, false },
	{ "-1", 106,
	  "2.24 and later send the clear-to-send messages with the data's TC, 106 "
	  "(the default), 2.22-2.23 with TC 255",
	  true },
	{ "0", 0, "NCCL 2.22-2.23 take 0 as unset: the data's TC, 106", false },
	{ "106", 106, "receiver's clear-to-send (FIFO) writes on RoCE", false },
	{ "362", 106, "NCCL_IB_FIFO_TC=362 is read as 106 (the low byte)", true },
	/* the int64_t is not -1: its low byte, 255, in every version */
	{ "4294967295", 255, "is read as 255 (the low byte)", true },
	{ "192", 192, "DSCP 48, not the data's 26, lands on priority 6 on eth2 (trust dscp)",
	  false },
	{ "0x", 0, "is read as 0 (strtoll stops at 'x')", true },
};

static void apply_fifo_tc(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	struct object *nd;
	int8_t map[RW_DSCP_COUNT];

	(void)state;
	model_init(&m);
	nd = model_add_netdev(&m, "eth2");
	field_set_str(port(&m, "mlx5_0", "ACTIVE", "Ethernet"), F_PORT_NETDEV, "eth2");
	model_link_ports(&m);
	for (int d = 0; d < RW_DSCP_COUNT; d++)
		map[d] = (int8_t)(d >> 3);
	map[26] = 3;
	field_set_str(nd, F_NETDEV_TRUST, "dscp");
	field_set_dscp_map(nd, F_NETDEV_DSCP_MAP, map);
	for (size_t i = 0; i < ARRAY_SIZE(fifo_cases); i++) {
		const struct fifo_case *c = &fifo_cases[i];
		const struct nccl_reading *r = &env.out[NCCL_IB_FIFO_TC];

		nccl_env_free(&env);
		put(&env, "NCCL_IB_TC", "106");
		put(&env, "NCCL_IB_FIFO_TC", c->value);
		nccl_apply(&env, &m);
		if ((c->want == -2 ? r->kind != NCCL_EFF_NONE
				   : r->kind != NCCL_EFF_INT || r->num != c->want) ||
		    (c->note ? !strstr(nccl_note(r), c->note) : r->note.len != 0) ||
		    r->warn != c->warn)
			fail_msg("NCCL_IB_FIFO_TC=%s: %lld, note '%s', warn %d", c->value,
				 (long long)r->num, nccl_note(r), r->warn);
		/* the data's TC is judged as before */
		assert_int_equal(m.node.f[F_JOB_IB_TC].v.i, 106);
	}
	nccl_env_free(&env);
	model_free(&m);
}

struct gid_case {
	const char *index, *family, *range, *version;
	const char *effective, *problem;
};

static const struct gid_case gid_cases[] = {
	/* AF_INET, RoCE v2: the v4-mapped RoCE v2 GID */
	{ NULL, NULL, NULL, NULL, "mlx5_0:1=3", "" },
	{ "-1", NULL, NULL, NULL, "mlx5_0:1=3", "" },
	{ NULL, NULL, NULL, "1", "mlx5_0:1=2", "mlx5_0:1 GID 2 is IB/RoCE v1, not RoCE v2" },
	{ NULL, "AF_INET6", NULL, NULL, "mlx5_0:1=5", "" },
	{ NULL, NULL, "192.168.0.0/16", NULL, "mlx5_0:1=3", "" },
	/* a range that matches nothing: index 0, RoCE v1 link-local */
	{ NULL, NULL, "10.0.0.0/8", NULL, "mlx5_0:1=0",
	  "mlx5_0:1 GID 0 is IB/RoCE v1, not RoCE v2" },
	/* a range NCCL cannot read is ignored */
	{ NULL, NULL, "10.0.0.0", NULL, "mlx5_0:1=3", "" },
	{ NULL, NULL, "10.0.0.0/40", NULL, "mlx5_0:1=3", "" },
	/* an unknown family is AF_INET */
	{ NULL, "inet6", NULL, NULL, "mlx5_0:1=3", "" },
	{ "3", NULL, NULL, NULL, "", "" },
	/* issue 42 item 13: an int (net_ib/connect.cc:318 at v2.30.7-1): GID 3, or NCCL's walk */
	{ "4294967299", NULL, NULL, NULL, "", "" },
	{ "4294967297", NULL, NULL, NULL, "", "mlx5_0:1 GID 1 is link-local" },
	{ "4294967295", NULL, NULL, NULL, "mlx5_0:1=3", "" },
	{ "2147483648", NULL, NULL, NULL, "mlx5_0:1=3", "" },
	{ "1", NULL, NULL, NULL, "", "mlx5_0:1 GID 1 is link-local" },
	{ "7", NULL, NULL, NULL, "", "mlx5_0:1 has no GID 7" },
};

static void add_gid(struct object *p, uint32_t idx, const char *gid, const char *type)
{
	struct gid_entry *e = realloc(p->gids.e, (p->gids.n + 1) * sizeof(*e));

	assert_non_null(e);
	p->gids.e = e;
	e = &p->gids.e[p->gids.n++];
	memset(e, 0, sizeof(*e));
	e->index = idx;
	strlcpy0(e->gid, gid, sizeof(e->gid));
	strlcpy0(e->type, type, sizeof(e->type));
	p->f[F_PORT_GIDS].state = ABS_NONE;
	p->f[F_PORT_GIDS].v.gids = &p->gids;
}

static void apply_gid(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	struct object *p;
	char buf[256];

	(void)state;
	model_init(&m);
	p = port(&m, "mlx5_0", "ACTIVE", "Ethernet");
	/* what mlx5 shows: each address as a RoCE v1 and a RoCE v2 GID */
	add_gid(p, 0, "fe80:0000:0000:0000:0a00:27ff:fe00:0001", "IB/RoCE v1");
	add_gid(p, 1, "fe80:0000:0000:0000:0a00:27ff:fe00:0001", "RoCE v2");
	add_gid(p, 2, "0000:0000:0000:0000:0000:ffff:c0a8:010a", "IB/RoCE v1");
	add_gid(p, 3, "0000:0000:0000:0000:0000:ffff:c0a8:010a", "RoCE v2");
	add_gid(p, 4, "fd00:0000:0000:0000:0000:0000:0000:0001", "IB/RoCE v1");
	add_gid(p, 5, "fd00:0000:0000:0000:0000:0000:0000:0001", "RoCE v2");
	for (size_t i = 0; i < ARRAY_SIZE(gid_cases); i++) {
		const struct gid_case *c = &gid_cases[i];

		nccl_env_free(&env);
		put(&env, "NCCL_IB_GID_INDEX", c->index);
		put(&env, "NCCL_IB_ADDR_FAMILY", c->family);
		put(&env, "NCCL_IB_ADDR_RANGE", c->range);
		put(&env, "NCCL_IB_ROCE_VERSION_NUM", c->version);
		nccl_apply(&env, &m);
		items(&env.out[NCCL_IB_GID_INDEX], buf, sizeof(buf));
		if (strcmp(buf, c->effective) ||
		    strcmp(m.node.f[F_JOB_IB_GID_INDEX_PROBLEM].v.s, c->problem))
			fail_msg("case %zu: effective '%s' problem '%s'", i, buf,
				 m.node.f[F_JOB_IB_GID_INDEX_PROBLEM].v.s);
	}
	/* AF_INET6 with only link-local GIDs: index 0 */
	p->gids.n = 2;
	nccl_env_free(&env);
	put(&env, "NCCL_IB_ADDR_FAMILY", "AF_INET6");
	nccl_apply(&env, &m);
	assert_string_equal(env.out[NCCL_IB_GID_INDEX].items[0], "mlx5_0:1=0");
	nccl_env_free(&env);
	model_free(&m);
}

static void apply_gdr(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;

	(void)state;
	model_init(&m);
	put(&env, "NCCL_NET_GDR_LEVEL", "pxb");
	nccl_apply(&env, &m);
	/* ignored: NCCL keeps its default, the reading rule warns */
	assert_int_equal(m.node.f[F_JOB_NET_GDR_LEVEL].state, ABS_UNSUPPORTED);
	assert_non_null(strstr(m.node.f[F_JOB_READING].v.s, "NCCL_NET_GDR_LEVEL=pxb is not"));
	put(&env, "NCCL_NET_GDR_LEVEL", "7");
	nccl_apply(&env, &m);
	assert_string_equal(m.node.f[F_JOB_NET_GDR_LEVEL].v.s, "SYS");
	assert_true(env.out[NCCL_NET_GDR_LEVEL].warn);
	put(&env, "NCCL_NET_GDR_LEVEL", "P2C");
	nccl_apply(&env, &m);
	assert_string_equal(env.out[NCCL_NET_GDR_LEVEL].items[0], "P2C");
	assert_non_null(strstr(nccl_note(&env.out[NCCL_NET_GDR_LEVEL]), "from NCCL 2.27"));
	put(&env, "NCCL_NET_GDR_LEVEL", "PXB");
	nccl_apply(&env, &m);
	assert_false(env.out[NCCL_NET_GDR_LEVEL].warn);
	/* issue 42 item 13: "int oldLevel" (src/graph/paths.cc:269 at v2.30.7-1) wraps */
	put(&env, "NCCL_NET_GDR_LEVEL", "4294967296");
	nccl_apply(&env, &m);
	assert_string_equal(m.node.f[F_JOB_NET_GDR_LEVEL].v.s, "LOC");
	assert_non_null(strstr(nccl_note(&env.out[NCCL_NET_GDR_LEVEL]),
			       "is read as LOC (an old-style number that NCCL keeps in an int: it "
			       "wraps to 0)"));
	put(&env, "NCCL_NET_GDR_LEVEL", "4294967295");
	nccl_apply(&env, &m);
	assert_int_equal(m.node.f[F_JOB_NET_GDR_LEVEL].state, ABS_UNSUPPORTED);
	assert_non_null(
	    strstr(nccl_note(&env.out[NCCL_NET_GDR_LEVEL]), "is -1 in the int NCCL reads"));
	assert_non_null(strstr(m.node.f[F_JOB_READING].v.s, "NCCL_NET_GDR_LEVEL=4294967295"));
	nccl_env_free(&env);
	model_free(&m);
}

/*
 * Issue 42 item 15: the net the job uses.  NCCL_NET is compared with each
 * net's name by strcasecmp() (src/plugin/net.cc:331 at v2.30.7-1,
 * src/net.cc:560 at v2.21.5-1): NCCL's own are "IB"
 * (net_ib/common.cc:194) and "Socket" (net_socket.cc:804), any other name
 * is a plugin's, and an empty one matches none (plugin/net.cc:349: NCCL
 * fails).  NCCL_NET_PLUGIN loads a plugin before the IB net
 * (plugin/net.cc:256-300 at v2.30.7-1, "none" is no plugin at :266;
 * net.cc:386-406 at v2.21.5-1).  Where the net is not NCCL's IB, job.net
 * says so and the IB rules are skipped.
 */
struct net_case {
	const char *net, *plugin, *disable;
	const char *job_net, *note; /* a substring of NCCL_NET's or NCCL_NET_PLUGIN's note */
	bool warn;
};

static const struct net_case net_cases[] = {
	{ NULL, NULL, NULL, "IB", NULL, false },
	{ "IB", NULL, NULL, "IB", NULL, false },
	{ "ib", NULL, NULL, "IB", NULL, false }, /* strcasecmp */
	{ "IB", NULL, "1", "IB", "the IB net does not start", true },
	{ "Socket", NULL, NULL, "Socket", "NCCL runs over TCP sockets", false },
	{ "SOCKET", NULL, NULL, "Socket", "NCCL runs over TCP sockets", false },
	{ "AWS Libfabric", NULL, NULL, "plugin", "does not apply", false },
	{ "IBext_v8", NULL, NULL, "plugin", "names a net plugin's net", false },
	{ "", NULL, NULL, "none", "NCCL_NET is empty", true },
	{ NULL, "aws-ofi-nccl", NULL, "plugin", "libnccl-net-aws-ofi-nccl.so", false },
	{ NULL, "none", NULL, "IB", NULL, false },
	{ NULL, "NONE", NULL, "IB", NULL, false },
	{ NULL, "", NULL, "IB", "2.21-2.26 load libnccl-net.so", true },
	/* NCCL_NET picks among the nets a plugin adds to NCCL's own */
	{ "IB", "aws-ofi-nccl", NULL, "IB", NULL, false },
	{ "Socket", "aws-ofi-nccl", NULL, "Socket", NULL, false },
};

static void apply_net(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;

	(void)state;
	model_init(&m);
	port(&m, "mlx5_0", "ACTIVE", "Ethernet");
	for (size_t i = 0; i < ARRAY_SIZE(net_cases); i++) {
		const struct net_case *c = &net_cases[i];
		char notes[2048];

		nccl_env_free(&env);
		put(&env, "NCCL_NET", c->net);
		put(&env, "NCCL_NET_PLUGIN", c->plugin);
		put(&env, "NCCL_IB_DISABLE", c->disable);
		nccl_apply(&env, &m);
		snprintf(notes, sizeof(notes), "%s|%s", nccl_note(&env.out[NCCL_NET]),
			 nccl_note(&env.out[NCCL_NET_PLUGIN]));
		if (strcmp(m.node.f[F_JOB_NET].v.s, c->job_net) ||
		    (c->note && !strstr(notes, c->note)) ||
		    env.out[NCCL_NET].warn + env.out[NCCL_NET_PLUGIN].warn != c->warn)
			fail_msg("NCCL_NET=%s NCCL_NET_PLUGIN=%s: job.net %s, notes '%s'",
				 c->net ? c->net : "(unset)", c->plugin ? c->plugin : "(unset)",
				 m.node.f[F_JOB_NET].v.s, notes);
	}
	assert_string_equal(env.out[NCCL_NET].items[0], "Socket");
	nccl_env_free(&env);
	model_free(&m);
}

/*
 * Issue 42 item 15: what rocewatch does not judge is named, not passed
 * over: a net plugin in the job's image (libnccl-net.so,
 * src/plugin/net.cc:256 at v2.30.7-1), ncclConfig_t.trafficClass
 * (net_ib/connect.cc:999-1001), NCCL_IB_DATA_DIRECT (net_ib/init.cc:13),
 * the NCCL_COMM_ID subnet rule (src/misc/socket.cc:207-216), the rail and
 * plane fields (src/misc/utils.cc:206-209), NCCL_NETDEVS_POLICY
 * (src/graph/topo.cc:2005).
 */
static bool unjudged_has(const struct nccl_env *env, const char *what)
{
	for (size_t i = 0; i < env->n_unjudged; i++)
		if (strstr(env->unjudged[i], what))
			return true;
	return false;
}

static void apply_unjudged(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;

	(void)state;
	model_init(&m);
	port(&m, "mlx5_0", "ACTIVE", "Ethernet");
	nccl_apply(&env, &m);
	assert_int_equal(env.n_unjudged, 6);
	assert_true(unjudged_has(&env, "a net plugin in the job's image (libnccl-net.so"));
	assert_true(unjudged_has(&env, "ncclConfig_t.trafficClass"));
	assert_true(unjudged_has(&env, "NCCL_IB_DATA_DIRECT (2.27 and later, default 1"));
	assert_true(unjudged_has(&env, "the NCCL_COMM_ID subnet rule of interface auto-selection"));
	assert_true(unjudged_has(&env, "the rail and plane fields of NCCL_IB_HCA entries"));
	assert_true(unjudged_has(&env, "NCCL_NETDEVS_POLICY"));
	/* no plugin, a TC of the job's own, and the values the job set */
	put(&env, "NCCL_NET_PLUGIN", "none");
	put(&env, "NCCL_IB_TC", "106");
	put(&env, "NCCL_COMM_ID", "10.0.0.1:12345");
	put(&env, "NCCL_NETDEVS_POLICY", "MAX:2");
	put(&env, "NCCL_IB_DATA_DIRECT", "0");
	nccl_apply(&env, &m);
	assert_int_equal(env.n_unjudged, 4);
	assert_false(unjudged_has(&env, "net plugin"));
	assert_false(unjudged_has(&env, "trafficClass"));
	assert_true(unjudged_has(&env, "auto-selection (NCCL_COMM_ID=10.0.0.1:12345)"));
	assert_true(unjudged_has(&env, "(NCCL_NETDEVS_POLICY=MAX:2)"));
	assert_true(unjudged_has(&env, "(NCCL_IB_DATA_DIRECT=0)"));
	/* 2.30.7 sends TC 0 when NCCL_IB_TC's int is -1: the application's class may set it */
	put(&env, "NCCL_IB_TC", "4294967295");
	nccl_apply(&env, &m);
	assert_true(unjudged_has(&env, "trafficClass"));
	/* no --nccl: nothing */
	env.given = false;
	nccl_apply(&env, &m);
	assert_int_equal(env.n_unjudged, 0);
	nccl_env_free(&env);
	model_free(&m);
}

static void apply_absent(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	struct object *n = &m.node;

	(void)state;
	model_init(&m);
	port(&m, "mlx5_0", "ACTIVE", "Ethernet");
	nccl_apply(&env, &m);
	/* unset: NCCL's defaults, nothing to say */
	assert_true(n->f[F_JOB_NCCL].v.i);
	assert_string_equal(n->f[F_JOB_IB_HCA_PROBLEM].v.s, "");
	assert_int_equal(n->f[F_JOB_IB_GID_INDEX].v.i, -1);
	/* a GID index over a port whose GID table is unknown: absent, so the rule is unknown */
	assert_int_equal(n->f[F_JOB_IB_GID_INDEX_PROBLEM].state, ABS_NOT_COLLECTED);
	assert_string_equal(n->f[F_JOB_READING].v.s, "");
	assert_int_equal(n->f[F_JOB_CROSS_NIC].v.i, 2);
	assert_false(n->f[F_JOB_IB_DISABLE].v.i);
	/* no --nccl: every job fact absent, not collected */
	env.given = false;
	nccl_apply(&env, &m);
	assert_int_equal(n->f[F_JOB_NCCL].state, ABS_NOT_COLLECTED);
	assert_int_equal(n->f[F_JOB_IB_HCA].state, ABS_NOT_COLLECTED);
	model_free(&m);
}

/*
 * The job's per-port facts and the rail key (job_port_rail()): the position
 * among the node's RDMA ports in PCI order, name order where one has no PCI
 * address; NCCL's device index of each port it uses, -1 for the others.
 */
static void apply_rails(void **state)
{
	struct nccl_env env = { .given = true };
	struct node_model m;
	char rail[16];

	(void)state;
	model_init(&m);
	/* names against the slots: mlx5_0 sits in the second, mlx5_1 in the first */
	port_on(&m, "mlx5_0", "Ethernet", "eth2", "0000:18:00.0");
	port_on(&m, "mlx5_1", "Ethernet", "eth3", "0000:17:00.0");
	port_on(&m, "mlx5_2", "Ethernet", "eth4", "0000:c1:00.0");
	model_link_ports(&m);
	job_port_rail(&m, m.ports[0], rail, sizeof(rail));
	assert_string_equal(rail, "1");
	job_port_rail(&m, m.ports[1], rail, sizeof(rail));
	assert_string_equal(rail, "0");
	job_port_rail(&m, m.ports[2], rail, sizeof(rail));
	assert_string_equal(rail, "2");
	put(&env, "NCCL_IB_HCA", "=mlx5_0,mlx5_2");
	nccl_apply(&env, &m);
	assert_int_equal(m.node.f[F_JOB_HCA_COUNT].v.i, 2);
	assert_int_equal(m.ports[0]->f[F_PORT_JOB_HCA_INDEX].v.i, 0);
	assert_int_equal(m.ports[1]->f[F_PORT_JOB_HCA_INDEX].v.i, -1);
	assert_int_equal(m.ports[2]->f[F_PORT_JOB_HCA_INDEX].v.i, 1);
	assert_string_equal(m.ports[0]->f[F_PORT_JOB_RAIL].v.s, "1");
	assert_string_equal(m.ports[2]->f[F_PORT_JOB_RAIL].v.s, "2");
	/* no GID table: the index NCCL uses is not known, never guessed */
	assert_int_equal(m.ports[0]->f[F_PORT_JOB_GID_INDEX].state, ABS_NOT_COLLECTED);
	/* one port without a PCI address: every position in name order */
	field_set_str(m.ports[1]->netdev, F_NETDEV_BUS, "");
	job_port_rail(&m, m.ports[0], rail, sizeof(rail));
	assert_string_equal(rail, "0");
	job_port_rail(&m, m.ports[2], rail, sizeof(rail));
	assert_string_equal(rail, "2");
	/* without a job: the port facts are absent, not -1 */
	nccl_env_free(&env);
	env.given = false;
	nccl_apply(&env, &m);
	assert_int_equal(m.ports[0]->f[F_PORT_JOB_HCA_INDEX].state, ABS_NOT_COLLECTED);
	assert_int_equal(m.ports[0]->f[F_PORT_JOB_RAIL].state, ABS_NOT_COLLECTED);
	nccl_env_free(&env);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(list_selection),
		cmocka_unit_test(list_limits),
		cmocka_unit_test(load_param),
		cmocka_unit_test(gdr_level),
		cmocka_unit_test(env_file),
		cmocka_unit_test(apply_ib_hca),
		cmocka_unit_test(apply_merge_nics),
		cmocka_unit_test(apply_socket_ifname),
		cmocka_unit_test(apply_socket_family_order),
		cmocka_unit_test(apply_numbers),
		cmocka_unit_test(apply_tc_priority),
		cmocka_unit_test(apply_fifo_tc),
		cmocka_unit_test(apply_gid),
		cmocka_unit_test(apply_gdr),
		cmocka_unit_test(apply_net),
		cmocka_unit_test(apply_unjudged),
		cmocka_unit_test(apply_absent),
		cmocka_unit_test(apply_rails),
	};

	log_set_level(LOG_LVL_ERROR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
