/* SPDX-License-Identifier: MIT */
/*
 * Least privilege for `serve`: after setup (collectors started, listener
 * bound, certificates read) keep only the capabilities the enabled
 * collectors still use, and optionally become another user.
 *
 * Measured, not assumed (tests/netns/test-privdrop.sh, and by running each
 * collector as nobody): link, ethtool (SIOCETHTOOL get commands, ethtool
 * genetlink), dcb (RTM_GETDCB), rdma (RDMA netlink, sysfs), verbs, host and
 * qos_sysfs's sysfs/configfs files need none.  wire keeps CAP_NET_ADMIN and
 * CAP_BPF: where the kernel has no tcx (before 6.6: Debian 12's 6.1) its
 * program goes on clsact qdiscs through rtnetlink, which takes CAP_NET_ADMIN
 * for every netdev attached after the drop (refused with EPERM otherwise, as
 * tested), and before 6.5 every bpf() call, map reads included, needs CAP_BPF
 * while unprivileged BPF is disabled (Debian's default).  (On 6.6+ with tcx
 * neither is used after the load.)  debugfs (mlx5 cc_params) is mode 0700
 * root: uid 0 reads it without any capability, another user only with
 * CAP_DAC_READ_SEARCH, which is kept for --user when <debugfs>/mlx5 exists.
 * (CAP_SYS_ADMIN is never needed: nothing here is behind it.)
 */
#ifndef ROCEWATCH_PRIVDROP_H
#define ROCEWATCH_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

struct priv_needs {
	bool wire;	  /* the wire collector is running */
	bool debugfs;	  /* qos_sysfs reads <debugfs>/mlx5 */
	const char *user; /* --user NAME (or numeric uid), or NULL */
};

/* What the enabled collectors need, from the configuration and what started. */
void priv_needs_of(struct priv_needs *pn, const struct rw_config *cfg, const bool *running,
		   const char *user);
/*
 * Drop to pn's set (and switch user).  Must run before any thread is made:
 * capabilities belong to threads.  0, or -errno with err saying why.
 */
int priv_drop(const struct priv_needs *pn, char *err, size_t errlen);
/* "cap_bpf,cap_net_admin" or "none" (what priv_drop() keeps), for the log. */
void priv_describe(const struct priv_needs *pn, char *buf, size_t len);

#endif
