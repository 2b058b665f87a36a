// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

void config_defaults(struct rw_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sysfs_root = "/sys";
	cfg->procfs_root = "/proc";
	cfg->configfs_root = "/sys/kernel/config";
	cfg->debugfs_root = "/sys/kernel/debug";
	cfg->devfs_root = "/dev";
	cfg->interval_ns = 1000000000LL;
	cfg->config_interval_ns = 15000000000LL;
	cfg->wire_port = 4791;
	cfg->lldp_socket = "/run/lldpd.socket";
	memset(cfg->collector_enable, -1, sizeof(cfg->collector_enable));
}

void config_free(struct rw_config *cfg)
{
	if (cfg->has_netdev_include)
		regfree(&cfg->netdev_include);
	if (cfg->has_netdev_exclude)
		regfree(&cfg->netdev_exclude);
	if (cfg->has_ethtool_include)
		regfree(&cfg->ethtool_include);
	cfg->has_netdev_include = cfg->has_netdev_exclude = cfg->has_ethtool_include = false;
	if (cfg->has_rdma_include)
		regfree(&cfg->rdma_include);
	if (cfg->has_rdma_exclude)
		regfree(&cfg->rdma_exclude);
	cfg->has_rdma_include = cfg->has_rdma_exclude = false;
	free(cfg->netdev_include_src);
	free(cfg->netdev_exclude_src);
	free(cfg->ethtool_include_src);
	free(cfg->rdma_include_src);
	free(cfg->rdma_exclude_src);
	cfg->netdev_include_src = cfg->netdev_exclude_src = cfg->ethtool_include_src = NULL;
	cfg->rdma_include_src = cfg->rdma_exclude_src = NULL;
}

bool config_rdma_wanted(const struct rw_config *cfg, const char *dev)
{
	if (!cfg)
		return true;
	if (cfg->has_rdma_include && regexec(&cfg->rdma_include, dev, 0, NULL, 0))
		return false;
	if (cfg->has_rdma_exclude && !regexec(&cfg->rdma_exclude, dev, 0, NULL, 0))
		return false;
	return true;
}

bool config_netdev_wanted(const struct rw_config *cfg, const char *name)
{
	if (cfg->has_netdev_include && regexec(&cfg->netdev_include, name, 0, NULL, 0))
		return false;
	if (cfg->has_netdev_exclude && !regexec(&cfg->netdev_exclude, name, 0, NULL, 0))
		return false;
	return true;
}

int config_regex(regex_t *re, const char *flag, const char *pattern)
{
	char full[1024], err[256];
	int r;

	/* Anchored, as Prometheus exporters anchor their device filters. */
	if (snprintf(full, sizeof(full), "^(%s)$", pattern) >= (int)sizeof(full)) {
		fprintf(stderr, "rocewatch: %s: pattern too long\n", flag);
		return -EINVAL;
	}
	r = regcomp(re, full, REG_EXTENDED | REG_NOSUB);
	if (r) {
		regerror(r, re, err, sizeof(err));
		fprintf(stderr, "rocewatch: %s: bad regular expression '%s': %s\n", flag, pattern,
			err);
		return -EINVAL;
	}
	return 0;
}

/* Do the pattern's parentheses close within it (brackets and escapes skipped)? */
static bool parens_balance(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '[') {
			/* a bracket expression: ']' first is a member, then up to the closing one
			 */
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p++;
			if (!*p)
				return true; /* regcomp() says what is wrong with it */
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')' && --depth < 0) {
			return false;
		}
	}
	return depth == 0;
}

int config_regex_add(regex_t *re, bool *has, char **src, const char *flag, const char *pattern)
{
	regex_t one, all;
	char *joined;
	size_t n;

	if (config_regex(&one, flag, pattern))
		return -EINVAL;
	regfree(&one);
	if (!parens_balance(pattern)) {
		fprintf(stderr, "rocewatch: %s: '%s': its parentheses do not balance\n", flag,
			pattern);
		return -EINVAL;
	}
	n = (*src ? strlen(*src) + 1 : 0) + strlen(pattern) + 3;
	joined = malloc(n);
	if (!joined) {
		fprintf(stderr, "rocewatch: %s: out of memory\n", flag);
		return -EINVAL;
	}
	snprintf(joined, n, "%s%s(%s)", *src ? *src : "", *src ? "|" : "", pattern);
	if (config_regex(&all, flag, joined)) {
		free(joined);
		return -EINVAL;
	}
	if (*has)
		regfree(re);
	*re = all;
	*has = true;
	free(*src);
	*src = joined;
	return 0;
}
