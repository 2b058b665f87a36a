/* SPDX-License-Identifier: MIT */
/*
 * One digest per node of the facts fleet rules compare (issue 38): serve
 * exports it as roce_fleet_digest_info{schema, digest}, and fleet check
 * --job --prometheus.compare engine asks the engine which nodes hold which
 * digest, fetches one node's series per digest and lets it stand for the
 * others.  The digest is a cache key, not a proof: a node reports its own
 * facts either way, and fleet check recomputes the digest of each node it
 * fetches before it lets that node stand for others.
 */
#ifndef ROCEWATCH_FLEET_DIGEST_H
#define ROCEWATCH_FLEET_DIGEST_H

#include <stdbool.h>

#include "model.h"

#define FLEET_DIGEST_METRIC "roce_fleet_digest_info"
#define FLEET_DIGEST_HEX    16 /* characters of a digest and of the schema */

/*
 * Is field id one the digest covers?  The configuration facts that the
 * shipped fleet profile compares and that every node of one design holds
 * alike (not a GUID, a leaf's name or a GPU's bus id).
 */
bool fleet_digest_field(int id);
/*
 * Does the digest cover object o?  The node, every RDMA port, and the
 * netdevs an RDMA port is bound to (a Kubernetes node's veths differ from
 * node to node and no shipped rule reads them).
 */
bool fleet_digest_object(const struct object *o);
/* The digest's field list as a name: 16 hex digits, the same in every rocewatch that agrees. */
const char *fleet_digest_schema(void);
/*
 * The digest of model m: 16 hex digits and a NUL into out.  Objects in name
 * order, each covered field that is present as the snapshot encodes it; an
 * object with none is left out.  0, or -ENOMEM.
 */
int fleet_digest(const struct node_model *m, char out[FLEET_DIGEST_HEX + 1]);

#endif
