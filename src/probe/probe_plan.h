/* SPDX-License-Identifier: MIT */
/*
 * The fleet probe's planner (`rocewatch fleet probe`): which port probes
 * which, in which time slot, with which sizes and flow labels.  Pure
 * computation, no verbs and no HTTP, so it is unit-tested and simulated at
 * thousands of nodes (tests/unit/test_probe_plan.c, tests/bench/bench_probe.c).
 *
 * Input: the job's nodes in hostlist order, each with its probe ports; a port
 * carries a rail key (a string from the caller: the `rail` fact, or the
 * port's position in name order until that lands; the planner only compares
 * keys), its leaf ("" or NULL when unknown) and its active_mtu.
 *
 * Rails.  Every distinct key is a rail; the nodes with a port on it, in input
 * order, are its ring of N_r members.  At rail step s (0 < s < N_r) the member
 * at ring position j probes the member at (j + s) mod N_r: every port sends to
 * one peer and hears from one peer in a step (incast-free), and a step's
 * traffic stays on its rail (rail-aligned).
 *
 * Steps.  The full rail mesh s = 1 .. N_r - 1 when the modelled duration of
 * the largest rail's mesh fits the budget; beyond it the sparse set {1,
 * N_r - 1 (the -1 of hostlist order), the powers of two below N_r, K random
 * values (seeded)}: O(N log N) pairs, and every port hears from as many
 * distinct peers as there are steps, at least min(3, N_r - 1).
 *
 * Inside each host, after the rail steps: at host step h = 1 .. k - 1 port p
 * probes port (p + h) mod k of the same node (the k(k - 1) cross-rail pairs:
 * in a rail-optimised fabric leaf -> spine -> leaf, Hostmesh's plan), and in
 * the last slot every port probes itself (loopback: the host's own path,
 * Hostping's class).
 *
 * A pair gets `repeats` probes of each size: 64, 1024 and the pair's path
 * MTU, the smaller active_mtu of its two ports (1024 when neither is known).
 * A pair whose leaves differ or are not known also gets `paths` 64-byte
 * probes, one per GRH flow label 1 .. paths: mlx5 derives the RoCE v2 UDP
 * source port from the flow label (torvalds/linux
 * drivers/infiniband/hw/mlx5/ah.c, mlx5_ah_get_udp_sport(), through
 * rdma_flow_label_to_udp_sport() in include/rdma/ib_verbs.h: (fl & 0x3fff) ^
 * (fl >> 14) | 0xc000), so each label is another 5-tuple for the switches'
 * ECMP hash.  Label 0 would fall back to the device's fixed minimum port;
 * labels below 0x4000 give distinct ports.
 *
 * Cost model (what the budget is checked against):
 *   every port sends at most `rate` probes per second (default 8000, 80 % of
 *   the responder's PROBE_REPLY_RATE: a port hears from one peer per slot, and
 *   two slots that overlap by a few milliseconds of clock skew stay under the
 *   reply bound's 100 ms window);
 *   slot = ceil((3 * repeats + paths) / rate), the worst pair of a slot;
 *   slots = the largest rail's step count + (k_max - 1) host steps + 1 loopback;
 *   duration = lead (hand every node its slice before the common start)
 *            + slots * slot + wait (the last replies) + collect (results back).
 */
#ifndef ROCEWATCH_PROBE_PLAN_H
#define ROCEWATCH_PROBE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_PLAN_MAX_PATHS	 32 /* flow labels per pair: one bit each in a result */
#define PROBE_PLAN_MAX_SIZES	 3
#define PROBE_PLAN_MAX_REPEATS	 8
#define PROBE_PLAN_MAX_PORTS	 64 /* per node, as the responder opens at most */
#define PROBE_PLAN_MAX_NODES	 100000
#define PROBE_PLAN_MIN_PEERS	 3
#define PROBE_PLAN_RATE		 8000
#define PROBE_PLAN_RANDOM_STEPS	 8
#define PROBE_PLAN_DEFAULT_PATHS 8
#define PROBE_PLAN_NO_RAIL	 UINT16_MAX
#define PROBE_PLAN_NONE		 UINT32_MAX

/* What the caller knows of a port.  The planner reads rail, leaf and active_mtu. */
struct probe_plan_port {
	const char *rail; /* rail key: required */
	const char *leaf; /* NULL or "": unknown */
	unsigned active_mtu;
	/* evidence for the localizer's findings only */
	const char *name;				     /* "mlx5_3/1" */
	int64_t link_downed, carrier_changes, symbol_errors; /* -1: not known */
};

struct probe_plan_node {
	const char *name;
	const struct probe_plan_port *ports;
	size_t n_ports;
	/* evidence for a host_path finding: "ACS on at 0000:3a:00.0, IOMMU strict"; NULL none */
	const char *host_facts;
	int host_action; /* an enum probe_action for host_path, -1: drain-node */
};

