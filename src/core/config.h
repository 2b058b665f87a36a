/* SPDX-License-Identifier: MIT */
/* Options shared by every command: where to read from, what to include. */
#ifndef ROCEWATCH_CONFIG_H
#define ROCEWATCH_CONFIG_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

#include "model.h"

#ifndef ROCEWATCH_VERSION
#define ROCEWATCH_VERSION "0.0.0"
#endif

struct rw_config {
	const char *sysfs_root;	   /* default "/sys" */
	const char *procfs_root;   /* default "/proc" */
	const char *configfs_root; /* default "/sys/kernel/config" */
	const char *debugfs_root;  /* default "/sys/kernel/debug" */
	const char *devfs_root;	   /* default "/dev" (verbs device nodes) */
	const char *from;	   /* replay a snapshot instead of the machine */

	bool has_netdev_include, has_netdev_exclude, has_ethtool_include;
	regex_t netdev_include, netdev_exclude, ethtool_include;
	/* RDMA devices: decided before any of a device's files is opened (restricted PFs) */
	bool has_rdma_include, has_rdma_exclude;
	regex_t rdma_include, rdma_exclude;
	/* what each was compiled from: a repeated flag adds to it (config_regex_add) */
	char *netdev_include_src, *netdev_exclude_src, *ethtool_include_src;
	char *rdma_include_src, *rdma_exclude_src;

	int64_t interval_ns;	    /* fast loop */
	int64_t config_interval_ns; /* slow loop */

	/* per collector: -1 default, 0 off, 1 on (indexed like the collector table) */
	int8_t collector_enable[RW_MAX_COLLECTORS];
	uint16_t wire_port;
	/* lldpd's control socket (lldpcli -u), default /run/lldpd.socket */
	const char *lldp_socket;
	int64_t lldp_wait_ns; /* the first poll waits this long for LLDP frames (0: not) */
};

void config_defaults(struct rw_config *cfg);
void config_free(struct rw_config *cfg);
/* Does the netdev pass --netdev-include / --netdev-exclude? */
bool config_netdev_wanted(const struct rw_config *cfg, const char *name);
/*
 * Does the RDMA device pass --rdma-device-include / --rdma-device-exclude?
 * Asked before a collector opens, reads or asks netlink about anything of it.
 */
bool config_rdma_wanted(const struct rw_config *cfg, const char *dev);
/* Compile a regex for a flag; on error, message names the flag and pattern. */
int config_regex(regex_t *re, const char *flag, const char *pattern);
/*
 * A repeatable regex flag: the first pattern, or one more (the flag then
 * matches a name that ANY of its patterns matches, each anchored on its own);
 * never silently replaced.  *src holds the alternatives so far.  A pattern
 * whose parentheses do not balance is refused: it could not be told apart
 * from its neighbours.  0, or -EINVAL after one line on stderr.
 */
int config_regex_add(regex_t *re, bool *has, char **src, const char *flag, const char *pattern);

#endif
