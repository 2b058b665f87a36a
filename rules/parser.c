// SPDX-License-Identifier: MIT
/*
 * Recursive-descent parser for rule expressions, type-checking as it builds
 * the AST, so every type error has the offset of the operator or name at
 * fault.  Parameters are constants at load time and are substituted here.
 *
 *   or      := and ('||' and)*
 *   and     := cmp ('&&' cmp)*
 *   cmp     := add [('=='|'!='|'<'|'<='|'>'|'>='|'in') add]
 *   add     := mul (('+'|'-'|'|') mul)*
 *   mul     := unary (('*'|'/'|'%'|'&') unary)*
 *   unary   := ('!'|'-') unary | postfix
 *   postfix := primary ('[' or ']')*
 *   primary := NUM | DUR | STR | true | false | $param | '(' or ')'
 *            | '{' [elem (',' elem)*] '}'        elem := or ['..' or]
 *            | NAME '(' [or (',' or)*] ')'       function call
 *            | path [ '[' STR ']' ]              field, or counter-set entry
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules_int.h"
#include "util.h"

struct parser {
	struct parse_ctx *pc;
	struct lexer lx;
	struct token tok;
	const char *src;
	int depth; /* recursion through parse_unary: every nesting passes there */
	bool failed;
};

static const char *const cset_names[CSET__COUNT] = {
	[CSET_ETHTOOL] = "ethtool",
	[CSET_HW] = "hw",
	[CSET_PORT] = "port",
	[CSET_CC] = "cc",
};

static const enum obj_kind cset_kind[CSET__COUNT] = {
	[CSET_ETHTOOL] = OBJ_NETDEV,
	[CSET_HW] = OBJ_RDMA_PORT,
	[CSET_PORT] = OBJ_RDMA_PORT,
	[CSET_CC] = OBJ_NETDEV,
};

const char *rx_type_name(enum rtype t)
{
	static const char *const names[] = {
		[RT_NUM] = "number",
		[RT_BOOL] = "boolean",
		[RT_STR] = "string",
		[RT_SET] = "set",
		[RT_ARRAY] = "per-priority array",
		[RT_DSCPMAP] = "DSCP map",
		[RT_GIDS] = "GID table",
		[RT_PAIRS] = "GPU-NIC path list",
		[RT_DUR] = "duration",
		[RT_ANY] = "value",
	};
	return names[t];
}

