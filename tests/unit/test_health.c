// SPDX-License-Identifier: MIT
/*
 * Link health facts on real bytes: FEC replies, RTM_NEWLINK carrier counts
 * and RDMA_NLDEV_CMD_STAT_GET_STATUS built as the kernel lays them out
 * (nlmsg_build.h); the mlx5 PHY/PCIe stat names; the pre-FEC BER across
 * time, a counter reset and a link without speed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

#include "engine.h"
#include "helpers.h"
#include "netdev.h"
#include "nlmsg_build.h"
#include "rdma.h"

#define FAMILY 0x15
#define SEC    1000000000LL

static void fec_per_lane(void **state)
{
	struct ethtool_fec f;
	struct msgbuf mb;
	struct node_model m;
	struct object *o;
	char err[160] = "";
	size_t len;

	(void)state;
	for (int pad = 0; pad < 2; pad++) {
		len = fec_msg(&mb, FAMILY, ETHTOOL_LINK_MODE_FEC_RS_BIT, 4, false, pad);
		assert_int_equal(ethtool_parse_fec(mb.b, len, FAMILY, &f, err, sizeof(err)), 0);
		assert_true(f.have_active);
		assert_int_equal(f.active, ETHTOOL_LINK_MODE_FEC_RS_BIT);
		assert_int_equal(f.corrected.n, 5);
		assert_int_equal(f.corrected.v[0], 10000000);
		assert_int_equal(f.corrected.v[4], 4000000);
		assert_int_equal(f.uncorrectable.v[0], 6);
		assert_int_equal(f.corrected_bits.v[2], 6000000);
	}
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	ethtool_fill_fec(o, &f, 0);
	assert_string_equal(o->f[F_NETDEV_FEC_ACTIVE].v.s, "rs");
	assert_int_equal(o->f[F_NETDEV_FEC_CORRECTED].v.i, 10000000);
	assert_int_equal(o->f[F_NETDEV_FEC_UNCORRECTABLE].v.i, 6);
	assert_int_equal(o->f[F_NETDEV_FEC_CORRECTED_BITS].v.i, 30000000);
	assert_int_equal(o->f[F_NETDEV_FEC_LANE_CORRECTED].mask, 0x0f);
	assert_int_equal(o->f[F_NETDEV_FEC_LANE_CORRECTED].v.arr[0], 1000000);
	assert_int_equal(o->f[F_NETDEV_FEC_LANE_UNCORRECTABLE].v.arr[3], 3);

	/* totals only, and a driver that keeps no corrected bits (an empty array) */
	len = fec_msg(&mb, FAMILY, ETHTOOL_LINK_MODE_FEC_BASER_BIT, 0, true, false);
	assert_int_equal(ethtool_parse_fec(mb.b, len, FAMILY, &f, err, sizeof(err)), 0);
	ethtool_fill_fec(o, &f, 0);
	assert_string_equal(o->f[F_NETDEV_FEC_ACTIVE].v.s, "baser");
	assert_int_equal(o->f[F_NETDEV_FEC_CORRECTED].v.i, 123456789012LL);
	assert_int_equal(o->f[F_NETDEV_FEC_LANE_CORRECTED].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_FEC_CORRECTED_BITS].state, ABS_UNSUPPORTED);

	/* no active mode reported: absent, not "off" */
	len = fec_msg(&mb, FAMILY, 0, 0, false, false);
	assert_int_equal(ethtool_parse_fec(mb.b, len, FAMILY, &f, err, sizeof(err)), 0);
	ethtool_fill_fec(o, &f, 0);
	assert_int_equal(o->f[F_NETDEV_FEC_ACTIVE].state, ABS_UNSUPPORTED);

	/* a request that failed: every FEC field absent with its errno */
	ethtool_fill_fec(o, &f, -EOPNOTSUPP);
	assert_int_equal(o->f[F_NETDEV_FEC_CORRECTED].state, ABS_UNSUPPORTED);
	ethtool_fill_fec(o, &f, -EPERM);
	assert_int_equal(o->f[F_NETDEV_FEC_CORRECTED].state, ABS_PERMISSION);
	model_free(&m);
}

