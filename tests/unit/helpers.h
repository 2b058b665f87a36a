/* SPDX-License-Identifier: MIT */
/* A small, fully populated node model shared by the unit tests. */
#ifndef ROCEWATCH_TEST_HELPERS_H
#define ROCEWATCH_TEST_HELPERS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "model.h"
#include "util.h"

static inline void build_model(struct node_model *m)
{
	struct object *a, *b, *p;
	int8_t map[RW_DSCP_COUNT];

	model_init(m);
	strlcpy0(m->host, "gpu-node-07", sizeof(m->host));
	m->time.tv_sec = 1764672000;
	m->time.tv_nsec = 250000000;
	strlcpy0(m->coll[0].name, "link", sizeof(m->coll[0].name));
	m->coll[0].enabled = m->coll[0].ran = true;
	m->coll[0].duration = 0.00025;

	field_set_str(&m->node, F_NODE_KERNEL, "6.1.0-27-amd64");
	field_set_int(&m->node, F_NODE_MEMLOCK, 65536);
	field_set_bool(&m->node, F_NODE_MEMLOCK_UNLIMITED, false);

	/* created out of order: output must still be sorted */
	b = model_add_netdev(m, "eth3");
	a = model_add_netdev(m, "eth2");
	a->ifindex = 4;
	b->ifindex = 5;
	field_set_int(a, F_NETDEV_MTU, 9000);
	field_set_int(b, F_NETDEV_MTU, 1500);
	field_set_str(a, F_NETDEV_OPERSTATE, "up");
	field_set_str(b, F_NETDEV_OPERSTATE, "down");
	field_set_str(a, F_NETDEV_DRIVER, "mlx5_core");
	field_set_str(a, F_NETDEV_FIRMWARE, "28.39.1002");
	field_set_str(a, F_NETDEV_BUS, "0000:17:00.0");
	/* eth2's switch port, from a frame of the rail-5 leaf; eth3 has heard none */
	field_set_str(a, F_NETDEV_LLDP_SYSTEM_NAME, "leaf-r5");
	field_set_str(a, F_NETDEV_LLDP_CHASSIS_ID, "0c:42:a1:00:05:00");
	field_set_str(a, F_NETDEV_LLDP_PORT_ID, "Ethernet5/1");
	field_set_str(a, F_NETDEV_LLDP_PORT_DESCRIPTION, "to gpu-node-07 mlx5_0");
	field_set_str(a, F_NETDEV_LLDP_SOURCE, "frames");
	field_set_int(a, F_NETDEV_LLDP_TTL, 120);
	field_absent(b, F_NETDEV_LLDP_SYSTEM_NAME, ABS_NO_DATA, RW_ENOLLDP);
	field_set_set(a, F_NETDEV_PFC_ENABLED, 1u << 3);
	field_absent(b, F_NETDEV_PFC_ENABLED, ABS_UNSUPPORTED, 95);
	field_set_prio(a, F_NETDEV_PFC_RX_PAUSE, 3, 1234);
	field_set_prio(a, F_NETDEV_PFC_RX_PAUSE_DURATION, 3, 1500000);
	memset(map, -1, sizeof(map));
	map[26] = 3;
	map[48] = 6;
	field_set_dscp_map(a, F_NETDEV_DSCP_MAP, map);
	/* dcbnl's kbit/s: TC3 capped at 25 Gbit/s, the other TCs unlimited (0) */
	for (int tc = 0; tc < RW_PRIO_COUNT; tc++)
		field_set_prio(a, F_NETDEV_ETS_TC_MAXRATE, tc, tc == 3 ? 25000000 : 0);
	cset_set(&a->cs[CSET_ETHTOOL], "rx_discards_phy", 7);
	cset_set(&a->cs[CSET_ETHTOOL], "rx_prio3_pause", 1234);
	/* a name that needs escaping must survive: */
	field_set_str(b, F_NETDEV_KIND, "we\"ird\\kind");

	p = model_add_port(m, "mlx5_0", 1);
	p->ifindex = 4;
	field_set_str(p, F_PORT_STATE, "ACTIVE");
	field_set_int(p, F_PORT_ACTIVE_MTU, 4096);
	field_set_str(p, F_PORT_NETDEV, "eth2");
	cset_set(&p->cs[CSET_HW], "out_of_sequence", 12);
	cset_set(&p->cs[CSET_HW], "vendor_thing", 3);
	cset_set(&p->cs[CSET_PORT], "port_xmit_data", 1000);
	p->gids.e = calloc(2, sizeof(*p->gids.e));
	p->gids.cap = 2;
	p->gids.n = 2;
	p->gids.e[0] =
	    (struct gid_entry){ 0, "fe80:0000:0000:0000:0a00:27ff:fe00:0001", "RoCE v1", "eth2" };
	p->gids.e[1] =
	    (struct gid_entry){ 3, "0000:0000:0000:0000:0000:ffff:c0a8:0102", "RoCE v2", "eth2" };
	p->f[F_PORT_GIDS].state = ABS_NONE;
	field_set_int(p, F_PORT_ROCEV2_IPV4_GID_INDEX, 3);
	model_link_ports(m);
}

static inline char *slurp(const char *path)
{
	char *buf = NULL;

	if (read_file_all(path, &buf, NULL))
		return NULL;
	return buf;
}

/*
 * Out of descriptors on purpose: the soft limit lowered and every descriptor
 * under it taken but `spare`, so the next open after those fails with
 * EMFILE.  fds_restore() gives them back.  Returns how many were taken.
 */
struct fds_held {
	struct rlimit old;
	int fd[512];
	int n;
};

static inline int fds_exhaust(struct fds_held *h, int spare)
{
	struct rlimit low;

	h->n = 0;
	if (getrlimit(RLIMIT_NOFILE, &h->old))
		return -1;
	low = h->old;
	low.rlim_cur = 256; /* above what a test holds, under fd[]'s bound */
	if (setrlimit(RLIMIT_NOFILE, &low))
		return -1;
	while (h->n < (int)(sizeof(h->fd) / sizeof(h->fd[0]))) {
		int fd = dup(0);

		if (fd < 0)
			break;
		h->fd[h->n++] = fd;
	}
	if (errno != EMFILE)
		return -1;
	for (; spare > 0 && h->n > 0; spare--)
		close(h->fd[--h->n]);
	return h->n;
}

static inline void fds_restore(struct fds_held *h)
{
	while (h->n > 0)
		close(h->fd[--h->n]);
	setrlimit(RLIMIT_NOFILE, &h->old);
}

#endif
