// SPDX-License-Identifier: MIT
/*
 * What the flight recorder costs per poll on an 8-NIC node: NICS netdevs
 * with ETHTOOL driver stats and the per-priority fields, NICS RDMA ports with
 * HW hw_counters, every counter changing in every poll (the worst case: a
 * busy node).  Prints CPU per poll (all threads: the diff in the poll loop
 * and the writer's transaction), its share of one core at a 100 ms interval,
 * the time the poll loop itself is held, rows and bytes per poll.
 *
 * Usage: bench_recorder DIR [POLLS] [NICS] [ETHTOOL] [HW] [all|none] [CHURN%] [MAX_MIB]
 *   all: record every driver stat (--record.ethtool-include '.*');
 *   none (default): only what the field table names, like /metrics;
 *   CHURN%: the share of counters that change each poll (default 100);
 *   MAX_MIB: --record.max-size in MiB (default 256): a small bound measures
 *   the steady state, where retention deletes as much as is written.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "recorder.h"
#include "util.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	return (double)mono_ns() / 1e9;
}

static const enum field_id prio_counters[] = {
	F_NETDEV_PFC_RX_PAUSE,		F_NETDEV_PFC_TX_PAUSE,	  F_NETDEV_PFC_RX_PAUSE_DURATION,
	F_NETDEV_PFC_TX_PAUSE_DURATION, F_NETDEV_PRIO_RX_BYTES,	  F_NETDEV_PRIO_TX_BYTES,
	F_NETDEV_PRIO_RX_PACKETS,	F_NETDEV_PRIO_TX_PACKETS, F_NETDEV_PRIO_RX_DISCARDS,
};

static void build(struct node_model *m, int nics, int n_eth, int n_hw)
{
	char name[64];
	int8_t map[RW_DSCP_COUNT];

	model_init(m);
	strlcpy0(m->host, "bench-node", sizeof(m->host));
	memset(map, -1, sizeof(map));
	map[26] = 3;
	map[48] = 6;
	for (int k = 0; k < nics; k++) {
		struct object *nd, *p;

		snprintf(name, sizeof(name), "eth%d", k);
		nd = model_add_netdev(m, name);
		field_set_int(nd, F_NETDEV_MTU, 9000);
		field_set_str(nd, F_NETDEV_OPERSTATE, "up");
		field_set_set(nd, F_NETDEV_PFC_ENABLED, 1u << 3);
		field_set_str(nd, F_NETDEV_TRUST, "dscp");
		field_set_dscp_map(nd, F_NETDEV_DSCP_MAP, map);
		for (int j = 0; j < n_eth; j++) {
			/* mlx5-like names: per-channel stats dominate */
			snprintf(name, sizeof(name), "rx%d_stat_%d", j % 32, j);
			cset_set(&nd->cs[CSET_ETHTOOL], name, 0);
		}
		snprintf(name, sizeof(name), "mlx5_%d", k);
		p = model_add_port(m, name, 1);
		field_set_str(p, F_PORT_STATE, "ACTIVE");
		field_set_int(p, F_PORT_ACTIVE_MTU, 4096);
		for (int j = 0; j < n_hw; j++) {
			snprintf(name, sizeof(name), "hw_counter_%d", j);
			cset_set(&p->cs[CSET_HW], name, 0);
		}
	}
}

static int churn = 100; /* percent of the counters that move each poll */

static bool moves(uint64_t j)
{
	return (j * 37) % 100 < (uint64_t)churn;
}