static void fec_malformed(void **state)
{
	struct ethtool_fec f;
	struct msgbuf mb;
	struct nlmsghdr *nlh;
	struct nlattr *st;
	char err[160] = "";
	size_t len;

	(void)state;
	len = fec_msg(&mb, FAMILY, ETHTOOL_LINK_MODE_FEC_RS_BIT, 2, false, false);
	assert_int_equal(ethtool_parse_fec(mb.b, len, FAMILY + 1, &f, err, sizeof(err)), -EBADMSG);
	((struct nlmsghdr *)mb.b)->nlmsg_len = (uint32_t)(len - 5);
	assert_int_equal(ethtool_parse_fec(mb.b, len - 5, FAMILY, &f, err, sizeof(err)), -EBADMSG);

	/* an array that is not whole u64s */
	nlh = msg(&mb, FAMILY);
	((struct genlmsghdr *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct genlmsghdr)))->cmd =
	    ETHTOOL_MSG_FEC_GET_REPLY;
	st = mnl_attr_nest_start(nlh, ETHTOOL_A_FEC_STATS);
	mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_CORRECTED, 12, "twelve bytes");
	mnl_attr_nest_end(nlh, st);
	err[0] = '\0';
	assert_int_equal(ethtool_parse_fec(mb.b, nlh->nlmsg_len, FAMILY, &f, err, sizeof(err)),
			 -EBADMSG);
	assert_non_null(strstr(err, "ETHTOOL_A_FEC_STAT_CORRECTED"));

	/* more than a total and 8 lanes */
	nlh = msg(&mb, FAMILY);
	((struct genlmsghdr *)mnl_nlmsg_put_extra_header(nlh, sizeof(struct genlmsghdr)))->cmd =
	    ETHTOOL_MSG_FEC_GET_REPLY;
	st = mnl_attr_nest_start(nlh, ETHTOOL_A_FEC_STATS);
	{
		uint64_t ten[10] = { 0 };

		mnl_attr_put(nlh, ETHTOOL_A_FEC_STAT_UNCORR, sizeof(ten), ten);
	}
	mnl_attr_nest_end(nlh, st);
	assert_int_equal(ethtool_parse_fec(mb.b, nlh->nlmsg_len, FAMILY, &f, err, sizeof(err)),
			 -EBADMSG);
}

static void phy_stat_names(void **state)
{
	struct ethtool_stat_target t;

	(void)state;
	assert_true(ethtool_map_stat("rx_corrected_bits_phy", &t));
	assert_int_equal(t.field, F_NETDEV_PHY_CORRECTED_BITS);
	assert_true(ethtool_map_stat("rx_pcs_symbol_err_phy", &t));
	assert_int_equal(t.field, F_NETDEV_PHY_SYMBOL_ERRORS);
	assert_true(ethtool_map_stat("rx_err_lane_3_phy", &t));
	assert_int_equal(t.field, F_NETDEV_PHY_LANE_ERRORS);
	assert_int_equal(t.prio, 3);
	assert_false(ethtool_map_stat("rx_err_lane_8_phy", &t));
	assert_false(ethtool_map_stat("rx_err_lane_3_phyx", &t));
	assert_true(ethtool_map_stat("outbound_pci_stalled_wr_events", &t));
	assert_int_equal(t.field, F_NETDEV_PCI_STALLED_WR_EVENTS);
	assert_true(ethtool_map_stat("outbound_pci_stalled_rd", &t));
	assert_int_equal(t.field, F_NETDEV_PCI_STALLED_RD);
}

