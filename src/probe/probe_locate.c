// SPDX-License-Identifier: MIT
/*
 * The fleet probe's localizer (probe_locate.h).  Three walks over the
 * slices, which are generated again from the plan rather than kept (a
 * 1 000-node full mesh is 8 M entries): the first counts each port's pairs
 * and finds the culprits, the second sorts out what the culprits do not
 * explain, the findings come from the counts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_locate.h"
#include "strbuf.h"
#include "strmap.h"
#include "util.h"

/* The culprit rule: lost with 3/4 of its peers, and with at least min(3, its pairs). */
#define CULPRIT_NUM 3
#define CULPRIT_DEN 4
#define CULPRIT_MIN 3
/* rail_only: lost on 9/10 of the hosts that probed the rail pair */
#define RAIL_ONLY_NUM 9
#define RAIL_ONLY_DEN 10
/* host_path: a loopback this many times the median, and this far above it */
#define LOOP_SLOW_FACTOR 8
#define LOOP_SLOW_NS	 20000
/* spine_paths: the leaf most of the partial pairs go through */
#define SPINE_LEAF_NUM 3
#define SPINE_LEAF_DEN 4
#define SPINE_MIN      2

/*
 * RTT histogram: 64 buckets per power of two (the exponent and the next six
 * bits of the value: no log() per pair), so the summary is within 1/64.
 */
#define RTT_SUB	    64
#define RTT_BUCKETS (32 * RTT_SUB)

static const char *const class_names[PROBE__CLASSES] = {
	[PROBE_NODE_RAIL] = "node_rail",     [PROBE_LEAF] = "leaf",
	[PROBE_SPINE_PATHS] = "spine_paths", [PROBE_PATH_MTU] = "path_mtu",
	[PROBE_RAIL_ONLY] = "rail_only",     [PROBE_HOST_PATH] = "host_path",
};

static const char *const action_names[PROBE__ACTIONS] = {
	[PROBE_ACT_FIX_CONFIG] = "fix-config",
	[PROBE_ACT_RESET_LINK] = "reset-link",
	[PROBE_ACT_RESEAT_CABLE] = "reseat-or-replace-cable",
	[PROBE_ACT_DRAIN_NODE] = "drain-node",
	[PROBE_ACT_RELOAD_DRIVER] = "reload-driver",
	[PROBE_ACT_CONTACT_VENDOR] = "contact-vendor",
};

const char *probe_class_name(enum probe_class c)
{
	return c < PROBE__CLASSES ? class_names[c] : "?";
}

const char *probe_action_name(enum probe_action a)
{
	return a < PROBE__ACTIONS ? action_names[a] : "?";
}

/* One port's pairs on its rail, both directions; those inside its leaf too. */
struct pstat {
	uint32_t tested, lost, mtu, partial;
	uint32_t out_tested, out_lost, in_tested, in_lost;
	uint32_t leaf_tested, leaf_lost, leaf_mtu;
	uint8_t culprit; /* CUL_LOST, CUL_MTU, TAKEN_* */
	uint8_t loop;	 /* LOOP_* */
	uint32_t loop_rtt;
};

enum {
	CUL_LOST = 1,
	CUL_MTU = 2,
	TAKEN_LOST = 4,
	TAKEN_MTU = 8
};
enum {
	LOOP_UNTESTED,
	LOOP_OK,
	LOOP_LOST
};

/* One leaf on one rail: its cross-leaf pairs (one end under it) and the pairs inside it. */
struct lstat {
	uint32_t members;
	uint32_t x_tested, x_lost, x_mtu;
	uint32_t in_tested, in_lost, in_mtu;
	uint32_t same_lost; /* inside, lost, no port to blame (pass 2) */
	uint32_t bad;	    /* cross-leaf, path-partial or lost, no port to blame (pass 2) */
	uint8_t flag;	    /* CUL_LOST, CUL_MTU: the leaf is the culprit */
};

struct hist {
	uint32_t b[RTT_BUCKETS];
	uint64_t n;
};

/* Per rail: what the culprits do not explain. */
struct rresid {
	uint64_t cross_tested, partial, lost_cross, lost_same, mtu;
	uint32_t label_lost[PROBE_PLAN_MAX_PATHS + 1]; /* [0]: the main path */
};

struct loc {
	const struct probe_plan *p;
	const struct probe_result *const *res;
	size_t R;
	struct pstat *ps; /* [node * R + rail] */
	int32_t *leaf;	  /* [node * R + rail]: leaf id, -1 unknown */
	struct strmap leaves;
	char **leaf_names;
	size_t n_leaves, cap_leaves;
	struct lstat *ls; /* [leaf * R + rail] */
	/* [node * R + rail]: its unexplained bad pairs, cross-leaf pairs, MTU-short pairs */
	uint32_t *node_bad, *node_cross, *node_mtu;
	struct rresid *rr;
	struct hist *hist; /* [R], then the host pairs', then the loopbacks' */
	/* [a * R + b]: cross-rail pairs inside hosts, per host and direction */
	uint32_t *hp_tested, *hp_lost;
	uint32_t *host_bad; /* [node]: cross-rail host pairs lost on joined rails */
	struct probe_entry *slice;
	size_t slice_cap;
	struct probe_findings *out;
	size_t cap_f;
	bool oom;
};

static void hist_add(struct hist *h, uint32_t ns)
{
	unsigned e = ns ? 31 - (unsigned)__builtin_clz(ns) : 0, m;

	m = e >= 6 ? ns >> (e - 6) & (RTT_SUB - 1) : ns << (6 - e) & (RTT_SUB - 1);
	h->b[e * RTT_SUB + m]++;
	h->n++;
}

/* The largest value of bucket b. */
static int64_t hist_top(int b)
{
	int64_t e = b / RTT_SUB, m = b % RTT_SUB;

	return e >= 6 ? ((RTT_SUB + m + 1) << (e - 6)) - 1 : (int64_t)1 << e;
}

/* The nearest-rank percentile, as the upper bound of its bucket. */
static int64_t hist_pct(const struct hist *h, unsigned pct)
{
	uint64_t want, cum = 0;

	if (!h->n)
		return -1;
	want = (h->n * pct + 99) / 100;
	for (int b = 0; b < RTT_BUCKETS; b++) {
		cum += h->b[b];
		if (cum >= want)
			return hist_top(b);
	}
	return -1;
}

