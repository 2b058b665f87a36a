// SPDX-License-Identifier: MIT
/*
 * dcb_parse_ieee() on one RTM_GETDCB reply, then dcb_fill() of what it
 * kept.  Contract: 0, or -EBADMSG with an error text; a partial reply fills
 * a netdev without touching another collector's fields.
 */
#include <errno.h>

#include "fuzz.h"
#include "netdev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size), err[160] = "";
	struct dcb_ieee d;
	int r = dcb_parse_ieee(buf, size, &d, err, sizeof(err));

	FUZZ_CHECK(r == 0 || r == -EBADMSG, "returned %d", r);
	FUZZ_CHECK(!r || err[0], "-EBADMSG without a reason");
	FUZZ_CHECK(!d.partial || r == -EBADMSG, "partial but returned %d", r);
	if (!r || d.partial) {
		struct node_model m;
		struct object *o;

		model_init(&m);
		o = model_add_netdev(&m, "eth2");
		if (o) {
			field_set_int(o, F_NETDEV_MTU, 9000);
			dcb_fill(o, &d, true);
			FUZZ_CHECK(o->f[F_NETDEV_MTU].v.i == 9000, "dcb_fill changed the mtu");
		}
		model_free(&m);
	}
	free(buf);
	return 0;
}