static void ber_over_time(void **state)
{
	struct ber_state b = { 0 };
	struct node_model m;
	struct object *o;

	(void)state;
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	/* no corrected-bits counter at all: unsupported, with the FEC reason */
	field_absent(o, F_NETDEV_FEC_CORRECTED_BITS, ABS_UNSUPPORTED, EOPNOTSUPP);
	field_absent(o, F_NETDEV_PHY_CORRECTED_BITS, ABS_UNSUPPORTED, EOPNOTSUPP);
	field_set_int(o, F_NETDEV_SPEED, 100000);
	ethtool_ber_update(&b, o, 0);
	assert_int_equal(o->f[F_NETDEV_PRE_FEC_BER].state, ABS_UNSUPPORTED);

	/* mlx5's PHY counter stands in for FEC's: 100 Gb/s, 1000 bits over 10 s -> 1e-9 */
	field_set_int(o, F_NETDEV_PHY_CORRECTED_BITS, 5000);
	ethtool_ber_update(&b, o, 1 * SEC);
	assert_int_equal(o->f[F_NETDEV_PRE_FEC_BER].state, ABS_NO_DATA);
	field_set_int(o, F_NETDEV_PHY_CORRECTED_BITS, 5500);
	ethtool_ber_update(&b, o, 6 * SEC);
	assert_int_equal(o->f[F_NETDEV_PRE_FEC_BER].state, ABS_NO_DATA);
	field_set_int(o, F_NETDEV_PHY_CORRECTED_BITS, 6000);
	ethtool_ber_update(&b, o, 11 * SEC);
	assert_int_equal(o->f[F_NETDEV_PRE_FEC_BER].state, ABS_NONE);
	assert_float_equal(o->f[F_NETDEV_PRE_FEC_BER].v.d, 1e-9, 1e-15);

	/* the window slides: 25 s later the ratio covers the last 10-20 s only */
	field_set_int(o, F_NETDEV_PHY_CORRECTED_BITS, 6000);
	ethtool_ber_update(&b, o, 21 * SEC);
	ethtool_ber_update(&b, o, 31 * SEC);
	assert_float_equal(o->f[F_NETDEV_PRE_FEC_BER].v.d, 0.0, 1e-18);

	/* a driver reload resets the counter: no negative ratio, no data until 10 s again */
	field_set_int(o, F_NETDEV_PHY_CORRECTED_BITS, 10);
	ethtool_ber_update(&b, o, 32 * SEC);
	assert_int_equal(o->f[F_NETDEV_PRE_FEC_BER].state, ABS_NO_DATA);
	field_set_int(o, F_NETDEV_PHY_CORRECTED_BITS, 20);
	ethtool_ber_update(&b, o, 42 * SEC);
	assert_true(o->f[F_NETDEV_PRE_FEC_BER].v.d >= 0);
	assert_float_equal(o->f[F_NETDEV_PRE_FEC_BER].v.d, 1e-11, 1e-17);

	/* link down: no speed, no ratio (unsupported: ENOLINK) */
	field_absent(o, F_NETDEV_SPEED, ABS_UNSUPPORTED, ENOLINK);
	ethtool_ber_update(&b, o, 43 * SEC);
	assert_int_equal(o->f[F_NETDEV_PRE_FEC_BER].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_NETDEV_PRE_FEC_BER].err, ENOLINK);
	model_free(&m);
}

static void carrier_counts(void **state)
{
	struct link_msg c;
	struct msgbuf mb;
	struct node_model m;
	struct object *o;
	char err[160] = "";

	(void)state;
	newlink_msg(&mb, 7, 5, 3, 2, true);
	assert_int_equal(link_parse((struct nlmsghdr *)mb.b, &c, err, sizeof(err)), 0);
	assert_int_equal(c.ifindex, 7);
	assert_true(c.have_changes && c.have_updown);
	assert_int_equal(c.changes, 5);
	assert_int_equal(c.up, 3);
	assert_int_equal(c.down, 2);
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	link_fill_carrier(o, &c);
	assert_int_equal(o->f[F_NETDEV_CARRIER_DOWN_COUNT].v.i, 2);

	/* a kernel before 4.16: the changes only, the up/down counts absent */
	newlink_msg(&mb, 7, 5, 0, 0, false);
	assert_int_equal(link_parse((struct nlmsghdr *)mb.b, &c, err, sizeof(err)), 0);
	link_fill_carrier(o, &c);
	assert_int_equal(o->f[F_NETDEV_CARRIER_CHANGES].v.i, 5);
	assert_int_equal(o->f[F_NETDEV_CARRIER_UP_COUNT].state, ABS_UNSUPPORTED);

	/* IFLA_CARRIER_CHANGES sent as a u8: named in the error */
	{
		struct nlmsghdr *nlh = msg(&mb, RTM_NEWLINK);

		mnl_nlmsg_put_extra_header(nlh, sizeof(struct ifinfomsg));
		mnl_attr_put_u8(nlh, IFLA_CARRIER_CHANGES, 1);
		assert_int_equal(link_parse(nlh, &c, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "IFLA_CARRIER_CHANGES"));
		/* shorter than its ifinfomsg */
		nlh = msg(&mb, RTM_NEWLINK);
		assert_int_equal(link_parse(nlh, &c, err, sizeof(err)), -EBADMSG);
	}
	model_free(&m);
}

