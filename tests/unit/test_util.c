// SPDX-License-Identifier: MIT
#include <errno.h>
#include <float.h>
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

/* Sysfs prints decimal: "010" is ten, not octal eight; hex has its own parser. */
static void integers(void **state)
{
	uint64_t u;
	int64_t i;

	(void)state;
	assert_int_equal(parse_u64("010", &u), 0);
	assert_int_equal(u, 10);
	assert_int_equal(parse_u64("42\n", &u), 0);
	assert_int_equal(u, 42);
	/* 19 digits and blanks: the short path; 20 digits: strtoull */
	assert_int_equal(parse_u64("9999999999999999999 \t\n", &u), 0);
	assert_true(u == 9999999999999999999ULL);
	assert_int_equal(parse_u64("00000000000000000000042", &u), 0);
	assert_int_equal(u, 42);
	assert_int_equal(parse_u64("42 7", &u), -EINVAL);
	assert_int_equal(parse_u64("18446744073709551615", &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(parse_u64("18446744073709551616", &u), -ERANGE);
	assert_int_equal(parse_u64("0x10", &u), -EINVAL);
	assert_int_equal(parse_u64("", &u), -EINVAL);
	assert_int_equal(parse_u64("-1", &u), -EINVAL);
	assert_int_equal(parse_u64(" 1", &u), -EINVAL);
	assert_int_equal(parse_u64("+1", &u), -EINVAL);
	assert_int_equal(parse_u64("12abc", &u), -EINVAL);
	assert_int_equal(parse_u64(NULL, &u), -EINVAL);

	assert_int_equal(parse_hex_u64("0x10de", &u), 0);
	assert_int_equal(u, 0x10de);
	assert_int_equal(parse_hex_u64("0x030200\n", &u), 0);
	assert_int_equal(u, 0x030200);
	assert_int_equal(parse_hex_u64("ff", &u), 0);
	assert_int_equal(u, 0xff);
	assert_int_equal(parse_hex_u64("0x", &u), -EINVAL);
	assert_int_equal(parse_hex_u64("0x0x5", &u), -EINVAL);
	assert_int_equal(parse_hex_u64("0x-5", &u), -EINVAL);
	assert_int_equal(parse_hex_u64("0x1ffffffffffffffff", &u), -ERANGE);

	assert_int_equal(parse_i64("-1", &i), 0);
	assert_int_equal(i, -1);
	assert_int_equal(parse_i64("010", &i), 0);
	assert_int_equal(i, 10);
	assert_int_equal(parse_i64("0x10", &i), -EINVAL);
	assert_int_equal(parse_i64("9223372036854775808", &i), -ERANGE);
	assert_int_equal(parse_i64("-9223372036854775808", &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(parse_i64("-9223372036854775809", &i), -ERANGE);
	assert_int_equal(parse_i64("--1", &i), -EINVAL);
	assert_int_equal(parse_i64("-", &i), -EINVAL);
}

/* Run fn with stderr going to a file; the number of lines it wrote there. */
static int stderr_lines(void (*fn)(void *), void *arg, char *last, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO), n = 0;
	char line[512];

	assert_non_null(tmp);
	fflush(stderr);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	fn(arg);
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp)) {
		n++;
		snprintf(last, len, "%s", line);
	}
	fclose(tmp);
	return n;
}

struct once_run {
	int from, to, times;
};

static void log_keys(void *arg)
{
	const struct once_run *r = arg;
	char key[32];

	for (int t = 0; t < r->times; t++)
		for (int k = r->from; k < r->to; k++) {
			snprintf(key, sizeof(key), "test:eth%d", k);
			rw_log_once(LOG_LVL_WARN, key, "problem %d", k);
		}
}

static void reset_keys(int from, int to)
{
	char key[32];

	for (int k = from; k < to; k++) {
		snprintf(key, sizeof(key), "test:eth%d", k);
		rw_log_once_reset(key);
	}
}

/*
 * Once per key while remembered; a reset key speaks again; a full table says
 * so once and then stays quiet (it used to log on every call); a reset makes
 * room, and slots freed by resets are used again (they used to be lost).
 */
static void log_once(void **state)
{
	const int full = RW_LOG_ONCE_KEYS;
	struct once_run r;
	char last[512] = "";

	(void)state;
	r = (struct once_run){ 0, 3, 5 };
	assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), 3);
	assert_non_null(strstr(last, "level=warn msg=\"problem 2\""));
	reset_keys(1, 2);
	assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), 1);
	assert_non_null(strstr(last, "level=warn msg=\"problem 1\""));

	/* fill the table: 3 are there, full - 3 more fit */
	r = (struct once_run){ 3, full, 2 };
	assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), full - 3);
	/* 100 new keys, 10 times each: one line says they are suppressed */
	r = (struct once_run){ full, full + 100, 10 };
	assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), 1);
	assert_non_null(strstr(last, "further new ones are not logged"));
	/* the remembered keys stay quiet */
	r = (struct once_run){ 0, full, 1 };
	assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), 0);

	/* one clears: one new key gets its slot, then the table is full again */
	reset_keys(500, 501);
	r = (struct once_run){ full, full + 100, 3 };
	assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), 2);
	assert_non_null(strstr(last, "further new ones are not logged"));

	/* set and reset many times over: tombstones are reused, nothing fills up */
	reset_keys(0, full + 100);
	for (int round = 0; round < 20; round++) {
		r = (struct once_run){ round * 200, round * 200 + 200, 2 };
		assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), 200);
		reset_keys(round * 200, round * 200 + 200);
	}
	r = (struct once_run){ 0, full, 1 };
	assert_int_equal(stderr_lines(log_keys, &r, last, sizeof(last)), full);
	reset_keys(0, full);
}

