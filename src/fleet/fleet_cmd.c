// SPDX-License-Identifier: MIT
/*
 * rocewatch fleet check: the node models of a set of nodes (from their
 * serve, from snapshot files, or from a Prometheus), the fleet rules over
 * them, optionally each node's own rules, one verdict.  A node that cannot
 * be reached, times out or answers garbage is UNKNOWN by name and the
 * others are still compared; the verdict is then at least UNKNOWN, because
 * a pre-flight must not let a job start on a node nobody could look at.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "bounded.h"
#include "cli.h"
#include "engine_opts.h"
#include "engine.h"
#include "fleet.h"
#include "term.h"
#include "fleet_prom.h"
#include "fleet_share.h"
#include "client_opts.h"
#include "hostlist.h"
#include "nccl.h"
#include "snapshot.h"
#include "strbuf.h"
#include "strmap.h"
#include "util.h"

extern char **environ;

#define FLEET_DEFAULT_PORT    9479
#define FLEET_DEFAULT_PROFILE "fleet"

static const char fleet_usage[] =
    "Compare the RoCE configuration of a set of nodes before a job starts on them.\n"
    "The node model of every node is gathered (from its `rocewatch serve`, from\n"
    "snapshot files, or from a Prometheus), the fleet rules (profile `fleet`: same\n"
    "netdev MTU and active_mtu, PFC priorities, trust mode and DSCP map, CNP\n"
    "priority and DSCP, RoCE v2 GID index, link speed and firmware per rail, RDMA\n"
    "device count, per-node outcome) are evaluated across them, and each failing\n"
    "rule names the majority value and the nodes that differ:\n"
    "    fail  critical  netdev_mtu  63 nodes 9000, gpu017 1500\n"
    "With --profile, every node's own rules are evaluated too (configuration rules\n"
    "only: a node is seen once, so rules over counters are skipped), making one\n"
    "command the whole pre-flight of an allocation.\n"
    "\n"
    "Sources, any mix:\n"
    "  NODE                       host, host:port, [v6addr]:port, or a Slurm hostlist\n"
    "                             (gpu[001-064,070], rack[0-3]_n[01-16]:9479);\n"
    "                             fetched from SCHEME://NODE/api/v1/state (port 9479\n"
    "                             unless given)\n"
    "  FILE                       a snapshot (`rocewatch snapshot -o FILE`); an\n"
    "                             argument with a '/' or ending in .json is a file,\n"
    "                             not a host\n"
    "  DIR                        every *.json snapshot in it, e.g. gathered with\n"
    "                             `srun --ntasks-per-node=1 --output=DIR/%N.json\n"
    "                             rocewatch snapshot`; snapshots are named by their\n"
    "                             host\n";

static const char fleet_usage_tail[] =
    "\n"
    "Exit codes (Nagios plugin convention, fail closed):\n"
    "  0 OK        every node answered and every rule passed\n"
    "  1 WARNING   a warning rule failed, and nothing below applies\n"
    "  2 CRITICAL  a critical rule failed (fleet or per-node)\n"
    "  3 UNKNOWN   a node did not answer or answered garbage, a critical or warning\n"
    "              rule is unknown, or bad flags, rule files or node lists\n"
    "The most severe wins, in this order: CRITICAL > UNKNOWN > WARNING > OK (an\n"
    "unknown node outranks a warning: nobody looked at it).\n"
    "\n"
    "Majority: the value held by the most units (nodes, netdevs or ports); a tie\n"
    "has no majority and every unit is named.  See docs/rules.md, \"Fleet rules\".\n";

/* ---- the node list ---- */

static struct fleet_member *add_member(struct fleet_run *fr, const char *name,
				       enum fleet_source src, const char *where)
{
	struct fleet_member *n;

	/* one node once, however often it is named (a job of 32 000: by index, not by scan) */
	int64_t at = strmap_get(&fr->names, name);

	if (at >= 0)
		return &fr->nodes[at];
	if (array_grow(&fr->nodes, &fr->cap, fr->n, sizeof(*fr->nodes), 16) ||
	    strmap_put(&fr->names, name, (int64_t)fr->n))
		return NULL;
	n = &fr->nodes[fr->n];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	n->where = strdup(where);
	n->src = src;
	if (!n->name || !n->where) {
		free(n->name);
		free(n->where);
		return NULL;
	}
	fr->n++;
	return n;
}

void fleet_member_say(struct fleet_member *nm, const char *fmt, ...)
{
	va_list ap;

	/* only the nodes that did not answer have one: 32 000 of 640 bytes each would be 20 MB */
	if (!nm->reason)
		nm->reason = malloc(FLEET_REASON_MAX);
	if (!nm->reason)
		return;
	va_start(ap, fmt);
	vsnprintf(nm->reason, FLEET_REASON_MAX, fmt, ap);
	va_end(ap);
}

static bool is_path(const char *a)
{
	size_t l = strlen(a);

	return strchr(a, '/') || (l > 5 && !strcmp(a + l - 5, ".json"));
}

struct hosts_add {
	struct fleet_run *fr;
	const char *scheme;
};

static int add_host(void *arg, const char *name, const char *hostport)
{
	struct hosts_add *ha = arg;
	struct fleet_run *fr = ha->fr;
	char url[640];

	if (fr->prometheus)
		snprintf(url, sizeof(url), "%s", fr->prometheus);
	else
		snprintf(url, sizeof(url), "%s://%s/api/v1/state", ha->scheme, hostport);
	return add_member(fr, name, fr->prometheus ? FSRC_PROMETHEUS : FSRC_HTTP, url) ? 0
										       : -ENOMEM;
}

static int add_hosts(struct fleet_run *fr, const char *expr, const char *scheme, int port)
{
	struct hosts_add ha = { fr, scheme };

	return hostlist_each("fleet", expr, port, add_host, &ha);
}

static int json_name(const struct dirent *d)
{
	size_t l = strlen(d->d_name);

	return d->d_name[0] != '.' && l > 5 && !strcmp(d->d_name + l - 5, ".json");
}