/* What the link collector takes from an RTM_NEWLINK, as rtnl_fill_ifinfo() lays it out. */
static void link_message(void **state)
{
	struct link_msg l;
	struct msgbuf mb;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct nlattr *nest;
	char err[160] = "", buf[16];

	(void)state;
	nlh = msg(&mb, RTM_NEWLINK);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = 9;
	ifi->ifi_flags = IFF_UP;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "eth2.30");
	mnl_attr_put_u32(nlh, IFLA_MTU, 9000);
	mnl_attr_put_u32(nlh, IFLA_LINK, 4);
	mnl_attr_put_u32(nlh, IFLA_MASTER, 12);
	mnl_attr_put_u8(nlh, IFLA_OPERSTATE, IF_OPER_LOWERLAYERDOWN);
	mnl_attr_put_u8(nlh, IFLA_CARRIER, 0);
	nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vlan");
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(link_parse(nlh, &l, err, sizeof(err)), 0);
	assert_int_equal(l.ifindex, 9);
	assert_string_equal(l.name, "eth2.30");
	assert_true(l.have_mtu);
	assert_int_equal(l.mtu, 9000);
	assert_int_equal(l.link, 4);
	assert_int_equal(l.master, 12);
	assert_false(l.carrier);
	assert_string_equal(l.kind, "vlan");
	assert_false(l.have_changes || l.have_updown);
	link_operstate_name(l.operstate, buf, sizeof(buf));
	assert_string_equal(buf, "lowerlayerdown");
	/* a state this code does not know, as libnl and iproute2 print one */
	link_operstate_name(0x63, buf, sizeof(buf));
	assert_string_equal(buf, "0x63");

	/* a plain device: no link info, no master; carrier up */
	nlh = msg(&mb, RTM_NEWLINK);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = 2;
	ifi->ifi_flags = IFF_LOOPBACK;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "lo");
	mnl_attr_put_u8(nlh, IFLA_CARRIER, 1);
	assert_int_equal(link_parse(nlh, &l, err, sizeof(err)), 0);
	assert_true(l.carrier && (l.flags & IFF_LOOPBACK));
	assert_string_equal(l.kind, "");
	assert_int_equal(l.master, 0);
	assert_false(l.have_mtu || l.have_operstate);

	/* an MTU sent as a u16, a name longer than IFNAMSIZ: each named */
	nlh = msg(&mb, RTM_NEWLINK);
	mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	mnl_attr_put_u16(nlh, IFLA_MTU, 1500);
	assert_int_equal(link_parse(nlh, &l, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "IFLA_MTU"));
	nlh = msg(&mb, RTM_NEWLINK);
	mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "a-name-of-twenty-bytes");
	assert_int_equal(link_parse(nlh, &l, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "IFLA_IFNAME"));
	/* a kind without its terminating NUL */
	nlh = msg(&mb, RTM_NEWLINK);
	mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	nest = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put(nlh, IFLA_INFO_KIND, 4, "vlan");
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(link_parse(nlh, &l, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "IFLA_INFO_KIND"));
}

static void optional_counters(void **state)
{
	struct rdma_optional opt;
	struct msgbuf mb;
	struct node_model m;
	struct object *o;
	char err[160] = "";

	(void)state;
	nldev_stat_status_msg(&mb, 0, 1, false);
	memset(&opt, 0, sizeof(opt));
	assert_int_equal(rdma_nl_parse_optional((struct nlmsghdr *)mb.b, rdma_optional_add, &opt,
						err, sizeof(err)),
			 0);
	assert_int_equal(opt.supported, 4);
	assert_int_equal(opt.cc_disabled, 3);
	assert_string_equal(opt.enabled, "roce_adp_retrans");
	assert_string_equal(opt.cc_disabled_names, "cc_rx_ce_pkts,cc_rx_cnp_pkts,cc_tx_cnp_pkts");
	model_init(&m);
	o = model_add_port(&m, "mlx5_0", 1);
	rdma_fill_optional(o, &opt, 0);
	assert_int_equal(o->f[F_PORT_OPTIONAL_CC_DISABLED].v.i, 3);

	/* after `rdma statistic set link mlx5_0/1 optional-counters cc_rx_ce_pkts,...` */
	nldev_stat_status_msg(&mb, 0, 1, true);
	memset(&opt, 0, sizeof(opt));
	assert_int_equal(rdma_nl_parse_optional((struct nlmsghdr *)mb.b, rdma_optional_add, &opt,
						err, sizeof(err)),
			 0);
	rdma_fill_optional(o, &opt, 0);
	assert_int_equal(o->f[F_PORT_OPTIONAL_CC_DISABLED].v.i, 0);
	assert_string_equal(o->f[F_PORT_OPTIONAL_COUNTERS].v.s,
			    "cc_rx_ce_pkts,cc_rx_cnp_pkts,cc_tx_cnp_pkts,roce_adp_retrans");

	/* a kernel without the command */
	rdma_fill_optional(o, NULL, -EOPNOTSUPP);
	assert_int_equal(o->f[F_PORT_OPTIONAL_CC_DISABLED].state, ABS_UNSUPPORTED);
	model_free(&m);
}

