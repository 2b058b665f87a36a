// SPDX-License-Identifier: MIT
/*
 * The netdev collectors on real bytes: netlink messages built attribute by
 * attribute as the kernel emits them (net/dcb/dcbnl.c dcbnl_ieee_fill(),
 * net/ethtool/pause.c, genetlink ctrl), sysfs/configfs/debugfs fixture trees
 * laid out as on an mlx5 node with MLNX_OFED and with an upstream kernel, and
 * an ethtool "driver" that answers the SIOCETHTOOL commands exactly as
 * net/ethtool/ioctl.c does while its string set changes.
 *
 * argv[1]: tests/fixtures/sysfs
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>

#include "netdev.h"
#include "vendors.h"
#include "prom.h"
#include "strbuf.h"
#include "util.h"

extern const struct collector ethtool_collector;
extern const struct collector qos_sysfs_collector;

static const char *fixtures;

/* ---- message builders: the kernel's layout, attribute by attribute ---- */

enum ieee_variant {
	IEEE_MLX5,	/* PFC on 3, DSCP trust with the default map, DCBX host|ieee */
	IEEE_PFC_SHORT, /* DCB_ATTR_IEEE_PFC payload shorter than struct ieee_pfc */
	IEEE_PFC_LONG,	/* ... and longer */
	IEEE_BAD_DSCP,	/* an APP entry for DSCP 70 */
	IEEE_NO_DCBX,	/* a driver without getdcbx */
};

/* nla_nest_start_noflag(): dcbnl's nests carry no NLA_F_NESTED */
static struct nlattr *nest_noflag(struct nlmsghdr *nlh, uint16_t type)
{
	struct nlattr *n = mnl_attr_nest_start(nlh, type);

	n->nla_type &= (uint16_t)~NLA_F_NESTED;
	return n;
}

static size_t build_ieee(char *buf, enum ieee_variant v)
{
	struct nlmsghdr *nlh = memset(buf, 0, 4096);
	struct dcbmsg *dm;
	struct nlattr *ieee, *app, *trust;
	struct ieee_ets ets;
	struct ieee_maxrate maxrate;
	struct ieee_pfc pfc;
	struct dcbnl_buffer b;
	char big[sizeof(pfc) + 8];

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETDCB;
	nlh->nlmsg_seq = 7;
	nlh->nlmsg_pid = 4242;
	dm = mnl_nlmsg_put_extra_header(nlh, sizeof(*dm));
	dm->dcb_family = AF_UNSPEC;
	dm->cmd = DCB_CMD_IEEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, "eth2");
	ieee = nest_noflag(nlh, DCB_ATTR_IEEE);

	memset(&ets, 0, sizeof(ets));
	ets.ets_cap = 8;
	/* mlx5 default: priority 0 on TC1, priority 1 on TC0; CNP TC 6 strict */
	const uint8_t prio_tc[8] = { 1, 0, 2, 3, 4, 5, 6, 7 };
	const uint8_t tsa[8] = { 2, 2, 2, 2, 2, 2, 0, 0 };
	const uint8_t bw[8] = { 20, 10, 10, 40, 10, 10, 0, 0 };
	memcpy(ets.prio_tc, prio_tc, 8);
	memcpy(ets.tc_tsa, tsa, 8);
	memcpy(ets.tc_tx_bw, bw, 8);
	mnl_attr_put(nlh, DCB_ATTR_IEEE_ETS, sizeof(ets), &ets);

	/*
	 * mlx5e_dcbnl_ieee_getmaxrate(): kbit/s, from the port's 100 Mbit/s or
	 * 1 Gbit/s units; 0 for "no limit".  TC3 at 25 Gbit/s, TC1 at 800 Mbit/s.
	 */
	memset(&maxrate, 0, sizeof(maxrate));
	maxrate.tc_maxrate[3] = 25 * 1000 * 1000;
	maxrate.tc_maxrate[1] = 8 * 100 * 1000;
	mnl_attr_put(nlh, DCB_ATTR_IEEE_MAXRATE, sizeof(maxrate), &maxrate);

	memset(&pfc, 0, sizeof(pfc));
	pfc.pfc_cap = 8;
	pfc.pfc_en = 1 << 3;
	pfc.delay = 7; /* mlx5 reports the cable length here */
	pfc.requests[3] = 1234;
	pfc.indications[3] = 5678;
	pfc.requests[0] = 1;
	if (v == IEEE_PFC_SHORT) {
		mnl_attr_put(nlh, DCB_ATTR_IEEE_PFC, 100, &pfc);
	} else if (v == IEEE_PFC_LONG) {
		memset(big, 0, sizeof(big));
		memcpy(big, &pfc, sizeof(pfc));
		mnl_attr_put(nlh, DCB_ATTR_IEEE_PFC, sizeof(big), big);
	} else {
		mnl_attr_put(nlh, DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
	}

	memset(&b, 0, sizeof(b));
	b.prio2buffer[3] = 1;
	b.buffer_size[0] = 130944;
	b.buffer_size[1] = 130944;
	b.total_size = 262016;
	mnl_attr_put(nlh, DCB_ATTR_DCB_BUFFER, sizeof(b), &b);

	app = nest_noflag(nlh, DCB_ATTR_IEEE_APP_TABLE);
	/* trust dscp on mlx5: all 64 DSCP entries, dscp >> 3 by default (en_dcbnl.c) */
	for (unsigned int d = 0; d < 64; d++) {
		struct dcb_app a = { .selector = IEEE_8021QAZ_APP_SEL_DSCP,
				     .priority = (uint8_t)(d >> 3),
				     .protocol = (uint16_t)d };

		if (v == IEEE_BAD_DSCP && d == 63)
			a.protocol = 70;
		mnl_attr_put(nlh, DCB_ATTR_IEEE_APP, sizeof(a), &a);
	}
	{
		/* a default priority (mlnx_qos --defltprio): not a DSCP entry */
		struct dcb_app a = { .selector = IEEE_8021QAZ_APP_SEL_ETHERTYPE, .priority = 3 };

		mnl_attr_put(nlh, DCB_ATTR_IEEE_APP, sizeof(a), &a);
	}
	mnl_attr_nest_end(nlh, app);
	/* 6.3+ kernels: DCB_ATTR_DCB_APP_TRUST_TABLE (11), unknown to the 6.1 uapi */
	trust = mnl_attr_nest_start(nlh, 11);
	mnl_attr_put_u8(nlh, DCB_ATTR_IEEE_APP, IEEE_8021QAZ_APP_SEL_DSCP);
	mnl_attr_nest_end(nlh, trust);
	mnl_attr_nest_end(nlh, ieee);
	if (v != IEEE_NO_DCBX)
		mnl_attr_put_u8(nlh, DCB_ATTR_DCBX, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
	return nlh->nlmsg_len;
}

#define ETHTOOL_FAMILY 0x15

static size_t build_pause(char *buf, bool stats, bool pad)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	struct nlattr *n;

	nlh->nlmsg_type = ETHTOOL_FAMILY;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = ETHTOOL_MSG_PAUSE_GET_REPLY;
	g->version = ETHTOOL_GENL_VERSION;
	n = mnl_attr_nest_start(nlh, ETHTOOL_A_PAUSE_HEADER);
	mnl_attr_put_u32(nlh, ETHTOOL_A_HEADER_DEV_INDEX, 4);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, "eth2");
	mnl_attr_nest_end(nlh, n);
	/* global pause on: the misconfiguration of NVIDIA/daqiri#250 */
	mnl_attr_put_u8(nlh, ETHTOOL_A_PAUSE_AUTONEG, 0);
	mnl_attr_put_u8(nlh, ETHTOOL_A_PAUSE_RX, 1);
	mnl_attr_put_u8(nlh, ETHTOOL_A_PAUSE_TX, 1);
	if (stats) {
		n = mnl_attr_nest_start(nlh, ETHTOOL_A_PAUSE_STATS);
		/* nla_put_u64_64bit() pads where u64 needs aligning (not on x86-64) */
		if (pad)
			mnl_attr_put(nlh, ETHTOOL_A_PAUSE_STAT_PAD, 0, NULL);
		mnl_attr_put_u64(nlh, ETHTOOL_A_PAUSE_STAT_TX_FRAMES, 123456789012ULL);
		mnl_attr_put_u64(nlh, ETHTOOL_A_PAUSE_STAT_RX_FRAMES, 678);
		mnl_attr_nest_end(nlh, n);
	}
	return nlh->nlmsg_len;
}

