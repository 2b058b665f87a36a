// SPDX-License-Identifier: MIT
/*
 * `make bench`: the fleet probe at 1 000 nodes x 8 rails (full rail mesh and
 * 8 flow labels per cross-leaf pair) and 8 000 nodes (sparse plan), over the
 * simulated transport (tests/unit/probe_sim.h): the planner, every slice
 * encoded and decoded, every node's executor run against the fabric model
 * with injected faults, every result encoded, collected and decoded, and the
 * localizer; the same code as `rocewatch fleet probe` above the verbs calls.
 *
 * What is measured and what is modelled, per trial:
 *   measured  plan, encode (slices), decode (results), locate on this
 *             machine; each node's own work (decode its slice, run it,
 *             encode its results: the most any one node took, in CPU time)
 *   modelled  the probing itself: slots x slot time of the plan's cost model
 *             (each port sends at most 8 000 probes/s); the lead and the
 *             wait of the plan; slices and results over the coordinator's
 *             10 Gb/s link
 *   end to end = plan + max(lead, encode + slices on the link) + slots x slot
 *             + wait + results on the link + decode + locate
 * Wire bytes per port count each probe and its reply both ways with 90 bytes
 * of RoCE v2 framing; the share of a 400 Gb/s port is the busiest port's
 * bytes each way over the probing time.  The findings must be exactly the
 * injected faults: the program exits 1 when they are not.
 *
 * usage: bench_probe [--quick] [--trials N]
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_sim.h"

#define LINK_BYTES_PER_S 1.25e9 /* the coordinator's 10 Gb/s */
#define PORT_BYTES_PER_S 50e9	/* a 400 Gb/s port */
#define MAX_TRIALS	 32

struct want {
	enum probe_class cls;
	uint32_t node; /* the first node named */
	uint16_t rail;
	const char *leaf;
};

struct scenario {
	const char *name;
	size_t n, rails, per_leaf;
	enum probe_plan_mode mode;
	struct fab_fault faults[4];
	size_t n_faults;
	struct want want[4];
	size_t n_want;
};

struct trial {
	double plan, encode, decode, locate, node_cpu, total_wall, e2e;
	double slots_s, slice_mb, result_mb, port_bytes, port_pct, node_core_pct;
	uint64_t pairs, probes;
	bool findings_ok;
};

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool check_findings(const struct scenario *sc, const struct probe_findings *f,
			   const struct fabric *fb, bool verbose)
{
	bool ok = f->n == sc->n_want;
	bool used[8] = { 0 };

	for (size_t k = 0; k < f->n; k++) {
		const struct probe_finding *x = &f->f[k];
		bool match = false;

		for (size_t w = 0; w < sc->n_want && !match; w++) {
			const struct want *y = &sc->want[w];

			if (used[w] || x->cls != y->cls || !x->n_rails || x->rails[0] != y->rail ||
			    !x->n_nodes || x->nodes[0] != y->node ||
			    strcmp(x->leaf, y->leaf ? y->leaf : ""))
				continue;
			used[w] = match = true;
		}
		ok &= match;
		if (verbose || !match)
			printf("    %s %-11s %s (%zu nodes from %s, rail %u): %.160s\n",
			       match ? "ok   " : "EXTRA", probe_class_name(x->cls),
			       probe_action_name(x->action), x->n_nodes,
			       x->n_nodes ? fb->names[x->nodes[0]] : "-",
			       x->n_rails ? x->rails[0] : 0, x->evidence);
	}
	for (size_t w = 0; w < sc->n_want; w++)
		if (!used[w])
			printf("    MISSING %s on rail %u from node %u\n",
			       probe_class_name(sc->want[w].cls), sc->want[w].rail,
			       sc->want[w].node);
	return ok;
}

