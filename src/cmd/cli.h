/* SPDX-License-Identifier: MIT */
/* Command-line plumbing shared by the subcommands. */
#ifndef ROCEWATCH_CLI_H
#define ROCEWATCH_CLI_H

#include <getopt.h>
#include <stdbool.h>
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
	OPT_RDMA_INCLUDE,
	OPT_RDMA_EXCLUDE,
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
	"  --rdma-device-include REGEX  only RDMA devices whose whole name matches\n"        \
	"  --rdma-device-exclude REGEX  never open or ask about RDMA devices whose whole\n"  \
	"                             name matches (firmware-restricted PFs)\n"              \
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

#endif
