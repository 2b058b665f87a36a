/* SPDX-License-Identifier: MIT */
/*
 * Command-line plumbing shared by the subcommands: options as tables, and
 * the -o helpers.  The rows that need a room above (collectors, rules) are in
 * engine_opts.h; the command table is cmd's (commands.h).
 */
#ifndef ROCEWATCH_CLI_H
#define ROCEWATCH_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <regex.h>

/* "rocewatch 0.1.0 (revision abc123, gcc 12.2.0)" on stdout: `version`, `serve --version`. */
void cli_print_version(void);
/* -o FILE ("-" is standard output); NULL when it cannot be opened (printed). */
FILE *cli_open_output(const char *cmd, const char *path);
/* Flush and close it: 0, or -EIO after saying "write error" with the path. */
int cli_close_output(const char *cmd, const char *path, FILE *f);

/*
 * Options as tables.  A command declares its options as rows (struct cli_opt):
 * the long name (whole names only: no prefix of a name is taken for it), the
 * kind, the member the value goes to (a typed CLI_*_AT macro: the build
 * refuses a row whose member is not of the kind's type), its bounds or its
 * words, and its --help (.metavar, .help).  cli_parse() reads argv against
 * the rows and prints every "'X' is not ..." error from the row (.bad or
 * .words), so parsing, errors and help cannot drift apart.
 */
enum cli_kind {
	CLI_FLAG,      /* bool = true */
	CLI_SET,       /* int or enum = .value (-j: the json of a --format) */
	CLI_STRING,    /* const char * = the argument */
	CLI_STRDUP,    /* char * = a copy of the argument (the one before freed) */
	CLI_DIR,       /* const char * = the argument, a directory that is there */
	CLI_CHOICE,    /* int or enum = the index of the argument in .words (bool: 2 words) */
	CLI_DURATION,  /* int64_t ns, within [.min, .max] */
	CLI_SIZE,      /* uint64_t bytes, within [.min, .max] */
	CLI_COUNT,     /* an integer of .size bytes, within [.min, .max] */
	CLI_REGEX,     /* regex_t: one more pattern of a repeatable filter (config_regex_add) */
	CLI_CALL,      /* .fn(row, member, argument) */
	CLI_CALL_FLAG, /* .fn(row, member, NULL); a .prefix row: the rest of the name */
	CLI_TEXT,      /* not an option: .help as it is printed in --help (a heading) */
	CLI_HELP,      /* print the command's help; cli_parse() returns 1 */
	CLI_VERSION,   /* print the version; cli_parse() returns 1 */
};

/* A handler's "the value is not what the row takes": cli_parse() says so from .bad. */
#define CLI_BAD 2

struct cli_opt {
	const char *name; /* long name without "--" ("": -X only); NULL ends a table */
	char short_name;  /* -X, or 0 */
	bool prefix;	  /* .name is a prefix (--collector.NAME) */
	enum cli_kind kind;
	size_t off, size;	  /* the member, from the table's base (CLI_*_AT) */
	size_t has_off, src_off;  /* CLI_REGEX: its bool "given" and its char * source */
	int64_t min, max;	  /* inclusive bounds; .max 0: none */
	int64_t floor;		  /* above .min but below this: "is below the minimum of" */
	const char *floor_text;	  /* ... this */
	int64_t value;		  /* CLI_SET: what it stores; handlers: which of theirs */
	const char *const *words; /* CLI_CHOICE, or the only arguments a row takes */
	const char *bad;	  /* "rocewatch CMD: --NAME: 'ARG' is not " .bad */
	int arg_max;		  /* that ARG cut to this many bytes (0: whole) */
	/*
	 * 0; CLI_BAD (the error from .bad); -EINVAL or -ENOMEM after saying why;
	 * or 1: not this option after all (an unknown option)
	 */
	int (*fn)(const struct cli_opt *o, void *member, const char *arg);
	const char *metavar; /* after --NAME in --help: "DURATION", "[HOST]:PORT" */
	const char *help;    /* --help from column 29 (NULL: an alias, not listed) */
};

/* A static check in an initializer: the build stops with msg when cond is false. */
#define CLI_CHECK(cond, msg)                \
	(0 * sizeof(struct {                \
		 _Static_assert(cond, msg); \
		 int cli_ok_;               \
	 }))
#define CLI_MEMBER(type, member) (((type *)0)->member)
#define CLI_IS(type, member, want) \
	__builtin_types_compatible_p(__typeof__(CLI_MEMBER(type, member)), want)
