/* SPDX-License-Identifier: MIT */
/*
 * Private header of the netdev-side collectors: which file exports what.
 *
 *   ethtool.c        ethtool_collector: SIOCETHTOOL plumbing, the slow-loop
 *                    settings (driver, speed, tunable)
 *   ethtool_stats.c  driver stats: the stat-name map, the string set, GSTATS,
 *                    guarded buffers
 *   ethtool_genl.c   pause over ethtool genetlink (GPAUSEPARAM without it);
 *                    the genl family and pause parsers
 *   dcb.c        dcb_collector: rtnetlink RTM_GETDCB; the IEEE reply parser
 *   qos_sysfs.c  qos_sysfs_collector: MLNX_OFED sysfs, upstream debugfs
 *                cc_params, rdma_cm configfs; the file-format parsers
 *
 * The netlink plumbing they share (sockets, policy tables, message walks) is
 * the core's (src/core/nl.h).  The parsers take bytes (a netlink message as
 * the kernel emits it, the text of a sysfs file) and never touch a socket or
 * a file, so the unit tests and fuzz harnesses feed them exactly what a
 * kernel would.
 */
#ifndef ROCEWATCH_NETDEV_H
#define ROCEWATCH_NETDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>

#include "collector.h"
#include "nl.h"

/* ---- link.c ---- */

/* What the link collector takes from one RTM_NEWLINK (rtnl_fill_ifinfo()'s layout). */
struct link_msg {
	int ifindex;
	unsigned int flags; /* ifi_flags: IFF_LOOPBACK, ... */
	char name[16];	    /* IFNAMSIZ */
	bool have_mtu;
	uint32_t mtu;
	bool have_operstate;
	uint8_t operstate; /* IF_OPER_* */
	bool carrier;	   /* IFLA_CARRIER, false when absent */
	char kind[32];	   /* IFLA_INFO_KIND ("vlan", "bond", "veth"), "" for a plain device */
	int master;	   /* IFLA_MASTER, 0: none */
	int link;	   /* IFLA_LINK (a vlan's lower device, a veth's peer), 0: none */
	/* the kernel's carrier counts: IFLA_CARRIER_CHANGES (3.15), _UP/_DOWN_COUNT (4.16) */
	bool have_changes, have_updown;
	uint32_t changes, up, down;
};
/*
 * Parse an RTM_NEWLINK: 0, or -EBADMSG with err naming what was wrong (a
 * message shorter than its ifinfomsg, an attribute of the wrong size).
 */
int link_parse(const struct nlmsghdr *nlh, struct link_msg *l, char *err, size_t errlen);
/* The carrier count fields of o; what the message lacked is absent "unsupported". */
void link_fill_carrier(struct object *o, const struct link_msg *l);
/* IF_OPER_* as sysfs's operstate file and iproute2 spell it ("up", "lowerlayerdown"). */
void link_operstate_name(uint8_t operstate, char *buf, size_t len);

/* ---- ethtool.c ---- */

/*
 * The SIOCETHTOOL call, replaceable so a unit test can play a driver whose
 * string set changes between polls.  cmd points at the ethtool command
 * struct; returns 0 or -errno.
 */
typedef int (*ethtool_ioctl_fn)(void *arg, const char *ifname, void *cmd);
void ethtool_set_ioctl(struct collector_ctx *cc, ethtool_ioctl_fn fn, void *arg);

struct ethtool_stat_target;

/* Two anchors of a corrected-bits counter, for the pre-FEC BER (ethtool_fec.c). */
struct ber_state {
	int n;	       /* anchors held */
	int src;       /* the field they are of */
	int64_t speed; /* Mb/s they were taken at */
	uint64_t bits[2];
	int64_t t[2];
};

/* The collector's state, shared by the ethtool*.c files. */
struct ethtool_priv {
	int fd;		   /* AF_INET datagram socket for SIOCETHTOOL */
	struct rw_nl genl; /* ethtool genetlink; genl.nl NULL when unavailable */
	uint16_t family;   /* resolved "ethtool" family id, 0 = use the ioctl */
	bool family_tried;
	ethtool_ioctl_fn ioctl;
	void *ioctl_arg;
	char req[512]; /* netlink request buffer */
};

/* Per device, hung on obj->cpriv. */
struct ethtool_dev {
	bool probed;	  /* string set read at least once */
	int stats_err;	  /* > 0: why the device has no stats (errno) */
	uint32_t n_stats; /* size of the cached string set */
	uint32_t cap;	  /* values the stats buffer holds */
	struct ethtool_stats *stats;
	size_t stats_maplen;
	struct ethtool_stat_target *map; /* n_stats entries */
	int fec_err; /* > 0: FEC_GET unsupported here (errno), not asked again */
	struct ber_state ber;
};

int ethtool_call(struct ethtool_priv *p, const char *ifname, void *cmd);
/*
 * A get whose struct starts with its command word, as ethtool's fixed-size ones do:
 * zeroed, cmd set to id, asked, and a failure noted under what ("GDRVINFO").
 */
