// SPDX-License-Identifier: MIT
/*
 * The evaluator.  Values are three-valued: a value, or unknown (an absent
 * field with its reason, or an error such as "needs two samples").  Logic
 * follows Kleene: false && unknown is false, true || unknown is true; every
 * other operator with an unknown operand is unknown.  Both sides of && and
 * || are always evaluated so counter functions see every sample.
 *
 * Numbers are doubles (exact up to 2^53, which no rule counter reaches in
 * practice).  Nothing here allocates: history rings are allocated when a
 * (rule, object) result is created.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules_int.h"
#include "util.h"

static struct val unknown_err(const struct expr *at, enum verr why, int extra)
{
	return (
	    struct val){ .st = V_ERROR, .why = (uint8_t)why, .at = at, .extra = (int16_t)extra };
}

static struct val num(double n)
{
	return (struct val){ .st = V_OK, .v.n = n };
}

static struct val boolean(bool b)
{
	return (struct val){ .st = V_OK, .v.b = b };
}

/*
 * The kernel's RoCE path MTU for a netdev MTU: iboe_get_mtu() in
 * include/rdma/ib_addr.h subtracts the RoCE headers it may need
 * (IB_GRH_BYTES 40 + IB_UDP_BYTES 8 + IB_BTH_BYTES 12 + IB_EXT_XRC_BYTES 4 +
 * IB_EXT_ATOMICETH_BYTES 28 + IB_ICRC_BYTES 4 = 96, include/rdma/ib_pack.h)
 * and takes the largest IB MTU that fits; 0 when not even 256 fits (mlx4 and
 * hns then use 256).  So 1500 -> 1024, 2200 -> 2048, >= 4192 -> 4096.
 */
int rules_ib_mtu_for(int64_t netdev_mtu)
{
	static const int ib_mtus[] = { 4096, 2048, 1024, 512, 256 };
	int64_t payload = netdev_mtu - (40 + 8 + 12 + 4 + 28 + 4);

	for (size_t i = 0; i < ARRAY_SIZE(ib_mtus); i++)
		if (payload >= ib_mtus[i])
			return ib_mtus[i];
	return 0;
}

/* ---- history rings ---- */

int rx_ring_init(struct ring *r, const struct ring_spec *spec)
{
	memset(r, 0, sizeof(*r));
	r->cap = RING_CAP;
	r->ncomp = spec->ncomp;
	r->window_ns = spec->window_ns;
	/*
	 * Keep at most RING_CAP samples: older samples are kept only when at
	 * least window/(cap-8) apart, so the ring always spans the window
	 * whatever the poll interval.  Totals are accumulated with reset
	 * handling as samples arrive, so thinning loses no increase.
	 */
	r->spacing_ns = spec->window_ns / (RING_CAP - 8);
	r->t = calloc(RING_CAP, sizeof(*r->t));
	r->mask = calloc(RING_CAP, sizeof(*r->mask));
	r->acc = calloc((size_t)RING_CAP * r->ncomp, sizeof(*r->acc));
	if (!r->t || !r->mask || !r->acc) {
		rx_ring_free(r);
		return -ENOMEM;
	}
	return 0;
}

void rx_ring_free(struct ring *r)
{
	free(r->t);
	free(r->mask);
	free(r->acc);
	r->t = NULL;
	r->mask = NULL;
	r->acc = NULL;
}

