// SPDX-License-Identifier: MIT
/* The fleet probe's planner (probe_plan.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_plan.h"

void probe_plan_defaults(struct probe_plan_opts *o)
{
	*o = (struct probe_plan_opts){
		.mode = PROBE_PLAN_AUTO,
		.budget_ns = 5000000000LL,
		.paths = PROBE_PLAN_DEFAULT_PATHS,
		.repeats = 2,
		.random_steps = PROBE_PLAN_RANDOM_STEPS,
		.seed = 0x726f636577617463ULL,
		.rate = PROBE_PLAN_RATE,
		.lead_ns = 1000000000LL,
		.wait_ns = 250000000LL,
		.collect_ns = 500000000LL,
	};
}

static int64_t slot_ns_of(const struct probe_plan_opts *o, bool any_paths)
{
	uint64_t probes = (uint64_t)PROBE_PLAN_MAX_SIZES * o->repeats + (any_paths ? o->paths : 0);

	return (int64_t)((probes * 1000000000ULL + o->rate - 1) / o->rate);
}

int64_t probe_plan_duration(const struct probe_plan_opts *o, uint32_t n_slots, bool any_paths)
{
	return o->lead_ns + (int64_t)n_slots * slot_ns_of(o, any_paths) + o->wait_ns +
	       o->collect_ns;
}

size_t probe_plan_sizes(unsigned mtu, unsigned sizes[PROBE_PLAN_MAX_SIZES])
{
	size_t n = 0;

	if (!mtu)
		mtu = 1024;
	sizes[n++] = 64;
	if (mtu > 64)
		sizes[n++] = mtu < 1024 ? mtu : 1024;
	if (mtu > 1024)
		sizes[n++] = mtu;
	return n;
}

/* splitmix64: the seeded random steps are the same for the same seed on every machine */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static bool has_step(const uint32_t *s, uint32_t n, uint32_t v)
{
	for (uint32_t i = 0; i < n; i++)
		if (s[i] == v)
			return true;
	return false;
}

/* The sparse set of a ring of n: {1, n-1, powers of two, k random}, distinct mod n. */
static uint32_t sparse_steps(uint32_t n, unsigned k, uint64_t seed, uint32_t *out)
{
	uint32_t m = 0;

	if (n < 2)
		return 0;
	out[m++] = 1;
	if (!has_step(out, m, n - 1))
		out[m++] = n - 1;
	for (uint64_t v = 2; v < n; v *= 2)
		if (!has_step(out, m, (uint32_t)v))
			out[m++] = (uint32_t)v;
	/* a bounded number of draws: a small ring has fewer free values than k */
	for (unsigned tries = 0, got = 0; got < k && tries < 64 * (k + 1) && n > 3; tries++) {
		uint32_t v = 2 + (uint32_t)(next_rand(&seed) % (n - 3));

		if (!has_step(out, m, v)) {
			out[m++] = v;
			got++;
		}
	}
	return m;
}

/* How many sparse steps a ring of n can have, at most (for the allocation). */
static uint32_t sparse_cap(uint32_t n, unsigned k)
{
	uint32_t c = 2 + k;

	for (uint64_t v = 2; v < n; v *= 2)
		c++;
	return c;
}

/* malloc(0) may return NULL: ask for one element at least */
static size_t nz(size_t n)
{
	return n ? n : 1;
}

static bool leaf_known(const char *l)
{
	return l && *l;
}

void probe_plan_free(struct probe_plan *p)
{
	if (!p)
		return;
	for (size_t r = 0; r < p->n_rails; r++) {
		free(p->rails[r].key);
		free(p->rails[r].ring);
		free(p->rails[r].steps);
	}
	free(p->rails);
	free(p->port_of);
	free(p->pos);
	free(p->port_rail);
	free(p->port_rail_at);
	free(p->port_leaf);
	memset(p, 0, sizeof(*p));
}

static int check_opts(const struct probe_plan_opts *o, char *err, size_t errlen)
{
	if (o->paths > PROBE_PLAN_MAX_PATHS) {
		snprintf(err, errlen, "paths: %u flow labels per pair, at most %d", o->paths,
			 PROBE_PLAN_MAX_PATHS);
		return -EINVAL;
	}
	if (!o->repeats || o->repeats > PROBE_PLAN_MAX_REPEATS) {
		snprintf(err, errlen, "repeats: %u probes per size, from 1 to %d", o->repeats,
			 PROBE_PLAN_MAX_REPEATS);
		return -EINVAL;
	}
	if (!o->rate || o->rate > 1000000) {
		snprintf(err, errlen, "rate: %u probes per second per port, from 1 to 1000000",
			 o->rate);
		return -EINVAL;
	}
	if (o->budget_ns <= 0 || o->lead_ns < 0 || o->wait_ns < 0 || o->collect_ns < 0) {
		snprintf(err, errlen, "budget, lead, wait and collect must not be negative");
		return -EINVAL;
	}
	return 0;
}