/* calloc(0) may return NULL: ask for one element at least */
static size_t nz(size_t n)
{
	return n ? n : 1;
}

enum {
	PAIR_UNTESTED = PROBE_OUT_UNTESTED,
	PAIR_OK = PROBE_OUT_OK,
	PAIR_LOST = PROBE_OUT_LOST,
	PAIR_MTU = PROBE_OUT_MTU,
	PAIR_PARTIAL = PROBE_OUT_PATHS,
};

/*
 * What one entry's result says of its pair; *lost_paths gets which paths
 * failed.  A pair is lost only on what would pass a working path: a small
 * size or the flow-label probes.  Its path-MTU size alone lost (the small ones
 * not sent, late) says nothing of the pair: untested.
 */
static int classify_mtu(unsigned mtu, const struct probe_result *x, uint64_t *lost_paths)
{
	unsigned sz[PROBE_PLAN_MAX_SIZES];
	size_t n = probe_plan_sizes(mtu, sz);
	/* the sizes a path at a smaller MTU than the ports' still carries */
	size_t small = n == 3 && sz[2] > 1024 ? 2 : n;
	bool tested = false, any = false, small_sent = false, small_back = false, main_ok;
	uint32_t all_labels =
	    x->labels_sent >= 32 ? UINT32_MAX : (uint32_t)((1ULL << x->labels_sent) - 1);

	*lost_paths = 0;
	for (size_t c = 0; c < n; c++) {
		tested |= x->sent[c] > 0;
		any |= x->recv[c] > 0;
		if (c < small) {
			small_sent |= x->sent[c] > 0;
			small_back |= x->recv[c] > 0;
		}
	}
	if (!tested || (!any && !small_sent && !x->labels_sent))
		return PAIR_UNTESTED;
	if (!any && (!x->labels_sent || (x->labels_lost & all_labels) == all_labels))
		return PAIR_LOST;
	/* the main path is judged on the small sizes, when they left */
	main_ok = small_back || !small_sent;
	if (x->labels_sent && ((x->labels_lost & all_labels) || !main_ok)) {
		*lost_paths = (uint64_t)(x->labels_lost & all_labels) << 1 | (main_ok ? 0 : 1);
		return PAIR_PARTIAL;
	}
	if (small < n && x->sent[small] && !x->recv[small] && small_back)
		return PAIR_MTU;
	return PAIR_OK;
}

static int classify(const struct probe_entry *e, const struct probe_result *x, uint64_t *lost_paths)
{
	return classify_mtu(e->mtu, x, lost_paths);
}

enum probe_outcome probe_result_outcome(unsigned mtu, const struct probe_result *x)
{
	uint64_t lp;

	return (enum probe_outcome)classify_mtu(mtu, x, &lp);
}

const char *probe_outcome_name(enum probe_outcome o)
{
	static const char *const names[] = { "untested", "ok", "lost", "mtu", "paths" };

	return o <= PROBE_OUT_PATHS ? names[o] : "?";
}

static const struct probe_plan_port *port_of(const struct loc *l, uint32_t node, uint16_t rail)
{
	int16_t k = l->p->port_of[(size_t)node * l->R + rail];

	return k >= 0 ? &l->p->nodes[node].ports[k] : NULL;
}

static const char *port_name(const struct probe_plan_port *pp)
{
	return pp && pp->name && *pp->name ? pp->name : "its port";
}

/* ---- findings ---- */

static struct probe_finding *new_finding(struct loc *l, enum probe_class cls,
					 enum probe_severity sev, enum probe_action act)
{
	struct probe_findings *o = l->out;
	struct probe_finding *f;

	if (array_grow(&o->f, &l->cap_f, o->n, sizeof(*o->f), 8)) {
		l->oom = true;
		return NULL;
	}
	f = &o->f[o->n++];
	memset(f, 0, sizeof(*f));
	f->cls = cls;
	f->severity = sev;
	f->action = act;
	return f;
}

static void f_node(struct loc *l, struct probe_finding *f, uint32_t node)
{
	if (f->n_nodes && f->nodes[f->n_nodes - 1] == node)
		return;
	if (array_resize(&f->nodes, f->n_nodes + 1, sizeof(*f->nodes))) {
		l->oom = true;
		return;
	}
	f->nodes[f->n_nodes++] = node;
}

static void f_rail(struct loc *l, struct probe_finding *f, uint16_t rail)
{
	for (size_t i = 0; i < f->n_rails; i++)
		if (f->rails[i] == rail)
			return;
	if (array_resize(&f->rails, f->n_rails + 1, sizeof(*f->rails))) {
		l->oom = true;
		return;
	}
	f->rails[f->n_rails++] = rail;
}

static void f_text(struct probe_finding *f, const struct strbuf *sb)
{
	strlcpy0(f->evidence, sb->buf ? sb->buf : "", sizeof(f->evidence));
	/* cut at the limit: say so rather than end mid-word */
	if (sb->len >= sizeof(f->evidence))
		memcpy(f->evidence + sizeof(f->evidence) - 5, " ...", 5);
}

static const char *rail_key(const struct loc *l, uint16_t r)
{
	return l->p->rails[r].key;
}

static void counters_text(struct strbuf *sb, const struct probe_plan_port *pp)
{
	const char *sep = "; its counters: ";

	if (!pp)
		return;
	if (pp->link_downed >= 0) {
		sb_printf(sb, "%slink_downed %lld", sep, (long long)pp->link_downed);
		sep = ", ";
	}
	if (pp->carrier_changes >= 0) {
		sb_printf(sb, "%scarrier changes %lld", sep, (long long)pp->carrier_changes);
		sep = ", ";
	}
	if (pp->symbol_errors >= 0)
		sb_printf(sb, "%ssymbol errors %lld", sep, (long long)pp->symbol_errors);
}

static bool moved(const struct probe_plan_port *pp)
{
	return pp && (pp->link_downed > 0 || pp->carrier_changes > 0 || pp->symbol_errors > 0);
}

/* ---- the walks ---- */

static struct probe_entry *slice_of(struct loc *l, size_t node, size_t *n)
{
	size_t want = probe_plan_slice_len(l->p, node);