/* the same bits: -0.0 and 0.0 differ, every NaN is a NaN */
static bool same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* xorshift64*: the same inputs every run */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

/* A double from random bits: every exponent, subnormals, infinities and NaNs among them. */
static double rnd_double(uint64_t *s)
{
	uint64_t b = rnd(s);
	double d;

	memcpy(&d, &b, sizeof(d));
	return d;
}

/* rocewatch's own fmod, llround and ceil (libm unlinked) equal libm's, which the test links. */
static void libm_free(void **state)
{
	static const double special[] = { 0.0,
					  -0.0,
					  1.0,
					  -1.0,
					  0.5,
					  -0.5,
					  1.5,
					  2.5,
					  -2.5,
					  3.0,
					  7.0,
					  0.1,
					  1e300,
					  -1e300,
					  DBL_MAX,
					  -DBL_MAX,
					  DBL_MIN,
					  DBL_TRUE_MIN,
					  -DBL_TRUE_MIN,
					  4503599627370497.0,
					  9007199254740993.0,
					  9.2233720368547758e18,
					  INFINITY,
					  -INFINITY,
					  NAN,
					  0.49999999999999994,
					  -0.49999999999999994 };
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	size_t n = sizeof(special) / sizeof(special[0]);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		double x = special[i];

		for (size_t j = 0; j < n; j++)
			if (!same_double(rw_fmod(x, special[j]), fmod(x, special[j]))) {
				print_error("rw_fmod(%a, %a) = %a, fmod %a\n", x, special[j],
					    rw_fmod(x, special[j]), fmod(x, special[j]));
				fail();
			}
		if (!isnan(x) && fabs(x) < 9.2e18)
			assert_int_equal(rw_llround(x), llround(x));
		if (isfinite(x) && fabs(x) < 9.2e18)
			assert_true(same_double(rw_ceil(x), ceil(x)));
	}
	assert_int_equal(rw_llround(1e300), INT64_MAX);
	assert_int_equal(rw_llround(-1e300), INT64_MIN);
	assert_int_equal(rw_llround(NAN), 0);
	for (int i = 0; i < 200000; i++) {
		double x = rnd_double(&s), y = rnd_double(&s);

		/* near each other too, where the loop runs few steps; and small integers */
		if (i % 3 == 1)
			y = x / (double)(1 + rnd(&s) % 1000);
		if (i % 3 == 2) {
			x = (double)(int64_t)(rnd(&s) % 2000001) - 1000000;
			y = (double)(int64_t)(rnd(&s) % 201) - 100;
		}
		if (!same_double(rw_fmod(x, y), fmod(x, y))) {
			print_error("rw_fmod(%a, %a) = %a, fmod %a\n", x, y, rw_fmod(x, y),
				    fmod(x, y));
			fail();
		}
		x = ldexp(x, -(int)(rnd(&s) % 1100)); /* into llround's range, and halves */
		if (isfinite(x) && fabs(x) < 9.2e18) {
			assert_int_equal(rw_llround(x), llround(x));
			assert_int_equal(rw_llround(x + 0.5), llround(x + 0.5));
			assert_true(same_double(rw_ceil(x), ceil(x)));
		}
	}
}

