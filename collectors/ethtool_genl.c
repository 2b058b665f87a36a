// SPDX-License-Identifier: MIT
/*
 * ethtool pause over ethtool genetlink (net/ethtool/pause.c): the global
 * 802.3x setting and, since 5.13, its frame counters.  The "ethtool" family
 * is resolved once through the genetlink controller; without it (no
 * CONFIG_ETHTOOL_NETLINK) the settings come from GPAUSEPARAM and the
 * counters are absent.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>

#include "netdev.h"
#include "nl.h"
#include "util.h"

/* A CTRL_CMD_NEWFAMILY reply lists the family's ops and groups too: 8 KiB is plenty. */
#define GENL_RXBUF (32 * 1024)

static const struct rw_nl_policy ctrl_pol[CTRL_ATTR_MAX + 1] = {
	RW_NL_U16(CTRL_ATTR_FAMILY_ID),
	RW_NL_STR(CTRL_ATTR_FAMILY_NAME, GENL_NAMSIZ),
};
static const struct rw_nl_set ctrl_set = RW_NL_SET("CTRL_ATTR", ctrl_pol);

int genl_parse_family(const void *buf, size_t len, uint16_t *id, char *err, size_t errlen)
{
	const struct nlmsghdr *nlh = buf;
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const struct genlmsghdr *g;
	int r;

	r = rw_nl_check_msg(buf, len, sizeof(*g), err, errlen);
	if (r)
		return r;
	g = mnl_nlmsg_get_payload(nlh);
	if (nlh->nlmsg_type != GENL_ID_CTRL || g->cmd != CTRL_CMD_NEWFAMILY) {
		snprintf(err, errlen, "not a CTRL_CMD_NEWFAMILY reply (type %u, cmd %u)",
			 nlh->nlmsg_type, g->cmd);
		return -EBADMSG;
	}
	r = rw_nl_parse_msg(&ctrl_set, nlh, sizeof(*g), tb, NULL, err, errlen);
	if (r)
		return r;
	if (!tb[CTRL_ATTR_FAMILY_ID]) {
		snprintf(err, errlen, "CTRL_CMD_NEWFAMILY without CTRL_ATTR_FAMILY_ID");
		return -EBADMSG;
	}
	*id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return 0;
}

/* The header nest is not read: the request named the device. */
static const struct rw_nl_policy pause_pol[ETHTOOL_A_PAUSE_MAX + 1] = {
	RW_NL_U8(ETHTOOL_A_PAUSE_AUTONEG),
	RW_NL_U8(ETHTOOL_A_PAUSE_RX),
	RW_NL_U8(ETHTOOL_A_PAUSE_TX),
	RW_NL_NEST(ETHTOOL_A_PAUSE_STATS),
};
static const struct rw_nl_set pause_set = RW_NL_SET("ETHTOOL_A_PAUSE", pause_pol);

/* _PAD is skipped: the kernel adds it only where u64s need aligning (nla_put_u64_64bit). */
static const struct rw_nl_policy pause_stat_pol[ETHTOOL_A_PAUSE_STAT_MAX + 1] = {
	RW_NL_U64(ETHTOOL_A_PAUSE_STAT_TX_FRAMES),
	RW_NL_U64(ETHTOOL_A_PAUSE_STAT_RX_FRAMES),
};
static const struct rw_nl_set pause_stat_set = RW_NL_SET("ETHTOOL_A_PAUSE_STAT", pause_stat_pol);

int ethtool_parse_reply(const void *buf, size_t len, uint16_t family, uint8_t cmd, const char *what,
			const struct rw_nl_set *set, const struct nlattr **tb, char *err,
			size_t errlen)
{
	const struct nlmsghdr *nlh = buf;
	const struct genlmsghdr *g;
	int r = rw_nl_check_msg(buf, len, sizeof(*g), err, errlen);

	if (r)
		return r;
	g = mnl_nlmsg_get_payload(nlh);
	if (nlh->nlmsg_type != family || g->cmd != cmd) {
		snprintf(err, errlen, "not an %s (type %u, cmd %u)", what, nlh->nlmsg_type, g->cmd);
		return -EBADMSG;
	}
	return rw_nl_parse_msg(set, nlh, sizeof(*g), tb, NULL, err, errlen);
}

