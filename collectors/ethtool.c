// SPDX-License-Identifier: MIT
/*
 * ethtool: driver statistics (`ethtool -S`), the per-priority pause, byte and
 * discard counters parsed out of them, global 802.3x pause (setting and
 * frame counters), the pfc-prevention-tout tunable, link speed, driver and
 * firmware.
 *
 * Slow loop, per device: GDRVINFO, GLINKSETTINGS (GSET on old kernels),
 * GTUNABLE, PAUSE_GET over ethtool genetlink (GPAUSEPARAM when the family is
 * missing), GSSET_INFO + GSTRINGS.
 * Fast loop, per device: one GSTATS into a buffer allocated once; the names
 * are read again only when the count it returns has changed.  The string set
 * is turned into an index map when it is read, so the fast loop does no
 * string work at all.
 *
 * Driver stats arrive over the SIOCETHTOOL ioctl even on kernels with ethtool
 * netlink: ETHTOOL_MSG_STATS_GET carries only the standard groups, not the
 * driver-private names (Documentation/networking/ethtool-netlink.rst).
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/sockios.h>

#include "netdev.h"
#include "util.h"

/* Spare room in the stats buffer: a set that grows a little is read without a remap. */
#define STATS_HEADROOM 64
/* No driver has anywhere near this many stats; a larger count is a bug, not a NIC. */
#define STATS_MAX (1u << 16)

struct ethtool_priv {
	int fd;		     /* AF_INET datagram socket for SIOCETHTOOL */
	struct nl_sock genl; /* ethtool genetlink; genl.nl NULL when unavailable */
	uint16_t family;     /* resolved "ethtool" family id, 0 = use the ioctl */
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
};

/* ---- the stat-name map ---- */

/* mlx5 names: Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst */
static const struct {
	const char *suffix; /* after "rx_prioN_" / "tx_prioN_" */
	int16_t rx, tx;
} prio_stats[] = {
	{ "pause", F_NETDEV_PFC_RX_PAUSE, F_NETDEV_PFC_TX_PAUSE },
	/* microseconds; the field table scales to seconds */
	{ "pause_duration", F_NETDEV_PFC_RX_PAUSE_DURATION, F_NETDEV_PFC_TX_PAUSE_DURATION },
	{ "pause_transition", F_NETDEV_PFC_RX_PAUSE_TRANSITION, -1 },
	{ "bytes", F_NETDEV_PRIO_RX_BYTES, F_NETDEV_PRIO_TX_BYTES },
	{ "packets", F_NETDEV_PRIO_RX_PACKETS, F_NETDEV_PRIO_TX_PACKETS },
	{ "discards", F_NETDEV_PRIO_RX_DISCARDS, -1 },
	{ "buf_discard", F_NETDEV_PRIO_RX_BUF_DISCARDS, -1 },
	{ "cong_discard", F_NETDEV_PRIO_RX_CONG_DISCARDS, -1 },
	{ "marked", F_NETDEV_PRIO_RX_MARKED, -1 },
};

static const struct {
	const char *name;
	int16_t field;
} port_stats[] = {
	{ "tx_pause_storm_warning_events", F_NETDEV_PAUSE_STORM_WARNING },
	{ "tx_pause_storm_error_events", F_NETDEV_PAUSE_STORM_ERROR },
	{ "rx_discards_phy", F_NETDEV_RX_DISCARDS_PHY },
	{ "tx_discards_phy", F_NETDEV_TX_DISCARDS_PHY },
	{ "rx_out_of_buffer", F_NETDEV_RX_OUT_OF_BUFFER },
	{ "link_down_events_phy", F_NETDEV_LINK_DOWN_EVENTS },
	{ "rx_crc_errors_phy", F_NETDEV_RX_CRC_ERRORS },
};

