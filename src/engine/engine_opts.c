// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collector.h"
#include "engine.h"
#include "engine_opts.h"
#include "term.h"
#include "util.h"

/* The common options that are more than a string: ids for common_option(). */
enum {
	OPT_LOG_LEVEL = 1,
	OPT_LOG_FORMAT,
	OPT_NETDEV_INCLUDE,
	OPT_NETDEV_EXCLUDE,
	OPT_RDMA_INCLUDE,
	OPT_RDMA_EXCLUDE,
	OPT_ETHTOOL_INCLUDE,
	OPT_WIRE_PORT,
};

/*
 * /sys and /proc are where every fact comes from: a root that is not there
 * would read as a node with no devices and pass or skip every rule.
 */
static int want_dir(const char *longname, const char *arg)
{
	struct stat st;

	if (stat(arg, &st)) {
		fprintf(stderr, "rocewatch %s: --%s %s: %s\n", cli_parsing(), longname, arg,
			strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rocewatch %s: --%s %s: not a directory\n", cli_parsing(), longname,
			arg);
		return -EINVAL;
	}
	return 0;
}

static int common_option(struct rw_config *cfg, int opt, const char *arg, const char *longname)
{
	int lvl;

	switch (opt) {
	case OPT_LOG_LEVEL:
		lvl = log_level_parse(arg);
		if (lvl < 0) {
			fprintf(stderr,
				"rocewatch %s: --%s: '%s' is not error, warn, info or debug\n",
				cli_parsing(), longname, arg);
			return -EINVAL;
		}
		log_set_level((enum log_level)lvl);
		return 0;
	case OPT_LOG_FORMAT:
		lvl = log_format_parse(arg);
		if (lvl < 0) {
			fprintf(stderr, "rocewatch %s: --log.format: '%s' is not logfmt or json\n",
				cli_parsing(), arg);
			return -EINVAL;
		}
		log_set_format((enum log_format)lvl);
		return 0;
	case OPT_NETDEV_INCLUDE:
		return config_regex_add(&cfg->netdev_include, &cfg->has_netdev_include,
					&cfg->netdev_include_src, "--netdev-include", arg)
			   ? -EINVAL
			   : 0;
	case OPT_NETDEV_EXCLUDE:
		return config_regex_add(&cfg->netdev_exclude, &cfg->has_netdev_exclude,
					&cfg->netdev_exclude_src, "--netdev-exclude", arg)
			   ? -EINVAL
			   : 0;
	case OPT_RDMA_INCLUDE:
		return config_regex_add(&cfg->rdma_include, &cfg->has_rdma_include,
					&cfg->rdma_include_src, "--rdma-device-include", arg)
			   ? -EINVAL
			   : 0;
	case OPT_RDMA_EXCLUDE:
		return config_regex_add(&cfg->rdma_exclude, &cfg->has_rdma_exclude,
					&cfg->rdma_exclude_src, "--rdma-device-exclude", arg)
			   ? -EINVAL
			   : 0;
	case OPT_ETHTOOL_INCLUDE:
		return config_regex_add(&cfg->ethtool_include, &cfg->has_ethtool_include,
					&cfg->ethtool_include_src, "--collector.ethtool.include",
					arg)
			   ? -EINVAL
			   : 0;
	case OPT_WIRE_PORT: {
		uint64_t p;

		if (parse_u64(arg, &p) || !p || p > 65535) {
			fprintf(stderr,
				"rocewatch %s: --collector.wire.port: '%s' is not a UDP port\n",
				cli_parsing(), arg);
			return -EINVAL;
		}
		cfg->wire_port = (uint16_t)p;
		return 0;
	}
	default:
		return 1;
	}
}

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
 * --collector.NAME... or --no-collector.NAME... (name without the dashes) that
 * names no collector: say so and return true.  A known collector with a bad
 * sub-option is an unknown option instead (false).
 */
static bool bad_collector(const char *name)
{
	const char *p = strchr(name, '.') + 1;
	size_t len = strcspn(p, "=.");

	for (int i = 0; i < n_collectors; i++)
		if (strlen(collectors[i]->name) == len && !strncmp(collectors[i]->name, p, len))
			return false;
	fprintf(stderr,
		"rocewatch %s: --%.*s: no such collector '%.*s' (collectors:", cli_parsing(),
		(int)(p - name + len), name, (int)len, p);
	for (int i = 0; i < n_collectors; i++)
		fprintf(stderr, "%s %s", i ? "," : "", collectors[i]->name);
	fprintf(stderr, ")\n");
	return true;
}

int cli_rules_option(const char *cmd, struct rules_spec *spec, bool param, const char *arg)
{
	int r = param ? rules_spec_add_param(spec, arg) : rules_spec_add_profile(spec, arg);

	if (r == -EINVAL)
		fprintf(stderr, "rocewatch %s: --param '%s': expected KEY=VALUE\n", cmd, arg);
	else if (r)
		fprintf(stderr, "rocewatch %s: out of memory\n", cmd);
	return r;
}

/* ---- options as tables ---- */

static int opt_collector(void *base, const char *name, const char *arg)
{
	struct rw_config *cfg = base;
	bool on = !strncmp(name, "collector.", 10);
	int i = collector_index(strchr(name, '.') + 1);

	(void)arg;
	if (i < 0)
		return bad_collector(name) ? -EINVAL : 1;
	cfg->collector_enable[i] = on;
	return 0;
}

