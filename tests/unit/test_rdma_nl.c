// SPDX-License-Identifier: MIT
/*
 * RDMA netlink parsing on messages built attribute by attribute as
 * drivers/infiniband/core/nldev.c builds them (fill_nldev_handle,
 * fill_dev_info, fill_port_info, stat_get_doit_default_counter), including
 * the 64-bit PAD attribute nla_put_u64_64bit() inserts on architectures
 * without efficient unaligned access, NLA_F_NESTED on nests, attributes
 * newer than our headers, a port without a netdev, and truncated input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>
#include <string.h>

#include "rdma.h"

#define PORTID 4242
#define SEQ    77

/* An attribute type from a kernel newer than these headers. */
#define ATTR_FROM_THE_FUTURE (RDMA_NLDEV_ATTR_MAX + 7)

struct msgbuf {
	_Alignas(8) char b[8192];
	size_t len;
	bool pad64; /* emulate nla_need_padding_for_64bit() */
};

static struct nlmsghdr *begin(struct msgbuf *mb, uint8_t cmd, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(mb->b + mb->len);

	nlh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = PORTID;
	return nlh;
}

static void end(struct msgbuf *mb, struct nlmsghdr *nlh)
{
	mb->len += NLMSG_ALIGN(nlh->nlmsg_len);
}

/*
 * nla_put_u64_64bit(): when the tail is 8-aligned, the payload after a
 * 4-byte header would not be, so the kernel first puts an empty PAD (type 0).
 */
static void put_u64(struct msgbuf *mb, struct nlmsghdr *nlh, uint16_t type, uint64_t v)
{
	if (mb->pad64 && ((size_t)((char *)mnl_nlmsg_get_payload_tail(nlh) - mb->b) % 8) == 0)
		mnl_attr_put(nlh, RDMA_NLDEV_ATTR_PAD, 0, NULL);
	mnl_attr_put_u64(nlh, type, v);
}

static void handle(struct nlmsghdr *nlh, uint32_t index, const char *name)
{
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, index);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, name);
}

/* fill_dev_info() of a ConnectX-6 Dx function, or of rxe (no firmware). */
static struct nlmsghdr *dev_msg(struct msgbuf *mb, uint32_t index, const char *name, const char *fw,
				uint64_t guid, uint16_t flags)
{
	struct nlmsghdr *nlh = begin(mb, RDMA_NLDEV_CMD_GET, flags, SEQ);

	handle(nlh, index, name);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	put_u64(mb, nlh, RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1d72c1c36ULL);
	if (fw)
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_FW_VERSION, fw);
	put_u64(mb, nlh, RDMA_NLDEV_ATTR_NODE_GUID, guid);
	put_u64(mb, nlh, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, guid);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	mnl_attr_put_u8(nlh, ATTR_FROM_THE_FUTURE, 1); /* NAME_ASSIGN_TYPE in 6.13+ */
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
	end(mb, nlh);
	return nlh;
}

/* fill_port_info() of a RoCE port: no LID/SM attributes; NDEV_* only with a netdev here. */
static struct nlmsghdr *port_msg(struct msgbuf *mb, uint32_t index, const char *name, uint32_t port,
				 uint8_t state, uint8_t phys, int ifindex, const char *ndev)
{
	struct nlmsghdr *nlh = begin(mb, RDMA_NLDEV_CMD_PORT_GET, NLM_F_MULTI, SEQ);

	handle(nlh, index, name);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_PORT_STATE, state);
	mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, phys);
	if (ndev) {
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_NDEV_INDEX, (uint32_t)ifindex);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
	}
	end(mb, nlh);
	return nlh;
}

static const struct {
	const char *name;
	uint64_t v;
} mlx5_hw[] = {
	{ "rx_write_requests", 2215876044ULL },
	{ "rx_read_requests", 48210993 },
	{ "out_of_sequence", 2054 },
	{ "duplicate_request", 412 },
	{ "local_ack_timeout_err", 97 },
	{ "np_cnp_sent", 1882731 },
	{ "rp_cnp_handled", 1739105 },
	{ "req_transport_retries_exceeded", 2 },
};

static struct nlattr *nest_start(struct nlmsghdr *nlh, uint16_t type)
{
	struct nlattr *a = mnl_attr_nest_start(nlh, type);

	a->nla_type |= NLA_F_NESTED; /* nla_nest_start() sets it */
	return a;
}

