// SPDX-License-Identifier: MIT
/*
 * The functions of the rule language, one row each: name, arity, the types
 * each argument accepts, the result type, and what the row cannot say (a
 * check function for the parser, an eval function for the evaluator).  The
 * parser finds a call's row by name and checks it with rx_func_check();
 * the evaluator calls the row's eval.  Adding a function is one row here and
 * its eval (plus docs/rules.md and a test).
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "rules_int.h"
#include "util.h"

/* ---- helpers the rows share ---- */

bool rx_call_err(struct call_check *c, int off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rx_parse_verr(c->pc, off, fmt, ap);
	va_end(ap);
	return false;
}

static bool check_arg(struct call_check *c, int i, const char *want, unsigned int types)
{
	const struct expr *a = c->a[i];

	if (a->type == RT_DUR)
		return rx_call_err(c, a->off, RX_DUR_ONLY_IN_WINDOW);
	if (!(types & RTM(a->type)))
		return rx_call_err(c, a->off, "%s(): argument %d must be %s, not %s",
				   c->e->u.call.fn->name, i + 1, want, rx_type_name(a->type));
	return true;
}

/* The only argument of a one-argument function, evaluated. */
static struct val arg0(const struct expr *e, struct ectx *cx)
{
	return rx_eval(e->u.call.args[0], cx);
}

/* ---- rate, increase, delta: counters over a window ---- */

/*
 * One history ring per distinct call text: pushing the same sample twice at
 * one time is a no-op for the ring, so identical calls can share it.
 */
static bool add_ring(struct call_check *c)
{
	struct parse_ctx *pc = c->pc;
	struct expr *e = c->e;

	for (int i = 0; i < pc->n_rings; i++) {
		if (pc->rings[i].len == e->len &&
		    !memcmp(pc->rings[i].text, e->src + e->off, (size_t)e->len)) {
			e->u.call.ring = i;
			return true;
		}
	}
	if (pc->n_rings == pc->cap_rings) {
		int nc = pc->cap_rings ? pc->cap_rings * 2 : 4;
		struct ring_spec *nr = arena_alloc(pc->arena, (size_t)nc * sizeof(*nr));

		if (!nr)
			return rx_call_err(c, e->off, "out of memory");
		if (pc->n_rings)
			memcpy(nr, pc->rings, (size_t)pc->n_rings * sizeof(*nr));
		pc->rings = nr;
		pc->cap_rings = nc;
	}
	pc->rings[pc->n_rings] = (struct ring_spec){
		.ncomp = c->a[0]->type == RT_ARRAY ? RW_PRIO_COUNT : 1,
		.window_ns = c->a[1]->u.c.v.dur,
		.text = e->src + e->off,
		.len = e->len,
	};
	e->u.call.ring = pc->n_rings++;
	return true;
}

static bool check_counter(struct call_check *c)
{
	const char *name = c->e->u.call.fn->name;
	const struct expr *w = c->a[1];

	if (w->kind != N_CONST || w->type != RT_DUR)
		return rx_call_err(c, w->off, "%s(): argument 2 must be a window like 5m or 30s",
				   name);
	if (w->u.c.v.dur <= 0)
		return rx_call_err(c, w->off, "%s(): the window must be longer than 0", name);
	c->e->type = c->a[0]->type;
	return add_ring(c);
}

/* rate, increase and delta: which of them, the row says */
static struct val eval_counter(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);

	if (v.st != V_OK)
		return v;
	return rx_counter(e, &v, cx, e->u.call.fn->counter);
}

/* ---- count, min, max, sum: over sets, tables and per-priority arrays ---- */

static struct val eval_count(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);
	double n = 0;

	if (v.st != V_OK)
		return v;
	switch (e->u.call.args[0]->type) {
	case RT_SET:
		return rx_num(__builtin_popcountll(v.v.set));
	case RT_GIDS:
		return rx_num(v.v.gids ? (double)v.v.gids->n : 0);
	case RT_PAIRS:
		return rx_num(v.v.pairs ? (double)v.v.pairs->n : 0);
	default:
		break;
	}
	/* a per-priority array: the present priorities above 0 */
	for (int p = 0; p < RW_PRIO_COUNT; p++)
		if (v.mask & (1u << p))
			n += v.v.a[p] > 0;
	return rx_num(n);
}

static bool check_minmax(struct call_check *c)
{
	if (c->n == 1)
		return check_arg(c, 0, "a per-priority array (or give two or more numbers)",
				 RTM(RT_ARRAY));
	for (int i = 0; i < c->n; i++)
		if (!check_arg(c, i, "a number", RTM(RT_NUM)))
			return false;
	return true;
}

