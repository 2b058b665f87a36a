// SPDX-License-Identifier: MIT
/*
 * Fleet rules: one value compared across the nodes of a set.  A rule's
 * units are the objects of its `each` kind on every node that answered
 * (those for which `when` holds); each unit's value is its subject (the
 * argument of distinct/majority/outliers) evaluated on that object.  Units
 * are split into groups (`by: rail` or `by: device`), and the rule's
 * expression is evaluated once per group over the group's aggregates.
 *
 * The majority is the value held by the most units, when exactly one value
 * has that count; a tie has no majority, so no side is presumed right and
 * every unit is an outlier.  Aggregates see the units whose value is known:
 * a rule that fails on them fails, one that holds on them is unknown (not a
 * pass) while any unit of the group is unknown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"
#include "util.h"

/* A value of a group while it is being built. */
struct gval {
	struct fleet_value fv;
	size_t cap;
	struct val rep; /* the first unit's value: majority() returns it */
	size_t rep_node;
	size_t last_node;
	/* what rep points at, copied: the node model it came from may be freed */
	char *s;
	int8_t dscp[RW_DSCP_COUNT];
	struct gid_table gids;
	struct pci_pairs pairs;
	bool counted; /* its units counted by an engine, none named (rules_fleet_add_counted) */
};

struct group {
	char key[RW_NAME_MAX + 8];
	struct gval *vals;
	size_t n_vals, cap_vals;
	struct fleet_unknown *unknown;
	size_t n_unknown, cap_unknown;
	size_t n_units, n_nodes, last_node, units_of_last;
	bool per_node;
	size_t first_node; /* where its first unit was: groups are listed in that order */
	unsigned int first_seq;
};

/* One fleet rule while nodes are added (rules_fleet_add): its groups so far. */
struct fleet_acc {
	const struct rrule *r;
	struct slot_state st;
	bool st_ok;
	bool told; /* its units come from an engine (rules_fleet_tell) */
	struct group *gs;
	size_t ng, capg;
	size_t unit_nodes; /* nodes with a unit of the rule in any group: fleet_nodes() */
};

static void free_result(struct fleet_result *x)
{
	for (size_t i = 0; i < x->n_values; i++)
		free(x->values[i].units);
	free(x->values);
	free(x->unknown);
}

static void acc_free(struct rules_engine *e);

void rx_fleet_free(struct rules_engine *e)
{
	acc_free(e);
	for (size_t i = 0; i < e->n_fres; i++)
		free_result(&e->fres[i]);
	free(e->fres);
	e->fres = NULL;
	e->n_fres = 0;
	for (size_t i = 0; i < e->n_fleet_objs; i++)
		free(e->fleet_objs[i]);
	free(e->fleet_objs);
	e->fleet_objs = NULL;
	e->n_fleet_objs = e->cap_fleet_objs = 0;
	strmap_free(&e->fleet_obj_index);
}

/* The engine's one copy of an object name (a unit points to it), or NULL out of memory. */
static const char *obj_name(struct rules_engine *e, const char *name)
{
	int64_t i = strmap_get(&e->fleet_obj_index, name);
	char *c;

	if (i >= 0)
		return e->fleet_objs[i];
	if (array_grow(&e->fleet_objs, &e->cap_fleet_objs, e->n_fleet_objs, sizeof(*e->fleet_objs),
		       16))
		return NULL;
	c = strdup(name);
	if (!c || strmap_put(&e->fleet_obj_index, c, (int64_t)e->n_fleet_objs)) {
		free(c);
		return NULL;
	}
	e->fleet_objs[e->n_fleet_objs++] = c;
	return c;
}

static void rep_free(struct gval *gv)
{
	free(gv->s);
	free(gv->gids.e);
	free(gv->pairs.e);
	gv->s = NULL;
	gv->gids.e = NULL;
	gv->pairs.e = NULL;
}

/* Make v the value's representative, with what it points at copied. */
static int keep_rep(struct gval *gv, const struct val *v, enum rtype t, size_t node)
{
	rep_free(gv);
	gv->rep = *v;
	gv->rep_node = node;
	switch (t) {
	case RT_STR:
		gv->s = strdup(v->v.s ? v->v.s : "");
		if (!gv->s)
			return -ENOMEM;
		gv->rep.v.s = gv->s;
		break;
	case RT_DSCPMAP:
		if (v->v.dscp) {
			memcpy(gv->dscp, v->v.dscp, sizeof(gv->dscp));
			gv->rep.v.dscp = gv->dscp;
		}
		break;
	case RT_GIDS:
		if (v->v.gids) {
			gv->gids.n = gv->gids.cap = v->v.gids->n;
			gv->gids.e = malloc((gv->gids.n ? gv->gids.n : 1) * sizeof(*gv->gids.e));
			if (!gv->gids.e)
				return -ENOMEM;
			if (gv->gids.n)
				memcpy(gv->gids.e, v->v.gids->e, gv->gids.n * sizeof(*gv->gids.e));
			gv->rep.v.gids = &gv->gids;
		}
		break;
	case RT_PAIRS:
		if (v->v.pairs) {
			gv->pairs.n = gv->pairs.cap = v->v.pairs->n;
			gv->pairs.e =
			    malloc((gv->pairs.n ? gv->pairs.n : 1) * sizeof(*gv->pairs.e));
			if (!gv->pairs.e)
				return -ENOMEM;
			if (gv->pairs.n)
				memcpy(gv->pairs.e, v->v.pairs->e,
				       gv->pairs.n * sizeof(*gv->pairs.e));
			gv->rep.v.pairs = &gv->pairs;
		}
		break;
	default:
		break;
	}
	return 0;
}

