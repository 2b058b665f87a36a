/* SPDX-License-Identifier: MIT */
/*
 * Private header of the netdev-side collectors: which file exports what.
 *
 *   netdev_nl.c  libmnl helpers: a request/reply socket with extended acks,
 *                policy-driven attribute parsing
 *   ethtool.c    ethtool_collector: SIOCETHTOOL stats/settings, ethtool
 *                genetlink pause; the stat-name map and pause parser
 *   dcb.c        dcb_collector: rtnetlink RTM_GETDCB; the IEEE reply parser
 *   qos_sysfs.c  qos_sysfs_collector: MLNX_OFED sysfs, upstream debugfs
 *                cc_params, rdma_cm configfs; the file-format parsers
 *
 * The parsers take bytes (a netlink message as the kernel emits it, the text
 * of a sysfs file) and never touch a socket or a file, so the unit tests feed
 * them exactly what a kernel would.
 */
#ifndef ROCEWATCH_NETDEV_H
#define ROCEWATCH_NETDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>

#include "collector.h"

/* ---- netdev_nl.c ---- */

/*
 * One row per attribute type we read.  type 0 marks a type we do not read:
 * it is skipped, so a newer kernel that adds attributes does not break us.
 * MNL_TYPE_BINARY rows carry the exact payload size of the struct they hold.
 */
struct nl_policy {
	uint8_t type; /* enum mnl_attr_data_type, 0 = not read */
	uint16_t len; /* MNL_TYPE_BINARY: exact payload length */
	const char *name;
};

/*
 * Parse the attributes in [start, start + len) into tb[0..max] (cleared
 * first).  Returns 0, or -EBADMSG with a message naming the attribute when
 * one has the wrong size or when bytes are left that do not form a whole
 * attribute (a truncated message).
 */
int nl_parse_attrs(const void *start, size_t len, const struct nl_policy *pol, unsigned int max,
		   const struct nlattr **tb, char *err, size_t errlen);
int nl_parse_nested(const struct nlattr *nest, const struct nl_policy *pol, unsigned int max,
		    const struct nlattr **tb, char *err, size_t errlen);
/* For nests that repeat a type (an APP table): fn sees each validated, known attribute. */
typedef int (*nl_attr_fn)(const struct nlattr *a, unsigned int type, void *data, char *err,
			  size_t errlen);
int nl_walk_nested(const struct nlattr *nest, const struct nl_policy *pol, unsigned int max,
		   nl_attr_fn fn, void *data, char *err, size_t errlen);
/* Check that buf holds one whole netlink message with hdrlen bytes of family header. */
int nl_check_msg(const void *buf, size_t len, size_t hdrlen, char *err, size_t errlen);

struct nl_sock {
	struct mnl_socket *nl;
	unsigned int portid;
	unsigned int seq;
	char *buf; /* receive buffer, allocated once */
	size_t buflen;
};

/* Open a request socket with extended acks and a receive timeout. */
int nl_open(struct nl_sock *s, int bus);
void nl_close(struct nl_sock *s);
/*
 * Send req and wait for its reply.  *reply points into s->buf until the next
 * call.  A kernel error comes back as -errno with the extended-ack text, if
 * any, in err.
 */
int nl_request(struct nl_sock *s, struct nlmsghdr *req, const struct nlmsghdr **reply, char *err,
	       size_t errlen);

/* ---- ethtool.c ---- */

/* Where a driver stat goes: a table field (and priority, -1 for scalars). */
struct ethtool_stat_target {
	int16_t field; /* enum field_id, -1 = none */
	int8_t prio;
};
/* Map an `ethtool -S` name onto a field; false when it has no row. */
bool ethtool_map_stat(const char *name, struct ethtool_stat_target *t);

struct ethtool_pause {
	bool have_autoneg, have_rx, have_tx, have_rx_frames, have_tx_frames;
	bool autoneg, rx, tx;
	uint64_t rx_frames, tx_frames;
};
/* Parse an ETHTOOL_MSG_PAUSE_GET_REPLY of genetlink family `family`. */
int ethtool_parse_pause(const void *buf, size_t len, uint16_t family, struct ethtool_pause *p,
			char *err, size_t errlen);
/* The pause fields from a parsed reply; what the reply lacks is absent "unsupported". */
void ethtool_fill_pause(struct object *o, const struct ethtool_pause *p);
/* Parse a CTRL_CMD_NEWFAMILY reply: the family id. */
int genl_parse_family(const void *buf, size_t len, uint16_t *id, char *err, size_t errlen);

/*
 * The SIOCETHTOOL call, replaceable so a unit test can play a driver whose
 * string set changes between polls.  cmd points at the ethtool command
 * struct; returns 0 or -errno.
 */
typedef int (*ethtool_ioctl_fn)(void *arg, const char *ifname, void *cmd);
void ethtool_set_ioctl(struct collector_ctx *cc, ethtool_ioctl_fn fn, void *arg);

/*
 * A buffer followed by an inaccessible page: the kernel writes as many stats
 * (or strings) as the driver has *now*, whatever count we asked for, so a set
 * that grew between two calls must hit the guard (EFAULT) rather than the heap.
 */
void *guarded_alloc(size_t size, size_t *maplen);
void guarded_free(void *p, size_t maplen);

/* ---- dcb.c ---- */

struct dcb_ieee {
	bool have_ets, have_pfc, have_buffer, have_dcbx;
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	struct dcbnl_buffer buffer;
	uint8_t dcbx;
	unsigned int n_dscp; /* APP entries with the DSCP selector */
	int8_t dscp[64];     /* DSCP -> priority, -1 unmapped */
};
/* Parse an RTM_GETDCB/RTM_SETDCB message carrying DCB_CMD_IEEE_GET (or _SET). */
int dcb_parse_ieee(const void *buf, size_t len, struct dcb_ieee *d, char *err, size_t errlen);
/* Parse a DCB_CMD_GDCBX reply. */
int dcb_parse_dcbx(const void *buf, size_t len, uint8_t *dcbx, char *err, size_t errlen);
/* "host,ieee" from DCB_CAP_DCBX_* flags. */
void dcb_dcbx_str(uint8_t dcbx, char *buf, size_t len);
/* Fill a netdev from a parsed reply: counters always, configuration when config. */
void dcb_fill(struct object *o, const struct dcb_ieee *d, bool config);
/* Drain a notification socket; the number of DCB messages seen (> 0: re-read). */
int dcb_drain_events(int fd, void *buf, size_t len);

/* ---- qos_sysfs.c ---- */

/* qos/trust: "dscp", "pcp", or "Priority trust state: dscp". */
int qos_parse_trust(const char *text, char *out, size_t len);
/* qos/dscp2prio: "<dscp> <prio>" lines, or "prio:P dscp:a,b,..," lines, after a header. */
int qos_parse_dscp2prio(const char *text, int8_t map[64]);
/* tc/N/traffic_class: "Global tclass=106" (MLNX_OFED) or a bare number. */
int qos_parse_tclass(const char *text, int64_t *tclass);

#endif
