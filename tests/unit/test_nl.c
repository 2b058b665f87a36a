// SPDX-License-Identifier: MIT
/*
 * The core netlink layer (src/core/nl.c) on messages built attribute by
 * attribute: policy rows (exact widths, struct sizes, string maxima, nests),
 * unknown types skipped, errors naming the attribute, bad attributes marked
 * instead of failing a lenient parse, lengths that lie (nlmsg_len of 2^31
 * and more, lengths that wrap when aligned), extended acks, and the dcb
 * rule built on it: one bad attribute blanks only the fields it carries.
 *
 * argv[1]: tests/fixtures/netlink (the reproducers fuzzing found; byte 0 % 5
 * picks the parser, the rest is one reply in an exact-size heap buffer).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

#include "netdev.h"
#include "nl.h"
#include "nlmsg_build.h"
#include "rdma.h"
#include "util.h"

static const char *fixtures;

enum {
	T_U8 = 1,
	T_U32,
	T_STR,
	T_NEST,
	T_BLOB,
	T_FLAG,
	T_MAX
};

struct blob {
	uint32_t a, b, c;
};

static const struct rw_nl_policy test_pol[T_MAX] = {
	RW_NL_U8(T_U8),
	RW_NL_U32(T_U32),
	RW_NL_STR(T_STR, 8),
	RW_NL_NEST(T_NEST),
	RW_NL_STRUCT(T_BLOB, struct blob),
	RW_NL_FLAG(T_FLAG),
};
static const struct rw_nl_set test_set = RW_NL_SET("T_ATTR", test_pol);

/* Parse the payload of nlh from an exact-size heap copy (ASan sees any over-read). */
static int parse_exact(const struct nlmsghdr *nlh, const struct nlattr **tb, uint8_t *bad,
		       char *err)
{
	size_t len = nlh->nlmsg_len;
	char *copy = malloc(len);
	int r;

	memcpy(copy, nlh, len);
	r = rw_nl_check_msg(copy, len, 0, err, 160);
	if (!r)
		r = rw_nl_parse_msg(&test_set, (struct nlmsghdr *)copy, 0, tb, bad, err, 160);
	/* tb points into copy: keep only whether each slot was set */
	for (unsigned int i = 0; i < T_MAX; i++)
		tb[i] = tb[i] ? (const struct nlattr *)1 : NULL;
	free(copy);
	return r;
}

