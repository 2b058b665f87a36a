// SPDX-License-Identifier: MIT
/*
 * fleet check --job on the engine: nodes alike, fetched once (issue 38).
 *
 * Every serve exports the digest of the facts fleet rules compare
 * (roce_fleet_digest_info, src/core/fleet_digest.h).  One query asks the
 * engine for each of the job's nodes' digest (8 000 series, not the million
 * the rules read); nodes of one digest form a group, and of each group one
 * node, its representative, is fetched as the client fetches any node.  Its
 * digest is computed again from what came back: when it is the group's, its
 * model goes through the rules once for each node of the group, under that
 * node's name; when not (another rocewatch, a relabelled series), the group's
 * nodes are fetched one by one.  Nodes without a digest, alone with theirs,
 * or of two digests (HA replicas that disagree) are fetched as before.  The
 * verdict is the client's by construction: the rules see the same models.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fleet.h"
#include "fleet_digest.h"
#include "fleet_prom.h"
#include "fleet_share.h"
#include "util.h"

/* Groups kept at once: each holds its representative's model (over 100 KiB) until the end. */
#define SHARE_GROUPS_MAX 64

struct fleet_share {
	char digest[FLEET_DIGEST_HEX + 1];
	size_t rep;	      /* index into fr->nodes */
	size_t members;	      /* with the representative */
	struct node_model *m; /* the representative's, once fetched */
	bool ok;	      /* its digest is the group's */
};

/* Can the rules be told a node by another's model?  Only if they read what the digest covers. */
static bool share_fits(struct fleet_run *fr, const bool used[F__COUNT])
{
	size_t nr = rules_fleet_count(fr->e);

	for (int id = 0; id < F__COUNT; id++)
		if (used[id] && fields[id].metric && fields[id].mtype != MT_NONE &&
		    !fleet_digest_field(id))
			return false;
	for (size_t k = 0; k < nr; k++)
		if (!rules_fleet_rdma_netdevs(fr->e, k))
			return false;
	return true;
}

struct share_row {
	const char *digest;
	size_t node; /* index into fr->nodes */
};

static int row_cmp(const void *a, const void *b)
{
	const struct share_row *x = a, *y = b;
	int c = strcmp(x->digest, y->digest);

	return c ? c : x->node < y->node ? -1 : x->node > y->node;
}

static int digest_by_instance(const void *a, const void *b)
{
	return strcmp(((const struct fleet_prom_digest *)a)->instance,
		      ((const struct fleet_prom_digest *)b)->instance);
}

/*
 * Each node's one digest into rows (a node of none or of two has no row):
 * how many rows.  d is sorted by instance on return.
 */
static size_t node_rows(struct fleet_run *fr, struct fleet_prom_digest *d, size_t nd,
			struct share_row *rows)
{
	size_t n = 0;

	qsort(d, nd, sizeof(*d), digest_by_instance);
	for (size_t i = 0; i < fr->n; i++) {
		struct fleet_prom_digest key, *hit;

		if (fr->nodes[i].src != FSRC_PROMETHEUS)
			continue;
		strlcpy0(key.instance, fr->nodes[i].name, sizeof(key.instance));
		hit = bsearch(&key, d, nd, sizeof(*d), digest_by_instance);
		if (!hit)
			continue;
		/* two digests for one instance: replicas disagree, its own series decide */
		if ((hit > d && !strcmp(hit[-1].instance, hit->instance)) ||
		    (hit + 1 < d + nd && !strcmp(hit[1].instance, hit->instance)))
			continue;
		rows[n].digest = hit->digest;
		rows[n++].node = i;
	}
	return n;
}

static int group_size_cmp(const void *a, const void *b)
{
	const struct fleet_share *x = a, *y = b;

	return x->members < y->members ? 1 : x->members > y->members ? -1 : 0;
}

/* The groups of ≥ 2 nodes (the largest SHARE_GROUPS_MAX) into fr->share, members marked. */
static int make_groups(struct fleet_run *fr, struct share_row *rows, size_t n)
{
	struct fleet_share *g = NULL;
	size_t ng = 0, cap = 0;

	qsort(rows, n, sizeof(*rows), row_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && !strcmp(rows[j].digest, rows[i].digest))
			j++;
		if (j - i >= 2) {
			if (array_grow(&g, &cap, ng, sizeof(*g), 8)) {
				free(g);
				return -ENOMEM;
			}
			memset(&g[ng], 0, sizeof(g[ng]));
			strlcpy0(g[ng].digest, rows[i].digest, sizeof(g[ng].digest));
			g[ng].rep = rows[i].node; /* the first of the job's order */
			g[ng].members = j - i;
			ng++;
		}
		i = j;
	}
	if (ng > SHARE_GROUPS_MAX) {
		qsort(g, ng, sizeof(*g), group_size_cmp);
		ng = SHARE_GROUPS_MAX;
	}
	fr->share = g;
	fr->n_share = ng;
	/* rows are in digest order: each group's rows are one run */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ng; k++)
			if (!strcmp(rows[i].digest, g[k].digest)) {
				fr->nodes[rows[i].node].share = k + 1;
				break;
			}
	for (size_t k = 0; k < ng; k++)
		fr->nodes[g[k].rep].share_rep = true;
	return 0;
}