/* The parser gets exactly len bytes of heap: ASan catches any read past them. */
static int parse_ieee_exact(const char *src, size_t len, struct dcb_ieee *d, char *err)
{
	char *copy = malloc(len);
	int r;

	memcpy(copy, src, len);
	r = dcb_parse_ieee(copy, len, d, err, 160);
	free(copy);
	return r;
}

/* ---- dcb ---- */

static void dcb_mlx5_port(void **state)
{
	char buf[4096], err[160] = "";
	struct dcb_ieee d;
	struct node_model m;
	struct object *o;
	size_t len = build_ieee(buf, IEEE_MLX5);

	(void)state;
	assert_int_equal(parse_ieee_exact(buf, len, &d, err), 0);
	assert_true(d.have_pfc && d.have_ets && d.have_maxrate && d.have_buffer && d.have_dcbx);
	assert_int_equal(d.pfc.pfc_en, 1 << 3);
	assert_int_equal(d.n_dscp, 64);
	assert_int_equal(d.dscp[26], 3);
	assert_int_equal(d.dscp[48], 6);
	assert_int_equal(d.dscp[7], 0);
	assert_int_equal(d.dcbx, DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);

	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	dcb_fill(o, &d, true);
	assert_int_equal(o->f[F_NETDEV_PFC_ENABLED].v.set, 1 << 3);
	assert_int_equal(o->f[F_NETDEV_PFC_CAP].v.i, 8);
	assert_int_equal(o->f[F_NETDEV_PFC_DELAY].v.i, 7);
	assert_int_equal(o->f[F_NETDEV_PFC_REQUESTS].v.arr[3], 1234);
	assert_int_equal(o->f[F_NETDEV_PFC_INDICATIONS].v.arr[3], 5678);
	assert_int_equal(o->f[F_NETDEV_PFC_REQUESTS].mask, 0xff);
	assert_int_equal(o->f[F_NETDEV_ETS_PRIO_TC].v.arr[0], 1);
	assert_int_equal(o->f[F_NETDEV_ETS_TC_TSA].v.arr[6], IEEE_8021QAZ_TSA_STRICT);
	assert_int_equal(o->f[F_NETDEV_ETS_TC_BW].v.arr[3], 40);
	assert_int_equal(o->f[F_NETDEV_ETS_TC_MAXRATE].mask, 0xff);
	assert_int_equal(o->f[F_NETDEV_ETS_TC_MAXRATE].v.arr[3], 25000000);
	assert_int_equal(o->f[F_NETDEV_ETS_TC_MAXRATE].v.arr[1], 800000);
	assert_int_equal(o->f[F_NETDEV_ETS_TC_MAXRATE].v.arr[0], 0); /* no limit, not absent */
	assert_int_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp[26], 3);
	assert_int_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp[48], 6);
	assert_string_equal(o->f[F_NETDEV_TRUST].v.s, "dscp");
	assert_string_equal(o->f[F_NETDEV_DCBX_MODE].v.s, "host,ieee");
	assert_true(o->f[F_NETDEV_DCBX_HOST].v.i);
	assert_int_equal(o->f[F_NETDEV_PRIO_BUFFER].v.arr[3], 1);
	assert_int_equal(o->f[F_NETDEV_BUFFER_SIZE].v.arr[1], 130944);
	assert_int_equal(o->f[F_NETDEV_BUFFER_TOTAL].v.i, 262016);

	/* a fast poll moves the counters and leaves the configuration alone */
	field_set_str(o, F_NETDEV_TRUST, "pcp"); /* as qos_sysfs would on MLNX_OFED */
	d.pfc.requests[3] = 2000;
	dcb_fill(o, &d, false);
	assert_int_equal(o->f[F_NETDEV_PFC_REQUESTS].v.arr[3], 2000);
	assert_string_equal(o->f[F_NETDEV_TRUST].v.s, "pcp");
	model_free(&m);
}

static void dcb_no_dscp_is_pcp_and_no_dcbx(void **state)
{
	char buf[4096], err[160] = "";
	struct dcb_ieee d;
	struct nlmsghdr *nlh;
	struct dcbmsg *dm;
	struct nlattr *ieee, *app;

	(void)state;
	/* trust pcp on mlx5: the APP table is empty */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETDCB;
	dm = mnl_nlmsg_put_extra_header(nlh, sizeof(*dm));
	dm->cmd = DCB_CMD_IEEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, "eth3");
	ieee = nest_noflag(nlh, DCB_ATTR_IEEE);
	app = nest_noflag(nlh, DCB_ATTR_IEEE_APP_TABLE);
	mnl_attr_nest_end(nlh, app);
	mnl_attr_nest_end(nlh, ieee);
	assert_int_equal(parse_ieee_exact(buf, nlh->nlmsg_len, &d, err), 0);
	assert_int_equal(d.n_dscp, 0);
	assert_false(d.have_pfc || d.have_ets || d.have_maxrate || d.have_buffer || d.have_dcbx);

	struct node_model m;
	struct object *o;

	model_init(&m);
	o = model_add_netdev(&m, "eth3");
	dcb_fill(o, &d, true);
	assert_string_equal(o->f[F_NETDEV_TRUST].v.s, "pcp");
	assert_int_equal(o->f[F_NETDEV_PFC_ENABLED].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_PFC_REQUESTS].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_BUFFER_TOTAL].state, ABS_UNSUPPORTED);
	/* a driver without ieee_getmaxrate (most of them) sends no DCB_ATTR_IEEE_MAXRATE */
	assert_int_equal(o->f[F_NETDEV_ETS_TC_MAXRATE].state, ABS_UNSUPPORTED);
	/* DCBX left for the GDCBX request */
	assert_int_equal(o->f[F_NETDEV_DCBX_MODE].state, ABS_NOT_COLLECTED);
	model_free(&m);

	/* and without DCBX in an otherwise full reply */
	size_t len = build_ieee(buf, IEEE_NO_DCBX);

	assert_int_equal(parse_ieee_exact(buf, len, &d, err), 0);
	assert_false(d.have_dcbx);
	assert_true(d.have_pfc);
}

static void dcb_gdcbx_reply(void **state)
{
	char buf[256], err[160] = "";
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct dcbmsg *dm;
	uint8_t dcbx = 0;
	char mode[64];

	(void)state;
	nlh->nlmsg_type = RTM_GETDCB;
	dm = mnl_nlmsg_put_extra_header(nlh, sizeof(*dm));
	dm->cmd = DCB_CMD_GDCBX;
	mnl_attr_put_u8(nlh, DCB_ATTR_DCBX, DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_CEE);
	assert_int_equal(dcb_parse_dcbx(buf, nlh->nlmsg_len, &dcbx, err, sizeof(err)), 0);
	dcb_dcbx_str(dcbx, mode, sizeof(mode));
	assert_string_equal(mode, "lld,cee");
	dcb_dcbx_str(0, mode, sizeof(mode));
	assert_string_equal(mode, "none");
	/* an IEEE reply is not a GDCBX reply */
	dm->cmd = DCB_CMD_IEEE_GET;
	assert_int_equal(dcb_parse_dcbx(buf, nlh->nlmsg_len, &dcbx, err, sizeof(err)), -EBADMSG);
}

static void dcb_rejects_bad_sizes(void **state)
{
	char buf[4096], err[160];
	struct dcb_ieee d;
	size_t len;

	(void)state;
	len = build_ieee(buf, IEEE_PFC_SHORT);
	err[0] = '\0';
	assert_int_equal(parse_ieee_exact(buf, len, &d, err), -EBADMSG);
	assert_non_null(strstr(err, "DCB_ATTR_IEEE_PFC"));
	assert_non_null(strstr(err, "100"));

	len = build_ieee(buf, IEEE_PFC_LONG);
	err[0] = '\0';
	assert_int_equal(parse_ieee_exact(buf, len, &d, err), -EBADMSG);
	assert_non_null(strstr(err, "DCB_ATTR_IEEE_PFC"));

	len = build_ieee(buf, IEEE_BAD_DSCP);
	err[0] = '\0';
	assert_int_equal(parse_ieee_exact(buf, len, &d, err), -EBADMSG);
	assert_non_null(strstr(err, "DSCP 70"));
}