/* stat_get_doit_default_counter(): handle, port, HWCOUNTERS { ENTRY { NAME, VALUE } ... } */
static struct nlmsghdr *stat_msg(struct msgbuf *mb, uint32_t seq, size_t n)
{
	struct nlmsghdr *nlh = begin(mb, RDMA_NLDEV_CMD_STAT_GET, 0, seq);
	struct nlattr *table, *e;

	handle(nlh, 3, "mlx5_0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	table = nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (size_t i = 0; i < n; i++) {
		e = nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, mlx5_hw[i].name);
		put_u64(mb, nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, mlx5_hw[i].v);
		mnl_attr_nest_end(nlh, e);
	}
	mnl_attr_nest_end(nlh, table);
	end(mb, nlh);
	return nlh;
}

static void done_msg(struct msgbuf *mb, uint32_t seq, int err)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(mb->b + mb->len);

	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_flags = NLM_F_MULTI;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = PORTID;
	*(int *)mnl_nlmsg_put_extra_header(nlh, sizeof(int)) = err;
	end(mb, nlh);
}

static void dev_message(void **state)
{
	struct msgbuf mb = { .len = 0 };
	struct rdma_nl_dev d;
	char why[192] = "";
	char guid[32];

	(void)state;
	for (int pad = 0; pad < 2; pad++) {
		mb.len = 0;
		mb.pad64 = pad;
		assert_int_equal(rdma_nl_parse_dev(dev_msg(&mb, 3, "mlx5_0", "22.39.1002",
							   0x0c42a10300657a3eULL, NLM_F_MULTI),
						   &d, why, sizeof(why)),
				 0);
		assert_int_equal(d.index, 3);
		assert_string_equal(d.name, "mlx5_0");
		assert_int_equal(d.last_port, 1);
		assert_true(d.has_fw);
		assert_string_equal(d.fw, "22.39.1002");
		assert_true(d.has_guid);
		rdma_format_guid(d.node_guid, guid, sizeof(guid));
		/* the same text as /sys/class/infiniband/mlx5_0/node_guid */
		assert_string_equal(guid, "0c42:a103:0065:7a3e");
	}
	/* rxe: no firmware, no FW_VERSION attribute */
	mb.len = 0;
	assert_int_equal(rdma_nl_parse_dev(dev_msg(&mb, 5, "rxe0", NULL, 0x505400fffe123456ULL, 0),
					   &d, why, sizeof(why)),
			 0);
	assert_false(d.has_fw);
	assert_string_equal(d.name, "rxe0");
}

static void port_messages(void **state)
{
	struct msgbuf mb = { .len = 0 };
	struct rdma_nl_port p;
	char why[192] = "";

	(void)state;
	assert_int_equal(rdma_nl_parse_port(port_msg(&mb, 3, "mlx5_0", 1, 4, 5, 4, "ens1f0np0"), &p,
					    why, sizeof(why)),
			 0);
	assert_string_equal(p.dev_name, "mlx5_0");
	assert_int_equal(p.port, 1);
	assert_true(p.has_state && p.has_phys_state);
	assert_string_equal(rdma_port_state_name(p.state), "ACTIVE");
	assert_string_equal(rdma_phys_state_name(p.phys_state), "LinkUp");
	assert_true(p.has_ndev);
	assert_int_equal(p.ndev_index, 4);
	assert_string_equal(p.ndev_name, "ens1f0np0");

	/* no netdev (or one in another netns): fill_port_info() sends no NDEV_* at all */
	assert_int_equal(
	    rdma_nl_parse_port(port_msg(&mb, 4, "mlx5_1", 1, 1, 3, 0, NULL), &p, why, sizeof(why)),
	    0);
	assert_false(p.has_ndev);
	assert_string_equal(rdma_port_state_name(p.state), "DOWN");
	assert_string_equal(rdma_phys_state_name(p.phys_state), "Disabled");
	assert_string_equal(rdma_port_state_name(9), "UNKNOWN");
}

struct collected {
	int n;
	char names[16][48];
	uint64_t vals[16];
};

static int collect_cb(void *arg, const char *name, uint64_t v)
{
	struct collected *c = arg;

	assert_true(c->n < 16);
	strcpy(c->names[c->n], name);
	c->vals[c->n++] = v;
	return 0;
}