static struct val eval_extreme(const struct expr *e, struct ectx *cx, bool max)
{
	struct val v, bad = { .st = V_OK };
	double best = 0;
	bool first = true;

	if (e->u.call.n == 1) {
		/* one per-priority array: over the present priorities, 0 if none */
		v = arg0(e, cx);
		if (v.st != V_OK)
			return v;
		for (int p = 0; p < RW_PRIO_COUNT; p++) {
			double x = v.v.a[p];

			if (!(v.mask & (1u << p)))
				continue;
			best = first || (max ? x > best : x < best) ? x : best;
			first = false;
		}
		return rx_num(best);
	}
	/* evaluate all, so counter functions inside see every sample */
	for (int i = 0; i < e->u.call.n; i++) {
		v = rx_eval(e->u.call.args[i], cx);
		if (v.st != V_OK && bad.st == V_OK)
			bad = v;
		if (v.st == V_OK && (!i || (max ? v.v.n > best : v.v.n < best)))
			best = v.v.n;
	}
	return bad.st != V_OK ? bad : rx_num(best);
}

static struct val eval_min(const struct expr *e, struct ectx *cx)
{
	return eval_extreme(e, cx, false);
}

static struct val eval_max(const struct expr *e, struct ectx *cx)
{
	return eval_extreme(e, cx, true);
}

static struct val eval_sum(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);
	double sum = 0;

	if (v.st != V_OK)
		return v;
	/* over the present priorities; an empty array gives 0 */
	for (int p = 0; p < RW_PRIO_COUNT; p++)
		if (v.mask & (1u << p))
			sum += v.v.a[p];
	return rx_num(sum);
}

/* ---- numbers ---- */

static struct val eval_abs(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);

	return v.st != V_OK ? v : rx_num(fabs(v.v.n));
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

static struct val eval_ib_mtu_for(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);

	if (v.st != V_OK)
		return v;
	/* no MTU is near 2^63; NaN and the like are not MTUs */
	if (!(fabs(v.v.n) < 1e15))
		return rx_err(e, VE_RANGE, rx_range_extra(v.v.n));
	return rx_num(rules_ib_mtu_for((int64_t)v.v.n));
}

static struct val eval_tos_dscp(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);

	if (v.st != V_OK)
		return v;
	/* The ToS byte is DSCP << 2 | ECN (RFC 2474, RFC 3168). */
	if (!(v.v.n >= 0 && v.v.n <= 255) || v.v.n != floor(v.v.n))
		return rx_err(e, VE_RANGE, rx_range_extra(v.v.n));
	return rx_num((double)((int)v.v.n >> 2));
}

/* ---- GID tables ---- */

static bool check_gid_count(struct call_check *c)
{
	const struct expr *f = c->a[2];

	if (f->kind != N_CONST || !strcmp(f->u.c.v.s, "ipv4") || !strcmp(f->u.c.v.s, "ipv6") ||
	    !strcmp(f->u.c.v.s, "link-local") || !strcmp(f->u.c.v.s, "any"))
		return true;
	return rx_call_err(c, f->off,
			   "gid_count(): family must be \"ipv4\", \"ipv6\", \"link-local\" or "
			   "\"any\"");
}

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

static struct val eval_gid_count(const struct expr *e, struct ectx *cx)
{
	struct expr *const *args = e->u.call.args;
	struct val a[3], nd = { .st = V_OK, .v.s = NULL };
	size_t cnt = 0;

	if (e->u.call.n == 4) {
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
	return rx_num((double)cnt);
}

/* ---- presence and choice ---- */

static struct val eval_present(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);

	return rx_bool(v.st == V_OK);
}

static struct val eval_supported(const struct expr *e, struct ectx *cx)
{
	struct val v = arg0(e, cx);

	/*
	 * false only when there is nothing to check: the device lacks it,
	 * nobody collects it, nothing was measured yet, or no link
	 */
	return rx_bool(
	    !((v.st == V_ABSENT &&
	       (v.why == ABS_UNSUPPORTED || v.why == ABS_NOT_COLLECTED || v.why == ABS_NO_DATA)) ||
	      (v.st == V_ERROR && v.why == VE_NO_LINK)));
}

static bool check_coalesce(struct call_check *c)
{
	struct expr **a = c->a;

	for (int i = 0; i < c->n; i++) {
		if (a[i]->type == RT_DUR)
			return rx_call_err(c, a[i]->off, RX_DUR_ONLY_IN_WINDOW);
		if (a[i]->type != a[0]->type)
			return rx_call_err(c, a[i]->off,
					   "coalesce(): argument %d is %s, argument 1 is %s", i + 1,
					   rx_type_name(a[i]->type), rx_type_name(a[0]->type));
	}
	c->e->type = a[0]->type;
	return true;
}