static void dcb_rejects_truncation(void **state)
{
	char buf[4096], err[160];
	struct dcb_ieee d;
	size_t len = build_ieee(buf, IEEE_MLX5);
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;

	(void)state;
	/* the message claims fewer bytes than its last attributes need: cut inside the IEEE nest */
	static const size_t cuts[] = { 4, 5, 7, 9, 12, 60, 140, 333, 600 };

	/*
	 * Cutting 8 would drop DCB_ATTR_DCBX whole (a shorter, valid reply) and
	 * 1..3 only its alignment padding (nothing is read past the payload).
	 */
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		size_t l = len - cuts[i];

		nlh->nlmsg_len = (uint32_t)l;
		err[0] = '\0';
		assert_int_equal(parse_ieee_exact(buf, l, &d, err), -EBADMSG);
		assert_true(err[0] != '\0');
	}
	nlh->nlmsg_len = (uint32_t)(len - 3);
	assert_int_equal(parse_ieee_exact(buf, len - 3, &d, err), 0);
	assert_true(d.have_dcbx);
	/* the buffer is shorter than the message says (a truncated read) */
	nlh->nlmsg_len = (uint32_t)len;
	assert_int_equal(parse_ieee_exact(buf, len - 3, &d, err), -EBADMSG);
	/* no room even for struct dcbmsg */
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 2;
	assert_int_equal(parse_ieee_exact(buf, MNL_NLMSG_HDRLEN + 2, &d, err), -EBADMSG);
	/* the whole message still parses */
	nlh->nlmsg_len = (uint32_t)len;
	assert_int_equal(parse_ieee_exact(buf, len, &d, err), 0);
	/* a link message is not a DCB reply */
	nlh->nlmsg_type = RTM_NEWLINK;
	assert_int_equal(parse_ieee_exact(buf, len, &d, err), -EBADMSG);
}

static void dcb_notifications(void **state)
{
	char buf[4096], rx[8192];
	int sv[2];
	size_t len;
	struct nlmsghdr *nlh;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), 0);
	/* dcbnl_ieee_notify(): RTM_SETDCB / DCB_CMD_IEEE_SET with the full IEEE fill */
	len = build_ieee(buf, IEEE_MLX5);
	nlh = (struct nlmsghdr *)buf;
	nlh->nlmsg_type = RTM_SETDCB;
	((struct dcbmsg *)mnl_nlmsg_get_payload(nlh))->cmd = DCB_CMD_IEEE_SET;
	assert_int_equal(send(sv[1], buf, len, 0), (ssize_t)len);
	nlh->nlmsg_type = RTM_NEWLINK; /* not ours */
	assert_int_equal(send(sv[1], buf, len, 0), (ssize_t)len);
	assert_int_equal(dcb_drain_events(sv[0], rx, sizeof(rx)), 1);
	assert_int_equal(dcb_drain_events(sv[0], rx, sizeof(rx)), 0);
	close(sv[0]);
	close(sv[1]);
}

/* ---- ethtool netlink ---- */

static void pause_global_on(void **state)
{
	char buf[512], err[160] = "";
	struct ethtool_pause p;
	struct node_model m;
	struct object *o;
	size_t len;

	(void)state;
	for (int pad = 0; pad < 2; pad++) {
		len = build_pause(buf, true, pad);
		assert_int_equal(
		    ethtool_parse_pause(buf, len, ETHTOOL_FAMILY, &p, err, sizeof(err)), 0);
		assert_true(p.have_rx && p.rx && p.have_tx && p.tx && p.have_autoneg && !p.autoneg);
		assert_true(p.have_tx_frames && p.have_rx_frames);
		assert_int_equal(p.tx_frames, 123456789012ULL);
		assert_int_equal(p.rx_frames, 678);
	}
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	ethtool_fill_pause(o, &p);
	assert_true(o->f[F_NETDEV_PAUSE_RX].v.i && o->f[F_NETDEV_PAUSE_TX].v.i);
	assert_int_equal(o->f[F_NETDEV_PAUSE_AUTONEG].v.i, 0);
	assert_int_equal(o->f[F_NETDEV_PAUSE_AUTONEG].state, ABS_NONE);
	assert_int_equal(o->f[F_NETDEV_PAUSE_TX_FRAMES].v.i, 123456789012LL);

	/* a driver without pause stats: the counters are absent, not 0 */
	len = build_pause(buf, false, false);
	assert_int_equal(ethtool_parse_pause(buf, len, ETHTOOL_FAMILY, &p, err, sizeof(err)), 0);
	ethtool_fill_pause(o, &p);
	assert_int_equal(o->f[F_NETDEV_PAUSE_RX_FRAMES].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_PAUSE_RX].state, ABS_NONE);
	model_free(&m);

	/* another family's message, and a truncated one */
	len = build_pause(buf, true, false);
	assert_int_equal(ethtool_parse_pause(buf, len, ETHTOOL_FAMILY + 1, &p, err, sizeof(err)),
			 -EBADMSG);
	((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)(len - 6);
	assert_int_equal(ethtool_parse_pause(buf, len - 6, ETHTOOL_FAMILY, &p, err, sizeof(err)),
			 -EBADMSG);
}

static void pause_wrong_width(void **state)
{
	char buf[512], err[160] = "";
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	struct ethtool_pause p;

	(void)state;
	nlh->nlmsg_type = ETHTOOL_FAMILY;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = ETHTOOL_MSG_PAUSE_GET_REPLY;
	mnl_attr_put_u32(nlh, ETHTOOL_A_PAUSE_RX, 1); /* a u8 attribute sent as u32 */
	assert_int_equal(
	    ethtool_parse_pause(buf, nlh->nlmsg_len, ETHTOOL_FAMILY, &p, err, sizeof(err)),
	    -EBADMSG);
	assert_non_null(strstr(err, "ETHTOOL_A_PAUSE_RX"));
}

static void genl_family_reply(void **state)
{
	char buf[1024], err[160] = "";
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	struct nlattr *ops, *op;
	uint16_t id = 0;

	(void)state;
	/* ctrl_fill_info(): name, id, version, hdrsize, maxattr, then the ops nest */
	nlh->nlmsg_type = GENL_ID_CTRL;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = CTRL_CMD_NEWFAMILY;
	g->version = 2;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "ethtool");
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, ETHTOOL_FAMILY);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, 1);
	mnl_attr_put_u32(nlh, CTRL_ATTR_HDRSIZE, 0);
	mnl_attr_put_u32(nlh, CTRL_ATTR_MAXATTR, 0);
	ops = mnl_attr_nest_start(nlh, CTRL_ATTR_OPS);
	op = mnl_attr_nest_start(nlh, 1);
	mnl_attr_put_u32(nlh, CTRL_ATTR_OP_ID, ETHTOOL_MSG_PAUSE_GET);
	mnl_attr_put_u32(nlh, CTRL_ATTR_OP_FLAGS, 0);
	mnl_attr_nest_end(nlh, op);
	mnl_attr_nest_end(nlh, ops);
	assert_int_equal(genl_parse_family(buf, nlh->nlmsg_len, &id, err, sizeof(err)), 0);
	assert_int_equal(id, ETHTOOL_FAMILY);
}

/* ---- ethtool stats: the name map, and a driver whose set changes ---- */

static void stat_map(void **state)
{
	struct ethtool_stat_target t;

	(void)state;
	assert_true(ethtool_map_stat("rx_prio3_pause", &t));
	assert_int_equal(t.field, F_NETDEV_PFC_RX_PAUSE);
	assert_int_equal(t.prio, 3);
	assert_true(ethtool_map_stat("tx_prio7_pause_duration", &t));
	assert_int_equal(t.field, F_NETDEV_PFC_TX_PAUSE_DURATION);
	assert_int_equal(t.prio, 7);
	assert_true(ethtool_map_stat("rx_prio0_pause_transition", &t));
	assert_int_equal(t.field, F_NETDEV_PFC_RX_PAUSE_TRANSITION);
	assert_true(ethtool_map_stat("rx_prio5_buf_discard", &t));
	assert_int_equal(t.field, F_NETDEV_PRIO_RX_BUF_DISCARDS);
	assert_true(ethtool_map_stat("rx_prio5_cong_discard", &t));
	assert_int_equal(t.field, F_NETDEV_PRIO_RX_CONG_DISCARDS);
	assert_true(ethtool_map_stat("rx_prio2_marked", &t));
	assert_int_equal(t.field, F_NETDEV_PRIO_RX_MARKED);
	assert_true(ethtool_map_stat("tx_prio1_bytes", &t));
	assert_int_equal(t.field, F_NETDEV_PRIO_TX_BYTES);
	assert_true(ethtool_map_stat("rx_discards_phy", &t));
	assert_int_equal(t.field, F_NETDEV_RX_DISCARDS_PHY);
	assert_int_equal(t.prio, -1);
	assert_true(ethtool_map_stat("tx_pause_storm_error_events", &t));
	assert_int_equal(t.field, F_NETDEV_PAUSE_STORM_ERROR);
	/* no row: kept only in the counter set */
	assert_false(ethtool_map_stat("tx_prio3_pause_transition", &t)); /* mlx5 has no tx one */
	assert_false(ethtool_map_stat("rx_prio8_pause", &t));
	assert_false(ethtool_map_stat("rx_prio3_pauses", &t));
	assert_false(ethtool_map_stat("rx_prio", &t));
	assert_false(ethtool_map_stat("rx_global_pause", &t));
	assert_int_equal(t.field, -1);
}