/*
 * Every port's leaf as a number, so a slice compares numbers, not strings:
 * (name, port) pairs sorted by name, numbered in order.
 */
struct leaf_ref {
	const char *name;
	size_t at;
};

static int cmp_leaf_ref(const void *a, const void *b)
{
	return strcmp(((const struct leaf_ref *)a)->name, ((const struct leaf_ref *)b)->name);
}

static int number_leaves(struct probe_plan *p, size_t total)
{
	struct leaf_ref *by = malloc(nz(total) * sizeof(*by));
	size_t n = 0, at = 0;
	int32_t id = -1;

	p->port_leaf = malloc(nz(total) * sizeof(*p->port_leaf));
	if (!by || !p->port_leaf) {
		free(by);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_nodes; i++)
		for (size_t k = 0; k < p->nodes[i].n_ports; k++, at++) {
			p->port_leaf[at] = -1;
			if (leaf_known(p->nodes[i].ports[k].leaf))
				by[n++] = (struct leaf_ref){ p->nodes[i].ports[k].leaf, at };
		}
	qsort(by, n, sizeof(*by), cmp_leaf_ref);
	for (size_t k = 0; k < n; k++) {
		if (!k || strcmp(by[k - 1].name, by[k].name))
			id++;
		p->port_leaf[by[k].at] = id;
	}
	free(by);
	return 0;
}

/* Rails in order of first appearance; every port's rail; the rings. */
static int index_rails(struct probe_plan *p, char *err, size_t errlen)
{
	const struct probe_plan_node *nodes = p->nodes;
	size_t total = 0, cap = 0;
	int rc;

	p->port_rail_at = calloc(p->n_nodes + 1, sizeof(*p->port_rail_at));
	if (!p->port_rail_at)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_nodes; i++) {
		if (!nodes[i].name || !*nodes[i].name) {
			snprintf(err, errlen, "node %zu: no name", i + 1);
			return -EINVAL;
		}
		if (nodes[i].n_ports > PROBE_PLAN_MAX_PORTS) {
			snprintf(err, errlen, "node %s: %zu probe ports, at most %d", nodes[i].name,
				 nodes[i].n_ports, PROBE_PLAN_MAX_PORTS);
			return -EINVAL;
		}
		p->port_rail_at[i] = total;
		total += nodes[i].n_ports;
	}
	p->port_rail_at[p->n_nodes] = total;
	p->port_rail = calloc(nz(total), sizeof(*p->port_rail));
	if (!p->port_rail)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_nodes; i++)
		for (size_t k = 0; k < nodes[i].n_ports; k++) {
			const char *key = nodes[i].ports[k].rail;
			size_t r;

			if (!key || !*key) {
				snprintf(err, errlen, "node %s: port %s: no rail key",
					 nodes[i].name,
					 nodes[i].ports[k].name ? nodes[i].ports[k].name : "?");
				return -EINVAL;
			}
			/* a job has a handful of rails: a linear search is the fast one */
			for (r = 0; r < p->n_rails && strcmp(p->rails[r].key, key); r++)
				;
			if (r == p->n_rails) {
				if (r >= PROBE_PLAN_NO_RAIL) {
					snprintf(err, errlen, "more than %d rails",
						 PROBE_PLAN_NO_RAIL);
					return -EINVAL;
				}
				if (p->n_rails == cap) {
					size_t nc = cap ? 2 * cap : 8;
					struct probe_plan_rail *t =
					    realloc(p->rails, nc * sizeof(*t));

					if (!t)
						return -ENOMEM;
					p->rails = t;
					cap = nc;
				}
				memset(&p->rails[r], 0, sizeof(p->rails[r]));
				p->rails[r].key = strdup(key);
				p->n_rails++;
				if (!p->rails[r].key)
					return -ENOMEM;
			}
			p->port_rail[p->port_rail_at[i] + k] = (uint16_t)r;
		}
	if ((rc = number_leaves(p, total)))
		return rc;
	p->port_of = malloc(nz(p->n_nodes * p->n_rails) * sizeof(*p->port_of));
	p->pos = malloc(nz(p->n_nodes * p->n_rails) * sizeof(*p->pos));
	if (!p->port_of || !p->pos)
		return -ENOMEM;
	for (size_t x = 0; x < p->n_nodes * p->n_rails; x++) {
		p->port_of[x] = -1;
		p->pos[x] = PROBE_PLAN_NONE;
	}
	for (size_t i = 0; i < p->n_nodes; i++)
		for (size_t k = 0; k < nodes[i].n_ports; k++) {
			uint16_t r = p->port_rail[p->port_rail_at[i] + k];
			int16_t *at = &p->port_of[i * p->n_rails + r];

			if (*at >= 0) {
				const struct probe_plan_port *a = &nodes[i].ports[*at];

				snprintf(err, errlen,
					 "node %s: ports %s and %s both on rail '%s': a rail has "
					 "one port per node",
					 nodes[i].name, a->name ? a->name : "?",
					 nodes[i].ports[k].name ? nodes[i].ports[k].name : "?",
					 p->rails[r].key);
				return -EINVAL;
			}
			*at = (int16_t)k;
			p->rails[r].n++;
		}
	for (size_t r = 0; r < p->n_rails; r++) {
		uint32_t j = 0;

		p->rails[r].ring = malloc(nz(p->rails[r].n) * sizeof(uint32_t));
		if (!p->rails[r].ring)
			return -ENOMEM;
		for (size_t i = 0; i < p->n_nodes; i++)
			if (p->port_of[i * p->n_rails + r] >= 0) {
				p->pos[i * p->n_rails + r] = j;
				p->rails[r].ring[j++] = (uint32_t)i;
			}
	}
	return 0;
}

