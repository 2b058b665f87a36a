// SPDX-License-Identifier: MIT
/* Snapshot JSON: write -> read -> write is identical; bad files are named precisely. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "snapshot.h"
#include "vendors.h"

static char fixtures[512];

static void round_trip(void **state)
{
	struct node_model m, back;
	struct strbuf a = { 0 }, b = { 0 };
	struct snapshot_file *sf;
	char path[] = "/tmp/rocewatch-snap-XXXXXX", err[512];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	build_model(&m);
	/* as the collectors leave a model: the driver-independent fields derived */
	vendor_fill_model(&m, false);
	assert_int_equal(snapshot_write_file(path, &m), 0);
	assert_int_equal(snapshot_open(path, &sf, err, sizeof(err)), 0);
	assert_int_equal(snapshot_count(sf), 1);
	model_init(&back);
	assert_int_equal(snapshot_apply(sf, 0, &back, err, sizeof(err)), 0);
	assert_int_equal(snapshot_write(&a, &m, 1), 0);
	assert_int_equal(snapshot_write(&b, &back, 1), 0);
	assert_string_equal(a.buf, b.buf);
	/* the facts themselves, not just the bytes */
	assert_int_equal(back.n_netdevs, 2);
	assert_int_equal(back.netdevs[0]->f[F_NETDEV_MTU].v.i, 9000);
	assert_int_equal(back.netdevs[1]->f[F_NETDEV_PFC_ENABLED].state, ABS_UNSUPPORTED);
	assert_int_equal(back.netdevs[1]->f[F_NETDEV_PFC_ENABLED].err, 95);
	assert_ptr_equal(back.ports[0]->netdev, back.netdevs[0]);
	assert_int_equal(back.netdevs[0]->f[F_NETDEV_DSCP_MAP].v.dscp[26], 3);
	assert_int_equal(back.ports[0]->gids.n, 2);
	snapshot_close(sf);
	model_free(&back);
	model_free(&m);
	sb_free(&a);
	sb_free(&b);
	unlink(path);
}

/*
 * u64 counters above INT64_MAX, as a driver's all-ones "not available" reaches
 * `ethtool -S` and dcbnl's PFC requests (seen with rwnic in the vm tier): they
 * were written as negative integers, which the reader then refused.  Now they
 * are written as reals, read back as the same magnitude, all-ones exactly.
 */
static void huge_counters(void **state)
{
	struct node_model m, back;
	struct strbuf a = { 0 };
	struct snapshot_file *sf;
	struct object *o;
	char path[] = "/tmp/rocewatch-snap-XXXXXX", err[512];
	int fd = mkstemp(path);
	uint64_t v; /* an index; cset_find's -1 becomes huge and fails the bound */

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	build_model(&m);
	o = model_netdev(&m, "eth2");
	assert_non_null(o);
	cset_set(&o->cs[CSET_ETHTOOL], "edge", INT64_MAX);
	cset_set(&o->cs[CSET_ETHTOOL], "half", 1ULL << 63);
	cset_set(&o->cs[CSET_ETHTOOL], "ones", UINT64_MAX);
	field_set_prio(o, F_NETDEV_PFC_REQUESTS, 3, UINT64_MAX);
	assert_int_equal(snapshot_write(&a, &m, 0), 0);
	if (strstr(a.buf, ":-") || strstr(a.buf, ",-") || strstr(a.buf, "[-"))
		fail_msg("a negative number in the snapshot: %s", a.buf);
	assert_non_null(strstr(a.buf, "\"edge\":9223372036854775807"));
	assert_int_equal(snapshot_write_file(path, &m), 0);
	assert_int_equal(snapshot_open(path, &sf, err, sizeof(err)), 0);
	model_init(&back);
	if (snapshot_apply(sf, 0, &back, err, sizeof(err)))
		fail_msg("its own snapshot refused: %s", err);
	o = model_netdev(&back, "eth2");
	assert_non_null(o);
	v = cset_find(&o->cs[CSET_ETHTOOL], "edge");
	assert_true(v < o->cs[CSET_ETHTOOL].n && o->cs[CSET_ETHTOOL].vals[v] == INT64_MAX);
	v = cset_find(&o->cs[CSET_ETHTOOL], "half");
	assert_true(v < o->cs[CSET_ETHTOOL].n && o->cs[CSET_ETHTOOL].vals[v] == 1ULL << 63);
	v = cset_find(&o->cs[CSET_ETHTOOL], "ones");
	assert_true(v < o->cs[CSET_ETHTOOL].n && o->cs[CSET_ETHTOOL].vals[v] == UINT64_MAX);
	assert_true(o->f[F_NETDEV_PFC_REQUESTS].v.arr[3] == UINT64_MAX);
	snapshot_close(sf);
	model_free(&back);
	model_free(&m);
	sb_free(&a);
	unlink(path);
}

