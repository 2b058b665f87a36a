// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "engine.h"
#include "engine_opts.h"
#include "term.h"
#include "util.h"

void cli_print_collectors(FILE *f)
{
	struct term t;

	/* --help fits the terminal too (COLUMNS, else the terminal's, else 80) */
	term_init(&t, f, TERM_COLOR_NEVER);
	fprintf(f, "\nCollectors (--collector.NAME enables, --no-collector.NAME disables):\n");
	for (int i = 0; i < n_collectors; i++) {
		term_printf(&t, "  %-10s %-9s ", collectors[i]->name,
			    collectors[i]->default_enabled ? "[on]" : "[off]");
		term_wrap(&t, 23, collectors[i]->help, false);
	}
}

/*
 * --collector.NAME... or --no-collector.NAME... (the prefix row's name, and
 * NAME... after it) that names no collector: say so and return true.  A known
 * collector with a bad sub-option is an unknown option instead (false).
 */
static bool bad_collector(const char *prefix, const char *rest)
{
	size_t len = strcspn(rest, "=.");

	for (int i = 0; i < n_collectors; i++)
		if (strlen(collectors[i]->name) == len && !strncmp(collectors[i]->name, rest, len))
			return false;
	fprintf(stderr,
		"rocewatch %s: --%s%.*s: no such collector '%.*s' (collectors:", cli_parsing(),
		prefix, (int)len, rest, (int)len, rest);
	for (int i = 0; i < n_collectors; i++)
		fprintf(stderr, "%s %s", i ? "," : "", collectors[i]->name);
	fprintf(stderr, ")\n");
	return true;
}

/* --profile NAME (param false) or --param KEY=VALUE (param true) added to spec. */
static int rules_option(const char *cmd, struct rules_spec *spec, bool param, const char *arg)
{
	int r = param ? rules_spec_add_param(spec, arg) : rules_spec_add_profile(spec, arg);

	if (r == -EINVAL)
		fprintf(stderr, "rocewatch %s: --param '%s': expected KEY=VALUE\n", cmd, arg);
	else if (r)
		fprintf(stderr, "rocewatch %s: out of memory\n", cmd);
	return r;
}

/* ---- options as tables ---- */

int cli_rules_row(const struct cli_opt *o, void *member, const char *arg)
{
	return rules_option(cli_parsing(), member, o->value == CLI_RULES_PARAM, arg);
}

/* --collector.NAME (.value 1) or --no-collector.NAME (0): arg is NAME. */
static int opt_collector(const struct cli_opt *o, void *member, const char *arg)
{
	int8_t *enable = member;
	int i = collector_index(arg);

	if (i < 0)
		return bad_collector(o->name, arg) ? -EINVAL : 1;
	enable[i] = (int8_t)o->value;
	return 0;
}

static int opt_log_level(const struct cli_opt *o, void *member, const char *arg)
{
	int lvl = log_level_parse(arg);

	(void)o, (void)member;
	if (lvl < 0)
		return CLI_BAD;
	log_set_level((enum log_level)lvl);
	return 0;
}

static int opt_log_format(const struct cli_opt *o, void *member, const char *arg)
{
	int fmt = log_format_parse(arg);

	(void)o, (void)member;
	if (fmt < 0)
		return CLI_BAD;
	log_set_format((enum log_format)fmt);
	return 0;
}

/* --sysfs-root / --procfs-root (and node_exporter's names): a directory that is there. */
#define ROOT_DIR(n, member, mv, text)                                                        \
	{                                                                                    \
		.name = n, CLI_DIR_AT(struct rw_config, member), .metavar = mv, .help = text \
	}
#define ROOT(n, member, text)                                                                      \
	{                                                                                          \
		.name = n, CLI_STRING_AT(struct rw_config, member), .metavar = "DIR", .help = text \
	}