static int add_path(struct fleet_run *fr, const char *path)
{
	size_t pl = strlen(path);
	struct dirent **ents;
	struct stat st;
	int n;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		/* a file, or not there: reading it says which (the node is then unknown) */
		return add_member(fr, path, FSRC_FILE, path) ? 0 : -ENOMEM;
	n = scandir(path, &ents, json_name, alphasort);
	if (n < 0) {
		int e = errno;

		fprintf(stderr, "rocewatch fleet: %s: %s\n", path, strerror(e));
		return -e;
	}
	if (!n) {
		fprintf(stderr, "rocewatch fleet: %s: no *.json snapshot in this directory\n",
			path);
		free(ents);
		return -ENOENT;
	}
	while (pl > 1 && path[pl - 1] == '/')
		pl--;
	for (int i = 0; i < n; i++) {
		char file[4096];

		snprintf(file, sizeof(file), "%.*s/%s", (int)pl, path, ents[i]->d_name);
		if (!add_member(fr, file, FSRC_FILE, file)) {
			for (int k = i; k < n; k++)
				free(ents[k]);
			free(ents);
			return -ENOMEM;
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

/* ---- gathering ---- */

/* The facts a node's model is read for: what the rules read, and what the job's NCCL reads. */
static void fields_used(const struct fleet_run *fr, bool used[F__COUNT])
{
	rules_fields_used(fr->e, used);
	if (fr->job)
		nccl_fields_read(used);
}

static int consume(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m);
static int consume_keep(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m);

/* A document (an HTTP body, a file) into a model (its last snapshot), and that through the rules.
 */
static void take_snapshot(struct fleet_run *fr, struct fleet_member *nm, const char *buf,
			  size_t len)
{
	char err[512] = "";
	struct node_model *m = malloc(sizeof(*m));
	int r;

	if (!m) {
		fleet_member_say(nm, "out of memory");
		fr->oom = true;
		return;
	}
	model_init(m);
	r = snapshot_read_last_kept(nm->name, buf, len, fr->keep, m, err, sizeof(err));
	/* a file's error starts with its name already; a node's says it answered garbage */
	if (r) {
		fleet_member_say(nm, "%s%s", nm->src == FSRC_HTTP ? "invalid answer: " : "",
				 err[0] ? err : strerror(-r));
		model_free(m);
		free(m);
		return;
	}
	consume(fr, nm, m);
}

/*
 * Parsing a node's answer (a 150 KiB model for an 8-NIC node) costs more
 * than fetching it on a LAN, so answers are parsed by a few threads while
 * the transfers go on.  Each job touches only its own member.
 */
struct job {
	struct fleet_member *nm;
	char *body; /* owned; NULL: read the member's file */
	size_t len;
	struct job *next;
};

/* Bodies waiting to be parsed, at most: the transfers wait when parsing falls behind. */
#define POOL_QUEUE_MAX 32

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t cond, room;
	struct job *head, *tail;
	size_t queued;
	bool closing;
	pthread_t threads[8];
	int n_threads;
	struct fleet_run *fr;
};

static void run_job(struct pool *p, struct job *j)
{
	struct fleet_member *nm = j->nm;

	if (!j->body) {
		int r = read_file_all(nm->where, &j->body, &j->len);

		if (r) {
			fleet_member_say(nm, "%s: %s", nm->where, strerror(-r));
			return;
		}
	}
	take_snapshot(p->fr, nm, j->body, j->len);
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		struct job *j;

		pthread_mutex_lock(&p->lock);
		while (!p->head && !p->closing)
			pthread_cond_wait(&p->cond, &p->lock);
		j = p->head;
		if (j) {
			p->head = j->next;
			if (!p->head)
				p->tail = NULL;
			p->queued--;
			pthread_cond_signal(&p->room);
		}
		pthread_mutex_unlock(&p->lock);
		if (!j)
			return NULL;
		run_job(p, j);
		free(j->body);
		free(j);
	}
}

static void pool_start(struct pool *p, struct fleet_run *fr)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int want = cpus > 8 ? 8 : cpus > 1 ? (int)cpus : 0;

	memset(p, 0, sizeof(*p));
	p->fr = fr;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	pthread_cond_init(&p->room, NULL);
	/* jansson seeds its hash function on first use: do that before the threads */
	json_object_seed(0);
	for (int i = 0; i < want; i++)
		if (!pthread_create(&p->threads[p->n_threads], NULL, worker, p))
			p->n_threads++;
}