int ethtool_parse_pause(const void *buf, size_t len, uint16_t family, struct ethtool_pause *p,
			char *err, size_t errlen)
{
	const struct nlattr *tb[ETHTOOL_A_PAUSE_MAX + 1];
	const struct nlattr *st[ETHTOOL_A_PAUSE_STAT_MAX + 1];
	int r;

	memset(p, 0, sizeof(*p));
	r = ethtool_parse_reply(buf, len, family, ETHTOOL_MSG_PAUSE_GET_REPLY,
				"ETHTOOL_MSG_PAUSE_GET_REPLY", &pause_set, tb, err, errlen);
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
	r = rw_nl_parse_nested(&pause_stat_set, tb[ETHTOOL_A_PAUSE_STATS], st, NULL, err, errlen);
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

struct nlmsghdr *ethtool_stats_request(struct ethtool_priv *p, uint8_t cmd, uint16_t header,
				       const struct object *o)
{
	struct nlmsghdr *nlh = genl_msg(p, p->family, cmd, ETHTOOL_GENL_VERSION);
	struct nlattr *nest = mnl_attr_nest_start(nlh, header);

	if (o->ifindex > 0)
		mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t)o->ifindex);
	else
		mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, o->name);
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_STATS);
	mnl_attr_nest_end(nlh, nest);
	return nlh;
}

/* Resolve the "ethtool" family once; without it (no CONFIG_ETHTOOL_NETLINK) use the ioctl. */
void ethtool_resolve_family(struct ethtool_priv *p)
{
	const struct nlmsghdr *reply;
	struct nlmsghdr *nlh;
	char err[160];
	int r;

	p->family_tried = true;
	r = rw_nl_open(&p->genl, NETLINK_GENERIC, GENL_RXBUF, 2000);
	if (r) {
		log_info("ethtool: no generic netlink (%s); pause via the ioctl", strerror(-r));
		return;
	}
	nlh = genl_msg(p, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	r = rw_nl_request(&p->genl, nlh, &reply, err, sizeof(err));
	if (!r)
		r = genl_parse_family(reply, reply->nlmsg_len, &p->family, err, sizeof(err));
	if (r) {
		log_info("ethtool: no ethtool netlink family (%s%s%s); pause settings via the "
			 "ioctl, pause frame counters unavailable",
			 strerror(-r), err[0] ? ": " : "", err);
		rw_nl_close(&p->genl);
		p->family = 0;
	}
}

static void set_or_absent(struct object *o, enum field_id id, bool have, uint64_t v, bool boolean,
			  int err)
{
	if (err)
		field_absent_errno(o, id, err);
	else if (!have)
		field_absent(o, id, ABS_UNSUPPORTED, EOPNOTSUPP);
	else if (boolean)
		field_set_bool(o, id, v != 0);
	else
		field_set_int(o, id, (int64_t)v);
}

/* Every pause field, once: from a reply, or absent with err when the request failed. */
static void fill_pause(struct object *o, const struct ethtool_pause *ps, int err)
{
	set_or_absent(o, F_NETDEV_PAUSE_AUTONEG, ps->have_autoneg, ps->autoneg, true, err);
	set_or_absent(o, F_NETDEV_PAUSE_RX, ps->have_rx, ps->rx, true, err);
	set_or_absent(o, F_NETDEV_PAUSE_TX, ps->have_tx, ps->tx, true, err);
	set_or_absent(o, F_NETDEV_PAUSE_RX_FRAMES, ps->have_rx_frames, ps->rx_frames, false, err);
	set_or_absent(o, F_NETDEV_PAUSE_TX_FRAMES, ps->have_tx_frames, ps->tx_frames, false, err);
}

void ethtool_fill_pause(struct object *o, const struct ethtool_pause *ps)
{
	fill_pause(o, ps, 0);
}

static void collect_pause_ioctl(struct ethtool_priv *p, struct object *o)
{
	struct ethtool_pauseparam pp;
	struct ethtool_pause ps = { .have_autoneg = true, .have_rx = true, .have_tx = true };
	int r;

	r = ethtool_get(p, o->name, &pp, sizeof(pp), ETHTOOL_GPAUSEPARAM, "GPAUSEPARAM");
	/* the ioctl has no frame counters: those stay unsupported */
	ps.autoneg = pp.autoneg;
	ps.rx = pp.rx_pause;
	ps.tx = pp.tx_pause;
	fill_pause(o, &ps, r);
}

void ethtool_collect_pause(struct ethtool_priv *p, struct object *o)
{
	const struct nlmsghdr *reply;
	struct ethtool_pause ps = { .have_rx = false };
	struct nlmsghdr *nlh;
	char err[160];
	int r;

	if (!p->family_tried)
		ethtool_resolve_family(p);
	if (!p->family) {
		collect_pause_ioctl(p, o);
		return;
	}
	/* with the frame counters too (kernel >= 5.13) */
	nlh = ethtool_stats_request(p, ETHTOOL_MSG_PAUSE_GET, ETHTOOL_A_PAUSE_HEADER, o);
	r = rw_nl_request(&p->genl, nlh, &reply, err, sizeof(err));
	if (!r)
		r = ethtool_parse_pause(reply, reply->nlmsg_len, p->family, &ps, err, sizeof(err));
	/* veth, virtio, bridges: no pause at all -> EOPNOTSUPP -> absent "unsupported" */
	if (r)
		ethtool_note_err(o->name, "PAUSE_GET", r, err);
	fill_pause(o, &ps, r);
}
