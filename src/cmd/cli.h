/* SPDX-License-Identifier: MIT */
/* Command-line plumbing shared by the subcommands. */
#ifndef ROCEWATCH_CLI_H
#define ROCEWATCH_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

/* Option ids for the options every collecting command takes. */
enum {
	OPT_SYSFS_ROOT = 1000,
	OPT_PROCFS_ROOT,
	OPT_CONFIGFS_ROOT,
	OPT_DEBUGFS_ROOT,
	OPT_FROM,
	OPT_LOG_LEVEL,
	OPT_NETDEV_INCLUDE,
	OPT_NETDEV_EXCLUDE,
	OPT_ETHTOOL_INCLUDE,
	OPT_COLLECTOR,	  /* --collector.NAME */
	OPT_NO_COLLECTOR, /* --no-collector.NAME */
	OPT_WIRE_PORT,
	OPT_LOG_FORMAT,
	OPT_DEVFS_ROOT,
	OPT_HELP,
	OPT__COMMON_END,
};

/* getopt_long entries for the common options (terminated by a zero entry). */
extern const struct option common_options[];
#define COMMON_OPTIONS_HELP                                                                  \
	"  --sysfs-root DIR, --path.sysfs DIR     read sysfs from DIR (default /sys)\n"      \
	"  --procfs-root DIR, --path.procfs DIR   read procfs from DIR (default /proc)\n"    \
	"  --configfs-root DIR        read configfs from DIR (default /sys/kernel/config)\n" \
	"  --debugfs-root DIR         read debugfs from DIR (default /sys/kernel/debug)\n"   \
	"  --devfs-root DIR           look for /dev/infiniband under DIR (default /dev)\n"   \
	"  --from FILE                replay a snapshot (or a JSON array of them) instead\n" \
	"                             of reading this machine\n"                             \
	"  --netdev-include REGEX     only netdevs whose whole name matches\n"               \
	"  --netdev-exclude REGEX     skip netdevs whose whole name matches\n"               \
	"  --collector.NAME / --no-collector.NAME   enable / disable a collector\n"          \
	"  --collector.ethtool.include REGEX   also export these driver stats by name\n"     \
	"  --collector.wire.port PORT UDP port the wire view counts as RoCE v2 (4791)\n"     \
	"  --log.level LEVEL          error, warn, info (default) or debug (alias\n"         \
	"                             --log-level)\n"                                        \
	"  --log.format FORMAT        logfmt (default) or json, with timestamps\n"           \
	"  -h, --help                 this help\n"

/*
 * Build a getopt table: the command's own options followed by the common
 * ones and one --collector.X / --no-collector.X per collector.  Free with free().
 */
struct option *cli_options(const struct option *own);
/* Handle a common option; 0 handled, -EINVAL error (printed), 1 not common. */
int cli_common(struct rw_config *cfg, int opt, const char *arg, const char *longname);
/* "rocewatch 0.1.0 (revision abc123, gcc 12.2.0)" on stdout: `version`, `serve --version`. */
void cli_print_version(void);
/* "Collectors:" and each collector's name, default and help, for --help. */
void cli_print_collectors(FILE *f);
/* Report an unknown flag or missing argument the way every command does. */
void cli_bad_option(const char *cmd, char **argv, int optind_after);
/*
 * --profile NAME (param false) or --param KEY=VALUE (param true) added to spec:
 * 0, or -EINVAL / -ENOMEM after one line naming the command and the flag.
 */
struct rules_spec;
int cli_rules_option(const char *cmd, struct rules_spec *spec, bool param, const char *arg);
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
	CLI_FLAG,     /* bool at .off = true */
	CLI_STRING,   /* const char * at .off = the argument */
	CLI_DURATION, /* int64_t ns at .off, within [.min, .max] */
	CLI_SIZE,     /* uint64_t bytes at .off, within [.min, .max] */
	CLI_COUNT,    /* unsigned integer of .size bytes at .off, within [.min, .max] */
	CLI_CALL,     /* .fn(base, name, argument): parses, stores, prints its own error */
	CLI_CALL_FLAG, /* .fn(base, name, NULL), no argument */
	CLI_HELP,     /* print the command's help; cli_parse() returns 1 */
	CLI_VERSION,  /* print the version; cli_parse() returns 1 */
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
#define CLI_TABLES_MAX 8

struct cli_cmd {
	const char *name;  /* "serve", "fleet check": in every message */
	const char *range; /* the command named in range errors, when not .name */
	const char *head;  /* --help before the options */
	const char *tail;  /* --help after them */
	bool collectors;   /* --help ends with the collectors' list */
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
/* The command's --help on f: .head, every row's usage, .tail, the collectors. */
void cli_print_help(const struct cli_cmd *c, FILE *f);
/* The option rows every collecting command takes; base: struct rw_config. */
extern const struct cli_opt cli_common_opts[];
/* Every command's table, for the tests (README and man page against the rows). */
extern const struct cli_cmd *const cli_commands[];

#endif