	if (want > l->slice_cap) {
		struct probe_entry *t = realloc(l->slice, want * sizeof(*t));

		if (!t) {
			l->oom = true;
			*n = 0;
			return NULL;
		}
		l->slice = t;
		l->slice_cap = want;
	}
	*n = probe_plan_slice(l->p, node, l->slice);
	return l->slice;
}

static bool same_leaf(const struct loc *l, uint32_t a, uint32_t b, uint16_t r)
{
	int32_t la = l->leaf[(size_t)a * l->R + r], lb = l->leaf[(size_t)b * l->R + r];

	return la >= 0 && la == lb;
}

static void count_rail(struct loc *l, size_t i, const struct probe_entry *e,
		       const struct probe_result *x, int c)
{
	struct pstat *src = &l->ps[i * l->R + e->rail],
		     *dst = &l->ps[(size_t)e->dst * l->R + e->rail];
	struct probe_rail_stat *rs = &l->out->rails[e->rail];
	int32_t la = l->leaf[i * l->R + e->rail], lb = l->leaf[(size_t)e->dst * l->R + e->rail];

	rs->tested++;
	src->tested++;
	src->out_tested++;
	dst->tested++;
	dst->in_tested++;
	if (la >= 0 && la == lb) {
		struct lstat *ls = &l->ls[(size_t)la * l->R + e->rail];

		ls->in_tested++;
		ls->in_lost += c == PAIR_LOST;
		ls->in_mtu += c == PAIR_MTU;
		src->leaf_tested++;
		dst->leaf_tested++;
		src->leaf_lost += c == PAIR_LOST;
		dst->leaf_lost += c == PAIR_LOST;
		src->leaf_mtu += c == PAIR_MTU;
		dst->leaf_mtu += c == PAIR_MTU;
	} else if (la >= 0 && lb >= 0) {
		struct lstat *a = &l->ls[(size_t)la * l->R + e->rail];
		struct lstat *b = &l->ls[(size_t)lb * l->R + e->rail];

		a->x_tested++;
		b->x_tested++;
		a->x_lost += c == PAIR_LOST;
		b->x_lost += c == PAIR_LOST;
		a->x_mtu += c == PAIR_MTU;
		b->x_mtu += c == PAIR_MTU;
	}
	switch (c) {
	case PAIR_LOST:
		rs->lost++;
		src->lost++;
		src->out_lost++;
		dst->lost++;
		dst->in_lost++;
		break;
	case PAIR_MTU:
		rs->mtu_short++;
		src->mtu++;
		dst->mtu++;
		break;
	case PAIR_PARTIAL:
		rs->path_partial++;
		src->partial++;
		dst->partial++;
		break;
	default:
		rs->ok++;
		break;
	}
	if (x->rtt_ns != PROBE_RTT_NONE)
		hist_add(&l->hist[e->rail], x->rtt_ns);
}

static void pass_count(struct loc *l)
{
	const struct probe_plan *p = l->p;

	for (size_t i = 0; i < p->n_nodes && !l->oom; i++) {
		size_t n;
		const struct probe_entry *s = slice_of(l, i, &n);
		const struct probe_result *x = l->res[i];

		for (size_t k = 0; k < n; k++) {
			const struct probe_entry *e = &s[k];
			uint64_t lp;
			int c;

			if (e->kind == PROBE_PAIR_RAIL)
				l->out->rails[e->rail].planned++;
			else if (e->kind == PROBE_PAIR_HOST)
				l->out->host.planned++;
			else
				l->out->loop.planned++;
			if (!x)
				continue;
			c = classify(e, &x[k], &lp);
			if (c == PAIR_UNTESTED) {
				if (!l->out->untested &&
				    !(l->out->untested = calloc(p->n_nodes, sizeof(uint32_t)))) {
					l->oom = true;
					break;
				}
				l->out->untested[i]++;
				l->out->untested_total++;
				continue;
			}
			if (e->kind == PROBE_PAIR_RAIL) {
				count_rail(l, i, e, &x[k], c);
			} else if (e->kind == PROBE_PAIR_HOST) {
				l->out->host.tested++;
				l->out->host.ok += c == PAIR_OK;
				l->out->host.lost += c == PAIR_LOST;
				l->out->host.mtu_short += c == PAIR_MTU;
				l->out->host.path_partial += c == PAIR_PARTIAL;
				if (x[k].rtt_ns != PROBE_RTT_NONE)
					hist_add(&l->hist[l->R], x[k].rtt_ns);
			} else {
				struct pstat *ps = &l->ps[i * l->R + e->rail];

				l->out->loop.tested++;
				l->out->loop.ok += c != PAIR_LOST;
				l->out->loop.lost += c == PAIR_LOST;
				ps->loop = c == PAIR_LOST ? LOOP_LOST : LOOP_OK;
				if (x[k].rtt_ns != PROBE_RTT_NONE)
					hist_add(&l->hist[l->R + 1], x[k].rtt_ns);
				ps->loop_rtt = x[k].rtt_ns;
			}
		}
		if (!x)
			l->out->nodes_without_result++;
	}
}

static bool culprit_rule(uint32_t bad, uint32_t tested)
{
	uint32_t min = tested < CULPRIT_MIN ? tested : CULPRIT_MIN;

	return tested && bad >= min &&
	       (uint64_t)bad * CULPRIT_DEN >= (uint64_t)tested * CULPRIT_NUM;
}

static uint8_t leaf_flag(const struct loc *l, size_t x)
{
	return l->leaf[x] >= 0 ? l->ls[(size_t)l->leaf[x] * l->R + x % l->R].flag : 0;
}

/*
 * Leaves first: one that loses 3/4 of its cross-leaf pairs (or their path-MTU
 * probes) is the culprit of those pairs, which then say nothing of its ports
 * (in a sparse plan a port's near peers are under its own leaf: judged on all
 * its pairs, most ports of a leaf with dead uplinks would look half good).
 * Then ports: on all their pairs, or, under a culprit leaf, on the pairs
 * inside it.
 */