static int opt_common(void *base, const char *name, const char *arg)
{
	struct rw_config *cfg = base;
	int opt = !strcmp(name, "log.level") || !strcmp(name, "log-level") ? OPT_LOG_LEVEL
		  : !strcmp(name, "log.format")				   ? OPT_LOG_FORMAT
		  : !strcmp(name, "netdev-include")			   ? OPT_NETDEV_INCLUDE
		  : !strcmp(name, "netdev-exclude")			   ? OPT_NETDEV_EXCLUDE
		  : !strcmp(name, "rdma-device-include")		   ? OPT_RDMA_INCLUDE
		  : !strcmp(name, "rdma-device-exclude")		   ? OPT_RDMA_EXCLUDE
		  : !strcmp(name, "collector.ethtool.include")		   ? OPT_ETHTOOL_INCLUDE
									   : OPT_WIRE_PORT;

	return common_option(cfg, opt, arg, name) ? -EINVAL : 0;
}

/* --sysfs-root / --procfs-root (and node_exporter's names): a directory that is there. */
static int opt_root_dir(void *base, const char *name, const char *arg)
{
	struct rw_config *cfg = base;

	if (want_dir(name, arg))
		return -EINVAL;
	if (strstr(name, "sysfs"))
		cfg->sysfs_root = arg;
	else
		cfg->procfs_root = arg;
	return 0;
}

#define ROOT_DIR(n, text)                                                      \
	{                                                                      \
		.name = n, .kind = CLI_CALL, .fn = opt_root_dir, .usage = text \
	}
#define ROOT(n, member, text)                                                                  \
	{                                                                                      \
		.name = n, .kind = CLI_STRING, CLI_AT(struct rw_config, member), .usage = text \
	}
const struct cli_opt cli_common_opts[] = {
	ROOT_DIR("sysfs-root",
		 "  --sysfs-root DIR, --path.sysfs DIR     read sysfs from DIR (default /sys)\n"),
	ROOT_DIR("path.sysfs", NULL), /* node_exporter's name */
	ROOT_DIR("procfs-root",
		 "  --procfs-root DIR, --path.procfs DIR   read procfs from DIR (default /proc)\n"),
	ROOT_DIR("path.procfs", NULL),
	ROOT("configfs-root", configfs_root,
	     "  --configfs-root DIR        read configfs from DIR (default /sys/kernel/config)\n"),
	ROOT("debugfs-root", debugfs_root,
	     "  --debugfs-root DIR         read debugfs from DIR (default /sys/kernel/debug)\n"),
	ROOT("devfs-root", devfs_root,
	     "  --devfs-root DIR           look for /dev/infiniband under DIR (default /dev)\n"),
	ROOT("from", from,
	     "  --from FILE                replay a snapshot (or a JSON array of them) instead\n"
	     "                             of reading this machine\n"),
	{ .name = "netdev-include",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage = "  --netdev-include REGEX     only netdevs whose whole name matches (this and\n"
		   "                             the other REGEX filters are repeatable: any of\n"
		   "                             the patterns)\n" },
	{ .name = "netdev-exclude",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage = "  --netdev-exclude REGEX     skip netdevs whose whole name matches\n" },
	{ .name = "rdma-device-include",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage = "  --rdma-device-include REGEX  only RDMA devices whose whole name matches\n" },
	{ .name = "rdma-device-exclude",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage =
	      "  --rdma-device-exclude REGEX  never open or ask about RDMA devices whose whole\n"
	      "                             name matches (firmware-restricted PFs)\n" },
	{ .name = "collector.",
	  .prefix = true,
	  .kind = CLI_CALL_FLAG,
	  .fn = opt_collector,
	  .usage = "  --collector.NAME / --no-collector.NAME   enable / disable a collector\n" },
	{ .name = "no-collector.", .prefix = true, .kind = CLI_CALL_FLAG, .fn = opt_collector },
	{ .name = "collector.ethtool.include",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage =
	      "  --collector.ethtool.include REGEX   also export these driver stats by name\n" },
	{ .name = "collector.wire.port",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage =
	      "  --collector.wire.port PORT UDP port the wire view counts as RoCE v2 (4791)\n" },
	{ .name = "collector.lldp.socket",
	  .kind = CLI_STRING,
	  CLI_AT(struct rw_config, lldp_socket),
	  .usage =
	      "  --collector.lldp.socket PATH  lldpd's control socket, asked with lldpcli -u\n"
	      "                             PATH when it is there (default /run/lldpd.socket)\n" },
	{ .name = "collector.lldp.wait",
	  .kind = CLI_DURATION,
	  CLI_AT(struct rw_config, lldp_wait_ns),
	  .max = 300000000000LL,
	  .bad = "a duration up to 5m (e.g. 35s)",
	  .usage =
	      "  --collector.lldp.wait DURATION\n"
	      "                             the first poll waits up to DURATION for an LLDP\n"
	      "                             frame on each netdev with carrier that lldpd does\n"
	      "                             not answer for (default 0; switches send every "
	      "30s)\n" },
	{ .name = "log.level",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage = "  --log.level LEVEL          error, warn, info (default) or debug (alias\n"
		   "                             --log-level)\n" },
	{ .name = "log-level", .kind = CLI_CALL, .fn = opt_common }, /* before log.level existed */
	{ .name = "log.format",
	  .kind = CLI_CALL,
	  .fn = opt_common,
	  .usage = "  --log.format FORMAT        logfmt (default) or json, with timestamps\n" },
	CLI_OPT_HELP,
	{ 0 },
};
#undef ROOT
#undef ROOT_DIR
