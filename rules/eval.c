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

/* Where a sample at t goes (t at or after the newest): see the comment inside. */
static int ring_slot(struct ring *r, int64_t t)
{
	int slot;

	if (r->n && t == r->t[ring_idx(r, r->n - 1)]) {
		slot = ring_idx(r, r->n - 1); /* same sample time: replace */
	} else if (r->n >= 2 &&
		   r->t[ring_idx(r, r->n - 1)] - r->t[ring_idx(r, r->n - 2)] < r->spacing_ns) {
		/*
		 * The newest sample is too close to the one before it: the new one
		 * takes its place.  Every sample but the newest is then at least
		 * spacing after the one before, so the ring spans cap - 1 spacings
		 * (more than the window) at any poll interval.  Measuring the new
		 * sample against the one before the newest instead kept two samples
		 * per spacing: a 1 m window at 100-200 ms was never whole ("only 50s
		 * of the 1m window observed" for ever).
		 */
		slot = ring_idx(r, r->n - 1);
	} else if (r->n < r->cap) {
		slot = ring_idx(r, r->n);
		r->n++;
	} else {
		slot = r->first;
		r->first = (uint16_t)((r->first + 1) % r->cap);
	}
	return slot;
}

/* The sample at t: the last raw values (delta) or the running totals (rate, increase). */
static void ring_store(struct ring *r, int64_t t, uint8_t mask, bool raw)
{
	int slot = ring_slot(r, t);

	r->t[slot] = t;
	r->mask[slot] = mask;
	for (int p = 0; p < r->ncomp; p++)
		r->acc[(size_t)slot * r->ncomp + p] = raw ? r->prev_raw[p] : r->total[p];
}

