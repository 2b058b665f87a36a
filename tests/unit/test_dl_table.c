// SPDX-License-Identifier: MIT
/*
 * The loader of optional libraries (src/core/dl_table.h) on a library every
 * build links (zlib): a missing library and a missing function each named,
 * a table filled with the library's own functions, both ways of opening.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "dl_table.h"

struct zapi {
	const char *(*version)(void);
	uLong (*crc)(uLong, const Bytef *, uInt);
};

static const struct dl_sym zsyms[] = {
	{ "zlibVersion", offsetof(struct zapi, version) },
	{ "crc32", offsetof(struct zapi, crc) },
};

static void missing_library(void **state)
{
	struct zapi t = { 0 };
	char err[256];

	(void)state;
	assert_int_equal(dl_table_open("libnosuch-rocewatch.so.0", zsyms, 2, &t, "the test",
				       "nosuch", err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "the test needs libnosuch-rocewatch.so.0: "));
	assert_null(t.version);
}

static void missing_function(void **state)
{
	struct zapi t = { 0 };
	const struct dl_sym bad[] = { { "zlibVersion", offsetof(struct zapi, version) },
				      { "no_such_function_here", offsetof(struct zapi, crc) } };
	char err[256];

	(void)state;
	assert_int_equal(
	    dl_table_open("libz.so.1", bad, 2, &t, "the test", "zlib", err, sizeof(err)), -1);
	assert_string_equal(err, "libz.so.1 has no no_such_function_here: too old a zlib");
}

static void filled(void **state)
{
	char err[256] = "";

	(void)state;
	for (int way = 0; way < 2; way++) {
		struct zapi t = { 0 };
		int r = way ? dl_table_open_interposable("libz.so.1", zsyms, 2, &t, "the test",
							 "zlib", err, sizeof(err))
			    : dl_table_open("libz.so.1", zsyms, 2, &t, "the test", "zlib", err,
					    sizeof(err));

		assert_int_equal(r, 0);
		assert_string_equal(err, "");
		/* the library's own functions, the ones the linked calls reach */
		assert_ptr_equal((void *)t.version, dlsym(RTLD_DEFAULT, "zlibVersion"));
		assert_string_equal(t.version(), zlibVersion());
		assert_int_equal(t.crc(0, (const Bytef *)"rocewatch", 9),
				 crc32(0, (const Bytef *)"rocewatch", 9));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(missing_library),
		cmocka_unit_test(missing_function),
		cmocka_unit_test(filled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