struct fake_drv {
	const char *name;
	const char *const *stats;
	unsigned int n;
	uint64_t vals[64];
	int gone;   /* ENODEV on every command */
	int strict; /* recent kernels: a stale requested count gets 0 entries back */
	unsigned int gstats, gstrings, gsset;
};

/* net/ethtool/ioctl.c, as userspace sees it: GSTRINGS/GSTATS write the *current* count */
static int fake_ioctl(void *arg, const char *ifname, void *cmd)
{
	struct fake_drv *f = arg;
	uint32_t c;

	if (f->gone || strcmp(ifname, f->name))
		return -ENODEV;
	memcpy(&c, cmd, sizeof(c));
	switch (c) {
	case ETHTOOL_GDRVINFO: {
		struct ethtool_drvinfo *di = cmd;

		strcpy(di->driver, "mlx5_core");
		strcpy(di->fw_version, "28.39.1002 (MT_0000000838)");
		strcpy(di->bus_info, "0000:17:00.0");
		di->n_stats = f->n;
		return 0;
	}
	case ETHTOOL_GSSET_INFO: {
		struct ethtool_sset_info *si = cmd;
		uint32_t n = f->n;

		f->gsset++;
		si->sset_mask &= 1ULL << ETH_SS_STATS;
		if (si->sset_mask)
			memcpy(si->data, &n, sizeof(n));
		return 0;
	}
	case ETHTOOL_GSTRINGS: {
		struct ethtool_gstrings *gs = cmd;

		f->gstrings++;
		if (f->strict && gs->len && gs->len != f->n) {
			gs->len = 0;
			return 0;
		}
		gs->len = f->n;
		memset(gs->data, 0, (size_t)f->n * ETH_GSTRING_LEN);
		for (unsigned int i = 0; i < f->n; i++)
			strncpy((char *)gs->data + i * ETH_GSTRING_LEN, f->stats[i],
				ETH_GSTRING_LEN);
		return 0;
	}
	case ETHTOOL_GSTATS: {
		struct ethtool_stats *st = cmd;

		f->gstats++;
		if (f->strict && st->n_stats && st->n_stats != f->n) {
			st->n_stats = 0;
			return 0;
		}
		st->n_stats = f->n;
		memcpy(st->data, f->vals, f->n * sizeof(uint64_t));
		return 0;
	}
	case ETHTOOL_GTUNABLE: {
		struct ethtool_tunable *t = cmd;
		uint16_t v = 100; /* "auto" on mlx5 reads back as 100 ms */

		if (t->id != ETHTOOL_PFC_PREVENTION_TOUT || t->len != 2)
			return -EINVAL;
		memcpy((char *)t + sizeof(*t), &v, sizeof(v));
		return 0;
	}
	default:
		return -EOPNOTSUPP;
	}
}

static void set_stats(struct fake_drv *f, const char *const *names, const uint64_t *vals,
		      unsigned int n)
{
	f->stats = names;
	f->n = n;
	memcpy(f->vals, vals, n * sizeof(*vals));
}

/*
 * The other drivers' `ethtool -S` names, as their ethtool.c lays them out
 * (shared/reference/vendors.md §1a): each fills the same per-priority pause
 * and port discard fields, in the same units; dcbnl stands in where a driver
 * has no per-priority frame names (ionic has times only), and
 * roce_pfc_pause_source_info says which source it was.
 */
struct vendor_case {
	const char *what;
	const char *const names[12];
	uint64_t vals[12];
	unsigned int n;
	uint64_t rx3, tx3;   /* pause frames on priority 3, 0 = none of the driver's */
	uint64_t rx3_us;     /* pause time on priority 3 in microseconds, 0 = none */
	int64_t rx_discards; /* port discards, -1 = none */
};

static void vendor_stats(void **state)
{
	static const struct vendor_case cases[] = {
		{ "bnxt_en",
		  { "rx_pfc_ena_frames_pri3", "tx_pfc_ena_frames_pri3", "pfc_pri3_rx_duration_us",
		    "pfc_pri3_tx_duration_us", "rx_stat_discard", "tx_stat_discard",
		    "[0]: rx_discards", "rx_discard_packets_cos3" },
		  { 40, 41, 1500, 1600, 7, 8, 99, 98 },
		  8,
		  40,
		  41,
		  1500,
		  7 },
		/* XON and XOFF are both PFC frames: summed */
		{ "ice",
		  { "rx_priority_3_xon.nic", "rx_priority_3_xoff.nic", "tx_priority_3_xon.nic",
		    "tx_priority_3_xoff.nic", "rx_dropped.nic", "rx_dropped" },
		  { 10, 30, 11, 30, 7, 99 },
		  6,
		  40,
		  41,
		  0,
		  7 },
		{ "hns3",
		  { "mac_rx_pfc_pri3_pkt_num", "mac_tx_pfc_pri3_pkt_num",
		    "mac_rx_pfc_pri3_xoff_time", "rxq0_dropped" },
		  { 40, 41, 1234, 99 },
		  4,
		  40,
		  41,
		  0,
		  -1 },
		/* per traffic class: TC 3 reported as priority 3 */
		{ "mana",
		  { "hc_tc3_rx_pause_phy", "hc_tc3_tx_pause_phy", "hc_rx_pkt_drop_phy",
		    "hc_tx_pkt_drop_phy", "hc_rx_discards_no_wqe" },
		  { 40, 41, 7, 8, 99 },
		  5,
		  40,
		  41,
		  0,
		  7 },
		/* totals only for frames: dcbnl has none either (no dcbnl ops), times per priority
		 */
		{ "ionic",
		  { "frames_rx_pripause", "rx_pripause_3_1us_count", "tx_pripause_3_1us_count",
		    "frames_rx_dropped", "frames_rx_pri_3" },
		  { 99, 1500, 1600, 7, 98 },
		  5,
		  0,
		  0,
		  1500,
		  7 },
	};
	struct rw_config cfg;
	struct collector_ctx cc = { 0 };

	(void)state;
	config_defaults(&cfg);
	cc.cfg = &cfg;
	cc.idx = collector_index("ethtool");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vendor_case *vc = &cases[i];
		struct fake_drv f = { .name = "rwtfake0" };
		struct node_model m;
		struct object *o;

		assert_int_equal(ethtool_collector.init(&cc), 0);
		ethtool_set_ioctl(&cc, fake_ioctl, &f);
		model_init(&m);
		m.obj_free_cb[cc.idx] = ethtool_collector.obj_free;
		o = model_add_netdev(&m, "rwtfake0");
		set_stats(&f, vc->names, vc->vals, vc->n);
		assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_SLOW | COLLECT_FAST),
				 0);
		vendor_fill_netdevs(&m);
		if (vc->rx3) {
			assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].mask, 1 << 3);
			assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].v.arr[3], vc->rx3);
			assert_int_equal(o->f[F_NETDEV_PFC_TX_PAUSE].v.arr[3], vc->tx3);
			assert_string_equal(o->f[F_NETDEV_PFC_SOURCE].v.s, "ethtool");
		} else {
			/* neither the driver nor dcbnl: no series, and no source */
			assert_false(field_present(o, F_NETDEV_PFC_RX_PAUSE));
			assert_false(field_present(o, F_NETDEV_PFC_SOURCE));
		}
		if (vc->rx3_us)
			assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE_DURATION].v.arr[3], vc->rx3_us);
		else
			assert_false(field_present(o, F_NETDEV_PFC_RX_PAUSE_DURATION));
		if (vc->rx_discards >= 0)
			assert_int_equal(o->f[F_NETDEV_RX_DISCARDS_PHY].v.i, vc->rx_discards);
		else
			assert_false(field_present(o, F_NETDEV_RX_DISCARDS_PHY));
		/* no driver stat is mistaken for another meaning */
		assert_false(field_present(o, F_NETDEV_PRIO_RX_DISCARDS));
		assert_false(field_present(o, F_NETDEV_PAUSE_STORM_ERROR));
		model_free(&m);
		ethtool_collector.fini(&cc);
	}
}