static void policy_rows(void **state)
{
	struct msgbuf mb;
	struct nlmsghdr *nlh;
	const struct nlattr *tb[T_MAX];
	struct blob bl = { 1, 2, 3 };
	char err[160];

	(void)state;
	/* every row satisfied, plus types past the table and a hole in it: skipped */
	nlh = msg(&mb, 100);
	mnl_attr_put_u8(nlh, T_U8, 7);
	mnl_attr_put_u32(nlh, T_U32, 42);
	mnl_attr_put_strz(nlh, T_STR, "eth2");
	mnl_attr_put(nlh, T_BLOB, sizeof(bl), &bl);
	mnl_attr_put(nlh, T_FLAG, 0, NULL);
	mnl_attr_put_u64(nlh, T_MAX + 5, 1); /* a newer kernel's attribute */
	mnl_attr_put_u16(nlh, 0, 1);	     /* type 0 has no row */
	mnl_attr_nest_end(nlh, mnl_attr_nest_start(nlh, T_NEST));
	assert_int_equal(parse_exact(nlh, tb, NULL, err), 0);
	for (int t = T_U8; t < T_MAX; t++)
		assert_non_null(tb[t]);

	/* each violation names the attribute and what was wrong */
	static const struct {
		uint16_t type, len;
		const char *want;
	} bad[] = {
		{ T_U8, 2, "T_U8: payload 2 bytes, want 1" },
		{ T_U32, 2, "T_U32: payload 2 bytes, want 4" },
		{ T_U32, 8, "T_U32: payload 8 bytes, want 4" },
		{ T_BLOB, 8, "T_BLOB: payload 8 bytes, want 12" },
		{ T_BLOB, 16, "T_BLOB: payload 16 bytes, want 12" },
		{ T_FLAG, 1, "T_FLAG: flag with a 1-byte payload" },
		{ T_NEST, 2, "T_NEST: nest of 2 bytes, too short for an attribute" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char zeros[16] = { 0 };

		nlh = msg(&mb, 100);
		mnl_attr_put(nlh, bad[i].type, bad[i].len, zeros);
		err[0] = '\0';
		assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
		assert_string_equal(err, bad[i].want);
	}

	/* strings: terminated, and no longer than the row allows (NUL included) */
	nlh = msg(&mb, 100);
	mnl_attr_put_strz(nlh, T_STR, "12345678");
	assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
	assert_string_equal(err, "T_STR: string of 9 bytes, at most 8");
	nlh = msg(&mb, 100);
	mnl_attr_put(nlh, T_STR, 4, "eth2");
	assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
	assert_string_equal(err, "T_STR: string of 4 bytes without its NUL");
	nlh = msg(&mb, 100);
	mnl_attr_put(nlh, T_STR, 0, NULL);
	assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
}

static void lenient_marks_bad(void **state)
{
	struct msgbuf mb;
	struct nlmsghdr *nlh = msg(&mb, 100);
	const struct nlattr *tb[T_MAX];
	uint8_t bad[T_MAX];
	char err[160] = "";

	(void)state;
	mnl_attr_put_u8(nlh, T_U8, 7);
	mnl_attr_put_u16(nlh, T_U32, 1); /* bad */
	mnl_attr_put_strz(nlh, T_STR, "ok");
	mnl_attr_put(nlh, T_BLOB, 4, "abcd"); /* bad */
	assert_int_equal(parse_exact(nlh, tb, bad, err), 0);
	assert_non_null(tb[T_U8]);
	assert_non_null(tb[T_STR]);
	assert_null(tb[T_U32]);
	assert_null(tb[T_BLOB]);
	assert_true(bad[T_U32] && bad[T_BLOB]);
	assert_false(bad[T_U8] || bad[T_STR] || bad[T_NEST]);
	/* the first is named, the others counted */
	assert_string_equal(err, "T_U32: payload 2 bytes, want 4 (and 1 more bad attributes)");

	/* a cut is never lenient: the bytes after it cannot be placed */
	nlh = msg(&mb, 100);
	mnl_attr_put_u8(nlh, T_U8, 7);
	mnl_attr_put_u32(nlh, T_U32, 1);
	nlh->nlmsg_len -= 2;
	assert_int_equal(parse_exact(nlh, tb, bad, err), -EBADMSG);
	assert_non_null(strstr(err, "truncated"));
}

static void attribute_lengths_that_lie(void **state)
{
	struct msgbuf mb;
	struct nlmsghdr *nlh;
	struct nlattr *a;
	const struct nlattr *tb[T_MAX];
	char err[160];

	(void)state;
	/* nla_len past the end of the message */
	nlh = msg(&mb, 100);
	a = mnl_nlmsg_put_extra_header(nlh, 8);
	a->nla_type = T_U32;
	a->nla_len = 200;
	assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
	assert_string_equal(err, "T_ATTR: truncated: T_U32 claims 200 bytes, 8 left");
	/* nla_len shorter than its own header: would loop forever if trusted */
	a->nla_len = 2;
	assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
	/* an unknown type is skipped, but its length is still checked */
	a->nla_type = 300;
	a->nla_len = 0xffff;
	assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
	assert_non_null(strstr(err, "T_ATTR attribute 300 claims 65535 bytes"));
	/* 3 stray bytes at the end */
	nlh = msg(&mb, 100);
	mnl_attr_put_u32(nlh, T_U32, 1);
	nlh->nlmsg_len += 3;
	assert_int_equal(parse_exact(nlh, tb, NULL, err), -EBADMSG);
	assert_string_equal(err, "T_ATTR: truncated: 3 bytes left that do not form an attribute");
	/* the last attribute without its alignment padding is whole */
	nlh = msg(&mb, 100);
	mnl_attr_put_u8(nlh, T_U8, 1);
	nlh->nlmsg_len -= 3;
	assert_int_equal(parse_exact(nlh, tb, NULL, err), 0);
	assert_non_null(tb[T_U8]);
}

static void message_lengths_that_lie(void **state)
{
	static const uint32_t lens[] = { 0,	     1,		 15,	     17,
					 0x80000000, 0xff000000, 0xfffffffd, 0xffffffff };
	struct nlmsghdr *nlh = malloc(sizeof(*nlh));
	const struct nlmsghdr *out;
	char err[160];

	(void)state;
	memset(nlh, 0, sizeof(*nlh));
	nlh->nlmsg_type = 100;
	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t off = 0;

		nlh->nlmsg_len = lens[i];
		err[0] = '\0';
		assert_int_equal(rw_nl_check_msg(nlh, sizeof(*nlh), 0, err, sizeof(err)), -EBADMSG);
		assert_true(err[0] != '\0');
		assert_int_equal(rw_nl_msg_next(nlh, sizeof(*nlh), &off, &out, err, sizeof(err)),
				 -EBADMSG);
	}
	/* one whole header-only message, then the end */
	{
		size_t off = 0;

		nlh->nlmsg_len = sizeof(*nlh);
		assert_int_equal(rw_nl_msg_next(nlh, sizeof(*nlh), &off, &out, err, sizeof(err)),
				 1);
		assert_ptr_equal(out, nlh);
		assert_int_equal(rw_nl_msg_next(nlh, sizeof(*nlh), &off, &out, err, sizeof(err)),
				 0);
	}
	/* a buffer shorter than a header */
	{
		size_t off = 0;

		assert_int_equal(rw_nl_msg_next(nlh, 10, &off, &out, err, sizeof(err)), -EBADMSG);
		assert_string_equal(err, "truncated netlink message: 10 bytes, a header is 16");
	}
	free(nlh);
}