static int run_trial(const struct scenario *sc, struct trial *t, bool verbose)
{
	struct fabric fb;
	struct probe_plan p;
	struct probe_plan_opts po;
	struct probe_fleet_opts fo = { .plan_id = 0x5eed, .session = 1, .dscp = 26, .batch = 64 };
	struct probe_fleet_out out;
	struct probe_transport tr;
	struct sim sim;
	char err[256];
	double t0;
	uint64_t busiest = 0;

	memset(t, 0, sizeof(*t));
	if (fabric_init(&fb, sc->n, sc->rails, sc->per_leaf, true))
		return -1;
	for (size_t k = 0; k < sc->n_faults; k++)
		fabric_fault(&fb, sc->faults[k].kind, sc->faults[k].node, sc->faults[k].rail,
			     sc->faults[k].leaf, sc->faults[k].spine, sc->faults[k].mtu);
	probe_plan_defaults(&po);
	po.mode = sc->mode;
	t0 = mono();
	if (probe_plan_build(&p, fb.nodes, fb.n, &po, err, sizeof(err))) {
		fprintf(stderr, "bench_probe: plan: %s\n", err);
		return -1;
	}
	t->plan = mono() - t0;
	if (sim_init(&sim, &fb, &p, false))
		return -1;
	tr = sim_transport(&sim);
	t0 = mono();
	if (probe_fleet_run(&p, sim.addr, &tr, &fo, &out)) {
		fprintf(stderr, "bench_probe: out of memory\n");
		return -1;
	}
	t->total_wall = mono() - t0 + t->plan;
	t->encode = (double)out.st.encode_ns / 1e9;
	t->decode = (double)out.st.decode_ns / 1e9;
	t->locate = (double)out.st.locate_ns / 1e9;
	t->node_cpu = (double)sim.node_cpu_max_ns / 1e9;
	t->slots_s = (double)p.n_slots * (double)p.slot_ns / 1e9;
	t->slice_mb = (double)out.st.slice_bytes / 1e6;
	t->result_mb = (double)out.st.result_bytes / 1e6;
	for (size_t x = 0; x < p.port_rail_at[p.n_nodes]; x++) {
		if (sim.tx[x] > busiest)
			busiest = sim.tx[x];
		if (sim.rx[x] > busiest)
			busiest = sim.rx[x];
	}
	t->port_bytes = (double)busiest;
	t->port_pct = 100.0 * (double)busiest / t->slots_s / PORT_BYTES_PER_S;
	t->node_core_pct = 100.0 * t->node_cpu / t->slots_s;
	t->pairs = p.pairs;
	t->probes = sim.probes;
	{
		double lead = (double)p.lead_ns / 1e9;
		double out_s = t->encode + (double)out.st.slice_bytes / LINK_BYTES_PER_S;

		t->e2e = t->plan + (out_s > lead ? out_s : lead) + t->slots_s +
			 (double)p.wait_ns / 1e9 + (double)out.st.result_bytes / LINK_BYTES_PER_S +
			 t->decode + t->locate;
	}
	t->findings_ok = check_findings(sc, &out.f, &fb, verbose);
	if (verbose)
		printf("    plan: %s, %llu pairs, %u slots of %.2f ms, modelled %.2f s (budget "
		       "%.1f s)\n",
		       p.sparse ? "sparse" : "full rail mesh", (unsigned long long)p.pairs,
		       p.n_slots, (double)p.slot_ns / 1e6, (double)p.duration_ns / 1e9,
		       (double)p.budget_ns / 1e9);
	probe_fleet_out_free(&out, p.n_nodes);
	sim_free(&sim);
	probe_plan_free(&p);
	fabric_free(&fb);
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median [min-max] of one field over the trials */
static void stat(const struct trial *t, size_t n, size_t off, double scale, const char *unit,
		 const char *what)
{
	double v[MAX_TRIALS];

	for (size_t k = 0; k < n; k++)
		v[k] = *(const double *)((const char *)&t[k] + off) * scale;
	qsort(v, n, sizeof(v[0]), cmp_d);
	printf("  %-34s %9.3f %s  [%.3f - %.3f]\n", what, v[n / 2], unit, v[0], v[n - 1]);
}

#define STAT(field, scale, unit, what) stat(tr, n, offsetof(struct trial, field), scale, unit, what)

static int run_scenario(const struct scenario *sc, size_t n)
{
	struct trial tr[MAX_TRIALS];
	bool ok = true;

	printf("\n%s: %zu nodes x %zu rails, leaves of %zu, %zu trials (median [min - max])\n",
	       sc->name, sc->n, sc->rails, sc->per_leaf, n);
	for (size_t k = 0; k < n; k++) {
		if (run_trial(sc, &tr[k], k == 0))
			return 2;
		ok &= tr[k].findings_ok;
	}
	printf("  pairs %llu, probes simulated %llu\n", (unsigned long long)tr[0].pairs,
	       (unsigned long long)tr[0].probes);
	STAT(plan, 1e3, "ms", "plan (measured)");
	STAT(encode, 1e3, "ms", "encode slices (measured)");
	STAT(slice_mb, 1, "MB", "slices, all nodes");
	STAT(slots_s, 1, "s ", "probing (modelled: slots x slot)");
	STAT(result_mb, 1, "MB", "results, all nodes");
	STAT(decode, 1e3, "ms", "decode results (measured)");
	STAT(locate, 1e3, "ms", "locate (measured)");
	STAT(node_cpu, 1e3, "ms", "busiest node's own work (CPU)");
	STAT(node_core_pct, 1, "% ", "  of a core over the probing");
	STAT(port_bytes, 1e-6, "MB", "busiest port, bytes each way");
	STAT(port_pct, 1, "% ", "  of a 400 Gb/s port");
	STAT(e2e, 1, "s ", "end to end (budget 5 s)");
	STAT(total_wall, 1, "s ", "this run's wall (all nodes here)");
	printf("  findings equal the injected faults: %s\n", ok ? "yes" : "NO");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	bool quick = false;
	size_t trials = 5;
	struct scenario full = {
		.name = "full rail mesh",
		.n = 1000,
		.rails = 8,
		.per_leaf = 32,
		.mode = PROBE_PLAN_AUTO,
		.faults = { { FAB_PORT_CABLE, 123, 5, 0, 0, 0 },
			    { FAB_SPINE, 0, 2, 7, 3, 0 },
			    { FAB_MTU_PORT, 777, 0, 0, 0, 1500 } },
		.n_faults = 3,
		.want = { { PROBE_NODE_RAIL, 123, 5, NULL },
			  { PROBE_SPINE_PATHS, 224, 2, "leaf-r2-7" },
			  { PROBE_PATH_MTU, 777, 0, NULL } },
		.n_want = 3,
	};
	struct scenario sparse = {
		.name = "sparse",
		.n = 8000,
		.rails = 8,
		.per_leaf = 32,
		.mode = PROBE_PLAN_AUTO,
		.faults = { { FAB_PORT_NIC, 4321, 3, 0, 0, 0 },
			    { FAB_LEAF_UPLINKS, 0, 6, 100, 0, 0 },
			    { FAB_MTU_PORT, 6000, 1, 0, 0, 1500 } },
		.n_faults = 3,
		.want = { { PROBE_NODE_RAIL, 4321, 3, NULL },
			  { PROBE_LEAF, 3200, 6, "leaf-r6-100" },
			  { PROBE_PATH_MTU, 6000, 1, NULL } },
		.n_want = 3,
	};
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--trials") && i + 1 < argc) {
			trials = (size_t)atoi(argv[++i]);
			if (trials < 1 || trials > MAX_TRIALS)
				trials = 5;
		} else {
			fprintf(stderr, "usage: bench_probe [--quick] [--trials N]\n");
			return 2;
		}
	}
	if (quick) {
		/* the same code at a size a sanitizer build runs in seconds */
		full.n = 96;
		full.faults[0].node = full.want[0].node = 12;
		full.faults[1].leaf = 2;
		full.want[1].node = 64;
		full.want[1].leaf = "leaf-r2-2";
		full.faults[2].node = full.want[2].node = 77;
		sparse.n = 640;
		sparse.mode = PROBE_PLAN_SPARSE;
		sparse.faults[0].node = sparse.want[0].node = 432;
		sparse.faults[1].leaf = 10;
		sparse.want[1].node = 320;
		sparse.want[1].leaf = "leaf-r6-10";
		sparse.faults[2].node = sparse.want[2].node = 600;
		trials = 1;
	}
	printf("fleet probe over the simulated transport (%s)\n",
	       quick ? "quick" : "release sizes");
	rc |= run_scenario(&full, trials);
	rc |= run_scenario(&sparse, trials);
	return rc;
}