/* Hand a job over (the body with it); without threads it runs here and now. */
static int pool_submit(struct pool *p, struct fleet_member *nm, char *body, size_t len)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j) {
		free(body);
		fleet_member_say(nm, "out of memory");
		return -ENOMEM;
	}
	j->nm = nm;
	j->body = body;
	j->len = len;
	if (!p->n_threads) {
		run_job(p, j);
		free(j->body);
		free(j);
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	while (p->queued >= POOL_QUEUE_MAX)
		pthread_cond_wait(&p->room, &p->lock);
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	p->queued++;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* Wait for every job, then stop the threads. */
static void pool_finish(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	pthread_cond_destroy(&p->room);
}

struct http_ctx {
	struct fleet_run *fr;
	struct client_req *reqs;
	size_t *member; /* request -> member index */
	struct pool *pool;
	bool oom;
};

static void http_done(struct client_req *r, void *arg)
{
	struct http_ctx *hc = arg;
	struct fleet_member *nm = &hc->fr->nodes[hc->member[r - hc->reqs]];

	nm->seconds = r->seconds;
	if (r->err) {
		fleet_member_say(nm, "%s", r->errmsg);
		return;
	}
	/* the pool owns the body now */
	if (pool_submit(hc->pool, nm, r->body, r->len))
		hc->oom = true;
	r->body = NULL;
	r->len = 0;
}

static int gather_http(struct fleet_run *fr, const struct client_http_opts *ho, struct pool *pool)
{
	struct http_ctx hc = { .fr = fr, .pool = pool };
	size_t n = 0;
	int r;

	for (size_t i = 0; i < fr->n; i++)
		n += fr->nodes[i].src == FSRC_HTTP;
	if (!n)
		return 0;
	hc.reqs = calloc(n, sizeof(*hc.reqs));
	hc.member = calloc(n, sizeof(*hc.member));
	if (!hc.reqs || !hc.member) {
		free(hc.reqs);
		free(hc.member);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < fr->n; i++) {
		if (fr->nodes[i].src != FSRC_HTTP)
			continue;
		hc.reqs[n].url = fr->nodes[i].where;
		hc.member[n++] = i;
	}
	r = client_http_run(hc.reqs, n, ho, http_done, &hc);
	for (size_t i = 0; i < n; i++)
		client_req_free(&hc.reqs[i]);
	free(hc.reqs);
	free(hc.member);
	return hc.oom ? -ENOMEM : r;
}

static int gather_files(struct fleet_run *fr, struct pool *pool)
{
	for (size_t i = 0; i < fr->n; i++)
		if (fr->nodes[i].src == FSRC_FILE && pool_submit(pool, &fr->nodes[i], NULL, 0))
			return -ENOMEM;
	return 0;
}

/* A snapshot is named by its host, as the nodes of a job are (a path if two share one). */
static void name_files(struct fleet_run *fr)
{
	for (size_t i = 0; i < fr->n; i++) {
		struct fleet_member *nm = &fr->nodes[i];
		bool dup = false;
		char *h;

		if (nm->src != FSRC_FILE || !nm->answered || !nm->host[0])
			continue;
		for (size_t k = 0; k < fr->n && !dup; k++)
			dup = k != i && (!strcmp(fr->nodes[k].name, nm->host) ||
					 (fr->nodes[k].src == FSRC_FILE && fr->nodes[k].answered &&
					  !strcmp(fr->nodes[k].host, nm->host)));
		if (dup || !(h = strdup(nm->host)))
			continue;
		free(nm->name);
		nm->name = h;
	}
}

/*
 * Nodes asked of Prometheus per round: each round's models and answers are
 * dropped before the next, so the memory does not grow with the fleet.  A
 * round is one query per metric; the largest answer (every port's 64-entry
 * DSCP map) is about 25 MB for 250 nodes, where 8 000 at once were 800 MB.
 */
#define PROM_CHUNK 250

/*
 * The nodes of one round, from idx[*at] on: at most PROM_CHUNK, and as many
 * as keep the longest query within --prometheus.max-query (its text without
 * instances is overhead, each node adds cost[]).  A node whose instances do
 * not fit even alone is UNKNOWN and passed over.  How many.
 */
static size_t next_round(struct fleet_run *fr, const size_t *idx, const size_t *cost, size_t total,
			 size_t *at, size_t overhead, size_t max_query)
{
	size_t n = 0, sum = overhead;
	char lim[32];

	while (*at < total && !n && overhead + cost[*at] > max_query) {
		struct fleet_member *nm = &fr->nodes[idx[*at]];

		fleet_member_say(
		    nm,
		    "its instances in a query (%zu bytes with the query's %zu) do not fit "
		    "--prometheus.max-query (%s)",
		    cost[*at], overhead, rw_size_text(max_query, lim, sizeof(lim)));
		(*at)++;
	}
	while (*at + n < total && n < PROM_CHUNK && sum + cost[*at + n] <= max_query)
		sum += cost[*at + n++];
	return n;
}

/* The nodes idx[*done..total) are not read, for the reason err. */
static void fail_rest(struct fleet_run *fr, const size_t *idx, size_t *done, size_t total,
		      const char *err)
{
	for (; *done < total; (*done)++)
		fleet_member_say(&fr->nodes[idx[*done]], "%s", err);
}

/* Series one node had twice (two scrape jobs, HA replicas): said once at the end. */
struct prom_repeats {
	size_t repeats, nodes;
	char note[256];
};

/* A round's nodes (idx[0..n)) with a fresh model each: false out of memory. */
static bool round_models(struct fleet_run *fr, struct fleet_prom_node *pn, size_t n,
			 const size_t *idx)
{
	memset(pn, 0, n * sizeof(*pn));
	for (size_t k = 0; k < n; k++) {
		pn[k].name = fr->nodes[idx[k]].name;
		pn[k].m = malloc(sizeof(*pn[k].m));
		if (!pn[k].m)
			return false;
		model_init(pn[k].m);
	}
	return true;
}

/* A round's answers into its members (r: the round failed, err for all). */
static void take_round(struct fleet_run *fr, struct fleet_prom_node *pn, size_t n,
		       const size_t *idx, int r, const char *err, struct prom_repeats *rp)
{
	for (size_t k = 0; k < n; k++) {
		struct fleet_member *nm = &fr->nodes[idx[k]];

		if (r) {
			fleet_member_say(nm, "%s", err);
		} else if (pn[k].found) {
			if (pn[k].repeats && !rp->nodes++)
				snprintf(rp->note, sizeof(rp->note), "%s", pn[k].note);
			rp->repeats += pn[k].repeats;
			free(nm->where);
			nm->where = strdup(pn[k].instance);
			if (nm->share && nm->share_rep) {
				/* its group's: kept until the others have been through the rules */
				consume_keep(fr, nm, pn[k].m);
				fleet_share_keep(fr, nm, pn[k].m);
			} else {
				consume(fr, nm, pn[k].m);
			}
			pn[k].m = NULL;
		} else if (fr->engine && pn[k].scraped) {
			/*
			 * none of the series the rules left to the client: the
			 * node has no unit of them, as with all its series asked
			 */
			nm->answered = true;
			strlcpy0(nm->host, pn[k].name, sizeof(nm->host));
			rules_fleet_answered(fr->e, 1);
		} else {
			fleet_member_say(nm, "%s", pn[k].err);
		}
		if (pn[k].m) {
			model_free(pn[k].m);
			free(pn[k].m);
		}
	}
}

/* The rounds, each sized to --prometheus.max-query, until every node is asked. */
static void prom_rounds(struct fleet_run *fr, const struct client_opts *co,
			const struct fleet_prom_opts *po, const struct fleet_prom_instances *known,
			const bool *used, struct fleet_prom_node *pn, const size_t *idx,
			size_t *cost, size_t total, size_t done, size_t overhead,
			struct prom_repeats *rp)
{
	char err[512] = "";

	while (done < total && !fr->oom) {
		size_t n = next_round(fr, idx, cost, total, &done, overhead, po->max_query);
		int r;

		if (!n)
			break;
		if (!round_models(fr, pn, n, idx + done))
			fr->oom = true;
		r = fr->oom ? -ENOMEM
			    : fleet_prom_gather(fr->prometheus, &co->prom_ho, po, known, used, pn,
						n, err, sizeof(err));
		take_round(fr, pn, n, idx + done, r, err, rp);
		done += n;
		/* Prometheus failed as a whole: the same for the rest, without waiting again */
		if (r && r != -ENOMEM)
			fail_rest(fr, idx, &done, total, err);
		if (r == -ENOMEM)
			fr->oom = true;
	}
}

static size_t prometheus_nodes(const struct fleet_run *fr)
{
	size_t n = 0;

	for (size_t i = 0; i < fr->n; i++)
		n += fr->nodes[i].src == FSRC_PROMETHEUS;
	return n;
}

/* A node still to ask Prometheus for: not yet asked, and not one a group's representative stands
 * for. */
static bool to_gather(const struct fleet_member *nm)
{
	return nm->src == FSRC_PROMETHEUS && !nm->gathered && (!nm->share || nm->share_rep);
}

static int gather_prometheus(struct fleet_run *fr, const struct client_opts *co,
			     const bool *fields_override)
{
	const struct client_http_opts *ho = &co->prom_ho;
	struct fleet_prom_opts po = co->po;
	struct fleet_prom_instances *known = NULL;
	struct fleet_prom_node *pn;
	const char **names;
	size_t *idx, *cost, total = 0, done = 0, overhead;
	struct prom_repeats rp = { 0 };
	char lim[32];
	bool used[F__COUNT];
	char err[512] = "";
	int r = 0;

	for (size_t i = 0; i < fr->n; i++)
		total += to_gather(&fr->nodes[i]);
	if (!total)
		return 0;
	pn = calloc(total < PROM_CHUNK ? total : PROM_CHUNK, sizeof(*pn));
	idx = calloc(total, sizeof(*idx));
	cost = calloc(total, sizeof(*cost));
	names = calloc(total, sizeof(*names));
	if (!pn || !idx || !names || !cost) {
		free(pn);
		free(idx);
		free(cost);
		free(names);
		return -ENOMEM;
	}
	total = 0;
	for (size_t i = 0; i < fr->n; i++)
		if (to_gather(&fr->nodes[i])) {
			names[total] = fr->nodes[i].name;
			idx[total++] = i;
			fr->nodes[i].gathered = true;
		}
	if (fields_override)
		memcpy(used, fields_override, sizeof(used));
	else
		fields_used(fr, used);
	/*
	 * --job: the nodes are the instances the engine's roce_job_info named; a
	 * job that fits one round is asked by the join alone, a larger one in
	 * rounds that name their instances (memory stays flat).  Else the
	 * instances the engine knows are listed once, and each round asks for
	 * exactly its nodes'.
	 */
	if (po.job)
		r = fleet_prom_instances_from(names, total, &known);
	else
		r = fleet_prom_instances_get(fr->prometheus, ho, names, total, &known, err,
					     sizeof(err));
	/* the join selects every node of the job: not for a few of them (fleet_share.c) */
	if (!r && po.job && (total > PROM_CHUNK || total < prometheus_nodes(fr)))
		po.job = NULL;
	if (!r)
		r = fleet_prom_costs(known, names, total, cost);
	free(names);
	if (r == -ENOMEM)
		fr->oom = true;
	if (r == -EIO)
		fail_rest(fr, idx, &done, total, err);
	overhead = fleet_prom_overhead(used, po.job);
	if (overhead == SIZE_MAX)
		fr->oom = true;
	/* with the join, no instance is in a query */
	if (po.job)
		memset(cost, 0, total * sizeof(*cost));
	if (!fr->oom && done < total && overhead >= po.max_query) {
		snprintf(err, sizeof(err),
			 "Prometheus %s: a query is %zu bytes before any instance is in it, over "
			 "--prometheus.max-query (%s)",
			 fr->prometheus, overhead, rw_size_text(po.max_query, lim, sizeof(lim)));
		fail_rest(fr, idx, &done, total, err);
	}
	prom_rounds(fr, co, &po, known, used, pn, idx, cost, total, done, overhead, &rp);
	/* taken once, said once: the same fact twice is no finding, but the setup is odd */
	if (rp.nodes)
		fprintf(stderr,
			"rocewatch fleet: Prometheus %s: %s (two scrape jobs or HA replicas of one "
			"target?): the same value, taken once; %zu such series on %zu node%s\n",
			fr->prometheus, rp.note, rp.repeats, rp.nodes, rp.nodes == 1 ? "" : "s");
	free(pn);
	free(idx);
	free(cost);
	fleet_prom_instances_free(known);
	return fr->oom ? -ENOMEM : 0;
}

int fleet_gather_prometheus(struct fleet_run *fr, const struct client_opts *co, const bool *used)
{
	return gather_prometheus(fr, co, used);
}

/* ---- fleet rules compared on the engine (--job) ---- */

/*
 * Rule k's result from the engine's counts, when they say it holds one
 * value on every unit the client would see: its groups (by position, as
 * the client groups like with like: group j has the nodes with more than j
 * units; pooled: one) counted into the rule.  false: the client compares it.
 */
static bool tell_counted(struct fleet_run *fr, size_t k, const struct fleet_rule_shape *sh,
			 const struct fleet_prom_count *c, const struct fleet_prom_totals *t)
{
	const struct fleet_prom_rows *d = &c->by_max;
	enum obj_kind kind = sh->rule->scope;
	size_t units = 0, most = 0, want;
	struct node_model m;
	struct object *o;
	char err[256];
	bool ok = true;

	if (!c->asked || !c->agree || d->more || d->n > FLEET_PROM_ROWS_MAX)
		return false;
	for (size_t i = 0; i < d->n; i++) {
		if (strcmp(d->row[i].value, d->row[0].value))
			return false; /* two values: the client names the outliers */
		units += d->row[i].per_node * d->row[i].nodes;
		if (d->row[i].per_node > most)
			most = d->row[i].per_node;
	}
	/* a unit without the fact is unknown to the client: every unit must have it */
	want = kind == OBJ_NODE ? t->nodes : sh->rdma ? t->rdma : t->objects[kind];
	if (sh->guard_field != sh->field && units != want)
		return false;
	if (!d->n) {
		rules_fleet_tell(fr->e, k);
		return true; /* no unit: the rule is skipped as the client skips it */
	}
	model_init(&m);
	if (fleet_prom_value_model(sh->field, d->row[0].value, &m, &o, err, sizeof(err))) {
		model_free(&m);
		return false;
	}
	rules_fleet_tell(fr->e, k);
	if (kind == OBJ_NODE || sh->rule->by == FLEET_BY_POOL) {
		size_t nodes = 0;

		for (size_t i = 0; i < d->n; i++)
			nodes += d->row[i].nodes;
		ok = !rules_fleet_add_counted(fr->e, k, "", 0, &m, o, units, nodes);
	} else {
		for (size_t j = 0; j < most && ok; j++) {
			char key[32];
			size_t n = 0;

			for (size_t i = 0; i < d->n; i++)
				n += d->row[i].per_node > j ? d->row[i].nodes : 0;
			snprintf(key, sizeof(key), "%s %zu",
				 sh->rule->by == FLEET_BY_POSITION ? "position" : "rail", j);
			ok = !rules_fleet_add_counted(fr->e, k, key, j, &m, o, n, n);
		}
	}
	model_free(&m);
	if (!ok)
		fr->oom = true;
	return true;
}

/*
 * --job, fleet rules only: each rule the engine can count is asked as counts
 * (fleet_count.c) and told to the rules when they say it holds; the fields of
 * the others are left in used[] for the client to fetch (none: no fetch at
 * all).  0; -errno only when out of memory (an engine that cannot count
 * leaves every rule to the client, as before).
 */
static int compare_on_engine(struct fleet_run *fr, const struct client_opts *co,
			     bool used[F__COUNT], bool *fetch)
{
	size_t nr = rules_fleet_count(fr->e), nc = 0;
	struct fleet_rule_shape *sh = calloc(nr ? nr : 1, sizeof(*sh));
	struct fleet_prom_count *c = calloc(nr ? nr : 1, sizeof(*c));
	size_t *of = calloc(nr ? nr : 1, sizeof(*of));
	bool *told = calloc(nr ? nr : 1, sizeof(*told)), all[F__COUNT];
	struct fleet_prom_totals t;
	char err[512] = "";
	int r = 0;

	if (!sh || !c || !of || !told) {
		r = -ENOMEM;
		goto out;
	}
	fields_used(fr, all);
	for (size_t k = 0; k < nr; k++) {
		rules_fleet_shape(fr->e, k, &sh[k]);
		if (sh[k].countable && fleet_prom_countable(sh[k].field) &&
		    (sh[k].guard_field < 0 || sh[k].guard_field == sh[k].field ||
		     fleet_prom_countable(sh[k].guard_field))) {
			c[nc].field = sh[k].field;
			c[nc].rdma = sh[k].rdma;
			c[nc].guard_field = sh[k].guard_field;
			of[nc++] = k;
		}
	}
	r = nc ? fleet_prom_count(fr->prometheus, &co->prom_ho, &co->po, all, c, nc, &t, err,
				  sizeof(err))
	       : 0;
	if (r == -ENOMEM)
		goto out;
	if (r)
		fprintf(stderr,
			"rocewatch fleet: comparing on the engine: %s; compared here instead\n",
			err);
	for (size_t i = 0; !r && i < nc && !fr->oom; i++)
		told[of[i]] = tell_counted(fr, of[i], &sh[of[i]], &c[i], &t);
	/* facts no engine holds (job.*, profile_outcome): skipped on every node, as the client */
	for (size_t k = 0; k < nr; k++)
		if (sh[k].never) {
			rules_fleet_tell(fr->e, k);
			told[k] = true;
		}
	memset(used, 0, F__COUNT * sizeof(*used));
	for (size_t k = 0; k < nr; k++) {
		fr->told += told[k];
		fr->untold += !told[k];
		if (!told[k])
			rules_fleet_fields(fr->e, k, used);
	}
	/*
	 * `rdma` is derived from the ports' netdev label: some port metric must
	 * come too; and the units' kinds are those the client would see, so a
	 * kind's metrics come whole
	 */
	if (used[F_NETDEV_RDMA])
		used[F_PORT_STATE] = true;
	*fetch = fr->untold > 0;
	if (*fetch)
		for (int id = 0; id < F__COUNT; id++)
			for (size_t k = 0; k < nr && !used[id]; k++)
				used[id] =
				    all[id] && !told[k] && fields[id].obj == sh[k].rule->scope;
	r = fr->oom ? -ENOMEM : 0;
out:
	free(sh);
	free(c);
	free(of);
	free(told);
	return r;
}

/*
 * No rule left to the client: the job's nodes answered unless their target
 * is down (up == 0), as the client would have found them.  0 or -ENOMEM.
 */
static int engine_answered(struct fleet_run *fr, const struct client_opts *co)
{
	struct fleet_prom_instances *down = NULL;
	char err[640] = "";
	size_t n = 0;
	int r = fleet_prom_job_nodes(fr->prometheus, &co->prom_ho, co->po.job, true, &down, err,
				     sizeof(err));

	for (size_t i = 0; i < fr->n; i++) {
		struct fleet_member *nm = &fr->nodes[i];
		bool is_down = false;

		if (nm->src != FSRC_PROMETHEUS)
			continue;
		if (r) {
			fleet_member_say(nm, "%s", err);
			continue;
		}
		for (size_t d = 0; d < down->n && !is_down; d++)
			is_down = !strcmp(down->v[d], nm->name);
		if (is_down) {
			fleet_member_say(nm, "Prometheus: target %s is down (up == 0)", nm->name);
			continue;
		}
		nm->answered = true;
		strlcpy0(nm->host, nm->name, sizeof(nm->host));
		n++;
	}
	rules_fleet_answered(fr->e, n);
	fleet_prom_instances_free(down);
	return r == -ENOMEM ? r : 0;
}

/* ---- per-node rules ---- */

static int keep_result(struct fleet_member *nm, const struct rule_result *x)
{
	struct fleet_node_result *k;

	if (array_grow(&nm->res, &nm->cap_res, nm->n_res, sizeof(*nm->res), 8))
		return -ENOMEM;
	k = &nm->res[nm->n_res++];
	k->rule = x->rule;
	k->outcome = x->outcome;
	if (x->kind == OBJ_RDMA_PORT)
		snprintf(k->object, sizeof(k->object), "%s/%u", x->device, x->port);
	else
		snprintf(k->object, sizeof(k->object), "%s", x->device);
	snprintf(k->text, sizeof(k->text), "%s", x->outcome == RULE_FAIL ? x->summary : x->reason);
	return 0;
}

/* "OK", or the status and the rules that did not pass: the value profile_outcome compares. */
static int outcome_text(struct fleet_member *nm, const struct rules_engine *e, bool multi)
{
	struct strbuf sb = { 0 };
	const char *sep = ": ", *last = NULL;

	sb_puts(&sb, rules_status_name(nm->status));
	for (size_t i = 0; i < rules_profile_count(e); i++) {
		const struct rules_profile_info *pi = rules_profile(e, i);

		for (int k = 0; k < OBJ__COUNT && !pi->requirements_met; k++)
			if (pi->requires[k]) {
				sb_printf(&sb, "%s%s requires %s", sep, pi->name,
					  obj_kind_name((enum obj_kind)k));
				sep = ", ";
			}
	}
	for (size_t i = 0; i < nm->n_res; i++) {
		const struct rule_info *ri = nm->res[i].rule;

		if (ri->severity == SEV_INFO || ri->name == last)
			continue;
		/* the rule, not the object: netdev names differ between nodes */
		if (multi)
			sb_printf(&sb, "%s%s/%s", sep, ri->profile, ri->name);
		else
			sb_printf(&sb, "%s%s", sep, ri->name);
		sep = ", ";
		last = ri->name;
	}
	if (sb.oom) {
		sb_free(&sb);
		return -ENOMEM;
	}
	nm->outcome = sb.buf;
	return 0;
}

/* Do node rules come from more than one profile (then name them profile/rule)? */
static bool node_rules_multi_profile(const struct rules_engine *e)
{
	const char *first = NULL;

	for (size_t i = 0; i < rules_count(e); i++) {
		const struct rule_info *ri = rules_rule(e, i);

		if (ri->fleet)
			continue;
		if (first && strcmp(first, ri->profile))
			return true;
		first = ri->profile;
	}
	return false;
}

/* The node's own rules (--profile) on its model. */
static int eval_node(struct fleet_run *fr, struct fleet_member *nm, const struct node_model *m)
{
	const struct rule_result *res;
	size_t n;
	int64_t t = ts_ns(&m->time);
	int r;

	rules_reset(fr->e);
	r = rules_evaluate(fr->e, m, t);
	if (r)
		return r;
	nm->evaluated = true;
	nm->status = rules_status(fr->e);
	n = rules_results(fr->e, &res);
	for (size_t k = 0; k < n; k++) {
		nm->counts[res[k].outcome < RULE__OUTCOMES ? res[k].outcome : RULE_UNKNOWN]++;
		if ((res[k].outcome == RULE_FAIL || res[k].outcome == RULE_UNKNOWN) &&
		    keep_result(nm, &res[k]))
			return -ENOMEM;
	}
	r = outcome_text(nm, fr->e, fr->multi);
	rules_reset(fr->e);
	return r;
}

/* One engine for all: the pool's threads take turns. */
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * What the job's NCCL does on the node (nccl_apply() wrote it into m), kept
 * for the report after the model is freed: 0 or -ENOMEM.
 */
static int keep_job(struct fleet_member *nm, const struct nccl_env *job, const struct node_model *m)
{
	const struct nccl_reading *hca = &job->out[NCCL_IB_HCA];
	struct strbuf h = { 0 }, r = { 0 }, g = { 0 };
	int64_t n = field_present(&m->node, F_JOB_HCA_COUNT) ? m->node.f[F_JOB_HCA_COUNT].v.i : 0;

	for (size_t i = 0; i < hca->n; i++)
		sb_printf(&h, "%s%s", i ? " " : "", hca->items[i]);
	for (int64_t k = 0; k < n; k++) {
		const char *sep = k ? " " : "";

		for (size_t i = 0; i < m->n_ports; i++) {
			const struct object *p = m->ports[i];

			if (!field_present(p, F_PORT_JOB_HCA_INDEX) ||
			    p->f[F_PORT_JOB_HCA_INDEX].v.i != k)
				continue;
			sb_printf(&r, "%s%s", sep,
				  field_present(p, F_PORT_JOB_RAIL) ? p->f[F_PORT_JOB_RAIL].v.s
								    : "?");
			sep = "+";
		}
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *p = m->ports[i];

		if (!field_present(p, F_PORT_JOB_HCA_INDEX) || p->f[F_PORT_JOB_HCA_INDEX].v.i < 0)
			continue;
		if (field_present(p, F_PORT_JOB_GID_INDEX))
			sb_printf(&g, "%s%s:%u=%lld", g.len ? " " : "", p->name, p->port,
				  (long long)p->f[F_PORT_JOB_GID_INDEX].v.i);
		else
			sb_printf(&g, "%s%s:%u=?", g.len ? " " : "", p->name, p->port);
	}
	nm->job_hca = h.buf ? h.buf : strdup("");
	nm->job_rails = r.buf ? r.buf : strdup("");
	nm->job_gids = g.buf ? g.buf : strdup("");
	return h.oom || r.oom || g.oom || !nm->job_hca || !nm->job_rails || !nm->job_gids ? -ENOMEM
											  : 0;
}

/*
 * A node that answered: its own rules, then its units into the fleet rules;
 * what the report needs is kept in the member, and the model (taken over)
 * is freed.
 */
/* A node's model m into the rules (m stays the caller's): 0 or -ENOMEM. */
static int consume_keep(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m)
{
	struct fleet_node fn;
	int r = 0;

	pthread_mutex_lock(&engine_lock);
	strlcpy0(nm->host, m->host, sizeof(nm->host));
	nm->answered = true;
	/* the job's NCCL read on this node first: its job.* facts are what the rules compare */
	if (fr->job) {
		nccl_apply(fr->job, m);
		r = keep_job(nm, fr->job, m);
	}
	if (!r && fr->per_node)
		r = eval_node(fr, nm, m);
	if (!r) {
		fn.name = nm->name;
		fn.m = m;
		fn.outcome = nm->outcome;
		r = rules_fleet_add(fr->e, (size_t)(nm - fr->nodes), &fn);
	}
	if (r)
		fr->oom = true;
	pthread_mutex_unlock(&engine_lock);
	return r;
}

static int consume(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m)
{
	int r = consume_keep(fr, nm, m);

	model_free(m);
	free(m);
	return r;
}

enum rules_status fleet_outcome_status(const struct rule_info *ri, enum rule_outcome o)
{
	if (ri->severity == SEV_INFO)
		return RULES_OK;
	if (o == RULE_FAIL)
		return ri->severity == SEV_CRITICAL ? RULES_CRITICAL : RULES_WARNING;
	return o == RULE_UNKNOWN ? RULES_UNKNOWN : RULES_OK;
}

enum rules_status fleet_verdict(struct fleet_run *fr)
{
	const struct fleet_result *res;
	size_t n = rules_fleet_results(fr->e, &res);
	enum rules_status st = fr->n ? RULES_OK : RULES_UNKNOWN;

	for (size_t i = 0; i < fr->n; i++) {
		const struct fleet_member *nm = &fr->nodes[i];

		if (!nm->answered) {
			st = rules_status_worse(st, RULES_UNKNOWN);
			fr->node_unknown = true;
			continue;
		}
		if (nm->evaluated)
			st = rules_status_worse(st, nm->status);
	}
	for (size_t i = 0; i < n; i++)
		st = rules_status_worse(st, fleet_outcome_status(res[i].rule, res[i].outcome));
	return st;
}

/* ---- the command ---- */

static void run_free(struct fleet_run *fr)
{
	for (size_t i = 0; i < fr->n; i++) {
		free(fr->nodes[i].name);
		free(fr->nodes[i].where);
		free(fr->nodes[i].outcome);
		free(fr->nodes[i].res);
		free(fr->nodes[i].job_hca);
		free(fr->nodes[i].job_rails);
		free(fr->nodes[i].job_gids);
		free(fr->nodes[i].reason);
	}
	if (fr->job) {
		nccl_env_free(fr->job);
		free(fr->job);
	}
	free(fr->nodes);
	free(fr->fnodes);
	strmap_free(&fr->names);
	fleet_share_free(fr);
	snapshot_keep_free(fr->keep);
	rules_free(fr->e);
}

static int load_rules(struct fleet_run *fr, struct rules_spec *spec, size_t n_fleet)
{
	struct rules_diags dg = { 0 };
	int r;

	if (!n_fleet && rules_spec_add_profile(spec, FLEET_DEFAULT_PROFILE))
		return -ENOMEM;
	r = rules_load(spec, &fr->e, &dg);
	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch fleet: %s\n", line);
	}
	rules_diags_free(&dg);
	if (r)
		return r;
	fr->per_node = rules_node_count(fr->e) > 0;
	fr->multi = node_rules_multi_profile(fr->e);
	rules_set_single_sample(fr->e, true);
	return 0;
}