static int make_steps(struct probe_plan *p, const struct probe_plan_opts *o, bool sparse)
{
	p->rail_slots = 0;
	for (size_t r = 0; r < p->n_rails; r++) {
		struct probe_plan_rail *rl = &p->rails[r];
		uint32_t n = rl->n, cap = sparse ? sparse_cap(n, o->random_steps) : n;

		free(rl->steps);
		rl->steps = malloc(nz(cap) * sizeof(uint32_t));
		if (!rl->steps)
			return -ENOMEM;
		if (sparse) {
			rl->n_steps = sparse_steps(n, o->random_steps, o->seed + r, rl->steps);
		} else {
			rl->n_steps = n ? n - 1 : 0;
			for (uint32_t s = 1; s < n; s++)
				rl->steps[s - 1] = s;
		}
		if (rl->n_steps > p->rail_slots)
			p->rail_slots = rl->n_steps;
	}
	return 0;
}

/* Is there a pair that gets flow-label probes (leaves differ or are unknown)? */
static bool any_paths(const struct probe_plan *p)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		for (size_t k = 0; k < p->nodes[i].n_ports; k++)
			if (!leaf_known(p->nodes[i].ports[k].leaf))
				return true;
	/* all known: only if two leaves exist on a rail, or two ports of a node differ */
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i].n_ports > 1)
			return true;
	for (size_t r = 0; r < p->n_rails; r++) {
		const struct probe_plan_rail *rl = &p->rails[r];
		const char *first = NULL;

		for (uint32_t j = 0; j < rl->n; j++) {
			uint32_t i = rl->ring[j];
			const char *l = p->nodes[i].ports[p->port_of[i * p->n_rails + r]].leaf;

			if (!first)
				first = l;
			else if (strcmp(first, l))
				return true;
		}
	}
	return false;
}

int probe_plan_build(struct probe_plan *p, const struct probe_plan_node *nodes, size_t n,
		     const struct probe_plan_opts *o, char *err, size_t errlen)
{
	uint32_t k_max = 0;
	bool paths;
	int r;

	memset(p, 0, sizeof(*p));
	if ((r = check_opts(o, err, errlen)))
		return r;
	if (n > PROBE_PLAN_MAX_NODES) {
		snprintf(err, errlen, "%zu nodes, at most %d", n, PROBE_PLAN_MAX_NODES);
		return -EINVAL;
	}
	p->nodes = nodes;
	p->n_nodes = n;
	p->paths = o->paths;
	p->repeats = o->repeats;
	p->rate = o->rate;
	p->budget_ns = o->budget_ns;
	p->lead_ns = o->lead_ns;
	p->wait_ns = o->wait_ns;
	p->collect_ns = o->collect_ns;
	r = index_rails(p, err, errlen);
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (r)
		return r;
	for (size_t i = 0; i < n; i++)
		if (nodes[i].n_ports > k_max)
			k_max = (uint32_t)nodes[i].n_ports;
	p->host_pairs = !o->no_host_pairs;
	p->host_slots = k_max && p->host_pairs ? k_max - 1 : 0;
	paths = o->paths && any_paths(p);
	p->slot_ns = slot_ns_of(o, paths);
	p->probe_ns = (int64_t)(1000000000ULL / o->rate);
	/* full mesh first, unless told otherwise; sparse when it does not fit */
	if ((r = make_steps(p, o, o->mode == PROBE_PLAN_SPARSE)))
		goto nomem;
	p->sparse = o->mode == PROBE_PLAN_SPARSE;
	if (o->mode == PROBE_PLAN_AUTO &&
	    probe_plan_duration(o, p->rail_slots + p->host_slots + 1, paths) > o->budget_ns) {
		if ((r = make_steps(p, o, true)))
			goto nomem;
		p->sparse = true;
	}
	p->n_slots = p->rail_slots + p->host_slots + 1;
	p->duration_ns = probe_plan_duration(o, p->n_slots, paths);
	p->over_budget = p->duration_ns > o->budget_ns;
	for (size_t i = 0; i < n; i++)
		p->pairs += probe_plan_slice_len(p, i);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
	return r;
}

