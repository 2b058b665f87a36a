/* SPDX-License-Identifier: MIT */
/*
 * The simulated transport of the fleet probe (test_probe_sim.c,
 * tests/bench/bench_probe.c): the coordinator's code (probe_fleet_run())
 * hands slices to it as it would POST them; each "node" decodes its slice
 * (probe_slice_decode()), runs it with the executor of serve
 * (probe_exec.c) over a link that asks the fabric model (probe_fabric.h)
 * what becomes of each probe, and encodes its results
 * (probe_results_encode()) for the coordinator to collect.  Only the verbs
 * calls are replaced: time is virtual (the executor is stepped through its
 * schedule as fast as it goes), replies come back at send time + the
 * modelled RTT.
 *
 * It also keeps what a node would see on the wire: bytes per port each way
 * (payload + 90 bytes of RoCE v2 framing: Ethernet header and FCS 18, IPv4 20,
 * UDP 8, BTH 12, DETH 8, ICRC 4, preamble and inter-frame gap 20), and
 * how many probes each port heard in each slot (the incast bound).
 */
#ifndef ROCEWATCH_TEST_PROBE_SIM_H
#define ROCEWATCH_TEST_PROBE_SIM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_exec.h"
#include "probe_fabric.h"
#include "probe_fleet.h"
#include "probe_slice.h"

#define SIM_FRAMING 90

struct sim {
	const struct fabric *fb;
	const struct probe_plan *p;
	struct probe_fleet_addr *addr;
	struct strbuf *results; /* [node]: encoded at post, handed over at collect */
	char (*errs)[256];	/* [node]: a slice the node refused */
	uint64_t *tx, *rx;	/* [port] bytes */
	uint8_t *heard;		/* [port * n_slots + slot], saturating */
	uint8_t heard_max;
	uint64_t probes, replies;
	int64_t node_cpu_max_ns, node_cpu_total_ns;
	bool count_heard;
};

struct sim_node {
	struct sim *sim;
	uint32_t node;
	struct probe_exec ex;
	const struct probe_slice *s;
	int64_t now;
};

static inline int64_t sim_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline size_t sim_port(const struct probe_plan *p, uint32_t node, unsigned port)
{
	return p->port_rail_at[node] + port;
}

/* The fake GID of node i's port k: fd00::/8, then the node and the port. */
static inline void sim_gid(uint8_t gid[16], uint32_t node, unsigned port)
{
	memset(gid, 0, 16);
	gid[0] = 0xfd;
	gid[1] = (uint8_t)(node >> 24);
	gid[2] = (uint8_t)(node >> 16);
	gid[3] = (uint8_t)(node >> 8);
	gid[4] = (uint8_t)node;
	gid[5] = (uint8_t)port;
}

static inline int sim_send(void *ctx, size_t entry, const struct probe_slice_entry *e, unsigned fl,
			   struct probe_hdr *h)
{
	struct sim_node *sn = ctx;
	struct sim *sim = sn->sim;
	const struct probe_plan *p = sim->p;
	uint32_t dst = (uint32_t)e->gid[1] << 24 | (uint32_t)e->gid[2] << 16 |
		       (uint32_t)e->gid[3] << 8 | e->gid[4];
	unsigned dport = e->gid[5];
	size_t sp = sim_port(p, sn->node, e->port), dp;
	uint32_t rtt;
	struct probe_hdr reply;

	(void)entry;
	if (dst >= p->n_nodes || dport >= p->nodes[dst].n_ports)
		return -EHOSTUNREACH;
	dp = sim_port(p, dst, dport);
	h->t_send_ns = (uint64_t)sn->now;
	sim->probes++;
	sim->tx[sp] += h->size + SIM_FRAMING;
	if (!fabric_fate(sim->fb, sn->node, p->port_rail[sp], dst, p->port_rail[dp], h->size, fl,
			 &rtt))
		return 0;
	sim->rx[dp] += h->size + SIM_FRAMING;
	if (sim->count_heard) {
		uint8_t *c = &sim->heard[dp * p->n_slots + e->slot];

		if (*c < UINT8_MAX)
			(*c)++;
		if (*c > sim->heard_max)
			sim->heard_max = *c;
	}
	sim->tx[dp] += h->size + SIM_FRAMING;
	sim->rx[sp] += h->size + SIM_FRAMING;
	sim->replies++;
	reply = *h;
	reply.type = PROBE_REPLY;
	probe_exec_reply(&sn->ex, &reply, true, sn->now + rtt);
	return 0;
}

