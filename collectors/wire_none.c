// SPDX-License-Identifier: MIT
/*
 * wire, as built without BPF support (-Dwire=disabled, or clang, bpftool or
 * libbpf missing at build time).  It keeps --collector.wire a known flag, so
 * asking for it fails with the reason instead of "unknown option".
 */
#include <errno.h>
#include <stdio.h>

#include "collector.h"

static int wire_none_init(struct collector_ctx *cc)
{
	snprintf(cc->detail, sizeof(cc->detail),
		 "rocewatch was built without BPF support (rebuild with -Dwire=enabled; needs "
		 "clang, bpftool and libbpf)");
	return -EOPNOTSUPP;
}

static int wire_none_collect(struct collector_ctx *cc, struct node_model *m, unsigned what)
{
	(void)cc;
	(void)m;
	(void)what;
	return -EOPNOTSUPP;
}

const struct collector wire_collector = {
	.name = "wire",
	.source = SRC_WIRE,
	.help = "RoCE v2 packets seen at tc (not available: built without BPF support)",
	.default_enabled = false,
	.init = wire_none_init,
	.collect = wire_none_collect,
};