/* Every field the stats can fill: absent ("unsupported") unless the driver names it. */
static const enum field_id stat_fields[] = {
	F_NETDEV_PFC_RX_PAUSE,
	F_NETDEV_PFC_TX_PAUSE,
	F_NETDEV_PFC_RX_PAUSE_DURATION,
	F_NETDEV_PFC_TX_PAUSE_DURATION,
	F_NETDEV_PFC_RX_PAUSE_TRANSITION,
	F_NETDEV_PRIO_RX_BYTES,
	F_NETDEV_PRIO_TX_BYTES,
	F_NETDEV_PRIO_RX_PACKETS,
	F_NETDEV_PRIO_TX_PACKETS,
	F_NETDEV_PRIO_RX_DISCARDS,
	F_NETDEV_PRIO_RX_BUF_DISCARDS,
	F_NETDEV_PRIO_RX_CONG_DISCARDS,
	F_NETDEV_PRIO_RX_MARKED,
	F_NETDEV_PAUSE_STORM_WARNING,
	F_NETDEV_PAUSE_STORM_ERROR,
	F_NETDEV_RX_DISCARDS_PHY,
	F_NETDEV_TX_DISCARDS_PHY,
	F_NETDEV_RX_OUT_OF_BUFFER,
	F_NETDEV_LINK_DOWN_EVENTS,
	F_NETDEV_RX_CRC_ERRORS,
};

/* The slow-loop fields, marked together when the device is gone. */
static const enum field_id config_fields[] = {
	F_NETDEV_DRIVER,
	F_NETDEV_FIRMWARE,
	F_NETDEV_BUS,
	F_NETDEV_SPEED,
	F_NETDEV_PAUSE_AUTONEG,
	F_NETDEV_PAUSE_RX,
	F_NETDEV_PAUSE_TX,
	F_NETDEV_PAUSE_RX_FRAMES,
	F_NETDEV_PAUSE_TX_FRAMES,
	F_NETDEV_PFC_PREVENTION_TOUT,
};

bool ethtool_map_stat(const char *name, struct ethtool_stat_target *t)
{
	bool rx;

	t->field = -1;
	t->prio = -1;
	for (size_t i = 0; i < ARRAY_SIZE(port_stats); i++) {
		if (!strcmp(name, port_stats[i].name)) {
			t->field = port_stats[i].field;
			return true;
		}
	}
	rx = !strncmp(name, "rx_prio", 7);
	if (!rx && strncmp(name, "tx_prio", 7))
		return false;
	if (name[7] < '0' || name[7] > '7' || name[8] != '_')
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(prio_stats); i++) {
		int16_t f = rx ? prio_stats[i].rx : prio_stats[i].tx;

		if (f < 0 || strcmp(name + 9, prio_stats[i].suffix))
			continue;
		t->field = f;
		t->prio = (int8_t)(name[7] - '0');
		return true;
	}
	return false;
}

/* ---- guarded buffers ---- */

void *guarded_alloc(size_t size, size_t *maplen)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (size + page - 1) / page * page;
	char *p;

	if (!body)
		body = page;
	p = mmap(NULL, body + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + body, page, PROT_NONE)) {
		munmap(p, body + page);
		return NULL;
	}
	*maplen = body + page;
	return p;
}

void guarded_free(void *p, size_t maplen)
{
	if (p)
		munmap(p, maplen);
}

/* ---- ioctl ---- */