static void put_error(struct msgbuf *mb, uint32_t seq, int error, bool capped, const char *text)
{
	struct nlmsghdr *nlh = msg(mb, NLMSG_ERROR);
	struct nlmsgerr *e;

	nlh->nlmsg_seq = seq;
	nlh->nlmsg_flags = (capped ? NLM_F_CAPPED : 0) | (text ? NLM_F_ACK_TLVS : 0);
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = error;
	e->msg.nlmsg_len = sizeof(struct nlmsghdr) + 8;
	e->msg.nlmsg_seq = seq;
	if (!capped) /* the request's payload is echoed: 8 bytes here */
		mnl_nlmsg_put_extra_header(nlh, 8);
	if (text)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, text);
}

static void extended_acks(void **state)
{
	struct msgbuf mb;
	struct rw_nl_reply w = { .seq = 9 };
	char out[128];

	(void)state;
	for (int capped = 0; capped < 2; capped++) {
		put_error(&mb, 9, -EOPNOTSUPP, capped, "Device does not support DCB\n");
		rw_nl_ext_ack((struct nlmsghdr *)mb.b, out, sizeof(out));
		assert_string_equal(out, "Device does not support DCB");
		assert_int_equal(rw_nl_reply_walk(&w, mb.b, ((struct nlmsghdr *)mb.b)->nlmsg_len),
				 -EOPNOTSUPP);
		assert_string_equal(w.err, "Device does not support DCB");
	}
	/* without TLVs: no text */
	put_error(&mb, 9, -ENODEV, true, NULL);
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, ((struct nlmsghdr *)mb.b)->nlmsg_len), -ENODEV);
	assert_string_equal(w.err, "");
	/* an echoed length that runs past the message: no text, no over-read */
	put_error(&mb, 9, -EINVAL, false, "x");
	((struct nlmsgerr *)mnl_nlmsg_get_payload((struct nlmsghdr *)mb.b))->msg.nlmsg_len =
	    0xfffffff0;
	rw_nl_ext_ack((struct nlmsghdr *)mb.b, out, sizeof(out));
	assert_string_equal(out, "");
	/* a stale error (an abandoned request's) is skipped: nothing completes */
	put_error(&mb, 8, -EINVAL, true, "old");
	assert_int_equal(rw_nl_reply_walk(&w, mb.b, ((struct nlmsghdr *)mb.b)->nlmsg_len), 0);
	/* a dump that failed: NLMSG_DONE carries the errno, then the TLVs */
	{
		struct nlmsghdr *nlh = msg(&mb, NLMSG_DONE);

		nlh->nlmsg_flags = NLM_F_MULTI | NLM_F_ACK_TLVS;
		*(int *)mnl_nlmsg_put_extra_header(nlh, sizeof(int)) = -EMSGSIZE;
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, "dump too big");
		assert_int_equal(rw_nl_reply_walk(&w, mb.b, nlh->nlmsg_len), -EMSGSIZE);
		assert_string_equal(w.err, "dump too big");
	}
}

/* ---- dcb: one bad attribute blanks only what it carries ---- */