static struct val eval_coalesce(const struct expr *e, struct ectx *cx)
{
	struct val v, found = { 0 }, first = { 0 };
	bool have = false;

	/* evaluate all, so counter functions inside see every sample */
	for (int i = 0; i < e->u.call.n; i++) {
		v = rx_eval(e->u.call.args[i], cx);
		if (!have && v.st == V_OK) {
			found = v;
			have = true;
		}
		if (!i)
			first = v;
	}
	return have ? found : first;
}

static bool check_if(struct call_check *c)
{
	struct expr **a = c->a;

	if (a[1]->type == a[2]->type) {
		c->e->type = a[1]->type;
		return true;
	}
	if (!c->pc->in_template)
		return rx_call_err(c, a[2]->off,
				   "if(): argument 3 is %s, argument 2 is %s (only a summary may "
				   "mix them)",
				   rx_type_name(a[2]->type), rx_type_name(a[1]->type));
	c->e->type = RT_ANY; /* printed as the branch taken */
	return true;
}

static struct val eval_if(const struct expr *e, struct ectx *cx)
{
	struct expr *const *args = e->u.call.args;
	struct val c = rx_eval(args[0], cx), b[2], v;

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

/* ---- fleet aggregates: the argument was evaluated unit by unit (fleet.c) ---- */

static bool check_compared(struct call_check *c)
{
	struct parse_ctx *pc = c->pc;
	const struct expr *a = c->a[0];
	const unsigned int compared = RTM(RT_NUM) | RTM(RT_BOOL) | RTM(RT_STR) | RTM(RT_SET) |
				      RTM(RT_ARRAY) | RTM(RT_DSCPMAP);

	if (!(compared & RTM(a->type)))
		return rx_call_err(c, a->off, "%s(): a %s is not compared across nodes",
				   c->e->u.call.fn->name, rx_type_name(a->type));
	if (!pc->subject) {
		pc->subject = c->a[0];
	} else if (pc->subject->len != a->len ||
		   memcmp(pc->subject->src + pc->subject->off, a->src + a->off, (size_t)a->len)) {
		return rx_call_err(c, a->off,
				   "a fleet rule compares one value: '%.*s' here, '%.*s' before "
				   "(write one rule per value)",
				   a->len, a->src + a->off, pc->subject->len,
				   pc->subject->src + pc->subject->off);
	}
	return true;
}

static bool check_majority(struct call_check *c)
{
	c->e->type = c->a[0]->type;
	return check_compared(c);
}

static struct val eval_distinct(const struct expr *e, struct ectx *cx)
{
	return cx->agg ? rx_num((double)cx->agg->distinct) : rx_err(e, VE_RANGE, 0);
}

static struct val eval_outliers(const struct expr *e, struct ectx *cx)
{
	return cx->agg ? rx_num((double)cx->agg->outliers) : rx_err(e, VE_RANGE, 0);
}

static struct val eval_count_nodes(const struct expr *e, struct ectx *cx)
{
	return cx->agg ? rx_num((double)cx->agg->nodes) : rx_err(e, VE_RANGE, 0);
}

static struct val eval_fleet_nodes(const struct expr *e, struct ectx *cx)
{
	return cx->agg ? rx_num((double)cx->agg->fleet_nodes) : rx_err(e, VE_RANGE, 0);
}

static struct val eval_majority(const struct expr *e, struct ectx *cx)
{
	if (!cx->agg)
		return rx_err(e, VE_RANGE, 0);
	if (!cx->agg->have_majority)
		return rx_err(e, VE_NO_MAJORITY, 0);
	return cx->agg->majority;
}

/* ---- the rows ---- */

/* Argument kinds several rows share. */
/* clang-format off */
#define NUM_OR_ARRAY { RTM(RT_NUM) | RTM(RT_ARRAY), "a number or a per-priority array" }
#define A_NUMBER { RTM(RT_NUM), "a number" }
#define A_STRING(what) { RTM(RT_STR), what }
#define ANY_VALUE { RTM_VALUE, "a value" } /* but a duration */
/* clang-format on */

/* In this order in the "unknown function" error: aggregates last. */
static const struct rx_func funcs[] = {
	{ "rate", 2, 2, RT_NUM, .arg = { NUM_OR_ARRAY }, .counter = CTR_RATE,
	  .check = check_counter, .eval = eval_counter },
	{ "increase", 2, 2, RT_NUM, .arg = { NUM_OR_ARRAY }, .counter = CTR_INCREASE,
	  .check = check_counter, .eval = eval_counter },
	{ "delta", 2, 2, RT_NUM, .arg = { NUM_OR_ARRAY }, .counter = CTR_DELTA,
	  .check = check_counter, .eval = eval_counter },
	{ "count", 1, 1, RT_NUM,
	  .arg = { { RTM(RT_SET) | RTM(RT_ARRAY) | RTM(RT_GIDS) | RTM(RT_PAIRS),
		     "a set, a per-priority array or a GID table" } },
	  .eval = eval_count },
	{ "min", 1, -1, RT_NUM, .check = check_minmax, .eval = eval_min },
	{ "max", 1, -1, RT_NUM, .check = check_minmax, .eval = eval_max },
	{ "sum", 1, 1, RT_NUM, .arg = { { RTM(RT_ARRAY), "a per-priority array" } },
	  .eval = eval_sum },
	{ "abs", 1, 1, RT_NUM, .arg = { A_NUMBER }, .eval = eval_abs },
	{ "ib_mtu_for", 1, 1, RT_NUM, .arg = { A_NUMBER }, .eval = eval_ib_mtu_for },
	{ "tos_dscp", 1, 1, RT_NUM, .arg = { A_NUMBER }, .eval = eval_tos_dscp },
	{ "gid_count", 3, 4, RT_NUM,
	  .arg = { { RTM(RT_GIDS), "a GID table (gids)" },
		   A_STRING("a GID type string (\"RoCE v2\", \"RoCE v1\", \"IB\", \"any\")"),
		   A_STRING("an address family string (\"ipv4\", \"ipv6\", \"link-local\", "
			    "\"any\")"),
		   A_STRING("a netdev name (netdev_name)") },
	  .check = check_gid_count, .eval = eval_gid_count },
	{ "present", 1, 1, RT_BOOL, .arg = { ANY_VALUE }, .eval = eval_present },
	{ "supported", 1, 1, RT_BOOL, .arg = { ANY_VALUE }, .eval = eval_supported },
	{ "coalesce", 2, -1, RT_ANY, .check = check_coalesce, .eval = eval_coalesce },
	{ "if", 3, 3, RT_ANY,
	  .arg = { { RTM(RT_BOOL), "a condition (true or false)" }, ANY_VALUE, ANY_VALUE },
	  .check = check_if, .eval = eval_if },
	/* fleet rules: aggregates over the units of a group */
	{ "distinct", 1, 1, RT_NUM, .arg = { ANY_VALUE }, .aggregate = true,
	  .check = check_compared, .eval = eval_distinct },
	{ "majority", 1, 1, RT_ANY, .arg = { ANY_VALUE }, .aggregate = true,
	  .check = check_majority, .eval = eval_majority },
	{ "outliers", 1, 1, RT_NUM, .arg = { ANY_VALUE }, .aggregate = true,
	  .check = check_compared, .eval = eval_outliers },
	{ "count_nodes", 0, 0, RT_NUM, .aggregate = true, .eval = eval_count_nodes },
	{ "fleet_nodes", 0, 0, RT_NUM, .aggregate = true, .eval = eval_fleet_nodes },
};

const struct rx_func *rx_func_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(funcs); i++)
		if (!strcmp(funcs[i].name, name))
			return &funcs[i];
	return NULL;
}

