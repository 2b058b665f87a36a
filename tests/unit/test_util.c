// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http.h"
#include "strbuf.h"
#include "util.h"

static void durations(void **state)
{
	int64_t ns;

	(void)state;
	assert_int_equal(parse_duration("1s", &ns), 0);
	assert_int_equal(ns, 1000000000LL);
	assert_int_equal(parse_duration("100ms", &ns), 0);
	assert_int_equal(ns, 100000000LL);
	assert_int_equal(parse_duration("1m30s", &ns), 0);
	assert_int_equal(ns, 90000000000LL);
	assert_int_equal(parse_duration("1.5s", &ns), 0);
	assert_int_equal(ns, 1500000000LL);
	assert_int_equal(parse_duration("2h", &ns), 0);
	assert_int_equal(ns, 7200000000000LL);
	assert_int_not_equal(parse_duration("", &ns), 0);
	assert_int_not_equal(parse_duration("10", &ns), 0);
	assert_int_not_equal(parse_duration("1x", &ns), 0);
	assert_int_not_equal(parse_duration("-1s", &ns), 0);
	assert_int_not_equal(parse_duration("s", &ns), 0);
}

static void sizes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(parse_size("64MiB", &v), 0);
	assert_int_equal(v, 64ULL << 20);
	assert_int_equal(parse_size("1G", &v), 0);
	assert_int_equal(v, 1ULL << 30);
	assert_int_equal(parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_not_equal(parse_size("12q", &v), 0);
}

static void listen_addresses(void **state)
{
	char host[64];
	int port;

	(void)state;
	assert_int_equal(http_parse_listen(":9479", host, sizeof(host), &port), 0);
	assert_string_equal(host, "");
	assert_int_equal(port, 9479);
	assert_int_equal(http_parse_listen("127.0.0.1:80", host, sizeof(host), &port), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(http_parse_listen("[::1]:9000", host, sizeof(host), &port), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 9000);
	assert_int_not_equal(http_parse_listen("9479", host, sizeof(host), &port), 0);
	assert_int_not_equal(http_parse_listen(":99999", host, sizeof(host), &port), 0);
	assert_int_not_equal(http_parse_listen("::1:80", host, sizeof(host), &port), 0);
	assert_int_not_equal(http_parse_listen("host:", host, sizeof(host), &port), 0);
}

static void label_escaping(void **state)
{
	struct strbuf sb = { 0 };

	(void)state;
	sb_label_escape(&sb, "a\"b\\c\nd");
	assert_string_equal(sb.buf, "a\\\"b\\\\c\\nd");
	sb_reset(&sb);
	sb_double(&sb, 1e-6 * 3);
	assert_string_equal(sb.buf, "3e-06");
	sb_reset(&sb);
	sb_double(&sb, 0.1 + 0.2);
	assert_string_equal(sb.buf, "0.30000000000000004");
	sb_reset(&sb);
	sb_u64(&sb, UINT64_MAX);
	assert_string_equal(sb.buf, "18446744073709551615");
	sb_free(&sb);
}

static void rfc3339(void **state)
{
	char buf[40];
	int64_t ns;

	(void)state;
	format_rfc3339(1764672000123000000LL, buf, sizeof(buf));
	assert_string_equal(buf, "2025-12-02T10:40:00.123Z");
	assert_int_equal(parse_rfc3339(buf, &ns), 0);
	assert_int_equal(ns, 1764672000123000000LL);
	assert_int_not_equal(parse_rfc3339("2025-12-02 10:40:00", &ns), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations),	    cmocka_unit_test(sizes),
		cmocka_unit_test(listen_addresses), cmocka_unit_test(label_escaping),
		cmocka_unit_test(rfc3339),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
