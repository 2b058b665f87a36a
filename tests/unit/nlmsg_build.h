/* SPDX-License-Identifier: MIT */
/*
 * Netlink messages built attribute by attribute as the kernel builds them,
 * shared by the unit tests (test_nl.c) and the fuzz seed writer
 * (tests/fuzz/mkseeds.c): net/dcb/dcbnl.c dcbnl_ieee_fill() and the GDCBX
 * reply, net/ethtool/pause.c, the genetlink controller's NEWFAMILY, and
 * drivers/infiniband/core/nldev.c's device, port and statistic replies.
 */
#ifndef ROCEWATCH_TEST_NLMSG_BUILD_H
#define ROCEWATCH_TEST_NLMSG_BUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

struct msgbuf {
	_Alignas(8) char b[4096];
};

static inline struct nlmsghdr *msg(struct msgbuf *mb, uint16_t type)
{
	struct nlmsghdr *nlh;

	memset(mb->b, 0, sizeof(mb->b));
	nlh = mnl_nlmsg_put_header(mb->b);
	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = 9;
	return nlh;
}

/* Append a message after the len bytes already in mb (a dump: several per receive). */
static inline struct nlmsghdr *msg_at(struct msgbuf *mb, size_t len, uint16_t type, uint16_t flags,
				      uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(mb->b + len);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = 4242;
	return nlh;
}

/* nla_nest_start_noflag(): dcbnl's nests carry no NLA_F_NESTED */
static inline struct nlattr *nest_noflag(struct nlmsghdr *nlh, uint16_t type)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);

	n->nla_type &= (uint16_t)~NLA_F_NESTED;
	return n;
}

enum bad_part {
	BAD_NONE,
	BAD_BUFFER,
	BAD_PFC,
	BAD_ETS,
	BAD_MAXRATE,
	BAD_APP,
	BAD_DCBX,
	CUT_NEST
};