static void stat_message(void **state)
{
	struct msgbuf mb = { .len = 0 };
	struct rdma_nl_stat s;
	struct collected c;
	char why[192] = "";
	size_t n = sizeof(mlx5_hw) / sizeof(mlx5_hw[0]);

	(void)state;
	for (int pad = 0; pad < 2; pad++) {
		memset(&c, 0, sizeof(c));
		mb.len = 0;
		mb.pad64 = pad;
		assert_int_equal(
		    rdma_nl_parse_stat(stat_msg(&mb, SEQ, n), &s, collect_cb, &c, why, sizeof(why)),
		    0);
		assert_int_equal(s.dev_index, 3);
		assert_string_equal(s.dev_name, "mlx5_0");
		assert_int_equal(s.port, 1);
		assert_int_equal(s.counters, n);
		assert_int_equal(c.n, (int)n);
		for (size_t i = 0; i < n; i++) {
			assert_string_equal(c.names[i], mlx5_hw[i].name);
			assert_int_equal(c.vals[i], mlx5_hw[i].v);
		}
	}
}

struct walk_count {
	int devs;
	char last[64];
};

static int count_dev(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct walk_count *wc = arg;
	struct rdma_nl_dev d;

	(void)err;
	(void)errlen;
	char why[192];
	int r = rdma_nl_parse_dev(nlh, &d, why, sizeof(why));

	if (r)
		return r;
	wc->devs++;
	strcpy(wc->last, d.name);
	return 0;
}

static void dump_walk(void **state)
{
	struct msgbuf mb = { .len = 0 };
	struct walk_count wc = { 0 };
	struct rw_nl_reply w = { .seq = SEQ,
				 .portid = PORTID,
				 .type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET),
				 .msg = count_dev,
				 .arg = &wc };

	(void)state;
	/* a reply to an earlier request that timed out comes first: skipped */
	dev_msg(&mb, 9, "stale0", "1.0", 1, NLM_F_MULTI)->nlmsg_seq = SEQ - 1;
	dev_msg(&mb, 3, "mlx5_0", "22.39.1002", 2, NLM_F_MULTI);
	/* one receive may end between the messages of a dump: more to come */
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, mb.len), 0);
	assert_int_equal(wc.devs, 1);
	mb.len = 0;
	dev_msg(&mb, 4, "mlx5_1", "22.39.1002", 3, NLM_F_MULTI);
	done_msg(&mb, SEQ, 0);
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, mb.len), 1);
	assert_int_equal(wc.devs, 2);
	assert_string_equal(wc.last, "mlx5_1");

	/* netlink_dump() reports the dump's own failure inside NLMSG_DONE */
	mb.len = 0;
	done_msg(&mb, SEQ, -EOPNOTSUPP);
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, mb.len), -EOPNOTSUPP);
}

static void error_with_ext_ack(void **state)
{
	struct msgbuf mb = { .len = 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(mb.b);
	struct nlmsgerr *e;
	struct rw_nl_reply w = { .seq = SEQ, .type = 1, .msg = NULL };

	(void)state;
	/* NETLINK_CAP_ACK: the request is not echoed; NETLINK_EXT_ACK: a message TLV follows */
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = NLM_F_CAPPED | NLM_F_ACK_TLVS;
	nlh->nlmsg_seq = SEQ;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = -EINVAL;
	e->msg.nlmsg_len = sizeof(struct nlmsghdr) + 8;
	e->msg.nlmsg_seq = SEQ;
	mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "Port index is not valid");
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, nlh->nlmsg_len), -EINVAL);
	assert_string_equal(w.err, "Port index is not valid");

	/* a plain ACK completes the exchange */
	e->error = 0;
	nlh->nlmsg_flags = NLM_F_CAPPED;
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(*e));
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, nlh->nlmsg_len), 1);

	/* an NLMSG_ERROR too short for its struct */
	nlh->nlmsg_len = MNL_NLMSG_HDRLEN + 2;
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, nlh->nlmsg_len), -EBADMSG);
}

static int never(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	(void)nlh;
	(void)arg;
	(void)err;
	(void)errlen;
	fail_msg("a truncated message reached the parser");
	return 0;
}

