/* SPDX-License-Identifier: MIT */
/*
 * A model of a rail-optimised RoCE fabric with injected faults, for the fleet
 * probe's tests and benchmark (test_probe_plan.c, test_probe_locate.c,
 * tests/bench/bench_probe.c): N nodes with one port per rail; on every rail
 * the nodes are cabled to leaves of per_leaf nodes each, in node order, and
 * every leaf has an uplink to each of n_spines spines; ECMP picks the spine
 * of a cross-leaf packet from a hash of (source, destination, flow label),
 * as a switch hashes the 5-tuple whose UDP source port mlx5 derives from the
 * flow label.  fabric_fate() says what becomes of one probe; fabric_results()
 * fills a node's results as its prober would have counted them.
 */
#ifndef ROCEWATCH_TEST_PROBE_FABRIC_H
#define ROCEWATCH_TEST_PROBE_FABRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_plan.h"

enum fab_fault_kind {
	FAB_PORT_CABLE, /* node's rail port lost with every peer; its loopback answers */
	FAB_PORT_NIC,	/* the same, and its loopback fails */
	FAB_NODE_DOWN,	/* the node answers nothing and returns no result */
	FAB_LEAF_UPLINKS,
	FAB_LEAF_DEAD,
	FAB_SPINE,     /* leaf's uplink to one spine drops everything */
	FAB_MTU_PORT,  /* frames over mtu dropped on the node's rail port */
	FAB_MTU_LEAF,  /* ... on every port of the leaf */
	FAB_RAIL_ONLY, /* no traffic between rails */
	FAB_LOOP_SLOW, /* the port's loopback takes 500 us */
	FAB_LOOP_LOST, /* the port's loopback is lost */
};

struct fab_fault {
	enum fab_fault_kind kind;
	uint32_t node, rail, leaf, spine, mtu;
};

#define FAB_MAX_FAULTS 8

struct fabric {
	size_t n, rails, per_leaf, n_spines;
	bool leaves_known;
	struct probe_plan_node *nodes;
	struct probe_plan_port *ports;
	char (*names)[32];
	char (*keys)[24];
	char (*leaves)[48]; /* [node * rails + rail] */
	char (*pnames)[32];
	/* names are gpu00001 ...: node index + 1 */
	struct fab_fault f[FAB_MAX_FAULTS];
	size_t n_f;
};

static inline void fabric_free(struct fabric *fb)
{
	free(fb->nodes);
	free(fb->ports);
	free(fb->names);
	free(fb->keys);
	free(fb->leaves);
	free(fb->pnames);
	memset(fb, 0, sizeof(*fb));
}

static inline int fabric_init(struct fabric *fb, size_t n, size_t rails, size_t per_leaf,
			      bool leaves_known)
{
	memset(fb, 0, sizeof(*fb));
	fb->n = n;
	fb->rails = rails;
	fb->per_leaf = per_leaf;
	fb->n_spines = 8;
	fb->leaves_known = leaves_known;
	fb->nodes = calloc(n, sizeof(*fb->nodes));
	fb->ports = calloc(n * rails, sizeof(*fb->ports));
	fb->names = calloc(n, sizeof(*fb->names));
	fb->keys = calloc(rails, sizeof(*fb->keys));
	fb->leaves = calloc(n * rails, sizeof(*fb->leaves));
	fb->pnames = calloc(n * rails, sizeof(*fb->pnames));
	if (!fb->nodes || !fb->ports || !fb->names || !fb->keys || !fb->leaves || !fb->pnames) {
		fabric_free(fb);
		return -1;
	}
	for (size_t r = 0; r < rails; r++)
		snprintf(fb->keys[r], sizeof(fb->keys[r]), "%zu", r);
	for (size_t i = 0; i < n; i++) {
		snprintf(fb->names[i], sizeof(fb->names[i]), "gpu%05zu", i + 1);
		fb->nodes[i] = (struct probe_plan_node){ .name = fb->names[i],
							 .ports = &fb->ports[i * rails],
							 .n_ports = rails,
							 .host_action = -1 };
		for (size_t r = 0; r < rails; r++) {
			struct probe_plan_port *pp = &fb->ports[i * rails + r];

			snprintf(fb->leaves[i * rails + r], sizeof(fb->leaves[0]), "leaf-r%zu-%zu",
				 r, i / per_leaf);
			snprintf(fb->pnames[i * rails + r], sizeof(fb->pnames[0]), "mlx5_%zu/1", r);
			*pp = (struct probe_plan_port){ .rail = fb->keys[r],
							.leaf = leaves_known
								    ? fb->leaves[i * rails + r]
								    : NULL,
							.active_mtu = 4096,
							.name = fb->pnames[i * rails + r],
							.link_downed = 0,
							.carrier_changes = 0,
							.symbol_errors = 0 };
		}
	}
	return 0;
}