static void perr(struct parser *p, int off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void rx_parse_verr(struct parse_ctx *pc, int off, const char *fmt, va_list ap)
{
	pc->err_off = off;
	vsnprintf(pc->err, sizeof(pc->err), fmt, ap);
}

static void perr(struct parser *p, int off, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	rx_parse_verr(p->pc, off, fmt, ap);
	va_end(ap);
}

static void advance(struct parser *p)
{
	p->tok = rx_lex_next(&p->lx);
	if (p->lx.err_off >= 0 && !p->failed) {
		perr(p, p->lx.err_off, "%s", p->lx.err);
	}
}

static bool expect(struct parser *p, enum tok_kind k, const char *what)
{
	if (p->failed)
		return false;
	if (p->tok.k != k) {
		perr(p, p->tok.off, "expected %s, found %s", what, rx_tok_name(p->tok.k));
		return false;
	}
	advance(p);
	return !p->failed;
}

static struct expr *node(struct parser *p, enum node_kind k, enum rtype t, int off, int end)
{
	struct expr *e = arena_alloc(p->pc->arena, sizeof(*e));

	if (!e) {
		perr(p, off, "out of memory");
		return NULL;
	}
	e->kind = k;
	e->type = t;
	e->height = 1;
	e->off = off;
	e->len = end - off;
	e->src = p->src;
	return e;
}

/*
 * Hang child under parent: the tree's height is what every walk recurses on,
 * so a chain of binary operators is refused as surely as deep parentheses.
 */
static bool grow(struct parser *p, struct expr *parent, const struct expr *child, int off)
{
	if (!child || child->height < parent->height)
		return true;
	if (child->height >= RX_MAX_DEPTH) {
		perr(p, off, "expression nested deeper than %d", RX_MAX_DEPTH);
		return false;
	}
	parent->height = child->height + 1;
	return true;
}

static int tok_end(const struct token *t)
{
	return t->off + t->len;
}

static int end_of(const struct expr *e)
{
	return e->off + e->len;
}

static bool dur_misuse(struct parser *p, const struct expr *e)
{
	if (e && e->type == RT_DUR) {
		perr(p, e->off, RX_DUR_ONLY_IN_WINDOW);
		return true;
	}
	return false;
}

static struct expr *parse_or(struct parser *p);

static enum rtype vt_to_rt(enum value_type t)
{
	switch (t) {
	case VT_INT:
	case VT_FLOAT:
		return RT_NUM;
	case VT_BOOL:
		return RT_BOOL;
	case VT_STR:
		return RT_STR;
	case VT_PRIOSET:
	case VT_DSCPSET:
		return RT_SET;
	case VT_PRIO_ARRAY:
		return RT_ARRAY;
	case VT_DSCP_MAP:
		return RT_DSCPMAP;
	case VT_GIDS:
		return RT_GIDS;
	case VT_PCI_PAIRS:
		return RT_PAIRS;
	}
	return RT_ANY;
}

static const char *suggest_field(enum obj_kind k, const char *path)
{
	const char *best = NULL;
	int bd = 3, len = (int)strlen(path);

	for (int i = 0; i < F__COUNT; i++) {
		int d;

		if (fields[i].obj != k || !fields[i].path)
			continue;
		d = rw_edit_distance(path, fields[i].path);
		if (d < bd && rw_typo_close(d, (size_t)len)) {
			bd = d;
			best = fields[i].path;
		}
	}
	return best;
}

/* The dotted path from the current identifier on; false when it was refused. */
static bool read_path(struct parser *p, char *path, size_t len, int *end, int *nseg)
{
	int start = p->tok.off;

	snprintf(path, len, "%s", p->tok.str);
	advance(p);
	while (!p->failed && p->tok.k == TK_DOT) {
		advance(p);
		if (p->failed)
			return false;
		if (p->tok.k != TK_IDENT) {
			perr(p, p->tok.off, "expected a field name after '.', found %s",
			     rx_tok_name(p->tok.k));
			return false;
		}
		if (strlen(path) + 2 + (size_t)p->tok.len >= len) {
			perr(p, start, "field path too long");
			return false;
		}
		strcat(path, ".");
		strncat(path, p->src + p->tok.off, (size_t)p->tok.len);
		*end = tok_end(&p->tok);
		(*nseg)++;
		advance(p);
	}
	return !p->failed;
}

/* 'netdev.' from an rdma_port and 'node.' from below the node: the hop, and the rest. */
static const char *path_hop(struct parser *p, int start, const char *path, const char *first,
			    int nseg, uint8_t *hop, enum obj_kind *target)
{
	if (nseg > 1 && !strcmp(first, "netdev")) {
		if (*target != OBJ_RDMA_PORT) {
			perr(p, start, "'netdev.' reaches the netdev of an rdma_port; a %s rule %s",
			     obj_kind_name(*target),
			     *target == OBJ_NETDEV ? "names its own fields directly"
						   : "has no netdev");
			return NULL;
		}
		*hop = HOP_NETDEV;
		*target = OBJ_NETDEV;
		return path + strlen("netdev.");
	}
	if (nseg > 1 && !strcmp(first, "node")) {
		if (*target == OBJ_NODE) {
			perr(p, start, "a node rule names node fields directly (drop 'node.')");
			return NULL;
		}
		*hop = HOP_NODE;
		*target = OBJ_NODE;
		return path + strlen("node.");
	}
	return path;
}

/* NAME["counter"]: a counter set of the target object, read by name. */
static struct expr *parse_cset(struct parser *p, int c, uint8_t hop, enum obj_kind target,
			       int start)
{
	struct expr *e;
	int end;

	if (cset_kind[c] != target) {
		perr(p, start, "counter set '%s' belongs to %s objects, not %s", cset_names[c],
		     obj_kind_name(cset_kind[c]), obj_kind_name(target));
		return NULL;
	}
	advance(p);
	if (p->failed)
		return NULL;
	if (p->tok.k != TK_STR) {
		perr(p, p->tok.off,
		     "%s[...] takes a counter name in quotes, e.g. %s[\"rx_discards_phy\"]",
		     cset_names[c], cset_names[c]);
		return NULL;
	}
	if (strlen(p->tok.str) >= RW_CNAME_MAX) {
		perr(p, p->tok.off, "counter name longer than %d bytes", RW_CNAME_MAX - 1);
		return NULL;
	}
	e = node(p, N_CSET, RT_NUM, start, start);
	if (!e)
		return NULL;
	e->u.cs.hop = hop;
	e->u.cs.cset = (uint8_t)c;
	e->u.cs.name = p->tok.str;
	e->u.cs.cache = p->pc->n_caches++;
	if (p->pc->fleet != FC_NONE) {
		perr(p, start,
		     "counter sets are not compared across nodes; a fleet rule compares "
		     "configuration fields");
		return NULL;
	}
	advance(p);
	if (p->failed)
		return NULL;
	end = tok_end(&p->tok);
	if (!expect(p, TK_RBRACK, "']'"))
		return NULL;
	e->len = end - start;
	return e;
}

static struct expr *parse_field(struct parser *p, uint8_t hop, enum obj_kind target,
				const char *rest, int start, int end)
{
	struct expr *e;
	int id = field_lookup(target, rest);

	if (id < 0) {
		const char *s = suggest_field(target, rest);

		if (s)
			perr(p, start, "unknown %s field '%s' (did you mean '%s'?)",
			     obj_kind_name(target), rest, s);
		else
			perr(p, start, "unknown %s field '%s'", obj_kind_name(target), rest);
		return NULL;
	}
	e = node(p, N_FIELD, vt_to_rt(fields[id].type), start, end);
	if (!e)
		return NULL;
	if (p->pc->fields_used)
		p->pc->fields_used[id] = 1;
	if (p->pc->reads)
		p->pc->reads[id / 64] |= 1ULL << (id % 64);
	e->u.field.hop = hop;
	e->u.field.id = (int16_t)id;
	return e;
}

static struct expr *parse_path(struct parser *p)
{
	enum obj_kind target = p->pc->scope;
	uint8_t hop = HOP_SELF;
	int start = p->tok.off, end = tok_end(&p->tok), nseg = 1;
	char path[160], first[64];
	const char *rest;

	snprintf(first, sizeof(first), "%s", p->tok.str);
	if (!read_path(p, path, sizeof(path), &end, &nseg))
		return NULL;
	if (p->pc->fleet == FC_TOP) {
		perr(p, start,
		     "a fleet rule reads '%s' through distinct(), majority() or outliers(), which "
		     "compare it across nodes",
		     path);
		return NULL;
	}
	if (!strcmp(path, "profile_outcome")) {
		if (p->pc->fleet != FC_INNER || target != OBJ_NODE) {
			perr(p, start,
			     "profile_outcome is the node's own profile outcome: only in a fleet "
			     "rule with each: node");
			return NULL;
		}
		return node(p, N_OUTCOME, RT_STR, start, end);
	}
	rest = path_hop(p, start, path, first, nseg, &hop, &target);
	if (!rest)
		return NULL;
	for (int c = 0; c < CSET__COUNT; c++)
		if (!strcmp(rest, cset_names[c]) && p->tok.k == TK_LBRACK)
			return parse_cset(p, c, hop, target, start);
	return parse_field(p, hop, target, rest, start, end);
}

static bool is_int_const(const struct expr *e, long long *out)
{
	if (e->kind != N_CONST || e->type != RT_NUM || e->u.c.v.n != floor(e->u.c.v.n))
		return false;
	*out = (long long)e->u.c.v.n;
	return true;
}

static struct expr *parse_set(struct parser *p)
{
	int start = p->tok.off, n = 0, cap = 8;
	struct expr **lo, **hi, *e;
	bool all_const = true;
	uint64_t bits = 0;

	advance(p);
	lo = arena_alloc(p->pc->arena, (size_t)cap * sizeof(*lo));
	hi = arena_alloc(p->pc->arena, (size_t)cap * sizeof(*hi));
	if (!lo || !hi) {
		perr(p, start, "out of memory");
		return NULL;
	}
	while (!p->failed && p->tok.k != TK_RBRACE) {
		struct expr *a, *b = NULL;

		if (n && !expect(p, TK_COMMA, "',' or '}'"))
			return NULL;
		a = parse_or(p);
		if (!a)
			return NULL;
		if (p->tok.k == TK_DOTDOT) {
			advance(p);
			b = parse_or(p);
			if (!b)
				return NULL;
		}
		for (struct expr *x = a; x; x = x == a ? b : NULL) {
			long long v;

			if (dur_misuse(p, x))
				return NULL;
			if (x->type != RT_NUM) {
				perr(
				    p, x->off,
				    "set elements are numbers (priorities 0-7, DSCPs 0-63), not %s",
				    rx_type_name(x->type));
				return NULL;
			}
			if (x->kind == N_CONST &&
			    (!is_int_const(x, &v) || v < 0 || v >= RW_DSCP_COUNT)) {
				perr(p, x->off, "set element %g is not an integer 0-63",
				     x->u.c.v.n);
				return NULL;
			}
			if (x->kind != N_CONST)
				all_const = false;
		}
		if (n == cap) {
			struct expr **nl = arena_alloc(p->pc->arena, (size_t)cap * 2 * sizeof(*nl));
			struct expr **nh = arena_alloc(p->pc->arena, (size_t)cap * 2 * sizeof(*nh));

			if (!nl || !nh) {
				perr(p, start, "out of memory");
				return NULL;
			}
			memcpy(nl, lo, (size_t)n * sizeof(*nl));
			memcpy(nh, hi, (size_t)n * sizeof(*nh));
			lo = nl;
			hi = nh;
			cap *= 2;
		}
		lo[n] = a;
		hi[n] = b;
		n++;
	}
	if (p->failed)
		return NULL;
	e = node(p, N_SETLIT, RT_SET, start, tok_end(&p->tok));
	advance(p); /* '}' */
	if (!e || p->failed)
		return NULL;
	if (all_const) {
		for (int i = 0; i < n; i++) {
			long long a, b;

			is_int_const(lo[i], &a);
			b = a;
			if (hi[i])
				is_int_const(hi[i], &b);
			if (b < a) {
				perr(p, lo[i]->off, "empty range %lld..%lld", a, b);
				return NULL;
			}
			for (long long v = a; v <= b; v++)
				bits |= 1ULL << v;
		}
		e->kind = N_CONST;
		e->u.c.st = V_OK;
		e->u.c.v.set = bits;
		return e;
	}
	for (int i = 0; i < n; i++)
		if (!grow(p, e, lo[i], lo[i]->off) || (hi[i] && !grow(p, e, hi[i], hi[i]->off)))
			return NULL;
	e->u.set.n = n;
	e->u.set.lo = lo;
	e->u.set.hi = hi;
	return e;
}

/* The call's types, by its row; the first error goes to the parse context. */
static bool check_call(struct parser *p, struct expr *e)
{
	struct call_check c = { .pc = p->pc, .e = e, .a = e->u.call.args, .n = e->u.call.n };

	if (rx_func_check(&c))
		return true;
	p->failed = true;
	return false;
}

static struct expr *parse_call(struct parser *p)
{
	int start = p->tok.off, n = 0, cap = 4;
	const struct rx_func *fn = rx_func_find(p->tok.str);
	struct expr **args, *e;
	const char *name = p->tok.str;

	enum fleet_ctx saved = p->pc->fleet;

	if (!fn) {
		/* room for a list twice today's: a new builtin is never cut off the error */
		char list[512];

		rules_function_names(list, sizeof(list));
		perr(p, start, "unknown function '%s' (functions: %s)", name, list);
		return NULL;
	}
	if (fn->aggregate) {
		if (saved != FC_TOP) {
			perr(p, start,
			     "%s() compares units across nodes: only at the top of a fleet rule's "
			     "expr or summary%s",
			     name,
			     saved == FC_INNER ? " (not inside when or another aggregate)" : "");
			return NULL;
		}
		/* its argument is evaluated on one object at a time */
		p->pc->fleet = FC_INNER;
	}
	advance(p); /* name */
	advance(p); /* ( */
	args = arena_alloc(p->pc->arena, (size_t)cap * sizeof(*args));
	if (!args) {
		perr(p, start, "out of memory");
		return NULL;
	}
	while (!p->failed && p->tok.k != TK_RPAREN) {
		struct expr *a;

		if (n && !expect(p, TK_COMMA, "',' or ')'"))
			return NULL;
		a = parse_or(p);
		if (!a)
			return NULL;
		if (n == cap) {
			struct expr **na = arena_alloc(p->pc->arena, (size_t)cap * 2 * sizeof(*na));

			if (!na) {
				perr(p, start, "out of memory");
				return NULL;
			}
			memcpy(na, args, (size_t)n * sizeof(*na));
			args = na;
			cap *= 2;
		}
		args[n++] = a;
	}
	p->pc->fleet = saved;
	if (p->failed)
		return NULL;
	e = node(p, N_CALL, RT_ANY, start, tok_end(&p->tok));
	advance(p); /* ) */
	if (!e || p->failed)
		return NULL;
	if (n < fn->min || (fn->max >= 0 && n > fn->max)) {
		if (fn->min == fn->max)
			perr(p, start, "%s() takes %d argument%s, got %d", name, fn->min,
			     fn->min == 1 ? "" : "s", n);
		else if (fn->max > 0)
			perr(p, start, "%s() takes %d to %d arguments, got %d", name, fn->min,
			     fn->max, n);
		else
			perr(p, start, "%s() takes at least %d argument%s, got %d", name, fn->min,
			     fn->min == 1 ? "" : "s", n);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (!grow(p, e, args[i], args[i]->off))
			return NULL;
	e->u.call.fn = fn;
	e->u.call.n = n;
	e->u.call.args = args;
	e->u.call.ring = -1;
	if (!check_call(p, e))
		return NULL;
	return e;
}

static const struct rparam *find_param(const struct parse_ctx *pc, const char *name)
{
	for (size_t i = 0; i < pc->n_params; i++)
		if (!strcmp(pc->params[i].name, name))
			return &pc->params[i];
	return NULL;
}

static struct expr *parse_primary(struct parser *p)
{
	struct token t = p->tok;
	struct expr *e;

	if (p->failed)
		return NULL;
	switch (t.k) {
	case TK_NUM:
	case TK_DUR:
	case TK_STR:
	case TK_TRUE:
	case TK_FALSE:
		e = node(p, N_CONST,
			 t.k == TK_NUM	 ? RT_NUM
			 : t.k == TK_DUR ? RT_DUR
			 : t.k == TK_STR ? RT_STR
					 : RT_BOOL,
			 t.off, tok_end(&t));
		if (!e)
			return NULL;
		e->u.c.st = V_OK;
		if (t.k == TK_NUM)
			e->u.c.v.n = t.num;
		else if (t.k == TK_DUR)
			e->u.c.v.dur = t.dur_ns;
		else if (t.k == TK_STR)
			e->u.c.v.s = t.str;
		else
			e->u.c.v.b = t.k == TK_TRUE;
		advance(p);
		return e;
	case TK_PARAM: {
		const struct rparam *pm = find_param(p->pc, t.str);

		if (!pm) {
			char names[200] = "";

			for (size_t i = 0; i < p->pc->n_params; i++) {
				size_t l = strlen(names);

				snprintf(names + l, sizeof(names) - l, "%s$%s", i ? ", " : "",
					 p->pc->params[i].name);
			}
			perr(p, t.off, "unknown parameter '$%s'%s%s%s", t.str,
			     p->pc->n_params ? " (this profile declares "
					     : " (this profile declares none",
			     names, ")");
			return NULL;
		}
		e = node(p, N_CONST, pm->type, t.off, tok_end(&t));
		if (!e)
			return NULL;
		e->u.c = pm->v;
		p->pc->param_hash = rx_fnv1a(p->pc->param_hash, pm->name, strlen(pm->name) + 1);
		p->pc->param_hash = rx_fnv1a(p->pc->param_hash, pm->text, strlen(pm->text) + 1);
		advance(p);
		return e;
	}
	case TK_LPAREN: {
		int start = t.off;

		advance(p);
		e = parse_or(p);
		if (!e)
			return NULL;
		if (p->tok.k != TK_RPAREN) {
			perr(p, p->tok.off, "expected ')' to close the '(' at offset %d, found %s",
			     start, rx_tok_name(p->tok.k));
			return NULL;
		}
		/* widen the span to include the parentheses, for messages */
		e->len = tok_end(&p->tok) - e->off;
		advance(p);
		return e;
	}
	case TK_LBRACE:
		return parse_set(p);
	case TK_IDENT: {
		struct lexer save = p->lx;
		struct token nt = rx_lex_next(&p->lx);

		p->lx = save;
		if (nt.k == TK_LPAREN)
			return parse_call(p);
		return parse_path(p);
	}
	default:
		perr(p, t.off, "expected a value, found %s", rx_tok_name(t.k));
		return NULL;
	}
}

static struct expr *parse_postfix(struct parser *p)
{
	struct expr *e = parse_primary(p);

	while (e && !p->failed && p->tok.k == TK_LBRACK) {
		int bo = p->tok.off;
		struct expr *idx, *n;
		long long v;

		if (e->type != RT_ARRAY && e->type != RT_DSCPMAP) {
			perr(p, bo,
			     "only per-priority arrays and the DSCP map can be indexed, not %s",
			     rx_type_name(e->type));
			return NULL;
		}
		advance(p);
		idx = parse_or(p);
		if (!idx)
			return NULL;
		if (dur_misuse(p, idx))
			return NULL;
		if (!(idx->type == RT_NUM || (idx->type == RT_SET && e->type == RT_ARRAY))) {
			perr(p, idx->off, "index must be a number%s, not %s",
			     e->type == RT_ARRAY ? " or a set of priorities" : "",
			     rx_type_name(idx->type));
			return NULL;
		}
		if (idx->type == RT_NUM && idx->kind == N_CONST) {
			int max = e->type == RT_ARRAY ? RW_PRIO_COUNT : RW_DSCP_COUNT;

			if (!is_int_const(idx, &v) || v < 0 || v >= max) {
				perr(p, idx->off, "index %g is out of range 0-%d", idx->u.c.v.n,
				     max - 1);
				return NULL;
			}
		}
		if (idx->type == RT_SET && idx->kind == N_CONST &&
		    (idx->u.c.v.set >> RW_PRIO_COUNT)) {
			perr(p, idx->off,
			     "a priority set used as an index must hold priorities 0-7");
			return NULL;
		}
		if (p->tok.k != TK_RBRACK) {
			perr(p, p->tok.off, "expected ']', found %s", rx_tok_name(p->tok.k));
			return NULL;
		}
		n = node(p, N_INDEX, idx->type == RT_SET ? RT_ARRAY : RT_NUM, e->off,
			 tok_end(&p->tok));
		if (!n || !grow(p, n, e, bo) || !grow(p, n, idx, idx->off))
			return NULL;
		n->u.index.base = e;
		n->u.index.idx = idx;
		advance(p);
		e = n;
	}
	return p->failed ? NULL : e;
}

static struct expr *parse_unary_in(struct parser *p);

/*
 * Every way an expression nests (parentheses, '!' and '-', arguments, set
 * elements, indices) recurses through here: bound it before the stack is.
 */
static struct expr *parse_unary(struct parser *p)
{
	struct expr *e;

	if (p->failed)
		return NULL;
	if (p->depth >= RX_MAX_DEPTH) {
		perr(p, p->tok.off, "expression nested deeper than %d", RX_MAX_DEPTH);
		return NULL;
	}
	p->depth++;
	e = parse_unary_in(p);
	p->depth--;
	return e;
}

static struct expr *parse_unary_in(struct parser *p)
{
	struct token t = p->tok;
	struct expr *a, *e;

	if (t.k != TK_NOT && t.k != TK_MINUS)
		return parse_postfix(p);
	advance(p);
	a = parse_unary(p);
	if (!a || dur_misuse(p, a))
		return NULL;
	if (t.k == TK_NOT && a->type != RT_BOOL) {
		perr(p, t.off, "'!' needs a boolean, not %s", rx_type_name(a->type));
		return NULL;
	}
	if (t.k == TK_MINUS && a->type != RT_NUM) {
		perr(p, t.off, "'-' needs a number, not %s", rx_type_name(a->type));
		return NULL;
	}
	if (a->kind == N_CONST && t.k == TK_MINUS) {
		a->u.c.v.n = -a->u.c.v.n;
		a->len = end_of(a) - t.off;
		a->off = t.off;
		return a;
	}
	e = node(p, N_UNARY, a->type, t.off, end_of(a));
	if (!e || !grow(p, e, a, t.off))
		return NULL;
	e->u.un.op = t.k;
	e->u.un.a = a;
	return e;
}

/* Type of a binary operation, or RT_ANY (with an error) if it does not type-check. */
static enum rtype binary_type(struct parser *p, enum tok_kind op, int off, const struct expr *a,
			      const struct expr *b)
{
	enum rtype ta = a->type, tb = b->type;
	const char *on = rx_tok_name(op);

	if (dur_misuse(p, a) || dur_misuse(p, b))
		return RT_ANY;
	switch (op) {
	case TK_AND:
	case TK_OR:
		if (ta != RT_BOOL || tb != RT_BOOL) {
			perr(p, off, "type mismatch: %s needs booleans, got %s and %s", on,
			     rx_type_name(ta), rx_type_name(tb));
			return RT_ANY;
		}
		return RT_BOOL;
	case TK_EQ:
	case TK_NE:
		if (ta != tb || (ta != RT_NUM && ta != RT_BOOL && ta != RT_STR && ta != RT_SET)) {
			perr(p, off, "type mismatch: %s cannot compare %s with %s", on,
			     rx_type_name(ta), rx_type_name(tb));
			return RT_ANY;
		}
		return RT_BOOL;
	case TK_LT:
	case TK_LE:
	case TK_GT:
	case TK_GE:
		if (ta != tb || (ta != RT_NUM && ta != RT_SET)) {
			perr(p, off, "type mismatch: %s cannot order %s and %s", on,
			     rx_type_name(ta), rx_type_name(tb));
			return RT_ANY;
		}
		return RT_BOOL;
	case TK_IN:
		if (ta != RT_NUM || tb != RT_SET) {
			perr(p, off,
			     "type mismatch: 'in' tests a number against a set, got %s in %s",
			     rx_type_name(ta), rx_type_name(tb));
			return RT_ANY;
		}
		return RT_BOOL;
	case TK_MINUS:
		if (ta == RT_SET && tb == RT_SET)
			return RT_SET;
		/* fall through */
	case TK_PLUS:
	case TK_STAR:
	case TK_SLASH:
	case TK_PERCENT:
		if (ta != RT_NUM || tb != RT_NUM) {
			perr(p, off, "type mismatch: %s needs numbers%s, got %s and %s", on,
			     op == TK_MINUS ? " (or two sets)" : "", rx_type_name(ta),
			     rx_type_name(tb));
			return RT_ANY;
		}
		return RT_NUM;
	case TK_PIPE:
	case TK_AMP:
		if (ta != RT_SET || tb != RT_SET) {
			perr(p, off, "type mismatch: %s needs two sets, got %s and %s", on,
			     rx_type_name(ta), rx_type_name(tb));
			return RT_ANY;
		}
		return RT_SET;
	default:
		break;
	}
	perr(p, off, "unexpected operator %s", on);
	return RT_ANY;
}

static struct expr *make_binary(struct parser *p, struct token op, struct expr *a, struct expr *b)
{
	enum rtype t;
	struct expr *e;

	if (!a || !b)
		return NULL;
	t = binary_type(p, op.k, op.off, a, b);
	if (t == RT_ANY)
		return NULL;
	e = node(p, N_BINARY, t, a->off, end_of(b));
	if (!e || !grow(p, e, a, op.off) || !grow(p, e, b, op.off))
		return NULL;
	e->u.bin.op = op.k;
	e->u.bin.a = a;
	e->u.bin.b = b;
	return e;
}

static struct expr *parse_mul(struct parser *p)
{
	struct expr *e = parse_unary(p);

	while (e && !p->failed &&
	       (p->tok.k == TK_STAR || p->tok.k == TK_SLASH || p->tok.k == TK_PERCENT ||
		p->tok.k == TK_AMP)) {
		struct token op = p->tok;

		advance(p);
		e = make_binary(p, op, e, parse_unary(p));
	}
	return p->failed ? NULL : e;
}

static struct expr *parse_add(struct parser *p)
{
	struct expr *e = parse_mul(p);

	while (e && !p->failed &&
	       (p->tok.k == TK_PLUS || p->tok.k == TK_MINUS || p->tok.k == TK_PIPE)) {
		struct token op = p->tok;

		advance(p);
		e = make_binary(p, op, e, parse_mul(p));
	}
	return p->failed ? NULL : e;
}

static bool is_cmp(enum tok_kind k)
{
	return k == TK_EQ || k == TK_NE || k == TK_LT || k == TK_LE || k == TK_GT || k == TK_GE ||
	       k == TK_IN;
}

static struct expr *parse_cmp(struct parser *p)
{
	struct expr *e = parse_add(p);

	if (e && !p->failed && is_cmp(p->tok.k)) {
		struct token op = p->tok;

		advance(p);
		e = make_binary(p, op, e, parse_add(p));
		if (e && !p->failed && is_cmp(p->tok.k)) {
			perr(p, p->tok.off, "comparisons do not chain; use && between them");
			return NULL;
		}
	}
	return p->failed ? NULL : e;
}

static struct expr *parse_and(struct parser *p)
{
	struct expr *e = parse_cmp(p);

	while (e && !p->failed && p->tok.k == TK_AND) {
		struct token op = p->tok;

		advance(p);
		e = make_binary(p, op, e, parse_cmp(p));
	}
	return p->failed ? NULL : e;
}

static struct expr *parse_or(struct parser *p)
{
	struct expr *e = parse_and(p);

	while (e && !p->failed && p->tok.k == TK_OR) {
		struct token op = p->tok;

		advance(p);
		e = make_binary(p, op, e, parse_and(p));
	}
	return p->failed ? NULL : e;
}

/* Parse src[start..end) (offsets stay relative to src). */
static struct expr *parse_range(struct parse_ctx *pc, const char *src, int start, int end)
{
	struct parser p = { .pc = pc, .src = src };
	struct expr *e;

	rx_lex_init(&p.lx, src, end, pc->arena);
	p.lx.pos = start;
	advance(&p);
	if (p.failed)
		return NULL;
	if (p.tok.k == TK_EOF) {
		perr(&p, start, "empty expression");
		return NULL;
	}
	e = parse_or(&p);
	if (!e || p.failed)
		return NULL;
	if (p.tok.k != TK_EOF) {
		perr(&p, p.tok.off, "unexpected %s after the end of the expression",
		     rx_tok_name(p.tok.k));
		return NULL;
	}
	if (dur_misuse(&p, e))
		return NULL;
	return e;
}

struct expr *rx_parse(struct parse_ctx *pc, const char *src, int len)
{
	pc->err_off = -1;
	pc->err[0] = '\0';
	return parse_range(pc, src, 0, len);
}

static int add_part(struct parse_ctx *pc, struct tmpl *t, int *cap, const char *text, int len,
		    struct expr *e)
{
	if (t->n == *cap) {
		int nc = *cap ? *cap * 2 : 8;
		struct tmpl_part *np = arena_alloc(pc->arena, (size_t)nc * sizeof(*np));

		if (!np) {
			snprintf(pc->err, sizeof(pc->err), "out of memory");
			return -ENOMEM;
		}
		if (t->n)
			memcpy(np, t->parts, (size_t)t->n * sizeof(*np));
		t->parts = np;
		*cap = nc;
	}
	t->parts[t->n++] =
	    (struct tmpl_part){ .text = text,
				.len = len,
				.e = e,
				.plural = text && memmem(text, (size_t)len, "(s)", 3) };
	return 0;
}

/* Offset of the '}' closing the '{' at src[open], skipping quoted strings; -1 if none. */
static int closing_brace(const char *src, int open, int len)
{
	int depth = 0;

	for (int j = open; j < len; j++) {
		if (src[j] == '"' || src[j] == '\'') {
			char q = src[j];

			for (j++; j < len && src[j] != q; j++)
				if (src[j] == '\\')
					j++;
			continue;
		}
		if (src[j] == '{')
			depth++;
		else if (src[j] == '}' && --depth == 0)
			return j;
	}
	return -1;
}

int rx_parse_template(struct parse_ctx *pc, const char *src, int len, struct tmpl *out)
{
	int i = 0, lit = 0, cap = 0;

	pc->err_off = -1;
	pc->err[0] = '\0';
	memset(out, 0, sizeof(*out));
	while (i < len) {
		int close;
		struct expr *e;

		if (src[i] != '{') {
			i++;
			continue;
		}
		if (i > lit && add_part(pc, out, &cap, src + lit, i - lit, NULL))
			return -ENOMEM;
		close = closing_brace(src, i, len);
		if (close < 0) {
			pc->err_off = i;
			snprintf(pc->err, sizeof(pc->err),
				 "'{' opens an interpolation that is never closed (write {\"{\"} "
				 "for a literal brace)");
			return -EINVAL;
		}
		pc->in_template = true;
		e = parse_range(pc, src, i + 1, close);
		pc->in_template = false;
		if (!e)
			return -EINVAL;
		if (add_part(pc, out, &cap, NULL, 0, e))
			return -ENOMEM;
		i = close + 1;
		lit = i;
	}
	if (len > lit && add_part(pc, out, &cap, src + lit, len - lit, NULL))
		return -ENOMEM;
	return 0;
}
