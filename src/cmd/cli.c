// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "build_info.h"
#include "collector.h"
#include "engine.h"
#include "cli.h"
#include "term.h"
#include "util.h"

const struct option common_options[] = {
	{ "sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT },
	{ "path.sysfs", required_argument, NULL, OPT_SYSFS_ROOT }, /* node_exporter's name */
	{ "procfs-root", required_argument, NULL, OPT_PROCFS_ROOT },
	{ "path.procfs", required_argument, NULL, OPT_PROCFS_ROOT },
	{ "configfs-root", required_argument, NULL, OPT_CONFIGFS_ROOT },
	{ "debugfs-root", required_argument, NULL, OPT_DEBUGFS_ROOT },
	{ "devfs-root", required_argument, NULL, OPT_DEVFS_ROOT },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "log.level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL }, /* before log.level existed */
	{ "log.format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "netdev-include", required_argument, NULL, OPT_NETDEV_INCLUDE },
	{ "netdev-exclude", required_argument, NULL, OPT_NETDEV_EXCLUDE },
	{ "rdma-device-include", required_argument, NULL, OPT_RDMA_INCLUDE },
	{ "rdma-device-exclude", required_argument, NULL, OPT_RDMA_EXCLUDE },
	{ "collector.ethtool.include", required_argument, NULL, OPT_ETHTOOL_INCLUDE },
	{ "collector.wire.port", required_argument, NULL, OPT_WIRE_PORT },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static char coll_names[2][RW_MAX_COLLECTORS][48];

struct option *cli_options(const struct option *own)
{
	size_t n_own = 0, n_common = 0, k = 0;
	struct option *o;

	while (own && own[n_own].name)
		n_own++;
	while (common_options[n_common].name)
		n_common++;
	o = calloc(n_own + n_common + 2 * (size_t)n_collectors + 1, sizeof(*o));
	if (!o)
		return NULL;
	for (size_t i = 0; i < n_own; i++)
		o[k++] = own[i];
	for (size_t i = 0; i < n_common; i++)
		o[k++] = common_options[i];
	for (int i = 0; i < n_collectors; i++) {
		snprintf(coll_names[0][i], sizeof(coll_names[0][i]), "collector.%s",
			 collectors[i]->name);
		snprintf(coll_names[1][i], sizeof(coll_names[1][i]), "no-collector.%s",
			 collectors[i]->name);
		o[k++] = (struct option){ coll_names[0][i], no_argument, NULL, OPT_COLLECTOR };
		o[k++] = (struct option){ coll_names[1][i], no_argument, NULL, OPT_NO_COLLECTOR };
	}
	return o;
}

/*
 * /sys and /proc are where every fact comes from: a root that is not there
 * would read as a node with no devices and pass or skip every rule.
 */
static int want_dir(const char *longname, const char *arg)
{
	struct stat st;

	if (stat(arg, &st)) {
		fprintf(stderr, "rocewatch: --%s %s: %s\n", longname, arg, strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rocewatch: --%s %s: not a directory\n", longname, arg);
		return -EINVAL;
	}
	return 0;
}

int cli_common(struct rw_config *cfg, int opt, const char *arg, const char *longname)
{
	int lvl;

	switch (opt) {
	case OPT_SYSFS_ROOT:
		if (want_dir(longname, arg))
			return -EINVAL;
		cfg->sysfs_root = arg;
		return 0;
	case OPT_PROCFS_ROOT:
		if (want_dir(longname, arg))
			return -EINVAL;
		cfg->procfs_root = arg;
		return 0;
	case OPT_CONFIGFS_ROOT:
		cfg->configfs_root = arg;
		return 0;
	case OPT_DEBUGFS_ROOT:
		cfg->debugfs_root = arg;
		return 0;
	case OPT_DEVFS_ROOT:
		cfg->devfs_root = arg;
		return 0;
	case OPT_FROM:
		cfg->from = arg;
		return 0;
	case OPT_LOG_LEVEL:
		lvl = log_level_parse(arg);
		if (lvl < 0) {
			fprintf(stderr, "rocewatch: --%s: '%s' is not error, warn, info or debug\n",
				longname, arg);
			return -EINVAL;
		}
		log_set_level((enum log_level)lvl);
		return 0;
	case OPT_LOG_FORMAT:
		lvl = log_format_parse(arg);
		if (lvl < 0) {
			fprintf(stderr, "rocewatch: --log.format: '%s' is not logfmt or json\n",
				arg);
			return -EINVAL;
		}
		log_set_format((enum log_format)lvl);
		return 0;
	case OPT_NETDEV_INCLUDE:
		if (cfg->has_netdev_include)
			regfree(&cfg->netdev_include);
		cfg->has_netdev_include = false;
		if (config_regex(&cfg->netdev_include, "--netdev-include", arg))
			return -EINVAL;
		cfg->has_netdev_include = true;
		return 0;
	case OPT_NETDEV_EXCLUDE:
		if (cfg->has_netdev_exclude)
			regfree(&cfg->netdev_exclude);
		cfg->has_netdev_exclude = false;
		if (config_regex(&cfg->netdev_exclude, "--netdev-exclude", arg))
			return -EINVAL;
		cfg->has_netdev_exclude = true;
		return 0;
	case OPT_RDMA_INCLUDE:
		if (cfg->has_rdma_include)
			regfree(&cfg->rdma_include);
		cfg->has_rdma_include = false;
		if (config_regex(&cfg->rdma_include, "--rdma-device-include", arg))
			return -EINVAL;
		cfg->has_rdma_include = true;
		return 0;
	case OPT_RDMA_EXCLUDE:
		if (cfg->has_rdma_exclude)
			regfree(&cfg->rdma_exclude);
		cfg->has_rdma_exclude = false;
		if (config_regex(&cfg->rdma_exclude, "--rdma-device-exclude", arg))
			return -EINVAL;
		cfg->has_rdma_exclude = true;
		return 0;
	case OPT_ETHTOOL_INCLUDE:
		if (cfg->has_ethtool_include)
			regfree(&cfg->ethtool_include);
		cfg->has_ethtool_include = false;
		if (config_regex(&cfg->ethtool_include, "--collector.ethtool.include", arg))
			return -EINVAL;
		cfg->has_ethtool_include = true;
		return 0;
	case OPT_WIRE_PORT: {
		uint64_t p;

		if (parse_u64(arg, &p) || !p || p > 65535) {
			fprintf(stderr,
				"rocewatch: --collector.wire.port: '%s' is not a UDP port\n", arg);
			return -EINVAL;
		}
		cfg->wire_port = (uint16_t)p;
		return 0;
	}
	case OPT_COLLECTOR:
	case OPT_NO_COLLECTOR: {
		const char *name = strchr(longname, '.') + 1;
		int i = collector_index(name);

		cfg->collector_enable[i] = opt == OPT_COLLECTOR;
		return 0;
	}
	default:
		return 1;
	}
}

void cli_print_version(void)
{
	printf("rocewatch %s (revision %s, %s)\n", ROCEWATCH_VERSION, rw_build_revision,
	       rw_build_compiler);
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

/* --collector.NAME[=...] or --no-collector.NAME that names no collector: say so. */
static bool bad_collector(const char *cmd, const char *arg)
{
	const char *p = !strncmp(arg, "--collector.", 12)      ? arg + 12
			: !strncmp(arg, "--no-collector.", 15) ? arg + 15
							       : NULL;
	size_t len;

	if (!p)
		return false;
	len = strcspn(p, "=.");
	for (int i = 0; i < n_collectors; i++)
		if (strlen(collectors[i]->name) == len && !strncmp(collectors[i]->name, p, len))
			return false; /* a known collector: a bad sub-option or value instead */
	fprintf(stderr, "rocewatch %s: %.*s: no such collector '%.*s' (collectors:", cmd,
		(int)(p - arg + len), arg, (int)len, p);
	for (int i = 0; i < n_collectors; i++)
		fprintf(stderr, "%s %s", i ? "," : "", collectors[i]->name);
	fprintf(stderr, ")\n");
	return true;
}

void cli_bad_option(const char *cmd, char **argv, int optind_after)
{
	/* getopt has moved past the offending word; with opterr off it printed nothing. */
	const char *arg = optind_after > 0 ? argv[optind_after - 1] : "?";

	if (bad_collector(cmd, arg))
		return;
	if (optopt > 0 && optopt < 256 && arg[0] == '-' && arg[1] != '-')
		fprintf(stderr,
			"rocewatch %s: unknown option '-%c' or missing value (see --help)\n", cmd,
			optopt);
	else
		fprintf(stderr,
			"rocewatch %s: unknown option or missing value: '%s' (see --help)\n", cmd,
			arg);
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

int cli_format_json(const char *cmd, const char *arg, bool *json)
{
	if (strcmp(arg, "text") && strcmp(arg, "json")) {
		fprintf(stderr, "rocewatch %s: --format: '%s' is not text or json\n", cmd, arg);
		return -EINVAL;
	}
	*json = !strcmp(arg, "json");
	return 0;
}

FILE *cli_open_output(const char *cmd, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f)
		fprintf(stderr, "rocewatch %s: %s: %s\n", cmd, path, strerror(errno));
	return f;
}

int cli_close_output(const char *cmd, const char *path, FILE *f)
{
	int bad = fflush(f) || ferror(f);

	if (f != stdout && fclose(f))
		bad = 1;
	if (bad) {
		fprintf(stderr, "rocewatch %s: %s: write error\n", cmd,
			strcmp(path, "-") ? path : "standard output");
		return -EIO;
	}
	return 0;
}