/* dcbnl_ieee_fill() of an mlx5 port, attribute by attribute, with one part broken. */
static inline size_t ieee_msg(struct msgbuf *mb, enum bad_part bad)
{
	struct nlmsghdr *nlh = msg(mb, RTM_GETDCB);
	struct dcbmsg *dm = mnl_nlmsg_put_extra_header(nlh, sizeof(*dm));
	struct ieee_ets ets = { .ets_cap = 8, .prio_tc = { 1, 0, 2, 3, 4, 5, 6, 7 } };
	/* kbit/s: TC3 capped at 25 Gbit/s, the others unlimited (0) */
	struct ieee_maxrate maxrate = { .tc_maxrate = { [3] = 25000000 } };
	struct ieee_pfc pfc = { .pfc_cap = 8, .pfc_en = 1 << 3, .delay = 7 };
	struct dcbnl_buffer b = { .prio2buffer = { [3] = 1 }, .total_size = 262016 };
	struct nlattr *ieee, *app;
	char twelve[12] = { 0 };

	dm->dcb_family = AF_UNSPEC;
	dm->cmd = DCB_CMD_IEEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, "eth2");
	ieee = nest_noflag(nlh, DCB_ATTR_IEEE);
	if (bad == BAD_ETS)
		mnl_attr_put(nlh, DCB_ATTR_IEEE_ETS, sizeof(twelve), twelve);
	else
		mnl_attr_put(nlh, DCB_ATTR_IEEE_ETS, sizeof(ets), &ets);
	/* dcbnl_ieee_fill() puts the max rates right after ETS */
	if (bad == BAD_MAXRATE)
		mnl_attr_put(nlh, DCB_ATTR_IEEE_MAXRATE, sizeof(twelve), twelve);
	else
		mnl_attr_put(nlh, DCB_ATTR_IEEE_MAXRATE, sizeof(maxrate), &maxrate);
	pfc.requests[3] = 1234;
	pfc.indications[3] = 5678;
	if (bad == BAD_PFC)
		mnl_attr_put(nlh, DCB_ATTR_IEEE_PFC, sizeof(twelve), twelve);
	else
		mnl_attr_put(nlh, DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
	if (bad == BAD_BUFFER)
		mnl_attr_put(nlh, DCB_ATTR_DCB_BUFFER, sizeof(twelve), twelve);
	else
		mnl_attr_put(nlh, DCB_ATTR_DCB_BUFFER, sizeof(b), &b);
	app = nest_noflag(nlh, DCB_ATTR_IEEE_APP_TABLE);
	for (uint16_t d = 0; d < 64; d++) {
		struct dcb_app a = { .selector = IEEE_8021QAZ_APP_SEL_DSCP,
				     .priority = (uint8_t)(d >> 3),
				     .protocol = (bad == BAD_APP && d == 40) ? 99 : d };

		mnl_attr_put(nlh, DCB_ATTR_IEEE_APP, sizeof(a), &a);
	}
	mnl_attr_nest_end(nlh, app);
	mnl_attr_nest_end(nlh, ieee);
	if (bad == CUT_NEST)
		ieee->nla_len -= 3; /* the nest ends inside its last attribute */
	if (bad == BAD_DCBX)
		mnl_attr_put_u16(nlh, DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST);
	else
		mnl_attr_put_u8(nlh, DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
	return nlh->nlmsg_len;
}

/* The DCB_CMD_GDCBX reply: the mode only. */
static inline size_t gdcbx_msg(struct msgbuf *mb, uint8_t mode)
{
	struct nlmsghdr *nlh = msg(mb, RTM_GETDCB);
	struct dcbmsg *dm = mnl_nlmsg_put_extra_header(nlh, sizeof(*dm));

	dm->cmd = DCB_CMD_GDCBX;
	mnl_attr_put_u8(nlh, DCB_ATTR_DCBX, mode);
	return nlh->nlmsg_len;
}

/* ETHTOOL_MSG_PAUSE_GET_REPLY of family; stats as with ETHTOOL_FLAG_STATS, pad as on 32-bit. */
static inline size_t pause_msg(struct msgbuf *mb, uint16_t family, bool stats, bool pad)
{
	struct nlmsghdr *nlh = msg(mb, family);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nlattr *n;

	g->cmd = ETHTOOL_MSG_PAUSE_GET_REPLY;
	g->version = ETHTOOL_GENL_VERSION;
	n = mnl_attr_nest_start(nlh, ETHTOOL_A_PAUSE_HEADER);
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, 4);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, "eth2");
	mnl_attr_nest_end(nlh, n);
	mnl_attr_put_u8(nlh, ETHTOOL_A_PAUSE_AUTONEG, 0);
	mnl_attr_put_u8(nlh, ETHTOOL_A_PAUSE_RX, 1);
	mnl_attr_put_u8(nlh, ETHTOOL_A_PAUSE_TX, 1);
	if (stats) {
		n = mnl_attr_nest_start(nlh, ETHTOOL_A_PAUSE_STATS);
		if (pad)
			mnl_attr_put(nlh, ETHTOOL_A_PAUSE_STAT_PAD, 0, NULL);
		mnl_attr_put_u64(nlh, ETHTOOL_A_PAUSE_STAT_TX_FRAMES, 123456789012ULL);
		mnl_attr_put_u64(nlh, ETHTOOL_A_PAUSE_STAT_RX_FRAMES, 678);
		mnl_attr_nest_end(nlh, n);
	}
	return nlh->nlmsg_len;
}

/* The controller's CTRL_CMD_NEWFAMILY for "ethtool": id, name, version, ops and a group. */
static inline size_t genl_family_msg(struct msgbuf *mb, uint16_t id)
{
	struct nlmsghdr *nlh = msg(mb, GENL_ID_CTRL);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nlattr *ops, *op, *grps, *grp;

	g->cmd = CTRL_CMD_NEWFAMILY;
	g->version = 2;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "ethtool");
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, id);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, 1);
	mnl_attr_put_u32(nlh, CTRL_ATTR_HDRSIZE, 0);
	mnl_attr_put_u32(nlh, CTRL_ATTR_MAXATTR, 0);
	ops = mnl_attr_nest_start(nlh, CTRL_ATTR_OPS);
	for (uint16_t i = 1; i <= 3; i++) {
		op = mnl_attr_nest_start(nlh, i);
		mnl_attr_put_u32(nlh, CTRL_ATTR_OP_ID, ETHTOOL_MSG_PAUSE_GET + i - 1u);
		mnl_attr_put_u32(nlh, CTRL_ATTR_OP_FLAGS, 0x0e);
		mnl_attr_nest_end(nlh, op);
	}
	mnl_attr_nest_end(nlh, ops);
	grps = mnl_attr_nest_start(nlh, CTRL_ATTR_MCAST_GROUPS);
	grp = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_MCAST_GRP_NAME, "monitor");
	mnl_attr_put_u32(nlh, CTRL_ATTR_MCAST_GRP_ID, 5);
	mnl_attr_nest_end(nlh, grp);
	mnl_attr_nest_end(nlh, grps);
	return nlh->nlmsg_len;
}