static void find_culprits(struct loc *l)
{
	for (size_t lf = 0; lf < l->n_leaves * l->R; lf++) {
		struct lstat *ls = &l->ls[lf];

		if (ls->members < 2)
			continue;
		if (culprit_rule(ls->x_lost, ls->x_tested))
			ls->flag |= CUL_LOST;
		else if (culprit_rule(ls->x_mtu, ls->x_tested - ls->x_lost))
			ls->flag |= CUL_MTU;
	}
	for (size_t x = 0; x < l->p->n_nodes * l->R; x++) {
		struct pstat *ps = &l->ps[x];
		uint8_t lf = leaf_flag(l, x);

		if (lf & CUL_LOST) {
			if (!ps->leaf_tested || culprit_rule(ps->leaf_lost, ps->leaf_tested))
				ps->culprit |= CUL_LOST;
		} else if (culprit_rule(ps->lost, ps->tested)) {
			ps->culprit |= CUL_LOST;
		} else if (lf & CUL_MTU) {
			if (!ps->leaf_tested || culprit_rule(ps->leaf_mtu, ps->leaf_tested))
				ps->culprit |= CUL_MTU;
		} else if (culprit_rule(ps->mtu, ps->tested - ps->lost)) {
			ps->culprit |= CUL_MTU;
		}
	}
}

struct host_lost {
	uint32_t node;
	uint16_t a, b;
};

/* What the culprits do not explain; the cross-rail pairs inside the hosts. */
static void pass_resid(struct loc *l, struct host_lost **hl, size_t *n_hl, size_t *cap_hl)
{
	const struct probe_plan *p = l->p;

	for (size_t i = 0; i < p->n_nodes && !l->oom; i++) {
		size_t n;
		const struct probe_entry *s = slice_of(l, i, &n);
		const struct probe_result *x = l->res[i];

		if (!x)
			continue;
		for (size_t k = 0; k < n; k++) {
			const struct probe_entry *e = &s[k];
			uint64_t lp;
			int c = classify(e, &x[k], &lp);
			uint8_t cs, cd;

			if (c == PAIR_UNTESTED || e->kind == PROBE_PAIR_LOOP)
				continue;
			cs = l->ps[i * l->R + e->rail].culprit;
			if (e->kind == PROBE_PAIR_HOST) {
				uint16_t b = probe_plan_port_rail(p, i, e->dst_port);

				/* a cross-rail pair leaves both leaves: their uplinks explain it */
				cd = l->ps[i * l->R + b].culprit | leaf_flag(l, i * l->R + b) |
				     leaf_flag(l, i * l->R + e->rail);
				if ((cs | cd) & CUL_LOST)
					continue;
				l->hp_tested[(size_t)e->rail * l->R + b]++;
				if (c != PAIR_LOST)
					continue;
				l->hp_lost[(size_t)e->rail * l->R + b]++;
				if (array_grow(hl, cap_hl, *n_hl, sizeof(**hl), 64)) {
					l->oom = true;
					return;
				}
				(*hl)[(*n_hl)++] = (struct host_lost){ (uint32_t)i, e->rail, b };
				continue;
			}
			struct rresid *rr = &l->rr[e->rail];
			bool same = same_leaf(l, (uint32_t)i, e->dst, e->rail);
			int32_t ls = l->leaf[i * l->R + e->rail];
			int32_t ld = l->leaf[(size_t)e->dst * l->R + e->rail];

			cd = l->ps[(size_t)e->dst * l->R + e->rail].culprit;
			if (!same)
				cd |= leaf_flag(l, i * l->R + e->rail) |
				      leaf_flag(l, (size_t)e->dst * l->R + e->rail);
			if ((cs | cd) & CUL_LOST)
				continue;

			if (!same && e->labels) {
				rr->cross_tested++;
				l->node_cross[i * l->R + e->rail]++;
				l->node_cross[(size_t)e->dst * l->R + e->rail]++;
			}
			if (c == PAIR_MTU && !((cs | cd) & CUL_MTU)) {
				rr->mtu++;
				l->node_mtu[i * l->R + e->rail]++;
				l->node_mtu[(size_t)e->dst * l->R + e->rail]++;
			}
			if (c == PAIR_LOST && same) {
				rr->lost_same++;
				l->ls[(size_t)ls * l->R + e->rail].same_lost++;
				continue;
			}
			if (c != PAIR_PARTIAL && c != PAIR_LOST)
				continue;
			if (c == PAIR_LOST) {
				rr->lost_cross++;
			} else {
				rr->partial++;
				for (unsigned b = 0; b <= PROBE_PLAN_MAX_PATHS; b++)
					if (lp >> b & 1)
						rr->label_lost[b]++;
			}
			l->node_bad[i * l->R + e->rail]++;
			l->node_bad[(size_t)e->dst * l->R + e->rail]++;
			if (ls >= 0)
				l->ls[(size_t)ls * l->R + e->rail].bad++;
			if (ld >= 0 && ld != ls)
				l->ls[(size_t)ld * l->R + e->rail].bad++;
		}
	}
}

/* ---- findings from the counts ---- */

static uint32_t node_of_ring(const struct loc *l, uint16_t r, uint32_t j)
{
	return l->p->rails[r].ring[j];
}

