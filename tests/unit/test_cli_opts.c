// SPDX-License-Identifier: MIT
/*
 * Options as tables (src/core/cli.h): whole names only, bounds and their
 * errors, short clusters, operands kept in order, --help from the rows; and
 * every option of every command named in the README and in rocewatch(8).
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

#include "cli.h"
#include "commands.h"
#include "util.h"

static const char *source_dir = ".";

struct args {
	const char *profile, *configfs, *out;
	int64_t interval_ns;
	uint64_t max_size;
	uint16_t port;
	bool verbose, quiet;
};

#define AT(member) CLI_AT(struct args, member)
static const struct cli_opt rows[] = {
	{ .name = "profile", .kind = CLI_STRING, AT(profile), .usage = "  --profile NAME\n" },
	{ .name = "configfs-root",
	  .kind = CLI_STRING,
	  AT(configfs),
	  .usage = "  --configfs-root DIR\n" },
	{ .name = "interval",
	  .kind = CLI_DURATION,
	  AT(interval_ns),
	  .min = 1,
	  .max = 3600000000000LL,
	  .floor = 100000000LL,
	  .floor_text = "100ms",
	  .bad = "a duration up to 1h",
	  .usage = "  --interval DURATION\n" },
	{ .name = "max-size",
	  .kind = CLI_SIZE,
	  AT(max_size),
	  .min = 1024,
	  .bad = "a size",
	  .usage = "  --max-size BYTES\n" },
	{ .name = "port",
	  .kind = CLI_COUNT,
	  AT(port),
	  .min = 1,
	  .max = 65535,
	  .bad = "a port",
	  .usage = "  --port PORT\n" },
	{ .name = "output",
	  .short_name = 'o',
	  .kind = CLI_STRING,
	  AT(out),
	  .usage = "  -o FILE\n" },
	{ .name = "verbose", .short_name = 'v', .kind = CLI_FLAG, AT(verbose) },
	{ .name = "quiet", .short_name = 'q', .kind = CLI_FLAG, AT(quiet) },
	{ .name = "help", .short_name = 'h', .kind = CLI_HELP },
	{ 0 },
};
#undef AT

static const struct cli_cmd cmd = { .name = "test", .head = "Usage: test\n", .tables = { rows } };

/* Parse a NULL-terminated list of words (argv[0] is "test"): cli_parse()'s result. */
static int parse(struct args *a, int *first, char ***argv_out, ...)
{
	static char *argv[32];
	int argc = 0;
	va_list ap;
	char *w;

	argv[argc++] = "test";
	va_start(ap, argv_out);
	while ((w = va_arg(ap, char *)))
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	memset(a, 0, sizeof(*a));
	*argv_out = argv;
	*first = argc; /* so that a caller sees the operands as argv[first..argc) */
	return cli_parse(&cmd, (void *const[]){ a }, argc, argv, first);
}

static void whole_names_only(void **state)
{
	struct args a;
	char **argv;
	int first;

	(void)state;
	/* getopt_long took these for --profile and --configfs-root */
	assert_int_equal(parse(&a, &first, &argv, "--prof", "x", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--config", "/etc/x.yaml", NULL), -EINVAL);
	assert_null(a.configfs);
	assert_int_equal(parse(&a, &first, &argv, "--config=/etc/x.yaml", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--profilex", "x", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--profile", "x", "--configfs-root=/c", NULL), 0);
	assert_string_equal(a.profile, "x");
	assert_string_equal(a.configfs, "/c");
}

static void values_and_bounds(void **state)
{
	struct args a;
	char **argv;
	int first;

	(void)state;
	assert_int_equal(parse(&a, &first, &argv, "--interval", "250ms", "--max-size=1KiB",
			       "--port", "65535", NULL),
			 0);
	assert_int_equal(a.interval_ns, 250000000LL);
	assert_int_equal(a.max_size, 1024);
	assert_int_equal(a.port, 65535);
	assert_int_equal(parse(&a, &first, &argv, "--interval", "0", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--interval", "2h", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--interval", "50ms", NULL), -EINVAL); /* floor */
	assert_int_equal(parse(&a, &first, &argv, "--interval", "soon", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--max-size", "1000", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--port", "0", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--port", "65536", NULL), -EINVAL);
	assert_int_equal(a.port, 0); /* a refused value is not stored */
	/* a missing value, a flag given one */
	assert_int_equal(parse(&a, &first, &argv, "--port", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "--verbose=1", NULL), -EINVAL);
}

static void shorts_and_operands(void **state)
{
	struct args a;
	char **argv;
	int first;

	(void)state;
	assert_int_equal(parse(&a, &first, &argv, "a", "-vq", "b", "-oFILE", "c", "-o", "F2", "--",
			       "--port", "-v", NULL),
			 0);
	assert_true(a.verbose && a.quiet);
	assert_string_equal(a.out, "F2");
	/* operands after the options, in their order; "--" ends the options */
	assert_int_equal(first, 11 - 5);
	assert_string_equal(argv[first], "a");
	assert_string_equal(argv[first + 1], "b");
	assert_string_equal(argv[first + 2], "c");
	assert_string_equal(argv[first + 3], "--port");
	assert_string_equal(argv[first + 4], "-v");
	assert_int_equal(parse(&a, &first, &argv, "-vx", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "-o", NULL), -EINVAL);
	assert_int_equal(parse(&a, &first, &argv, "-", NULL), 0); /* stdin, an operand */
}

static void help_from_rows(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	cli_print_help(&cmd, f);
	fclose(f);
	assert_string_equal(buf, "Usage: test\n  --profile NAME\n  --configfs-root DIR\n"
				 "  --interval DURATION\n  --max-size BYTES\n  --port PORT\n"
				 "  -o FILE\n");
	free(buf);
}

static char *slurp(const char *rel)
{
	char path[4096], *text = NULL;
	size_t len;

	snprintf(path, sizeof(path), "%s/%s", source_dir, rel);
	assert_int_equal(read_file_all(path, &text, &len), 0);
	return text;
}

/* The man page escapes _ and writes --collector.*NAME*: compare its plain text. */
static void unmark(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r == '*' || (*r == '\\' && r[1] == '_'))
			continue;
		*w++ = *r;
	}
	*w = '\0';
}

static void every_option_documented(void **state)
{
	char *readme = slurp("README.md"), *man = slurp("docs/man/rocewatch.8.scd");
	int missing = 0;

	(void)state;
	unmark(man);
	for (size_t c = 0; cli_commands[c]; c++) {
		const struct cli_cmd *cc = cli_commands[c];

		for (size_t t = 0; t < CLI_TABLES_MAX && cc->tables[t]; t++)
			for (const struct cli_opt *o = cc->tables[t]; o->name; o++) {
				char flag[128];

				if (!o->name[0] || !strcmp(o->name, "help"))
					continue;
				snprintf(flag, sizeof(flag), "--%s", o->name);
				if (!strstr(readme, flag)) {
					fprintf(stderr, "%s: %s is not in README.md\n", cc->name,
						flag);
					missing++;
				}
				if (!strstr(man, flag)) {
					fprintf(stderr, "%s: %s is not in rocewatch(8)\n", cc->name,
						flag);
					missing++;
				}
			}
	}
	assert_int_equal(missing, 0);
	free(readme);
	free(man);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_names_only),	   cmocka_unit_test(values_and_bounds),
		cmocka_unit_test(shorts_and_operands),	   cmocka_unit_test(help_from_rows),
		cmocka_unit_test(every_option_documented),
	};

	if (argc > 1)
		source_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