/* Record a sample of x at t: raw values (delta) or running totals (rate, increase). */
static void ring_push(struct ring *r, const struct val *x, int64_t t, bool raw)
{
	uint8_t mask = r->ncomp == 1 ? 1 : x->mask;

	if (r->n && t < r->t[ring_idx(r, r->n - 1)]) {
		/* Time went backwards (a replay restarted, a clock step): start over. */
		r->n = 0;
		r->first = 0;
		r->have_prev = false;
		r->has_reset = false;
		memset(r->total, 0, sizeof(r->total));
	}
	for (int p = 0; p < r->ncomp; p++) {
		double v = r->ncomp == 1 ? x->v.n : x->v.a[p];

		if (!(mask & (1u << p)))
			continue;
		if (r->have_prev && (r->prev_mask & (1u << p))) {
			/*
			 * A decrease is a counter reset (driver reload, port
			 * reset, a 32-bit wrap): rebaseline at the new value and
			 * count nothing for this sample.  Counting the new value
			 * would turn link_downed 1000 -> 999 into 999 events; what
			 * a reset to 0 then counted up to is lost, and a reset
			 * never makes an event.
			 */
			if (v >= r->prev_raw[p]) {
				r->total[p] += v - r->prev_raw[p];
			} else if (!r->has_reset || r->reset_ns != t) {
				r->has_reset = true;
				r->reset_ns = t;
				r->reset_from = r->prev_raw[p];
				r->reset_to = v;
			}
		}
		r->prev_raw[p] = v;
	}
	r->prev_mask = mask;
	r->have_prev = true;
	ring_store(r, t, mask, raw);
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

/* The newest sample's position, and in *start the window's first (-1: one sample). */
static int window_of(struct ectx *cx, const struct ring *r, int *start)
{
	int now = ring_idx(r, r->n - 1);

	*start = r->n >= 2 ? ring_idx(r, window_start(r, cx->t - r->window_ns)) : -1;
	note_window(cx, r, *start < 0 ? 0 : r->t[now] - r->t[*start]);
	if (r->has_reset && *start >= 0 && r->reset_ns > r->t[*start] && !cx->reset) {
		cx->reset = true;
		cx->reset_from = r->reset_from;
		cx->reset_to = r->reset_to;
	}
	return now;
}

/* Are the ring's last values what a push of them again would count nothing for? */
static bool ring_again_is_nothing(const struct ring *r, int64_t t)
{
	if (!r->have_prev || (r->n && t < r->t[ring_idx(r, r->n - 1)]))
		return false; /* a first sample, or time went back: ring_push starts over */
	for (int p = 0; p < r->ncomp; p++)
		if (r->prev_raw[p] != r->prev_raw[p])
			return false; /* NaN is not >= itself: ring_push would call it a reset */
	return true;
}

void rx_ring_again(struct ring *r, int64_t t)
{
	if (!ring_again_is_nothing(r, t)) {
		struct val x = { .st = V_OK, .mask = r->prev_mask };

		if (r->ncomp == 1)
			x.v.n = r->prev_raw[0];
		else
			for (int p = 0; p < r->ncomp; p++)
				x.v.a[p] = r->prev_raw[p];
		/* what a settled rule samples is a running total (rate, increase), never raw */
		ring_push(r, &x, t, false);
	} else {
		/* ring_push() of the same values: no total moves, only where the sample goes */
		ring_store(r, t, r->ncomp == 1 ? 1 : r->prev_mask, false);
	}
}

void rx_ring_touch(struct ectx *cx, int i)
{
	struct ring *r = &cx->st->rings[i];
	int start;

	rx_ring_again(r, cx->t);
	window_of(cx, r, &start);
}

struct val rx_counter(const struct expr *e, const struct val *x, struct ectx *cx,
		      enum counter_kind k)
{
	struct ring *r = &cx->st->rings[e->u.call.ring];
	int start = -1, now;
	double secs;
	struct val out = { .st = V_OK };
	uint8_t mask;

	ring_push(r, x, cx->t, k == CTR_DELTA);
	if (e->u.call.ring < 64)
		cx->pushed |= 1ULL << e->u.call.ring;
	else
		cx->moving = true;
	now = window_of(cx, r, &start);
	if (start < 0) {
		cx->moving = true;
		return rx_err(e, VE_NEED_SAMPLES, r->n);
	}
	for (int p = 0; p < r->ncomp; p++)
		if ((r->mask[now] & (1u << p)) && r->prev_raw[p] == COUNTER_SATURATED) {
			cx->moving = true;
			return rx_err(e, VE_SATURATED, r->ncomp == 1 ? -1 : p);
		}
	secs = (double)(r->t[now] - r->t[start]) / 1e9;
	mask = r->mask[now];
	if (k == CTR_DELTA)
		mask &= r->mask[start];
	for (int p = 0; p < r->ncomp; p++) {
		double d =
		    r->acc[(size_t)now * r->ncomp + p] - r->acc[(size_t)start * r->ncomp + p];

		/* totals only grow: none in the window means none at any sample in it */
		if (d != 0 && (mask & (1u << p)))
			cx->moving = true;
		if (k == CTR_RATE)
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
		return rx_err(e, VE_NO_LINK, 0);
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
		return rx_err(e, VE_NO_LINK, 0);
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
	return rx_num((double)cs->vals[i]);
}

/* ---- operators ---- */

/*
 * The value a VE_RANGE diagnostic shows: the number when it fits the
 * diagnostic's int16 (casting 1e30 or NaN to an integer is undefined),
 * RANGE_HUGE when it does not.
 */
#define RANGE_HUGE INT16_MIN
int rx_range_extra(double d)
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
			return rx_err(e, VE_RANGE, rx_range_extra(ix.v.n));
		return rx_num(b.v.dscp[i]);
	}
	if (!to_index(&ix, RW_PRIO_COUNT, &i))
		return rx_err(e, VE_RANGE, rx_range_extra(ix.v.n));
	if (!(b.mask & (1u << i))) {
		/* The array is there but not this priority (mlx5 shows pause counters only with PFC
		 * on). */
		return (struct val){ .st = V_ABSENT,
				     .why = ABS_UNSUPPORTED,
				     .at = e->u.index.base,
				     .extra = (int16_t)i };
	}
	return rx_num(b.v.a[i]);
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
			return rx_err(e->u.set.lo[i], VE_RANGE, rx_range_extra(a.v.n));
		if (!to_index(&b, RW_DSCP_COUNT, &hi))
			return rx_err(e->u.set.hi[i], VE_RANGE, rx_range_extra(b.v.n));
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
			return rx_bool(false);
		if (a.st != V_OK)
			return a;
		return b.st != V_OK ? b : rx_bool(true);
	}
	if (op == TK_OR) {
		if ((a.st == V_OK && a.v.b) || (b.st == V_OK && b.v.b))
			return rx_bool(true);
		if (a.st != V_OK)
			return a;
		return b.st != V_OK ? b : rx_bool(false);
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
		return rx_bool(op == TK_EQ ? c : !c);
	case TK_LT:
	case TK_LE:
	case TK_GT:
	case TK_GE:
		if (t == RT_SET) {
			/* subset / superset; strict for < and > */
			bool sub = !(a.v.set & ~b.v.set), sup = !(b.v.set & ~a.v.set),
			     eq = a.v.set == b.v.set;

			return rx_bool(op == TK_LE   ? sub
				       : op == TK_GE ? sup
				       : op == TK_LT ? sub && !eq
						     : sup && !eq);
		}
		c = cmp_num(a.v.n, b.v.n);
		return rx_bool(op == TK_LT   ? c < 0
			       : op == TK_LE ? c <= 0
			       : op == TK_GT ? c > 0
					     : c >= 0);
	case TK_IN: {
		int i;

		return rx_bool(to_index(&a, RW_DSCP_COUNT, &i) && (b.v.set & (1ULL << i)));
	}
	case TK_PLUS:
		return rx_num(a.v.n + b.v.n);
	case TK_MINUS:
		if (t == RT_SET)
			return (struct val){ .st = V_OK, .v.set = a.v.set & ~b.v.set };
		return rx_num(a.v.n - b.v.n);
	case TK_STAR:
		return rx_num(a.v.n * b.v.n);
	case TK_SLASH:
		if (b.v.n == 0)
			return rx_err(e, VE_DIV_ZERO, 0);
		return rx_num(a.v.n / b.v.n);
	case TK_PERCENT:
		if (b.v.n == 0)
			return rx_err(e, VE_DIV_ZERO, 0);
		return rx_num(rw_fmod(a.v.n, b.v.n));
	case TK_PIPE:
		return (struct val){ .st = V_OK, .v.set = a.v.set | b.v.set };
	case TK_AMP:
		return (struct val){ .st = V_OK, .v.set = a.v.set & b.v.set };
	default:
		break;
	}
	return rx_err(e, VE_RANGE, 0);
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
			return rx_bool(!v.v.b);
		return rx_num(-v.v.n);
	case N_BINARY:
		return eval_binary(e, cx);
	case N_CALL:
		v = e->u.call.fn->eval(e, cx);
		if (e->memo) {
			cx->memo_e = e;
			cx->memo_v = v;
		}
		return v;
	case N_OUTCOME:
		if (!cx->outcome)
			return (struct val){
				.st = V_ABSENT, .why = ABS_NOT_COLLECTED, .at = e, .extra = -1
			};
		return (struct val){ .st = V_OK, .v.s = cx->outcome };
	}
	return rx_err(e, VE_RANGE, 0);
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
		char tmp[24], *p;
		uint64_t u = d < 0 ? (uint64_t) - (int64_t)d : (uint64_t)d;

		p = u64_digits(tmp + sizeof(tmp), u);
		if (signbit(d))
			*--p = '-';
		tb_putn(tb, p, (size_t)(tmp + sizeof(tmp) - p));
	} else if (fabs(d) >= 1e4 && fabs(d) < 1e15) {
		/* 10416.7 transmit discards per second reads as 10417, not 1.042e+04 */
		tb_printf(tb, "%.0f", d);
	} else {
		tb_printf(tb, "%.4g", d);
	}
}

/* A small non-negative integer (a DSCP, a priority) without printf. */
static void fmt_small(struct tbuf *tb, unsigned int u)
{
	char tmp[24], *p = u64_digits(tmp + sizeof(tmp), u);

	tb_putn(tb, p, (size_t)(tmp + sizeof(tmp) - p));
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
		fmt_small(tb, (unsigned int)i);
		if (j >= i + 2) {
			tb_putn(tb, "..", 2);
			fmt_small(tb, (unsigned int)j);
			i = j;
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
			/* a fleet rule formats every netdev's map of every node: no printf */
			if (!first)
				tb_putn(tb, ",", 1);
			fmt_small(tb, (unsigned int)d);
			tb_putn(tb, ":", 1);
			fmt_small(tb, (unsigned int)v->v.dscp[d]);
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
			tb_printf(tb, " (%s)", rw_strerror(v->err));
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
