/* SPDX-License-Identifier: MIT */
/*
 * Command-line plumbing shared by the subcommands: options as tables, and
 * the --format / -o helpers.  The rows that need a room above (collectors,
 * rules) are in engine_opts.h; the command table is cmd's (commands.h).
 */
#ifndef ROCEWATCH_CLI_H
#define ROCEWATCH_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "rocewatch 0.1.0 (revision abc123, gcc 12.2.0)" on stdout: `version`, `serve --version`. */
void cli_print_version(void);
/* --format text|json: 0 with *json set, or -EINVAL after saying so. */
int cli_format_json(const char *cmd, const char *arg, bool *json);
/* -o FILE ("-" is standard output); NULL when it cannot be opened (printed). */
FILE *cli_open_output(const char *cmd, const char *path);
/* Flush and close it: 0, or -EIO after saying "write error" with the path. */
int cli_close_output(const char *cmd, const char *path, FILE *f);

/*
 * Options as tables.  A command declares its options as rows (struct cli_opt):
 * the long name (whole names only: no prefix of a name is taken for it), the
 * kind, where the value goes, its bounds and its --help lines.  cli_parse()
 * reads argv against the rows, prints the range error of a bad value and the
 * command's --help, so parsing, errors and help cannot drift apart.
 */
enum cli_kind {
	CLI_FLAG,      /* bool at .off = true */
	CLI_STRING,    /* const char * at .off = the argument */
	CLI_DURATION,  /* int64_t ns at .off, within [.min, .max] */
	CLI_SIZE,      /* uint64_t bytes at .off, within [.min, .max] */
	CLI_COUNT,     /* unsigned integer of .size bytes at .off, within [.min, .max] */
	CLI_CALL,      /* .fn(base, name, argument): parses, stores, prints its own error */
	CLI_CALL_FLAG, /* .fn(base, name, NULL), no argument */
	CLI_HELP,      /* print the command's help; cli_parse() returns 1 */
	CLI_VERSION,   /* print the version; cli_parse() returns 1 */
};

struct cli_opt {
	const char *name; /* long name without "--" ("": -X only); NULL ends a table */
	char short_name;  /* -X, or 0 */
	bool prefix;	  /* .name is a prefix (--collector.NAME): .fn gets the whole name */
	enum cli_kind kind;
	size_t off, size; /* where the value goes, from the table's base (CLI_AT) */
	int64_t min, max; /* inclusive bounds; .max 0: none */
	int64_t floor;	  /* above .min but below this: "is below the minimum of .floor_text" */
	const char *floor_text;
	/* the range error: "rocewatch CMD: --NAME: 'ARG' is not " .bad */
	const char *bad;
	/* 0, -EINVAL after saying why, or 1: not this option after all (an unknown option) */
	int (*fn)(void *base, const char *name, const char *arg);
	const char *usage; /* its lines of --help, as printed; NULL: an alias, not listed */
};

#define CLI_AT(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define CLI_TABLES_MAX	     8

/* Rows that read the same in every command that takes them. */
#define CLI_OPT_OUTPUT(type, member)                                                               \
	{                                                                                          \
		.name = "output", .short_name = 'o', .kind = CLI_STRING, CLI_AT(type, member),     \
		.usage = "  -o, --output FILE          write to FILE instead of standard output\n" \
	}
#define CLI_OPT_HELP                                                 \
	{                                                            \
		.name = "help", .short_name = 'h', .kind = CLI_HELP, \
		.usage = "  -h, --help                 this help\n"  \
	}

struct cli_cmd {
	const char *name;	     /* "serve", "fleet check": in every message */
	const char *range;	     /* the command named in range errors, when not .name */
	const char *head;	     /* --help before the options */
	const char *tail;	     /* --help after them */
	void (*help_after)(FILE *f); /* --help ends with this (the collectors' list) */
	/* in --help order; cli_parse() gets one base per table */
	const struct cli_opt *tables[CLI_TABLES_MAX];
};

/*
 * Parse argv[1..argc) against c's tables (bases[i] is where table i's values
 * go).  Returns 0 with the arguments that are not options moved, in order, to
 * argv[*first..argc); 1 after printing --help or the version (exit 0); or
 * -EINVAL after one line on stderr (bad usage).
 */
int cli_parse(const struct cli_cmd *c, void *const *bases, int argc, char **argv, int *first);
/* The command's --help on f: .head, every row's usage, .tail, .help_after. */
void cli_print_help(const struct cli_cmd *c, FILE *f);
/* The command being parsed (for the messages of rows shared between commands). */
const char *cli_parsing(void);

#endif