struct fleet_args {
	struct fleet_run fr;
	struct fleet_rules {
		struct rules_spec spec;
		size_t n_fleet; /* --fleet-profile given */
	} rules;
	struct client_opts client;
	const char *nccl_file; /* --nccl-env */
	const char *compare;   /* --prometheus.compare */
	bool slurm;
	uint16_t port;
};

/* --fleet-profile: a profile of fleet rules, counted (none: the default one). */
static int opt_fleet_profile(const struct cli_opt *o, void *member, const char *arg)
{
	struct fleet_rules *fl = member;

	fl->n_fleet++;
	return cli_rules_row(o, &fl->spec, arg);
}

static int opt_prometheus(const struct cli_opt *o, void *member, const char *arg)
{
	if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
		return CLI_BAD;
	if (strpbrk(arg, "?#")) {
		/* the API's paths are appended to it: /api/v1/query */
		fprintf(stderr,
			"rocewatch fleet: --%s: '%s': give the API's base URL, with its "
			"path prefix if it has one (https://mimir/prometheus, "
			"http://vmselect:8481/select/0/prometheus), without '?' or '#'\n",
			o->name, arg);
		return -EINVAL;
	}
	*(const char **)member = arg;
	return 0;
}

/* --format's words, in enum fleet_format's order; --prometheus.compare's */
static const char *const fleet_formats[] = { "text", "json", "reason", NULL };
static const char *const fleet_compares[] = { "engine", "client", NULL };

