// SPDX-License-Identifier: MIT
/*
 * The link health parsers on one message: byte 0 picks the parser, the rest
 * is the message (ethtool_parse_fec on an ETHTOOL_MSG_FEC_GET_REPLY,
 * link_parse on an RTM_NEWLINK, rdma_nl_parse_optional on a
 * RDMA_NLDEV_CMD_STAT_GET_STATUS reply), then the fields filled from it.
 */
#include <errno.h>

#include <linux/netlink.h>

#include "fuzz.h"
#include "netdev.h"
#include "rdma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, err[192] = "";
	struct node_model m;
	struct object *o;
	int sel, r = -EBADMSG;

	if (size < 1)
		return 0;
	sel = data[0] % 3;
	buf = fuzz_copy(data + 1, size - 1);
	size--;
	model_init(&m);
	o = model_add_netdev(&m, "eth2");
	if (sel == 0) {
		struct ethtool_fec f;
		uint16_t family = 0x15;

		if (size >= sizeof(struct nlmsghdr))
			memcpy(&family, buf + offsetof(struct nlmsghdr, nlmsg_type),
			       sizeof(family));
		r = ethtool_parse_fec(buf, size, family, &f, err, sizeof(err));
		if (!r && o) {
			FUZZ_CHECK(f.corrected.n <= 9 && f.uncorrectable.n <= 9 &&
				       f.corrected_bits.n <= 9,
				   "more values than a total and 8 lanes");
			ethtool_fill_fec(o, &f, 0);
		}
	} else {
		const struct nlmsghdr *nlh;
		size_t off = 0;

		/* one whole message, as rw_nl_reply_walk() hands them over */
		if (rw_nl_msg_next(buf, size, &off, &nlh, err, sizeof(err)) == 1) {
			if (sel == 1) {
				struct link_msg c;

				r = link_parse(nlh, &c, err, sizeof(err));
				if (!r && o)
					link_fill_carrier(o, &c);
			} else {
				struct rdma_optional opt;
				struct object *p = model_add_port(&m, "mlx5_0", 1);

				memset(&opt, 0, sizeof(opt));
				r = rdma_nl_parse_optional(nlh, rdma_optional_add, &opt, err,
							   sizeof(err));
				if (!r && p)
					rdma_fill_optional(p, &opt, 0);
			}
		} else {
			r = -EBADMSG;
			if (!err[0])
				snprintf(err, sizeof(err), "no whole message");
		}
	}
	FUZZ_CHECK(r == 0 || r == -EBADMSG, "returned %d", r);
	FUZZ_CHECK(!r || err[0], "-EBADMSG without a reason");
	model_free(&m);
	free(buf);
	return 0;
}