/* One node: take the slice as serve would, run it, keep its results. */
static inline void sim_node_run(struct sim *sim, size_t i, const struct strbuf *body)
{
	struct probe_slice s;
	struct sim_node sn = { .sim = sim, .node = (uint32_t)i };
	struct probe_link link = { .send = sim_send, .ctx = &sn };
	int64_t cpu = sim_cpu_ns(), t;
	char err[256];

	if (probe_slice_decode(body->buf, body->len, &s, err, sizeof(err))) {
		snprintf(sim->errs[i], sizeof(sim->errs[i]), "%s", err);
		return;
	}
	if (probe_exec_init(&sn.ex, &s, &link)) {
		snprintf(sim->errs[i], sizeof(sim->errs[i]), "out of memory");
		probe_slice_free(&s);
		return;
	}
	for (t = s.start_ns; t != INT64_MAX; t = probe_exec_step(&sn.ex, t))
		sn.now = t;
	/* one address handle an entry, made at once, as a node that had them ready says */
	probe_results_encode(&sim->results[i], s.plan, s.node, true, probe_exec_results(&sn.ex),
			     s.n,
			     &(struct probe_ah_stats){ .made = s.n,
						       .create_ns = 1000 * (int64_t)s.n,
						       .max_ns = 1000,
						       .ready_ns = 1000 * (int64_t)s.n,
						       .before_start = true });
	probe_exec_free(&sn.ex);
	probe_slice_free(&s);
	cpu = sim_cpu_ns() - cpu;
	sim->node_cpu_total_ns += cpu;
	if (cpu > sim->node_cpu_max_ns)
		sim->node_cpu_max_ns = cpu;
}

static inline void sim_post(void *ctx, struct probe_xfer *x, size_t n)
{
	struct sim *sim = ctx;

	for (size_t k = 0; k < n; k++) {
		size_t i = x[k].node;

		/* a node that dies after taking its slice: it sends nothing, answers nothing */
		if (fabric_node_down(sim->fb, (uint32_t)i))
			continue;
		sim_node_run(sim, i, &x[k].body);
		if (sim->errs[i][0]) {
			x[k].err = -EINVAL;
			snprintf(x[k].msg, sizeof(x[k].msg), "400: %s", sim->errs[i]);
		}
	}
}

static inline void sim_collect(void *ctx, struct probe_xfer *x, size_t n, int64_t ready,
			       int64_t deadline)
{
	struct sim *sim = ctx;

	(void)ready, (void)deadline;
	for (size_t k = 0; k < n; k++) {
		if (fabric_node_down(sim->fb, (uint32_t)x[k].node)) {
			x[k].err = -ECONNREFUSED;
			snprintf(x[k].msg, sizeof(x[k].msg), "connection refused");
			continue;
		}
		sb_swap(&x[k].body, &sim->results[x[k].node]);
		sb_free(&sim->results[x[k].node]);
	}
}

static inline void sim_free(struct sim *sim)
{
	if (sim->results)
		for (size_t i = 0; i < sim->p->n_nodes; i++)
			sb_free(&sim->results[i]);
	free(sim->results);
	free(sim->errs);
	free(sim->addr);
	free(sim->tx);
	free(sim->rx);
	free(sim->heard);
	memset(sim, 0, sizeof(*sim));
}

static inline int sim_init(struct sim *sim, const struct fabric *fb, const struct probe_plan *p,
			   bool count_heard)
{
	size_t np = p->port_rail_at[p->n_nodes];

	memset(sim, 0, sizeof(*sim));
	sim->fb = fb;
	sim->p = p;
	sim->count_heard = count_heard;
	sim->results = calloc(p->n_nodes, sizeof(*sim->results));
	sim->errs = calloc(p->n_nodes, sizeof(*sim->errs));
	sim->addr = calloc(np, sizeof(*sim->addr));
	sim->tx = calloc(np, sizeof(*sim->tx));
	sim->rx = calloc(np, sizeof(*sim->rx));
	sim->heard = count_heard ? calloc(np * p->n_slots, 1) : NULL;
	if (!sim->results || !sim->errs || !sim->addr || !sim->tx || !sim->rx ||
	    (count_heard && !sim->heard)) {
		sim_free(sim);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < p->n_nodes; i++)
		for (unsigned k = 0; k < p->nodes[i].n_ports; k++) {
			struct probe_fleet_addr *a = &sim->addr[sim_port(p, i, k)];

			snprintf(a->device, sizeof(a->device), "mlx5_%u", k);
			a->port = 1;
			sim_gid(a->gid, i, k);
			a->qpn = 0x100 + k;
		}
	return 0;
}

static inline struct probe_transport sim_transport(struct sim *sim)
{
	return (struct probe_transport){ .post = sim_post, .collect = sim_collect, .ctx = sim };
}

#endif
