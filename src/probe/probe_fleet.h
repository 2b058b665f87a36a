/* SPDX-License-Identifier: MIT */
/*
 * The fleet probe's coordinator: plan -> every node's slice -> a transport
 * that hands them out and brings the results back -> the localizer.  The
 * transport is HTTP to each node's serve in `rocewatch fleet probe`
 * (src/cmd/fleet_probe_cmd.c) and an in-process fabric in the benchmark
 * (tests/bench/bench_probe.c); everything above it is this file.
 *
 * Bounded whatever a node does: slices go out in batches (so at most
 * `batch` encoded slices are in memory at once), all nodes start at one
 * time `lead` after the plan is made, results are asked for once the
 * schedule and its wait are over and until `collect` later; a node that did
 * not take its slice, did not answer or answered garbage is named in its
 * error, and its results are missing (NULL) for the localizer, which still
 * counts what the others sent it.
 */
#ifndef ROCEWATCH_PROBE_FLEET_H
#define ROCEWATCH_PROBE_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_locate.h"
#include "probe_plan.h"
#include "probe_slice.h"
#include "strbuf.h"

/* Where a port's probes go, parallel to the plan's ports (p->port_rail_at). */
struct probe_fleet_addr {
	char device[64];
	unsigned port;
	uint8_t gid[16];
	uint32_t qpn;
};

struct probe_xfer {
	size_t node;
	struct strbuf body; /* post: the slice; collect: the results */
	int err;	    /* 0, or -errno: msg says why */
	char msg[320];
	double seconds;
};

struct probe_transport {
	/* Hand x[k].node its slice x[k].body, for every k; a failure is x[k].err and msg. */
	void (*post)(void *ctx, struct probe_xfer *x, size_t n);
	/*
	 * Bring back each x[k].node's results into x[k].body, not before ready_ns
	 * and giving up at deadline_ns (the coordinator's clock); a node still
	 * running or not answering is x[k].err (-ETIMEDOUT, -EAGAIN...).
	 */
	void (*collect)(void *ctx, struct probe_xfer *x, size_t n, int64_t ready_ns,
			int64_t deadline_ns);
	void *ctx;
};

struct probe_fleet_opts {
	uint64_t plan_id;
	uint32_t session;
	unsigned dscp;
	size_t batch;	      /* nodes per post/collect call: 64 */
	int64_t (*now)(void); /* the common clock (CLOCK_REALTIME); a test's own */
	/*
	 * How much later than the plan's modelled collection a node's results
	 * may come (its serve busy, a slow link) before it is named: 0 none.
	 */
	int64_t grace_ns;
	struct probe_locate_opts locate;
};

/* What each stage took, and what crossed the wire. */
struct probe_fleet_stats {
	int64_t encode_ns, post_ns, collect_ns, decode_ns, locate_ns;
	uint64_t slice_bytes, result_bytes;
	int64_t start_ns, ready_ns, deadline_ns;
};

struct probe_fleet_out {
	struct probe_result **res; /* [node]: NULL when it returned none */
	char **err;		   /* [node]: why not, NULL when it did */
	size_t failed;
	/*
	 * The nodes' address handles (probe_ahs.h) from those that said: counts
	 * and create time summed, the longest call and the slowest node's
	 * ready time (-1: a node's were not all made before its run ended),
	 * before_start when every node's were; ah_nodes said, ah_late of them
	 * not before the start.
	 */
	struct probe_ah_stats ah;
	size_t ah_nodes, ah_late;
	struct probe_findings f;
	struct probe_fleet_stats st;
};

/*
 * Run plan p: addr holds every port's address (p->port_rail_at indexing).
 * 0, or -ENOMEM (out is safe to free either way).
 */
int probe_fleet_run(const struct probe_plan *p, const struct probe_fleet_addr *addr,
		    const struct probe_transport *t, const struct probe_fleet_opts *o,
		    struct probe_fleet_out *out);
void probe_fleet_out_free(struct probe_fleet_out *out, size_t n_nodes);
/* Node i's slice of p (the addresses its entries send to) into s; 0 or -ENOMEM. */
int probe_fleet_slice(const struct probe_plan *p, const struct probe_fleet_addr *addr, size_t i,
		      const struct probe_fleet_opts *o, int64_t start_ns, struct probe_slice *s);

#endif
