// SPDX-License-Identifier: MIT
/*
 * The parsers of sysfs/configfs texts, one per input: byte 0 picks it, the
 * rest is the file's text.
 *   0 qos_parse_trust    1 qos_parse_dscp2prio    2 qos_parse_tclass
 *   3 rdma_parse_state   4 rdma_parse_rate        5 GID text helpers
 *   6 rdma_rocev2_ipv4_index over a table made of the text's lines
 *     ("index gid type netdev")
 * Contract: a parsed value is in its range (priorities 0-7, DSCP map
 * entries -1..7, rates not negative).
 */
#include <errno.h>
#include <inttypes.h>

#include "fuzz.h"
#include "netdev.h"
#include "rdma.h"

static void gid_table(char *text)
{
	struct gid_entry e[16];
	struct gid_table t = { .e = e, .cap = 16 };
	char *save = NULL, *line;

	for (line = strtok_r(text, "\n", &save); line && t.n < 16;
	     line = strtok_r(NULL, "\n", &save)) {
		struct gid_entry *g = &e[t.n];
		unsigned int idx;

		memset(g, 0, sizeof(*g));
		if (sscanf(line, "%u %39s %15s %63s", &idx, g->gid, g->type, g->netdev) < 2)
			continue;
		g->index = idx;
		if (!strcmp(g->type, "v2"))
			strcpy(g->type, "RoCE v2");
		t.n++;
	}
	for (size_t i = 0; i < t.n; i++) {
		int r = rdma_rocev2_ipv4_index(&t, e[i].netdev, "192.168.1.2,10.0.0.1");

		FUZZ_CHECK(r == -ENOENT || r >= 0, "index %d", r);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, out[64];
	int8_t map[64];
	int64_t v;
	uint32_t v4;
	int r;

	if (!size)
		return 0;
	s = fuzz_str(data + 1, size - 1);
	switch (data[0] % 7) {
	case 0:
		r = qos_parse_trust(s, out, sizeof(out));
		FUZZ_CHECK(r || !strcmp(out, "dscp") || !strcmp(out, "pcp"), "trust '%s'", out);
		break;
	case 1:
		r = qos_parse_dscp2prio(s, map);
		for (int d = 0; !r && d < 64; d++)
			FUZZ_CHECK(map[d] >= -1 && map[d] <= 7, "dscp %d -> %d", d, map[d]);
		break;
	case 2:
		r = qos_parse_tclass(s, &v);
		FUZZ_CHECK(r || v >= 0, "traffic class %" PRId64, v);
		break;
	case 3:
		r = rdma_parse_state(s, out, sizeof(out));
		FUZZ_CHECK(r || out[0], "empty state");
		break;
	case 4:
		r = rdma_parse_rate(s, &v);
		FUZZ_CHECK(r || v >= 0, "rate %" PRId64, v);
		break;
	case 5:
		rdma_gid_ipv4(s, &v4);
		rdma_gid_is_zero(s);
		rdma_gid_type_name(s, "Ethernet", out, sizeof(out));
		rdma_gid_type_name(s, "InfiniBand", out, sizeof(out));
		break;
	case 6:
		gid_table(s);
		break;
	}
	free(s);
	return 0;
}