void rx_ring_move(struct ring *dst, struct ring *src)
{
	rx_ring_free(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

static int ring_idx(const struct ring *r, int i) /* i-th oldest */
{
	return (r->first + i) % r->cap;
}

/* Record a sample of x at t: raw values (delta) or running totals (rate, increase). */
static void ring_push(struct ring *r, const struct val *x, int64_t t, bool raw)
{
	uint8_t mask = r->ncomp == 1 ? 1 : x->mask;
	int slot;

	if (r->n && t < r->t[ring_idx(r, r->n - 1)]) {
		/* Time went backwards (a replay restarted, a clock step): start over. */
		r->n = 0;
		r->first = 0;
		r->have_prev = false;
		memset(r->total, 0, sizeof(r->total));
	}
	for (int p = 0; p < r->ncomp; p++) {
		double v = r->ncomp == 1 ? x->v.n : x->v.a[p];

		if (!(mask & (1u << p)))
			continue;
		if (r->have_prev && (r->prev_mask & (1u << p))) {
			/*
			 * A decrease is a counter reset (driver reload, port
			 * reset): count from the new value.  A 32-bit counter
			 * that wraps looks the same and is counted the same way;
			 * what it counted between the last sample and the wrap
			 * is lost.
			 */
			r->total[p] += v >= r->prev_raw[p] ? v - r->prev_raw[p] : v;
		}
		r->prev_raw[p] = v;
	}
	r->prev_mask = mask;
	r->have_prev = true;

	if (r->n && t == r->t[ring_idx(r, r->n - 1)]) {
		slot = ring_idx(r, r->n - 1); /* same sample time: replace */
	} else if (r->n >= 2 && t - r->t[ring_idx(r, r->n - 2)] < r->spacing_ns) {
		slot = ring_idx(r, r->n - 1); /* too close to the one before: thin */
	} else if (r->n < r->cap) {
		slot = ring_idx(r, r->n);
		r->n++;
	} else {
		slot = r->first;
		r->first = (uint16_t)((r->first + 1) % r->cap);
	}
	r->t[slot] = t;
	r->mask[slot] = mask;
	for (int p = 0; p < r->ncomp; p++)
		r->acc[(size_t)slot * r->ncomp + p] = raw ? r->prev_raw[p] : r->total[p];
}

/*
 * IB PortCounters saturate instead of wrapping (IBA 16.1.3.5): a 32-bit port
 * counter such as port_xmit_wait on older HCAs stops at 2^32-1.  A sample
 * there says nothing about what happened since it got there, so rate,
 * increase and delta over it are unknown, never 0.
 */
#define COUNTER_SATURATED 4294967295.0

/*
 * The newest sample before the newest that is at or before cut, else the
 * oldest: its position from the oldest.  Samples are in time order (a step
 * back empties the ring), so a binary search: a ring spans its window, and
 * scanning it from either end costs a pass over it on every evaluation.
 */
static int window_start(const struct ring *r, int64_t cut)
{
	int lo = 0, hi = r->n - 2; /* the answer is in [lo, hi] */

	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;

		if (r->t[ring_idx(r, mid)] <= cut)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static void note_window(struct ectx *cx, const struct ring *r, int64_t observed)
{
	if (!cx->windowed || observed < cx->observed_ns)
		cx->observed_ns = observed;
	if (r->window_ns > cx->window_ns)
		cx->window_ns = r->window_ns;
	cx->windowed = true;
}

static struct val counter_fn(const struct expr *e, const struct val *x, struct ectx *cx)
{
	struct ring *r = &cx->st->rings[e->u.call.ring];
	enum func_id fn = e->u.call.fn;
	int start = -1, now;
	double secs;
	struct val out = { .st = V_OK };
	uint8_t mask;

	ring_push(r, x, cx->t, fn == FN_DELTA);
	now = ring_idx(r, r->n - 1);
	if (r->n >= 2)
		start = ring_idx(r, window_start(r, cx->t - r->window_ns));
	note_window(cx, r, start < 0 ? 0 : r->t[now] - r->t[start]);
	if (start < 0)
		return unknown_err(e, VE_NEED_SAMPLES, r->n);
	for (int p = 0; p < r->ncomp; p++)
		if ((r->mask[now] & (1u << p)) && r->prev_raw[p] == COUNTER_SATURATED)
			return unknown_err(e, VE_SATURATED, r->ncomp == 1 ? -1 : p);
	secs = (double)(r->t[now] - r->t[start]) / 1e9;
	mask = r->mask[now];
	if (fn == FN_DELTA)
		mask &= r->mask[start];
	for (int p = 0; p < r->ncomp; p++) {
		double d =
		    r->acc[(size_t)now * r->ncomp + p] - r->acc[(size_t)start * r->ncomp + p];

		if (fn == FN_RATE)
			d = secs > 0 ? d / secs : 0;
		if (r->ncomp == 1)
			out.v.n = d;
		else
			out.v.a[p] = (mask & (1u << p)) ? d : 0;
	}
	out.mask = r->ncomp == 1 ? 0 : mask;
	return out;
}

/* ---- fields ---- */

static const struct object *hop_obj(const struct ectx *cx, uint8_t hop)
{
	switch (hop) {
	case HOP_NETDEV:
		return cx->obj->netdev;
	case HOP_NODE:
		return &cx->m->node;
	default:
		return cx->obj;
	}
}

static struct val eval_field(const struct expr *e, struct ectx *cx)
{
	const struct object *o = hop_obj(cx, e->u.field.hop);
	const struct field_val *f;
	struct val v = { .st = V_OK };

	if (!o)
		return unknown_err(e, VE_NO_LINK, 0);
	f = &o->f[e->u.field.id];
	if (f->state != ABS_NONE)
		return (struct val){
			.st = V_ABSENT, .why = f->state, .err = f->err, .at = e, .extra = -1
		};
	switch (fields[e->u.field.id].type) {
	case VT_INT:
		v.v.n = (double)f->v.i;
		break;
	case VT_BOOL:
		v.v.b = f->v.i != 0;
		break;
	case VT_FLOAT:
		v.v.n = f->v.d;
		break;
	case VT_STR:
		v.v.s = f->v.s;
		break;
	case VT_PRIOSET:
		v.v.set = f->v.set;
		break;
	case VT_DSCPSET:
		v.v.set = f->v.dset;
		break;
	case VT_PRIO_ARRAY:
		v.mask = f->mask;
		for (int p = 0; p < RW_PRIO_COUNT; p++)
			v.v.a[p] = (f->mask & (1u << p)) ? (double)f->v.arr[p] : 0;
		break;
	case VT_DSCP_MAP:
		v.v.dscp = f->v.dscp;
		break;
	case VT_GIDS:
		v.v.gids = f->v.gids;
		break;
	case VT_PCI_PAIRS:
		v.v.pairs = f->v.pairs;
		break;
	}
	return v;
}

static struct val eval_cset(const struct expr *e, struct ectx *cx)
{
	const struct object *o = hop_obj(cx, e->u.cs.hop);
	const struct counter_set *cs;
	/* [0]: the name's index (-1: not in the set), [1]: the names_gen it is of */
	int32_t *cache = &cx->st->cache[2 * e->u.cs.cache];
	int i;

	if (!o)
		return unknown_err(e, VE_NO_LINK, 0);
	cs = &o->cs[e->u.cs.cset];
	/*
	 * Names stay where they are until a name is added: found (or not) once
	 * per set of names, so a poll compares no strings, for a counter the
	 * device lacks neither.
	 */
	if ((uint32_t)cache[1] != cs->names_gen || cache[0] >= (int32_t)cs->n) {
		cache[0] = cset_find(cs, e->u.cs.name);
		cache[1] = (int32_t)cs->names_gen;
	}
	i = cache[0];
	if (i < 0 || !cs->present[i]) {
		bool any = false;

		for (uint32_t k = 0; k < cs->n && !any; k++)
			any = cs->present[k];
		/* An empty set means nobody collected it; a set without this name, the device lacks
		 * it. */
		return (struct val){ .st = V_ABSENT,
				     .why = any ? ABS_UNSUPPORTED : ABS_NOT_COLLECTED,
				     .at = e,
				     .extra = -1 };
	}
	return num((double)cs->vals[i]);
}

/* ---- operators ---- */

/*
 * The value a VE_RANGE diagnostic shows: the number when it fits the
 * diagnostic's int16 (casting 1e30 or NaN to an integer is undefined),
 * RANGE_HUGE when it does not.
 */
#define RANGE_HUGE INT16_MIN
static int range_extra(double d)
{
	return d > -32768.0 && d < 32768.0 ? (int)d : RANGE_HUGE;
}

static bool to_index(const struct val *v, int max, int *out)
{
	double d = v->v.n;

	if (d != floor(d) || d < 0 || d >= max)
		return false;
	*out = (int)d;
	return true;
}

static struct val eval_index(const struct expr *e, struct ectx *cx)
{
	struct val b = rx_eval(e->u.index.base, cx), ix = rx_eval(e->u.index.idx, cx);
	int i;

	if (b.st != V_OK)
		return b;
	if (ix.st != V_OK)
		return ix;
	if (e->u.index.idx->type == RT_SET) {
		b.mask &= (uint8_t)ix.v.set;
		return b;
	}
	if (e->u.index.base->type == RT_DSCPMAP) {
		if (!to_index(&ix, RW_DSCP_COUNT, &i))
			return unknown_err(e, VE_RANGE, range_extra(ix.v.n));
		return num(b.v.dscp[i]);
	}
	if (!to_index(&ix, RW_PRIO_COUNT, &i))
		return unknown_err(e, VE_RANGE, range_extra(ix.v.n));
	if (!(b.mask & (1u << i))) {
		/* The array is there but not this priority (mlx5 shows pause counters only with PFC
		 * on). */
		return (struct val){ .st = V_ABSENT,
				     .why = ABS_UNSUPPORTED,
				     .at = e->u.index.base,
				     .extra = (int16_t)i };
	}
	return num(b.v.a[i]);
}

static struct val eval_setlit(const struct expr *e, struct ectx *cx)
{
	uint64_t bits = 0;

	for (int i = 0; i < e->u.set.n; i++) {
		struct val a = rx_eval(e->u.set.lo[i], cx), b;
		int lo, hi;

		if (a.st != V_OK)
			return a;
		b = a;
		if (e->u.set.hi[i]) {
			b = rx_eval(e->u.set.hi[i], cx);
			if (b.st != V_OK)
				return b;
		}
		if (!to_index(&a, RW_DSCP_COUNT, &lo))
			return unknown_err(e->u.set.lo[i], VE_RANGE, range_extra(a.v.n));
		if (!to_index(&b, RW_DSCP_COUNT, &hi))
			return unknown_err(e->u.set.hi[i], VE_RANGE, range_extra(b.v.n));
		for (int v = lo; v <= hi; v++)
			bits |= 1ULL << v;
	}
	return (struct val){ .st = V_OK, .v.set = bits };
}

static int cmp_num(double a, double b)
{
	return a < b ? -1 : a > b;
}

static struct val eval_binary(const struct expr *e, struct ectx *cx)
{
	enum tok_kind op = e->u.bin.op;
	enum rtype t = e->u.bin.a->type;
	struct val a = rx_eval(e->u.bin.a, cx), b = rx_eval(e->u.bin.b, cx);
	int c;

	if (op == TK_AND) {
		if ((a.st == V_OK && !a.v.b) || (b.st == V_OK && !b.v.b))
			return boolean(false);
		if (a.st != V_OK)
			return a;
		return b.st != V_OK ? b : boolean(true);
	}
	if (op == TK_OR) {
		if ((a.st == V_OK && a.v.b) || (b.st == V_OK && b.v.b))
			return boolean(true);
		if (a.st != V_OK)
			return a;
		return b.st != V_OK ? b : boolean(false);
	}
	if (a.st != V_OK)
		return a;
	if (b.st != V_OK)
		return b;
	switch (op) {
	case TK_EQ:
	case TK_NE:
		switch (t) {
		case RT_NUM:
			c = a.v.n == b.v.n;
			break;
		case RT_BOOL:
			c = a.v.b == b.v.b;
			break;
		case RT_STR:
			c = !strcmp(a.v.s, b.v.s);
			break;
		default:
			c = a.v.set == b.v.set;
			break;
		}
		return boolean(op == TK_EQ ? c : !c);
	case TK_LT:
	case TK_LE:
	case TK_GT:
	case TK_GE:
		if (t == RT_SET) {
			/* subset / superset; strict for < and > */
			bool sub = !(a.v.set & ~b.v.set), sup = !(b.v.set & ~a.v.set),
			     eq = a.v.set == b.v.set;

			return boolean(op == TK_LE   ? sub
				       : op == TK_GE ? sup
				       : op == TK_LT ? sub && !eq
						     : sup && !eq);
		}
		c = cmp_num(a.v.n, b.v.n);
		return boolean(op == TK_LT   ? c < 0
			       : op == TK_LE ? c <= 0
			       : op == TK_GT ? c > 0
					     : c >= 0);
	case TK_IN: {
		int i;

		return boolean(to_index(&a, RW_DSCP_COUNT, &i) && (b.v.set & (1ULL << i)));
	}
	case TK_PLUS:
		return num(a.v.n + b.v.n);
	case TK_MINUS:
		if (t == RT_SET)
			return (struct val){ .st = V_OK, .v.set = a.v.set & ~b.v.set };
		return num(a.v.n - b.v.n);
	case TK_STAR:
		return num(a.v.n * b.v.n);
	case TK_SLASH:
		if (b.v.n == 0)
			return unknown_err(e, VE_DIV_ZERO, 0);
		return num(a.v.n / b.v.n);
	case TK_PERCENT:
		if (b.v.n == 0)
			return unknown_err(e, VE_DIV_ZERO, 0);
		return num(fmod(a.v.n, b.v.n));
	case TK_PIPE:
		return (struct val){ .st = V_OK, .v.set = a.v.set | b.v.set };
	case TK_AMP:
		return (struct val){ .st = V_OK, .v.set = a.v.set & b.v.set };
	default:
		break;
	}
	return unknown_err(e, VE_RANGE, 0);
}

/* ---- functions ---- */

static bool gid_family(const char *gid, const char *fam)
{
	bool v4 = !strncasecmp(gid, "0000:0000:0000:0000:0000:ffff:", 30);
	bool ll = !strncasecmp(gid, "fe80:", 5);

	if (!strcmp(fam, "ipv4"))
		return v4;
	if (!strcmp(fam, "link-local"))
		return ll;
	if (!strcmp(fam, "ipv6"))
		return !v4 && !ll;
	return true;
}

static bool gid_zero(const char *gid)
{
	for (const char *p = gid; *p; p++)
		if (*p != '0' && *p != ':')
			return false;
	return true;
}

static struct val eval_call(const struct expr *e, struct ectx *cx)
{
	struct expr *const *args = e->u.call.args;
	struct val a[3], v;
	int n = e->u.call.n;

	switch (e->u.call.fn) {
	case FN_RATE:
	case FN_INCREASE:
	case FN_DELTA:
		v = rx_eval(args[0], cx);
		if (v.st != V_OK)
			return v;
		return counter_fn(e, &v, cx);
	case FN_PRESENT:
		v = rx_eval(args[0], cx);
		return boolean(v.st == V_OK);
	case FN_SUPPORTED:
		v = rx_eval(args[0], cx);
		/*
		 * false only when there is nothing to check: the device lacks it,
		 * nobody collects it, nothing was measured yet, or no link
		 */
		return boolean(
		    !((v.st == V_ABSENT && (v.why == ABS_UNSUPPORTED ||
					    v.why == ABS_NOT_COLLECTED || v.why == ABS_NO_DATA)) ||
		      (v.st == V_ERROR && v.why == VE_NO_LINK)));
	case FN_COALESCE: {
		struct val found = { 0 }, first = { 0 };
		bool have = false;

		/* evaluate all, so counter functions inside see every sample */
		for (int i = 0; i < n; i++) {
			v = rx_eval(args[i], cx);
			if (!have && v.st == V_OK) {
				found = v;
				have = true;
			}
			if (!i)
				first = v;
		}
		return have ? found : first;
	}
	case FN_MIN:
	case FN_MAX:
		if (n >= 2) {
			double best = 0;
			struct val bad = { .st = V_OK };

			/* evaluate all, so counter functions inside see every sample */
			for (int i = 0; i < n; i++) {
				v = rx_eval(args[i], cx);
				if (v.st != V_OK && bad.st == V_OK)
					bad = v;
				if (v.st == V_OK &&
				    (!i || (e->u.call.fn == FN_MIN ? v.v.n < best : v.v.n > best)))
					best = v.v.n;
			}
			if (bad.st != V_OK)
				return bad;
			return num(best);
		}
		/* one per-priority array: */
		/* fall through */
	case FN_SUM:
	case FN_COUNT: {
		double acc = 0;
		bool first = true;

		v = rx_eval(args[0], cx);
		if (v.st != V_OK)
			return v;
		switch (args[0]->type) {
		case RT_SET:
			return num(__builtin_popcountll(v.v.set));
		case RT_GIDS:
			return num(v.v.gids ? (double)v.v.gids->n : 0);
		case RT_PAIRS:
			return num(v.v.pairs ? (double)v.v.pairs->n : 0);
		default:
			break;
		}
		/* over the present priorities; an empty array gives 0 */
		for (int p = 0; p < RW_PRIO_COUNT; p++) {
			double x = v.v.a[p];

			if (!(v.mask & (1u << p)))
				continue;
			switch (e->u.call.fn) {
			case FN_COUNT:
				acc += x > 0;
				break;
			case FN_SUM:
				acc += x;
				break;
			case FN_MIN:
				acc = first || x < acc ? x : acc;
				break;
			default:
				acc = first || x > acc ? x : acc;
				break;
			}
			first = false;
		}
		return num(acc);
	}
	case FN_ABS:
	case FN_IB_MTU_FOR:
	case FN_TOS_DSCP:
		v = rx_eval(args[0], cx);
		if (v.st != V_OK)
			return v;
		if (e->u.call.fn == FN_ABS)
			return num(fabs(v.v.n));
		if (e->u.call.fn == FN_IB_MTU_FOR) {
			/* no MTU is near 2^63; NaN and the like are not MTUs */
			if (!(fabs(v.v.n) < 1e15))
				return unknown_err(e, VE_RANGE, range_extra(v.v.n));
			return num(rules_ib_mtu_for((int64_t)v.v.n));
		}
		/* The ToS byte is DSCP << 2 | ECN (RFC 2474, RFC 3168). */
		if (!(v.v.n >= 0 && v.v.n <= 255) || v.v.n != floor(v.v.n))
			return unknown_err(e, VE_RANGE, range_extra(v.v.n));
		return num((double)((int)v.v.n >> 2));
	case FN_GID_COUNT: {
		struct val nd = { .st = V_OK, .v.s = NULL };
		size_t cnt = 0;

		if (n == 4) {
			nd = rx_eval(args[3], cx);
			if (nd.st != V_OK)
				return nd;
		}
		for (int i = 0; i < 3; i++) {
			a[i] = rx_eval(args[i], cx);
			if (a[i].st != V_OK)
				return a[i];
		}
		for (size_t i = 0; a[0].v.gids && i < a[0].v.gids->n; i++) {
			const struct gid_entry *g = &a[0].v.gids->e[i];

			if (gid_zero(g->gid))
				continue; /* an unused table entry */
			if (strcmp(a[1].v.s, "any") && strcasecmp(a[1].v.s, g->type))
				continue;
			if (nd.v.s && strcmp(nd.v.s, g->netdev))
				continue;
			if (gid_family(g->gid, a[2].v.s))
				cnt++;
		}
		return num((double)cnt);
	}
	case FN_IF: {
		struct val c = rx_eval(args[0], cx), b[2];

		/* both branches, so counter functions inside see every sample */
		b[0] = rx_eval(args[1], cx);
		b[1] = rx_eval(args[2], cx);
		if (c.st != V_OK)
			return c;
		v = b[c.v.b ? 0 : 1];
		/* a mixed-type if() (summaries only) is printed as the branch it took */
		if (v.st == V_OK && args[c.v.b ? 1 : 2]->type != RT_ANY)
			v.at = args[c.v.b ? 1 : 2];
		return v;
	}
	case FN_DISTINCT:
	case FN_OUTLIERS:
	case FN_COUNT_NODES:
	case FN_MAJORITY:
		/* the argument was evaluated unit by unit (fleet.c); these read the group */
		if (!cx->agg)
			return unknown_err(e, VE_RANGE, 0);
		if (e->u.call.fn == FN_DISTINCT)
			return num((double)cx->agg->distinct);
		if (e->u.call.fn == FN_OUTLIERS)
			return num((double)cx->agg->outliers);
		if (e->u.call.fn == FN_COUNT_NODES)
			return num((double)cx->agg->nodes);
		if (!cx->agg->have_majority)
			return unknown_err(e, VE_NO_MAJORITY, 0);
		return cx->agg->majority;
	case FN__COUNT:
		break;
	}
	return unknown_err(e, VE_RANGE, 0);
}

struct val rx_eval(const struct expr *e, struct ectx *cx)
{
	struct val v;

	switch (e->kind) {
	case N_CONST:
		return e->u.c;
	case N_FIELD:
		return eval_field(e, cx);
	case N_CSET:
		return eval_cset(e, cx);
	case N_SETLIT:
		return eval_setlit(e, cx);
	case N_INDEX:
		return eval_index(e, cx);
	case N_UNARY:
		v = rx_eval(e->u.un.a, cx);
		if (v.st != V_OK)
			return v;
		if (e->u.un.op == TK_NOT)
			return boolean(!v.v.b);
		return num(-v.v.n);
	case N_BINARY:
		return eval_binary(e, cx);
	case N_CALL:
		return eval_call(e, cx);
	case N_OUTCOME:
		if (!cx->outcome)
			return (struct val){
				.st = V_ABSENT, .why = ABS_NOT_COLLECTED, .at = e, .extra = -1
			};
		return (struct val){ .st = V_OK, .v.s = cx->outcome };
	}
	return unknown_err(e, VE_RANGE, 0);
}

/* ---- text ---- */

void tb_putn(struct tbuf *tb, const char *s, size_t n)
{
	if (!tb->cap)
		return;
	if (tb->len + n >= tb->cap) {
		n = tb->cap - 1 - tb->len;
		/* truncated: do not cut a UTF-8 sequence in half */
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(tb->buf + tb->len, s, n);
	tb->len += n;
	tb->buf[tb->len] = '\0';
}

void tb_puts(struct tbuf *tb, const char *s)
{
	tb_putn(tb, s, strlen(s));
}

void tb_printf(struct tbuf *tb, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		tb_putn(tb, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void fmt_num(struct tbuf *tb, double d)
{
	/*
	 * Integers (most values: counters, MTUs, priorities) without printf,
	 * which every summary of every poll went through: the digits "%.0f"
	 * gives, "-0" included.
	 */
	if (d == floor(d) && fabs(d) < 9007199254740992.0) {
		char tmp[24], *p = tmp + sizeof(tmp);
		uint64_t u = d < 0 ? (uint64_t) - (int64_t)d : (uint64_t)d;

		do {
			*--p = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (signbit(d))
			*--p = '-';
		tb_putn(tb, p, (size_t)(tmp + sizeof(tmp) - p));
	} else {
		tb_printf(tb, "%.4g", d);
	}
}

static void fmt_set(struct tbuf *tb, uint64_t set)
{
	bool first = true;

	tb_putn(tb, "{", 1);
	for (int i = 0; i < RW_DSCP_COUNT; i++) {
		int j = i;

		if (!(set & (1ULL << i)))
			continue;
		while (j + 1 < RW_DSCP_COUNT && (set & (1ULL << (j + 1))))
			j++;
		if (!first)
			tb_putn(tb, ",", 1);
		first = false;
		if (j >= i + 2) {
			tb_printf(tb, "%d..%d", i, j);
			i = j;
		} else {
			tb_printf(tb, "%d", i);
		}
	}
	tb_putn(tb, "}", 1);
}

void rx_format_val(struct tbuf *tb, const struct val *v, enum rtype t)
{
	if (v->st != V_OK) {
		tb_puts(tb, v->st == V_ABSENT ? "absent" : "unknown");
		return;
	}
	switch (t) {
	case RT_NUM:
		fmt_num(tb, v->v.n);
		break;
	case RT_BOOL:
		tb_puts(tb, v->v.b ? "true" : "false");
		break;
	case RT_STR:
		tb_puts(tb, v->v.s);
		break;
	case RT_SET:
		fmt_set(tb, v->v.set);
		break;
	case RT_ARRAY:
		tb_putn(tb, "[", 1);
		for (int p = 0; p < RW_PRIO_COUNT; p++) {
			if (p)
				tb_putn(tb, ",", 1);
			if (v->mask & (1u << p))
				fmt_num(tb, v->v.a[p]);
			else
				tb_putn(tb, "-", 1);
		}
		tb_putn(tb, "]", 1);
		break;
	case RT_DSCPMAP: {
		bool first = true;

		tb_putn(tb, "{", 1);
		for (int d = 0; d < RW_DSCP_COUNT; d++) {
			if (v->v.dscp[d] < 0)
				continue;
			tb_printf(tb, "%s%d:%d", first ? "" : ",", d, v->v.dscp[d]);
			first = false;
		}
		tb_putn(tb, "}", 1);
		break;
	}
	case RT_GIDS:
		tb_printf(tb, "%zu GIDs", v->v.gids ? v->v.gids->n : 0);
		break;
	case RT_PAIRS:
		tb_printf(tb, "%zu GPU-NIC paths", v->v.pairs ? v->v.pairs->n : 0);
		break;
	case RT_DUR:
		tb_printf(tb, "%gs", (double)v->v.dur / 1e9);
		break;
	case RT_ANY:
		break;
	}
}

void rx_format_unknown(struct tbuf *tb, const struct val *v)
{
	const struct expr *at = v->at;

	if (at)
		tb_putn(tb, at->src + at->off, (size_t)at->len);
	if (v->st == V_ABSENT) {
		if (v->extra >= 0 && at && at->type == RT_ARRAY)
			tb_printf(tb, "[%d]", v->extra);
		tb_puts(tb, " absent: ");
		tb_puts(tb, absent_reason_name((enum absent_reason)v->why));
		if (v->err && v->why != ABS_UNSUPPORTED)
			tb_printf(tb, " (%s)", strerror(v->err));
		return;
	}
	switch ((enum verr)v->why) {
	case VE_NO_LINK:
		tb_puts(tb, " absent: the port is bound to no netdev");
		break;
	case VE_NEED_SAMPLES:
		tb_printf(tb, ": needs two samples, have %d", v->extra);
		break;
	case VE_DIV_ZERO:
		tb_puts(tb, ": division by zero");
		break;
	case VE_RANGE:
		if (v->extra == RANGE_HUGE)
			tb_puts(tb, ": value out of range");
		else
			tb_printf(tb, ": value %d out of range", v->extra);
		break;
	case VE_NOMEM:
		tb_puts(tb, ": out of memory");
		break;
	case VE_SATURATED:
		if (v->extra >= 0)
			tb_printf(tb, ": priority %d", v->extra);
		tb_puts(tb, ": counter stuck at 2^32-1 (saturated), what it counted is unknown");
		break;
	case VE_NO_MAJORITY:
		tb_puts(tb, ": no majority (a tie between the most common values)");
		break;
	case VE_NONE:
		break;
	}
}

uint64_t rx_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