#define FILTER(n, member, text)                                                                \
	{                                                                                      \
		.name = n, CLI_REGEX_AT(struct rw_config, member, has_##member, member##_src), \
		.metavar = "REGEX", .help = text                                               \
	}
static const char *const log_levels[] = { "error", "warn", "info", "debug", NULL };
static const char *const log_formats[] = { "logfmt", "json", NULL };
const struct cli_opt cli_common_opts[] = {
	ROOT_DIR("sysfs-root", sysfs_root, "DIR, --path.sysfs DIR",
		 "     read sysfs from DIR (default /sys)"),
	ROOT_DIR("path.sysfs", sysfs_root, NULL, NULL), /* node_exporter's name */
	ROOT_DIR("procfs-root", procfs_root, "DIR, --path.procfs DIR",
		 "   read procfs from DIR (default /proc)"),
	ROOT_DIR("path.procfs", procfs_root, NULL, NULL),
	ROOT("configfs-root", configfs_root, "read configfs from DIR (default /sys/kernel/config)"),
	ROOT("debugfs-root", debugfs_root, "read debugfs from DIR (default /sys/kernel/debug)"),
	ROOT("devfs-root", devfs_root, "look for /dev/infiniband under DIR (default /dev)"),
	{ .name = "from",
	  CLI_STRING_AT(struct rw_config, from),
	  .metavar = "FILE",
	  .help = "replay a snapshot (or a JSON array of them) instead\n"
		  "of reading this machine" },
	FILTER("netdev-include", netdev_include,
	       "only netdevs whose whole name matches (this and\n"
	       "the other REGEX filters are repeatable: any of\n"
	       "the patterns)"),
	FILTER("netdev-exclude", netdev_exclude, "skip netdevs whose whole name matches"),
	FILTER("rdma-device-include", rdma_include, "  only RDMA devices whose whole name matches"),
	FILTER("rdma-device-exclude", rdma_exclude,
	       "  never open or ask about RDMA devices whose whole\n"
	       "name matches (firmware-restricted PFs)"),
	{ .name = "collector.",
	  .prefix = true,
	  CLI_CALL_FLAG_AT(struct rw_config, collector_enable, opt_collector),
	  .value = 1,
	  .metavar = "NAME / --no-collector.NAME",
	  .help = "   enable / disable a collector" },
	{ .name = "no-collector.",
	  .prefix = true,
	  CLI_CALL_FLAG_AT(struct rw_config, collector_enable, opt_collector),
	  .value = 0 },
	FILTER("collector.ethtool.include", ethtool_include,
	       "   also export these driver stats by name"),
	{ .name = "collector.wire.port",
	  CLI_COUNT_AT(struct rw_config, wire_port),
	  .min = 1,
	  .max = 65535,
	  .bad = "a UDP port",
	  .metavar = "PORT",
	  .help = "UDP port the wire view counts as RoCE v2 (4791)" },
	{ .name = "collector.lldp.socket",
	  CLI_STRING_AT(struct rw_config, lldp_socket),
	  .metavar = "PATH",
	  .help = "  lldpd's control socket, asked with lldpcli -u\n"
		  "PATH when it is there (default /run/lldpd.socket)" },
	{ .name = "collector.lldp.wait",
	  CLI_DURATION_AT(struct rw_config, lldp_wait_ns),
	  .max = 300000000000LL,
	  .bad = "a duration up to 5m (e.g. 35s)",
	  .metavar = "DURATION",
	  .help = "\nthe first poll waits up to DURATION for an LLDP\n"
		  "frame on each netdev with carrier that lldpd does\n"
		  "not answer for (default 0; switches send every 30s)" },
	{ .name = "log.level",
	  .kind = CLI_CALL,
	  .fn = opt_log_level,
	  .words = log_levels,
	  .metavar = "LEVEL",
	  .help = "error, warn, info (default) or debug (alias\n"
		  "--log-level)" },
	/* before log.level existed */
	{ .name = "log-level", .kind = CLI_CALL, .fn = opt_log_level, .words = log_levels },
	{ .name = "log.format",
	  .kind = CLI_CALL,
	  .fn = opt_log_format,
	  .words = log_formats,
	  .metavar = "FORMAT",
	  .help = "logfmt (default) or json, with timestamps" },
	CLI_OPT_HELP,
	{ 0 },
};
#undef FILTER
#undef ROOT
#undef ROOT_DIR
