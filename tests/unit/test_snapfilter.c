// SPDX-License-Identifier: MIT
/*
 * The snapshot reader for a keep set, as fleet check reads snapshots: on
 * every snapshot fixture, for the fields of the shipped profiles, of all
 * fields and of none, it reads what the whole read reads
 * (snapfilter_check.h); on broken documents it says what is wrong, the
 * message the one the format has always given, word for word.
 */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine.h"
#include "helpers.h"
#include "snapfilter_check.h"
#include "util.h"

static char fixtures[512];

enum {
	KEEP_FLEET,
	KEEP_FLEET_NODE,
	KEEP_ALL,
	KEEP_NONE,
	KEEP__COUNT
};
static struct snapshot_keep *keeps[KEEP__COUNT];
static const char *const keep_names[KEEP__COUNT] = { "fleet", "fleet + lossless-roce", "all",
						     "none" };

/* The fields fleet check reads with these profiles loaded. */
static struct snapshot_keep *keep_of(const char *const *profiles)
{
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	struct snapshot_keep *k;
	bool used[F__COUNT];

	for (; *profiles; profiles++)
		assert_int_equal(rules_spec_add_profile(&spec, *profiles), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	rules_fields_used(e, used);
	k = snapshot_keep_new(used);
	assert_non_null(k);
	rules_free(e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	return k;
}

static int setup(void **state)
{
	static const char *const fleet[] = { "fleet", NULL };
	static const char *const both[] = { "fleet", "lossless-roce", NULL };
	bool none[F__COUNT] = { 0 };

	(void)state;
	keeps[KEEP_FLEET] = keep_of(fleet);
	keeps[KEEP_FLEET_NODE] = keep_of(both);
	keeps[KEEP_ALL] = snapshot_keep_new(NULL);
	keeps[KEEP_NONE] = snapshot_keep_new(none);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < KEEP__COUNT; i++)
		snapshot_keep_free(keeps[i]);
	return 0;
}

/* What the keep sets are made of: the test below is only as good as this. */
static void keep_sets(void **state)
{
	const struct snapshot_keep *f = keeps[KEEP_FLEET], *n = keeps[KEEP_FLEET_NODE];

	(void)state;
	assert_true(snapshot_keep_has(f, F_NETDEV_MTU) && snapshot_keep_has(f, F_NETDEV_DSCP_MAP));
	assert_false(snapshot_keep_has(f, F_NODE_KERNEL));
	assert_false(snapshot_keep_has(f, F_PORT_GIDS));
	assert_false(snapshot_keep_has(f, F_NETDEV_PFC_RX_PAUSE));
	/* a port is bound to its netdev by this name when the ifindex does not */
	assert_true(snapshot_keep_has(f, F_PORT_NETDEV));
	/* a per-node profile reads more; its applies_to guards count too */
	assert_true(snapshot_keep_has(n, F_NODE_MEMLOCK));
	assert_true(snapshot_keep_has(n, F_PORT_LINK_LAYER));
	/* the pause counters come with what vendor_fill_netdev() makes them of */
	assert_true(!snapshot_keep_has(n, F_NETDEV_PFC_RX_PAUSE) ||
		    (snapshot_keep_has(n, F_NETDEV_PFC_INDICATIONS) &&
		     snapshot_keep_has(n, F_NETDEV_PFC_SOURCE)));
	for (int id = 0; id < F__COUNT; id++) {
		assert_true(snapshot_keep_has(keeps[KEEP_ALL], id));
		assert_true(snapshot_keep_has(keeps[KEEP_NONE], id) == (id == F_PORT_NETDEV));
	}
}

static size_t n_files, n_read, n_refused;

static int one_fixture(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t l = strlen(path);
	char *buf = NULL, why[768];
	size_t len = 0;

	(void)st, (void)ftw;
	if (type != FTW_F || l < 5 || strcmp(path + l - 5, ".json"))
		return 0;
	assert_int_equal(read_file_all(path, &buf, &len), 0);
	/* only snapshots (a fixture of another kind is refused alike by every reading) */
	n_files++;
	for (int i = 0; i < KEEP__COUNT; i++) {
		int r = sfc_check(buf, len, keeps[i], why, sizeof(why));

		if (r < 0)
			fail_msg("%s, keeping %s: %s", path, keep_names[i], why);
		n_read += r == SFC_READ;
		n_refused += r == 0;
	}
	free(buf);
	return 0;
}

static void every_fixture(void **state)
{
	char dir[600];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/snapshots", fixtures);
	assert_int_equal(nftw(dir, one_fixture, 16, FTW_PHYS), 0);
	/* the snapshots under tests/fixtures/snapshots, the good and the bad */
	assert_true(n_files >= 40);
	assert_true(n_read >= 30 * KEEP__COUNT);
	assert_true(n_refused >= 4 * KEEP__COUNT);
}

/* The 8-NIC model (good-8nic.json's last element) as a document of its own. */
static char *model_8nic(size_t *len)
{
	char path[600];
	json_error_t je;
	json_t *all, *last;
	char *text;

	snprintf(path, sizeof(path), "%s/snapshots/rules/good-8nic.json", fixtures);
	all = json_load_file(path, 0, &je);
	assert_non_null(all);
	last = json_array_get(all, json_array_size(all) - 1);
	text = json_dumps(last, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	assert_non_null(text);
	json_decref(all);
	*len = strlen(text);
	return text;
}

/* doc with the first occurrence of from replaced by to (from must be there) */
static char *replaced(const char *doc, const char *from, const char *to)
{
	const char *at = strstr(doc, from);
	size_t a, lf = strlen(from), lt = strlen(to), ld = strlen(doc);
	char *out;

	assert_non_null(at);
	a = (size_t)(at - doc);
	out = malloc(ld - lf + lt + 1);
	assert_non_null(out);
	memcpy(out, doc, a);
	memcpy(out + a, to, lt);
	memcpy(out + a + lt, at + lf, ld - a - lf + 1);
	return out;
}

/*
 * A broken document: every reading refuses it alike, and the message says
 * what the format has always said (contains: a piece of it, as a check
 * that the break is the one meant).
 */
static void refused_alike(const char *doc, size_t len, const char *contains)
{
	struct node_model m;
	char why[768], err[512] = "";
	int r;

	r = sfc_check(doc, len, keeps[KEEP_FLEET], why, sizeof(why));
	if (r)
		fail_msg("%s: %s", contains, r < 0 ? why : "taken");
	model_init(&m);
	assert_int_not_equal(
	    snapshot_read_last_kept("n.json", doc, len, keeps[KEEP_FLEET], &m, err, sizeof(err)),
	    0);
	model_free(&m);
	if (strncmp(err, "n.json", 6) || !strstr(err, contains))
		fail_msg("expected '%s' in the message, got: %s", contains, err);
}

static void broken_documents(void **state)
{
	static const struct {
		const char *from, *to, *says;
	} breaks[] = {
		/* in the counters, which a keep set never keeps */
		{ "\"rx0_packets\"", "\"rx0_pack\xff\"", "unable to decode byte" },
		{ "\"rx0_packets\"", "\"rx0_pack\xc0\x80\"", "unable to decode byte" },
		{ "\"rx0_packets\"", "\"rx\\u0000packets\"", "NUL byte in object key" },
		{ "\"kernel\": \"", "\"kernel\": \"\\u0000", "\\u0000 is not allowed" },
		{ "\"rx0_packets\"", "\"rx\\ud800packets\"", "invalid Unicode" },
		{ "\"rx0_packets\"", "\"rx\\x\"", "invalid escape" },
		{ "\"counters\": {", "\"counters\": {}, \"counters\": {", "duplicate object key" },
		{ "\"rx0_packets\": 1000", "\"rx0_packets\": 1000, \"rx0_packets\": 1",
		  "duplicate object key" },
		{ "\"rx0_packets\": 1000", "\"rx0_packets\": NaN", "invalid token" },
		{ "\"rx0_packets\": 1000", "\"rx0_packets\": -5", "non-negative integer" },
		{ "\"rx0_packets\": 1000", "\"rx0_packets\": 1.5", "non-negative integer" },
		{ "\"rx0_packets\": 1000", "\"rx0_packets\": 99999999999999999999",
		  "too big integer" },
		{ "\"rx0_packets\": 1000", "\"rx0_packets\": 1e999", "real number overflow" },
		{ "\"rx0_packets\": 1000", "\"rx0_packets\": 01", "invalid token" },
		{ "\"rx0_packets\": 1000",
		  "\"rx0_packets_and_a_name_far_too_long_to_be_a_counter\": 1000", "too long" },
		{ "\"ethtool\": {", "\"bogus\": {}, \"ethtool\": {", "unknown counter set" },
		/* in fields and absent entries no fleet rule reads */
		{ "\"kernel\": \"", "\"kernel\": 5, \"x\": \"", "expected a string" },
		{ "\"memlock\": {", "\"memlock\": {\"reason\": \"tired\"}, \"y\": {",
		  "expected {\"reason\"" },
		{ "\"kernel\": \"", "\"memlock\": 1, \"kernel\": \"", "both present and absent" },
		{ "\"kernel\": \"", "\"kernel\": \"a\", \"kernel\": \"", "duplicate object key" },
		/* where no reader looks: a serve's "probe" section */
		{ "\"node\": {", "\"probe\": {\"a\": [{\"b\": 1, \"b\": 2}]}, \"node\": {",
		  "duplicate object key" },
		{ "\"node\": {", "\"probe\": {\"a\": 1, \"a\": 2}, \"node\": {",
		  "duplicate object key" },
		/* the same key twice at the top */
		{ "\"node\": {", "\"schema\": 1, \"node\": {", "duplicate object key" },
	};
	size_t len, n;
	char *doc = model_8nic(&len), *bad, *bomb;

	(void)state;
	/* the 8-NIC model itself is taken, so each break below is what is refused */
	assert_int_equal(sfc_check(doc, len, keeps[KEEP_FLEET], (char[768]){ 0 }, 768), SFC_READ);
	for (size_t i = 0; i < ARRAY_SIZE(breaks); i++) {
		bad = replaced(doc, breaks[i].from, breaks[i].to);
		refused_alike(bad, strlen(bad), breaks[i].says);
		free(bad);
	}
	/* truncated anywhere in the counters, and garbage after the end */
	refused_alike(doc, len / 2, "");
	bad = malloc(len + 3);
	assert_non_null(bad);
	memcpy(bad, doc, len);
	memcpy(bad + len, " x", 3);
	refused_alike(bad, len + 2, "end of file expected");
	free(bad);
	/* nesting deeper than jansson takes (2048), inside a counter set */
	n = 3000;
	bomb = malloc(2 * n + 1);
	assert_non_null(bomb);
	memset(bomb, '[', n);
	memset(bomb + n, ']', n);
	bomb[2 * n] = '\0';
	{
		char *to = malloc(2 * n + 32);

		assert_non_null(to);
		snprintf(to, 2 * n + 32, "\"rx0_packets\": %s", bomb);
		bad = replaced(doc, "\"rx0_packets\": 1000", to);
		refused_alike(bad, strlen(bad), "maximum parsing depth");
		free(bad);
		free(to);
	}
	/*
	 * In a serve's "probe" (at depth 2), 2047 arrays are as deep as jansson
	 * goes, 2048 one too deep: the reader takes what jansson takes.
	 */
	for (size_t k = 2047; k <= 2048; k++) {
		char *to = malloc(2 * k + 32);

		assert_non_null(to);
		memset(bomb, '[', k);
		memset(bomb + k, ']', k);
		bomb[2 * k] = '\0';
		snprintf(to, 2 * k + 32, "\"probe\": %s, \"node\": {", bomb);
		bad = replaced(doc, "\"node\": {", to);
		if (k == 2047)
			assert_int_equal(
			    sfc_check(bad, strlen(bad), keeps[KEEP_FLEET], (char[768]){ 0 }, 768),
			    SFC_READ);
		else
			refused_alike(bad, strlen(bad), "maximum parsing depth");
		free(bad);
		free(to);
	}
	free(bomb);
	free(doc);
}

/*
 * What a keep set reads of a good document: escapes and UTF-8 decoded in
 * strings, the fields it keeps set, the others and the counters left out.
 */
static void kept_as_written(void **state)
{
	static const char doc[] =
	    "[{\"schema\":\"rocewatch-snapshot\",\"schema_version\":2,\"host\":\"n\\u00e9\\\"1\","
	    "\"node\":{\"fields\":{\"kernel\":\"6.1\"},\"counters\":{}},"
	    "\"netdevs\":[{\"name\":\"eth0\",\"fields\":{\"mtu\":9000,\"kind\":\"x\\ty\"},"
	    "\"counters\":{\"ethtool\":{\"a\":1,\"b\":18446744073709551615.0}}}]}]";
	struct node_model m;
	char why[768], err[256];
	struct object *o;

	(void)state;
	model_init(&m);
	assert_int_equal(snapshot_read_last_kept("k.json", doc, sizeof(doc) - 1, keeps[KEEP_FLEET],
						 &m, err, sizeof(err)),
			 0);
	assert_string_equal(m.host, "n\xc3\xa9\"1");
	o = model_netdev(&m, "eth0");
	assert_non_null(o);
	assert_true(field_present(o, F_NETDEV_MTU));
	assert_int_equal(o->f[F_NETDEV_MTU].v.i, 9000);
	assert_false(field_present(o, F_NETDEV_KIND));
	assert_false(field_present(&m.node, F_NODE_KERNEL));
	assert_int_equal(o->cs[CSET_ETHTOOL].n, 0);
	model_free(&m);
	/* and every reading agrees on it */
	if (sfc_check(doc, sizeof(doc) - 1, keeps[KEEP_FLEET], why, sizeof(why)) != SFC_READ)
		fail_msg("%s", why);
	/* jansson loses one NUL right after a number or a literal: so does the reader */
	{
		static const char nul[] =
		    "{\"schema\":\"rocewatch-snapshot\",\"schema_version\":2\0,"
		    "\"host\":\"h\",\"node\":{},\"netdevs\":[],\"x\":true\0}";

		if (sfc_check(nul, sizeof(nul) - 1, keeps[KEEP_FLEET], why, sizeof(why)) !=
		    SFC_READ)
			fail_msg("%s", why);
	}
}

/*
 * A model as `rocewatch snapshot` writes it (helpers.h: collectors, GIDs,
 * per-priority arrays, a DSCP map, counters, an escaped string), a collector
 * failed with its detail: read for every keep set as it is read whole.
 */
static void written_model(void **state)
{
	struct node_model m;
	struct strbuf sb = { 0 };
	char why[768];

	(void)state;
	build_model(&m);
	strlcpy0(m.coll[1].name, "dcb", sizeof(m.coll[1].name));
	m.coll[1].enabled = m.coll[1].ran = true;
	m.coll[1].err = -EIO;
	strlcpy0(m.coll[1].detail, "eth2: \"dcbnl\" said no", sizeof(m.coll[1].detail));
	strlcpy0(m.coll[2].name, "wire", sizeof(m.coll[2].name));
	for (int pretty = 0; pretty < 2; pretty++) {
		sb_reset(&sb);
		assert_int_equal(snapshot_write(&sb, &m, pretty), 0);
		for (int i = 0; i < KEEP__COUNT; i++) {
			int r = sfc_check(sb.buf, sb.len, keeps[i], why, sizeof(why));

			if (r != SFC_READ)
				fail_msg("keeping %s: %d %s\n%s", keep_names[i], r,
					 r < 0 ? why : "", sb.buf);
		}
	}
	sb_free(&sb);
	model_free(&m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keep_sets),	    cmocka_unit_test(every_fixture),
		cmocka_unit_test(broken_documents), cmocka_unit_test(kept_as_written),
		cmocka_unit_test(written_model),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
		return 2;
	}
	strlcpy0(fixtures, argv[1], sizeof(fixtures));
	return cmocka_run_group_tests(tests, setup, teardown);
}