static void advance(struct node_model *m, uint64_t i)
{
	for (size_t k = 0; k < m->n_netdevs; k++) {
		struct object *nd = m->netdevs[k];

		for (size_t f = 0; f < sizeof(prio_counters) / sizeof(prio_counters[0]); f++)
			for (int p = 0; p < RW_PRIO_COUNT; p++)
				field_set_prio(nd, prio_counters[f], p,
					       1000000000ULL + (moves(f * 8 + p) ? i * 997 : 0) +
						   (uint64_t)p);
		for (uint32_t j = 0; j < nd->cs[CSET_ETHTOOL].n; j++)
			nd->cs[CSET_ETHTOOL].vals[j] =
			    5000000000ULL + (moves(j) ? i * 1013 : 0) + j;
	}
	for (size_t k = 0; k < m->n_ports; k++) {
		struct object *p = m->ports[k];

		for (uint32_t j = 0; j < p->cs[CSET_HW].n; j++)
			p->cs[CSET_HW].vals[j] = 7000000000ULL + (moves(j) ? i * 31 : 0) + j;
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : NULL;
	int polls = argc > 2 ? atoi(argv[2]) : 600;
	int nics = argc > 3 ? atoi(argv[3]) : 8;
	int n_eth = argc > 4 ? atoi(argv[4]) : 300;
	int n_hw = argc > 5 ? atoi(argv[5]) : 60;
	bool all = argc > 6 && !strcmp(argv[6], "all");
	struct recorder_opts o;
	struct recorder_counters c0, c1;
	struct recorder *r;
	struct node_model m;
	regex_t any;
	struct rusage ru0;
	char err[512];
	double base_cpu, rec_cpu, t0, c, *hold, *hold_cpu;
	int64_t ms = real_ns() / 1000000;

	if (!dir || polls < 10) {
		fprintf(stderr, "usage: %s DIR [POLLS>=10] [NICS] [ETHTOOL] [HW] [all|none]\n",
			argv[0]);
		return 2;
	}
	recorder_opts_defaults(&o);
	o.dir = dir;
	o.interval_ns = 100000000;
	regcomp(&any, ".*", REG_EXTENDED | REG_NOSUB);
	if (argc > 7)
		churn = atoi(argv[7]);
	if (argc > 8)
		o.max_size = (uint64_t)atoi(argv[8]) << 20;
	o.ethtool_include = all ? &any : NULL;
	hold = calloc((size_t)polls, sizeof(*hold));
	hold_cpu = calloc((size_t)polls, sizeof(*hold_cpu));
	build(&m, nics, n_eth, n_hw);

	/* what changing the model costs by itself, to subtract */
	c = cpu_s();
	for (int i = 0; i < polls; i++)
		advance(&m, (uint64_t)i);
	base_cpu = cpu_s() - c;

	getrusage(RUSAGE_SELF, &ru0); /* the model alone */
	if (recorder_open(&r, &o, err, sizeof(err))) {
		fprintf(stderr, "bench_recorder: %s\n", err);
		return 1;
	}
	for (int i = 0; i < 10; i++) { /* warm up: series, first keyframe */
		advance(&m, (uint64_t)i);
		m.time.tv_sec = (ms += 100) / 1000;
		m.time.tv_nsec = (ms % 1000) * 1000000;
		recorder_after_poll(r, &m, 1);
		recorder_flush(r);
	}
	recorder_get_counters(r, &c0);
	c = cpu_s();
	for (int i = 0; i < polls; i++) {
		advance(&m, (uint64_t)(i + 10));
		m.time.tv_sec = (ms += 100) / 1000;
		m.time.tv_nsec = (ms % 1000) * 1000000;
		t0 = wall_s();
		c0.last_commit_seconds = thread_cpu_s();
		recorder_after_poll(r, &m, 1);
		hold[i] = wall_s() - t0;
		hold_cpu[i] = thread_cpu_s() - c0.last_commit_seconds;
		recorder_flush(r); /* the writer's share is in the CPU time too */
	}
	rec_cpu = cpu_s() - c - base_cpu;
	recorder_get_counters(r, &c1);
	recorder_close(r);
	qsort(hold, (size_t)polls, sizeof(*hold), cmp_d);
	qsort(hold_cpu, (size_t)polls, sizeof(*hold_cpu), cmp_d);
	{
		char path[4200];
		struct stat st;
		double bytes;

		snprintf(path, sizeof(path), "%s/rocewatch.db", dir);
		bytes = stat(path, &st) ? 0 : (double)st.st_size;
		printf("node: %d netdevs x %d driver stats (%s recorded), %d RDMA ports x %d hw "
		       "counters, "
		       "%d %% of them changing every poll\n",
		       nics, n_eth, all ? "all" : "none", nics, n_hw, churn);
		printf("rows per poll:            %.0f samples, %.0f config\n",
		       (double)(c1.samples - c0.samples) / polls,
		       (double)(c1.config_rows - c0.config_rows) / polls);
		printf("series:                   %llu\n", (unsigned long long)c1.series);
		printf("CPU per poll:             %.3f ms (poll loop diff + writer transaction)\n",
		       rec_cpu / polls * 1e3);
		printf("share of one core @100ms: %.2f %%\n", rec_cpu / polls / 0.1 * 100);
		printf("share of one core @1s:    %.3f %%\n", rec_cpu / polls / 1.0 * 100);
		printf("poll loop held (CPU):     median %.3f ms, p99 %.3f ms, max %.3f ms\n",
		       hold_cpu[polls / 2] * 1e3, hold_cpu[polls * 99 / 100] * 1e3,
		       hold_cpu[polls - 1] * 1e3);
		printf("poll loop held (wall):    median %.3f ms, p99 %.3f ms, max %.3f ms "
		       "(includes being descheduled)\n",
		       hold[polls / 2] * 1e3, hold[polls * 99 / 100] * 1e3, hold[polls - 1] * 1e3);
		printf("database after %d polls:  %.1f MiB, %.1f KiB per poll\n", polls + 10,
		       bytes / 1048576, bytes / (polls + 10) / 1024);
		printf("256 MiB hold at 100 ms:   %.1f minutes of this load\n",
		       (256.0 * 1048576 * 0.9 * 0.75) / (bytes / (polls + 10)) * 0.1 / 60);
		printf("dropped polls:            %llu\n",
		       (unsigned long long)(c1.dropped - c0.dropped));
		printf("polls deleted (retention): %llu\n",
		       (unsigned long long)(c1.deleted_polls - c0.deleted_polls));
		{
			struct rusage ru;

			getrusage(RUSAGE_SELF, &ru);
			printf(
			    "max RSS of this process:  %.1f MiB (model, recorder, SQLite cache); "
			    "%.1f MiB before the recorder opened\n",
			    (double)ru.ru_maxrss / 1024, (double)ru0.ru_maxrss / 1024);
		}
	}
	free(hold);
	free(hold_cpu);
	regfree(&any);
	model_free(&m);
	return 0;
}