static inline void fabric_fault(struct fabric *fb, enum fab_fault_kind k, uint32_t node,
				uint32_t rail, uint32_t leaf, uint32_t spine, uint32_t mtu)
{
	if (fb->n_f < FAB_MAX_FAULTS)
		fb->f[fb->n_f++] = (struct fab_fault){ k, node, rail, leaf, spine, mtu };
	if (k == FAB_PORT_CABLE || k == FAB_PORT_NIC)
		fb->ports[(size_t)node * fb->rails + rail].link_downed = 3;
}

static inline uint32_t fab_leaf(const struct fabric *fb, uint32_t node)
{
	return (uint32_t)(node / fb->per_leaf);
}

static inline uint64_t fab_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/*
 * One probe from node a's port on rail ra to node b's port on rail rb, size
 * bytes, flow label fl: true when it comes back, with *rtt_ns.
 */
static inline bool fabric_fate(const struct fabric *fb, uint32_t a, uint32_t ra, uint32_t b,
			       uint32_t rb, unsigned size, unsigned fl, uint32_t *rtt_ns)
{
	bool loop = a == b && ra == rb, cross_rail = ra != rb;
	uint32_t la = fab_leaf(fb, a), lb = fab_leaf(fb, b);
	bool cross = cross_rail || la != lb;

	*rtt_ns = loop ? 1500 : cross ? 5200 : 3100;
	*rtt_ns += (uint32_t)(fab_hash((uint64_t)a << 40 ^ (uint64_t)b << 16 ^ ra << 8 ^ rb) % 400);
	for (size_t k = 0; k < fb->n_f; k++) {
		const struct fab_fault *f = &fb->f[k];
		bool at_a = f->node == a && f->rail == ra, at_b = f->node == b && f->rail == rb;
		bool leaf_a = f->rail == ra && la == f->leaf,
		     leaf_b = f->rail == rb && lb == f->leaf;

		switch (f->kind) {
		case FAB_PORT_CABLE:
			if (!loop && (at_a || at_b))
				return false;
			break;
		case FAB_PORT_NIC:
			if (at_a || at_b)
				return false;
			break;
		case FAB_NODE_DOWN:
			if (f->node == a || f->node == b)
				return false;
			break;
		case FAB_LEAF_UPLINKS:
			/* traffic that leaves the leaf: to another leaf or another rail */
			if (!loop && (leaf_a || leaf_b) && cross)
				return false;
			break;
		case FAB_LEAF_DEAD:
			if (!loop && (leaf_a || leaf_b))
				return false;
			break;
		case FAB_SPINE:
			if (!loop && cross && (leaf_a || leaf_b) &&
			    fab_hash((uint64_t)a << 44 ^ (uint64_t)b << 24 ^ (uint64_t)ra << 20 ^
				     (uint64_t)rb << 16 ^ fl) %
				    fb->n_spines ==
				f->spine)
				return false;
			break;
		case FAB_MTU_PORT:
			if (!loop && (at_a || at_b) && size > f->mtu)
				return false;
			break;
		case FAB_MTU_LEAF:
			if (!loop && (leaf_a || leaf_b) && size > f->mtu)
				return false;
			break;
		case FAB_RAIL_ONLY:
			if (cross_rail)
				return false;
			break;
		case FAB_LOOP_SLOW:
			if (loop && at_a)
				*rtt_ns = 500000;
			break;
		case FAB_LOOP_LOST:
			if (loop && at_a)
				return false;
			break;
		}
	}
	return true;
}

static inline bool fabric_node_down(const struct fabric *fb, uint32_t node)
{
	for (size_t k = 0; k < fb->n_f; k++)
		if (fb->f[k].kind == FAB_NODE_DOWN && fb->f[k].node == node)
			return true;
	return false;
}

/* Node i's results as its prober counts them: out[k] for entry s[k]. */
static inline void fabric_results(const struct fabric *fb, const struct probe_plan *p, size_t i,
				  const struct probe_entry *s, size_t n, struct probe_result *out)
{
	for (size_t k = 0; k < n; k++) {
		const struct probe_entry *e = &s[k];
		struct probe_result *x = &out[k];
		uint32_t rb = probe_plan_port_rail(p, e->dst, e->dst_port), rtt;
		unsigned sz[PROBE_PLAN_MAX_SIZES];
		size_t ns = probe_plan_sizes(e->mtu, sz);

		memset(x, 0, sizeof(*x));
		x->rtt_ns = PROBE_RTT_NONE;
		for (size_t c = 0; c < ns; c++)
			for (unsigned rep = 0; rep < p->repeats; rep++) {
				x->sent[c]++;
				if (fabric_fate(fb, (uint32_t)i, e->rail, e->dst, rb, sz[c], 0,
						&rtt)) {
					x->recv[c]++;
					if (rtt < x->rtt_ns)
						x->rtt_ns = rtt;
				}
			}
		x->labels_sent = e->labels;
		for (unsigned l = 1; l <= e->labels; l++)
			if (!fabric_fate(fb, (uint32_t)i, e->rail, e->dst, rb, 64, l, &rtt))
				x->labels_lost |= 1u << (l - 1);
	}
}

#endif