/*
 * gv's representative, pointing at gv's own copies: keep_rep() pointed it at
 * them, but a gval moves after that (the array grows, qsort orders it).
 */
static struct val rep_of(const struct gval *gv, enum rtype t)
{
	struct val v = gv->rep;

	if (t == RT_DSCPMAP && v.v.dscp)
		v.v.dscp = gv->dscp;
	else if (t == RT_GIDS && v.v.gids)
		v.v.gids = &gv->gids;
	else if (t == RT_PAIRS && v.v.pairs)
		v.v.pairs = &gv->pairs;
	return v;
}

static void free_groups(struct group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < g[i].n_vals; j++) {
			free(g[i].vals[j].fv.units);
			rep_free(&g[i].vals[j]);
		}
		free(g[i].vals);
		free(g[i].unknown);
	}
	free(g);
}

static struct group *find_group(struct group **gs, size_t *n, size_t *cap, const char *key,
				size_t node, unsigned int seq)
{
	struct group *g;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*gs)[i].key, key))
			return &(*gs)[i];
	if (array_grow(gs, cap, *n, sizeof(**gs), 4))
		return NULL;
	g = &(*gs)[(*n)++];
	memset(g, 0, sizeof(*g));
	strlcpy0(g->key, key, sizeof(g->key));
	g->per_node = true;
	g->last_node = SIZE_MAX;
	g->first_node = node;
	g->first_seq = seq;
	return g;
}

/* Count the unit in its group: nodes, and whether a node has more than one. */
static void count_unit(struct group *g, size_t node)
{
	g->n_units++;
	if (node != g->last_node) {
		g->last_node = node;
		g->units_of_last = 0;
		g->n_nodes++;
	}
	if (++g->units_of_last > 1)
		g->per_node = false;
}

static int add_unknown(struct group *g, size_t node, unsigned int seq, const char *obj,
		       bool unsupported, const char *reason)
{
	struct fleet_unknown *u;

	if (array_grow(&g->unknown, &g->cap_unknown, g->n_unknown, sizeof(*g->unknown), 4))
		return -ENOMEM;
	u = &g->unknown[g->n_unknown++];
	u->u.node = (uint32_t)node;
	u->u.seq = seq;
	u->u.object = obj;
	strlcpy0(u->reason, reason, sizeof(u->reason));
	u->unsupported = unsupported;
	count_unit(g, node);
	return 0;
}

/* A value as summaries print it: strings quoted, so "" and "a, b" read as one value each. */
static void value_text(char text[FLEET_VALUE_MAX], const struct val *v, enum rtype t)
{
	struct tbuf tb = { text, 0, FLEET_VALUE_MAX };

	text[0] = '\0';
	if (t == RT_STR)
		tb_printf(&tb, "\"%s\"", v->v.s);
	else
		rx_format_val(&tb, v, t);
}

/* A group's new distinct value, node its first holder; NULL: out of memory. */
static struct gval *new_value(struct group *g, const char text[FLEET_VALUE_MAX],
			      const struct val *v, enum rtype t, size_t node)
{
	struct gval *gv;

	if (array_grow(&g->vals, &g->cap_vals, g->n_vals, sizeof(*g->vals), 4))
		return NULL;
	gv = &g->vals[g->n_vals++];
	memset(gv, 0, sizeof(*gv));
	memcpy(gv->fv.text, text, FLEET_VALUE_MAX);
	gv->last_node = SIZE_MAX;
	return keep_rep(gv, v, t, node) ? NULL : gv;
}

/* One more unit of value gv, on node. */
static int add_unit(struct group *g, struct gval *gv, size_t node, unsigned int seq,
		    const char *obj)
{
	struct fleet_unit *u;

	if (array_grow(&gv->fv.units, &gv->cap, gv->fv.n_units, sizeof(*gv->fv.units), 4))
		return -ENOMEM;
	u = &gv->fv.units[gv->fv.n_units++];
	u->node = (uint32_t)node;
	u->seq = seq;
	u->object = obj;
	if (node != gv->last_node) {
		gv->last_node = node;
		gv->fv.n_nodes++;
	}
	count_unit(g, node);
	return 0;
}

