/* SPDX-License-Identifier: MIT */
/*
 * fleet check --job on the engine: nodes alike by their fleet digest,
 * fetched once (fleet_share.c), and the step of fleet check it uses.
 */
#ifndef ROCEWATCH_FLEET_SHARE_H
#define ROCEWATCH_FLEET_SHARE_H

#include <stdbool.h>

#include "client_opts.h"
#include "fields.h"
#include "fleet.h"

/*
 * Every Prometheus node of the run into the rules, those alike fetched once:
 * 0 with *done, or with !*done when the rules read a fact the digest does
 * not cover, or no two nodes have one digest (older serves: then nothing was
 * fetched); -ENOMEM.
 * used: the fields the rules read.
 */
int fleet_share_run(struct fleet_run *fr, const struct client_opts *co, const bool used[F__COUNT],
		    bool *done);
/* A representative's model m, kept for its group (fleet_share_run() frees it). */
void fleet_share_keep(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m);
void fleet_share_free(struct fleet_run *fr);

/* fleet_cmd.c: the Prometheus nodes not yet gathered, with the fields in used[]. */
int fleet_gather_prometheus(struct fleet_run *fr, const struct client_opts *co, const bool *used);

#endif
