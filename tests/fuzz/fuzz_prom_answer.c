// SPDX-License-Identifier: MIT
/*
 * An answer of Prometheus's /api/v1/query as fleet check --prometheus reads
 * it (src/fleet/fleet_prom.c: the envelope walked once, each series decoded
 * by hand as its last byte comes in).  Byte 0 picks the metric the answer is
 * for (a number, a priority set, a DSCP map, a GID table, an info string,
 * GPU-NIC paths, up, a compact DSCP map or priority set) and, divided by 10,
 * the size of the pieces the body comes in (0: all at once); the rest is the body (DSCP maps and
 * priority sets in the encoded form fleet check asks for).  Contract: 0, -EINVAL or -ERANGE; on an
 * error a message naming the query; on 0 every node's instance is terminated and its model holds
 * only what the row's type allows (checked by model_free under ASan).
 */
#include <errno.h>

#include "fleet_prom.h"
#include "fuzz.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const metrics[] = {
		"roce_netdev_mtu_bytes",
		"roce_pfc_enabled",
		"roce_dscp_priority",
		"roce_rdma_gid_info",
		"roce_netdev_info",
		"roce_host_gpu_nic_pci_distance",
		"up",
		"not_a_rocewatch_metric",
		"roce_dscp_map_info",
		"roce_pfc_enabled_info",
	};
	const char *names[] = { "n1", "n2:9479", "[::1]" };
	struct fleet_prom_node nodes[3];
	struct node_model m[3];
	const char *metric;
	char err[512];
	char *body;
	int r;

	if (!size)
		return 0;
	metric = metrics[data[0] % (sizeof(metrics) / sizeof(metrics[0]))];
	body = fuzz_copy(data + 1, size - 1);
	for (int i = 0; i < 3; i++) {
		model_init(&m[i]);
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].name = names[i];
		nodes[i].m = &m[i];
	}
	r = fleet_prom_read(metric, body, size - 1, data[0] / 10, nodes, 3, err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE, "returned %d", r);
	FUZZ_CHECK(memchr(err, '\0', sizeof(err)), "message not terminated");
	if (r)
		FUZZ_CHECK(!strncmp(err, "Prometheus: query ", 18), "message '%s'", err);
	for (int i = 0; i < 3; i++) {
		FUZZ_CHECK(memchr(nodes[i].instance, '\0', sizeof(nodes[i].instance)),
			   "node %d: instance not terminated", i);
		model_free(&m[i]);
	}
	free(body);
	return 0;
}
