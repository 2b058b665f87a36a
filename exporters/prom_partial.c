// SPDX-License-Identifier: MIT
/*
 * rocewatch_collector_partial: a collector that ran but could not read some
 * of its facts (a file only root may read, a query the kernel refused)
 * still reports success 1; this says how many facts it lacks and why, so a
 * dashboard can tell "all read" from "read what it was allowed to".
 */
#include <string.h>

#include "prom.h"

/* Which collector fills the fields of each source (fields.h, enum field_source). */
static const char *const src_collector[SRC__COUNT] = {
	[SRC_LINK] = "link",	       [SRC_ETHTOOL] = "ethtool", [SRC_DCB] = "dcb",
	[SRC_QOS_SYSFS] = "qos_sysfs", [SRC_RDMA] = "rdma",	  [SRC_VERBS] = "verbs",
	[SRC_HOST] = "host",	       [SRC_WIRE] = "wire",
};

static void count_object(const struct object *o, uint64_t (*n)[2])
{
	for (int f = 0; f < F__COUNT; f++) {
		enum field_source src = fields[f].src;

		if (fields[f].obj != o->kind || src <= SRC_NONE || src >= SRC__COUNT)
			continue;
		if (o->f[f].state == ABS_PERMISSION)
			n[src][0]++;
		else if (o->f[f].state == ABS_ERROR)
			n[src][1]++;
	}
}

void prom_render_partial(struct strbuf *sb, const struct node_model *m)
{
	static const char *const reasons[2] = { "permission", "error" };
	uint64_t n[SRC__COUNT][2] = { { 0 } };

	count_object(&m->node, n);
	for (size_t i = 0; i < m->n_netdevs; i++)
		count_object(m->netdevs[i], n);
	for (size_t i = 0; i < m->n_ports; i++)
		count_object(m->ports[i], n);
	prom_family(sb, "rocewatch_collector_partial", "gauge",
		    "Facts the collector's last run could not read, by reason (permission: "
		    "the kernel or a file mode refused; error: any other failure).");
	for (int i = 0; i < RW_MAX_COLLECTORS; i++) {
		const struct collector_status *cs = &m->coll[i];

		if (!cs->name[0] || !cs->enabled)
			continue;
		for (int s = SRC_NONE + 1; s < SRC__COUNT; s++) {
			if (!src_collector[s] || strcmp(src_collector[s], cs->name))
				continue;
			for (int r = 0; r < 2; r++) {
				int first = 1;

				prom_sample_begin(sb, "rocewatch_collector_partial");
				prom_label(sb, &first, "collector", cs->name);
				prom_label(sb, &first, "reason", reasons[r]);
				prom_sample_end_u64(sb, first, n[s][r]);
			}
		}
	}
}
