/* SPDX-License-Identifier: MIT */
/*
 * Private header of the rdma collector: which file exports what.
 *
 *   rdma.c        rdma_collector (collectors.c): one slow poll finds the
 *                 ports and fills their facts, each fast poll reads their
 *                 counters; the state the files below share
 *   rdma_nl.c     RDMA netlink (NLDEV): the device/port/statistic parsers,
 *                 the request helper, the enumeration and hw counters
 *   rdma_sysfs.c  /sys/class/infiniband: the text parsers, the port and
 *                 device enumeration, counter directories kept open
 *   rdma_gid.c    the GID table: reading it, the GID text helpers, the
 *                 RoCE v2 IPv4 index NCCL needs
 *
 * The parsers take bytes (a netlink message as nldev.c builds it, the text
 * of a sysfs file) and never touch a socket or a file, so the unit tests
 * and fuzz harnesses feed them exactly what a kernel would.  verbs.c uses
 * the port state names.
 */
#ifndef ROCEWATCH_RDMA_H
#define ROCEWATCH_RDMA_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/netlink.h>

#include "collector.h"
#include "model.h"
#include "nl.h"
#include "vendors.h"

/* ---- rdma.c: the state the files share ---- */

/*
 * A port seen at some slow poll, by what it is (node GUID, else PCI address,
 * else name) and port number: how often it came back after a poll that did
 * not find it.
 */
struct seen_port {
	char ident[72];
	char name[RW_NAME_MAX];
	uint32_t port;
	bool present, was_present;
	bool seen_active; /* ACTIVE at a poll since the collector started */
	uint64_t reappeared;
};

#define SEEN_PORTS_MAX 1024

struct rdma_priv {
	struct rw_nl nl; /* nl.nl NULL: sysfs only */
	struct seen_port *seen;
	size_t n_seen, cap_seen;
	const struct rw_config *cfg; /* --rdma-device-include/-exclude */
	bool live;		     /* sysfs_root is this machine's /sys */
	/* Roots leave room for a device, a port and a file in a PATH_MAX path. */
	char ib[PATH_MAX - 1024];  /* <sysfs>/class/infiniband */
	char net[PATH_MAX - 1024]; /* <sysfs>/class/net */
};

/* One counter file kept open between polls. */
struct cfile {
	int fd;
	int slot; /* its index in the counter set at the last read, -1 before */
	/* the set's names_gen when slot was last found holding this name: it still does */
	uint32_t slot_gen;
	bool bad;  /* unreadable or not a number ("N/A (no PMA)"): skipped until rescanned */
	bool said; /* its failure was logged: its return is too */
	char name[RW_CNAME_MAX];
};

struct cdir {
	struct cfile *f;
	size_t n;
	dev_t dev; /* the directory the files were opened in */
	ino_t ino;
	/* the last read: errno of a file that failed as firmware-restricted functions do
	 * (EIO, EPERM, EACCES, EOPNOTSUPP), 0 if none did */
	int restricted_err;
	/* the directory itself could not be opened for want of a descriptor (EMFILE,
	 * ENFILE): what was open stays open, and the next scan that lists it says so */
	bool nofd;
};

/* Per port, on obj->cpriv[idx]; freed by the collector's obj_free. */
struct port_priv {
	uint32_t dev_index;	/* RDMA netlink device index */
	bool hw_nl;		/* hw counters over RDMA_NLDEV_CMD_STAT_GET */
	bool gone;		/* a counter read said ENODEV: the device went away */
	struct cdir hw;		/* hw_counters/, when not over netlink */
	struct cdir pc;		/* counters/ */
	struct cdir pe;		/* counters_ext/ (mlx4), preferred over counters/ */
	struct cdir dh;		/* the device's own hw_counters/ (mana), on port 1 only */
	struct vendor_cache vc; /* where the driver's names sit in CSET_HW */
	/* counter reads that fail as on a firmware-restricted PF: not again before retry_ns */
	int64_t retry_ns, backoff_ns;
};

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

/* A port found by one slow poll, over netlink or sysfs. */
struct found_port {
	char dev[RW_NAME_MAX];
	uint32_t port;
	uint32_t dev_index;
	bool nl;
	/* from netlink */
	struct rdma_nl_port np;
	uint64_t guid;
	bool has_guid;
	char fw[RW_STR_MAX];
	bool has_fw;
};

struct found {
	struct found_port *p;
	size_t n, cap;
	struct rdma_nl_dev *d;
	size_t nd, capd;
};

/*
 * Set a counter, trying the slot it had at the last poll first: the kernel
 * lists counters in the same order every time, so the name search of
 * cset_set() is skipped on the fast path.  0 or -ENOMEM.
 */
int rdma_cset_put(struct counter_set *cs, int *slot, const char *name, uint64_t v);

/* ---- rdma_nl.c ---- */

/* Header of one RDMA_NLDEV_CMD_STAT_GET reply; counters go to a callback. */
struct rdma_nl_stat {
	uint32_t dev_index;
	char dev_name[RW_NAME_MAX];
	uint32_t port;
	unsigned int counters;
};