void fleet_share_keep(struct fleet_run *fr, struct fleet_member *nm, struct node_model *m)
{
	struct fleet_share *g = &fr->share[nm->share - 1];
	char digest[FLEET_DIGEST_HEX + 1];

	g->m = m;
	g->ok = !fleet_digest(m, digest) && !strcmp(digest, g->digest);
}

/* The group's other nodes through the rules with its representative's model, evaluated once. */
static int spread(struct fleet_run *fr, size_t k)
{
	struct fleet_share *g = &fr->share[k];
	struct fleet_node fn = { .m = g->m };
	size_t *idx = calloc(g->members, sizeof(*idx)), n = 0;
	int r;

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < fr->n && n < g->members; i++) {
		struct fleet_member *nm = &fr->nodes[i];

		if (nm->share != k + 1 || nm->share_rep)
			continue;
		free(nm->where);
		nm->where = strdup(nm->name);
		if (!nm->where) {
			free(idx);
			return -ENOMEM;
		}
		/* its own instance, as the client names a node it fetched */
		strlcpy0(nm->host, nm->name, sizeof(nm->host));
		nm->answered = nm->gathered = true;
		idx[n++] = i;
	}
	fn.name = n ? fr->nodes[idx[0]].name : NULL;
	r = rules_fleet_add_alike(fr->e, idx, n, &fn);
	fr->shared += n;
	free(idx);
	return r;
}

/* A group whose representative did not stand: each of its nodes is fetched on its own. */
static void unshare(struct fleet_run *fr, size_t k)
{
	for (size_t i = 0; i < fr->n; i++)
		if (fr->nodes[i].share == k + 1)
			fr->nodes[i].share = 0;
}

int fleet_share_run(struct fleet_run *fr, const struct client_opts *co, const bool used[F__COUNT],
		    bool *done)
{
	struct fleet_prom_digest *d = NULL;
	struct share_row *rows = NULL;
	bool want[F__COUNT];
	size_t nd = 0, again = 0;
	char err[640] = "";
	int r;

	*done = false;
	if (!share_fits(fr, used))
		return 0;
	r = fleet_prom_digests(fr->prometheus, &co->prom_ho, co->po.job, &d, &nd, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r || !nd) {
		if (r)
			fprintf(stderr, "rocewatch fleet: %s: compared without them\n", err);
		free(d);
		return 0;
	}
	rows = calloc(fr->n ? fr->n : 1, sizeof(*rows));
	r = rows ? make_groups(fr, rows, node_rows(fr, d, nd, rows)) : -ENOMEM;
	free(rows);
	free(d);
	if (r || !fr->n_share)
		return r; /* no two alike (or older serves): the rules the engine can count, counted
			   */
	/* the representatives with every fact the digest covers, to compute it again */
	memcpy(want, used, sizeof(want));
	for (int id = 0; id < F__COUNT; id++)
		want[id] |=
		    fleet_digest_field(id) && fields[id].metric && fields[id].mtype != MT_NONE;
	r = fleet_gather_prometheus(fr, co, want);
	for (size_t k = 0; !r && k < fr->n_share; k++) {
		if (fr->share[k].m && fr->share[k].ok) {
			r = spread(fr, k);
			fr->shared_groups++;
		} else {
			unshare(fr, k);
			again++;
		}
	}
	if (!r && again) {
		fprintf(stderr,
			"rocewatch fleet: Prometheus %s: %zu group%s of nodes alike by their fleet "
			"digest: the node fetched for it holds other facts than its digest says "
			"(another rocewatch, relabelled series?): fetched one by one\n",
			fr->prometheus, again, again == 1 ? "" : "s");
		r = fleet_gather_prometheus(fr, co, want);
	}
	for (size_t k = 0; k < fr->n_share; k++)
		if (fr->share[k].m) {
			model_free(fr->share[k].m);
			free(fr->share[k].m);
			fr->share[k].m = NULL;
		}
	*done = !r;
	return r;
}

void fleet_share_free(struct fleet_run *fr)
{
	free(fr->share);
	fr->share = NULL;
	fr->n_share = 0;
}
