// SPDX-License-Identifier: MIT
/*
 * ethtool_parse_pause() on one ETHTOOL_MSG_PAUSE_GET_REPLY.  The family id
 * is the one the message carries (when it has a header), so the fuzzer
 * gets past the type check into the attributes.
 */
#include <errno.h>

#include <linux/netlink.h>

#include "fuzz.h"
#include "netdev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size), err[160] = "";
	uint16_t family = 0x15;
	struct ethtool_pause p;
	int r;

	if (size >= sizeof(struct nlmsghdr))
		memcpy(&family, data + offsetof(struct nlmsghdr, nlmsg_type), sizeof(family));
	r = ethtool_parse_pause(buf, size, family, &p, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EBADMSG, "returned %d", r);
	FUZZ_CHECK(!r || err[0], "-EBADMSG without a reason");
	if (!r) {
		struct node_model m;
		struct object *o;

		model_init(&m);
		o = model_add_netdev(&m, "eth2");
		if (o)
			ethtool_fill_pause(o, &p);
		model_free(&m);
	}
	free(buf);
	return 0;
}