static const struct cli_opt fleet_opts[] = {
	{ .name = "slurm",
	  CLI_FLAG_AT(struct fleet_args, slurm),
	  .help = "the nodes of $SLURM_JOB_NODELIST (PrologSlurmctld,\n"
		  "salloc, sbatch); an error when it is not set" },
	{ .name = "prometheus",
	  CLI_CALL_AT(struct fleet_args, fr.prometheus, opt_prometheus),
	  .bad = "an http:// or https:// URL",
	  .metavar = "URL",
	  .help = "read the NODEs' facts from this Prometheus instead\n"
		  "of asking each node (instant queries on rocewatch's\n"
		  "metrics; a NODE matches the instance label, a bare\n"
		  "host also host:PORT)" },
	{ .name = "nccl-env",
	  CLI_STRING_AT(struct fleet_args, nccl_file),
	  .metavar = "FILE",
	  .help = "the job's NCCL settings (KEY=VALUE lines, as for\n"
		  "check --nccl-env): what NCCL does with them is read\n"
		  "on every node and compared (rules nccl_*: the same\n"
		  "devices on the same rails in the same places, a\n"
		  "usable GID, the TC's DSCP on the same priority);\n"
		  "with --slurm and without it, the NCCL_* variables\n"
		  "of this environment when it has any (run inside\n"
		  "the job: sbatch, salloc)" },
	{ .name = "prometheus.compare",
	  CLI_STRING_AT(struct fleet_args, compare),
	  .words = fleet_compares,
	  .metavar = "client|engine",
	  .help = "\n"
		  "engine (the default with --job): the engine tells\n"
		  "which of the job's nodes are alike (their fleet\n"
		  "digest), one of each kind is fetched for all;\n"
		  "client: fetch every node's series and compare here" },
	{ .name = "job",
	  CLI_STRING_AT(struct fleet_args, client.po.job),
	  .metavar = "ID",
	  .help = "with --prometheus: the nodes are those whose\n"
		  "serve --job-mapping-dir exports\n"
		  "roce_job_info{job_id=\"ID\"} (queries join on it\n"
		  "instead of listing instances)" },
	CLI_TEXT_ROW("\n"
		     "Rules:\n"),
	{ .name = "fleet-profile",
	  CLI_CALL_AT(struct fleet_args, rules, opt_fleet_profile),
	  .value = CLI_RULES_PROFILE,
	  .metavar = "NAME|FILE",
	  .help = "fleet rules (repeatable; default " FLEET_DEFAULT_PROFILE ")" },
	CLI_OPT_RULES(struct fleet_args, rules.spec,
		      "also evaluate this per-node profile on every node\n"
		      "(repeatable; e.g. lossless-roce)"),
	CLI_TEXT_ROW("\n"
		     "Client (nodes and Prometheus):\n"),
	CLI_OPT_NODE_PORT(struct fleet_args, port),
	{ 0 },
};