/* A unit holding v on node, under its value's entry (*at: that entry's index). */
static int add_value(struct group *g, size_t node, unsigned int seq, const char *obj,
		     const struct val *v, enum rtype t, size_t *at)
{
	char text[FLEET_VALUE_MAX];
	struct gval *gv = NULL;

	value_text(text, v, t);
	for (size_t i = 0; i < g->n_vals && !gv; i++)
		if (!strcmp(g->vals[i].fv.text, text))
			gv = &g->vals[i];
	if (!gv) {
		gv = new_value(g, text, v, t, node);
		if (!gv)
			return -ENOMEM;
	} else if (node < gv->rep_node && keep_rep(gv, v, t, node)) {
		/* nodes may come in any order: the first node's value represents it */
		return -ENOMEM;
	}
	*at = (size_t)(gv - g->vals);
	return add_unit(g, gv, node, seq, obj);
}

/*
 * What one unit of a rule came to on a node, to be given to nodes alike
 * (rules_fleet_add_alike()) without evaluating it again: its group and value
 * entry (val SIZE_MAX: unknown, why saying so).
 */
struct unit_seen {
	size_t group, val;
	unsigned int seq;
	const char *obj;
	bool unsupported;
	char why[RULE_REASON_MAX];
};

/* The rail a port's facts name (fabric.c), or NULL: then its position stands in. */
static const char *rail_of(const struct object *o)
{
	if (o->kind != OBJ_RDMA_PORT || o->f[F_PORT_RAIL].state != ABS_NONE ||
	    !o->f[F_PORT_RAIL].v.s[0])
		return NULL;
	return o->f[F_PORT_RAIL].v.s;
}

/* Every unit of rule r on node ni (which answered), into its group. */
static int gather_node(struct rules_engine *e, struct fleet_acc *fa, size_t ni,
		       const struct fleet_node *fn, struct unit_seen *seen, size_t *n_seen)
{
	const struct rrule *r = fa->r;
	const struct node_model *m = fn->m;
	struct object *const *objs = NULL;
	const struct object *node_obj = &m->node;
	size_t nobj, rail = 0;
	bool any = false;

	nobj = r->info.scope == OBJ_NODE
		   ? 1
		   : model_objects((struct node_model *)m, r->info.scope, (struct object ***)&objs);
	for (size_t oi = 0; oi < nobj; oi++) {
		const struct object *o = objs ? objs[oi] : node_obj;
		struct ectx cx = {
			.m = m, .obj = o, .st = &fa->st, .t = e->fleet_t, .outcome = fn->outcome
		};
		char name[FLEET_OBJECT_MAX], key[RW_NAME_MAX + 8] = "", why[RULE_REASON_MAX];
		const char *obj;
		struct tbuf tb = { why, 0, sizeof(why) };
		unsigned int seq = (unsigned int)oi;
		struct group *g;
		struct val v = { .st = V_OK, .v.b = true };
		size_t at = SIZE_MAX;

		why[0] = '\0';
		if (r->when)
			v = rx_eval(r->when, &cx);
		if (v.st == V_OK && !v.v.b)
			continue; /* not a unit of this rule */
		object_unit_name(o, name, sizeof(name));
		obj = obj_name(e, name);
		if (!obj)
			return -ENOMEM;
		/*
		 * Like with like: without `by`, the same position on every node
		 * (four identical nodes with the same unused second port agree)
		 */
		if (r->info.by == FLEET_BY_RAIL && rail_of(o))
			snprintf(key, sizeof(key), "rail %s", rail_of(o)), rail++;
		else if (r->info.by == FLEET_BY_RAIL || r->info.by == FLEET_BY_POSITION ||
			 (r->info.by == FLEET_BY_NONE && r->info.scope != OBJ_NODE))
			snprintf(key, sizeof(key), "%s %zu",
				 r->info.by == FLEET_BY_POSITION ? "position" : "rail", rail++);
		else if (r->info.by == FLEET_BY_DEVICE)
			snprintf(key, sizeof(key), "%s", o->name);
		g = find_group(&fa->gs, &fa->ng, &fa->capg, key, ni, seq);
		if (!g)
			return -ENOMEM;
		if (!any)
			fa->unit_nodes++;
		any = true;
		if (v.st == V_OK)
			v = rx_eval(r->subject, &cx);
		if (v.st != V_OK) {
			bool unsup = v.st == V_ABSENT && v.why == ABS_UNSUPPORTED;

			rx_format_unknown(&tb, &v);
			if (add_unknown(g, ni, seq, obj, unsup, why))
				return -ENOMEM;
			at = SIZE_MAX;
			if (seen) {
				seen[*n_seen].unsupported = unsup;
				strlcpy0(seen[*n_seen].why, why, sizeof(seen[*n_seen].why));
			}
		} else if (add_value(g, ni, seq, obj, &v, r->subject->type, &at)) {
			return -ENOMEM;
		}
		if (seen) {
			seen[*n_seen].group = (size_t)(g - fa->gs);
			seen[*n_seen].val = at;
			seen[*n_seen].seq = seq;
			seen[(*n_seen)++].obj = obj;
		}
	}
	return 0;
}

/*
 * Room for the units of more nodes alike, exactly: a fleet of 32 000 holds
 * millions of units, and doubling would leave up to half of it unused.
 */
