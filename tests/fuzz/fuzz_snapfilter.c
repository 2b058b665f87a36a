// SPDX-License-Identifier: MIT
/*
 * The snapshot reader as fleet check reads snapshots through it
 * (snapshot_read_last_kept), on one document, for three keep sets: none,
 * all fields, and a fleet-like few (MTU, DSCP map, PFC, trust, a port's
 * rate and GIDs).  Contract (snapfilter_check.h): read for a keep set it
 * answers as read whole and as opened, message and kept model; it takes
 * only what jansson takes as JSON, and words broken JSON as jansson does.
 */
#include "fuzz.h"
#include "snapfilter_check.h"

static struct snapshot_keep *keeps[3];

static void make_keeps(void)
{
	static const struct {
		enum obj_kind kind;
		const char *path;
	} few[] = {
		{ OBJ_NETDEV, "mtu" },	 { OBJ_NETDEV, "dscp2prio" }, { OBJ_NETDEV, "pfc.enabled" },
		{ OBJ_NETDEV, "trust" }, { OBJ_RDMA_PORT, "rate" },   { OBJ_RDMA_PORT, "gids" },
		{ OBJ_NODE, "kernel" },
	};
	bool none[F__COUNT] = { 0 }, some[F__COUNT] = { 0 };

	for (size_t i = 0; i < sizeof(few) / sizeof(few[0]); i++) {
		int id = field_lookup(few[i].kind, few[i].path);

		if (id < 0)
			abort(); /* the harness is out of date */
		some[id] = true;
	}
	keeps[0] = snapshot_keep_new(none);
	keeps[1] = snapshot_keep_new(NULL);
	keeps[2] = snapshot_keep_new(some);
	if (!keeps[0] || !keeps[1] || !keeps[2])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char why[768];

	if (!keeps[0])
		make_keeps();
	for (int i = 0; i < 3; i++)
		FUZZ_CHECK(sfc_check((const char *)data, size, keeps[i], why, sizeof(why)) >= 0,
			   "keep set %d: %s", i, why);
	return 0;
}