int ethtool_get(struct ethtool_priv *p, const char *ifname, void *cmd, size_t len, uint32_t id,
		const char *what);
/* "Not here" causes are quiet; anything else is said once per device and cause. */
void ethtool_note_err(const char *dev, const char *what, int err, const char *detail);

/* ---- ethtool_stats.c ---- */

/* Where a driver stat goes: a table field (and priority, -1 for scalars). */
struct ethtool_stat_target {
	int16_t field; /* enum field_id, -1 = none */
	int8_t prio;
	bool add; /* added to what other names of the field gave (ice: XON + XOFF frames) */
};
/* Map an `ethtool -S` name onto a field; false when it has no row. */
bool ethtool_map_stat(const char *name, struct ethtool_stat_target *t);

/* Re-read the string set and rebuild the name map (slow loop, or when GSTATS says it moved). */
int ethtool_read_strings(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d);
/* The fast loop: one GSTATS, and the fields and counter set from it. */
void ethtool_collect_stats(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d);
/* Every field the stat map fills, and the counter set, absent with err. */
void ethtool_stats_absent(struct object *o, int err);

/*
 * A buffer followed by an inaccessible page: the kernel writes as many stats
 * (or strings) as the driver has *now*, whatever count we asked for, so a set
 * that grew between two calls must hit the guard (EFAULT) rather than the heap.
 */
void *guarded_alloc(size_t size, size_t *maplen);
void guarded_free(void *p, size_t maplen);

/* ---- ethtool_genl.c ---- */

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
 * Check a reply of genetlink family `family` is command `cmd` (named `what` in
 * the error) and parse its top-level attributes through `set` into tb.
 */
int ethtool_parse_reply(const void *buf, size_t len, uint16_t family, uint8_t cmd, const char *what,
			const struct rw_nl_set *set, const struct nlattr **tb, char *err,
			size_t errlen);
/* A GET request of `cmd` for o, its `header` nest asking for statistics, in p->req. */
struct nlmsghdr *ethtool_stats_request(struct ethtool_priv *p, uint8_t cmd, uint16_t header,
				       const struct object *o);
/* Resolve the "ethtool" genetlink family once (p->family 0 when there is none). */
void ethtool_resolve_family(struct ethtool_priv *p);
/* PAUSE_GET (or GPAUSEPARAM) for one device: the pause fields, or all absent with why. */
void ethtool_collect_pause(struct ethtool_priv *p, struct object *o);

/* ---- ethtool_fec.c ---- */

struct ethtool_fec_stat {
	uint8_t n;     /* values: 0 = not kept, else the total then one per lane */
	uint64_t v[9]; /* total + ETHTOOL_MAX_LANES */
};

struct ethtool_fec {
	bool have_active;
	uint32_t active; /* a link mode bit: ETHTOOL_LINK_MODE_FEC_*_BIT */
	struct ethtool_fec_stat corrected, uncorrectable, corrected_bits;
};

/* "rs", "baser", "llrs", "off" for a link mode bit; NULL for any other. */
const char *ethtool_fec_mode_name(uint32_t link_mode_bit);
/* Parse an ETHTOOL_MSG_FEC_GET_REPLY of genetlink family `family`. */
int ethtool_parse_fec(const void *buf, size_t len, uint16_t family, struct ethtool_fec *f,
		      char *err, size_t errlen);
/* The FEC fields from a parsed reply, or all absent with err (-errno) when it failed. */
void ethtool_fill_fec(struct object *o, const struct ethtool_fec *f, int err);
/* FEC_GET with statistics for one device (fast loop). */
void ethtool_collect_fec(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d);
/* The pre-FEC BER field from o's corrected-bits counter and speed at now_ns (monotonic). */
void ethtool_ber_update(struct ber_state *b, struct object *o, int64_t now_ns);

/* ---- dcb.c ---- */

struct dcb_ieee {
	bool have_ets, have_maxrate, have_pfc, have_buffer, have_dcbx;
	/*
	 * -EBADMSG: the attribute was in the reply but broke its policy row;
	 * dcb_fill() blanks the fields it carries and no others.
	 */
	int ets_err, maxrate_err, pfc_err, buffer_err, app_err, dcbx_err;
	/* dcb_parse_ieee() failed for some attributes only: the rest of d holds */
	bool partial;
	struct ieee_ets ets;
	struct ieee_maxrate maxrate; /* kbit/s per TC, 0 = no limit */
	struct ieee_pfc pfc;
	struct dcbnl_buffer buffer;
	uint8_t dcbx;
	unsigned int n_dscp; /* APP entries with the DSCP selector */
	int8_t dscp[64];     /* DSCP -> priority, -1 unmapped */
};
/*
 * Parse an RTM_GETDCB/RTM_SETDCB message carrying DCB_CMD_IEEE_GET (or _SET).
 * 0, or -EBADMSG with err naming the (first) bad attribute.  When the
 * message itself was sound and only some attributes were not, d->partial
 * is set and d holds the good ones (the bad ones in its *_err members).
 */
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
