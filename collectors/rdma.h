/* SPDX-License-Identifier: MIT */
/*
 * rdma collector internals its tests reach: RDMA netlink (NLDEV) parsing,
 * kept apart from the socket so a test can feed the bytes the kernel sends,
 * and the parsers of the kernel's /sys/class/infiniband texts.
 *
 * rdma.c exports rdma_collector (collectors.c) and the functions below.
 */
#ifndef ROCEWATCH_RDMA_H
#define ROCEWATCH_RDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

#include "model.h"

/* One RDMA_NLDEV_CMD_GET reply: a device. */
struct rdma_nl_dev {
	uint32_t index;
	char name[RW_NAME_MAX];
	uint32_t last_port; /* PORT_INDEX in a device message is rdma_end_port() */
	uint64_t node_guid; /* host byte order, as nldev sends it */
	char fw[RW_STR_MAX];
	bool has_guid, has_fw;
};

/* One RDMA_NLDEV_CMD_PORT_GET reply: a port. */
struct rdma_nl_port {
	uint32_t dev_index;
	char dev_name[RW_NAME_MAX];
	uint32_t port;
	uint8_t state, phys_state;
	bool has_state, has_phys_state;
	/* Absent when the port has no netdev or it lives in another netns. */
	bool has_ndev;
	uint32_t ndev_index;
	char ndev_name[RW_NAME_MAX];
};

/* Header of one RDMA_NLDEV_CMD_STAT_GET reply; counters go to a callback. */
struct rdma_nl_stat {
	uint32_t dev_index;
	char dev_name[RW_NAME_MAX];
	uint32_t port;
	unsigned int counters;
};

typedef int (*rdma_hw_cb)(void *arg, const char *name, uint64_t value);

/*
 * Parse one message.  Unknown attributes are skipped (newer kernels add
 * them); known ones are checked for type and length.  0, or -EBADMSG with
 * *why saying what was wrong (a static string).
 */
int rdma_nl_parse_dev(const struct nlmsghdr *nlh, struct rdma_nl_dev *d, const char **why);
int rdma_nl_parse_port(const struct nlmsghdr *nlh, struct rdma_nl_port *p, const char **why);
int rdma_nl_parse_stat(const struct nlmsghdr *nlh, struct rdma_nl_stat *s, rdma_hw_cb cb, void *arg,
		       const char **why);

/*
 * Walk one receive buffer of a request/reply exchange.  msg() is called for
 * each message of the expected type and sequence number; stale replies (an
 * older seq) are skipped.  Returns 1 when the reply is complete (NLMSG_DONE,
 * an ACK, or one message without NLM_F_MULTI), 0 when more is to come,
 * -errno from the kernel (NLMSG_ERROR, or an error carried in NLMSG_DONE)
 * with the kernel's extended-ack text in ext_ack, or -EBADMSG for a
 * truncated or malformed buffer (why says what).
 */
struct rdma_nl_walk {
	uint32_t seq;
	uint32_t portid; /* 0: any */
	uint16_t type;	 /* expected nlmsg_type */
	int (*msg)(const struct nlmsghdr *nlh, void *arg);
	void *arg;
	char ext_ack[128];
	const char *why;
};
int rdma_nl_walk(struct rdma_nl_walk *w, const void *buf, size_t len);

/* Port state names as the kernel's sysfs prints them ("ACTIVE", "LinkUp"). */
const char *rdma_port_state_name(unsigned int state);
const char *rdma_phys_state_name(unsigned int state);

/* "4: ACTIVE" -> "ACTIVE".  -EINVAL when the text has no "N: " prefix. */
int rdma_parse_state(const char *text, char *out, size_t size);
/* "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)" -> Mb/s. */
int rdma_parse_rate(const char *text, int64_t *mbps);
/* "ec0d:9a03:0078:6a2e" from a host-order GUID. */
void rdma_format_guid(uint64_t guid, char *out, size_t size);

/* True for ::ffff:a.b.c.d; *v4 gets a.b.c.d in network order. */
bool rdma_gid_ipv4(const char *gid, uint32_t *v4);
bool rdma_gid_is_zero(const char *gid);
/* sysfs types/N text -> "RoCE v1", "RoCE v2" or "IB" for the link layer. */
void rdma_gid_type_name(const char *sysfs_type, const char *link_layer, char *out, size_t size);
/*
 * Index of the RoCE v2, IPv4-mapped GID bound to netdev; with addrs (the
 * netdev's IPv4 addresses, comma-separated) the entry of the first address
 * that has one wins, else the lowest index.  -ENOENT when none.
 */
int rdma_rocev2_ipv4_index(const struct gid_table *t, const char *netdev, const char *addrs);

#endif
