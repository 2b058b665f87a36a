// SPDX-License-Identifier: MIT
/*
 * Conversions that used to be undefined, with the exact inputs fuzzing and
 * review found (issue 16): times past 2262 and before 1970, sizes and
 * durations whose float does not fit the integer they are cast to, a float
 * of 2^63 and more printed as an integer, rule values far out of range, and
 * a recording whose one series id would have made the reader allocate GBs.
 * Each must give a clear error (or the right value), never a wrapped one.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine.h"
#include "recording.h"
#include "snapshot.h"
#include "strbuf.h"
#include "util.h"

static void rfc3339_range(void **state)
{
	char buf[48];
	int64_t ns;

	(void)state;
	/* the last second int64 nanoseconds hold, and the one after it */
	assert_int_equal(parse_rfc3339("2262-04-11T23:47:16.854775807Z", &ns), 0);
	assert_int_equal(ns, INT64_MAX);
	assert_int_equal(parse_rfc3339("2262-04-11T23:47:16.854775808Z", &ns), -ERANGE);
	assert_int_equal(parse_rfc3339("2262-04-11T23:47:17Z", &ns), -ERANGE);
	/* the input that printed 1816-03-30T05:56:08.-933Z */
	assert_int_equal(parse_rfc3339("2263-01-01T00:00:00Z", &ns), -ERANGE);
	assert_int_equal(parse_rfc3339("9999-12-31T23:59:59Z", &ns), -ERANGE);
	/* before the epoch */
	assert_int_equal(parse_rfc3339("1969-12-31T23:59:59Z", &ns), -ERANGE);
	assert_int_equal(parse_rfc3339("1970-01-01T00:00:00Z", &ns), 0);
	assert_int_equal(ns, 0);
	/* not calendar times, not the format */
	assert_int_equal(parse_rfc3339("2025-02-30T00:00:00Z", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("2025-12-02T24:00:00Z", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("2025-12-02T10:40:60Z", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("-025-12-02T10:40:00Z", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339(" 2025-12-02T10:40:00Z", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("2025-12-2T10:40:00Z", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("2025-12-02T10:40:00.Z", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("2025-12-02T10:40:00", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("2025-12-02T10:40:00Zjunk", &ns), -EINVAL);
	assert_int_equal(parse_rfc3339("2025-12-02T10:40:00.123456789123Z", &ns), 0);
	assert_int_equal(ns % 1000000000LL, 123456789);
	/* printing a time before the epoch: the fraction stays positive */
	format_rfc3339(-1000000LL, buf, sizeof(buf));
	assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
	format_rfc3339(INT64_MAX, buf, sizeof(buf));
	assert_string_equal(buf, "2262-04-11T23:47:16.854Z");
}

static void snapshot_time_past_2262(void **state)
{
	static const char tmpl[] =
	    "{\"schema\": \"rocewatch-snapshot\", \"schema_version\": 2, \"host\": \"n1\","
	    " \"time\": \"%s\", \"collectors\": {}, \"node\": {\"fields\": {}},"
	    " \"netdevs\": [], \"rdma_ports\": []}";
	struct snapshot_file *sf = NULL;
	char doc[512], err[512];

	(void)state;
	snprintf(doc, sizeof(doc), tmpl, "2025-12-02T10:40:00Z");
	if (snapshot_open_buffer("t.json", doc, strlen(doc), &sf, err, sizeof(err)))
		fail_msg("a good snapshot was refused: %s", err);
	snapshot_close(sf);
	snprintf(doc, sizeof(doc), tmpl, "2263-01-01T00:00:00Z");
	assert_int_equal(snapshot_open_buffer("t.json", doc, strlen(doc), &sf, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "t.json"));
	assert_non_null(strstr(err, "'2263-01-01T00:00:00Z' is outside 1970 to 2262"));
}

static void sizes(void **state)
{
	uint64_t v = 7;

	(void)state;
	assert_int_equal(parse_size("1e30", &v), -ERANGE);
	assert_int_equal(parse_size("nan", &v), -EINVAL);
	assert_int_equal(parse_size("nanB", &v), -EINVAL);
	assert_int_equal(parse_size("NaN", &v), -EINVAL);
	assert_int_equal(parse_size("inf", &v), -EINVAL);
	assert_int_equal(parse_size("-1", &v), -EINVAL);
	assert_int_equal(parse_size("+1", &v), -EINVAL);
	assert_int_equal(parse_size("0x10", &v), -EINVAL);
	assert_int_equal(parse_size("1e400", &v), -ERANGE);
	assert_int_equal(parse_size("16777216T", &v), -ERANGE); /* 2^64 */
	assert_int_equal(parse_size("18446744073709551616", &v), -ERANGE);
	assert_int_equal(v, 7); /* untouched on error */
	/* integers are exact, not rounded through a double */
	assert_int_equal(parse_size("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(parse_size("9007199254740993", &v), 0);
	assert_true(v == 9007199254740993ULL);
	assert_int_equal(parse_size("16777215TiB", &v), 0);
	assert_true(v == 16777215ULL << 40);
	assert_int_equal(parse_size("1.5K", &v), 0);
	assert_int_equal(v, 1536);
	assert_int_equal(parse_size("1e3", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(parse_size("256MiB", &v), 0);
	assert_int_equal(v, 256ULL << 20);
}

static void durations(void **state)
{
	static const char *const too_big[] = {
		"9223372036854775808ns",
		"9223372036854776us",
		"9223372036855ms",
		"9223372037s",
		"153722868m",
		"2562048h",
		"106752d",
		"15251w",
		"9223372036854775807ns1ns",
		"99999999999999999999999s",
	};
	int64_t ns = 7;

	(void)state;
	/* exactly INT64_MAX: representable, so accepted and exact */
	assert_int_equal(parse_duration("9223372036854775807ns", &ns), 0);
	assert_true(ns == INT64_MAX);
	assert_int_equal(parse_duration("15250w", &ns), 0);
	assert_true(ns == 15250LL * 7 * 86400 * 1000000000LL);
	for (size_t i = 0; i < ARRAY_SIZE(too_big); i++) {
		ns = 7;
		if (parse_duration(too_big[i], &ns) != -ERANGE)
			fail_msg("%s: not refused as out of range", too_big[i]);
		assert_int_equal(ns, 7);
	}
	assert_int_equal(parse_duration("nans", &ns), -EINVAL);
	assert_int_equal(parse_duration("infs", &ns), -EINVAL);
	assert_int_equal(parse_duration("1e3s", &ns), -EINVAL);
	assert_int_equal(parse_duration("+1s", &ns), -EINVAL);
	assert_int_equal(parse_duration(".5s", &ns), 0);
	assert_int_equal(ns, 500000000);
	assert_int_equal(parse_duration("0.5ms", &ns), 0);
	assert_int_equal(ns, 500000);
	assert_int_equal(parse_duration("1h0.5m", &ns), 0);
	assert_true(ns == 3630LL * 1000000000LL);
}

static void recording_times(void **state)
{
	int64_t t;

	(void)state;
	assert_int_equal(rec_parse_time("2263-01-01T00:00:00Z", 0, &t), 0); /* ms reach far */
	assert_true(t == 9246182400000LL);
	assert_int_equal(rec_parse_time("2025-02-30T00:00:00Z", 0, &t), -EINVAL);
	assert_int_equal(rec_parse_time("-9223372036854775807ns", 1000, &t), 0);
	assert_true(t == 1000 - 9223372036854LL);
	assert_int_equal(rec_parse_time("-9223372036854775808ns", 0, &t), -EINVAL);
	assert_int_equal(rec_parse_time("-106752d", 0, &t), -EINVAL);
	assert_int_equal(rec_parse_time("2026-12-02T10:00:00+02:00", 0, &t), 0);
	assert_true(t == 1796205600000LL - 7200000LL);
}

static void doubles_past_int64(void **state)
{
	static const double vals[] = { 9223372036854775808.0,
				       18446744073709551616.0,
				       -9223372036854775808.0 * 2,
				       1e300,
				       1e15,
				       -1e15 };
	struct strbuf sb = { 0 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
		sb_reset(&sb);
		sb_double(&sb, vals[i]);
		/* Prometheus and JSON read floats: the text must read back as the value */
		assert_true(strtod(sb.buf, NULL) == vals[i]);
	}
	sb_reset(&sb);
	sb_double(&sb, 9223372036854775808.0);
	assert_string_equal(sb.buf, "9.2233720368547758e+18");
	sb_reset(&sb);
	sb_double(&sb, 999999999999999.0); /* below 1e15: still an integer */
	assert_string_equal(sb.buf, "999999999999999");
	sb_free(&sb);
}

static void rule_values_out_of_range(void **state)
{
	static const char yaml[] =
	    "profile: t\nrules:\n"
	    "  - name: tos\n    scope: node\n    severity: info\n"
	    "    expr: 'tos_dscp(100000000000000000000000000000000000000) == 0'\n"
	    "  - name: mtu\n    scope: node\n    severity: info\n"
	    "    expr: 'ib_mtu_for(100000000000000000000000000000000000000) == 0'\n";
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	const struct rule_result *res;
	struct node_model m;
	size_t n;

	(void)state;
	assert_int_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg), 0);
	model_init(&m);
	assert_int_equal(rules_evaluate(e, &m, 1), 0);
	n = rules_results(e, &res);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(res[i].outcome, RULE_UNKNOWN);
		assert_non_null(strstr(res[i].reason, "value out of range"));
	}
	model_free(&m);
	rules_free(e);
	rules_diags_free(&dg);
}

static int exec_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK)
		fprintf(stderr, "%s: %s\n", sql, msg);
	sqlite3_free(msg);
	return rc;
}

static void recording_sparse_series_id(void **state)
{
	char path[] = "/tmp/rwt-rec-XXXXXX";
	struct rec_reader rd;
	sqlite3 *db;
	char err[512] = "";
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(rec_create_schema(db, "main", err, sizeof(err)), 0);
	assert_int_equal(exec_sql(db, "INSERT INTO runs VALUES (1, 1000, 'n1', '0.1', 1000, 1)"),
			 SQLITE_OK);
	assert_int_equal(exec_sql(db, "INSERT INTO polls VALUES (1, 1000, 1, 3, 1, 1, 0, 0)"),
			 SQLITE_OK);
	/* the one row of the reproducer: id 50,000,000 */
	assert_int_equal(exec_sql(db, "INSERT INTO series VALUES (50000000, 'netdev', 'eth2', 0,"
				      " '', 'field', 'mtu', -1, 1)"),
			 SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(rec_open(&rd, path, err, sizeof(err)), 0);
	assert_int_equal(rec_load(&rd, INT64_MIN, INT64_MAX, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "series id 50000000 among 1 series"));
	assert_null(rd.series); /* refused before allocating */
	rec_close(&rd);

	/* dense ids with a few holes (a writer that crashed) still read */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(exec_sql(db, "DELETE FROM series; INSERT INTO series VALUES (1, 'netdev',"
				      " 'eth2', 0, '', 'field', 'mtu', -1, 1), (40, 'netdev',"
				      " 'eth2', 0, '', 'field', 'speed', -1, 1)"),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(rec_open(&rd, path, err, sizeof(err)), 0);
	assert_int_equal(rec_load(&rd, INT64_MIN, INT64_MAX, err, sizeof(err)), 0);
	assert_int_equal(rd.n_series, 41);
	assert_true(rd.series[40].used && rd.series[1].used && !rd.series[2].used);
	rec_close(&rd);

	/* a poll that claims a negative number of rows: that poll is named and skipped */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(exec_sql(db, "UPDATE polls SET n_samples = -5"), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(rec_open(&rd, path, err, sizeof(err)), 0);
	assert_int_equal(rec_load(&rd, INT64_MIN, INT64_MAX, err, sizeof(err)), 0);
	assert_int_equal(rd.n_polls, 0);
	assert_int_equal(rd.n_bad, 1);
	rec_close(&rd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc3339_range),
		cmocka_unit_test(snapshot_time_past_2262),
		cmocka_unit_test(sizes),
		cmocka_unit_test(durations),
		cmocka_unit_test(recording_times),
		cmocka_unit_test(doubles_past_int64),
		cmocka_unit_test(rule_values_out_of_range),
		cmocka_unit_test(recording_sparse_series_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
