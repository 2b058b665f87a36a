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

enum shade {
	SHADE_LIGHT,
	SHADE_DARK,
	SHADE_NONE
};

/* A command's one base: its own members and a sub-struct with a table of its own. */
struct sub {
	const char *name;
	uint32_t n32;
	bool flag;
};

struct args {
	const char *profile, *configfs, *out, *mode;
	int64_t interval_ns;
	uint64_t max_size;
	uint16_t port;
	uint8_t small;
	int level;
	enum shade shade;
	bool verbose, quiet, json;
	char *copy;
	regex_t re;
	bool has_re;
	char *re_src;
	char path[16];
	struct sub sub;
};

static const char *const shades[] = { "light", "dark", "none", NULL };
static const char *const modes[] = { "auto", "full", "sparse", NULL };

/* A handler whose words are its error's list, and which takes one more (an alias). */
static int opt_level(const struct cli_opt *o, void *member, const char *arg)
{
	for (int i = 0; o->words[i]; i++)
		if (!strcmp(arg, o->words[i])) {
			*(int *)member = i;
			return 0;
		}
	if (strcmp(arg, "warning"))
		return CLI_BAD;
	*(int *)member = 1;
	return 0;
}

static const char *const levels[] = { "error", "warn", NULL };

/* A handler gets its row and its member: no name to look up. */
static int opt_path(const struct cli_opt *o, void *member, const char *arg)
{
	if (snprintf(member, o->size, "%s/x", arg) >= (int)o->size)
		return CLI_BAD;
	return 0;
}

static const struct cli_opt rows[] = {
	{ .name = "profile", CLI_STRING_AT(struct args, profile), .metavar = "NAME", .help = "" },
	{ .name = "configfs-root",
	  CLI_STRING_AT(struct args, configfs),
	  .metavar = "DIR",
	  .help = "read configfs from DIR" },
	{ .name = "interval",
	  CLI_DURATION_AT(struct args, interval_ns),
	  .min = 1,
	  .max = 3600000000000LL,
	  .floor = 100000000LL,
	  .floor_text = "100ms",
	  .bad = "a duration up to 1h",
	  .metavar = "DURATION",
	  .help = "how often\nand more" },
	{ .name = "max-size",
	  CLI_SIZE_AT(struct args, max_size),
	  .min = 1024,
	  .bad = "a size",
	  .metavar = "BYTES",
	  .help = "" },
	{ .name = "port",
	  CLI_COUNT_AT(struct args, port),
	  .min = 1,
	  .max = 65535,
	  .bad = "a port",
	  .metavar = "PORT",
	  .help = "" },
	{ .name = "small", CLI_COUNT_AT(struct args, small), .max = 255, .bad = "a byte" },
	{ .name = "output",
	  .short_name = 'o',
	  CLI_STRING_AT(struct args, out),
	  .metavar = "FILE",
	  .help = "write there" },
	{ .name = "shade", CLI_CHOICE_AT(struct args, shade, shades) },
	{ .name = "mode", CLI_STRING_AT(struct args, mode), .words = modes },
	{ .name = "format", CLI_FORMAT_AT(struct args, json) },
	{ .name = "", .short_name = 'j', CLI_FLAG_AT(struct args, json) },
	{ .name = "dark", CLI_SET_AT(struct args, shade, SHADE_DARK) },
	{ .name = "copy", CLI_STRDUP_AT(struct args, copy) },
	{ .name = "match", CLI_REGEX_AT(struct args, re, has_re, re_src) },
	{ .name = "path", CLI_CALL_AT(struct args, path, opt_path), .bad = "a short path" },
	{ .name = "level", CLI_CALL_AT(struct args, level, opt_level), .words = levels },
	CLI_TEXT_ROW("\nMore:\n"),
	{ .name = "verbose", .short_name = 'v', CLI_FLAG_AT(struct args, verbose) },
	{ .name = "quiet", .short_name = 'q', CLI_FLAG_AT(struct args, quiet) },
	{ .name = "help", .short_name = 'h', .kind = CLI_HELP },
	{ 0 },
};

/* struct sub's rows: offsets from struct sub, wherever a command keeps one */
static const struct cli_opt sub_rows[] = {
	{ .name = "sub-name", CLI_STRING_AT(struct sub, name) },
	{ .name = "sub-n", CLI_COUNT_AT(struct sub, n32), .bad = "a number" },
	{ .name = "sub-flag", CLI_FLAG_AT(struct sub, flag) },
	{ 0 },
};

