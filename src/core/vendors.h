/* SPDX-License-Identifier: MIT */
/*
 * One meaning per counter whatever the NIC: the table that turns each RDMA
 * driver's hw_counters names (which differ by driver and by kernel version)
 * into the driver-independent fields F_PORT_RDMA_*, and the choice between
 * two sources of the per-priority pause counters of a netdev.
 *
 * Drivers are told by the kernel driver bound to the RDMA device's parent
 * (the basename of /sys/class/infiniband/<dev>/device/driver: mlx5_core,
 * bnxt_en, ice, ionic, hns3, mana), never by the device name, which udev
 * renames; soft-RoCE has no parent device and is "rdma_rxe".
 */
#ifndef ROCEWATCH_VENDORS_H
#define ROCEWATCH_VENDORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define VENDOR_N_MEANINGS (F_PORT_RDMA_OUT_OF_BUFFER - F_PORT_RDMA_ACK_TIMEOUTS + 1)

/* One row: a meaning, a driver, the kernels it holds for, the driver's name. */
struct vendor_hw_row {
	enum field_id field;
	const char *driver;  /* device/driver link name */
	const char *kernels; /* the Debian kernels whose source has the name: docs and tests */
	const char *name;    /* as hw_counters/ and `rdma statistic` spell it */
};

extern const struct vendor_hw_row vendor_hw_rows[];
extern const size_t n_vendor_hw_rows;

/* Is this driver in the table (else the mlx5 and rxe names are tried)? */
bool vendor_known_driver(const char *driver);

/*
 * Where each meaning was found in a port's CSET_HW at the last fill, so the
 * fast poll does not search the names again while the set's names do not
 * change (counter_set.names_gen).  Zeroed: nothing cached.
 */
struct vendor_cache {
	bool valid;	    /* the slots below were found (for gen and drv) */
	uint32_t gen;	    /* the counter set's names_gen they were found for (0: no names yet) */
	const char *driver; /* the driver the slots are for (points into o->f) */
	char drv[RW_STR_MAX];
	int16_t slot[VENDOR_N_MEANINGS]; /* index in the set, -1: the driver has none */
	const char *name[VENDOR_N_MEANINGS];
};

/*
 * Fill o's F_PORT_RDMA_* from its CSET_HW by its F_PORT_DRIVER.  A meaning
 * the driver has no counter for is absent (unsupported, ENOENT), never 0.
 * With only_missing, fields already present (a snapshot that has them) are
 * kept.  cache may be NULL.
 */
void vendor_fill_port(struct object *o, struct vendor_cache *cache, bool only_missing);

/*
 * A netdev without per-priority pause counters of its own driver's naming
 * gets dcbnl's requests (tx) and indications (rx) in F_NETDEV_PFC_{TX,RX}_PAUSE;
 * F_NETDEV_PFC_SOURCE says which it is.
 */
void vendor_fill_netdev(struct object *o);
/* vendor_fill_netdev() on every netdev: after each poll. */
void vendor_fill_netdevs(struct node_model *m);

/* Both of the above over the model (after a poll, after a snapshot is read). */
void vendor_fill_model(struct node_model *m, bool only_missing);

#endif