uint16_t probe_plan_port_rail(const struct probe_plan *p, size_t node, size_t port)
{
	if (node >= p->n_nodes || port >= p->nodes[node].n_ports)
		return PROBE_PLAN_NO_RAIL;
	return p->port_rail[p->port_rail_at[node] + port];
}

size_t probe_plan_slice_len(const struct probe_plan *p, size_t node)
{
	size_t k = p->nodes[node].n_ports,
	       n = p->host_pairs ? k * k : k; /* host pairs, loopbacks */

	for (size_t q = 0; q < k; q++)
		n += p->rails[probe_plan_port_rail(p, node, q)].n_steps;
	return n;
}

static unsigned pair_mtu(unsigned a, unsigned b)
{
	if (!a)
		return b ? b : 1024;
	if (!b)
		return a;
	return a < b ? a : b;
}

static uint8_t pair_labels(const struct probe_plan *p, size_t node_a, size_t port_a, size_t node_b,
			   size_t port_b)
{
	int32_t a = p->port_leaf[p->port_rail_at[node_a] + port_a];
	int32_t b = p->port_leaf[p->port_rail_at[node_b] + port_b];

	return a < 0 || b < 0 || a != b ? (uint8_t)p->paths : 0;
}

size_t probe_plan_slice(const struct probe_plan *p, size_t node, struct probe_entry *out)
{
	const struct probe_plan_node *me = &p->nodes[node];
	size_t k = me->n_ports, n = 0;

	for (uint32_t slot = 0; slot < p->rail_slots; slot++)
		for (size_t q = 0; q < k; q++) {
			uint16_t r = probe_plan_port_rail(p, node, q);
			const struct probe_plan_rail *rl = &p->rails[r];
			uint32_t j, dst;
			const struct probe_plan_port *b;

			if (slot >= rl->n_steps)
				continue;
			j = p->pos[node * p->n_rails + r];
			dst = rl->ring[(uint32_t)(((uint64_t)j + rl->steps[slot]) % rl->n)];
			b = &p->nodes[dst].ports[p->port_of[(size_t)dst * p->n_rails + r]];
			out[n++] = (struct probe_entry){
				.slot = slot,
				.dst = dst,
				.port = (uint16_t)q,
				.dst_port = (uint16_t)p->port_of[(size_t)dst * p->n_rails + r],
				.rail = r,
				.mtu = (uint16_t)pair_mtu(me->ports[q].active_mtu, b->active_mtu),
				.kind = PROBE_PAIR_RAIL,
				.labels =
				    pair_labels(p, node, q, dst,
						(size_t)p->port_of[(size_t)dst * p->n_rails + r]),
			};
		}
	for (size_t h = 1; h < k && p->host_pairs; h++)
		for (size_t q = 0; q < k; q++) {
			size_t d = (q + h) % k;

			out[n++] = (struct probe_entry){
				.slot = p->rail_slots + (uint32_t)h - 1,
				.dst = (uint32_t)node,
				.port = (uint16_t)q,
				.dst_port = (uint16_t)d,
				.rail = probe_plan_port_rail(p, node, q),
				.mtu = (uint16_t)pair_mtu(me->ports[q].active_mtu,
							  me->ports[d].active_mtu),
				.kind = PROBE_PAIR_HOST,
				.labels = pair_labels(p, node, q, node, d),
			};
		}
	for (size_t q = 0; q < k; q++)
		out[n++] = (struct probe_entry){
			.slot = p->rail_slots + p->host_slots,
			.dst = (uint32_t)node,
			.port = (uint16_t)q,
			.dst_port = (uint16_t)q,
			.rail = probe_plan_port_rail(p, node, q),
			.mtu = (uint16_t)pair_mtu(me->ports[q].active_mtu, 0),
			.kind = PROBE_PAIR_LOOP,
		};
	return n;
}