struct bad_case {
	const char *file;
	const char *expect; /* substring of the error */
};

static void malformed_rejected(void **state)
{
	static const struct bad_case cases[] = {
		{ "bad-syntax.json", "bad-syntax.json:4:" },
		{ "bad-schema.json", "not a rocewatch snapshot" },
		{ "bad-version.json", "unsupported schema_version" },
		{ "bad-type.json", "$.netdevs[1].fields.mtu: expected an integer" },
		{ "bad-field.json", "$.netdevs[0].fields.colour: unknown netdev field" },
		{ "bad-reason.json", "$.netdevs[0].absent.pfc.enabled: expected {\"reason\"" },
		{ "bad-prio.json",
		  "$.netdevs[0].fields.pfc.enabled: element 0: expected an integer 0..7" },
		{ "bad-seq.json", "$[1].rdma_ports[0]: expected a device name and a port number" },
		{ "bad-dup.json", "duplicate netdev 'eth0'" },
		{ "missing.json", "missing.json: No such file or directory" },
		/* a directory is named once, as what it is (not "1:0: '[' or '{' expected") */
		{ "rules", "rules: is a directory, not a snapshot file" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[600], err[512] = "";
		struct snapshot_file *sf = NULL;

		snprintf(path, sizeof(path), "%s/%s", fixtures, cases[i].file);
		assert_int_not_equal(snapshot_open(path, &sf, err, sizeof(err)), 0);
		assert_null(sf);
		if (!strstr(err, cases[i].expect))
			fail_msg("%s: got '%s', want '%s'", cases[i].file, err, cases[i].expect);
		/* the path once, not "x.json: unable to open x.json" */
		if (strstr(strstr(err, cases[i].file) + 1, cases[i].file))
			fail_msg("%s: the path twice in '%s'", cases[i].file, err);
	}
}

static void sequence_loads(void **state)
{
	char path[600], err[512];
	struct snapshot_file *sf;
	struct node_model m;

	(void)state;
	snprintf(path, sizeof(path), "%s/seq-ok.json", fixtures);
	assert_int_equal(snapshot_open(path, &sf, err, sizeof(err)), 0);
	assert_int_equal(snapshot_count(sf), 2);
	model_init(&m);
	assert_int_equal(snapshot_apply(sf, 0, &m, err, sizeof(err)), 0);
	assert_int_equal(m.n_netdevs, 1);
	assert_int_equal(m.netdevs[0]->f[F_NETDEV_MTU].v.i, 1500);
	assert_int_equal(snapshot_apply(sf, 1, &m, err, sizeof(err)), 0);
	assert_int_equal(m.netdevs[0]->f[F_NETDEV_MTU].v.i, 9000);
	/* a field present in sample 0 and not in sample 1 does not linger */
	assert_int_equal(m.netdevs[0]->f[F_NETDEV_CARRIER].state, ABS_NOT_COLLECTED);
	model_free(&m);
	snapshot_close(sf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(huge_counters),
		cmocka_unit_test(malformed_rejected),
		cmocka_unit_test(sequence_loads),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 2;
	}
	strlcpy0(fixtures, argv[1], sizeof(fixtures));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