static void truncated(void **state)
{
	struct msgbuf mb = { .len = 0 };
	struct nlmsghdr *nlh;
	struct rdma_nl_stat s;
	struct collected c = { 0 };
	struct rw_nl_reply w = { .seq = SEQ,
				 .type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET),
				 .msg = never };
	char why[192] = "";
	size_t full;

	(void)state;
	nlh = stat_msg(&mb, SEQ, 4);
	full = nlh->nlmsg_len;

	/* 1. the buffer ends inside the message (a short read): the walk refuses it */
	for (size_t cut = 1; cut < full; cut += 7) {
		assert_int_equal(rw_nl_reply_walk(&w, mb.b, cut), -EBADMSG);
		assert_true(w.err[0] != '\0');
	}

	/* 2. nlmsg_len cut inside the counter table: the table's nest overruns */
	nlh->nlmsg_len = (uint32_t)(full - 6);
	assert_int_equal(rdma_nl_parse_stat(nlh, &s, collect_cb, &c, why, sizeof(why)), -EBADMSG);
	assert_true(why[0] != '\0');

	/* 3. the last entry's VALUE cut off: its nest ends early, inside an attribute */
	mb.len = 0;
	nlh = stat_msg(&mb, SEQ, 1);
	{
		struct nlattr *table = (struct nlattr *)((char *)mnl_nlmsg_get_payload(nlh) +
							 MNL_ALIGN(MNL_ATTR_HDRLEN + 4) +
							 MNL_ALIGN(MNL_ATTR_HDRLEN + 7) +
							 MNL_ALIGN(MNL_ATTR_HDRLEN + 4));
		struct nlattr *entry = mnl_attr_get_payload(table);

		assert_int_equal(mnl_attr_get_type(table), RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
		entry->nla_len -= 6; /* leaves 6 bytes of the 12-byte VALUE attribute */
		memset(&c, 0, sizeof(c));
		assert_int_equal(rdma_nl_parse_stat(nlh, &s, collect_cb, &c, why, sizeof(why)),
				 -EBADMSG);
		assert_int_equal(c.n, 0);
	}

	/* 4. a known attribute with the wrong size: DEV_INDEX as two bytes */
	mb.len = 0;
	nlh = begin(&mb, RDMA_NLDEV_CMD_GET, 0, SEQ);
	mnl_attr_put_u16(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	{
		struct rdma_nl_dev d;

		assert_int_equal(rdma_nl_parse_dev(nlh, &d, why, sizeof(why)), -EBADMSG);
		/* the error names the attribute and what was wrong with it */
		assert_string_equal(why, "RDMA_NLDEV_ATTR_DEV_INDEX: payload 2 bytes, want 4");
	}

	/* 5. a string without its NUL */
	mb.len = 0;
	nlh = begin(&mb, RDMA_NLDEV_CMD_PORT_GET, 0, SEQ);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put(nlh, RDMA_NLDEV_ATTR_DEV_NAME, 6, "mlx5_0");
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	{
		struct rdma_nl_port p;

		assert_int_equal(rdma_nl_parse_port(nlh, &p, why, sizeof(why)), -EBADMSG);
	}

	/* 6. a message missing what identifies it */
	mb.len = 0;
	nlh = begin(&mb, RDMA_NLDEV_CMD_PORT_GET, 0, SEQ);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	{
		struct rdma_nl_port p;

		assert_int_equal(rdma_nl_parse_port(nlh, &p, why, sizeof(why)), -EBADMSG);
		assert_string_equal(
		    why, "RDMA_NLDEV_CMD_PORT_GET reply without RDMA_NLDEV_ATTR_PORT_INDEX");
	}

	/* 8. a counter entry without its value, then one without its name */
	for (int drop_value = 1; drop_value >= 0; drop_value--) {
		struct nlattr *table, *e;

		mb.len = 0;
		nlh = begin(&mb, RDMA_NLDEV_CMD_STAT_GET, 0, SEQ);
		handle(nlh, 3, "mlx5_0");
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
		table = nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
		e = nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		if (drop_value)
			mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, "x");
		else
			put_u64(&mb, nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 1);
		mnl_attr_nest_end(nlh, e);
		mnl_attr_nest_end(nlh, table);
		end(&mb, nlh);
		memset(&c, 0, sizeof(c));
		assert_int_equal(rdma_nl_parse_stat(nlh, &s, collect_cb, &c, why, sizeof(why)),
				 -EBADMSG);
		assert_string_equal(why, drop_value
					     ? "RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY without "
					       "RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE"
					     : "RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY without "
					       "RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME");
		assert_int_equal(c.n, 0);
	}

	/* 7. an unexpected message type in the reply */
	mb.len = 0;
	port_msg(&mb, 3, "mlx5_0", 1, 4, 5, 4, "ens1f0np0");
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, mb.len), -EBADMSG);
	assert_non_null(strstr(w.err, "unexpected message type"));
}

