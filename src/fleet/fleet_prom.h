/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus path of fleet check: instant queries on rocewatch's own
 * metrics through the HTTP client (client.h), turned back into node models
 * through the field table.
 */
#ifndef ROCEWATCH_FLEET_PROM_H
#define ROCEWATCH_FLEET_PROM_H

#include <stdbool.h>
#include <stddef.h>

#include "client.h"
#include "model.h"

/*
 * How fleet check talks to a Prometheus-API engine (Prometheus, Thanos,
 * Mimir, VictoriaMetrics): the labels that tell HA replicas of one series
 * apart (--prometheus.replica-label), and the longest query text it sends
 * (--prometheus.max-query: VictoriaMetrics refuses one over
 * -search.maxQueryLen, 16 KiB by default).  Headers (tenant, bearer token)
 * travel in the client_http_opts.
 */
#define FLEET_PROM_REPLICA_MAX 8
struct fleet_prom_opts {
	const char *replica[FLEET_PROM_REPLICA_MAX];
	size_t n_replica;
	size_t max_query; /* bytes of PromQL text, default 16 KiB */
	const char *job;  /* --job ID: the nodes are roce_job_info{job_id="ID"}'s instances */
};

void fleet_prom_opts_defaults(struct fleet_prom_opts *po);

/* A node as seen through Prometheus. */
struct fleet_prom_node {
	const char *name;     /* in: host or host:port, matched against `instance` */
	struct node_model *m; /* in: model_init()ed; filled when found */
	bool found;	      /* out: series for it came back */
	char instance[128];   /* out: the instance label it matched */
	char err[384];	      /* out: why not found */
	/*
	 * out: series that repeated another with the same value (two scrape
	 * jobs, HA replicas), each taken once; note names the first
	 */
	unsigned repeats;
	char note[256];
	/* out: the same, from series that differ only by a replica label (expected: HA pairs) */
	unsigned replicas;
	/* out: not found, but its target is up: scraped, with none of the series asked for */
	bool scraped;
};

/* The values of the `instance` label Prometheus knows that belong to the nodes. */
struct fleet_prom_instances {
	size_t n;
	char **v;   /* into text */
	char *text; /* the values, one after the other */
	/*
	 * The engine said the list may be incomplete (a store or shard down:
	 * "warnings", VictoriaMetrics' "isPartial"): its first warning, printable;
	 * a node not in the list is UNKNOWN with it, not "no series"
	 */
	char warning[256];
};

/*
 * GET /api/v1/label/instance/values, read as it arrives, of which only the
 * values that belong to one of the names (as fleet_prom_gather() matches a
 * node: exactly, or host:port) are kept: 0; -EIO with err saying why when
 * asking the queries is no use: no answer at all (Prometheus is not there),
 * an answer that did not end within the timeout, or one larger than the
 * body cap ("the label values answer is larger than 64 MiB (--max-body)":
 * asked by pattern, Prometheus would try each of those instances on every
 * name); -EPROTO, -EINVAL or -ENOMEM with err saying why for anything else
 * (an error status, a body cut short or not a list: a Prometheus or proxy
 * without it; fleet_prom_gather() then matches instances by pattern).
 * A value longer than 4 KiB is no node's: skipped.
 */
int fleet_prom_instances_get(const char *base_url, const struct client_http_opts *o,
			     const char *const *names, size_t n_names,
			     struct fleet_prom_instances **out, char *err, size_t errlen);
/*
 * That answer's body, in pieces of piece bytes (0: all at once), keeping
 * the values of names (NULL: all): 0, -EINVAL (not a success list of
 * strings) or -ENOMEM.
 */
int fleet_prom_instances_parse(const char *body, size_t len, size_t piece, const char *const *names,
			       size_t n_names, struct fleet_prom_instances **out);
void fleet_prom_instances_free(struct fleet_prom_instances *in);
/*
 * The instances of the nodes running job (`group by (instance)
 * (roce_job_info{job_id="JOB"})`), or with down those of them whose target
 * is down (up == 0): 0 with *out (none: err says so, and why that may be;
 * a partial answer: (*out)->warning), or -EIO / -ENOMEM with err saying why.
 */
int fleet_prom_job_nodes(const char *base_url, const struct client_http_opts *o, const char *job,
			 bool down, struct fleet_prom_instances **out, char *err, size_t errlen);
/*
 * The fleet digest (roce_fleet_digest_info, of this rocewatch's schema) of
 * each node running job but those whose target is down: *out (free()) of
 * *n_out instance and digest pairs; a node of two digests (HA replicas that
 * disagree) is there twice, one without is not there.  0, or -EIO with err
 * saying why (no answer, a partial one), -ENOMEM.
 */
struct fleet_prom_digest {
	char instance[128];
	char digest[17];
};
int fleet_prom_digests(const char *base_url, const struct client_http_opts *o, const char *job,
		       struct fleet_prom_digest **out, size_t *n_out, char *err, size_t errlen);