/* ---- escalation memory and counter history across an engine's restart ---- */

static const char flap_yaml[] = "profile: t\n"
				"params: { escalate_after: 2, escalate_window_hours: 1 }\n"
				"rules:\n"
				"  - name: carrier_stable\n"
				"    scope: netdev\n"
				"    expr: increase(carrier.changes, 10s) == 0\n"
				"    class: degraded\n"
				"    action: reset-link\n"
				"    doc: flaps\n";

static struct rules_engine *flap_engine(void)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;

	assert_int_equal(rules_load_buffer("t.yaml", flap_yaml, strlen(flap_yaml), NULL, &e, &dg),
			 0);
	rules_diags_free(&dg);
	return e;
}

/* Evaluate with carrier.changes = v at t seconds; the one result. */
static const struct rule_result *at(struct rules_engine *e, struct node_model *m, int t, int64_t v)
{
	const struct rule_result *res;

	field_set_int(m->netdevs[0], F_NETDEV_CARRIER_CHANGES, v);
	m->time.tv_sec = 1796205600 + t;
	assert_int_equal(rules_evaluate(e, m, (int64_t)m->time.tv_sec * SEC), 0);
	assert_int_equal(rules_results(e, &res), 1);
	return res;
}

static void state_across_restart(void **state)
{
	char dir[] = "/tmp/rw-health-XXXXXX", path[64], msg[256];
	const struct rule_result *x;
	struct rules_engine *e;
	struct node_model m;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/health.state", dir);
	model_init(&m);
	model_add_netdev(&m, "eth2");

	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), 0); /* none yet */
	x = at(e, &m, 0, 2);
	x = at(e, &m, 5, 4); /* a flap: episode 1 */
	assert_int_equal(x->outcome, RULE_FAIL);
	assert_int_equal(x->episodes, 1);
	assert_true(rules_health_dirty(e));
	x = at(e, &m, 30, 4);
	assert_int_equal(x->outcome, RULE_PASS);
	assert_int_equal(rules_health_save(e, path, "boot-a"), 0);
	assert_false(rules_health_dirty(e));
	rules_free(e);

	/* same boot: the history is back, so a flap while we were away is episode 2: fatal */
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), 0);
	x = at(e, &m, 35, 6);
	assert_int_equal(x->outcome, RULE_FAIL);
	assert_int_equal(x->episodes, 2);
	assert_true(x->escalated);
	assert_int_equal(rule_result_severity(x), SEV_CRITICAL);
	assert_int_equal(rules_verdict(e), VERDICT_FATAL);
	rules_free(e);

	/* after a reboot: the episodes are remembered, the counter history is not */
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-b", msg, sizeof(msg)), 0);
	x = at(e, &m, 35, 6);
	assert_int_equal(x->outcome, RULE_UNKNOWN); /* one sample: no increase yet, no event */
	x = at(e, &m, 40, 6);
	assert_int_equal(x->outcome, RULE_PASS);
	assert_int_equal(x->episodes, 1);
	assert_false(x->escalated);
	assert_int_equal(rules_verdict(e), VERDICT_HEALTHY);
	rules_free(e);

	/* a foreign file and a corrupt one: -EINVAL, one line saying which, a fresh start */
	f = fopen(path, "w");
	fputs("{\"not\": \"ours\"}\n", f);
	fclose(f);
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "not a rocewatch health state file"));
	assert_null(strchr(msg, '\n'));
	x = at(e, &m, 50, 6);
	assert_int_equal(x->episodes, 0);
	rules_free(e);
	f = fopen(path, "w");
	fputs(
	    "rocewatch-health-state 1\nboot boot-a\nesc 00000000000000zz 0000000000000001 0 1 5\n",
	    f);
	fclose(f);
	/* a corrupt record is refused alone (issue 42): one line, the rest would stand */
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), 0);
	assert_non_null(
	    strstr(msg, "health.state: 1 of 1 records refused (line 3: not a 16-digit hex key)"));
	rules_free(e);

	unlink(path);
	rmdir(dir);
	model_free(&m);
}