/* Without per-priority names of its own, a netdev's pause frames are dcbnl's, and it says so. */
static void pause_from_dcb(void **state)
{
	struct node_model m;
	struct object *o;

	(void)state;
	model_init(&m);
	o = model_add_netdev(&m, "eth0");
	field_absent(o, F_NETDEV_PFC_RX_PAUSE, ABS_UNSUPPORTED, EOPNOTSUPP);
	field_absent(o, F_NETDEV_PFC_TX_PAUSE, ABS_UNSUPPORTED, EOPNOTSUPP);
	field_set_prio(o, F_NETDEV_PFC_INDICATIONS, 3, 40);
	field_set_prio(o, F_NETDEV_PFC_REQUESTS, 3, 41);
	vendor_fill_netdevs(&m);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].v.arr[3], 40);
	assert_int_equal(o->f[F_NETDEV_PFC_TX_PAUSE].v.arr[3], 41);
	assert_string_equal(o->f[F_NETDEV_PFC_SOURCE].v.s, "dcb");
	/* dcbnl gone (its collector failed): the copy goes too, never a stale value */
	field_absent(o, F_NETDEV_PFC_INDICATIONS, ABS_ERROR, EIO);
	field_absent(o, F_NETDEV_PFC_REQUESTS, ABS_ERROR, EIO);
	vendor_fill_netdevs(&m);
	assert_false(field_present(o, F_NETDEV_PFC_RX_PAUSE));
	assert_false(field_present(o, F_NETDEV_PFC_SOURCE));
	/* the driver's own names win */
	field_set_prio(o, F_NETDEV_PFC_INDICATIONS, 3, 40);
	field_set_prio(o, F_NETDEV_PFC_RX_PAUSE, 3, 50);
	field_set_str(o, F_NETDEV_PFC_SOURCE, "ethtool");
	vendor_fill_netdevs(&m);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].v.arr[3], 50);
	model_free(&m);
}

static int cset_val(const struct object *o, const char *name, uint64_t *v)
{
	int i = cset_find(&o->cs[CSET_ETHTOOL], name);

	if (i < 0 || !o->cs[CSET_ETHTOOL].present[i])
		return -1;
	*v = o->cs[CSET_ETHTOOL].vals[i];
	return 0;
}

static void string_set_changes(int strict)
{
	static const char *const a[] = { "rx_vport_unicast_packets", "rx_prio3_pause",
					 "tx_prio3_pause",	     "rx_prio3_pause_duration",
					 "rx_discards_phy",	     "link_down_events_phy" };
	static const uint64_t av[] = { 100, 11, 22, 1500000, 7, 2 };
	/* PFC enabled on 4 as well: mlx5 inserts its counters, shifting every index after them */
	static const char *const b[] = { "rx_vport_unicast_packets", "rx_prio3_pause",
					 "tx_prio3_pause",	     "rx_prio4_pause",
					 "tx_prio4_pause",	     "rx_prio3_pause_duration",
					 "rx_discards_phy",	     "link_down_events_phy" };
	static const uint64_t bv[] = { 150, 12, 23, 40, 41, 1600000, 9, 2 };
	/* PFC off everywhere: the pause counters leave the set */
	static const char *const c[] = { "rx_vport_unicast_packets", "rx_discards_phy",
					 "link_down_events_phy" };
	static const uint64_t cv[] = { 200, 10, 3 };
	struct fake_drv f = { .name = "rwtfake0", .strict = strict };
	struct rw_config cfg;
	struct collector_ctx cc = { 0 };
	struct node_model m;
	struct object *o;
	uint64_t v;

	config_defaults(&cfg);
	cc.cfg = &cfg;
	cc.idx = collector_index("ethtool");
	assert_true(cc.idx >= 0);
	assert_int_equal(ethtool_collector.init(&cc), 0);
	ethtool_set_ioctl(&cc, fake_ioctl, &f);
	model_init(&m);
	m.obj_free_cb[cc.idx] = ethtool_collector.obj_free;
	o = model_add_netdev(&m, "rwtfake0");

	set_stats(&f, a, av, 6);
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_string_equal(o->f[F_NETDEV_DRIVER].v.s, "mlx5_core");
	assert_string_equal(o->f[F_NETDEV_FIRMWARE].v.s, "28.39.1002 (MT_0000000838)");
	assert_string_equal(o->f[F_NETDEV_BUS].v.s, "0000:17:00.0");
	assert_int_equal(o->f[F_NETDEV_PFC_PREVENTION_TOUT].v.i, 100);
	assert_int_equal(o->f[F_NETDEV_SPEED].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].mask, 1 << 3);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].v.arr[3], 11);
	assert_int_equal(o->f[F_NETDEV_PFC_TX_PAUSE].v.arr[3], 22);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE_DURATION].v.arr[3], 1500000);
	assert_int_equal(o->f[F_NETDEV_RX_DISCARDS_PHY].v.i, 7);
	assert_int_equal(o->f[F_NETDEV_LINK_DOWN_EVENTS].v.i, 2);
	assert_int_equal(o->f[F_NETDEV_PFC_TX_PAUSE_DURATION].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_PAUSE_STORM_ERROR].state, ABS_UNSUPPORTED);
	assert_int_equal(cset_val(o, "rx_vport_unicast_packets", &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(f.gstats, 1);
	assert_int_equal(f.gstrings, 1);

	/* a steady fast poll: exactly one GSTATS, no strings, no count query */
	unsigned int gsset = f.gsset;

	f.vals[1] = 13;
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_FAST), 0);
	assert_int_equal(f.gstats, 2);
	assert_int_equal(f.gstrings, 1);
	assert_int_equal(f.gsset, gsset);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].v.arr[3], 13);

	/* the set grew between polls: re-read once, values land on the right fields */
	set_stats(&f, b, bv, 8);
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_FAST), 0);
	assert_int_equal(f.gstrings, 2);
	assert_int_equal(f.gstats, 4); /* the stale one and the re-read */
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].mask, (1 << 3) | (1 << 4));
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].v.arr[4], 40);
	assert_int_equal(o->f[F_NETDEV_PFC_TX_PAUSE].v.arr[4], 41);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE_DURATION].v.arr[3], 1600000);
	assert_int_equal(o->f[F_NETDEV_RX_DISCARDS_PHY].v.i, 9);
	assert_int_equal(o->cs[CSET_ETHTOOL].n, 8);
	assert_int_equal(cset_val(o, "tx_prio4_pause", &v), 0);
	assert_int_equal(v, 41);

	/*
	 * PFC moved from 4 to 5: same count, other names.  The slow poll reads the
	 * names again (a DCB change triggers one at once), so 5 is labelled 5.
	 */
	static const char *const b5[] = { "rx_vport_unicast_packets", "rx_prio3_pause",
					  "tx_prio3_pause",	      "rx_prio5_pause",
					  "tx_prio5_pause",	      "rx_prio3_pause_duration",
					  "rx_discards_phy",	      "link_down_events_phy" };
	static const uint64_t b5v[] = { 160, 12, 23, 50, 51, 1600000, 9, 2 };

	set_stats(&f, b5, b5v, 8);
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].mask, (1 << 3) | (1 << 5));
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].v.arr[5], 50);
	assert_int_equal(o->f[F_NETDEV_PFC_TX_PAUSE].v.arr[5], 51);
	assert_int_equal(cset_val(o, "rx_prio4_pause", &v), -1);

	/* ... and shrank: the pause fields become absent, never 0 */
	set_stats(&f, c, cv, 3);
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_FAST), 0);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_PFC_RX_PAUSE].mask, 0);
	assert_int_equal(o->f[F_NETDEV_RX_DISCARDS_PHY].v.i, 10);
	assert_int_equal(o->cs[CSET_ETHTOOL].n, 3);
	assert_int_equal(cset_val(o, "tx_prio4_pause", &v), -1);

	/* the device vanished after the listing: absent with the reason, the poll goes on */
	f.gone = 1;
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_FAST), 0);
	assert_int_equal(o->f[F_NETDEV_RX_DISCARDS_PHY].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_RX_DISCARDS_PHY].err, ENODEV);
	assert_int_equal(cset_val(o, "rx_discards_phy", &v), -1);
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_SLOW | COLLECT_FAST), 0);
	assert_int_equal(o->f[F_NETDEV_DRIVER].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_DRIVER].err, ENODEV);
	assert_int_equal(o->f[F_NETDEV_PAUSE_RX].err, ENODEV);

	model_free(&m);
	ethtool_collector.fini(&cc);
}