static const struct cli_cmd cmd = {
	.name = "test",
	.synopsis = "[OPTIONS] FILE\n[MORE]",
	.head = "Options:\n",
	.tables = { CLI_TABLE(rows), CLI_SUB(sub_rows, struct args, sub) },
};

static void args_free(struct args *a)
{
	free(a->copy);
	free(a->re_src);
	if (a->has_re)
		regfree(&a->re);
	memset(a, 0, sizeof(*a));
}

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
	args_free(a);
	*argv_out = argv;
	*first = argc; /* so that a caller sees the operands as argv[first..argc) */
	return cli_parse(&cmd, a, argc, argv, first);
}

static void whole_names_only(void **state)
{
	struct args a = { 0 };
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
	struct args a = { 0 };
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
	struct args a = { 0 };
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
	assert_string_equal(buf, "Usage: rocewatch test [OPTIONS] FILE\n"
				 "                      [MORE]\n\n"
				 "Options:\n"
				 "  --profile NAME             \n"
				 "  --configfs-root DIR        read configfs from DIR\n"
				 "  --interval DURATION        how often\n"
				 "                             and more\n"
				 "  --max-size BYTES           \n"
				 "  --port PORT                \n"
				 "  -o, --output FILE          write there\n"
				 "\nMore:\n");
	free(buf);
}

/* What cli_parse() said on stderr for one command line, into err (its result returned). */
static int parse_err(struct args *a, char *err, size_t len, const char *w1, const char *w2)
{
	FILE *saved = stderr, *f;
	char *buf = NULL;
	size_t n = 0;
	char **argv;
	int first, r;

	f = open_memstream(&buf, &n);
	assert_non_null(f);
	stderr = f;
	r = parse(a, &first, &argv, w1, w2, NULL);
	stderr = saved;
	fclose(f);
	snprintf(err, len, "%s", buf ? buf : "");
	free(buf);
	return r;
}

static void choices_and_their_errors(void **state)
{
	struct args a = { 0 };
	char **argv, err[256];
	int first;

	(void)state;
	assert_int_equal(parse(&a, &first, &argv, "--shade", "none", "--mode=full", NULL), 0);
	assert_int_equal(a.shade, SHADE_NONE);
	assert_string_equal(a.mode, "full");
	/* the error is the word list, as iproute2's parse_one_of() says it */
	assert_int_equal(parse_err(&a, err, sizeof(err), "--shade", "grey"), -EINVAL);
	assert_string_equal(err, "rocewatch test: --shade: 'grey' is not light, dark or none\n");
	assert_int_equal(parse_err(&a, err, sizeof(err), "--mode", "x"), -EINVAL);
	assert_string_equal(err, "rocewatch test: --mode: 'x' is not auto, full or sparse\n");
	assert_null(a.mode); /* a refused word is not stored */
	assert_int_equal(parse_err(&a, err, sizeof(err), "--format", "xml"), -EINVAL);
	assert_string_equal(err, "rocewatch test: --format: 'xml' is not text or json\n");
	/* --format into a bool, -j the same bool; CLI_SET stores its value */
	assert_int_equal(parse(&a, &first, &argv, "--format", "json", NULL), 0);
	assert_true(a.json);
	assert_int_equal(parse(&a, &first, &argv, "-j", "--format=text", NULL), 0);
	assert_false(a.json);
	assert_int_equal(parse(&a, &first, &argv, "--shade=light", "--dark", NULL), 0);
	assert_int_equal(a.shade, SHADE_DARK);
	/* a handler's words make its error; what else it takes is its own */
	assert_int_equal(parse(&a, &first, &argv, "--level", "warning", NULL), 0);
	assert_int_equal(a.level, 1);
	assert_int_equal(parse_err(&a, err, sizeof(err), "--level", "x"), -EINVAL);
	assert_string_equal(err, "rocewatch test: --level: 'x' is not error or warn\n");
	/* a bound's error comes from .bad */
	assert_int_equal(parse_err(&a, err, sizeof(err), "--port", "0"), -EINVAL);
	assert_string_equal(err, "rocewatch test: --port: '0' is not a port\n");
	args_free(&a);
}

