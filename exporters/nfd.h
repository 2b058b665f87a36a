/* SPDX-License-Identifier: MIT */
/*
 * Node Feature Discovery: the rule outcome and a few RoCE facts as a feature
 * file for NFD's `local` source, so the scheduler can keep RDMA jobs off
 * misconfigured nodes (`check --format nfd`, `serve --nfd.feature-file`).
 */
#ifndef ROCEWATCH_NFD_H
#define ROCEWATCH_NFD_H

#include <stdint.h>

#include "engine.h"
#include "model.h"
#include "strbuf.h"

/* Label names, under NFD's own namespace (allowed by every nfd-master). */
#define NFD_PREFIX "feature.node.kubernetes.io/rocewatch."

/*
 * The feature file: roce-ready, status, one status per profile, active-mtu and
 * pfc-priority when the model has them.  expiry_unix > 0 adds NFD's
 * `# +expiry-time=` directive, so the labels go when rocewatch stops writing.
 */
void nfd_render(struct strbuf *out, const struct rules_engine *e, const struct node_model *m,
		int64_t expiry_unix);
/* Write it to path atomically (a dot file beside it, which NFD ignores, then rename). */
int nfd_write_file(const char *path, const struct strbuf *content);

#endif