#define NLDEV(cmd) RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd)

/* fill_nldev_handle() + fill_dev_info() of a ConnectX function (fw) or rxe (none). */
static inline size_t nldev_dev_msg(struct msgbuf *mb, size_t len, uint32_t index, const char *name,
				   const char *fw, uint32_t seq)
{
	struct nlmsghdr *nlh = msg_at(mb, len, NLDEV(RDMA_NLDEV_CMD_GET), NLM_F_MULTI, seq);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1d72c1c36ULL);
	if (fw)
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_FW_VERSION, fw);
	mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_NODE_GUID, 0x0c42a10300657a3eULL);
	mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, 0x0c42a10300657a3eULL);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
	return len + MNL_ALIGN(nlh->nlmsg_len);
}

/* fill_port_info() of a RoCE port; NDEV_* only with a netdev in our namespace. */
static inline size_t nldev_port_msg(struct msgbuf *mb, size_t len, uint32_t index, const char *name,
				    const char *ndev, uint32_t seq)
{
	struct nlmsghdr *nlh = msg_at(mb, len, NLDEV(RDMA_NLDEV_CMD_PORT_GET), NLM_F_MULTI, seq);

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_PORT_STATE, 4);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5);
	if (ndev) {
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_NDEV_INDEX, 4);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
	}
	return len + MNL_ALIGN(nlh->nlmsg_len);
}

/* stat_get_doit_default_counter(): HWCOUNTERS { ENTRY { NAME, VALUE } ... } */
static inline size_t nldev_stat_msg(struct msgbuf *mb, size_t len, uint32_t seq)
{
	static const struct {
		const char *name;
		uint64_t v;
	} hw[] = {
		{ "out_of_sequence", 2054 },
		{ "local_ack_timeout_err", 97 },
		{ "np_cnp_sent", 1882731 },
		{ "req_transport_retries_exceeded", 2 },
	};
	struct nlmsghdr *nlh = msg_at(mb, len, NLDEV(RDMA_NLDEV_CMD_STAT_GET), 0, seq);
	struct nlattr *table, *e;

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	table = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++) {
		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, hw[i].name);
		mnl_attr_put_u64(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, hw[i].v);
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, table);
	return len + MNL_ALIGN(nlh->nlmsg_len);
}

/* The end of a dump: NLMSG_DONE with the dump's errno (0, or what failed). */
static inline size_t done_msg(struct msgbuf *mb, size_t len, uint32_t seq, int err)
{
	struct nlmsghdr *nlh = msg_at(mb, len, NLMSG_DONE, NLM_F_MULTI, seq);

	*(int *)mnl_nlmsg_put_extra_header(nlh, sizeof(int)) = err;
	return len + MNL_ALIGN(nlh->nlmsg_len);
}

/* NLMSG_ERROR with NETLINK_CAP_ACK and an extended-ack message. */
static inline size_t error_msg(struct msgbuf *mb, size_t len, uint32_t seq, int err,
			       const char *text)
{
	struct nlmsghdr *nlh = msg_at(mb, len, NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, seq);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	e->error = err;
	e->msg.nlmsg_len = sizeof(struct nlmsghdr) + 8;
	e->msg.nlmsg_seq = seq;
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, text);
	return len + MNL_ALIGN(nlh->nlmsg_len);
}

/*
 * ETHTOOL_MSG_FEC_GET_REPLY as net/ethtool/fec.c fills it with
 * ETHTOOL_FLAG_STATS: MODES (a bitset, not read), AUTO, ACTIVE (a link mode
 * bit), then STATS with each statistic an array of u64, the total first
 * and one per lane (fec_stats_recalc()); lanes 0 gives total-only arrays,
 * no_bits an empty CORR_BITS (the driver keeps none); pad as on
 * architectures where nla_put_64bit() aligns.
 */