enum probe_plan_mode {
	PROBE_PLAN_AUTO,   /* full mesh while it fits the budget, else sparse */
	PROBE_PLAN_FULL,   /* full mesh whatever it costs (over_budget says so) */
	PROBE_PLAN_SPARSE, /* sparse whatever the size */
};

struct probe_plan_opts {
	enum probe_plan_mode mode;
	int64_t budget_ns; /* 5 s */
	unsigned paths;	   /* flow-label probes per cross-leaf pair: 8 */
	unsigned repeats;  /* probes per size per pair: 2 */
	unsigned random_steps;
	uint64_t seed;
	unsigned rate;	    /* probes per second per port */
	int64_t lead_ns;    /* 1 s */
	int64_t wait_ns;    /* 250 ms */
	int64_t collect_ns; /* 500 ms */
	bool no_host_pairs; /* leave out the cross-rail pairs inside each host (soft-RoCE) */
};

void probe_plan_defaults(struct probe_plan_opts *o);

struct probe_plan_rail {
	char *key;
	uint32_t *ring; /* node indexes, in input order */
	uint32_t n;
	uint32_t *steps; /* s of each slot */
	uint32_t n_steps;
};

struct probe_plan {
	const struct probe_plan_node *nodes; /* the caller's; must outlive the plan */
	size_t n_nodes, n_rails;
	struct probe_plan_rail *rails;
	/* [node * n_rails + rail]: the node's port index on the rail, -1 none; its ring position */
	int16_t *port_of;
	uint32_t *pos;
	/* [node]: offset into port_rail of the node's ports' rails */
	uint16_t *port_rail;
	size_t *port_rail_at;
	int32_t *port_leaf; /* like port_rail: the leaf's number, -1 unknown */
	bool sparse, over_budget, host_pairs;
	unsigned paths, repeats, rate;
	uint32_t rail_slots, host_slots, n_slots;
	int64_t slot_ns, probe_ns, duration_ns, budget_ns;
	int64_t lead_ns, wait_ns, collect_ns; /* from the options */
	uint64_t pairs;			      /* every entry of every slice */
};

/*
 * Build the plan of n nodes: 0, or -EINVAL with err naming the node and port
 * (no rail key, two ports on one rail, too many ports or nodes, bad options),
 * -ENOMEM.  p is zeroed first and safe to free after a failure.
 */
int probe_plan_build(struct probe_plan *p, const struct probe_plan_node *nodes, size_t n,
		     const struct probe_plan_opts *o, char *err, size_t errlen);
void probe_plan_free(struct probe_plan *p);

/* The modelled duration of n_slots slots under o (the cost model above). */
int64_t probe_plan_duration(const struct probe_plan_opts *o, uint32_t n_slots, bool any_paths);

enum probe_pair_kind {
	PROBE_PAIR_RAIL = 0, /* two nodes, one rail */
	PROBE_PAIR_HOST = 1, /* two ports of one node: across rails */
	PROBE_PAIR_LOOP = 2, /* a port to itself */
};

/* One pair of a node's slice: what the node sends, in which slot. */
struct probe_entry {
	uint32_t slot;
	uint32_t dst;	   /* peer node */
	uint16_t port;	   /* the sender's port index */
	uint16_t dst_port; /* the peer's port index */
	uint16_t rail;	   /* the sender's port's rail */
	uint16_t mtu;	   /* the largest probe: the pair's path MTU */
	uint8_t kind;	   /* enum probe_pair_kind */
	uint8_t labels;	   /* flow-label probes: 0 or paths */
};

/*
 * What the sender saw of one entry: the results matrix is, per node, one of
 * these per entry of its slice, in slice order (so a result never repeats
 * who the peer was: the plan says it).  16 bytes, laid out as it travels
 * (probe_slice.h).
 */
struct probe_result {
	uint8_t sent[PROBE_PLAN_MAX_SIZES]; /* per size, increasing (probe_plan_sizes()) */
	uint8_t recv[PROBE_PLAN_MAX_SIZES]; /* intact replies */
	uint8_t damaged;		    /* replies with a damaged payload, any size */
	uint8_t labels_sent;		    /* flow-label probes sent: labels 1 .. labels_sent */
	uint32_t labels_lost;		    /* bit l - 1: label l's probe had no intact reply */
	uint32_t rtt_ns;		    /* the smallest round trip, PROBE_RTT_NONE: none */
};
#define PROBE_RTT_NONE UINT32_MAX

/* How many entries node i sends. */
size_t probe_plan_slice_len(const struct probe_plan *p, size_t node);
/*
 * Node i's entries in slot order, then port order, into out (at least
 * probe_plan_slice_len() of them): the number written.
 */
size_t probe_plan_slice(const struct probe_plan *p, size_t node, struct probe_entry *out);
/* The sizes a pair of path MTU mtu is probed with, increasing: their number. */
size_t probe_plan_sizes(unsigned mtu, unsigned sizes[PROBE_PLAN_MAX_SIZES]);
/* The rail of node's port i, PROBE_PLAN_NO_RAIL when out of range. */
uint16_t probe_plan_port_rail(const struct probe_plan *p, size_t node, size_t port);

#endif