/* A whole rail, or a culprit leaf on it: one finding for their ports. */
static void group_culprits(struct loc *l, uint16_t r, uint8_t bit)
{
	const struct probe_plan_rail *rl = &l->p->rails[r];
	uint8_t taken = bit == CUL_LOST ? TAKEN_LOST : TAKEN_MTU;
	uint32_t nc = 0;
	struct strbuf sb = { 0 };

	for (uint32_t j = 0; j < rl->n; j++)
		nc += (l->ps[(size_t)node_of_ring(l, r, j) * l->R + r].culprit & bit) != 0;
	if (nc && nc == rl->n && rl->n >= 3) {
		const struct probe_rail_stat *rs = &l->out->rails[r];
		struct probe_finding *f =
		    new_finding(l, bit == CUL_LOST ? PROBE_LEAF : PROBE_PATH_MTU,
				PROBE_SEV_CRITICAL, PROBE_ACT_FIX_CONFIG);

		if (!f)
			return;
		f_rail(l, f, r);
		for (uint32_t j = 0; j < rl->n; j++) {
			uint32_t i = node_of_ring(l, r, j);

			f_node(l, f, i);
			l->ps[(size_t)i * l->R + r].culprit |= taken;
		}
		f->pairs_tested = rs->tested;
		if (bit == CUL_LOST) {
			f->pairs_bad = rs->lost;
			sb_printf(&sb,
				  "rail %s: every port is lost with its peers (%llu of %llu pairs, "
				  "%u nodes): the rail's switching or its configuration (VLAN, "
				  "routes, PFC), not one port",
				  rail_key(l, r), (unsigned long long)rs->lost,
				  (unsigned long long)rs->tested, rl->n);
		} else {
			f->pairs_bad = rs->mtu_short;
			sb_printf(
			    &sb,
			    "rail %s: path-MTU probes are lost on every port (%llu of %llu "
			    "pairs), 64 and 1024 bytes pass: the rail's switches or links are "
			    "at a smaller MTU than the ports' active_mtu",
			    rail_key(l, r), (unsigned long long)rs->mtu_short,
			    (unsigned long long)rs->tested);
		}
		f_text(f, &sb);
		sb_free(&sb);
		return;
	}
	for (size_t lf = 0; lf < l->n_leaves && !l->oom; lf++) {
		const struct lstat *ls = &l->ls[lf * l->R + r];
		uint32_t il = bit == CUL_LOST ? ls->in_lost : ls->in_mtu;
		bool inside_ok = ls->in_tested &&
				 (uint64_t)il * CULPRIT_DEN < (uint64_t)ls->in_tested * CULPRIT_NUM;
		struct probe_finding *f;

		if (!(ls->flag & bit))
			continue;
		f = new_finding(l, bit == CUL_LOST ? PROBE_LEAF : PROBE_PATH_MTU,
				PROBE_SEV_CRITICAL,
				bit == CUL_MTU ? PROBE_ACT_FIX_CONFIG
				: inside_ok    ? PROBE_ACT_RESEAT_CABLE
					       : PROBE_ACT_DRAIN_NODE);
		if (!f)
			return;
		strlcpy0(f->leaf, l->leaf_names[lf], sizeof(f->leaf));
		f_rail(l, f, r);
		for (uint32_t j = 0; j < rl->n; j++) {
			uint32_t i = node_of_ring(l, r, j);

			if (l->leaf[(size_t)i * l->R + r] == (int32_t)lf) {
				f_node(l, f, i);
				l->ps[(size_t)i * l->R + r].culprit |= taken;
			}
		}
		f->pairs_bad = (bit == CUL_LOST ? ls->x_lost : ls->x_mtu) + (inside_ok ? 0 : il);
		f->pairs_tested = ls->x_tested + ls->in_tested;
		sb_reset(&sb);
		if (bit == CUL_MTU)
			sb_printf(&sb,
				  "leaf %s (rail %s): path-MTU probes lost on %u of %u pairs that "
				  "leave it (%u ports under it), 64 and 1024 bytes pass: its ports "
				  "or uplinks are at a smaller MTU",
				  l->leaf_names[lf], rail_key(l, r), ls->x_mtu,
				  ls->x_tested - ls->x_lost, ls->members);
		else if (inside_ok)
			sb_printf(&sb,
				  "leaf %s (rail %s): its %u ports are lost with ports under other "
				  "leaves (%u of %u pairs), pairs inside it pass (%u of %u): its "
				  "uplinks",
				  l->leaf_names[lf], rail_key(l, r), ls->members, ls->x_lost,
				  ls->x_tested, ls->in_tested - il, ls->in_tested);
		else
			sb_printf(
			    &sb,
			    "leaf %s (rail %s): its %u ports are lost with every peer (%u of %u "
			    "pairs leaving it, %u of %u inside it%s): the leaf itself",
			    l->leaf_names[lf], rail_key(l, r), ls->members, ls->x_lost,
			    ls->x_tested, il, ls->in_tested, ls->in_tested ? "" : ", none probed");
		f_text(f, &sb);
	}
	sb_free(&sb);
}

/* One finding per node for its culprit ports the groups above did not take. */
static void node_findings(struct loc *l, uint8_t bit)
{
	uint8_t taken = bit == CUL_LOST ? TAKEN_LOST : TAKEN_MTU;
	struct strbuf sb = { 0 };

	for (size_t i = 0; i < l->p->n_nodes && !l->oom; i++) {
		const struct probe_plan_node *nd = &l->p->nodes[i];
		struct probe_finding *f = NULL;
		bool nic = false, all = true, counters = false;
		size_t n_rails = 0;

		sb_reset(&sb);
		for (uint16_t r = 0; r < l->R; r++) {
			struct pstat *ps = &l->ps[i * l->R + r];
			const struct probe_plan_port *pp = port_of(l, (uint32_t)i, r);

			if (!pp)
				continue;
			if (!(ps->culprit & bit) || (ps->culprit & taken)) {
				all = false;
				continue;
			}
			if (!f) {
				f = new_finding(l,
						bit == CUL_LOST ? PROBE_NODE_RAIL : PROBE_PATH_MTU,
						PROBE_SEV_CRITICAL, PROBE_ACT_FIX_CONFIG);
				if (!f)
					break;
				f_node(l, f, (uint32_t)i);
			}
			f_rail(l, f, r);
			n_rails++;
			f->pairs_tested += ps->tested;
			if (bit == CUL_MTU) {
				f->pairs_bad += ps->mtu;
				sb_printf(
				    &sb,
				    "%srail %s %s: path-MTU probes (%u bytes) lost with %u of "
				    "%u pairs, 64 and 1024 bytes pass: a link between is at a "
				    "smaller MTU (its leaf port?)",
				    sb.len ? "; " : "", rail_key(l, r), port_name(pp),
				    pp->active_mtu, ps->mtu, ps->tested - ps->lost);
				continue;
			}
			f->pairs_bad += ps->lost;
			nic |= ps->loop == LOOP_LOST;
			counters |= moved(pp);
			sb_printf(&sb, "%srail %s %s: lost with %u of %u pairs", sb.len ? "; " : "",
				  rail_key(l, r), port_name(pp), ps->lost, ps->tested);
			if (l->res[i])
				sb_printf(
				    &sb,
				    " (%u of the %u peers it probed answer, %u of the %u that "
				    "probe it hear back)",
				    ps->out_tested - ps->out_lost, ps->out_tested,
				    ps->in_tested - ps->in_lost, ps->in_tested);
			if (l->p->rails[r].n == 2)
				sb_puts(&sb, ", the rail's only other node could be the one");
			sb_puts(&sb, ps->loop == LOOP_LOST ? "; its loopback fails: the NIC"
				     : ps->loop == LOOP_OK ? "; its loopback answers: not the NIC"
							   : "");
			counters_text(&sb, pp);
		}
		if (!f)
			continue;
		if (bit == CUL_LOST && !l->res[i] && all && n_rails == nd->n_ports) {
			sb_reset(&sb);
			sb_printf(&sb,
				  "no result from the node, and its ports are lost with every peer "
				  "on all %zu rails: the node is down or cut off",
				  n_rails);
			f->action = PROBE_ACT_DRAIN_NODE;
		} else if (bit == CUL_LOST) {
			f->action = nic ? PROBE_ACT_DRAIN_NODE : PROBE_ACT_RESEAT_CABLE;
			if (!nic)
				sb_puts(&sb, counters
						 ? ": the link (cable or optic: its counters moved)"
						 : ": the cable, optic or leaf port");
		}
		f_text(f, &sb);
	}
	sb_free(&sb);
}