static int reserve_seen(struct fleet_acc *fa, const struct unit_seen *s, size_t n, size_t more)
{
	for (size_t i = 0; i < n; i++) {
		struct group *g = &fa->gs[s[i].group];
		size_t same = 0;

		for (size_t j = 0; j < n; j++)
			same += s[j].group == s[i].group && s[j].val == s[i].val;
		if (s[i].val == SIZE_MAX) {
			size_t want = g->n_unknown + same * more;

			if (g->cap_unknown < want) {
				if (array_resize(&g->unknown, want, sizeof(*g->unknown)))
					return -ENOMEM;
				g->cap_unknown = want;
			}
		} else {
			struct gval *gv = &g->vals[s[i].val];
			size_t want = gv->fv.n_units + same * more;

			if (gv->cap < want) {
				if (array_resize(&gv->fv.units, want, sizeof(*gv->fv.units)))
					return -ENOMEM;
				gv->cap = want;
			}
		}
	}
	return 0;
}

/* The units one node came to (gather_node()'s seen), on another node alike. */
static int add_seen(struct fleet_acc *fa, size_t ni, const struct unit_seen *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct group *g = &fa->gs[s[i].group];
		int r = s[i].val == SIZE_MAX
			    ? add_unknown(g, ni, s[i].seq, s[i].obj, s[i].unsupported, s[i].why)
			    : add_unit(g, &g->vals[s[i].val], ni, s[i].seq, s[i].obj);

		if (r)
			return r;
	}
	if (n)
		fa->unit_nodes++;
	return 0;
}

static int unit_cmp(const void *a, const void *b)
{
	const struct fleet_unit *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int unknown_cmp(const void *a, const void *b)
{
	return unit_cmp(&((const struct fleet_unknown *)a)->u,
			&((const struct fleet_unknown *)b)->u);
}

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->first_node != y->first_node)
		return x->first_node < y->first_node ? -1 : 1;
	return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

/* Units in node order, groups by their first unit: as if the nodes had come in order. */
static void order_groups(struct group *gs, size_t ng)
{
	if (ng > 1)
		qsort(gs, ng, sizeof(*gs), group_cmp);
	for (size_t i = 0; i < ng; i++) {
		struct group *g = &gs[i];

		for (size_t j = 0; j < g->n_vals; j++)
			if (g->vals[j].fv.n_units > 1 && !g->vals[j].counted)
				qsort(g->vals[j].fv.units, g->vals[j].fv.n_units,
				      sizeof(*g->vals[j].fv.units), unit_cmp);
		if (g->n_unknown > 1)
			qsort(g->unknown, g->n_unknown, sizeof(*g->unknown), unknown_cmp);
	}
}

static int gval_cmp(const void *a, const void *b)
{
	const struct gval *x = a, *y = b;

	if (x->fv.n_units != y->fv.n_units)
		return x->fv.n_units > y->fv.n_units ? -1 : 1;
	return strcmp(x->fv.text, y->fv.text);
}

static void unit_label(const struct fleet_result *x, const struct fleet_node *nodes,
		       const struct fleet_unit *u, char *buf, size_t len)
{
	if (x->per_node || !u->object[0])
		snprintf(buf, len, "%s", nodes[u->node].name);
	else
		snprintf(buf, len, "%s/%s", nodes[u->node].name, u->object);
}

/*
 * Every unit of x absent as not applicable, for the same reason: the nodes
 * do not differ.  An error or a permission is not a property of the port,
 * so it stays unknown.
 */
static bool unknown_alike(const struct fleet_result *x)
{
	for (size_t i = 0; i < x->n_unknown; i++)
		if (!x->unknown[i].unsupported ||
		    strcmp(x->unknown[i].reason, x->unknown[0].reason))
			return false;
	return x->n_unknown > 0;
}

/* Turn a built group into a result: sort, find the majority, evaluate. */
static int finish_group(const struct rrule *r, struct group *g, const struct fleet_node *nodes,
			size_t fleet_nodes, int64_t t, struct slot_state *st,
			struct fleet_result *x)
{
	struct fleet_agg agg = { 0 };
	struct ectx cx = { .st = st, .t = t, .agg = &agg };
	struct tbuf rb = { x->reason, 0, sizeof(x->reason) };
	size_t known = 0;
	struct val v;

	memset(x, 0, sizeof(*x));
	x->rule = &r->info;
	strlcpy0(x->group, g->key, sizeof(x->group));
	if (g->n_vals > 1) /* none at all when every unit is unknown (and qsort wants a base) */
		qsort(g->vals, g->n_vals, sizeof(*g->vals), gval_cmp);
	x->values = calloc(g->n_vals ? g->n_vals : 1, sizeof(*x->values));
	if (!x->values)
		return -ENOMEM;
	for (size_t i = 0; i < g->n_vals; i++) {
		x->values[i] = g->vals[i].fv;
		g->vals[i].fv.units = NULL; /* the result owns them now */
		known += x->values[i].n_units;
	}
	x->n_values = g->n_vals;
	x->unknown = g->unknown;
	x->n_unknown = g->n_unknown;
	g->unknown = NULL;
	x->n_units = g->n_units;
	x->n_nodes = g->n_nodes;
	x->per_node = g->per_node;
	x->dscp_map = r->subject->type == RT_DSCPMAP;
	x->majority = -1;
	if (g->n_vals == 1 || (g->n_vals > 1 && x->values[0].n_units > x->values[1].n_units))
		x->majority = 0;

