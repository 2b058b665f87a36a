// SPDX-License-Identifier: MIT
/*
 * Bounded input: read_file_max() on regular files at and past their cap,
 * /dev/zero, a FIFO nobody writes to, a directory; the YAML flow pre-scan on
 * what real profiles and web configs hold (brackets inside scalars, comments,
 * block scalars, tags) and on nesting at and past its bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bounded.h"

static char dir[] = "/tmp/rw-bounded.XXXXXX";

static void write_file(const char *path, size_t n)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fputc('a', f);
	assert_int_equal(fclose(f), 0);
}

static void read_caps(void **state)
{
	char path[256], *text = NULL, msg[160];
	size_t len = 99;

	(void)state;
	snprintf(path, sizeof(path), "%s/f", dir);
	write_file(path, 1000);
	assert_int_equal(read_file_max(path, 1000, &text, &len), 0);
	assert_int_equal(len, 1000);
	assert_int_equal(strlen(text), 1000);
	free(text);
	assert_int_equal(read_file_max(path, 999, &text, &len), -EFBIG);
	assert_string_equal(read_error_text(-EFBIG, 1 << 20, "a rule file", msg, sizeof(msg)),
			    "larger than 1 MiB, the limit for a rule file");
	assert_string_equal(read_error_text(-EFBIG, 999, "x", msg, sizeof(msg)),
			    "larger than 999 bytes, the limit for x");
	write_file(path, 0);
	assert_int_equal(read_file_max(path, 10, &text, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(text, "");
	free(text);
	/* a character device that never ends: the cap, not the end of the file, stops it */
	assert_int_equal(read_file_max("/dev/zero", 100000, &text, &len), -EFBIG);
	assert_int_equal(read_file_max(dir, 100, &text, &len), -EISDIR);
	assert_int_equal(read_file_max("/nonexistent/x", 100, &text, &len), -ENOENT);
}

static void read_fifo(void **state)
{
	char path[256], *text = NULL;
	size_t len = 99;

	(void)state;
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	/* nobody writes: an empty file at once, not a process blocked in open() */
	assert_int_equal(read_file_max(path, 100, &text, &len), 0);
	assert_int_equal(len, 0);
	free(text);
	unlink(path);
}

static int scan(const char *text, int depth, struct yaml_scan_pos *at)
{
	at->line = at->col = 0;
	return yaml_flow_prescan(text, strlen(text), depth, at);
}

static char *repeat(const char *pre, const char *s, int n, const char *post)
{
	size_t l = strlen(s);
	char *b = malloc(strlen(pre) + l * (size_t)n + strlen(post) + 1), *p = b;

	if (!b)
		abort();
	p += sprintf(p, "%s", pre);
	for (int i = 0; i < n; i++)
		p += sprintf(p, "%s", s);
	sprintf(p, "%s", post);
	return b;
}

static void prescan_real_files(void **state)
{
	struct yaml_scan_pos at;
	/* brackets as profiles hold them: none of these is a flow collection */
	static const char profile[] =
	    "profile: x\n"
	    "params: {}\n"
	    "requires: [rdma_port, netdev]\n"
	    "rules:\n"
	    "  - name: a\n"
	    "    expr: tx_pause[3] == 0 && pfc.enabled == {3} && x in {1, 2}\n"
	    "    summary: "
	    "\"{[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[}\"\n"
	    "    when: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ "
	    "it''s'\n"
	    "    # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
	    "    doc: |\n"
	    "      [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n"
	    "\n"
	    "      {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n"
	    "  - name: b\n"
	    "    expr: \"a\"\n"
	    "    list: [\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\", "
	    "'{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{', x]\n";
	char *tags;

	(void)state;
	assert_int_equal(scan(profile, 8, &at), 0);
	/* a tag before a node in a flow sequence does not swallow its ']' */
	tags = repeat("k: [", "[!t], [!!str x], [&a y], [*a], ", 40, "z]\n");
	assert_int_equal(scan(tags, 4, &at), 0);
	free(tags);
	/* a block scalar ends where the indentation comes back */
	assert_int_equal(scan("doc: >\n  [[[[\nk: [[[[1]]]]\n", 3, &at), -EMLINK);
	assert_int_equal(at.line, 3);
	assert_int_equal(at.col, 7);
}

static void prescan_bound(void **state)
{
	struct yaml_scan_pos at;
	char *t;

	(void)state;
	t = repeat("", "[", 64, "");
	assert_int_equal(scan(t, 64, &at), 0);
	free(t);
	t = repeat("", "[", 200000, "");
	assert_int_equal(scan(t, 64, &at), -EMLINK);
	assert_int_equal(at.line, 1);
	assert_int_equal(at.col, 65);
	free(t);
	t = repeat("a:\n  b: ", "{k: ", 100, "");
	assert_int_equal(scan(t, 64, &at), -EMLINK);
	assert_int_equal(at.line, 2);
	assert_int_equal(at.col, 6 + 4 * 64);
	free(t);
	/* across lines, after a sequence entry; columns count characters, not bytes */
	t = repeat("- é: [\n", "[\n", 70, "");
	assert_int_equal(scan(t, 64, &at), -EMLINK);
	assert_int_equal(at.line, 65);
	assert_int_equal(at.col, 1);
	free(t);
	t = repeat("é: ", "[", 65, "");
	assert_int_equal(scan(t, 64, &at), -EMLINK);
	assert_int_equal(at.col, 4 + 64);
	free(t);
	/* closing brackets take levels back */
	t = repeat("k: ", "[[[[[[[[]]]]]]]], ", 100, "");
	assert_int_equal(scan(t, 9, &at), 0);
	free(t);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(read_caps),
		cmocka_unit_test(read_fifo),
		cmocka_unit_test(prescan_real_files),
		cmocka_unit_test(prescan_bound),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