/* Up to four of the most lost paths, "label 3: 12 pairs". */
static void labels_text(struct strbuf *sb, const struct rresid *rr)
{
	bool used[PROBE_PLAN_MAX_PATHS + 1] = { 0 };

	for (int k = 0; k < 4; k++) {
		int best = -1;

		for (int b = 0; b <= PROBE_PLAN_MAX_PATHS; b++)
			if (!used[b] && rr->label_lost[b] &&
			    (best < 0 || rr->label_lost[b] > rr->label_lost[best]))
				best = b;
		if (best < 0)
			break;
		used[best] = true;
		if (best)
			sb_printf(sb, "%slabel %d: %u", k ? ", " : "", best, rr->label_lost[best]);
		else
			sb_printf(sb, "%smain path: %u", k ? ", " : "", rr->label_lost[0]);
	}
}

static void resid_findings(struct loc *l, uint16_t r)
{
	const struct probe_plan_rail *rl = &l->p->rails[r];
	struct rresid *rr = &l->rr[r];
	uint64_t bad = rr->partial + rr->lost_cross;
	struct strbuf sb = { 0 };
	struct probe_finding *f;

	if (rr->mtu >= 2 &&
	    (f = new_finding(l, PROBE_PATH_MTU, PROBE_SEV_CRITICAL, PROBE_ACT_FIX_CONFIG))) {
		f_rail(l, f, r);
		for (uint32_t j = 0; j < rl->n; j++) {
			uint32_t i = node_of_ring(l, r, j);

			if (l->node_mtu[(size_t)i * l->R + r])
				f_node(l, f, i);
		}
		f->pairs_bad = rr->mtu;
		f->pairs_tested = l->out->rails[r].tested;
		sb_printf(&sb,
			  "rail %s: %llu pairs lose their path-MTU probes, 64 and 1024 bytes "
			  "pass, and no one port explains them: a link between is at a smaller "
			  "MTU",
			  rail_key(l, r), (unsigned long long)rr->mtu);
		f_text(f, &sb);
	}
	for (size_t lf = 0; lf < l->n_leaves && !l->oom; lf++) {
		uint32_t lost = l->ls[lf * l->R + r].same_lost;

		if (lost < 2 ||
		    !(f = new_finding(l, PROBE_LEAF, PROBE_SEV_CRITICAL, PROBE_ACT_RESEAT_CABLE)))
			continue;
		strlcpy0(f->leaf, l->leaf_names[lf], sizeof(f->leaf));
		f_rail(l, f, r);
		for (uint32_t j = 0; j < rl->n; j++) {
			uint32_t i = node_of_ring(l, r, j);

			if (l->leaf[(size_t)i * l->R + r] == (int32_t)lf)
				f_node(l, f, i);
		}
		f->pairs_bad = lost;
		f->pairs_tested = l->ls[lf * l->R + r].in_tested;
		sb_reset(&sb);
		sb_printf(&sb,
			  "leaf %s (rail %s): %u pairs inside it are lost and no one port "
			  "explains them: the leaf's forwarding or its ports",
			  l->leaf_names[lf], rail_key(l, r), lost);
		f_text(f, &sb);
	}
	if (bad >= SPINE_MIN &&
	    (f = new_finding(l, PROBE_SPINE_PATHS, PROBE_SEV_CRITICAL, PROBE_ACT_RESEAT_CABLE))) {
		int32_t best = -1;
		bool any_half = false;

		f_rail(l, f, r);
		for (size_t lf = 0; lf < l->n_leaves; lf++)
			if (l->ls[lf * l->R + r].bad &&
			    (best < 0 ||
			     l->ls[lf * l->R + r].bad > l->ls[(size_t)best * l->R + r].bad))
				best = (int32_t)lf;
		if (best >= 0 && (uint64_t)l->ls[(size_t)best * l->R + r].bad * SPINE_LEAF_DEN <
				     bad * SPINE_LEAF_NUM)
			best = -1;
		for (uint32_t j = 0; j < rl->n; j++) {
			size_t x = (size_t)node_of_ring(l, r, j) * l->R + r;

			any_half |= l->node_bad[x] && l->node_bad[x] * 2 >= l->node_cross[x];
		}
		for (uint32_t j = 0; j < rl->n; j++) {
			uint32_t i = node_of_ring(l, r, j);
			size_t x = (size_t)i * l->R + r;

			if (!l->node_bad[x])
				continue;
			if (best >= 0 ? l->leaf[x] == best
				      : !any_half || l->node_bad[x] * 2 >= l->node_cross[x])
				f_node(l, f, i);
		}
		f->pairs_bad = bad;
		f->pairs_tested = rr->cross_tested;
		sb_reset(&sb);
		sb_printf(&sb, "rail %s: %llu of %llu pairs probed on %u paths lose",
			  rail_key(l, r), (unsigned long long)bad,
			  (unsigned long long)rr->cross_tested, l->p->paths + 1);
		if (rr->partial)
			sb_puts(&sb, " some (");
		labels_text(&sb, rr);
		if (rr->partial)
			sb_putc(&sb, ')');
		if (rr->lost_cross)
			sb_printf(&sb, "%s%llu all of them with no port to blame",
				  rr->partial ? ", " : " ", (unsigned long long)rr->lost_cross);
		if (best >= 0) {
			strlcpy0(f->leaf, l->leaf_names[best], sizeof(f->leaf));
			sb_printf(
			    &sb, "; %u%% of them go through leaf %s: a spine link of that leaf",
			    (unsigned)(100 * (uint64_t)l->ls[(size_t)best * l->R + r].bad / bad),
			    l->leaf_names[best]);
		} else {
			sb_puts(&sb, ": a spine link or switch on some ECMP paths");
		}
		f_text(f, &sb);
	}
	sb_free(&sb);
}