/* Issue 41: an operator's acknowledgement forgets one rule's episodes on one object. */
static void forget_after_repair(void **state)
{
	const struct rule_result *x;
	struct rules_engine *e;
	struct node_model m;
	char err[256];
	size_t n = 99;

	(void)state;
	model_init(&m);
	model_add_netdev(&m, "eth2");
	e = flap_engine();
	at(e, &m, 0, 2);
	x = at(e, &m, 5, 4); /* episode 1 */
	assert_non_null(strstr(x->summary, "(1 of 2 failures in 1h that make it fatal)"));
	at(e, &m, 30, 4);
	x = at(e, &m, 35, 6); /* episode 2: escalated */
	assert_true(x->escalated);
	x = at(e, &m, 60, 6);
	assert_true(x->escalated);
	assert_int_equal(x->outcome, RULE_FAIL); /* passing now, fatal by its past */

	assert_int_equal(rules_health_forget(e, "nope", "eth2", &n, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no rule 'nope' in the loaded profiles");
	assert_int_equal(rules_health_forget(e, "carrier_stable", "eth2/1", &n, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(rules_health_forget(e, "carrier_stable", "eth3", &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0); /* another object: nothing of eth2's is touched */
	assert_int_equal(rules_health_forget(e, "carrier_stable", "eth2", &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_true(rules_health_dirty(e));
	x = at(e, &m, 61, 6);
	assert_false(x->escalated);
	assert_int_equal(x->episodes, 0);
	assert_int_equal(x->outcome, RULE_PASS);
	assert_int_equal(rules_verdict(e), VERDICT_HEALTHY);
	/* a new failure is episode 1 again */
	x = at(e, &m, 70, 8);
	assert_int_equal(x->episodes, 1);
	assert_false(x->escalated);
	rules_free(e);
	model_free(&m);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * Issue 42 item 3: what health.state says is checked record by record.  The
 * key and fingerprint of the flap rule's one result come from a file the
 * engine wrote; the records around them are the attack's shapes.
 */
static void state_records_checked(void **state)
{
	char dir[] = "/tmp/rw-health-XXXXXX", path[64], msg[512], key[40] = "", text[8192];
	const struct rule_result *x;
	struct rules_engine *e;
	struct node_model m;
	int64_t now = real_ns();
	char *saved;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/health.state", dir);
	model_init(&m);
	model_add_netdev(&m, "eth2");
	e = flap_engine();
	at(e, &m, 0, 2);
	at(e, &m, 5, 4);
	assert_int_equal(rules_health_save(e, path, "boot-a"), 0);
	rules_free(e);
	saved = slurp(path);
	assert_non_null(saved);
	/* "esc KEY FP ..." */
	assert_int_equal(sscanf(strstr(saved, "\nesc ") + 5, "%33[0-9a-f ]", key), 1);
	key[33] = '\0';
	free(saved);

	/* a future episode dropped (not "escalated to fatal" for ever), a negative time,
	 * an infinite counter, hex, an absurd counter: refused, each alone */
	snprintf(text, sizeof(text),
		 "rocewatch-health-state 1\nboot boot-a\n"
		 "esc %s 0 2 %lld %lld\n"
		 "esc %s 0 1 -5\n"
		 "ring %s 0 1 1 1 1 inf 0 1796205600000000000 1 0\n"
		 "ring %s 0 1 1 1 1 0x10 0 1796205600000000000 1 0\n"
		 "ring %s 0 1 1 1 1 5 1e300 1796205600000000000 1 0\n"
		 "ring %s 0 1 1 1 1 5 -3 1796205600000000000 1 0\n",
		 key, 1796205605000000000LL, (long long)(now + 86400LL * SEC), key, key, key, key,
		 key);
	write_text(path, text);
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "5 of 6 records refused (line 4: a negative time)"));
	assert_non_null(strstr(msg, "1 failure episodes dated in the future dropped"));
	assert_null(strchr(msg, '\n'));
	/* the past episode stands, the future one does not: not escalated */
	x = at(e, &m, 10, 4);
	assert_int_equal(x->episodes, 1);
	assert_false(x->escalated);
	rules_free(e);

	/* a time before 2001 and nonsense numbers in a ring */
	snprintf(text, sizeof(text),
		 "rocewatch-health-state 1\nboot boot-a\nesc %s 0 1 12\nring %s 0 1 1 1 1 nan 0 "
		 "1796205600000000000 1 0\n",
		 key, key);
	write_text(path, text);
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "2 of 2 records refused (line 3: a time before 2001)"));
	rules_free(e);

	/* the last line cut (a file not written by rocewatch's rename): refused, said */
	write_text(path, "rocewatch-health-state 1\nboot boot-a\nesc 0000");
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "the last line is cut"));
	rules_free(e);

	/* 160 000 records load (sorted once: it was quadratic, 38.7 s) and the last wins */
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fprintf(f, "rocewatch-health-state 1\nboot boot-a\n");
		fprintf(f, "esc %s 0 2 1796205601000000000 1796205602000000000\n", key);
		for (int i = 0; i < 160000; i++)
			fprintf(f, "esc %016x %016x 0 1 %lld\n", i + 1, i, 1796205600000000000LL);
		/* the flap result again: the later record is the one that counts */
		fprintf(f, "esc %s 0 1 1796205603000000000\n", key);
		assert_int_equal(fclose(f), 0);
		e = flap_engine();
		assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), 0);
		assert_string_equal(msg, "");
		x = at(e, &m, 10, 4);
		assert_int_equal(x->episodes, 1);
		rules_free(e);
	}

	unlink(path);
	rmdir(dir);
	model_free(&m);
}