static int real_ioctl(void *arg, const char *ifname, void *cmd)
{
	struct ethtool_priv *p = arg;
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -ENAMETOOLONG;
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = cmd;
	return ioctl(p->fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static int eth_call(struct ethtool_priv *p, const char *ifname, void *cmd)
{
	return p->ioctl(p->ioctl_arg, ifname, cmd);
}

void ethtool_set_ioctl(struct collector_ctx *cc, ethtool_ioctl_fn fn, void *arg)
{
	struct ethtool_priv *p = cc->priv;

	p->ioctl = fn ? fn : real_ioctl;
	p->ioctl_arg = fn ? arg : p;
}

/* "Not here" causes are quiet; anything else is said once per device and cause. */
static void note_err(const char *dev, const char *what, int err, const char *detail)
{
	char key[128];

	if (err < 0)
		err = -err;
	if (absent_from_errno(err) == ABS_UNSUPPORTED)
		return;
	snprintf(key, sizeof(key), "ethtool:%s:%s:%d", dev, what, err);
	rw_log_once(LOG_LVL_WARN, key, "ethtool: %s: %s: %s%s%s", dev, what, strerror(err),
		    detail && *detail ? ": " : "", detail ? detail : "");
}

static void absent_list(struct object *o, const enum field_id *ids, size_t n, int err)
{
	for (size_t i = 0; i < n; i++)
		field_absent_errno(o, ids[i], err);
}

/* ---- the string set ---- */

static int ensure_stats_buffer(struct ethtool_dev *d, uint32_t n)
{
	size_t maplen, body;
	void *buf;

	if (d->stats && d->cap >= n)
		return 0;
	buf =
	    guarded_alloc(sizeof(struct ethtool_stats) + (size_t)(n + STATS_HEADROOM) * 8, &maplen);
	if (!buf)
		return -ENOMEM;
	guarded_free(d->stats, d->stats_maplen);
	d->stats = buf;
	d->stats_maplen = maplen;
	/* Use all of the mapping: the guard page starts right after the last value. */
	body = maplen - (size_t)sysconf(_SC_PAGESIZE);
	d->cap = (uint32_t)((body - sizeof(struct ethtool_stats)) / 8);
	return 0;
}

static int sset_count(struct ethtool_priv *p, const char *ifname, uint32_t *n)
{
	/* struct ethtool_sset_info is followed by one u32 per bit left set in sset_mask */
	uint64_t raw[4] = { 0 };
	struct ethtool_sset_info *si = (struct ethtool_sset_info *)raw;
	uint32_t v;
	int r;

	si->cmd = ETHTOOL_GSSET_INFO;
	si->sset_mask = 1ULL << ETH_SS_STATS;
	r = eth_call(p, ifname, si);
	if (r)
		return r;
	if (!(si->sset_mask & (1ULL << ETH_SS_STATS))) {
		*n = 0;
		return 0;
	}
	memcpy(&v, (char *)raw + sizeof(*si), sizeof(v));
	*n = v;
	return 0;
}

/*
 * Read the stats string set and rebuild the name map and the counter-set
 * names.  The count can change under us (mlx5 adds per-channel stats when
 * channels are added, per-priority pause stats when PFC is enabled), so the
 * strings are read into a guarded buffer and the count is checked again.
 */
static int read_strings(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d)
{
	struct counter_set *cs = &o->cs[CSET_ETHTOOL];
	struct ethtool_gstrings *gs = NULL;
	size_t maplen = 0;
	uint32_t n = 0;
	int r = 0, tries;

	d->probed = true;
	for (tries = 0; tries < 3; tries++) {
		r = sset_count(p, o->name, &n);
		if (r)
			goto fail;
		if (!n) {
			r = -EOPNOTSUPP;
			goto fail;
		}
		if (n > STATS_MAX) {
			r = -E2BIG;
			goto fail;
		}
		gs = guarded_alloc(sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN, &maplen);
		if (!gs) {
			r = -ENOMEM;
			goto fail;
		}
		gs->cmd = ETHTOOL_GSTRINGS;
		gs->string_set = ETH_SS_STATS;
		gs->len = n; /* as for GSTATS: recent kernels answer a stale count with len 0 */
		r = eth_call(p, o->name, gs);
		if (!r && gs->len == n)
			break;
		guarded_free(gs, maplen);
		gs = NULL;
		/* EFAULT: the set grew past the buffer between the two calls; try again */
		if (r && r != -EFAULT)
			goto fail;
	}
	if (!gs) {
		r = -EAGAIN;
		goto fail;
	}
	r = ensure_stats_buffer(d, n);
	if (!r) {
		struct ethtool_stat_target *map = realloc(d->map, n * sizeof(*map));

		r = map ? cset_reserve(cs, n) : -ENOMEM;
		if (map)
			d->map = map;
	}
	if (r)
		goto free_strings;
	for (uint32_t i = 0; i < n; i++) {
		char name[ETH_GSTRING_LEN + 1];

		/* ETH_GSTRING_LEN bytes, NUL-padded, not terminated when all 32 are used */
		memcpy(name, gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = '\0';
		ethtool_map_stat(name, &d->map[i]);
		strlcpy0(cs->names[i], name, RW_CNAME_MAX);
		cs->present[i] = 0;
	}
	cs->n = n;
	d->n_stats = n;
	d->stats_err = 0;
	guarded_free(gs, maplen);
	return 0;

free_strings:
	guarded_free(gs, maplen);
fail:
	d->n_stats = 0;
	d->stats_err = r < 0 ? -r : r;
	cset_clear(cs);
	return r;
}

static int read_stats(struct ethtool_priv *p, const char *ifname, struct ethtool_dev *d)
{
	int r;

	d->stats->cmd = ETHTOOL_GSTATS;
	/*
	 * Ask for the count we have names for.  Recent kernels (seen on 6.18)
	 * answer a count that no longer matches with n_stats 0 and no values;
	 * older ones ignore it and write the current count, which is what the
	 * guard page after the buffer is for.  Either way a mismatch means the
	 * set changed and the names must be read again.
	 */
	d->stats->n_stats = d->n_stats;
	r = eth_call(p, ifname, d->stats);
	if (r == -EFAULT)
		return -ESTALE; /* the set outgrew the buffer: the guard page stopped the kernel */
	if (r)
		return r;
	return d->stats->n_stats == d->n_stats ? 0 : -ESTALE;
}

static void fill_stats(struct object *o, const struct ethtool_dev *d)
{
	struct counter_set *cs = &o->cs[CSET_ETHTOOL];
	const __u64 *v = d->stats->data;

	absent_list(o, stat_fields, ARRAY_SIZE(stat_fields), -EOPNOTSUPP);
	for (uint32_t i = 0; i < d->n_stats; i++) {
		const struct ethtool_stat_target *t = &d->map[i];

		cs->vals[i] = v[i];
		cs->present[i] = 1;
		if (t->field < 0)
			continue;
		if (t->prio < 0)
			field_set_int(o, (enum field_id)t->field, (int64_t)v[i]);
		else
			field_set_prio(o, (enum field_id)t->field, t->prio, v[i]);
	}
}

static void stats_absent(struct object *o, int err)
{
	absent_list(o, stat_fields, ARRAY_SIZE(stat_fields), err);
	cset_clear(&o->cs[CSET_ETHTOOL]);
}

static void collect_fast(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d)
{
	int r;

	if (!d->probed)
		read_strings(p, o, d);
	if (d->stats_err) {
		stats_absent(o, d->stats_err);
		return;
	}
	r = read_stats(p, o->name, d);
	if (r == -ESTALE) {
		/* Rare: the driver changed its set.  Re-read names, then the values once more. */
		r = read_strings(p, o, d);
		if (!r)
			r = read_stats(p, o->name, d);
	}
	if (r) {
		note_err(o->name, "GSTATS", r, NULL);
		stats_absent(o, r);
		return;
	}
	fill_stats(o, d);
}

/* ---- slow loop ---- */

static void set_str_or_absent(struct object *o, enum field_id id, const char *s, size_t max)
{
	char buf[64];
	/* the kernel's fixed-size fields are not terminated when full */
	size_t n = strnlen(s, max);

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[0])
		field_set_str(o, id, buf);
	else
		field_absent(o, id, ABS_UNSUPPORTED, EOPNOTSUPP); /* the driver reports none */
}

static int collect_drvinfo(struct ethtool_priv *p, struct object *o)
{
	struct ethtool_drvinfo di;
	int r;

	memset(&di, 0, sizeof(di));
	di.cmd = ETHTOOL_GDRVINFO;
	r = eth_call(p, o->name, &di);
	if (r) {
		field_absent_errno(o, F_NETDEV_DRIVER, r);
		field_absent_errno(o, F_NETDEV_FIRMWARE, r);
		field_absent_errno(o, F_NETDEV_BUS, r);
		note_err(o->name, "GDRVINFO", r, NULL);
		return r;
	}
	set_str_or_absent(o, F_NETDEV_DRIVER, di.driver, sizeof(di.driver));
	set_str_or_absent(o, F_NETDEV_FIRMWARE, di.fw_version, sizeof(di.fw_version));
	set_str_or_absent(o, F_NETDEV_BUS, di.bus_info, sizeof(di.bus_info));
	return 0;
}

static void collect_speed(struct ethtool_priv *p, struct object *o)
{
	/* header + 3 masks (supported, advertising, lp_advertising) of up to 127 words */
	size_t len = sizeof(struct ethtool_link_settings) + 3 * 127 * sizeof(uint32_t);
	struct ethtool_link_settings *ls = calloc(1, len);
	uint32_t speed;
	int r;

	if (!ls) {
		field_absent_errno(o, F_NETDEV_SPEED, -ENOMEM);
		return;
	}
	/* Handshake: nwords 0 asks the kernel how many mask words it uses (sent back negated). */
	ls->cmd = ETHTOOL_GLINKSETTINGS;
	r = eth_call(p, o->name, ls);
	if (!r && ls->link_mode_masks_nwords < 0) {
		int8_t nwords = (int8_t)-ls->link_mode_masks_nwords;

		memset(ls, 0, len);
		ls->cmd = ETHTOOL_GLINKSETTINGS;
		ls->link_mode_masks_nwords = nwords;
		r = eth_call(p, o->name, ls);
	}
	if (!r) {
		speed = ls->speed;
	} else {
		/* Kernels before 4.6 know only the legacy command. */
		struct ethtool_cmd ec;

		memset(&ec, 0, sizeof(ec));
		ec.cmd = ETHTOOL_GSET;
		r = eth_call(p, o->name, &ec);
		speed = ethtool_cmd_speed(&ec);
	}
	free(ls);
	if (r) {
		field_absent_errno(o, F_NETDEV_SPEED, r);
		note_err(o->name, "GLINKSETTINGS", r, NULL);
	} else if (speed == (uint32_t)SPEED_UNKNOWN || speed == 0) {
		/* Link down or not negotiated: there is no speed to report, and it is not 0. */
		field_absent(o, F_NETDEV_SPEED, ABS_UNSUPPORTED, ENOLINK);
	} else {
		field_set_int(o, F_NETDEV_SPEED, speed);
	}
}

static void collect_tunable(struct ethtool_priv *p, struct object *o)
{
	union {
		struct ethtool_tunable t;
		uint8_t raw[sizeof(struct ethtool_tunable) + 8];
	} u;
	uint16_t v;
	int r;

	memset(&u, 0, sizeof(u));
	u.t.cmd = ETHTOOL_GTUNABLE;
	u.t.id = ETHTOOL_PFC_PREVENTION_TOUT;
	u.t.type_id = ETHTOOL_TUNABLE_U16;
	u.t.len = sizeof(v);
	r = eth_call(p, o->name, &u);
	if (r) {
		field_absent_errno(o, F_NETDEV_PFC_PREVENTION_TOUT, r);
		note_err(o->name, "pfc-prevention-tout", r, NULL);
		return;
	}
	/* the value follows the header; milliseconds, 0 = off, 0xffff = auto (uapi ethtool.h) */
	memcpy(&v, u.raw + sizeof(u.t), sizeof(v));
	field_set_int(o, F_NETDEV_PFC_PREVENTION_TOUT, v);
}

/* ---- pause: genetlink, ioctl fallback ---- */

static const struct nl_policy ctrl_pol[CTRL_ATTR_MAX + 1] = {
	[CTRL_ATTR_FAMILY_ID] = { MNL_TYPE_U16, 0, "CTRL_ATTR_FAMILY_ID" },
	[CTRL_ATTR_FAMILY_NAME] = { MNL_TYPE_NUL_STRING, 0, "CTRL_ATTR_FAMILY_NAME" },
};

int genl_parse_family(const void *buf, size_t len, uint16_t *id, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const struct genlmsghdr *g;
	int r;

	r = nl_check_msg(buf, len, sizeof(*g), err, errlen);
	if (r)
		return r;
	g = mnl_nlmsg_get_payload(nlh);
	if (nlh->nlmsg_type != GENL_ID_CTRL || g->cmd != CTRL_CMD_NEWFAMILY) {
		snprintf(err, errlen, "not a CTRL_CMD_NEWFAMILY reply (type %u, cmd %u)",
			 nlh->nlmsg_type, g->cmd);
		return -EBADMSG;
	}
	r = nl_parse_attrs(mnl_nlmsg_get_payload_offset(nlh, sizeof(*g)),
			   mnl_nlmsg_get_payload_len(nlh) - MNL_ALIGN(sizeof(*g)), ctrl_pol,
			   CTRL_ATTR_MAX, tb, err, errlen);
	if (r)
		return r;
	if (!tb[CTRL_ATTR_FAMILY_ID]) {
		snprintf(err, errlen, "CTRL_CMD_NEWFAMILY without CTRL_ATTR_FAMILY_ID");
		return -EBADMSG;
	}
	*id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return 0;
}

static const struct nl_policy pause_pol[ETHTOOL_A_PAUSE_MAX + 1] = {
	[ETHTOOL_A_PAUSE_HEADER] = { MNL_TYPE_NESTED, 0, "ETHTOOL_A_PAUSE_HEADER" },
	[ETHTOOL_A_PAUSE_AUTONEG] = { MNL_TYPE_U8, 0, "ETHTOOL_A_PAUSE_AUTONEG" },
	[ETHTOOL_A_PAUSE_RX] = { MNL_TYPE_U8, 0, "ETHTOOL_A_PAUSE_RX" },
	[ETHTOOL_A_PAUSE_TX] = { MNL_TYPE_U8, 0, "ETHTOOL_A_PAUSE_TX" },
	[ETHTOOL_A_PAUSE_STATS] = { MNL_TYPE_NESTED, 0, "ETHTOOL_A_PAUSE_STATS" },
};

/* _PAD is skipped: the kernel adds it only where u64s need aligning (nla_put_u64_64bit). */
static const struct nl_policy pause_stat_pol[ETHTOOL_A_PAUSE_STAT_MAX + 1] = {
	[ETHTOOL_A_PAUSE_STAT_TX_FRAMES] = { MNL_TYPE_U64, 0, "ETHTOOL_A_PAUSE_STAT_TX_FRAMES" },
	[ETHTOOL_A_PAUSE_STAT_RX_FRAMES] = { MNL_TYPE_U64, 0, "ETHTOOL_A_PAUSE_STAT_RX_FRAMES" },
};

int ethtool_parse_pause(const void *buf, size_t len, uint16_t family, struct ethtool_pause *p,
			char *err, size_t errlen)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlattr *tb[ETHTOOL_A_PAUSE_MAX + 1];
	const struct nlattr *st[ETHTOOL_A_PAUSE_STAT_MAX + 1];
	const struct genlmsghdr *g;
	int r;

	memset(p, 0, sizeof(*p));
	r = nl_check_msg(buf, len, sizeof(*g), err, errlen);
	if (r)
		return r;
	g = mnl_nlmsg_get_payload(nlh);
	if (nlh->nlmsg_type != family || g->cmd != ETHTOOL_MSG_PAUSE_GET_REPLY) {
		snprintf(err, errlen, "not an ETHTOOL_MSG_PAUSE_GET_REPLY (type %u, cmd %u)",
			 nlh->nlmsg_type, g->cmd);
		return -EBADMSG;
	}
	r = nl_parse_attrs(mnl_nlmsg_get_payload_offset(nlh, sizeof(*g)),
			   mnl_nlmsg_get_payload_len(nlh) - MNL_ALIGN(sizeof(*g)), pause_pol,
			   ETHTOOL_A_PAUSE_MAX, tb, err, errlen);
	if (r)
		return r;
	if (tb[ETHTOOL_A_PAUSE_AUTONEG]) {
		p->have_autoneg = true;
		p->autoneg = mnl_attr_get_u8(tb[ETHTOOL_A_PAUSE_AUTONEG]);
	}
	if (tb[ETHTOOL_A_PAUSE_RX]) {
		p->have_rx = true;
		p->rx = mnl_attr_get_u8(tb[ETHTOOL_A_PAUSE_RX]);
	}
	if (tb[ETHTOOL_A_PAUSE_TX]) {
		p->have_tx = true;
		p->tx = mnl_attr_get_u8(tb[ETHTOOL_A_PAUSE_TX]);
	}
	if (!tb[ETHTOOL_A_PAUSE_STATS])
		return 0;
	r = nl_parse_nested(tb[ETHTOOL_A_PAUSE_STATS], pause_stat_pol, ETHTOOL_A_PAUSE_STAT_MAX, st,
			    err, errlen);
	if (r)
		return r;
	/* A counter the driver does not keep is left out (ETHTOOL_STAT_NOT_SET), not sent as 0. */
	if (st[ETHTOOL_A_PAUSE_STAT_TX_FRAMES]) {
		p->have_tx_frames = true;
		p->tx_frames = mnl_attr_get_u64(st[ETHTOOL_A_PAUSE_STAT_TX_FRAMES]);
	}
	if (st[ETHTOOL_A_PAUSE_STAT_RX_FRAMES]) {
		p->have_rx_frames = true;
		p->rx_frames = mnl_attr_get_u64(st[ETHTOOL_A_PAUSE_STAT_RX_FRAMES]);
	}
	return 0;
}

static struct nlmsghdr *genl_msg(struct ethtool_priv *p, uint16_t type, uint8_t cmd,
				 uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(p->req);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

/* Resolve the "ethtool" family once; without it (no CONFIG_ETHTOOL_NETLINK) use the ioctl. */
static void resolve_family(struct ethtool_priv *p)
{
	const struct nlmsghdr *reply;
	struct nlmsghdr *nlh;
	char err[160];
	int r;

	p->family_tried = true;
	r = nl_open(&p->genl, NETLINK_GENERIC);
	if (r) {
		log_info("ethtool: no generic netlink (%s); pause via the ioctl", strerror(-r));
		return;
	}
	nlh = genl_msg(p, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	r = nl_request(&p->genl, nlh, &reply, err, sizeof(err));
	if (!r)
		r = genl_parse_family(reply, reply->nlmsg_len, &p->family, err, sizeof(err));
	if (r) {
		log_info("ethtool: no ethtool netlink family (%s%s%s); pause settings via the "
			 "ioctl, pause frame counters unavailable",
			 strerror(-r), err[0] ? ": " : "", err);
		nl_close(&p->genl);
		p->family = 0;
	}
}

static void pause_absent(struct object *o, int err)
{
	static const enum field_id ids[] = {
		F_NETDEV_PAUSE_AUTONEG,	  F_NETDEV_PAUSE_RX,	    F_NETDEV_PAUSE_TX,
		F_NETDEV_PAUSE_RX_FRAMES, F_NETDEV_PAUSE_TX_FRAMES,
	};

	absent_list(o, ids, ARRAY_SIZE(ids), err);
}

static void collect_pause_ioctl(struct ethtool_priv *p, struct object *o)
{
	struct ethtool_pauseparam pp;
	int r;

	memset(&pp, 0, sizeof(pp));
	pp.cmd = ETHTOOL_GPAUSEPARAM;
	r = eth_call(p, o->name, &pp);
	if (r) {
		pause_absent(o, r);
		note_err(o->name, "GPAUSEPARAM", r, NULL);
		return;
	}
	field_set_bool(o, F_NETDEV_PAUSE_AUTONEG, pp.autoneg);
	field_set_bool(o, F_NETDEV_PAUSE_RX, pp.rx_pause);
	field_set_bool(o, F_NETDEV_PAUSE_TX, pp.tx_pause);
	/* the ioctl has no frame counters */
	field_absent(o, F_NETDEV_PAUSE_RX_FRAMES, ABS_UNSUPPORTED, EOPNOTSUPP);
	field_absent(o, F_NETDEV_PAUSE_TX_FRAMES, ABS_UNSUPPORTED, EOPNOTSUPP);
}

static void set_or_unsupported(struct object *o, enum field_id id, bool have, uint64_t v,
			       bool boolean)
{
	if (!have)
		field_absent(o, id, ABS_UNSUPPORTED, EOPNOTSUPP);
	else if (boolean)
		field_set_bool(o, id, v != 0);
	else
		field_set_int(o, id, (int64_t)v);
}

void ethtool_fill_pause(struct object *o, const struct ethtool_pause *ps)
{
	set_or_unsupported(o, F_NETDEV_PAUSE_AUTONEG, ps->have_autoneg, ps->autoneg, true);
	set_or_unsupported(o, F_NETDEV_PAUSE_RX, ps->have_rx, ps->rx, true);
	set_or_unsupported(o, F_NETDEV_PAUSE_TX, ps->have_tx, ps->tx, true);
	set_or_unsupported(o, F_NETDEV_PAUSE_RX_FRAMES, ps->have_rx_frames, ps->rx_frames, false);
	set_or_unsupported(o, F_NETDEV_PAUSE_TX_FRAMES, ps->have_tx_frames, ps->tx_frames, false);
}

static void collect_pause(struct ethtool_priv *p, struct object *o)
{
	const struct nlmsghdr *reply;
	struct ethtool_pause ps;
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	char err[160];
	int r;

	if (!p->family_tried)
		resolve_family(p);
	if (!p->family) {
		collect_pause_ioctl(p, o);
		return;
	}
	nlh = genl_msg(p, p->family, ETHTOOL_MSG_PAUSE_GET, ETHTOOL_GENL_VERSION);
	nest = mnl_attr_nest_start(nlh, ETHTOOL_A_PAUSE_HEADER);
	if (o->ifindex > 0)
		mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t)o->ifindex);
	else
		mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, o->name);
	/* ask for the frame counters too (kernel >= 5.13) */
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_STATS);
	mnl_attr_nest_end(nlh, nest);
	r = nl_request(&p->genl, nlh, &reply, err, sizeof(err));
	if (!r)
		r = ethtool_parse_pause(reply, reply->nlmsg_len, p->family, &ps, err, sizeof(err));
	if (r) {
		/* veth, virtio, bridges: no pause at all -> EOPNOTSUPP -> absent "unsupported" */
		pause_absent(o, r);
		note_err(o->name, "PAUSE_GET", r, err);
		return;
	}
	ethtool_fill_pause(o, &ps);
}

