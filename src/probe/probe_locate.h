/* SPDX-License-Identifier: MIT */
/*
 * The fleet probe's localizer: from the results matrix of a plan
 * (probe_plan.h), the faults by class, each with its evidence and what to
 * do about it.  Pure computation, like the planner.
 *
 * A pair is *lost* when no probe of any size came back, *MTU-short* when
 * the small sizes came back and its path-MTU size did not, *path-partial*
 * when some of its ECMP paths (the main one, label 0, and each flow label)
 * answered and others did not.  Per rail, a port whose pairs are lost with
 * at least 3/4 of its peers (and at least min(3, its pairs) of them) is a
 * culprit; the classes, in the order they are looked for:
 *
 *   node_rail   a culprit port: its NIC, optic, cable or leaf port.  Its
 *               loopback and its own counters (link_downed, carrier changes,
 *               symbol errors) are quoted and say which: a loopback that
 *               fails is the NIC (drain-node); else the link
 *               (reseat-or-replace-cable).  A node lost on every rail that
 *               also returned no result is down (drain-node).
 *   leaf        culprits that cover 3/4 or more of a known leaf's ports on
 *               the rail (at least 2): the leaf, or its uplinks when pairs
 *               inside it pass; every pair of a rail with 3 or more nodes: the
 *               rail's switching; pairs under one leaf lost that no port
 *               explains.
 *   spine_paths path-partial cross-leaf pairs (or lost ones no port
 *               explains), at least 2: the path set, with the labels that
 *               failed and the leaf most of them go through.
 *   path_mtu    MTU-short pairs, located by the same culprit rule (a port or
 *               leaf port at a smaller MTU), else the whole rail.
 *   rail_only   cross-rail pairs inside the hosts lost on 9/10 or more of the
 *               hosts that probed them, between ports that pass on their
 *               rails: the fabric does not join those rails.  A job's
 *               NCCL_CROSS_NIC=1 then hangs: critical with cross_nic, else a
 *               warning.
 *   host_path   a loopback lost (on a port that passes with its peers), or
 *               over 8 times the fleet's median loopback RTT and 20 us above
 *               it: the host's own path (PCIe, ACS, IOMMU), with the host's
 *               facts beside it.
 *
 * Actions come from the health rules' vocabulary (docs/rules.md: fix-config,
 * reset-link, reseat-or-replace-cable, drain-node, reload-driver,
 * contact-vendor).
 */
#ifndef ROCEWATCH_PROBE_LOCATE_H
#define ROCEWATCH_PROBE_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_plan.h"

enum probe_class {
	PROBE_NODE_RAIL,
	PROBE_LEAF,
	PROBE_SPINE_PATHS,
	PROBE_PATH_MTU,
	PROBE_RAIL_ONLY,
	PROBE_HOST_PATH,
	PROBE__CLASSES,
};

/* The health rules' `action:` words (rules/engine.h rule_action_name()), in their order. */
enum probe_action {
	PROBE_ACT_FIX_CONFIG,
	PROBE_ACT_RESET_LINK,
	PROBE_ACT_RESEAT_CABLE,
	PROBE_ACT_DRAIN_NODE,
	PROBE_ACT_RELOAD_DRIVER,
	PROBE_ACT_CONTACT_VENDOR,
	PROBE__ACTIONS,
};

enum probe_severity {
	PROBE_SEV_WARNING = 1,
	PROBE_SEV_CRITICAL = 2,
};

#define PROBE_EVIDENCE_MAX 512
#define PROBE_LEAF_MAX	   64

struct probe_finding {
	enum probe_class cls;
	enum probe_severity severity;
	enum probe_action action;
	uint32_t *nodes; /* node indexes, increasing */
	size_t n_nodes;
	uint16_t *rails; /* rail indexes, increasing */
	size_t n_rails;
	char leaf[PROBE_LEAF_MAX]; /* "" when not about a leaf */
	uint64_t pairs_bad, pairs_tested;
	char evidence[PROBE_EVIDENCE_MAX];
};

/* What a rail's pairs did: the per-rail matrix of the report. */
struct probe_rail_stat {
	uint64_t planned, tested, ok, lost, mtu_short, path_partial;
	int64_t rtt_p50_ns, rtt_p99_ns; /* of the pairs' smallest RTTs; -1 none */
};

struct probe_locate_opts {
	bool cross_nic; /* the job sets NCCL_CROSS_NIC=1: rail_only is critical */
};

struct probe_findings {
	struct probe_finding *f; /* worst first: severity, then nodes and pairs affected */
	size_t n;
	struct probe_rail_stat *rails;	   /* [plan->n_rails] */
	struct probe_rail_stat host, loop; /* inside the hosts: cross-rail pairs, loopbacks */
	size_t nodes_without_result;
	/*
	 * [node]: entries of its slice it returned a result for that say nothing
	 * (no probe left in time, or the path-MTU size alone left and was lost);
	 * NULL when there is none.  Not a pass: the command calls them unknown.
	 */
	uint32_t *untested;
	uint64_t untested_total;
};

/*
 * Locate the faults: res[i] is node i's results, one per entry of its slice,
 * or NULL when it returned none (what it sent is unknown; what others sent it
 * still counts).  0 or -ENOMEM; out is zeroed first and safe to free.
 */
int probe_locate(const struct probe_plan *p, const struct probe_result *const *res,
		 const struct probe_locate_opts *o, struct probe_findings *out);
void probe_findings_free(struct probe_findings *f);

/* One pair's outcome, as the localizer reads a result (serve's roce_probe_pairs_total). */
enum probe_outcome {
	PROBE_OUT_UNTESTED,
	PROBE_OUT_OK,
	PROBE_OUT_LOST,	 /* no probe of any size came back */
	PROBE_OUT_MTU,	 /* the small sizes came back, the path-MTU size did not */
	PROBE_OUT_PATHS, /* some ECMP paths (flow labels) answered, others did not */
};
/* mtu: the pair's path MTU (the largest size it was probed with). */
enum probe_outcome probe_result_outcome(unsigned mtu, const struct probe_result *x);
const char *probe_outcome_name(enum probe_outcome o);

const char *probe_class_name(enum probe_class c);
const char *probe_action_name(enum probe_action a);

#endif