static void rail_only_findings(struct loc *l, const struct probe_locate_opts *o,
			       const struct host_lost *hl, size_t n_hl)
{
	size_t R = l->R;
	uint8_t *unjoined = calloc(nz(R * R), 1);
	uint64_t pairs = 0, bad = 0, lost = 0, tested = 0;
	struct strbuf sb = { 0 };
	struct probe_finding *f = NULL, *g = NULL;

	if (!unjoined) {
		l->oom = true;
		return;
	}
	for (size_t a = 0; a < R; a++)
		for (size_t b = a + 1; b < R; b++) {
			uint64_t t = (uint64_t)l->hp_tested[a * R + b] + l->hp_tested[b * R + a];
			uint64_t x = (uint64_t)l->hp_lost[a * R + b] + l->hp_lost[b * R + a];

			if (!t)
				continue;
			pairs++;
			if (x * RAIL_ONLY_DEN >= t * RAIL_ONLY_NUM) {
				unjoined[a * R + b] = unjoined[b * R + a] = 1;
				bad++;
				lost += x;
				tested += t;
			}
		}
	if (bad && (f = new_finding(l, PROBE_RAIL_ONLY,
				    o && o->cross_nic ? PROBE_SEV_CRITICAL : PROBE_SEV_WARNING,
				    PROBE_ACT_FIX_CONFIG))) {
		for (size_t a = 0; a < R; a++)
			for (size_t b = a + 1; b < R; b++)
				if (unjoined[a * R + b]) {
					f_rail(l, f, (uint16_t)a);
					f_rail(l, f, (uint16_t)b);
				}
		f->pairs_bad = lost;
		f->pairs_tested = tested;
		if (bad == pairs)
			sb_printf(&sb,
				  "no cross-rail pair inside the hosts answers (%llu of %llu lost) "
				  "while the ports pass on their own rails: the rails are not "
				  "joined above the leaves (a rail-only fabric)",
				  (unsigned long long)lost, (unsigned long long)tested);
		else
			sb_printf(&sb,
				  "%llu of %llu rail pairs are not joined: cross-rail pairs inside "
				  "the hosts between them are lost (%llu of %llu) while the ports "
				  "pass on their own rails",
				  (unsigned long long)bad, (unsigned long long)pairs,
				  (unsigned long long)lost, (unsigned long long)tested);
		sb_puts(&sb, o && o->cross_nic
				 ? "; the job's NCCL_CROSS_NIC=1 will hang: set it to 0"
				 : "; a job with NCCL_CROSS_NIC=1 would hang (keep it 0 or 2)");
		f_text(f, &sb);
	}
	for (size_t k = 0; k < n_hl && !l->oom; k++) {
		if (unjoined[(size_t)hl[k].a * R + hl[k].b]) {
			if (f)
				f_node(l, f, hl[k].node);
			continue;
		}
		if (!g && !(g = new_finding(l, PROBE_SPINE_PATHS, PROBE_SEV_CRITICAL,
					    PROBE_ACT_RESEAT_CABLE)))
			break;
		f_node(l, g, hl[k].node);
		f_rail(l, g, hl[k].a);
		f_rail(l, g, hl[k].b);
		g->pairs_bad++;
	}
	if (g) {
		sb_reset(&sb);
		sb_printf(&sb,
			  "%llu cross-rail pairs inside %zu hosts are lost while the same rails "
			  "answer each other on the other hosts: those hosts' paths through the "
			  "spine",
			  (unsigned long long)g->pairs_bad, g->n_nodes);
		f_text(g, &sb);
	}
	free(unjoined);
	sb_free(&sb);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void host_findings(struct loc *l)
{
	size_t n = 0, total = l->p->n_nodes * l->R;
	uint32_t *rtt = malloc(nz(total) * sizeof(*rtt)), median = 0;
	struct strbuf sb = { 0 };

	if (!rtt) {
		l->oom = true;
		return;
	}
	for (size_t x = 0; x < total; x++)
		if (l->ps[x].loop == LOOP_OK && l->ps[x].loop_rtt != PROBE_RTT_NONE)
			rtt[n++] = l->ps[x].loop_rtt;
	if (n) {
		qsort(rtt, n, sizeof(*rtt), cmp_u32);
		median = rtt[(n - 1) / 2];
	}
	free(rtt);
	for (size_t i = 0; i < l->p->n_nodes && !l->oom; i++) {
		const struct probe_plan_node *nd = &l->p->nodes[i];
		struct probe_finding *f = NULL;

		sb_reset(&sb);
		for (uint16_t r = 0; r < l->R; r++) {
			const struct pstat *ps = &l->ps[i * l->R + r];
			const struct probe_plan_port *pp = port_of(l, (uint32_t)i, r);
			bool lost = ps->loop == LOOP_LOST && !(ps->culprit & CUL_LOST);
			bool slow = ps->loop == LOOP_OK && n >= 2 &&
				    ps->loop_rtt != PROBE_RTT_NONE &&
				    ps->loop_rtt > (uint64_t)median * LOOP_SLOW_FACTOR &&
				    ps->loop_rtt > median + LOOP_SLOW_NS;

			if (!lost && !slow)
				continue;
			if (!f) {
				f = new_finding(l, PROBE_HOST_PATH,
						lost ? PROBE_SEV_CRITICAL : PROBE_SEV_WARNING,
						nd->host_action >= 0 &&
							nd->host_action < PROBE__ACTIONS
						    ? (enum probe_action)nd->host_action
						    : PROBE_ACT_DRAIN_NODE);
				if (!f)
					break;
				f_node(l, f, (uint32_t)i);
			}
			if (lost)
				f->severity = PROBE_SEV_CRITICAL;
			f_rail(l, f, r);
			f->pairs_bad++;
			f->pairs_tested++;
			if (lost)
				sb_printf(&sb, "%s%s loopback lost while its peers answer",
					  sb.len ? "; " : "", port_name(pp));
			else
				sb_printf(&sb, "%s%s loopback %.1f us, the fleet's median %.1f us",
					  sb.len ? "; " : "", port_name(pp), ps->loop_rtt / 1e3,
					  median / 1e3);
		}
		if (!f)
			continue;
		sb_printf(&sb, ": the host's own path (PCIe, ACS, IOMMU)%s%s",
			  nd->host_facts ? "; host: " : "", nd->host_facts ? nd->host_facts : "");
		f_text(f, &sb);
	}
	sb_free(&sb);
}

static int cmp_finding(const void *a, const void *b)
{
	const struct probe_finding *x = a, *y = b;

	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	if (x->n_nodes != y->n_nodes)
		return x->n_nodes > y->n_nodes ? -1 : 1;
	if (x->pairs_bad != y->pairs_bad)
		return x->pairs_bad > y->pairs_bad ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	if (x->n_nodes && y->n_nodes && x->nodes[0] != y->nodes[0])
		return x->nodes[0] < y->nodes[0] ? -1 : 1;
	return 0;
}

static int cmp_u16(const void *a, const void *b)
{
	uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;

	return x < y ? -1 : x > y;
}

static void loc_free(struct loc *l)
{
	free(l->ps);
	free(l->leaf);
	strmap_free(&l->leaves);
	free(l->leaf_names);
	free(l->ls);
	free(l->node_bad);
	free(l->node_cross);
	free(l->node_mtu);
	free(l->rr);
	free(l->hist);
	free(l->hp_tested);
	free(l->hp_lost);
	free(l->slice);
}

static int index_leaves(struct loc *l)
{
	const struct probe_plan *p = l->p;
	size_t nr = p->n_nodes * l->R;

	l->leaf = malloc(nz(nr) * sizeof(*l->leaf));
	if (!l->leaf)
		return -ENOMEM;
	for (size_t x = 0; x < nr; x++)
		l->leaf[x] = -1;
	for (size_t i = 0; i < p->n_nodes; i++)
		for (size_t k = 0; k < p->nodes[i].n_ports; k++) {
			const char *name = p->nodes[i].ports[k].leaf;
			int64_t v;

			if (!name || !*name)
				continue;
			v = strmap_get(&l->leaves, name);
			if (v < 0) {
				if (array_grow(&l->leaf_names, &l->cap_leaves, l->n_leaves,
					       sizeof(*l->leaf_names), 16) ||
				    strmap_put(&l->leaves, name, (int64_t)l->n_leaves))
					return -ENOMEM;
				/* the caller's string: the plan's nodes outlive the localizer */
				l->leaf_names[l->n_leaves] = (char *)name;
				v = (int64_t)l->n_leaves++;
			}
			l->leaf[i * l->R + probe_plan_port_rail(p, i, k)] = (int32_t)v;
		}
	return 0;
}

#define ALLOC(ptr, n)                                  \
	do {                                           \
		(ptr) = calloc(nz(n), sizeof(*(ptr))); \
		if (!(ptr))                            \
			goto nomem;                    \
	} while (0)

int probe_locate(const struct probe_plan *p, const struct probe_result *const *res,
		 const struct probe_locate_opts *o, struct probe_findings *out)
{
	struct loc l = { .p = p, .res = res, .R = p->n_rails, .out = out };
	struct host_lost *hl = NULL;
	size_t n_hl = 0, cap_hl = 0, nr = p->n_nodes * p->n_rails;

	memset(out, 0, sizeof(*out));
	ALLOC(out->rails, l.R);
	ALLOC(l.ps, nr);
	if (index_leaves(&l))
		goto nomem;
	ALLOC(l.ls, l.n_leaves * l.R);
	ALLOC(l.node_bad, nr);
	ALLOC(l.node_cross, nr);
	ALLOC(l.node_mtu, nr);
	ALLOC(l.rr, l.R);
	ALLOC(l.hist, l.R + 2);
	ALLOC(l.hp_tested, l.R * l.R);
	ALLOC(l.hp_lost, l.R * l.R);
	for (size_t x = 0; x < nr; x++)
		if (l.leaf[x] >= 0)
			l.ls[(size_t)l.leaf[x] * l.R + x % l.R].members++;

	pass_count(&l);
	find_culprits(&l);
	pass_resid(&l, &hl, &n_hl, &cap_hl);
	out->host.rtt_p50_ns = hist_pct(&l.hist[l.R], 50);
	out->host.rtt_p99_ns = hist_pct(&l.hist[l.R], 99);
	out->loop.rtt_p50_ns = hist_pct(&l.hist[l.R + 1], 50);
	out->loop.rtt_p99_ns = hist_pct(&l.hist[l.R + 1], 99);
	for (uint16_t r = 0; r < l.R && !l.oom; r++) {
		out->rails[r].rtt_p50_ns = hist_pct(&l.hist[r], 50);
		out->rails[r].rtt_p99_ns = hist_pct(&l.hist[r], 99);
		group_culprits(&l, r, CUL_LOST);
		group_culprits(&l, r, CUL_MTU);
	}
	node_findings(&l, CUL_LOST);
	node_findings(&l, CUL_MTU);
	for (uint16_t r = 0; r < l.R && !l.oom; r++)
		resid_findings(&l, r);
	rail_only_findings(&l, o, hl, n_hl);
	host_findings(&l);
	if (l.oom)
		goto nomem;
	for (size_t k = 0; k < out->n; k++) {
		struct probe_finding *f = &out->f[k];
		size_t m = 0;

		if (f->n_nodes)
			qsort(f->nodes, f->n_nodes, sizeof(uint32_t), cmp_u32);
		for (size_t j = 0; j < f->n_nodes; j++)
			if (!m || f->nodes[m - 1] != f->nodes[j])
				f->nodes[m++] = f->nodes[j];
		f->n_nodes = m;
		if (f->n_rails)
			qsort(f->rails, f->n_rails, sizeof(uint16_t), cmp_u16);
	}
	if (out->n)
		qsort(out->f, out->n, sizeof(*out->f), cmp_finding);
	free(hl);
	loc_free(&l);
	return 0;
nomem:
	free(hl);
	loc_free(&l);
	probe_findings_free(out);
	return -ENOMEM;
}

void probe_findings_free(struct probe_findings *f)
{
	if (!f)
		return;
	for (size_t k = 0; k < f->n; k++) {
		free(f->f[k].nodes);
		free(f->f[k].rails);
	}
	free(f->f);
	free(f->rails);
	free(f->untested);
	memset(f, 0, sizeof(*f));
}