static inline size_t fec_msg(struct msgbuf *mb, uint16_t family, uint32_t active, int lanes,
			     bool no_bits, bool pad)
{
	struct nlmsghdr *nlh = msg(mb, family);
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	struct nlattr *n, *bits;
	uint64_t corr[9] = { 0 }, uncorr[9] = { 0 }, cbits[9] = { 0 };
	int n_vals = lanes ? lanes + 1 : 1;

	g->cmd = ETHTOOL_MSG_FEC_GET_REPLY;
	g->version = ETHTOOL_GENL_VERSION;
	n = mnl_attr_nest_start(nlh, ETHTOOL_A_FEC_HEADER);
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, 4);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, "eth2");
	mnl_attr_nest_end(nlh, n);
	n = mnl_attr_nest_start(nlh, ETHTOOL_A_FEC_MODES);
	mnl_attr_put(nlh, ETHTOOL_A_BITSET_NOMASK, 0, NULL);
	bits = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS);
	mnl_attr_nest_end(nlh, bits);
	mnl_attr_nest_end(nlh, n);
	mnl_attr_put_u8(nlh, ETHTOOL_A_FEC_AUTO, 0);
	if (active)
		mnl_attr_put_u32(nlh, ETHTOOL_A_FEC_ACTIVE, active);
	for (int l = 1; l <= lanes; l++) {
		corr[l] = 1000000ULL * (uint64_t)l;
		uncorr[l] = (uint64_t)l - 1;
		cbits[l] = 3000000ULL * (uint64_t)l;
	}
	for (int l = 1; l <= lanes; l++) {
		corr[0] += corr[l];
		uncorr[0] += uncorr[l];
		cbits[0] += cbits[l];
	}
	if (!lanes) {
		corr[0] = 123456789012ULL;
		uncorr[0] = 7;
		cbits[0] = 987654321ULL;
	}
	n = mnl_attr_nest_start(nlh, ETHTOOL_A_FEC_STATS);
	if (pad)
		mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_PAD, 0, NULL);
	mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_CORRECTED, (size_t)n_vals * 8, corr);
	if (pad)
		mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_PAD, 0, NULL);
	mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_UNCORR, (size_t)n_vals * 8, uncorr);
	if (pad)
		mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_PAD, 0, NULL);
	mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_CORR_BITS, no_bits ? 0 : (size_t)n_vals * 8, cbits);
	mnl_attr_nest_end(nlh, n);
	return nlh->nlmsg_len;
}

/*
 * RDMA_NLDEV_CMD_STAT_GET_STATUS as nldev.c answers it: every counter with
 * its NAME and INDEX, the optional ones with DYNAMIC (1: enabled).
 */
static inline size_t nldev_stat_status_msg(struct msgbuf *mb, size_t len, uint32_t seq, bool cc_on)
{
	static const struct {
		const char *name;
		int dynamic; /* -1: not optional */
	} hw[] = {
		{ "out_of_sequence", -1 }, { "rx_write_requests", -1 }, { "cc_rx_ce_pkts", 0 },
		{ "cc_rx_cnp_pkts", 0 },   { "cc_tx_cnp_pkts", 0 },	{ "roce_adp_retrans", 1 },
	};
	struct nlmsghdr *nlh = msg_at(mb, len, NLDEV(RDMA_NLDEV_CMD_STAT_GET_STATUS), 0, seq);
	struct nlattr *table, *e;

	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	table = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++) {
		e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, hw[i].name);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_INDEX, (uint32_t)i);
		if (hw[i].dynamic >= 0)
			mnl_attr_put_u8(
			    nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_DYNAMIC,
			    (uint8_t)(hw[i].dynamic || (cc_on && hw[i].name[0] == 'c')));
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, table);
	return len + MNL_ALIGN(nlh->nlmsg_len);
}

/* RTM_NEWLINK as rtnl_fill_ifinfo() starts it, with the carrier counts (updown: since 4.16). */
static inline size_t newlink_msg(struct msgbuf *mb, int ifindex, uint32_t changes, uint32_t up,
				 uint32_t down, bool updown)
{
	struct nlmsghdr *nlh = msg(mb, RTM_NEWLINK);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	struct nlattr *n;

	ifi->ifi_index = ifindex;
	ifi->ifi_flags = 0x11043;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "eth2");
	mnl_attr_put_u32(nlh, IFLA_TXQLEN, 1000);
	mnl_attr_put_u8(nlh, IFLA_OPERSTATE, 6);
	mnl_attr_put_u32(nlh, IFLA_MTU, 9000);
	mnl_attr_put_u8(nlh, IFLA_CARRIER, 1);
	mnl_attr_put_u32(nlh, IFLA_CARRIER_CHANGES, changes);
	if (updown) {
		mnl_attr_put_u32(nlh, IFLA_CARRIER_UP_COUNT, up);
		mnl_attr_put_u32(nlh, IFLA_CARRIER_DOWN_COUNT, down);
	}
	n = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	mnl_attr_nest_end(nlh, n);
	return nlh->nlmsg_len;
}

#endif