/*
 * Issue 42 item 4: the state file's neighbourhood.  Never read through a
 * link or from a FIFO (start-up would hang before the listener), never one
 * another user could have written; the temporary file never written through
 * what was planted there.
 */
static void state_file_guarded(void **state)
{
	char dir[] = "/tmp/rw-health-XXXXXX", path[64], tmp[80], victim[80], msg[512];
	struct rules_engine *e;
	struct node_model m;
	char *v;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/health.state", dir);
	snprintf(tmp, sizeof(tmp), "%s/health.state.tmp", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	model_init(&m);
	model_add_netdev(&m, "eth2");

	/* a FIFO as the state file: refused at once, never opened for a blocking read */
	assert_int_equal(mkfifo(path, 0600), 0);
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), -EINVAL);
	assert_non_null(strstr(msg, "a FIFO, not a regular file: refused"));
	rules_free(e);
	unlink(path);

	/* a symlink as the state file */
	write_text(victim, "rocewatch-health-state 1\nboot -\n");
	assert_int_equal(symlink(victim, path), 0);
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), -ELOOP);
	assert_non_null(strstr(msg, "a symbolic link: refused"));
	rules_free(e);
	unlink(path);

	/* world-writable; owned by someone else */
	write_text(path, "rocewatch-health-state 1\nboot -\n");
	assert_int_equal(chmod(path, 0666), 0);
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), -EPERM);
	assert_non_null(strstr(msg, "world-writable (mode 0666)"));
	rules_free(e);
	assert_int_equal(chmod(path, 0600), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(path, 65534, 65534), 0);
		e = flap_engine();
		assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), -EPERM);
		assert_non_null(strstr(msg, "owned by uid 65534"));
		rules_free(e);
	}
	unlink(path);

	/* larger than a state file can be: refused with its size, never read */
	{
		int fd = open(path, O_WRONLY | O_CREAT, 0600);

		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 17 << 20), 0);
		close(fd);
	}
	e = flap_engine();
	assert_int_equal(rules_health_load(e, path, "boot-a", msg, sizeof(msg)), -EFBIG);
	assert_non_null(strstr(msg, "17825792 bytes, more than a health state file can be"));
	rules_free(e);
	unlink(path);

	/* a symlink planted as the temporary file: its target is never written */
	write_text(victim, "precious\n");
	assert_int_equal(symlink(victim, tmp), 0);
	e = flap_engine();
	at(e, &m, 0, 2);
	assert_int_equal(rules_health_save(e, path, "boot-a"), 0);
	v = slurp(victim);
	assert_string_equal(v, "precious\n");
	free(v);
	v = slurp(path);
	assert_true(!strncmp(v, "rocewatch-health-state 1\n", 25));
	free(v);
	assert_int_equal(access(tmp, F_OK), -1); /* renamed away */
	/* a FIFO planted there: the save neither blocks nor writes into it */
	assert_int_equal(mkfifo(tmp, 0600), 0);
	assert_int_equal(rules_health_save(e, path, "boot-a"), 0);
	assert_int_equal(access(tmp, F_OK), -1);
	rules_free(e);

	unlink(path);
	unlink(victim);
	rmdir(dir);
	model_free(&m);
}

