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
#include "commands.h"
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

/* The command whose options are being parsed, for the messages of the shared options. */
static const char *parsing = "";

/*
 * /sys and /proc are where every fact comes from: a root that is not there
 * would read as a node with no devices and pass or skip every rule.
 */
static int want_dir(const char *longname, const char *arg)
{
	struct stat st;

	if (stat(arg, &st)) {
		fprintf(stderr, "rocewatch %s: --%s %s: %s\n", parsing, longname, arg,
			strerror(errno));
		return -EINVAL;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rocewatch %s: --%s %s: not a directory\n", parsing, longname, arg);
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
				parsing, longname, arg);
			return -EINVAL;
		}
		log_set_level((enum log_level)lvl);
		return 0;
	case OPT_LOG_FORMAT:
		lvl = log_format_parse(arg);
		if (lvl < 0) {
			fprintf(stderr, "rocewatch %s: --log.format: '%s' is not logfmt or json\n",
				parsing, arg);
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
				parsing, arg);
			return -EINVAL;
		}
		cfg->wire_port = (uint16_t)p;
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

/* ---- options as tables ---- */

static int opt_collector(void *base, const char *name, const char *arg)
{
	struct rw_config *cfg = base;
	bool on = !strncmp(name, "collector.", 10);
	int i = collector_index(strchr(name, '.') + 1);

	(void)arg;
	if (i < 0)
		return 1; /* cli_parse() says "no such collector" */
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

void cli_print_help(const struct cli_cmd *c, FILE *f)
{
	fputs(c->head, f);
	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++)
		for (const struct cli_opt *o = c->tables[t]; o->name; o++)
			if (o->usage)
				fputs(o->usage, f);
	if (c->tail)
		fputs(c->tail, f);
	if (c->collectors)
		cli_print_collectors(f);
}

static bool takes_arg(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_CALL_FLAG && o->kind != CLI_HELP &&
	       o->kind != CLI_VERSION;
}

/* The row named exactly name[0..len) (or whose prefix it extends), and its table. */
static const struct cli_opt *find_long(const struct cli_cmd *c, const char *name, size_t len,
				       size_t *table)
{
	const struct cli_opt *pre = NULL;
	size_t pre_t = 0;

	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++) {
		for (const struct cli_opt *o = c->tables[t]; o->name; o++) {
			size_t n = strlen(o->name);

			if (!n) /* a short option only */
				continue;
			if (!o->prefix && n == len && !strncmp(o->name, name, len)) {
				*table = t;
				return o;
			}
			if (o->prefix && len > n && !strncmp(o->name, name, n) && !pre) {
				pre = o;
				pre_t = t;
			}
		}
	}
	*table = pre_t;
	return pre;
}

static const struct cli_opt *find_short(const struct cli_cmd *c, char ch, size_t *table)
{
	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++)
		for (const struct cli_opt *o = c->tables[t]; o->name; o++)
			if (o->short_name && o->short_name == ch) {
				*table = t;
				return o;
			}
	return NULL;
}

/* The long option a mistyped --WORD (no value) is closest to, or NULL. */
static const char *closest_long(const struct cli_cmd *c, const char *word)
{
	const char *name = word + 2, *eq = strchr(name, '='), *best = NULL;
	char w[64];
	int bd = 99;

	if (strncmp(word, "--", 2) || (size_t)(eq ? eq - name : (long)strlen(name)) >= sizeof(w))
		return NULL;
	snprintf(w, sizeof(w), "%.*s", (int)(eq ? eq - name : (long)strlen(name)), name);
	for (size_t t = 0; t < CLI_TABLES_MAX && c->tables[t]; t++)
		for (const struct cli_opt *o = c->tables[t]; o->name; o++) {
			int d;

			if (!o->name[0] || !o->usage)
				continue;
			d = rw_edit_distance(w, o->name);
			if (d && d < bd && rw_typo_close(d, strlen(w))) {
				bd = d;
				best = o->name;
			}
		}
	return best;
}

static void bad_word(const struct cli_cmd *c, const char *word, char short_name)
{
	const char *near;

	if (bad_collector(c->name, word))
		return;
	near = short_name ? NULL : closest_long(c, word);
	if (near)
		fprintf(stderr, "rocewatch %s: unknown option '%s'; did you mean '--%s'?\n",
			c->name, word, near);
	else if (short_name)
		fprintf(stderr,
			"rocewatch %s: unknown option '-%c' or missing value (see --help)\n",
			c->name, short_name);
	else
		fprintf(stderr,
			"rocewatch %s: unknown option or missing value: '%s' (see --help)\n",
			c->name, word);
}

static int bad_value(const struct cli_cmd *c, const struct cli_opt *o, const char *arg)
{
	fprintf(stderr, "rocewatch %s: --%s: '%s' is not %s\n", c->range ? c->range : c->name,
		o->name, arg, o->bad);
	return -EINVAL;
}