static void collect_slow(struct ethtool_priv *p, struct object *o, struct ethtool_dev *d)
{
	int r;

	r = collect_drvinfo(p, o);
	if (r == -ENODEV || r == -ENXIO) {
		/* Gone since the listing: say so on every field; link drops it next poll. */
		absent_list(o, config_fields, ARRAY_SIZE(config_fields), r);
		d->probed = true;
		d->stats_err = -r;
		d->n_stats = 0;
		cset_clear(&o->cs[CSET_ETHTOOL]);
		return;
	}
	collect_speed(p, o);
	collect_tunable(p, o);
	collect_pause(p, o);
	/*
	 * The names are read again on every slow poll, not only when the count
	 * moves: mlx5 lists pause counters only for PFC-enabled priorities, so
	 * moving PFC from 3 to 4 renames entries at the same count.  A DCB
	 * change raises RTNLGRP_DCB, which brings this slow poll at once.
	 */
	read_strings(p, o, d);
}

/* ---- the collector ---- */

static void dev_free(void *cpriv)
{
	struct ethtool_dev *d = cpriv;

	guarded_free(d->stats, d->stats_maplen);
	free(d->map);
	free(d);
}

static int ethtool_init(struct collector_ctx *cc)
{
	struct ethtool_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	cc->priv = p;
	p->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		/* a kernel without IPv4 still has AF_UNIX, and SIOCETHTOOL works on either */
		p->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0) {
		snprintf(cc->detail, sizeof(cc->detail), "ioctl socket: %s", strerror(errno));
		return -errno;
	}
	ethtool_set_ioctl(cc, NULL, NULL);
	return 0;
}