/* Exactly these instances (--job: the ones roce_job_info names): 0 or -ENOMEM. */
int fleet_prom_instances_from(const char *const *v, size_t n, struct fleet_prom_instances **out);

/*
 * Instant queries on rocewatch's metrics in the Prometheus at base_url for
 * the given nodes, one query per metric that the fields in used[] need
 * (a priority set's or DSCP map's compact metric, and for nodes without it
 * the per-element one, encoded); builds each node's model from its series
 * (fields without a series are absent, not_collected).  known: the
 * instances fleet_prom_instances_get() listed, or NULL.  0, or
 * -EIO/-EINVAL with err saying why (then no node is found).
 */
int fleet_prom_gather(const char *base_url, const struct client_http_opts *o,
		      const struct fleet_prom_opts *po, const struct fleet_prom_instances *known,
		      const bool used[F__COUNT], struct fleet_prom_node *nodes, size_t n, char *err,
		      size_t errlen);
/*
 * Fleet rules counted on the engine (fleet_count.c): for each rule, how many
 * units of the job's nodes hold each value, by how many units a node has of
 * it (rows: value, units a node has, nodes that have that many), asked by
 * max and, for a sample value, by min over each unit's series (they differ
 * when HA replicas disagree); and for all rules, how many units of each kind
 * the job's nodes have as the client would see them from the same metrics.
 */
#define FLEET_PROM_ROWS_MAX 32
struct fleet_prom_row {
	char value[96]; /* the sample value or the label's text, as the engine sent it */
	size_t per_node, nodes;
};
struct fleet_prom_rows {
	size_t n;
	bool more; /* past FLEET_PROM_ROWS_MAX, or a value too long to keep: not counted */
	struct fleet_prom_row row[FLEET_PROM_ROWS_MAX];
};
struct fleet_prom_count {
	/* in: the value, and the guard: netdevs an RDMA port is bound to, a series of a row */
	int field;
	bool rdma;
	int guard_field; /* -1: none */
	/* out */
	bool asked, agree; /* agree: by max and by min the same */
	struct fleet_prom_rows by_max, by_min;
};
struct fleet_prom_totals {
	bool ok;
	size_t nodes;		    /* of the job, not down */
	size_t objects[OBJ__COUNT]; /* netdevs, RDMA ports (of the metrics in used[]) */
	size_t rdma;		    /* netdevs an RDMA port is bound to */
};
/* Can a rule whose value is this field be counted (one exported number or text)? */
bool fleet_prom_countable(int field);
/*
 * Ask the engine (po->job set: the job's nodes) for the counts of c[0..n)
 * and the totals; used[] the fields the client would read (the kinds' units
 * are the objects of their metrics).  0; -EIO with err saying why (an answer
 * that is not one, a partial one); -E2BIG, -ENOMEM.
 */
int fleet_prom_count(const char *base_url, const struct client_http_opts *o,
		     const struct fleet_prom_opts *po, const bool used[F__COUNT],
		     struct fleet_prom_count *c, size_t n, struct fleet_prom_totals *t, char *err,
		     size_t errlen);
/*
 * A model m (model_init()ed) holding value (as the engine sent it: a sample
 * or a label's text) in field, read as fleet_prom_read() reads a series; *o
 * the object that holds it.  0, or -errno with err saying why.
 */
int fleet_prom_value_model(int field, const char *value, struct node_model *m, struct object **o,
			   char *err, size_t errlen);

/*
 * What a round of nodes costs in query text (--prometheus.max-query):
 * the longest query fleet_prom_gather() may send for the fields in used[]
 * without any instance in it (with job: joined on the job's nodes), and
 * per node what its instances add to it (cost[i], bytes, its '|' too).
 * The overhead is SIZE_MAX when out of memory; the costs 0 or -ENOMEM.
 */
size_t fleet_prom_overhead(const bool used[F__COUNT], const char *job);
int fleet_prom_costs(const struct fleet_prom_instances *known, const char *const *names, size_t n,
		     size_t *cost);
/*
 * One answer of Prometheus's /api/v1/query (len bytes at body, not
 * necessarily terminated) to the query for metric, read into the nodes as
 * fleet_prom_gather() reads each answer it gets (a DSCP map's or priority
 * set's metric in the encoded form it asks for), handed over piece bytes at
 * a time as a transfer hands them (0: all at once): 0, or -EINVAL (not an
 * answer, or past a bound on what one series may hold) or -ERANGE (a number
 * the encoding cannot give) with err naming the query and what is wrong.
 * For the fuzz harness and tests.
 */
int fleet_prom_read(const char *metric, const char *body, size_t len, size_t piece,
		    struct fleet_prom_node *nodes, size_t n, char *err, size_t errlen);

#endif