static const struct cli_opt fleet_output_opts[] = {
	CLI_TEXT_ROW("\n"
		     "Output:\n"),
	{ .name = "format",
	  CLI_CHOICE_AT(struct fleet_args, fr.format, fleet_formats),
	  .metavar = "text|json|reason",
	  .help = "report format (default text; -j is json); reason:\n"
		  "one line, what is not OK, worst first, each rule\n"
		  "with its outliers and their values, for a job's\n"
		  "comment (PrologSlurmctld)" },
	{ .name = "", .short_name = 'j', CLI_SET_AT(struct fleet_args, fr.format, FLEET_FMT_JSON) },
	{ .name = "max-bytes",
	  CLI_COUNT_AT(struct fleet_args, fr.max_bytes),
	  .min = 64,
	  .max = 1048576,
	  .bad = "a number of bytes, 64 or more",
	  .metavar = "N",
	  .help = "longest reason line (default 1024: the most\n"
		  "Slurm takes for a job's comment), cut at an item\n"
		  "with \"+N more\"" },
	{ .name = "report-file",
	  CLI_STRING_AT(struct fleet_args, fr.report_file),
	  .metavar = "FILE",
	  .help = "also write the text report to FILE (the log of a\n"
		  "--format reason run)" },
	{ .name = "max-names",
	  CLI_COUNT_AT(struct fleet_args, fr.max_names),
	  .max = 100000,
	  .bad = "a number",
	  .metavar = "N",
	  .help = "nodes named per rule in the text report (default\n"
		  "10; JSON names all)" },
	{ .name = "color",
	  CLI_CHOICE_AT(struct fleet_args, fr.color, term_color_words),
	  .metavar = "auto|always|never",
	  .help = "colour the text report (default auto)" },
	{ .name = "verbose",
	  .short_name = 'v',
	  CLI_FLAG_AT(struct fleet_args, fr.verbose),
	  .help = "also list passing nodes' results and skipped rules" },
	CLI_OPT_HELP,
	{ 0 },
};