static void typed_stores(void **state)
{
	struct args a = { 0 };
	char **argv, err[256];
	int first;

	(void)state;
	/* each member gets its own size: a uint8_t beside a uint16_t is not overwritten */
	assert_int_equal(parse(&a, &first, &argv, "--port", "513", "--small", "7", NULL), 0);
	assert_int_equal(a.port, 513);
	assert_int_equal(a.small, 7);
	assert_int_equal(parse(&a, &first, &argv, "--small", "256", NULL), -EINVAL);
	/* a copy outlives argv; a second one replaces the first (no leak under ASan) */
	assert_int_equal(parse(&a, &first, &argv, "--copy", "one", "--copy", "two", NULL), 0);
	assert_string_equal(a.copy, "two");
	/* a handler gets its member and its row (.size), CLI_BAD is the row's .bad */
	assert_int_equal(parse(&a, &first, &argv, "--path", "/tmp", NULL), 0);
	assert_string_equal(a.path, "/tmp/x");
	assert_int_equal(parse_err(&a, err, sizeof(err), "--path", "/a/very/long/path"), -EINVAL);
	assert_string_equal(err,
			    "rocewatch test: --path: '/a/very/long/path' is not a short path\n");
	args_free(&a);
}

static void regex_rows(void **state)
{
	struct args a = { 0 };
	char **argv;
	int first;

	(void)state;
	/* repeatable: any of the patterns, whole names only */
	assert_int_equal(parse(&a, &first, &argv, "--match", "eth[0-9]", "--match=ib.*", NULL), 0);
	assert_true(a.has_re);
	assert_string_equal(a.re_src, "(eth[0-9])|(ib.*)");
	assert_int_equal(regexec(&a.re, "eth1", 0, NULL, 0), 0);
	assert_int_equal(regexec(&a.re, "ib0", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&a.re, "eth10", 0, NULL, 0), 0);
	assert_int_equal(parse(&a, &first, &argv, "--match", "[", NULL), -EINVAL);
	assert_false(a.has_re);
	args_free(&a);
}

static void one_base(void **state)
{
	struct args a = { 0 };
	char **argv;
	int first;

	(void)state;
	/* sub_rows' members are found at struct args' sub, from the one base */
	assert_int_equal(parse(&a, &first, &argv, "--sub-name", "x", "--sub-n", "70000",
			       "--sub-flag", "-v", NULL),
			 0);
	assert_string_equal(a.sub.name, "x");
	assert_int_equal(a.sub.n32, 70000);
	assert_true(a.sub.flag);
	assert_true(a.verbose);
	assert_null(a.profile);
	args_free(&a);
}

/* Every command is registered once: a name, what it runs, its line of `rocewatch --help`. */
static void commands_registered_once(void **state)
{
	(void)state;
	for (size_t c = 0; cli_commands[c].name; c++) {
		assert_non_null(cli_commands[c].run);
		assert_non_null(cli_commands[c].summary);
		for (size_t d = 0; d < c; d++)
			assert_string_not_equal(cli_commands[c].name, cli_commands[d].name);
	}
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
	for (size_t c = 0; cli_commands[c].name; c++)
		for (size_t k = 0; k < 3 && cli_commands[c].opts[k]; k++) {
			const struct cli_cmd *cc = cli_commands[c].opts[k];

			for (size_t t = 0; t < CLI_TABLES_MAX && cc->tables[t].rows; t++)
				for (const struct cli_opt *o = cc->tables[t].rows; o->name; o++) {
					char flag[128];

					if (!o->name[0] || !strcmp(o->name, "help"))
						continue;
					snprintf(flag, sizeof(flag), "--%s", o->name);
					if (!strstr(readme, flag)) {
						fprintf(stderr, "%s: %s is not in README.md\n",
							cc->name, flag);
						missing++;
					}
					if (!strstr(man, flag)) {
						fprintf(stderr, "%s: %s is not in rocewatch(8)\n",
							cc->name, flag);
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
		cmocka_unit_test(whole_names_only),
		cmocka_unit_test(values_and_bounds),
		cmocka_unit_test(shorts_and_operands),
		cmocka_unit_test(help_from_rows),
		cmocka_unit_test(every_option_documented),
		cmocka_unit_test(choices_and_their_errors),
		cmocka_unit_test(typed_stores),
		cmocka_unit_test(regex_rows),
		cmocka_unit_test(one_base),
		cmocka_unit_test(commands_registered_once),
	};

	if (argc > 1)
		source_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