	agg.distinct = g->n_vals;
	agg.nodes = g->n_nodes;
	agg.fleet_nodes = fleet_nodes;
	agg.outliers = known - (x->majority >= 0 ? x->values[0].n_units : 0);
	agg.have_majority = x->majority >= 0;
	if (agg.have_majority)
		agg.majority = rep_of(&g->vals[0], r->subject->type);

	v = rx_eval(r->expr, &cx);
	if (!known && unknown_alike(x)) {
		/*
		 * Unreadable the same way on every node that has it (a disabled
		 * port's PFC): the nodes do not differ, and there is nothing to
		 * compare; each node's own check judges the port.
		 */
		x->outcome = RULE_SKIP;
		tb_printf(&rb, "nothing to compare: %s on all %zu %s", x->unknown[0].reason,
			  x->n_units, x->per_node ? "nodes" : "units");
	} else if (!known) {
		char who[FLEET_OBJECT_MAX + RW_NAME_MAX + 2];

		x->outcome = RULE_UNKNOWN;
		unit_label(x, nodes, &x->unknown[0].u, who, sizeof(who));
		tb_printf(&rb, "no unit has a known value (%s: %s)", who, x->unknown[0].reason);
	} else if (v.st != V_OK) {
		x->outcome = RULE_UNKNOWN;
		rx_format_unknown(&rb, &v);
	} else if (!v.v.b) {
		x->outcome = RULE_FAIL;
	} else if (x->n_unknown) {
		char who[FLEET_OBJECT_MAX + RW_NAME_MAX + 2];

		/* what holds for the known values may not hold for the others */
		x->outcome = RULE_UNKNOWN;
		unit_label(x, nodes, &x->unknown[0].u, who, sizeof(who));
		tb_printf(&rb, "%zu of %zu unit%s unknown (%s: %s)", x->n_unknown, x->n_units,
			  x->n_units == 1 ? "" : "s", who, x->unknown[0].reason);
	} else {
		x->outcome = RULE_PASS;
	}
	if (r->summary.n)
		rx_render_template(&r->summary, "", &cx, x->summary, sizeof(x->summary));
	return 0;
}

static int push_result(struct rules_engine *e, size_t *cap, struct fleet_result **x)
{
	if (array_grow(&e->fres, cap, e->n_fres, sizeof(*e->fres), 16))
		return -ENOMEM;
	*x = &e->fres[e->n_fres++];
	memset(*x, 0, sizeof(**x));
	return 0;
}

/* The results of one rule, from its groups (every node added). */
static int finish_rule(struct rules_engine *e, struct fleet_acc *fa, const struct fleet_node *nodes)
{
	const struct rrule *r = fa->r;
	struct fleet_result *x;
	int ret = 0;

	order_groups(fa->gs, fa->ng);
	if (r->info.by == FLEET_BY_NONE && fa->ng == 1)
		fa->gs[0].key[0] = '\0'; /* one position: nothing to tell apart */
	for (size_t i = 0; !ret && i < fa->ng; i++) {
		ret = push_result(e, &e->cap_fres, &x);
		if (!ret)
			ret = finish_group(r, &fa->gs[i], nodes, fa->unit_nodes, e->fleet_t,
					   &fa->st, x);
	}
	if (!ret && !fa->ng) {
		ret = push_result(e, &e->cap_fres, &x);
		if (!ret) {
			x->rule = &r->info;
			x->outcome = RULE_SKIP;
			x->majority = -1;
			if (!e->fleet_added)
				snprintf(x->reason, sizeof(x->reason), "no node answered");
			else if (r->when)
				snprintf(x->reason, sizeof(x->reason),
					 "guard false on every %s: %s",
					 obj_kind_name(r->info.scope), r->info.when_src);
			else
				snprintf(x->reason, sizeof(x->reason), "no %s on any node",
					 obj_kind_name(r->info.scope));
		}
	}
	return ret;
}

static void acc_free(struct rules_engine *e)
{
	for (size_t i = 0; i < e->n_facc; i++) {
		struct fleet_acc *fa = &e->facc[i];

		free_groups(fa->gs, fa->ng);
		if (fa->st_ok)
			rx_slot_free(fa->r, &fa->st);
	}
	free(e->facc);
	e->facc = NULL;
	e->n_facc = 0;
}