const struct cli_cmd fleet_cli = {
	.name = "fleet check",
	.range = "fleet",
	.synopsis = "[OPTIONS] [NODE|FILE|DIR]...",
	.head = fleet_usage,
	.tail = fleet_usage_tail,
	.tables = { CLI_TABLE(fleet_opts), CLI_SUB(client_cli_opts, struct fleet_args, client),
		    CLI_SUB(client_prom_cli_opts, struct fleet_args, client),
		    CLI_TABLE(fleet_output_opts) },
};

/*
 * --job: the nodes whose serve exports roce_job_info{job_id="ID"}, named by
 * their instance.  A partial answer (a shard down) may leave some out: that
 * is said as a member of its own, UNKNOWN, so the verdict cannot be OK.
 * 0 or -errno (printed).
 */
static int job_members(struct fleet_args *a)
{
	struct fleet_run *fr = &a->fr;
	struct fleet_prom_instances *in = NULL;
	char err[640] = "", what[160];
	int r;

	if (!fr->prometheus) {
		fprintf(stderr, "rocewatch fleet: --job: the job's nodes are found in a "
				"Prometheus: give --prometheus URL\n");
		return -EINVAL;
	}
	r = fleet_prom_job_nodes(fr->prometheus, &a->client.prom_ho, a->client.po.job, false, &in,
				 err, sizeof(err));
	if (!r && !in->n)
		r = -ENOENT;
	if (r) {
		fprintf(stderr, "rocewatch fleet: %s\n", r == -ENOMEM ? "out of memory" : err);
		fleet_prom_instances_free(in);
		return r;
	}
	for (size_t i = 0; i < in->n && !r; i++)
		if (!add_member(fr, in->v[i], FSRC_PROMETHEUS, fr->prometheus))
			r = -ENOMEM;
	if (!r && in->warning[0]) {
		struct fleet_member *nm;

		snprintf(what, sizeof(what), "job %.100s", a->client.po.job);
		nm = add_member(fr, what, FSRC_JOB_LIST, fr->prometheus);
		if (!nm)
			r = -ENOMEM;
		else
			fleet_member_say(
			    nm,
			    "Prometheus answered partially (%s): the job may have nodes "
			    "that are not checked",
			    in->warning);
	}
	if (r)
		fprintf(stderr, "rocewatch fleet: out of memory\n");
	fleet_prom_instances_free(in);
	return r;
}

/* The nodes: NODE, FILE and DIR arguments, then --slurm's list. 0 or -errno (printed). */
static int fleet_members(struct fleet_args *a, int n, char **args)
{
	struct fleet_run *fr = &a->fr;
	const char *scheme = client_opts_scheme(&a->client);

	for (int i = 0; i < n; i++) {
		int r = is_path(args[i]) ? add_path(fr, args[i])
					 : add_hosts(fr, args[i], scheme, a->port);

		if (r)
			return r;
	}
	if (a->slurm) {
		const char *nl = getenv("SLURM_JOB_NODELIST");

		if (!nl || !*nl)
			nl = getenv("SLURM_NODELIST");
		if (!nl || !*nl) {
			fprintf(stderr, "rocewatch fleet: --slurm: SLURM_JOB_NODELIST is not set "
					"(run it from PrologSlurmctld, salloc or sbatch)\n");
			return -EINVAL;
		}
		if (add_hosts(fr, nl, scheme, a->port))
			return -EINVAL;
	}
	if (a->client.po.job && job_members(a))
		return -EINVAL;
	if (!fr->n) {
		fprintf(stderr, "rocewatch fleet: no nodes given (NODE, FILE, DIR or --slurm; see "
				"--help)\n");
		return -EINVAL;
	}
	return 0;
}