static int parse_ieee_exact(struct msgbuf *mb, size_t len, struct dcb_ieee *d, char *err)
{
	char *copy = malloc(len);
	int r;

	memcpy(copy, mb->b, len);
	r = dcb_parse_ieee(copy, len, d, err, 160);
	free(copy);
	return r;
}

/* The fields each DCB attribute carries; a bad one must blank these and nothing else. */
static const enum field_id carried[][5] = {
	[BAD_BUFFER] = { F_NETDEV_PRIO_BUFFER, F_NETDEV_BUFFER_SIZE, F_NETDEV_BUFFER_TOTAL },
	[BAD_PFC] = { F_NETDEV_PFC_ENABLED, F_NETDEV_PFC_CAP, F_NETDEV_PFC_DELAY,
		      F_NETDEV_PFC_REQUESTS, F_NETDEV_PFC_INDICATIONS },
	[BAD_ETS] = { F_NETDEV_ETS_PRIO_TC, F_NETDEV_ETS_TC_TSA, F_NETDEV_ETS_TC_BW },
	[BAD_MAXRATE] = { F_NETDEV_ETS_TC_MAXRATE },
	[BAD_APP] = { F_NETDEV_DSCP_MAP, F_NETDEV_TRUST },
	[BAD_DCBX] = { F_NETDEV_DCBX_MODE, F_NETDEV_DCBX_HOST },
};

static bool is_carried(enum bad_part b, int id)
{
	for (size_t i = 0; i < ARRAY_SIZE(carried[b]); i++)
		if (carried[b][i] && (int)carried[b][i] == id)
			return true;
	return false;
}

static void dcb_bad_attribute_blanks_only_its_fields(void **state)
{
	static const struct {
		enum bad_part bad;
		const char *err;
	} cases[] = {
		{ BAD_BUFFER, "DCB_ATTR_DCB_BUFFER: payload 12 bytes, want 44" },
		{ BAD_PFC, "DCB_ATTR_IEEE_PFC: payload 12 bytes, want 136" },
		{ BAD_ETS, "DCB_ATTR_IEEE_ETS: payload 12 bytes, want 59" },
		{ BAD_MAXRATE, "DCB_ATTR_IEEE_MAXRATE: payload 12 bytes, want 64" },
		{ BAD_APP, "DCB_ATTR_IEEE_APP: DSCP 99 -> priority 5 out of range" },
		{ BAD_DCBX, "DCB_ATTR_DCBX: payload 2 bytes, want 1" },
	};
	struct msgbuf mb;
	struct dcb_ieee d;
	char err[160];

	(void)state;
	assert_int_equal(sizeof(struct dcbnl_buffer), 44);
	assert_int_equal(sizeof(struct ieee_pfc), 136);
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		struct node_model m;
		struct object *o;
		size_t len = ieee_msg(&mb, cases[c].bad);

		err[0] = '\0';
		assert_int_equal(parse_ieee_exact(&mb, len, &d, err), -EBADMSG);
		assert_true(d.partial);
		assert_string_equal(err, cases[c].err);

		model_init(&m);
		o = model_add_netdev(&m, "eth2");
		dcb_fill(o, &d, true);
		for (int id = 0; id < F__COUNT; id++) {
			if (fields[id].src != SRC_DCB)
				continue;
			if (is_carried(cases[c].bad, id)) {
				assert_int_equal(o->f[id].state, ABS_ERROR);
				assert_int_equal(o->f[id].err, EBADMSG);
			} else {
				if (o->f[id].state != ABS_NONE)
					fail_msg("bad part %d: %s absent", cases[c].bad,
						 fields[id].path);
			}
		}
		model_free(&m);
	}
	/* and the good values are the message's, not zeros */
	{
		struct node_model m;
		struct object *o;

		assert_int_equal(parse_ieee_exact(&mb, ieee_msg(&mb, BAD_BUFFER), &d, err),
				 -EBADMSG);
		model_init(&m);
		o = model_add_netdev(&m, "eth2");
		dcb_fill(o, &d, true);
		assert_int_equal(o->f[F_NETDEV_PFC_ENABLED].v.set, 1 << 3);
		assert_int_equal(o->f[F_NETDEV_PFC_REQUESTS].v.arr[3], 1234);
		assert_int_equal(o->f[F_NETDEV_ETS_TC_MAXRATE].v.arr[3], 25000000);
		assert_string_equal(o->f[F_NETDEV_TRUST].v.s, "dscp");
		assert_int_equal(o->f[F_NETDEV_DSCP_MAP].v.dscp[26], 3);
		assert_string_equal(o->f[F_NETDEV_DCBX_MODE].v.s, "host,ieee");
		model_free(&m);
	}
	/* a good message is not partial */
	assert_int_equal(parse_ieee_exact(&mb, ieee_msg(&mb, BAD_NONE), &d, err), 0);
	assert_false(d.partial);
	/* a nest cut inside: everything in it is untrusted, DCBX (outside it) stands */
	{
		struct node_model m;
		struct object *o;

		assert_int_equal(parse_ieee_exact(&mb, ieee_msg(&mb, CUT_NEST), &d, err), -EBADMSG);
		assert_true(d.partial);
		assert_non_null(strstr(err, "DCB_ATTR_IEEE: truncated"));
		model_init(&m);
		o = model_add_netdev(&m, "eth2");
		dcb_fill(o, &d, true);
		assert_int_equal(o->f[F_NETDEV_PFC_ENABLED].state, ABS_ERROR);
		assert_int_equal(o->f[F_NETDEV_BUFFER_TOTAL].state, ABS_ERROR);
		assert_int_equal(o->f[F_NETDEV_ETS_TC_MAXRATE].state, ABS_ERROR);
		assert_int_equal(o->f[F_NETDEV_TRUST].state, ABS_ERROR);
		assert_string_equal(o->f[F_NETDEV_DCBX_MODE].v.s, "host,ieee");
		model_free(&m);
	}
}