void rx_func_names(struct tbuf *tb)
{
	for (int aggregate = 0; aggregate < 2; aggregate++) {
		bool first = true;

		tb_puts(tb, aggregate ? "; in fleet rules " : "");
		for (size_t i = 0; i < ARRAY_SIZE(funcs); i++) {
			if (funcs[i].aggregate != aggregate)
				continue;
			tb_puts(tb, first ? "" : ", ");
			tb_puts(tb, funcs[i].name);
			first = false;
		}
	}
}

void rules_function_names(char *buf, size_t len)
{
	struct tbuf tb = { .buf = buf, .cap = len };

	if (!len)
		return;
	buf[0] = '\0';
	rx_func_names(&tb);
}

bool rx_func_check(struct call_check *c)
{
	const struct rx_func *fn = c->e->u.call.fn;

	if (fn->counter && c->pc->fleet != FC_NONE)
		return rx_call_err(
		    c, c->e->off,
		    "%s(): a fleet rule sees one sample per node, so no counter history", fn->name);
	for (int i = 0; i < c->n && i < (int)ARRAY_SIZE(fn->arg); i++)
		if (fn->arg[i].types && !check_arg(c, i, fn->arg[i].want, fn->arg[i].types))
			return false;
	c->e->type = fn->type;
	return !fn->check || fn->check(c);
}
