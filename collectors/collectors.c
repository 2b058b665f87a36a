// SPDX-License-Identifier: MIT
/* The explicit table of collectors, in the order they run each poll. */
#include <string.h>

#include "collector.h"

extern const struct collector link_collector;
extern const struct collector ethtool_collector;
extern const struct collector dcb_collector;
extern const struct collector qos_sysfs_collector;
extern const struct collector rdma_collector;
extern const struct collector verbs_collector;
extern const struct collector host_collector;
extern const struct collector lldp_collector;
extern const struct collector wire_collector; /* wire.c, or wire_none.c without BPF */

const struct collector *const collectors[] = {
	&link_collector, &ethtool_collector, &dcb_collector,
	/* after the netdev collectors: rdma links its ports to their netdevs */
	&rdma_collector, &verbs_collector, /* fills the ports rdma found */
	/* after dcb (OFED qos/trust and dscp2prio replace dcb's) and after rdma (it fills
	 * rdma_cm/traffic_class on the ports rdma made) */
	&qos_sysfs_collector, &host_collector,
	&lldp_collector, /* after link: joins the LLDP group on the netdevs it found */
	&wire_collector, /* last: attaches to the netdevs that carry the ports found above */
};

const int n_collectors = sizeof(collectors) / sizeof(collectors[0]);

int collector_index(const char *name)
{
	for (int i = 0; i < n_collectors; i++)
		if (!strcmp(collectors[i]->name, name))
			return i;
	return -1;
}

void collector_blank(const struct collector *c, struct node_model *m, int err)
{
	struct object **objs;

	if (c->source == SRC_NONE)
		return; /* SRC_NONE rows are the model's own, not a collector's */
	field_absent_source_errno(&m->node, c->source, FIELDS_ALL, err);
	for (int k = OBJ_NETDEV; k < OBJ__COUNT; k++) {
		size_t n = model_objects(m, (enum obj_kind)k, &objs);

		for (size_t i = 0; i < n; i++)
			field_absent_source_errno(objs[i], c->source, FIELDS_ALL, err);
	}
}