static void ethtool_fini(struct collector_ctx *cc)
{
	struct ethtool_priv *p = cc->priv;

	if (!p)
		return;
	if (p->fd >= 0)
		close(p->fd);
	nl_close(&p->genl);
	free(p);
	cc->priv = NULL;
}

static int ethtool_collect(struct collector_ctx *cc, struct node_model *m, unsigned int what)
{
	struct ethtool_priv *p = cc->priv;

	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];
		struct ethtool_dev *d = o->cpriv[cc->idx];

		if (!d) {
			d = calloc(1, sizeof(*d));
			if (!d) {
				absent_list(o, config_fields, ARRAY_SIZE(config_fields), -ENOMEM);
				stats_absent(o, -ENOMEM);
				continue;
			}
			o->cpriv[cc->idx] = d;
		}
		if (what & COLLECT_SLOW)
			collect_slow(p, o, d);
		if (what & COLLECT_FAST)
			collect_fast(p, o, d);
	}
	return 0;
}

const struct collector ethtool_collector = {
	.name = "ethtool",
	.help = "driver stats, per-priority pause/bytes/discards, global pause, link speed, "
		"pfc-prevention-tout, driver/firmware (SIOCETHTOOL + ethtool genetlink)",
	.default_enabled = true,
	.init = ethtool_init,
	.collect = ethtool_collect,
	.fini = ethtool_fini,
	.obj_free = dev_free,
};