static void sysfs_texts(void **state)
{
	char out[64], state_text[] = "4: ACTIVE\n";
	int64_t mbps;
	uint32_t v4;
	struct gid_entry e[] = {
		{ 0, "fe80:0000:0000:0000:0e42:a1ff:fe65:7a3e", "RoCE v1", "ens1f0np0" },
		{ 1, "fe80:0000:0000:0000:0e42:a1ff:fe65:7a3e", "RoCE v2", "ens1f0np0" },
		{ 2, "0000:0000:0000:0000:0000:ffff:c0a8:6407", "RoCE v2", "ens1f0np0.100" },
		{ 5, "0000:0000:0000:0000:0000:ffff:c0a8:0a07", "RoCE v1", "ens1f0np0" },
		{ 7, "0000:0000:0000:0000:0000:ffff:c0a8:0b07", "RoCE v2", "ens1f0np0" },
		{ 9, "0000:0000:0000:0000:0000:ffff:c0a8:0a07", "RoCE v2", "ens1f0np0" },
	};
	struct gid_table t = { .n = 6, .cap = 6, .e = e };

	(void)state;
	assert_int_equal(rdma_parse_state(state_text, state_text, sizeof(state_text)), 0);
	assert_string_equal(state_text, "ACTIVE");
	assert_int_equal(rdma_parse_state("5: LinkUp", out, sizeof(out)), 0);
	assert_string_equal(out, "LinkUp");
	assert_int_equal(rdma_parse_state("LinkUp", out, sizeof(out)), -EINVAL);
	assert_int_equal(rdma_parse_state("x: LinkUp", out, sizeof(out)), -EINVAL);
	assert_int_equal(rdma_parse_state("5: ", out, sizeof(out)), -EINVAL);

	assert_int_equal(rdma_parse_rate("100 Gb/sec (4X EDR)", &mbps), 0);
	assert_int_equal(mbps, 100000);
	assert_int_equal(rdma_parse_rate("2.5 Gb/sec (1X SDR)", &mbps), 0);
	assert_int_equal(mbps, 2500);
	assert_int_equal(rdma_parse_rate("400 Gb/sec (4X NDR)", &mbps), 0);
	assert_int_equal(mbps, 400000);
	assert_int_equal(rdma_parse_rate("N/A", &mbps), -EINVAL);
	assert_int_equal(rdma_parse_rate("100 Mb/sec", &mbps), -EINVAL);

	assert_true(rdma_gid_ipv4("0000:0000:0000:0000:0000:ffff:c0a8:0a07", &v4));
	assert_memory_equal(&v4, "\xc0\xa8\x0a\x07", 4);
	assert_false(rdma_gid_ipv4("fe80:0000:0000:0000:0e42:a1ff:fe65:7a3e", NULL));
	assert_false(rdma_gid_ipv4("not a gid", NULL));
	assert_true(rdma_gid_is_zero("0000:0000:0000:0000:0000:0000:0000:0000"));
	assert_false(rdma_gid_is_zero("fe80:0000:0000:0000:0e42:a1ff:fe65:7a3e"));

	rdma_gid_type_name("IB/RoCE v1", "Ethernet", out, sizeof(out));
	assert_string_equal(out, "RoCE v1");
	rdma_gid_type_name("IB/RoCE v1", "InfiniBand", out, sizeof(out));
	assert_string_equal(out, "IB");
	rdma_gid_type_name("RoCE v2", "Ethernet", out, sizeof(out));
	assert_string_equal(out, "RoCE v2");

	/* lowest RoCE v2 IPv4 GID of the netdev itself; the VLAN's (index 2) and v1 don't count */
	assert_int_equal(rdma_rocev2_ipv4_index(&t, "ens1f0np0", NULL), 7);
	/* with the netdev's addresses known, the entry of its first address wins */
	assert_int_equal(rdma_rocev2_ipv4_index(&t, "ens1f0np0", "192.168.10.7,192.168.11.7"), 9);
	assert_int_equal(rdma_rocev2_ipv4_index(&t, "ens1f0np0", "10.0.0.1"), 7);
	assert_int_equal(rdma_rocev2_ipv4_index(&t, "ens1f0np0.100", NULL), 2);
	assert_int_equal(rdma_rocev2_ipv4_index(&t, "ens9", NULL), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dev_message),	      cmocka_unit_test(port_messages),
		cmocka_unit_test(stat_message),	      cmocka_unit_test(dump_walk),
		cmocka_unit_test(error_with_ext_ack), cmocka_unit_test(truncated),
		cmocka_unit_test(sysfs_texts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