/* Does the environment hold any NCCL_* variable (the job's, when run inside it)? */
static bool environ_has_nccl(void)
{
	for (char **p = environ; p && *p; p++)
		if (!strncmp(*p, "NCCL_", 5))
			return true;
	return false;
}

/*
 * The job's NCCL settings: --nccl-env FILE, or with --slurm the NCCL_*
 * variables of this environment when it has any (fleet check run inside the
 * job's allocation sees the job's environment; a PrologSlurmctld is given
 * none of it, and then no job is judged rather than NCCL's defaults).
 * 0, or -errno after one line.
 */
static int load_job(struct fleet_args *a)
{
	char err[512] = "";
	int r = 0;

	if (!a->nccl_file && !(a->slurm && environ_has_nccl()))
		return 0;
	a->fr.job = calloc(1, sizeof(*a->fr.job));
	if (!a->fr.job) {
		fprintf(stderr, "rocewatch fleet: out of memory\n");
		return -ENOMEM;
	}
	if (a->nccl_file) {
		a->fr.job_from = a->nccl_file;
		r = nccl_env_read_file(a->fr.job, a->nccl_file, err, sizeof(err));
	} else {
		a->fr.job_from = "the environment";
		r = nccl_env_from_environ(a->fr.job, environ);
		if (r)
			snprintf(err, sizeof(err), "%s", strerror(-r));
	}
	if (r)
		fprintf(stderr, "rocewatch fleet: --nccl-env %s\n", err);
	return r;
}

/*
 * Where the fleet rules are compared: on the engine with --job (counts
 * only), unless --prometheus.compare client, or the check needs each node's
 * facts (--profile, --nccl-env) or has nodes from elsewhere.  0 or -EINVAL.
 */
static int choose_compare(struct fleet_args *a)
{
	struct fleet_run *fr = &a->fr;
	/*
	 * engine with --job unless asked otherwise: the nodes' fleet digests
	 * tell the ones alike, each kind fetched once (fleet_share.c); without
	 * digests (an older serve), the rules the engine can count are counted
	 * there (docs/fleet.md, "Comparing on the engine")
	 */
	bool engine = a->compare ? !strcmp(a->compare, "engine") : a->client.po.job != NULL;

	if (!a->client.po.job || !engine) {
		if (engine) {
			fprintf(stderr, "rocewatch fleet: --prometheus.compare engine: the engine "
					"counts a job's nodes: give --job ID\n");
			return -EINVAL;
		}
		return 0;
	}
	for (size_t i = 0; i < fr->n; i++)
		if (fr->nodes[i].src != FSRC_PROMETHEUS && fr->nodes[i].src != FSRC_JOB_LIST)
			engine = false;
	if (fr->per_node || fr->job) {
		if (a->compare)
			fprintf(stderr,
				"rocewatch fleet: %s needs each node's facts: compared "
				"here, not on the engine\n",
				fr->job ? "--nccl-env" : "--profile");
		engine = false;
	}
	fr->engine = engine;
	return 0;
}

/* --report-file: a log kept beside another format; not written is no verdict (UNKNOWN). */
static int write_report_file(const struct fleet_run *fr)
{
	FILE *f = cli_open_output("fleet", fr->report_file);

	if (!f)
		return -EIO;
	fleet_report_text(fr, f);
	return cli_close_output("fleet", fr->report_file, f);
}

/* Gather every node, evaluate, report: the exit status. */
static int fleet_check_run(struct fleet_run *fr, const struct client_opts *co)
{
	bool used[F__COUNT];
	struct pool pool;
	int rc, r;

	fr->started_ns = real_ns();
	/* a snapshot is read for the fields the rules read, not parsed whole */
	fields_used(fr, used);
	fr->keep = snapshot_keep_new(used);
	if (!fr->keep)
		goto nomem;
	/* each node's model goes through the rules as it comes, then is dropped */
	if (rules_fleet_begin(fr->e, fr->started_ns))
		goto nomem;
	pool_start(&pool, fr);
	/* a transfer failure is each node's own outcome: only running out of memory stops us */
	r = gather_files(fr, &pool);
	if (!r && gather_http(fr, &co->ho, &pool) == -ENOMEM)
		r = -ENOMEM;
	pool_finish(&pool);
	if (r || fr->oom)
		goto nomem;
	if (fr->engine) {
		bool left[F__COUNT], fetch = false, done = false;

		/* nodes alike fetched once; else the rules the engine can count, counted there */
		if (fleet_share_run(fr, co, used, &done))
			goto nomem;
		if (!done && (compare_on_engine(fr, co, left, &fetch) ||
			      (fetch ? gather_prometheus(fr, co, left) : engine_answered(fr, co)) ==
				  -ENOMEM))
			goto nomem;
	} else if (gather_prometheus(fr, co, NULL) == -ENOMEM) {
		goto nomem;
	}
	name_files(fr);
	fr->gathered_ns = real_ns();

	fr->fnodes = calloc(fr->n, sizeof(*fr->fnodes));
	if (!fr->fnodes)
		goto nomem;
	for (size_t i = 0; i < fr->n; i++) {
		fr->fnodes[i].name = fr->nodes[i].name;
		fr->fnodes[i].m = NULL; /* freed as it was evaluated */
		fr->fnodes[i].outcome = fr->nodes[i].outcome;
	}
	if (rules_fleet_finish(fr->e, fr->fnodes, fr->n))
		goto nomem;
	fr->status = fleet_verdict(fr);
	rc = (int)fr->status;
	/*
	 * The file first: with `-` the reason line is then the last line of all,
	 * and a log that could not be written leaves no verdict on stdout that
	 * the exit status contradicts.
	 */
	if (fr->report_file && write_report_file(fr))
		return RULES_UNKNOWN;
	switch (fr->format) {
	case FLEET_FMT_TEXT:
		r = fleet_report_text(fr, stdout);
		break;
	case FLEET_FMT_JSON:
		r = fleet_report_json(fr);
		break;
	default:
		r = fleet_report_reason(fr);
		break;
	}
	if (r == -ENOMEM)
		goto nomem;
	if (r || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rocewatch fleet: writing the report: %s\n", strerror(errno));
		rc = RULES_UNKNOWN;
	}
	return rc;
nomem:
	fprintf(stderr, "rocewatch fleet: out of memory\n");
	return RULES_UNKNOWN;
}

int cmd_fleet_check(int argc, char **argv)
{
	struct fleet_args a = {
		.fr = { .max_names = 10, .max_bytes = 1024, .color = TERM_COLOR_AUTO },
		.port = FLEET_DEFAULT_PORT
	};
	int rc = RULES_UNKNOWN, r, first;

	client_opts_init(&a.client, "fleet");
	r = cli_parse(&fleet_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	if (r)
		goto out;
	if (client_opts_finish(&a.client) || load_rules(&a.fr, &a.rules.spec, a.rules.n_fleet) ||
	    load_job(&a) || fleet_members(&a, argc - first, argv + first) || choose_compare(&a))
		goto out;
	rc = fleet_check_run(&a.fr, &a.client);
out:
	run_free(&a.fr);
	rules_spec_free(&a.rules.spec);
	client_opts_free(&a.client);
	return rc;
}