/* Kernels that write the current count whatever was asked (before ~6.x). */
static void ethtool_string_set_changes_old_kernel(void **state)
{
	(void)state;
	string_set_changes(0);
}

/* Kernels that answer a stale count with 0 entries (seen on 6.18). */
static void ethtool_string_set_changes_new_kernel(void **state)
{
	(void)state;
	string_set_changes(1);
}

/* A stats set that outgrows its buffer must hit the guard page, not the heap. */
static void guard_page_stops_overrun(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), maplen = 0;
	char *p = guarded_alloc(100, &maplen);
	char *src = malloc(3 * page);
	int fd = memfd_create("rwt", 0);
	ssize_t n;

	(void)state;
	if (getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "vgpreload")) {
		/* valgrind rightly reports the write into the guard page this test makes */
		guarded_free(p, maplen);
		free(src);
		close(fd);
		skip();
	}
	assert_non_null(p);
	assert_int_equal(maplen, 2 * page);
	memset(src, 0xab, 3 * page);
	assert_int_equal(write(fd, src, 3 * page), (ssize_t)(3 * page));
	/* read() is a copy_to_user like the GSTATS ioctl's: it stops at the guard */
	n = pread(fd, p, 3 * page, 0);
	assert_true(n < 0 ? errno == EFAULT : (size_t)n <= page);
	guarded_free(p, maplen);
	free(src);
	close(fd);
}

/* ---- qos_sysfs: file formats ---- */

static void qos_formats(void **state)
{
	char t[8];
	int8_t map[64];
	int64_t v;

	(void)state;
	assert_int_equal(qos_parse_trust("dscp", t, sizeof(t)), 0);
	assert_string_equal(t, "dscp");
	assert_int_equal(qos_parse_trust("Priority trust state: pcp", t, sizeof(t)), 0);
	assert_string_equal(t, "pcp");
	assert_int_equal(qos_parse_trust("none", t, sizeof(t)), -EINVAL);
	assert_int_equal(qos_parse_trust("dscp pcp", t, sizeof(t)), -EINVAL);

	assert_int_equal(qos_parse_dscp2prio("dscp2prio mapping:\n0 0\n26 3\n48 6\n", map), 0);
	assert_int_equal(map[26], 3);
	assert_int_equal(map[48], 6);
	assert_int_equal(map[1], -1);
	assert_int_equal(qos_parse_dscp2prio("\tprio:1 dscp:15,14,13,12,11,10,09,08,\n", map), 0);
	assert_int_equal(map[8], 1); /* "08": decimal, not a bad octal */
	assert_int_equal(map[9], 1);
	assert_int_equal(map[15], 1);
	assert_int_equal(map[16], -1);
	assert_int_equal(qos_parse_dscp2prio("hdr\n64 1\n", map), -ERANGE);
	assert_int_equal(qos_parse_dscp2prio("hdr\n3 8\n", map), -ERANGE);
	assert_int_equal(qos_parse_dscp2prio("hdr\n3 1\ngarbage\n", map), -EINVAL);
	assert_int_equal(qos_parse_dscp2prio("hdr\n3 1 9\n", map), -EINVAL);
	assert_int_equal(qos_parse_dscp2prio("dscp2prio mapping:\n", map), -ENODATA);

	assert_int_equal(qos_parse_tclass("Global tclass=106\n", &v), 0);
	assert_int_equal(v, 106);
	assert_int_equal(qos_parse_tclass("Global tclass=96\ndst_ip=10.0.0.0/24,tclass=104\n", &v),
			 0);
	assert_int_equal(v, 96);
	assert_int_equal(qos_parse_tclass("106", &v), 0);
	assert_int_equal(v, 106);
	assert_int_equal(qos_parse_tclass("dst_ip=10.0.0.0/24,tclass=104\n", &v), -ENODATA);
	assert_int_equal(qos_parse_tclass("", &v), -ENODATA);
	assert_int_equal(qos_parse_tclass("Global tclass=300\n", &v), -EINVAL);
	assert_int_equal(qos_parse_tclass("Global tclass=1x\n", &v), -EINVAL);
}

/* ---- qos_sysfs on fixture trees ---- */

struct roots {
	char sys[PATH_MAX], conf[PATH_MAX], dbg[PATH_MAX];
};

static void qos_run_what(const char *root, struct node_model *m, struct roots *r, unsigned int what)
{
	struct rw_config cfg;
	struct collector_ctx cc = { 0 };

	snprintf(r->sys, sizeof(r->sys), "%s/sys", root);
	snprintf(r->conf, sizeof(r->conf), "%s/config", root);
	snprintf(r->dbg, sizeof(r->dbg), "%s/debug", root);
	config_defaults(&cfg);
	cfg.sysfs_root = r->sys;
	cfg.configfs_root = r->conf;
	cfg.debugfs_root = r->dbg;
	cc.cfg = &cfg;
	cc.idx = collector_index("qos_sysfs");
	assert_true(cc.idx >= 0);
	assert_int_equal(qos_sysfs_collector.collect(&cc, m, what), 0);
}

static void qos_run(const char *root, struct node_model *m, struct roots *r)
{
	qos_run_what(root, m, r, COLLECT_SLOW);
}

static uint64_t cc_param(const struct object *o, const char *name)
{
	int i = cset_find(&o->cs[CSET_CC], name);

	assert_true(i >= 0);
	assert_true(o->cs[CSET_CC].present[i]);
	return o->cs[CSET_CC].vals[i];
}

static unsigned int cc_present(const struct object *o)
{
	unsigned int n = 0;

	for (uint32_t i = 0; i < o->cs[CSET_CC].n; i++)
		n += o->cs[CSET_CC].present[i];
	return n;
}

static void qos_ofed_tree(void **state)
{
	char root[PATH_MAX];
	struct node_model m;
	struct object *e2, *e3, *p0, *p1;
	struct roots r;

	(void)state;
	snprintf(root, sizeof(root), "%s/mlx5-ofed", fixtures);
	model_init(&m);
	e2 = model_add_netdev(&m, "eth2");
	e3 = model_add_netdev(&m, "eth3");
	p0 = model_add_port(&m, "mlx5_0", 1);
	p1 = model_add_port(&m, "mlx5_1", 1);
	/* what dcb derived from the APP table; MLNX_OFED's own files must win */
	field_set_str(e2, F_NETDEV_TRUST, "pcp");
	/* configuration only: a fast poll reads no file */
	qos_run_what(root, &m, &r, COLLECT_FAST);
	assert_int_equal(e2->f[F_NETDEV_ECN_NP].state, ABS_NOT_COLLECTED);
	assert_int_equal(p0->f[F_PORT_ROCE_TOS].state, ABS_NOT_COLLECTED);
	qos_run(root, &m, &r);

	assert_string_equal(e2->f[F_NETDEV_TRUST].v.s, "dscp");
	assert_int_equal(e2->f[F_NETDEV_DSCP_MAP].v.dscp[26], 3);
	assert_int_equal(e2->f[F_NETDEV_DSCP_MAP].v.dscp[30], 6); /* the one non-default entry */
	assert_int_equal(e2->f[F_NETDEV_DSCP_MAP].v.dscp[48], 6);
	assert_int_equal(e2->f[F_NETDEV_DSCP_MAP].v.dscp[63], 7);
	assert_int_equal(e2->f[F_NETDEV_ECN_NP].v.set, 1 << 3);
	assert_int_equal(e2->f[F_NETDEV_ECN_RP].v.set, 1 << 3);
	assert_int_equal(e2->f[F_NETDEV_CNP_DSCP].v.i, 48);
	assert_int_equal(e2->f[F_NETDEV_CNP_PRIO].v.i, 6);
	assert_int_equal(cc_param(e2, "np_cnp_dscp"), 48);
	assert_int_equal(cc_param(e2, "np_min_time_between_cnps"), 4);
	assert_int_equal(cc_param(e2, "rp_rpg_ai_rate"), 5);
	assert_int_equal(cc_param(e2, "rp_initial_alpha_value"), 1023);
	assert_int_equal(cc_present(e2), 3 + 16);

	assert_string_equal(e3->f[F_NETDEV_TRUST].v.s, "pcp"); /* "Priority trust state: pcp" */
	assert_int_equal(e3->f[F_NETDEV_DSCP_MAP].v.dscp[26], 5);
	assert_int_equal(e3->f[F_NETDEV_DSCP_MAP].v.dscp[8], 1);
	assert_int_equal(e3->f[F_NETDEV_DSCP_MAP].v.dscp[27], 3);
	/* enable/5 read back empty: the whole set is unknown, with the reason */
	assert_int_equal(e3->f[F_NETDEV_ECN_NP].state, ABS_ERROR);
	assert_int_equal(e3->f[F_NETDEV_ECN_NP].err, ENODATA);
	assert_int_equal(e3->f[F_NETDEV_ECN_RP].v.set, 0);
	assert_int_equal(e3->f[F_NETDEV_ECN_RP].state, ABS_NONE);
	assert_int_equal(e3->f[F_NETDEV_CNP_DSCP].state, ABS_UNSUPPORTED); /* "N/A" */
	assert_int_equal(e3->f[F_NETDEV_CNP_PRIO].v.i, 6);

	assert_int_equal(p0->f[F_PORT_ROCE_TOS].v.i, 106);
	assert_string_equal(p0->f[F_PORT_ROCE_MODE].v.s, "RoCE v2");
	assert_int_equal(p0->f[F_PORT_TRAFFIC_CLASS].v.i, 106);
	/* no rdma_cm group made for mlx5_1, and only a per-destination tclass rule */
	assert_int_equal(p1->f[F_PORT_ROCE_TOS].state, ABS_UNSUPPORTED);
	assert_int_equal(p1->f[F_PORT_ROCE_TOS].err, ENOENT);
	assert_int_equal(p1->f[F_PORT_ROCE_MODE].state, ABS_UNSUPPORTED);
	assert_int_equal(p1->f[F_PORT_TRAFFIC_CLASS].state, ABS_UNSUPPORTED);
	assert_int_equal(p1->f[F_PORT_TRAFFIC_CLASS].err, ENODATA);
	model_free(&m);
}

