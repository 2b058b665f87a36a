/* SPDX-License-Identifier: MIT */
/*
 * Rails and roles: which rail each RDMA port is cabled to and what it is
 * for, derived from the facts the collectors found and the site's own
 * knowledge (a rail map file, the profiles' roles), after every poll.
 *
 * Role, first that answers: the `roles:` patterns of the profiles (netdev,
 * RDMA device or PCI address); the netdev with the default route is
 * management; peer evidence (the same port of every sibling card of one
 * model); a port with no IPv4 RoCE v2 GID that was never ACTIVE is unused;
 * the rest are compute.  Rail, for compute and storage ports, from the
 * sources in the order the profile's rail_source names: map, lldp, subnet,
 * order (position among the node's compute ports: a guess, and marked so).
 */
#ifndef ROCEWATCH_FABRIC_H
#define ROCEWATCH_FABRIC_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "model.h"

enum port_role {
	ROLE_NONE,
	ROLE_COMPUTE,
	ROLE_STORAGE,
	ROLE_MANAGEMENT,
	ROLE_UNUSED,
	ROLE__COUNT,
};

enum rail_src {
	RAIL_SRC_MAP,
	RAIL_SRC_LLDP,
	RAIL_SRC_SUBNET,
	RAIL_SRC_ORDER,
	RAIL_SRC__COUNT,
};

struct fabric_role_rule {
	regex_t re;
	char *pattern;
	char *origin; /* "profile lossless-roce" */
	enum port_role role;
};

struct fabric_rail_entry {
	char *key;  /* PCI address, netdev or RDMA device name */
	char *rail; /* the rail's name */
};

struct fabric_config {
	enum rail_src order[RAIL_SRC__COUNT];
	int n_order;
	int subnet_prefix; /* 1..32: the rail of a GID's IPv4 address */
	bool peer_evidence;
	struct fabric_role_rule *roles;
	size_t n_roles;
	struct fabric_rail_entry *map;
	size_t n_map;
	char *map_file; /* for reasons: "rail map /etc/rocewatch/rails.yaml" */
};

void fabric_config_init(struct fabric_config *fc);
void fabric_config_free(struct fabric_config *fc);
/* The profile parameter's words ("map,lldp,subnet,order"); -EINVAL with err naming the word. */
int fabric_config_rail_sources(struct fabric_config *fc, const char *list, char *err,
			       size_t errlen);
/* A `roles:` pattern; -EINVAL with err naming it when it does not compile. */
int fabric_config_add_role(struct fabric_config *fc, const char *pattern, enum port_role role,
			   const char *origin, char *err, size_t errlen);
/* One rail map line: key (PCI address or name) -> rail.  -EEXIST for a repeated key. */
int fabric_config_add_rail(struct fabric_config *fc, const char *key, const char *rail);

const char *fabric_role_name(enum port_role r);
/* ROLE_NONE for a word that names no role. */
enum port_role fabric_role_parse(const char *s);
const char *fabric_rail_src_name(enum rail_src s);

/* Fill the fabric fields (SRC_FABRIC) of every port and the node from the model's facts. */
void fabric_derive(struct node_model *m, const struct fabric_config *fc);

#endif