/* an integer (enums included, bool not: (bool)0.5 is true) */
#define CLI_IS_INT(type, member) ((__typeof__(CLI_MEMBER(type, member)))0.5 == 0)
#define CLI_AT_IF(type, member, cond, what)                                       \
	.off = offsetof(type, member) +                                           \
	       CLI_CHECK(cond, "option row: " #type "." #member " is not " what), \
	.size = sizeof(CLI_MEMBER(type, member))
#define CLI_AT_TYPED(type, member, want) CLI_AT_IF(type, member, CLI_IS(type, member, want), #want)

/* The member of each kind, checked against the kind's type. */
#define CLI_FLAG_AT(type, member)     .kind = CLI_FLAG, CLI_AT_TYPED(type, member, bool)
#define CLI_STRING_AT(type, member)   .kind = CLI_STRING, CLI_AT_TYPED(type, member, const char *)
#define CLI_STRDUP_AT(type, member)   .kind = CLI_STRDUP, CLI_AT_TYPED(type, member, char *)
#define CLI_DIR_AT(type, member)      .kind = CLI_DIR, CLI_AT_TYPED(type, member, const char *)
#define CLI_DURATION_AT(type, member) .kind = CLI_DURATION, CLI_AT_TYPED(type, member, int64_t)
#define CLI_SIZE_AT(type, member)     .kind = CLI_SIZE, CLI_AT_TYPED(type, member, uint64_t)
#define CLI_COUNT_AT(type, member)                                                      \
	.kind = CLI_COUNT,                                                              \
	CLI_AT_IF(type, member,                                                         \
		  CLI_IS_INT(type, member) && (sizeof(CLI_MEMBER(type, member)) == 1 || \
					       sizeof(CLI_MEMBER(type, member)) == 2 || \
					       sizeof(CLI_MEMBER(type, member)) == 4 || \
					       sizeof(CLI_MEMBER(type, member)) == 8),  \
		  "an integer")
#define CLI_INT_SIZED(type, member) \
	(CLI_IS_INT(type, member) && sizeof(CLI_MEMBER(type, member)) == sizeof(int))
#define CLI_SET_AT(type, member, v)    \
	.kind = CLI_SET, .value = (v), \
	CLI_AT_IF(type, member, CLI_INT_SIZED(type, member), "an int")
/* words: a NULL-terminated list; a bool member takes a list of two (text|json) */
#define CLI_CHOICE_AT(type, member, list)                                                  \
	.kind = CLI_CHOICE, .words = (list),                                               \
	CLI_AT_IF(type, member, CLI_INT_SIZED(type, member) || CLI_IS(type, member, bool), \
		  "an int, an enum or a bool")
#define CLI_REGEX_AT(type, re, given, source)                                                     \
	.kind = CLI_REGEX, CLI_AT_TYPED(type, re, regex_t),                                       \
	.has_off =                                                                                \
	    offsetof(type, given) +                                                               \
	    CLI_CHECK(CLI_IS(type, given, bool), "option row: " #type "." #given " is not bool"), \
	.src_off =                                                                                \
	    offsetof(type, source) + CLI_CHECK(CLI_IS(type, source, char *),                      \
					       "option row: " #type "." #source " is not char *")
/* A handler's member: fn gets a pointer to it (whatever its type). */
#define CLI_CALL_AT(type, member, handler)                                \
	.kind = CLI_CALL, .fn = (handler), .off = offsetof(type, member), \
	.size = sizeof(CLI_MEMBER(type, member))
#define CLI_CALL_FLAG_AT(type, member, handler)                                \
	.kind = CLI_CALL_FLAG, .fn = (handler), .off = offsetof(type, member), \
	.size = sizeof(CLI_MEMBER(type, member))

/* A handler whose member is the table's whole struct (what it fills is several members). */
#define CLI_CALL_WHOLE(handler) .kind = CLI_CALL, .fn = (handler), .off = 0

/* --format text|json into a bool (true: json), and its words. */
extern const char *const cli_text_json[];
#define CLI_FORMAT_AT(type, member) CLI_CHOICE_AT(type, member, cli_text_json)

/* A heading, or lines of --help that are no option's. */
#define CLI_TEXT_ROW(text)                                 \
	{                                                  \
		.name = "", .kind = CLI_TEXT, .help = text \
	}
/* Rows that read the same in every command that takes them. */
#define CLI_OPT_OUTPUT(type, member)                                                  \
	{                                                                             \
		.name = "output", .short_name = 'o', CLI_STRING_AT(type, member),     \
		.metavar = "FILE", .help = "write to FILE instead of standard output" \
	}
#define CLI_OPT_HELP                                                                     \
	{                                                                                \
		.name = "help", .short_name = 'h', .kind = CLI_HELP, .help = "this help" \
	}

/* --help: the column the help of every option starts at. */
#define CLI_HELP_COLUMN 29
#define CLI_TABLES_MAX	8

/* One table of a command, and where its members are from the command's one base. */
struct cli_table {
	const struct cli_opt *rows;
	size_t off;
};
#define CLI_TABLE(r)        \
	{                   \
		.rows = (r) \
	}
#define CLI_SUB(r, type, member)                           \
	{                                                  \
		.rows = (r), .off = offsetof(type, member) \
	}

struct cli_cmd {
	const char *name;     /* "serve", "fleet check": in every message */
	const char *range;    /* the command named in range errors, when not .name */
	const char *synopsis; /* "Usage: rocewatch NAME " .synopsis (lines under each other) */
	const char *head;     /* --help after the synopsis (and a blank line), before the rows */
	const char *tail;     /* --help after them */
	void (*help_after)(FILE *f); /* --help ends with this (the collectors' list) */
	/* in --help order, each at its offset from the command's base */
	struct cli_table tables[CLI_TABLES_MAX];
};

/*
 * Parse argv[1..argc) against c's tables, storing into base (the command's
 * option struct).  Returns 0 with the arguments that are not options moved,
 * in order, to argv[*first..argc); 1 after printing --help or the version
 * (exit 0); or -EINVAL after one line on stderr (bad usage).
 */
int cli_parse(const struct cli_cmd *c, void *base, int argc, char **argv, int *first);
/* The command's --help on f: the synopsis, .head, every row's help, .tail, .help_after. */
void cli_print_help(const struct cli_cmd *c, FILE *f);
/* One row's lines of --help (nothing for an alias). */
void cli_print_row(const struct cli_opt *o, FILE *f);
/* The command being parsed (for the messages of rows shared between commands). */
const char *cli_parsing(void);

#endif