/* bnxt_re's cc_config/ and hns_roce's dcqcn_cc_param/ (7.2 debugfs), found by the device link */
static void qos_vendor_cc(void **state)
{
	char root[PATH_MAX];
	struct node_model m;
	struct object *nd;
	struct roots r;

	(void)state;
	snprintf(root, sizeof(root), "%s/vendors/cc-bnxt_re-7.2", fixtures);
	model_init(&m);
	nd = model_add_netdev(&m, "ens2f0np0");
	qos_run(root, &m, &r);
	/* the CNP ("alt") DSCP and priority feed the same fields as mlx5's np_cnp_* */
	assert_int_equal(nd->f[F_NETDEV_CNP_DSCP].v.i, 48);
	assert_int_equal(nd->f[F_NETDEV_CNP_PRIO].v.i, 6);
	assert_int_equal(cc_param(nd, "enable_cc"), 1);
	assert_int_equal(cc_param(nd, "tos_ecn"), 1);
	assert_int_equal(cc_present(nd), 9);
	model_free(&m);

	snprintf(root, sizeof(root), "%s/vendors/cc-hns_roce-7.2", fixtures);
	model_init(&m);
	nd = model_add_netdev(&m, "enp189s0f0");
	qos_run(root, &m, &r);
	assert_int_equal(cc_param(nd, "cnp_time"), 4);
	assert_int_equal(cc_present(nd), 10);
	/* hns_roce shows no CNP marking: absent, never 0 */
	assert_int_equal(nd->f[F_NETDEV_CNP_DSCP].state, ABS_UNSUPPORTED);
	assert_int_equal(nd->f[F_NETDEV_CNP_PRIO].state, ABS_UNSUPPORTED);
	model_free(&m);
}

static void qos_upstream_tree(void **state)
{
	char root[PATH_MAX];
	struct node_model m;
	struct object *nd, *p0;
	struct roots r;
	int8_t map[64];

	(void)state;
	snprintf(root, sizeof(root), "%s/mlx5-upstream", fixtures);
	model_init(&m);
	nd = model_add_netdev(&m, "enp23s0f0np0");
	p0 = model_add_port(&m, "mlx5_0", 1);
	/* dcb's result stands on upstream: there is no qos/ directory */
	memset(map, -1, sizeof(map));
	map[26] = 3;
	field_set_dscp_map(nd, F_NETDEV_DSCP_MAP, map);
	field_set_str(nd, F_NETDEV_TRUST, "dscp");
	qos_run(root, &m, &r);

	assert_string_equal(nd->f[F_NETDEV_TRUST].v.s, "dscp");
	assert_int_equal(nd->f[F_NETDEV_DSCP_MAP].v.dscp[26], 3);
	assert_int_equal(nd->f[F_NETDEV_DSCP_MAP].v.dscp[27], -1);
	/* upstream has no per-priority ECN switch */
	assert_int_equal(nd->f[F_NETDEV_ECN_NP].state, ABS_UNSUPPORTED);
	assert_int_equal(nd->f[F_NETDEV_ECN_NP].err, ENOENT);
	assert_int_equal(nd->f[F_NETDEV_ECN_RP].state, ABS_UNSUPPORTED);
	/* CNP settings from debugfs cc_params, found through the device link */
	assert_int_equal(nd->f[F_NETDEV_CNP_DSCP].v.i, 48);
	assert_int_equal(nd->f[F_NETDEV_CNP_PRIO].v.i, 6);
	assert_int_equal(cc_present(nd), 20);
	assert_int_equal(cc_param(nd, "np_cnp_prio_mode"), 0);
	assert_int_equal(cc_param(nd, "rp_byte_reset"), 32767);

	assert_int_equal(p0->f[F_PORT_ROCE_TOS].v.i, 106);
	assert_string_equal(p0->f[F_PORT_ROCE_MODE].v.s, "RoCE v2");
	assert_int_equal(p0->f[F_PORT_TRAFFIC_CLASS].state, ABS_UNSUPPORTED);
	assert_int_equal(p0->f[F_PORT_TRAFFIC_CLASS].err, ENOENT);
	model_free(&m);
}

/* Capture what the collectors log while fn runs. */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
	char path[] = "/tmp/rwt-log-XXXXXX", *out = NULL;
	int fd = mkstemp(path), saved = dup(2);

	fflush(stderr);
	dup2(fd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fd);
	read_file_all(path, &out, NULL);
	unlink(path);
	return out;
}

static unsigned int count(const char *hay, const char *needle)
{
	unsigned int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

struct poll3 {
	const char *root;
	struct node_model *m;
};

static void poll_three_times(void *arg)
{
	struct poll3 *p = arg;
	struct roots r;

	for (int i = 0; i < 3; i++)
		qos_run(p->root, p->m, &r);
}

static void qos_logs_once(void **state)
{
	char root[PATH_MAX], *log;
	struct node_model m;
	struct poll3 p = { root, &m };

	(void)state;
	log_set_level(LOG_LVL_INFO);
	snprintf(root, sizeof(root), "%s/mlx5-ofed", fixtures);
	model_init(&m);
	model_add_netdev(&m, "eth3");
	model_add_port(&m, "mlx5_1", 1);
	log = capture_stderr(poll_three_times, &p);
	assert_non_null(log);
	assert_int_equal(count(log, "eth3: ecn/roce_np/enable/5"), 1);
	/* "N/A", no rdma_cm group, no global tclass: normal, never logged */
	assert_int_equal(count(log, "cnp_dscp"), 0);
	assert_int_equal(count(log, "rdma_cm"), 0);
	assert_int_equal(count(log, "traffic_class"), 0);
	free(log);
	model_free(&m);
}

/* A file whose read() fails, the way a sysfs show() returning -EINVAL does. */
static void qos_read_error(void **state)
{
	char tmpl[] = "/tmp/rwt-qos-XXXXXX", path[PATH_MAX];
	const char *dir = mkdtemp(tmpl);
	struct node_model m;
	struct object *o;
	struct roots r;
	int fd;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path),
		 "mkdir -p %s/sys/class/net/eth9/qos %s/sys/class/net/eth9/ecn/roce_np/enable", dir,
		 dir);
	assert_int_equal(system(path), 0);
	/* /proc/self/clear_refs has no read method: read() is EINVAL (EACCES if not root) */
	snprintf(path, sizeof(path), "%s/sys/class/net/eth9/qos/trust", dir);
	assert_int_equal(symlink("/proc/self/clear_refs", path), 0);
	for (int p = 0; p < 8; p++) {
		snprintf(path, sizeof(path), "%s/sys/class/net/eth9/ecn/roce_np/enable/%d", dir, p);
		fd = open(path, O_CREAT | O_WRONLY, 0644);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, p == 2 ? "2\n" : "0\n", 2), 2); /* 2: not a bool */
		close(fd);
	}
	model_init(&m);
	o = model_add_netdev(&m, "eth9");
	field_set_str(o, F_NETDEV_TRUST, "dscp");
	qos_run(dir, &m, &r);
	if (geteuid() == 0) {
		assert_int_equal(o->f[F_NETDEV_TRUST].state, ABS_ERROR);
		assert_int_equal(o->f[F_NETDEV_TRUST].err, EINVAL);
	} else {
		assert_int_equal(o->f[F_NETDEV_TRUST].state, ABS_PERMISSION);
	}
	assert_int_equal(o->f[F_NETDEV_ECN_NP].state, ABS_ERROR);
	assert_int_equal(o->f[F_NETDEV_ECN_NP].err, EINVAL);
	model_free(&m);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

