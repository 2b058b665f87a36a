/* SPDX-License-Identifier: MIT */
/*
 * Private to rules/: the expression AST, the lexer/parser entry points, the
 * evaluator and the engine's internal state.  Which file exports what:
 *   lexer.c   rx_lex_*            tokens of one expression string
 *   parser.c  rx_parse, rx_parse_template   typed AST (type errors here)
 *   functions.c  rx_func_*   the functions (rate, count, ...): one row each
 *   eval.c    rx_eval, rx_format_val, rx_ring_*, rx_counter   values, history
 *   loader.c  rules_load*, rules_profile_path, rules_spec_*, diagnostics
 *   engine.c  rules_evaluate, results, status
 *   fleet.c   rules_evaluate_fleet: fleet rules over a set of node models
 */
#ifndef ROCEWATCH_RULES_INT_H
#define ROCEWATCH_RULES_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "strmap.h"

/* ---- memory: everything parsed lives in one arena, freed with the engine ---- */

struct arena_blk;
struct arena {
	struct arena_blk *head;
	bool oom;
};

void *arena_alloc(struct arena *a, size_t n); /* zeroed; NULL on OOM (a->oom set) */
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_strdup(struct arena *a, const char *s);
void arena_free(struct arena *a);

/* ---- tokens ---- */

enum tok_kind {
	TK_EOF,
	TK_NUM,
	TK_DUR,
	TK_STR,
	TK_IDENT,
	TK_PARAM, /* $name */
	TK_TRUE,
	TK_FALSE,
	TK_IN,
	TK_LPAREN,
	TK_RPAREN,
	TK_LBRACE,
	TK_RBRACE,
	TK_LBRACK,
	TK_RBRACK,
	TK_COMMA,
	TK_DOT,
	TK_DOTDOT,
	TK_NOT,
	TK_AND,
	TK_OR,
	TK_EQ,
	TK_NE,
	TK_LT,
	TK_LE,
	TK_GT,
	TK_GE,
	TK_PLUS,
	TK_MINUS,
	TK_STAR,
	TK_SLASH,
	TK_PERCENT,
	TK_PIPE,
	TK_AMP,
};

struct token {
	enum tok_kind k;
	int off, len; /* in the expression source */
	double num;
	int64_t dur_ns;
	char *str; /* TK_STR (unescaped), TK_IDENT, TK_PARAM (name): arena */
};

struct lexer {
	const char *src;
	int len, pos;
	struct arena *arena;
	/* first error */
	int err_off;
	char err[200];
};

void rx_lex_init(struct lexer *lx, const char *src, int len, struct arena *a);
/* Next token; on error returns TK_EOF with lx->err set. */
struct token rx_lex_next(struct lexer *lx);
const char *rx_tok_name(enum tok_kind k);

/* ---- types and values ---- */

enum rtype {
	RT_NUM,
	RT_BOOL,
	RT_STR,
	RT_SET,	    /* priorities (0..7) or DSCPs (0..63), one bit each */
	RT_ARRAY,   /* per-priority numbers, with a mask of the present ones */
	RT_DSCPMAP, /* DSCP -> priority, -1 unmapped */
	RT_GIDS,
	RT_PAIRS,
	RT_DUR, /* only as the window of rate/increase/delta */
	RT_ANY, /* present()/supported() argument */
};

const char *rx_type_name(enum rtype t);

enum vstate {
	V_OK,
	V_ABSENT, /* why = enum absent_reason */
	V_ERROR,  /* why = enum verr */
};

enum verr {
	VE_NONE,
	VE_NO_LINK,	 /* rdma_port has no netdev */
	VE_NEED_SAMPLES, /* counter function with one sample */
	VE_DIV_ZERO,
	VE_RANGE, /* index out of range (extra = index) */
	VE_NOMEM,
	VE_SATURATED,	/* a counter stuck at 2^32-1: what it counted since is unknown */
	VE_NO_MAJORITY, /* majority(): a tie, or no value at all */
};

struct expr;