/* Store one option's value: 0, 1 (help/version printed), -EINVAL (printed), 2 (not it). */
static int apply(const struct cli_cmd *c, const struct cli_opt *o, void *base, const char *name,
		 const char *arg)
{
	char *at = (char *)base + o->off;
	int64_t ns;
	uint64_t u;

	switch (o->kind) {
	case CLI_HELP:
		cli_print_help(c, stdout);
		return 1;
	case CLI_VERSION:
		cli_print_version();
		return 1;
	case CLI_FLAG:
		*(bool *)at = true;
		return 0;
	case CLI_STRING:
		*(const char **)at = arg;
		return 0;
	case CLI_CALL:
	case CLI_CALL_FLAG: {
		int r = o->fn(base, name, arg);

		return r == 1 ? 2 : r ? -EINVAL : 0;
	}
	case CLI_DURATION:
		if (parse_duration(arg, &ns) || ns < o->min || (o->max && ns > o->max))
			return bad_value(c, o, arg);
		if (ns < o->floor) {
			fprintf(stderr, "rocewatch %s: --%s: %s is below the minimum of %s\n",
				c->range ? c->range : c->name, o->name, arg, o->floor_text);
			return -EINVAL;
		}
		*(int64_t *)at = ns;
		return 0;
	case CLI_SIZE:
	case CLI_COUNT:
		if ((o->kind == CLI_SIZE ? parse_size(arg, &u) : parse_u64(arg, &u)) ||
		    u < (uint64_t)o->min || (o->max && u > (uint64_t)o->max))
			return bad_value(c, o, arg);
		if (o->size == sizeof(uint64_t))
			*(uint64_t *)at = u;
		else if (o->size == sizeof(uint32_t))
			*(uint32_t *)at = (uint32_t)u;
		else if (o->size == sizeof(uint16_t))
			*(uint16_t *)at = (uint16_t)u;
		else
			*(uint8_t *)at = (uint8_t)u;
		return 0;
	}
	return -EINVAL;
}

/* --NAME, --NAME=VALUE or --NAME VALUE at argv[*i]; *i moves past what it used. */
static int parse_long(const struct cli_cmd *c, void *const *bases, int argc, char **argv, int *i)
{
	const char *word = argv[*i], *name = word + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name), t;
	const struct cli_opt *o = find_long(c, name, len, &t);
	const char *arg = NULL;
	char whole[128];
	int r;

	if (!o || len >= sizeof(whole))
		goto bad;
	if (takes_arg(o)) {
		if (eq)
			arg = eq + 1;
		else if (*i + 1 < argc)
			arg = argv[++*i];
		else
			goto bad;
	} else if (eq) {
		goto bad; /* a flag given a value */
	}
	memcpy(whole, name, len);
	whole[len] = '\0';
	r = apply(c, o, bases[t], whole, arg);
	if (r != 2)
		return r;
bad:
	bad_word(c, word, 0);
	return -EINVAL;
}

/* -x, -xy (flags), -oFILE or -o FILE at argv[*i]. */
static int parse_short(const struct cli_cmd *c, void *const *bases, int argc, char **argv, int *i)
{
	const char *word = argv[*i];

	for (const char *p = word + 1; *p; p++) {
		size_t t;
		const struct cli_opt *o = find_short(c, *p, &t);
		const char *arg = NULL;
		int r;

		if (!o) {
			bad_word(c, word, *p);
			return -EINVAL;
		}
		if (takes_arg(o)) {
			if (p[1])
				arg = p + 1;
			else if (*i + 1 < argc)
				arg = argv[++*i];
			else {
				bad_word(c, word, *p);
				return -EINVAL;
			}
		}
		r = apply(c, o, bases[t], o->name, arg);
		if (r == 2) {
			bad_word(c, word, *p);
			return -EINVAL;
		}
		if (r || arg)
			return r;
	}
	return 0;
}

int cli_parse(const struct cli_cmd *c, void *const *bases, int argc, char **argv, int *first)
{
	char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	int n = 0, r = 0, i;

	if (!pos) {
		fprintf(stderr, "rocewatch %s: out of memory\n", c->name);
		return -EINVAL;
	}
	parsing = c->range ? c->range : c->name;
	for (i = 1; i < argc && !r; i++) {
		const char *w = argv[i];

		if (!strcmp(w, "--")) {
			while (++i < argc)
				pos[n++] = argv[i];
			break;
		}
		if (w[0] != '-' || !w[1])
			pos[n++] = argv[i];
		else if (w[1] == '-')
			r = parse_long(c, bases, argc, argv, &i);
		else
			r = parse_short(c, bases, argc, argv, &i);
	}
	/* Like GNU getopt: the operands after the options, in their order. */
	*first = argc - n;
	for (i = 0; i < n; i++)
		argv[*first + i] = pos[i];
	free(pos);
	return r;
}

const struct cli_cmd *const cli_commands[] = {
	&check_cli, &export_cli,   &fleet_cli,	&fleet_probe_cli, &health_cli,
	&probe_cli, &report_cli,   &replay_cli, &rules_lint_cli,  &rules_list_cli,
	&serve_cli, &snapshot_cli, NULL,
};