int rules_fleet_begin(struct rules_engine *e, int64_t t_ns)
{
	size_t n = 0;

	rx_fleet_free(e);
	for (size_t i = 0; i < e->n_rules; i++)
		n += e->rules[i].info.fleet;
	e->fleet_t = t_ns;
	e->fleet_added = 0;
	e->cap_fres = 0;
	e->facc = calloc(n ? n : 1, sizeof(*e->facc));
	if (!e->facc)
		return -ENOMEM;
	for (size_t i = 0; i < e->n_rules; i++) {
		struct fleet_acc *fa;

		if (!e->rules[i].info.fleet)
			continue;
		fa = &e->facc[e->n_facc++];
		fa->r = &e->rules[i];
		if (rx_slot_init(fa->r, &fa->st))
			return -ENOMEM;
		fa->st_ok = true;
	}
	return 0;
}

int rules_fleet_add(struct rules_engine *e, size_t node, const struct fleet_node *fn)
{
	if (!fn->m)
		return 0;
	e->fleet_added++;
	for (size_t i = 0; i < e->n_facc; i++)
		if (!e->facc[i].told && gather_node(e, &e->facc[i], node, fn, NULL, NULL))
			return -ENOMEM;
	return 0;
}

int rules_fleet_add_alike(struct rules_engine *e, const size_t *nodes, size_t n,
			  const struct fleet_node *fn)
{
	struct object **objs;
	size_t most = 1;
	struct unit_seen *seen;
	int r = 0;

	if (!fn->m || !n)
		return 0;
	for (int k = OBJ_NETDEV; k <= OBJ_RDMA_PORT; k++) {
		size_t c = model_objects((struct node_model *)fn->m, (enum obj_kind)k, &objs);

		most = c > most ? c : most;
	}
	seen = calloc(most, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	e->fleet_added += n;
	/* rule by rule, node after node: a group counts a node's units one after the other */
	for (size_t i = 0; i < e->n_facc && !r; i++) {
		size_t ns = 0;

		if (e->facc[i].told)
			continue;
		r = gather_node(e, &e->facc[i], nodes[0], fn, seen, &ns);
		if (!r)
			r = reserve_seen(&e->facc[i], seen, ns, n - 1);
		for (size_t j = 1; j < n && !r; j++)
			r = add_seen(&e->facc[i], nodes[j], seen, ns);
	}
	free(seen);
	return r ? -ENOMEM : 0;
}

/* ---- rules an engine counts ---- */

static const struct rrule *fleet_rule(const struct rules_engine *e, size_t k)
{
	for (size_t i = 0; i < e->n_rules; i++)
		if (e->rules[i].info.fleet && !k--)
			return &e->rules[i];
	return NULL;
}

/* A field of the unit itself (no hop) that rocewatch exports: the engine has its series. */
static int own_field(const struct expr *x, enum obj_kind kind)
{
	if (!x || x->kind != N_FIELD || x->u.field.hop != HOP_SELF || x->u.field.id < 0)
		return -1;
	if (fields[x->u.field.id].obj != kind || !fields[x->u.field.id].metric ||
	    fields[x->u.field.id].mtype == MT_NONE)
		return -1;
	return x->u.field.id;
}

/* present(F)/supported(F) of a fact no engine has (job.*: check --nccl; profile_outcome) */
static bool never_true(const struct expr *x)
{
	const struct expr *a;

	if (!x)
		return false;
	if (x->kind == N_BINARY && x->u.bin.op == TK_AND)
		return never_true(x->u.bin.a) || never_true(x->u.bin.b);
	if (x->kind != N_CALL || x->u.call.n != 1 ||
	    (strcmp(x->u.call.fn->name, "present") && strcmp(x->u.call.fn->name, "supported")))
		return false;
	a = x->u.call.args[0];
	return a->kind == N_OUTCOME ||
	       (a->kind == N_FIELD && a->u.field.id >= 0 && fields[a->u.field.id].src == SRC_JOB);
}

/* One term of a countable guard: `rdma` (netdevs), or supported(F) of an exported fact. */
static bool guard_term(const struct expr *x, enum obj_kind kind, struct fleet_rule_shape *s)
{
	if (x->kind == N_FIELD && x->u.field.hop == HOP_SELF && x->u.field.id == F_NETDEV_RDMA &&
	    kind == OBJ_NETDEV) {
		s->rdma = true;
		return true;
	}
	if (x->kind == N_CALL && x->u.call.n == 1 && !strcmp(x->u.call.fn->name, "supported") &&
	    s->guard_field < 0) {
		s->guard_field = own_field(x->u.call.args[0], kind);
		return s->guard_field >= 0;
	}
	return false;
}

void rules_fleet_shape(const struct rules_engine *e, size_t k, struct fleet_rule_shape *s)
{
	const struct rrule *r = fleet_rule(e, k);
	const struct expr *w;
	enum obj_kind kind;

	memset(s, 0, sizeof(*s));
	s->field = s->guard_field = -1;
	if (!r)
		return;
	s->rule = &r->info;
	kind = r->info.scope;
	w = r->when;
	s->never = never_true(w);
	if (s->never || r->info.by == FLEET_BY_RAIL || r->info.by == FLEET_BY_DEVICE)
		return;
	s->field = own_field(r->subject, kind);
	if (s->field < 0)
		return;
	if (w && w->kind == N_BINARY && w->u.bin.op == TK_AND)
		s->countable = guard_term(w->u.bin.a, kind, s) && guard_term(w->u.bin.b, kind, s);
	else
		s->countable = !w || guard_term(w, kind, s);
}

/* Is x, or one term of its top-level conjunction, the netdev's own `rdma`? */
static bool needs_rdma(const struct expr *x)
{
	if (!x)
		return false;
	if (x->kind == N_BINARY && x->u.bin.op == TK_AND)
		return needs_rdma(x->u.bin.a) || needs_rdma(x->u.bin.b);
	return x->kind == N_FIELD && x->u.field.hop == HOP_SELF && x->u.field.id == F_NETDEV_RDMA;
}

bool rules_fleet_rdma_netdevs(const struct rules_engine *e, size_t k)
{
	const struct rrule *r = fleet_rule(e, k);

	return r && (r->info.scope != OBJ_NETDEV || needs_rdma(r->when));
}

static void expr_fields(const struct expr *x, bool used[F__COUNT])
{
	if (!x)
		return;
	switch (x->kind) {
	case N_FIELD:
		if (x->u.field.id >= 0)
			used[x->u.field.id] = true;
		break;
	case N_INDEX:
		expr_fields(x->u.index.base, used);
		expr_fields(x->u.index.idx, used);
		break;
	case N_UNARY:
		expr_fields(x->u.un.a, used);
		break;
	case N_BINARY:
		expr_fields(x->u.bin.a, used);
		expr_fields(x->u.bin.b, used);
		break;
	case N_CALL:
		for (int i = 0; i < x->u.call.n; i++)
			expr_fields(x->u.call.args[i], used);
		break;
	case N_SETLIT:
		for (int i = 0; i < x->u.set.n; i++) {
			expr_fields(x->u.set.lo[i], used);
			expr_fields(x->u.set.hi[i], used);
		}
		break;
	default:
		break;
	}
}

void rules_fleet_fields(const struct rules_engine *e, size_t k, bool used[F__COUNT])
{
	const struct rrule *r = fleet_rule(e, k);

	if (!r)
		return;
	expr_fields(r->when, used);
	expr_fields(r->subject, used);
	expr_fields(r->expr, used);
}

void rules_fleet_tell(struct rules_engine *e, size_t k)
{
	const struct rrule *r = fleet_rule(e, k);

	for (size_t i = 0; r && i < e->n_facc; i++)
		if (e->facc[i].r == r)
			e->facc[i].told = true;
}

void rules_fleet_answered(struct rules_engine *e, size_t n)
{
	e->fleet_added += n;
}

int rules_fleet_add_counted(struct rules_engine *e, size_t k, const char *key, size_t first_node,
			    const struct node_model *m, const struct object *o, size_t units,
			    size_t nodes)
{
	const struct rrule *r = fleet_rule(e, k);
	struct fleet_acc *fa = NULL;
	struct ectx cx = { .m = m, .obj = o, .t = e->fleet_t };
	char text[FLEET_VALUE_MAX];
	struct group *g;
	struct gval *gv;
	struct val v;

	for (size_t i = 0; r && i < e->n_facc && !fa; i++)
		if (e->facc[i].r == r)
			fa = &e->facc[i];
	if (!fa || !units)
		return -EINVAL;
	cx.st = &fa->st;
	g = find_group(&fa->gs, &fa->ng, &fa->capg, key, first_node, 0);
	if (!g)
		return -ENOMEM;
	if (g->n_vals)
		return -EINVAL; /* a counted value is a group's only one */
	v = rx_eval(r->subject, &cx);
	if (v.st != V_OK)
		return -EINVAL;
	value_text(text, &v, r->subject->type);
	gv = new_value(g, text, &v, r->subject->type, first_node);
	if (!gv)
		return -ENOMEM;
	/* counted, not named: no unit to list (only a majority's are never listed) */
	gv->counted = true;
	gv->fv.n_units = units;
	gv->fv.n_nodes = nodes;
	g->n_units += units;
	g->n_nodes += nodes;
	g->per_node = units == nodes;
	/* the first group has every node with a unit: fleet_nodes() */
	if (nodes > fa->unit_nodes)
		fa->unit_nodes = nodes;
	return 0;
}

int rules_fleet_finish(struct rules_engine *e, const struct fleet_node *nodes, size_t n)
{
	int ret = 0;

	(void)n;
	for (size_t i = 0; i < e->n_facc && !ret; i++)
		ret = finish_rule(e, &e->facc[i], nodes);
	acc_free(e);
	return ret;
}

int rules_evaluate_fleet(struct rules_engine *e, const struct fleet_node *nodes, size_t n,
			 int64_t t_ns)
{
	int r = rules_fleet_begin(e, t_ns);

	for (size_t i = 0; i < n && !r; i++)
		r = rules_fleet_add(e, i, &nodes[i]);
	if (r) {
		acc_free(e);
		return r;
	}
	return rules_fleet_finish(e, nodes, n);
}

size_t rules_fleet_results(const struct rules_engine *e, const struct fleet_result **out)
{
	*out = e->fres;
	return e->n_fres;
}

static const char *unit_word(const struct fleet_result *x, size_t count)
{
	if (x->per_node || x->rule->scope == OBJ_NODE)
		return count == 1 ? "node" : "nodes";
	if (x->rule->scope == OBJ_NETDEV)
		return count == 1 ? "netdev" : "netdevs";
	return count == 1 ? "port" : "ports";
}

/* A DSCP map as rx_format_val prints it ("{26:3,48:6}") back into 64 priorities. */
static void map_parse(const char *text, int8_t map[RW_DSCP_COUNT])
{
	memset(map, -1, RW_DSCP_COUNT);
	for (const char *p = text; *p;) {
		char *end;
		long d = strtol(p + 1, &end, 10), prio;

		if (*end != ':')
			break;
		prio = strtol(end + 1, &end, 10);
		if (d >= 0 && d < RW_DSCP_COUNT)
			map[d] = (int8_t)prio;
		p = end;
	}
}

/*
 * A value as the one-line report shows it: a DSCP map other than the
 * majority's as the DSCPs where it differs ("{26:-,48:0}", - = unmapped),
 * a long one cut short; everything else as it is.
 */
static void put_value(struct tbuf *tb, const struct fleet_result *x, const struct fleet_value *v)
{
	int8_t a[RW_DSCP_COUNT], b[RW_DSCP_COUNT];
	bool first = true;

	if (!x->dscp_map) {
		tb_puts(tb, v->text);
		return;
	}
	if (x->majority < 0 || v == &x->values[x->majority]) {
		size_t l = strlen(v->text);

		if (l <= 40)
			tb_puts(tb, v->text);
		else
			tb_printf(tb, "%.32s...}", v->text);
		return;
	}
	map_parse(x->values[x->majority].text, a);
	map_parse(v->text, b);
	tb_puts(tb, "differs at {");
	for (int d = 0; d < RW_DSCP_COUNT; d++) {
		if (a[d] == b[d])
			continue;
		if (b[d] < 0)
			tb_printf(tb, "%s%d:-", first ? "" : ",", d);
		else
			tb_printf(tb, "%s%d:%d", first ? "" : ",", d, b[d]);
		first = false;
	}
	tb_puts(tb, "}");
}

void rules_fleet_value_text(const struct fleet_result *x, const struct fleet_value *v, char *buf,
			    size_t len)
{
	struct tbuf tb = { buf, 0, len };

	buf[0] = '\0';
	put_value(&tb, x, v);
}

void rules_fleet_describe(const struct fleet_result *x, const struct fleet_node *nodes,
			  size_t max_names, char *buf, size_t len)
{
	struct tbuf tb = { buf, 0, len };
	size_t named = 0, left = 0;
	char who[FLEET_OBJECT_MAX + RW_NAME_MAX + 2];
	const char *sep = "";

	buf[0] = '\0';
	if (x->majority >= 0) {
		const struct fleet_value *mv = &x->values[x->majority];

		tb_printf(&tb, "%zu %s ", mv->n_units, unit_word(x, mv->n_units));
		put_value(&tb, x, mv);
		sep = ", ";
	} else if (x->n_values) {
		tb_puts(&tb, "no majority: ");
	}
	for (size_t i = 0; i < x->n_values; i++) {
		const struct fleet_value *fv = &x->values[i];

		if ((ssize_t)i == x->majority)
			continue;
		if (x->majority < 0 && fv->n_units > 1) {
			/* a tie: each side as a count, with as many of its names as fit */
			tb_printf(&tb, "%s%zu %s ", sep, fv->n_units, unit_word(x, fv->n_units));
			put_value(&tb, x, fv);
			tb_puts(&tb, " (");
			for (size_t u = 0; u < fv->n_units; u++) {
				if (named >= max_names) {
					tb_printf(&tb, "%sand %zu more", u ? ", " : "",
						  fv->n_units - u);
					break;
				}
				unit_label(x, nodes, &fv->units[u], who, sizeof(who));
				tb_printf(&tb, "%s%s", u ? ", " : "", who);
				named++;
			}
			tb_puts(&tb, ")");
			sep = ", ";
			continue;
		}
		for (size_t u = 0; u < fv->n_units; u++) {
			if (named >= max_names) {
				left += fv->n_units - u;
				break;
			}
			unit_label(x, nodes, &fv->units[u], who, sizeof(who));
			tb_printf(&tb, "%s%s ", sep, who);
			put_value(&tb, x, fv);
			sep = ", ";
			named++;
		}
	}
	if (left)
		tb_printf(&tb, "%sand %zu more", sep, left);
	if (x->n_unknown) {
		tb_printf(&tb, "%sunknown: ", x->n_values ? "; " : "");
		for (size_t u = 0; u < x->n_unknown; u++) {
			if (u >= max_names) {
				tb_printf(&tb, ", and %zu more", x->n_unknown - u);
				break;
			}
			unit_label(x, nodes, &x->unknown[u].u, who, sizeof(who));
			tb_printf(&tb, "%s%s (%s)", u ? ", " : "", who, x->unknown[u].reason);
		}
	}
}