struct val {
	uint8_t st;	       /* enum vstate */
	uint8_t why;	       /* absent_reason or verr */
	uint8_t mask;	       /* RT_ARRAY: present priorities */
	int16_t err;	       /* errno behind an absent field */
	int16_t extra;	       /* index for VE_RANGE / element absence (-1 none) */
	const struct expr *at; /* node that made it unknown */
	union {
		double n;
		bool b;
		const char *s;
		uint64_t set;
		double a[RW_PRIO_COUNT];
		const int8_t *dscp;
		const struct gid_table *gids;
		const struct pci_pairs *pairs;
		int64_t dur;
	} v;
};

/* ---- AST ---- */

enum node_kind {
	N_CONST,
	N_FIELD,
	N_CSET,
	N_SETLIT,
	N_INDEX,
	N_UNARY,
	N_BINARY,
	N_CALL,
	N_OUTCOME, /* fleet rules over nodes: the node's own profile outcome */
};

enum hop {
	HOP_SELF,
	HOP_NETDEV, /* rdma_port -> its netdev */
	HOP_NODE,
};

/*
 * How deep an expression may nest, counting both the parser's recursion
 * (parentheses, unary operators, arguments) and the height of the tree it
 * builds (a left-deep chain 1+1+...+1 is as tall as it is long).  Every walk
 * of the tree (evaluation, guard listing) recurses, so this bounds their stack
 * too: a few hundred small frames.  Real rules nest a dozen levels.
 */
#define RX_MAX_DEPTH 256

struct rx_func; /* a function of the language: functions.c */

struct expr {
	enum node_kind kind;
	enum rtype type;
	int height;	 /* 1 for a leaf; at most RX_MAX_DEPTH */
	int off, len;	 /* span in src */
	const char *src; /* the whole expression string */
	/* a summary shows this call's value: its evaluation keeps it (struct ectx, memo) */
	bool memo;
	union {
		struct val c; /* N_CONST */
		struct {
			uint8_t hop;
			int16_t id;
		} field;
		struct {
			uint8_t hop, cset;
			const char *name;
			int cache; /* slot cache index */
		} cs;
		struct {
			int n;
			struct expr **lo, **hi; /* hi[i] NULL: single element */
		} set;
		struct {
			struct expr *base, *idx;
		} index;
		struct {
			enum tok_kind op;
			struct expr *a;
		} un;
		struct {
			enum tok_kind op;
			struct expr *a, *b;
		} bin;
		struct {
			const struct rx_func *fn;
			int n;
			struct expr **args;
			int ring; /* history ring index for rate/increase/delta */
		} call;
	} u;
};

/* A parameter as declared by a profile (possibly overridden). */
struct rparam {
	char *name;
	struct val v; /* V_OK constant */
	enum rtype type;
	char *text; /* value as text, for listings */
	bool used_override;
	bool list; /* RT_STR from a list of words ([map, lldp]): read by rocewatch, not rules */
};

/* Per-rule counts of stateful sites, filled by the parser. */
struct ring_spec {
	uint8_t ncomp; /* 1 scalar, 8 per-priority */
	int64_t window_ns;
	/* the call's text: the same call in expr and summary shares one history */
	const char *text;
	int len;
};

/* Where an expression of a fleet rule stands. */
enum fleet_ctx {
	FC_NONE,  /* a node, netdev or rdma_port rule */
	FC_TOP,	  /* a fleet rule's expr/summary: aggregates, parameters, no fields */
	FC_INNER, /* a fleet rule's when, or an aggregate's argument: one object */
};

struct parse_ctx {
	struct arena *arena;
	enum obj_kind scope; /* a fleet rule: the kind of its units (`each`) */
	enum fleet_ctx fleet;
	/* fleet rules: the one value the aggregates compare (the first argument seen) */
	struct expr *subject;
	uint8_t *fields_used; /* [F__COUNT]: set for every field an expression reads */
	uint64_t *reads;      /* RX_READS_WORDS: the same, for one rule (or guard) alone */
	const struct rparam *params;
	size_t n_params;
	/* grown by the parser as it meets stateful sites */
	struct ring_spec *rings;
	int n_rings, cap_rings;
	int n_caches;
	/* param names used (for the fingerprint) */
	uint64_t param_hash;
	/* parsing a summary: if() may mix types there (it is only printed) */
	bool in_template;
	/* first error: offset in the source and message */
	int err_off;
	char err[256];
};