/* pread_u64's eight-digit steps give what parse_u64 gives, on any bytes a file may hold. */
static int counter_file(int fd, const char *text, size_t n, uint64_t *v)
{
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(pwrite(fd, text, n, 0), (ssize_t)n);
	return pread_u64(fd, v);
}

static void counter_files(void **state)
{
	static const char *const cases[] = { "0\n",
					     "7",
					     "12345678",
					     "12345678\n",
					     "123456789\n",
					     "1234567812345678",
					     "1234567812345678\n",
					     "12345678123456789\n",
					     "9999999999999999999\n",
					     "18446744073709551615\n",
					     "18446744073709551616\n",
					     "99999999999999999999\n",
					     "00000000000000000000042\n",
					     "1234567a\n",
					     "12345678a\n",
					     "1234567812345678x",
					     "12 7\n",
					     " 1\n",
					     "+1\n",
					     "\n",
					     "586028475693\n",
					     "42\t \r\n",
					     "4:2\n",
					     "12345678/\n",
					     "1234567\x00\n",
					     "0x10\n",
					     "-1\n" };
	char path[] = "/tmp/rw-test-counter-XXXXXX", buf[40];
	int fd = mkstemp(path);
	uint64_t a, b;
	unsigned seed = 7;

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i]);

		if (!strcmp(cases[i], "1234567"))
			n = 9; /* the NUL inside "1234567\0\n" */
		memcpy(buf, cases[i], n);
		buf[n] = '\0';
		a = b = 0xdead;
		int ra = counter_file(fd, buf, n, &a), rb = parse_u64(buf, &b);

		assert_int_equal(ra, rb);
		if (!ra)
			assert_true(a == b);
	}
	/* random digits (1 to 21), then a blank, junk or nothing */
	for (int i = 0; i < 20000; i++) {
		int len = 1 + (int)(rand_r(&seed) % 21), n = 0;

		for (int d = 0; d < len; d++)
			buf[n++] = (char)('0' + rand_r(&seed) % 10);
		switch (rand_r(&seed) % 4) {
		case 0:
			buf[n++] = '\n';
			break;
		case 1:
			buf[n++] = ' ';
			buf[n++] = '\n';
			break;
		case 2:
			buf[n++] = (char)(' ' + rand_r(&seed) % 95);
			break;
		default:
			break;
		}
		buf[n] = '\0';
		a = b = 0xdead;
		int ra = counter_file(fd, buf, (size_t)n, &a), rb = parse_u64(buf, &b);

		assert_int_equal(ra, rb);
		if (!ra)
			assert_true(a == b);
	}
	a = 0;
	assert_int_equal(counter_file(fd, "", 0, &a), -ENODATA);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations),	    cmocka_unit_test(sizes),
		cmocka_unit_test(listen_addresses), cmocka_unit_test(label_escaping),
		cmocka_unit_test(rfc3339),	    cmocka_unit_test(integers),
		cmocka_unit_test(log_once),	    cmocka_unit_test(libm_free),
		cmocka_unit_test(counter_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