/*
 * Issue 41 item 6: a device on which no fatal link-health rule can run (its
 * driver has no link_downed: guard false) is not "healthy"; coverage says
 * which rules are missing, and a rule with a guard that holds makes it whole.
 */
static void coverage_and_verdict(void **state)
{
	static const char yaml[] =
	    "profile: t\nrules:\n"
	    "  - name: downed\n    scope: rdma_port\n    class: fatal\n"
	    "    action: reseat-or-replace-cable\n    when: $has\n"
	    "    expr: \"true\"\n    doc: d\n"
	    "  - name: flaps\n    scope: netdev\n    class: degraded\n"
	    "    action: reseat-or-replace-cable\n    expr: \"true\"\n    doc: d\n"
	    "params: { has: false }\n";
	char yes[sizeof(yaml) + 8];
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	struct rule_coverage *c;
	struct node_model m;
	char text[1024];
	size_t n;

	(void)state;
	model_init(&m);
	model_add_netdev(&m, "eth2");
	model_add_port(&m, "bnxt_re0", 1);
	field_set_str(m.ports[0], F_PORT_NETDEV, "eth2");
	model_link_ports(&m);
	assert_int_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg), 0);
	rules_diags_free(&dg);
	assert_int_equal(rules_evaluate(e, &m, SEC), 0);
	assert_int_equal(rules_coverage(e, &c, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(c[0].device, "bnxt_re0");
	assert_string_equal(c[0].netdev, "eth2");
	assert_int_equal(c[0].watched[RCLASS_FATAL], 0);
	assert_int_equal(c[0].total[RCLASS_FATAL], 1);
	assert_int_equal(c[0].watched[RCLASS_DEGRADED], 1);
	assert_true(rules_coverage_text(&c[0], text, sizeof(text)));
	assert_string_equal(text, "bnxt_re0 (eth2): 1 of 2 link-health rules watch it; fatal ones "
				  "unavailable here (driver or source): downed");
	free(c);
	assert_int_equal(rules_verdict(e), VERDICT_UNKNOWN); /* passing, but nothing watches */
	rules_free(e);

	e = NULL;
	/* the driver has it: the same rules with the guard true */
	snprintf(yes, sizeof(yes), "%.*shas: true }\n", (int)(strstr(yaml, "has: false") - yaml),
		 yaml);
	assert_int_equal(rules_load_buffer("t.yaml", yes, strlen(yes), NULL, &e, &dg), 0);
	rules_diags_free(&dg);
	assert_int_equal(rules_evaluate(e, &m, SEC), 0);
	assert_int_equal(rules_verdict(e), VERDICT_HEALTHY);
	rules_free(e);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fec_per_lane),		 cmocka_unit_test(fec_malformed),
		cmocka_unit_test(phy_stat_names),	 cmocka_unit_test(ber_over_time),
		cmocka_unit_test(carrier_counts),	 cmocka_unit_test(link_message),
		cmocka_unit_test(optional_counters),	 cmocka_unit_test(state_across_restart),
		cmocka_unit_test(state_records_checked), cmocka_unit_test(state_file_guarded),
		cmocka_unit_test(forget_after_repair),	 cmocka_unit_test(coverage_and_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