/* Parse one expression of src[0..len) into a typed AST; NULL on error (pc->err). */
struct expr *rx_parse(struct parse_ctx *pc, const char *src, int len);
/* Record a parse error at offset off of the expression. */
void rx_parse_verr(struct parse_ctx *pc, int off, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#define RX_DUR_ONLY_IN_WINDOW \
	"a duration is only allowed as the window of rate(), increase() or delta()"

/* A summary template: text with {expr} parts. */
struct tmpl_part {
	const char *text; /* literal (NULL for an expression) */
	int len;
	bool plural; /* the literal has a "(s)" (found once, at load) */
	struct expr *e;
	/* the same call in the rule's expr (found once, at load): its value, not a second
	 * evaluation, when the expr's evaluation reached it */
	const struct expr *twin;
};

struct tmpl {
	int n;
	struct tmpl_part *parts;
};

int rx_parse_template(struct parse_ctx *pc, const char *src, int len, struct tmpl *out);

/* ---- evaluation ---- */

struct ring {
	uint16_t cap, n, first; /* circular, first = oldest */
	uint8_t ncomp;
	bool have_prev;
	uint8_t prev_mask;
	int64_t window_ns, spacing_ns;
	double prev_raw[RW_PRIO_COUNT];
	double total[RW_PRIO_COUNT];
	/* the last decrease (a reset): when, and the values either side of it */
	bool has_reset;
	int64_t reset_ns;
	double reset_from, reset_to;
	int64_t *t;
	uint8_t *mask;
	double *acc; /* cap * ncomp: running totals (rate/increase) or raw values (delta) */
};

#define RING_CAP 128

int rx_ring_init(struct ring *r, const struct ring_spec *spec);
void rx_ring_free(struct ring *r);
void rx_ring_move(struct ring *dst, struct ring *src);

/*
 * A counter result that cannot change until its counters do (rx_settle):
 * what its counter reads held at its last evaluation, the rings that
 * evaluation sampled, and where its summary's notes began.
 */
#define RX_SETTLE_READS 4
struct settled {
	bool on;
	bool frozen; /* and its windows are whole: it may stand frozen (rx_freeze) */
	uint8_t n;
	uint16_t base_len;
	struct {
		uint8_t st, why;
		int16_t err, extra;
		double v;
	} in[RX_SETTLE_READS];
	uint64_t pushed; /* ring i sampled: bit i */
};

/* What a frozen result's poll reads comes first: lazy, then up to three reads. */
struct slot_state {
	/*
	 * Frozen (rx_freeze): its rings were not sampled from counter pass
	 * lazy - 1 on (a number of poll_log); 0 when they are up to date.
	 */
	uint64_t lazy;
	struct settled settled;
	struct ring *rings;
	int32_t *cache;
	uint32_t hm_at; /* where its health memory was last: a hint, checked by key */
};

/*
 * The times of the last counter passes (rx_freeze): a frozen result's rings
 * are sampled at them when it thaws, as its passes would have sampled them.
 * Pass k (counting from 0) is t[k % POLL_LOG_CAP]; n passes so far.
 */
#define POLL_LOG_CAP 512
struct poll_log {
	int64_t t[POLL_LOG_CAP];
	uint64_t n;
};

/* What a fleet rule's aggregates give, for one group of units. */
struct fleet_agg {
	size_t distinct, outliers, nodes;
	size_t fleet_nodes; /* nodes with a unit of the rule, in any group */
	bool have_majority;
	struct val majority;
};

struct ectx {
	const struct node_model *m;
	const struct object *obj;
	struct slot_state *st;
	int64_t t;
	/*
	 * Counter functions met in this evaluation: the largest declared
	 * window and the shortest span of samples one of them actually had
	 * (a check's 100 ms, a serve that started a minute ago).
	 */
	bool windowed;
	int64_t window_ns, observed_ns;
	/* a counter function whose window holds a reset: the latest one */
	bool reset;
	double reset_from, reset_to;
	/* the last value of a call a summary shows (expr->memo): the summary's, unevaluated */
	const struct expr *memo_e;
	struct val memo_v;
	/* the rings its counter calls sampled (bit i: ring i), and whether any of them
	 * moved: a value not 0, an error, more rings than bits (rx_settle) */
	uint64_t pushed;
	bool moving;
	size_t base_len;	     /* the summary's length before its notes */
	const char *outcome;	     /* fleet, each node: its profile outcome, or NULL */
	const struct fleet_agg *agg; /* fleet, at the top of a rule: the group's aggregates */
};

struct val rx_eval(const struct expr *e, struct ectx *cx);
/* Sample ring r at t with the values it last had (rx_settle, rx_freeze). */
void rx_ring_again(struct ring *r, int64_t t);
/* The same for ring i of cx's result at cx->t, and note its window. */
void rx_ring_touch(struct ectx *cx, int i);

static inline struct val rx_num(double n)
{
	return (struct val){ .st = V_OK, .v.n = n };
}

static inline struct val rx_bool(bool b)
{
	return (struct val){ .st = V_OK, .v.b = b };
}

/* Unknown because of an error at node at (extra: see struct val). */
static inline struct val rx_err(const struct expr *at, enum verr why, int extra)
{
	return (
	    struct val){ .st = V_ERROR, .why = (uint8_t)why, .at = at, .extra = (int16_t)extra };
}

/* A number as the VE_RANGE diagnostic shows it (it keeps an int16). */
int rx_range_extra(double d);

enum counter_kind {
	CTR_NONE,     /* not a counter function */
	CTR_INCREASE, /* growth over the window, across resets */
	CTR_RATE,     /* that per second of the span covered */
	CTR_DELTA,    /* last - first (gauges) */
};

/* rate/increase/delta of x: pushes x into the call's history ring. */
struct val rx_counter(const struct expr *e, const struct val *x, struct ectx *cx,
		      enum counter_kind k);

/* ---- the functions of the language (functions.c) ---- */

struct tbuf;

#define RTM(t) (1u << (t))
/* any type but a duration (which only a counter's window may be) */
#define RTM_VALUE (((RTM(RT_ANY) << 1) - 1) & ~RTM(RT_DUR))

/* A call being type-checked, as a function row's check sees it. */
struct call_check {
	struct parse_ctx *pc;
	struct expr *e;	 /* the call: e->u.call.fn is its row; the check may set e->type */
	struct expr **a; /* its arguments */
	int n;
};

struct rx_func_arg {
	unsigned int types; /* RTM() bits of the accepted types; 0: left to check */
	const char *want;   /* "argument N must be WANT, not ..." */
};

struct rx_func {
	const char *name;
	int min, max;	 /* arity; max -1: any */
	enum rtype type; /* of the result, unless check sets it */
	/* argument i: its accepted types (a duration never); types 0 or i >= 4: left to check */
	struct rx_func_arg arg[4];
	/* what arg[] cannot say, run after it; false after rx_call_err() */
	bool (*check)(struct call_check *c);
	struct val (*eval)(const struct expr *e, struct ectx *cx);
	/* rate/increase/delta: keeps samples across polls, so not in fleet rules */
	enum counter_kind counter;
	bool aggregate; /* fleet rules: reads the group of units, top level only */
};

/* The row named name, or NULL. */
const struct rx_func *rx_func_find(const char *name);
/* "rate, increase, ...; in fleet rules distinct, ...": for "unknown function". */
void rx_func_names(struct tbuf *tb);
/* Types a call whose arity is right; false with pc->err set. */
bool rx_func_check(struct call_check *c);
/* A check's error at offset off of the expression: returns false, to be returned at once. */
bool rx_call_err(struct call_check *c, int off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Bounded text writer (no allocation). */
struct tbuf {
	char *buf;
	size_t len, cap;
};

void tb_puts(struct tbuf *tb, const char *s);
void tb_putn(struct tbuf *tb, const char *s, size_t n);
void tb_printf(struct tbuf *tb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rx_format_val(struct tbuf *tb, const struct val *v, enum rtype t);
/* A summary: the template's text and values, or fallback when it has no parts. */
void rx_render_template(const struct tmpl *t, const char *fallback, struct ectx *cx, char *buf,
			size_t len);
/* Why a value is unknown: "pfc.enabled absent: unsupported". */
void rx_format_unknown(struct tbuf *tb, const struct val *v);

/* ---- the engine ---- */

/* A set of field ids, one bit each: what one rule or guard reads. */
#define RX_READS_WORDS ((F__COUNT + 63) / 64)

struct rrule {
	struct rule_info info;
	struct expr *when, *expr;
	struct tmpl summary;
	struct ring_spec *rings;
	int n_rings, n_caches;
	size_t profile;
	size_t res_off, res_n; /* its run in the results array */
	struct expr *subject;  /* fleet rules: the value compared across units */
	/* the fields its when, expr and summary read (rules_evaluate_changed()) */
	uint64_t reads[RX_READS_WORDS];
	/* its largest counter window, written once for the summaries' notes ("5m") */
	int64_t window_ns;
	char window_text[24];
	char window_note[48]; /* " (over the last 5m)": the note of a window observed whole */
	char window_tail[48]; /* " of the 5m window observed)": the end of a partial one's */
	uint8_t window_note_len, window_tail_len;
	/*
	 * It reads only counters and numeric fields, and no delta(): while what
	 * those reads give stays the same and its windows hold no increase, its
	 * result cannot change (rx_settle).  Those reads, for comparing.
	 */
	bool settles;
	int n_settle_reads;
	const struct expr *settle_reads[RX_SETTLE_READS];
};

/* One line of a profile's roles: (fabric.h). */
struct rrole {
	const char *pattern;
	int role; /* enum port_role */
};

struct rprofile {
	struct rules_profile_info info;
	struct rparam *params;
	/* applies_to: per object kind, the objects the profile is about (NULL: all) */
	struct expr *applies[OBJ__COUNT];
	/* roles: pattern -> role, in the file's order (fabric.h) */
	struct rrole *roles;
	size_t n_roles;
	/* judged_roles: bit (1 << enum port_role) per role judged; 0: every object */
	unsigned judged;
	uint64_t applies_reads[OBJ__COUNT][RX_READS_WORDS];
};

struct objid {
	char name[RW_NAME_MAX];
	uint32_t port;
	/* "guid:...", "pci:..." or "" (no hardware identity: the name is all there is) */
	char ident[72];
};

/*
 * The state of a result whose object left the model: kept for the object's
 * return within its rule's history_grace_ns (engine.c).
 */
struct parked {
	const struct rrule *r;
	uint64_t key, ikey;
	bool has_ident;
	int64_t gone_ns;
	struct rule_result res;
	struct slot_state st;
};

#define PARKED_MAX 4096

/* Escalation memory of one result (health.c). */
struct hmem {
	uint64_t key, fp;  /* key: the result's identity key (ikey), else its name key */
	int64_t window_ns; /* its rule's escalation window (0: not evaluated since loaded) */
	bool failing;	   /* the last decided outcome was fail: the episode goes on */
	uint8_t n;
	int64_t t[RULE_ESCALATE_MAX]; /* wall-clock starts of the failure episodes, oldest first */
	/* what it was about when last seen: name/port beside the hardware identity */
	char name[RW_NAME_MAX + 12];
	char ident[72];
};

/* A counter history read from the state file, waiting for its result to exist. */
struct pending_ring {
	uint64_t key, fp;
	size_t line; /* in the file: the later of two records for one ring wins */
	int idx, ncomp, n;
	bool have_prev;
	uint8_t prev_mask;
	double prev_raw[RW_PRIO_COUNT], total[RW_PRIO_COUNT];
	int64_t *t;
	uint8_t *mask;
	double *acc;
};

/* rules_engine.gates: one profile's verdict on one object, valid in pass `pass` */
struct gate {
	uint64_t pass;
	bool in;		      /* admitted by applies_to (not asked when by_role) */
	const struct object *by_role; /* not judged: the port whose role the profile skips */
};

struct rules_engine {
	struct arena arena;
	struct rprofile *profiles;
	size_t n_profiles;
	struct rrule *rules;
	size_t n_rules;
	bool need_history;

	/* results: rule-major runs, objects in model order */
	struct rule_result *res;
	struct slot_state *st;
	size_t n_res;
	struct objid *ids[OBJ__COUNT];
	size_t n_ids[OBJ__COUNT];
	/*
	 * A pass's verdicts on each (profile, object): applies_to and
	 * judged_roles read only the model, so every rule of a profile gets
	 * the same answer in one pass.  [n_profiles][gate_n], an object at
	 * gate_base[its kind] + its index; stamped with the pass.
	 */
	struct gate *gates;
	size_t gate_n, gate_base[OBJ__COUNT];
	uint64_t pass;
	/* note_window(): the last observed span, as text ("3.2s") */
	int64_t obs_ns;
	char obs[24];
	uint8_t obs_len;
	bool synced;
	/* results of objects gone from the model, waiting for them to return */
	struct parked *parked;
	size_t n_parked;
	int64_t last_t;	      /* the time of the last evaluation */
	int64_t last_wall_ns; /* and its model's wall-clock time */
	/* a number no other layout of any engine had: consumers key caches by it */
	uint64_t layout_gen;
	uint64_t evaluations;
	uint64_t settled_total; /* rules_settled_total() */
	uint64_t frozen_total;	/* rules_frozen_total() */
	bool single_sample;	/* counter rules are skipped, not unknown */
	bool fast_pass;		/* evaluating a fast poll's counters: settled results may stand */
	bool may_freeze;	/* and frozen ones too: time went forward (rx_freeze) */
	/* counter passes: their times, and the passes a thawing result catches up to */
	struct poll_log plog;
	uint64_t thaw_upto;
	uint8_t fields_used[F__COUNT];

	/* health memory (health.c) */
	struct hmem *hm;
	size_t n_hm, cap_hm;
	bool hm_dirty;
	struct pending_ring *pend;
	size_t n_pend;

	/* fleet rules: results of the last rules_evaluate_fleet(), rebuilt each time */
	struct fleet_result *fres;
	size_t n_fres;
	/* between rules_fleet_begin() and rules_fleet_finish(): one per fleet rule */
	struct fleet_acc *facc;
	size_t n_facc, cap_fres, fleet_added;
	int64_t fleet_t;
	/*
	 * the units' object names, each once ("mlx5_0/1" is on every node: a
	 * unit points here), while the results live
	 */
	struct strmap fleet_obj_index;
	char **fleet_objs;
	size_t n_fleet_objs, cap_fleet_objs;
};

void rx_fleet_free(struct rules_engine *e);

/* The identity of (rule, object) results are kept under (engine.c). */
uint64_t rx_result_key(const struct rrule *r, enum obj_kind k, const char *dev, uint32_t port);

/* health.c: escalation after a result was decided at wall-clock time wall_ns */
void rx_health_note(struct rules_engine *e, struct rule_result *x, int64_t wall_ns);
void rx_health_apply_pending(struct rules_engine *e);
void rx_health_free(struct rules_engine *e);

int rx_slot_init(const struct rrule *r, struct slot_state *st);
void rx_slot_free(const struct rrule *r, struct slot_state *st);
/* A frozen result's rings sampled at the passes it stood through (rx_freeze): one, all. */
void rx_thaw(const struct rules_engine *e, const struct rrule *r, struct slot_state *st);
void rx_thaw_all(struct rules_engine *e);

uint64_t rx_fnv1a(uint64_t h, const void *p, size_t n);
#define RX_FNV_INIT 0xcbf29ce484222325ULL

#endif