typedef int (*rdma_hw_cb)(void *arg, const char *name, uint64_t value);

/*
 * Parse one message (its nlmsg_len already checked against the buffer, as
 * rw_nl_reply_walk() does).  Unknown attributes are skipped (newer kernels
 * add them); known ones are checked for type and length.  0, or -EBADMSG
 * with err naming the attribute that was wrong or missing.
 */
int rdma_nl_parse_dev(const struct nlmsghdr *nlh, struct rdma_nl_dev *d, char *err, size_t errlen);
int rdma_nl_parse_port(const struct nlmsghdr *nlh, struct rdma_nl_port *p, char *err,
		       size_t errlen);
int rdma_nl_parse_stat(const struct nlmsghdr *nlh, struct rdma_nl_stat *s, rdma_hw_cb cb, void *arg,
		       char *err, size_t errlen);

/* Open the NETLINK_RDMA socket (live /sys only).  0 or -errno. */
int rdma_nl_open(struct rdma_priv *rp);
/* Devices (RDMA_NLDEV_CMD_GET dump), then each device's ports (PORT_GET dump). */
int rdma_nl_enumerate(struct rdma_priv *rp, struct found *f, char *err, size_t errlen);
/*
 * o's hw counters from RDMA_NLDEV_CMD_STAT_GET into CSET_HW.  -ENODEV when
 * the reply is for another device (an index reused after a hot-unplug).
 */
int rdma_nl_hw_counters(struct rdma_priv *rp, struct object *o, uint32_t dev_index, char *err,
			size_t errlen);

/* Optional counters of a port (kernel >= 5.16): off after every driver load. */
struct rdma_optional {
	unsigned int supported, cc_disabled;
	char enabled[RW_STR_MAX];	    /* names, comma separated */
	char cc_disabled_names[RW_STR_MAX]; /* cc_* supported but off */
};
typedef int (*rdma_opt_cb)(void *arg, const char *name, bool enabled);
/* Parse a RDMA_NLDEV_CMD_STAT_GET_STATUS reply: cb for each optional counter. */
int rdma_nl_parse_optional(const struct nlmsghdr *nlh, rdma_opt_cb cb, void *arg, char *err,
			   size_t errlen);
/* The rdma_opt_cb that fills a struct rdma_optional. */
int rdma_optional_add(void *arg, const char *name, bool enabled);
int rdma_nl_optional(struct rdma_priv *rp, struct object *o, uint32_t dev_index,
		     struct rdma_optional *opt, char *err, size_t errlen);
/* The optional-counter fields from opt, or absent with err (-errno). */
void rdma_fill_optional(struct object *o, const struct rdma_optional *opt, int err);

/* ---- rdma_sysfs.c ---- */

/* Port state names as the kernel's sysfs prints them ("ACTIVE", "LinkUp"). */
const char *rdma_port_state_name(unsigned int state);
const char *rdma_phys_state_name(unsigned int state);

/* "4: ACTIVE" -> "ACTIVE".  -EINVAL when the text has no "N: " prefix. */
int rdma_parse_state(const char *text, char *out, size_t size);
/* "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)" -> Mb/s. */
int rdma_parse_rate(const char *text, int64_t *mbps);
/* "ec0d:9a03:0078:6a2e" from a host-order GUID. */
void rdma_format_guid(uint64_t guid, char *out, size_t size);

/* Devices and their ports under <sysfs>/class/infiniband. */
int rdma_sysfs_enumerate(struct rdma_priv *rp, struct found *f);
/* Read <ib>/<dev>/<rel> into buf (trailing whitespace stripped); -errno. */
int rdma_ib_read(struct rdma_priv *rp, const char *dev, const char *rel, char *buf, size_t size);
/*
 * The kernel driver of the RDMA device: the basename of <ib>/<dev>/device/driver,
 * "rdma_rxe" for soft-RoCE (no parent device, a parent attribute naming its
 * netdev).  -ENOENT when neither tells.
 */
int rdma_sysfs_driver(struct rdma_priv *rp, const char *dev, char *out, size_t size);
/* The port's netdev name from sysfs; -ENOENT when none can be told. */
int rdma_sysfs_netdev(struct rdma_priv *rp, const char *dev, uint32_t port, char *name,
		      size_t size);
/* Only decimal digits (sysfs directory names for ports and GID indices). */
bool rdma_is_number(const char *s);
/*
 * List a counter directory and keep its files open (kept as they are when
 * nothing changed); re-read the kept files, a failing one dropping only its
 * own counter (-ENODEV: the device went away); close them.
 */
int rdma_cdir_scan(struct cdir *d, const char *path, const char *what);
int rdma_cdir_read(struct cdir *d, struct counter_set *cs, const char *dev, uint32_t port,
		   const char *what);
void rdma_cdir_close(struct cdir *d);

/* ---- rdma_gid.c ---- */

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
/* The port's GID table from gids/, gid_attrs/types, gid_attrs/ndevs, by index. */
int rdma_read_gids(struct rdma_priv *rp, const char *dev, uint32_t port, const char *link_layer,
		   struct gid_table *t);

#endif