/* ---- the reproducers ---- */

static int walk_any(const struct nlmsghdr *nlh, void *arg, char *err, size_t errlen)
{
	struct rdma_nl_dev d;

	(void)arg;
	return rdma_nl_parse_dev(nlh, &d, err, errlen);
}

/* The harness the reproducers were found with: byte 0 % 5 picks the parser. */
static int run_repro(const uint8_t *data, size_t size, char *err, size_t errlen)
{
	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1);
	union {
		struct dcb_ieee ieee;
		struct ethtool_pause pause;
	} u;
	uint8_t dcbx;
	uint16_t id;
	int r = -EINVAL;

	memcpy(buf, data + 1, len);
	switch (data[0] % 5) {
	case 0:
		r = dcb_parse_ieee(buf, len, &u.ieee, err, errlen);
		break;
	case 1:
		r = dcb_parse_dcbx(buf, len, &dcbx, err, errlen);
		break;
	case 2:
		r = ethtool_parse_pause(buf, len, 0x15, &u.pause, err, errlen);
		break;
	case 3:
		r = genl_parse_family(buf, len, &id, err, errlen);
		break;
	case 4: {
		struct rw_nl_reply w = { .msg = walk_any };

		if (len >= sizeof(struct nlmsghdr)) {
			w.seq = ((struct nlmsghdr *)buf)->nlmsg_seq;
			w.type = ((struct nlmsghdr *)buf)->nlmsg_type;
		}
		r = rw_nl_reply_walk(&w, buf, len);
		snprintf(err, errlen, "%s", w.err);
		break;
	}
	}
	free(buf);
	return r;
}

static void reproducers(void **state)
{
	static const char *const names[] = {
		"min-dcb-ieee-overread-nlmsglen-80000000.bin",
		"min-ethtool-pause-overread-nlmsglen-80000000.bin",
		"min-genl-family-overread.bin",
		"min-rdma-walk-segv-nlmsglen-ff000000.bin",
		"min-rdma-walk-hang-nlmsglen-fffffffd.bin",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char path[4096], *data, err[192] = "";
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", fixtures, names[i]);
		assert_int_equal(read_file_all(path, &data, &len), 0);
		assert_int_equal(len, 17);
		/* returns (the hang is gone), with a clear error (the over-read is gone) */
		assert_int_equal(run_repro((const uint8_t *)data, len, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "does not fit in 16 bytes"));
		free(data);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(policy_rows),
		cmocka_unit_test(lenient_marks_bad),
		cmocka_unit_test(attribute_lengths_that_lie),
		cmocka_unit_test(message_lengths_that_lie),
		cmocka_unit_test(extended_acks),
		cmocka_unit_test(dcb_bad_attribute_blanks_only_its_fields),
		cmocka_unit_test(reproducers),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s FIXTURES/netlink\n", argv[0]);
		return 2;
	}
	fixtures = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