/* ---- exposition of everything these collectors fill ---- */

static void exposition(void **state)
{
	static const char *const names[] = { "rx_prio3_pause", "tx_prio3_pause",
					     "rx_prio3_pause_duration",
					     "tx_pause_storm_warning_events", "rx_discards_phy" };
	static const uint64_t vals[] = { 1234, 99, 1500000, 2, 7 };
	struct fake_drv f = { .name = "eth2" };
	char buf[4096], err[160], root[PATH_MAX], path[] = "/tmp/rwt-prom-XXXXXX",
						  cmd[PATH_MAX + 64];
	struct prom_renderer pr = { 0 };
	struct strbuf out = { 0 };
	struct prom_input in = { 0 };
	struct collector_ctx cc = { 0 };
	struct rw_config cfg;
	struct node_model m;
	struct object *o;
	struct ethtool_pause p;
	struct dcb_ieee d;
	struct roots r;
	int fd;

	(void)state;
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	model_add_netdev(&m, "eth3");
	model_add_port(&m, "mlx5_0", 1);
	assert_int_equal(dcb_parse_ieee(buf, build_ieee(buf, IEEE_MLX5), &d, err, sizeof(err)), 0);
	dcb_fill(o, &d, true);
	assert_int_equal(ethtool_parse_pause(buf, build_pause(buf, true, false), ETHTOOL_FAMILY, &p,
					     err, sizeof(err)),
			 0);
	ethtool_fill_pause(o, &p);
	config_defaults(&cfg);
	cc.cfg = &cfg;
	cc.idx = collector_index("ethtool");
	assert_int_equal(ethtool_collector.init(&cc), 0);
	ethtool_set_ioctl(&cc, fake_ioctl, &f);
	m.obj_free_cb[cc.idx] = ethtool_collector.obj_free;
	set_stats(&f, names, vals, 5);
	assert_int_equal(ethtool_collector.collect(&cc, &m, COLLECT_FAST), 0);
	snprintf(root, sizeof(root), "%s/mlx5-ofed", fixtures);
	qos_run(root, &m, &r);

	in.m = &m;
	assert_int_equal(prom_render(&pr, &out, &in), 0);
	/* configuration as metrics */
	assert_non_null(strstr(out.buf, "roce_pfc_enabled{device=\"eth2\",priority=\"3\"} 1\n"));
	assert_non_null(strstr(out.buf, "roce_pfc_enabled{device=\"eth2\",priority=\"4\"} 0\n"));
	assert_non_null(strstr(out.buf, "roce_dscp_priority{device=\"eth2\",dscp=\"26\"} 3\n"));
	assert_non_null(strstr(out.buf, "roce_dscp_priority{device=\"eth2\",dscp=\"48\"} 6\n"));
	assert_non_null(strstr(out.buf, "roce_qos_trust_info{device=\"eth2\",trust=\"dscp\"} 1\n"));
	assert_non_null(
	    strstr(out.buf, "roce_dcbx_mode_info{device=\"eth2\",mode=\"host,ieee\"} 1\n"));
	assert_non_null(
	    strstr(out.buf, "roce_pause_enabled{device=\"eth2\",direction=\"rx\"} 1\n"));
	assert_non_null(
	    strstr(out.buf, "roce_ecn_enabled{device=\"eth2\",role=\"np\",priority=\"3\"} 1\n"));
	assert_non_null(strstr(out.buf, "roce_cnp_dscp{device=\"eth2\"} 48\n"));
	/* kbit/s as bytes/s: 25 Gbit/s, 800 Mbit/s, and 0 for no limit */
	assert_non_null(
	    strstr(out.buf, "roce_ets_tc_max_rate_bytes{device=\"eth2\",tc=\"3\"} 3125000000\n"));
	assert_non_null(
	    strstr(out.buf, "roce_ets_tc_max_rate_bytes{device=\"eth2\",tc=\"1\"} 100000000\n"));
	assert_non_null(
	    strstr(out.buf, "roce_ets_tc_max_rate_bytes{device=\"eth2\",tc=\"0\"} 0\n"));
	assert_non_null(
	    strstr(out.buf, "roce_dcqcn_param{device=\"eth2\",param=\"np_cnp_dscp\"} 48\n"));
	assert_non_null(strstr(out.buf, "roce_rdma_cm_default_tos{device=\"mlx5_0\",port=\"1\""));
	/* counters with labels, in base units */
	assert_non_null(strstr(
	    out.buf,
	    "roce_pfc_pause_frames_total{device=\"eth2\",direction=\"rx\",priority=\"3\"} 1234\n"));
	assert_non_null(strstr(out.buf, "roce_pfc_pause_duration_seconds_total{device=\"eth2\","
					"direction=\"rx\",priority=\"3\"} 1.5\n"));
	assert_non_null(
	    strstr(out.buf, "roce_pfc_requests_total{device=\"eth2\",priority=\"3\"} 1234\n"));
	assert_non_null(strstr(out.buf, "roce_pause_frames_total{device=\"eth2\",direction=\"tx\"} "
					"123456789012\n"));
	assert_non_null(strstr(out.buf, "roce_pfc_pause_storm_events_total{device=\"eth2\","
					"level=\"warning\"} 2\n"));
	assert_non_null(
	    strstr(out.buf, "roce_port_discards_total{device=\"eth2\",direction=\"rx\"} 7\n"));
	/* absent is never 0: eth3's unreadable ECN set and "N/A" CNP DSCP leave no sample */
	assert_null(strstr(out.buf, "roce_ecn_enabled{device=\"eth3\",role=\"np\""));
	assert_null(strstr(out.buf, "roce_cnp_dscp{device=\"eth3\"}"));
	assert_null(strstr(out.buf, "roce_pfc_pause_frames_total{device=\"eth2\",direction=\"rx\","
				    "priority=\"4\"}"));
	assert_null(strstr(out.buf, "rx_prio3_pause")); /* never a name in a metric */

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, out.buf, out.len), (ssize_t)out.len);
	close(fd);
	if (system("command -v promtool >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s >&2", path);
		assert_int_equal(system(cmd), 0);
	}
	if (!getenv("RWT_KEEP"))
		unlink(path);
	else
		fprintf(stderr, "exposition kept in %s\n", path);
	sb_free(&out);
	prom_renderer_free(&pr);
	model_free(&m);
	ethtool_collector.fini(&cc);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dcb_mlx5_port),
		cmocka_unit_test(dcb_no_dscp_is_pcp_and_no_dcbx),
		cmocka_unit_test(dcb_gdcbx_reply),
		cmocka_unit_test(dcb_rejects_bad_sizes),
		cmocka_unit_test(dcb_rejects_truncation),
		cmocka_unit_test(dcb_notifications),
		cmocka_unit_test(pause_global_on),
		cmocka_unit_test(pause_wrong_width),
		cmocka_unit_test(genl_family_reply),
		cmocka_unit_test(stat_map),
		cmocka_unit_test(vendor_stats),
		cmocka_unit_test(pause_from_dcb),
		cmocka_unit_test(ethtool_string_set_changes_old_kernel),
		cmocka_unit_test(ethtool_string_set_changes_new_kernel),
		cmocka_unit_test(guard_page_stops_overrun),
		cmocka_unit_test(qos_formats),
		/* first on eth3: the log-once keys live as long as the process */
		cmocka_unit_test(qos_logs_once),
		cmocka_unit_test(qos_ofed_tree),
		cmocka_unit_test(qos_upstream_tree),
		cmocka_unit_test(qos_vendor_cc),
		cmocka_unit_test(qos_read_error),
		cmocka_unit_test(exposition),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES/sysfs\n", argv[0]);
		return 2;
	}
	fixtures = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
