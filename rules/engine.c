// SPDX-License-Identifier: MIT
/*
 * Results per (rule, object).  The results array is laid out rule by rule,
 * each rule's objects in model order, and rebuilt only when the set of
 * objects changes (a device appears or goes); then each surviving
 * (rule, object) keeps its history.  In steady state an evaluation only
 * writes into existing slots.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "rules_int.h"
#include "util.h"

static size_t objects(const struct node_model *m, enum obj_kind k, const struct object *const **out)
{
	if (k == OBJ_NODE) {
		*out = NULL;
		return 1;
	}
	return model_objects((struct node_model *)m, k, (struct object ***)out);
}

static const struct object *object_at(const struct node_model *m, enum obj_kind k,
				      const struct object *const *objs, size_t i)
{
	return k == OBJ_NODE ? &m->node : objs[i];
}

void rx_slot_free(const struct rrule *r, struct slot_state *st)
{
	for (int i = 0; st->rings && i < r->n_rings; i++)
		rx_ring_free(&st->rings[i]);
	free(st->rings);
	free(st->cache);
	st->rings = NULL;
	st->cache = NULL;
}

int rx_slot_init(const struct rrule *r, struct slot_state *st)
{
	memset(st, 0, sizeof(*st));
	if (r->n_rings) {
		st->rings = calloc((size_t)r->n_rings, sizeof(*st->rings));
		if (!st->rings)
			return -ENOMEM;
		for (int i = 0; i < r->n_rings; i++)
			if (rx_ring_init(&st->rings[i], &r->rings[i])) {
				rx_slot_free(r, st);
				return -ENOMEM;
			}
	}
	if (r->n_caches) {
		/* two per cache: the index and the names_gen it is of (eval_cset) */
		st->cache = malloc(2 * (size_t)r->n_caches * sizeof(*st->cache));
		if (!st->cache) {
			rx_slot_free(r, st);
			return -ENOMEM;
		}
		for (int i = 0; i < r->n_caches; i++) {
			st->cache[2 * i] = -1;	  /* not found ... */
			st->cache[2 * i + 1] = 0; /* ... in an empty set (names_gen 0) */
		}
	}
	return 0;
}

/* A frozen result's poll touches one line of it (engine.h) and one of its slot. */
_Static_assert(offsetof(struct rule_result, netdev) + 16 <= 64 &&
		   offsetof(struct slot_state, settled.in[3]) <= 64,
	       "what a frozen result reads is in the first cache line");
/* Rules start with their info, so a rule_result's rule pointer leads back to its rrule. */
_Static_assert(offsetof(struct rrule, info) == 0, "rule_info must be the first member of rrule");

static const struct rrule *rrule_of(const struct rule_info *ri)
{
	return (const struct rrule *)ri;
}

/*
 * What an object is, whatever it is called: an RDMA port's node GUID (an
 * all-zero one says nothing), else the PCI address of its netdev; a
 * netdev's PCI address.  "" when there is none (a virtual netdev).
 */
static void object_ident(const struct object *o, char *buf, size_t len)
{
	const struct object *nd = o->kind == OBJ_NETDEV ? o : o->netdev;

	buf[0] = '\0';
	if (o->kind == OBJ_RDMA_PORT && o->f[F_PORT_NODE_GUID].state == ABS_NONE &&
	    strspn(o->f[F_PORT_NODE_GUID].v.s, "0:") != strlen(o->f[F_PORT_NODE_GUID].v.s)) {
		snprintf(buf, len, "guid:%.64s", o->f[F_PORT_NODE_GUID].v.s);
		return;
	}
	if (nd && nd->f[F_NETDEV_BUS].state == ABS_NONE && *nd->f[F_NETDEV_BUS].v.s &&
	    strcmp(nd->f[F_NETDEV_BUS].v.s, "N/A"))
		snprintf(buf, len, "pci:%.64s", nd->f[F_NETDEV_BUS].v.s);
}

/* Are the model's objects those of the results?  idents: their hardware identities too. */
static bool ids_match(const struct rules_engine *e, const struct node_model *m, bool idents)
{
	for (int k = OBJ_NETDEV; k < OBJ__COUNT; k++) {
		const struct object *const *objs;
		size_t n = objects(m, (enum obj_kind)k, &objs);

		if (n != e->n_ids[k])
			return false;
		for (size_t i = 0; i < n; i++) {
			char ident[sizeof(e->ids[k][i].ident)];

			if (objs[i]->port != e->ids[k][i].port ||
			    strcmp(objs[i]->name, e->ids[k][i].name))
				return false;
			if (!idents)
				continue;
			/* the same name, another device (a reload with a new GUID) */
			object_ident(objs[i], ident, sizeof(ident));
			if (strncmp(ident, e->ids[k][i].ident, strlen(ident)) ||
			    (e->ids[k][i].ident[strlen(ident)] &&
			     e->ids[k][i].ident[strlen(ident)] != '/'))
				return false;
		}
	}
	return true;
}

uint64_t rx_result_key(const struct rrule *r, enum obj_kind k, const char *dev, uint32_t port)
{
	uint64_t h = rx_fnv1a(RX_FNV_INIT, r->info.profile, strlen(r->info.profile) + 1);

	h = rx_fnv1a(h, r->info.name, strlen(r->info.name) + 1);
	h = rx_fnv1a(h, &k, sizeof(k));
	h = rx_fnv1a(h, dev, strlen(dev) + 1);
	return rx_fnv1a(h, &port, sizeof(port));
}

/*
 * An RDMA port is its GUID and port number, whatever its name (mlx5_0 may
 * come back as mlx5_2); a netdev its PCI function, whatever its name (eth2
 * may come back as ens1f0np0), and its name too where one function carries
 * two netdevs (mlx4's: sync_model() says so in the ident).
 */
static uint64_t ident_key(const struct rrule *r, enum obj_kind k, uint64_t key, const char *ident,
			  uint32_t port)
{
	uint64_t h;

	if (!*ident)
		return key;
	h = rx_fnv1a(RX_FNV_INIT, r->info.profile, strlen(r->info.profile) + 1);
	h = rx_fnv1a(h, r->info.name, strlen(r->info.name) + 1);
	h = rx_fnv1a(h, &k, sizeof(k));
	h = rx_fnv1a(h, ident, strlen(ident) + 1);
	return rx_fnv1a(h, &port, sizeof(port));
}

/*
 * The slot of the same rule definition on the same object in src, or -1:
 * the same hardware, or the same name where either side has no identity.
 */
static ssize_t find_old(const struct rules_engine *src, const struct rrule *r,
			const struct rule_result *x)
{
	for (size_t i = 0; i < src->n_res; i++) {
		const struct rule_result *o = &src->res[i];

		if (o->rule->fingerprint != r->info.fingerprint)
			continue;
		if (o->ikey == x->ikey ||
		    (o->key == x->key && (o->ikey == o->key || x->ikey == x->key)))
			return (ssize_t)i;
	}
	return -1;
}

/* Forget what has been parked longer than its rule keeps it (all of it when now < 0). */
static void parked_expire(struct rules_engine *e, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < e->n_parked; i++) {
		struct parked *p = &e->parked[i];

		if (now >= 0 && now - p->gone_ns <= p->r->info.history_grace_ns &&
		    now >= p->gone_ns) {
			e->parked[k++] = *p;
			continue;
		}
		rx_slot_free(p->r, &p->st);
	}
	e->n_parked = k;
	if (!k) {
		free(e->parked);
		e->parked = NULL;
	}
}

/* Keep the state of a result whose object left the model, for its return. */
static void park(struct rules_engine *e, const struct rule_result *x, struct slot_state *st,
		 int64_t now)
{
	const struct rrule *r = (const struct rrule *)x->rule;
	struct parked *n;

	if (!r->n_rings || !st->rings || r->info.history_grace_ns <= 0 || x->kind == OBJ_NODE) {
		rx_slot_free(r, st);
		return;
	}
	if (e->n_parked == PARKED_MAX) {
		/* bounded: the longest gone is forgotten first */
		rx_slot_free(e->parked[0].r, &e->parked[0].st);
		memmove(e->parked, e->parked + 1, (e->n_parked - 1) * sizeof(*e->parked));
		e->n_parked--;
	}
	n = realloc(e->parked, (e->n_parked + 1) * sizeof(*n));
	if (!n) {
		rx_slot_free(r, st);
		return;
	}
	e->parked = n;
	n = &e->parked[e->n_parked++];
	n->r = r;
	n->key = x->key;
	n->ikey = x->ikey;
	n->has_ident = x->ikey != x->key;
	n->gone_ns = now;
	n->res = *x;
	n->st = *st;
	memset(st, 0, sizeof(*st));
}

/* The parked state of the same rule on the same object (as find_old matches), or -1. */
static ssize_t find_parked(const struct rules_engine *e, const struct rrule *r,
			   const struct rule_result *x)
{
	for (size_t i = e->n_parked; i-- > 0;) {
		const struct parked *p = &e->parked[i];

		if (p->r->info.fingerprint != r->info.fingerprint ||
		    strcmp(p->r->info.name, r->info.name))
			continue;
		if (p->ikey == x->ikey ||
		    (p->key == x->key && (!p->has_ident || x->ikey == x->key)))
			return (ssize_t)i;
	}
	return -1;
}

/* A new device under a parked one's name (a new node GUID): that history is not its. */
static void parked_drop_name(struct rules_engine *e, const struct rule_result *x)
{
	for (size_t i = 0; i < e->n_parked; i++)
		if (e->parked[i].key == x->key) {
			rx_slot_free(e->parked[i].r, &e->parked[i].st);
			e->parked[i--] = e->parked[--e->n_parked];
		}
}

static void take_result(struct rule_result *x, const struct rule_result *o)
{
	x->outcome = o->outcome;
	x->since_ns = o->since_ns;
	x->eval_ns = o->eval_ns;
	memcpy(x->summary, o->summary, sizeof(x->summary));
	memcpy(x->reason, o->reason, sizeof(x->reason));
	memcpy(x->netdev, o->netdev, sizeof(x->netdev));
}

static void free_slots(struct rules_engine *e, struct slot_state *st, size_t upto)
{
	for (size_t ri = 0; ri < e->n_rules; ri++) {
		const struct rrule *r = &e->rules[ri];

		for (size_t i = 0; i < r->res_n && r->res_off + i < upto; i++)
			rx_slot_free(r, &st[r->res_off + i]);
	}
}

/*
 * Process-wide, so that a reloaded engine's layout never has the number of
 * the engine it replaced (whose memory it may even reuse).
 */
static uint64_t next_layout_gen(void)
{
	static uint64_t seq;

	return __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
}

/*
 * Lay out e's results for the objects in ids (netdevs, rdma ports; the node
 * is always there), taking the state of every (rule, object) that old
 * already has (old may be e itself).  On success e owns ids.
 */
static int sync_slots(struct rules_engine *e, struct objid *ids[OBJ__COUNT],
		      const size_t n_ids[OBJ__COUNT], struct rules_engine *old, int64_t now)
{
	size_t total = 0, pos = 0;
	struct rule_result *res;
	struct slot_state *st;

	rx_thaw_all(old); /* its rings are moved, parked or freed below: whole first */
	for (size_t i = 0; i < e->n_rules; i++)
		total += e->rules[i].info.fleet		      ? 0
			 : e->rules[i].info.scope == OBJ_NODE ? 1
							      : n_ids[e->rules[i].info.scope];
	size_t gate_n = 0, gate_base[OBJ__COUNT] = { 0 };
	struct gate *gates;

	for (int k = 0; k < OBJ__COUNT; k++) {
		gate_base[k] = gate_n;
		gate_n += k == OBJ_NODE ? 1 : n_ids[k];
	}
	res = calloc(total ? total : 1, sizeof(*res));
	st = calloc(total ? total : 1, sizeof(*st));
	gates = calloc(e->n_profiles * gate_n + 1, sizeof(*gates));
	if (!res || !st || !gates) {
		free(res);
		free(st);
		free(gates);
		return -ENOMEM;
	}
	for (size_t ri = 0; ri < e->n_rules; ri++) {
		struct rrule *r = &e->rules[ri];
		enum obj_kind k = r->info.scope;
		/* fleet rules have no per-node results: rules_evaluate_fleet() has theirs */
		size_t n = r->info.fleet ? 0 : k == OBJ_NODE ? 1 : n_ids[k];

		r->res_off = pos;
		r->res_n = n;
		for (size_t i = 0; i < n; i++, pos++) {
			struct rule_result *x = &res[pos];
			ssize_t oi;

			x->rule = &r->info;
			x->kind = k;
			if (k != OBJ_NODE) {
				strlcpy0(x->device, ids[k][i].name, sizeof(x->device));
				x->port = ids[k][i].port;
			}
			x->key = rx_result_key(r, k, x->device, x->port);
			x->ikey = k == OBJ_NODE ? x->key
						: ident_key(r, k, x->key, ids[k][i].ident, x->port);
			x->outcome = RULE__OUTCOMES; /* not evaluated yet */
			oi = find_old(old, r, x);
			if (oi >= 0 && old->st[oi].rings == NULL && r->n_rings)
				oi = -1; /* taken already (two objects, one identity) */
			if (oi >= 0) {
				/* the same rule on the same object: keep its history and outcome */
				take_result(x, &old->res[oi]);
				st[pos] = old->st[oi];
				st[pos].settled.on = false; /* a new layout: evaluated in full */
				memset(&old->st[oi], 0, sizeof(old->st[oi]));
				continue;
			}
			oi = find_parked(old, r, x);
			if (oi >= 0) {
				/* back within the grace period (a missed poll, a reload) */
				take_result(x, &old->parked[oi].res);
				st[pos] = old->parked[oi].st;
				st[pos].settled.on = false;
				old->parked[oi] = old->parked[--old->n_parked];
				continue;
			}
			parked_drop_name(old, x);
			if (rx_slot_init(r, &st[pos])) {
				free_slots(e, st, pos);
				free(res);
				free(st);
				free(gates);
				return -ENOMEM;
			}
		}
	}
	/*
	 * What did not survive: the counter history of an object that left is
	 * kept a while for its return.  Only within one engine: a reload's new
	 * rules take over the parked state in rules_adopt_history().
	 */
	for (size_t i = 0; i < old->n_res; i++)
		if (old == e && old->st[i].rings)
			park(e, &old->res[i], &old->st[i], now);
		else
			rx_slot_free(rrule_of(old->res[i].rule), &old->st[i]);
	free(old->res);
	free(old->st);
	old->res = NULL;
	old->st = NULL;
	old->n_res = 0;
	e->res = res;
	e->st = st;
	e->n_res = total;
	free(e->gates);
	e->gates = gates;
	e->gate_n = gate_n;
	memcpy(e->gate_base, gate_base, sizeof(gate_base));
	for (int k = 0; k < OBJ__COUNT; k++) {
		if (e->ids[k] != ids[k])
			free(e->ids[k]);
		e->ids[k] = ids[k];
		e->n_ids[k] = n_ids[k];
	}
	e->synced = true;
	e->layout_gen = next_layout_gen();
	return 0;
}

static int sync_model(struct rules_engine *e, const struct node_model *m, int64_t now)
{
	struct objid *ids[OBJ__COUNT] = { 0 };
	size_t n_ids[OBJ__COUNT] = { 0 };
	int r = -ENOMEM;

	for (int k = OBJ_NETDEV; k < OBJ__COUNT; k++) {
		const struct object *const *objs;
		size_t n = objects(m, (enum obj_kind)k, &objs);

		ids[k] = calloc(n ? n : 1, sizeof(*ids[k]));
		if (!ids[k])
			goto fail;
		for (size_t i = 0; i < n; i++) {
			strlcpy0(ids[k][i].name, objs[i]->name, sizeof(ids[k][i].name));
			ids[k][i].port = objs[i]->port;
			object_ident(objs[i], ids[k][i].ident, sizeof(ids[k][i].ident));
		}
		n_ids[k] = n;
		/* two netdevs on one PCI function: the name tells them apart */
		for (size_t i = 0; k == OBJ_NETDEV && i < n; i++)
			for (size_t j = 0; ids[k][i].ident[0] && j < n; j++) {
				size_t l = strlen(ids[k][i].ident);

				if (j == i || strncmp(ids[k][i].ident, ids[k][j].ident, l) ||
				    (ids[k][j].ident[l] && ids[k][j].ident[l] != '/'))
					continue;
				snprintf(ids[k][i].ident + l, sizeof(ids[k][i].ident) - l, "/%s",
					 ids[k][i].name);
				break;
			}
	}
	r = sync_slots(e, ids, n_ids, e, now);
	if (!r)
		return 0;
fail:
	for (int k = 0; k < OBJ__COUNT; k++)
		free(ids[k]);
	return r;
}

/* Literal text, its "(s)" the plural of the number before it ("1 event", "2 events"). */
static void put_plural(struct tbuf *tb, const char *s, int len, bool one)
{
	const char *end = s + len, *p;

	while ((p = memmem(s, (size_t)(end - s), "(s)", 3))) {
		tb_putn(tb, s, (size_t)(p - s));
		if (!one)
			tb_putn(tb, "s", 1);
		s = p + 3;
	}
	tb_putn(tb, s, (size_t)(end - s));
}

void rx_render_template(const struct tmpl *t, const char *fallback, struct ectx *cx, char *buf,
			size_t len)
{
	struct tbuf tb = { buf, 0, len };
	bool one = false;

	buf[0] = '\0';
	if (!t->n) {
		tb_puts(&tb, fallback);
		return;
	}
	for (int i = 0; i < t->n; i++) {
		const struct tmpl_part *p = &t->parts[i];
		enum rtype ty;
		struct val v;

		if (p->text) {
			if (p->plural)
				put_plural(&tb, p->text, p->len, one);
			else
				tb_putn(&tb, p->text, (size_t)p->len);
			continue;
		}
		v = p->twin && cx->memo_e == p->twin ? cx->memo_v : rx_eval(p->e, cx);
		/* "(s)" in the text after it: plural unless the number is exactly 1 */
		ty = p->e->type == RT_ANY && v.at ? v.at->type : p->e->type;
		one = v.st == V_OK && ty == RT_NUM && v.v.n == 1;
		if (v.st == V_OK) {
			rx_format_val(&tb, &v, ty);
		} else if (v.st == V_ABSENT) {
			tb_puts(&tb, "absent (");
			tb_puts(&tb, absent_reason_name((enum absent_reason)v.why));
			tb_puts(&tb, ")");
		} else {
			tb_puts(&tb, "unknown");
		}
	}
}

/* v then unit, as "%" PRId64 "%s" would, without printf (every windowed rule, every poll). */
static void put_count(char *buf, size_t len, int64_t v, const char *unit)
{
	char tmp[40], *p = u64_digits(tmp + 24, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);

	if (v < 0)
		*--p = '-';
	strlcpy0(tmp + 24, unit, sizeof(tmp) - 24);
	strlcpy0(buf, p, len);
}

void rules_format_duration(int64_t ns, char *buf, size_t len)
{
	int64_t s = ns / 1000000000LL;

	if (ns >= 3600000000000LL && !(ns % 3600000000000LL))
		put_count(buf, len, s / 3600, "h");
	else if (ns >= 60000000000LL && !(ns % 60000000000LL))
		put_count(buf, len, s / 60, "m");
	else if (ns >= 60000000000LL) {
		char sec[] = { 'm', (char)('0' + s % 60 / 10), (char)('0' + s % 10), 's', '\0' };

		put_count(buf, len, s / 60, sec); /* "%dm%02ds" */
	} else if (ns >= 10000000000LL || !(ns % 1000000000LL)) {
		put_count(buf, len, s, "s");
	} else if (ns > 0) {
		/*
		 * "%.1fs" without printf (every partial window, every poll, until it
		 * fills), rounded as printf rounds the double: the exact product in
		 * long double, to nearest, ties to even.
		 */
		long double x = (long double)((double)ns / 1e9) * 10; /* exact: 53 bits in 64 */
		long long tenths = (long long)x;
		long double f = x - (long double)tenths;

		if (f > 0.5L || (f == 0.5L && (tenths & 1)))
			tenths++;
		char frac[] = { '.', (char)('0' + tenths % 10), 's', '\0' };

		put_count(buf, len, tenths / 10, frac);
	} else {
		snprintf(buf, len, "%.1fs", (double)ns / 1e9);
	}
}

static bool word_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static const char *const collector_of[SRC__COUNT] = {
	[SRC_LINK] = "link",	       [SRC_ETHTOOL] = "ethtool", [SRC_DCB] = "dcb",
	[SRC_QOS_SYSFS] = "qos_sysfs", [SRC_RDMA] = "rdma",	  [SRC_VERBS] = "verbs",
	[SRC_HOST] = "host",	       [SRC_WIRE] = "wire",
};

/*
 * The collector behind the fact an unknown reason names: the reason starts
 * with the expression that was absent ("pfc.enabled absent: ...",
 * "hw[\"out_of_sequence\"] absent: ...").  NULL when it names none.
 */
static const char *unknown_collector(const struct rule_result *x, char *path, size_t len)
{
	const char *r = x->reason;
	size_t n = 0;
	int id;

	while (r[n] && (word_char(r[n]) || r[n] == '.') && n + 1 < len)
		n++;
	memcpy(path, r, n);
	path[n] = '\0';
	if (!n)
		return NULL;
	if (r[n] == '[' && r[n + 1] == '"') {
		/* a named counter set: hw/port from RDMA, ethtool and cc from the netdev */
		if (!strcmp(path, "hw") || !strcmp(path, "port"))
			return "rdma";
		if (!strcmp(path, "ethtool"))
			return "ethtool";
		return NULL;
	}
	id = field_lookup(x->kind, path);
	if (id < 0 || fields[id].src == SRC_NONE || fields[id].src == SRC_JOB)
		return NULL;
	return collector_of[fields[id].src];
}

size_t rules_unknown_hint(const struct rule_result *x, char *buf, size_t len)
{
	struct tbuf tb = { buf, 0, len };
	char path[64];
	const char *col, *r = x->reason, *what;

	if (!len)
		return 0;
	buf[0] = '\0';
	col = unknown_collector(x, path, sizeof(path));
	what = path[0] ? path : "a fact it needs";
	/* tb_printf() holds 256 bytes: the variable parts apart from the prose */
	if (strstr(r, ": needs two samples")) {
		tb_puts(&tb, "Not decided (nothing was seen to fail): a counter rule needs two "
			     "samples of its counters and had one. Let rocewatch see them move: "
			     "run `rocewatch serve` on the node (check takes its history), or "
			     "give check a series of snapshots (`--from` a JSON array).");
	} else if (strstr(r, " absent: permission")) {
		tb_printf(&tb,
			  "Not decided (nothing was seen to fail): rocewatch was not "
			  "allowed to read %s. ",
			  what);
		if (col)
			tb_printf(&tb, "Run it as root, or with what the %s collector needs ", col);
		else
			tb_puts(&tb, "Run it as root, or with what its collector needs ");
		tb_puts(&tb, "(the README's collectors and the shipped systemd unit say what).");
	} else if (strstr(r, " absent: not_collected")) {
		tb_printf(&tb, "Not decided (nothing was seen to fail): %s was not collected. ",
			  what);
		if (col)
			tb_printf(&tb, "Enable the %s collector (--collector.%s) ", col, col);
		else
			tb_puts(&tb, "Enable the collector that reads it ");
		tb_puts(&tb, "on the live machine; a snapshot or a fixture tree holds only what "
			     "was collected where it was taken.");
	} else if (strstr(r, " absent: unsupported")) {
		/* nothing to let rocewatch do: say so briefly, it may be on every port */
		tb_printf(&tb,
			  "Not decided: this kernel or driver does not provide %s here "
			  "(nothing was seen to fail).",
			  what);
	} else if (strstr(r, " absent: error")) {
		tb_printf(&tb, "Not decided (nothing was seen to fail): reading %s failed", what);
		if (col)
			tb_printf(&tb, " in the %s collector", col);
		tb_puts(&tb, ". rocewatch's log and rocewatch_collector_partial say why; the rule "
			     "is decided once the read succeeds.");
	} else if (strstr(r, " absent: no_data")) {
		tb_printf(&tb,
			  "Not decided (nothing was seen to fail): %s has nothing to "
			  "measure yet; it is decided once RoCE traffic flows.",
			  what);
	} else if (strstr(r, "saturated")) {
		tb_puts(&tb, "Not decided (nothing was seen to fail): the counter is stuck at its "
			     "32-bit maximum, so what it counted cannot be known.");
	} else {
		tb_puts(&tb, "Not decided (nothing was seen to fail): ");
		tb_puts(&tb, r[0] ? r : "a fact it needs is absent");
		tb_puts(&tb, ".");
	}
	return tb.len;
}

size_t rules_doc_for(const struct rule_result *x, const struct node_model *m, char *buf, size_t len)
{
	struct tbuf tb = { buf, 0, len };
	const char *ifn = "", *dev = "", *p = x->rule->doc;
	bool no_netdev = false;
	char port[12] = "";

	if (!len)
		return 0;
	/* an unknown result saw no failure: the fix for one would send a healthy node to fix */
	if (x->outcome == RULE_UNKNOWN)
		return rules_unknown_hint(x, buf, len);
	buf[0] = '\0';
	if (x->kind == OBJ_NETDEV) {
		ifn = x->device;
		for (size_t i = 0; m && i < m->n_ports && !dev[0]; i++)
			if (m->ports[i]->netdev && !strcmp(m->ports[i]->netdev->name, x->device))
				dev = m->ports[i]->name;
	} else if (x->kind == OBJ_RDMA_PORT) {
		ifn = x->netdev;
		dev = x->device;
		snprintf(port, sizeof(port), "%u", x->port);
	}
	while (*p) {
		const char *w = p, *val = NULL;

		while (word_char(*p))
			p++;
		if (p == w) {
			tb_putn(&tb, p++, 1);
			continue;
		}
		if (p - w == 2 && !strncmp(w, "IF", 2)) {
			val = ifn;
			/* a port bound to no netdev: a placeholder, and why, not "IF" */
			if (!*val && x->kind == OBJ_RDMA_PORT) {
				val = "<netdev>";
				no_netdev = true;
			}
		} else if (p - w == 3 && !strncmp(w, "DEV", 3))
			val = dev;
		else if (p - w == 4 && !strncmp(w, "PORT", 4))
			val = port;
		if (val && *val)
			tb_puts(&tb, val);
		else
			tb_putn(&tb, w, (size_t)(p - w));
	}
	if (no_netdev)
		tb_printf(&tb,
			  " (%s/%u is bound to no netdev: `rdma link show %s/%u` says which it "
			  "should be)",
			  x->device, x->port, x->device, x->port);
	return tb.len;
}

/*
 * Never claim a window that was not observed: a rule over increase(x, 5m)
 * evaluated on 100 ms of samples says so after its summary.
 */
static void note_window(struct rules_engine *e, const struct rrule *r, const struct ectx *cx,
			struct rule_result *x)
{
	struct tbuf tb = { x->summary, strlen(x->summary), sizeof(x->summary) };
	char buf[32];
	const char *w = r->window_text;

	x->window_ns = cx->windowed ? cx->window_ns : 0;
	/* of the window: a history longer than it observed the window, no more */
	x->observed_ns = !cx->windowed			   ? 0
			 : cx->observed_ns > cx->window_ns ? cx->window_ns
							   : cx->observed_ns;
	if (cx->reset)
		/* a decrease was rebaselined, not counted: say so while it is in the window */
		tb_printf(&tb,
			  " (counter reset %.17g -> %.17g in the window: rebaselined, not counted)",
			  cx->reset_from, cx->reset_to);
	if (!cx->windowed)
		return;
	/* the rule's largest window unless a short-circuit left it out */
	if (cx->window_ns != r->window_ns) {
		rules_format_duration(cx->window_ns, buf, sizeof(buf));
		w = buf;
	}
	if (cx->observed_ns >= cx->window_ns) {
		if (w == r->window_text) {
			/* written once, at load */
			tb_putn(&tb, r->window_note, r->window_note_len);
			return;
		}
		tb_puts(&tb, " (over the last ");
		tb_puts(&tb, w);
		tb_puts(&tb, ")");
		return;
	}
	/* every rule's windows began at one poll: they all observed as long */
	if (!e->obs_len || e->obs_ns != cx->observed_ns) {
		rules_format_duration(cx->observed_ns, e->obs, sizeof(e->obs));
		e->obs_len = (uint8_t)strlen(e->obs);
		e->obs_ns = cx->observed_ns;
	}
	tb_putn(&tb, " (only ", 7);
	tb_putn(&tb, e->obs, e->obs_len);
	if (w == r->window_text) {
		tb_putn(&tb, r->window_tail, r->window_tail_len); /* every poll until it fills */
		return;
	}
	tb_puts(&tb, " of the ");
	tb_puts(&tb, w);
	tb_puts(&tb, " window observed)");
}

static void render_summary(const struct rrule *r, struct ectx *cx, struct rule_result *x)
{
	rx_render_template(&r->summary, r->info.expr_src, cx, x->summary, sizeof(x->summary));
}

static void eval_one(struct rules_engine *e, const struct rrule *r, struct ectx *cx,
		     struct rule_result *x)
{
	struct tbuf rb = { x->reason, 0, sizeof(x->reason) };
	/* the guard said no last time too: its words stand (every skipped result, every poll) */
	bool guard_said = x->outcome == RULE_SKIP && !strncmp(x->reason, "guard false: ", 13);
	enum rule_outcome o;
	struct val v;

	x->reason[0] = '\0';
	cx->windowed = false;
	cx->reset = false;
	cx->window_ns = cx->observed_ns = 0;
	if (e->single_sample && r->n_rings) {
		/* one sample: a counter rule could only say "needs two samples" */
		o = RULE_SKIP;
		tb_puts(&rb, "counter rule (rate/increase/delta): needs a counter history, not "
			     "evaluated on a single sample");
		x->summary[0] = '\0';
		x->window_ns = x->observed_ns = 0;
		goto out;
	}
	if (r->when) {
		v = rx_eval(r->when, cx);
		if (v.st != V_OK) {
			o = RULE_UNKNOWN;
			rx_format_unknown(&rb, &v);
			goto done;
		}
		if (!v.v.b) {
			o = RULE_SKIP;
			if (guard_said) {
				/* clearing the reason above wrote its first byte only */
				x->reason[0] = 'g';
			} else {
				tb_puts(&rb, "guard false: ");
				tb_puts(&rb, r->info.when_src);
			}
			x->summary[0] = '\0';
			x->window_ns = x->observed_ns = 0;
			goto out;
		}
	}
	v = rx_eval(r->expr, cx);
	if (v.st != V_OK) {
		o = RULE_UNKNOWN;
		rx_format_unknown(&rb, &v);
	} else {
		o = v.v.b ? RULE_PASS : RULE_FAIL;
	}
done:
	render_summary(r, cx, x);
	cx->base_len = strlen(x->summary);
	note_window(e, r, cx, x);
out:
	if (o != x->outcome)
		x->since_ns = cx->t;
	x->outcome = o;
	x->eval_ns = cx->t;
}

/* Fields an applies_to guard reads, as "path=value" (the why of a skip). */
static void guard_fields(const struct expr *g, struct ectx *cx, struct tbuf *tb, int *n)
{
	struct val v;

	if (!g || *n >= 3)
		return;
	switch (g->kind) {
	case N_FIELD:
		v = rx_eval(g, cx);
		if ((*n)++)
			tb_puts(tb, ", ");
		tb_putn(tb, g->src + g->off, (size_t)g->len);
		tb_puts(tb, "=");
		if (v.st == V_OK)
			rx_format_val(tb, &v, g->type);
		else
			tb_puts(tb, "absent");
		return;
	case N_UNARY:
		guard_fields(g->u.un.a, cx, tb, n);
		return;
	case N_BINARY:
		guard_fields(g->u.bin.a, cx, tb, n);
		guard_fields(g->u.bin.b, cx, tb, n);
		return;
	case N_CALL:
		for (int i = 0; i < g->u.call.n; i++)
			guard_fields(g->u.call.args[i], cx, tb, n);
		return;
	default:
		return;
	}
}

/*
 * Does the profile's applies_to admit the object?  Unknown (a field the
 * guard reads is absent) admits it: the rules then say what they can.
 */
static bool admitted(const struct rprofile *pf, enum obj_kind k, struct ectx *cx)
{
	struct val v;

	if (!pf->applies[k])
		return true;
	v = rx_eval(pf->applies[k], cx);
	return v.st != V_OK || v.v.b;
}

/* The RDMA port behind an object: itself, or the first port bound to a netdev. */
static const struct object *role_port(const struct node_model *m, const struct object *o)
{
	if (o->kind == OBJ_RDMA_PORT)
		return o;
	if (o->kind != OBJ_NETDEV)
		return NULL;
	for (size_t i = 0; i < m->n_ports; i++)
		if (m->ports[i]->netdev == o)
			return m->ports[i];
	return NULL;
}

/*
 * Does the profile judge the object's role (judged_roles)?  An object
 * without a known role (a netdev without RDMA, a model without the fabric
 * facts) is judged: unknown is never a reason to look away.
 */
static const struct object *not_judged(const struct rprofile *pf, const struct node_model *m,
				       const struct object *o)
{
	const struct object *p;
	enum port_role role;

	if (!pf->judged || o->kind == OBJ_NODE)
		return NULL;
	p = role_port(m, o);
	if (!p || p->f[F_PORT_ROLE].state != ABS_NONE)
		return NULL;
	role = fabric_role_parse(p->f[F_PORT_ROLE].v.s);
	if (role == ROLE_NONE || (pf->judged & (1u << role)))
		return NULL;
	return p;
}

static void skip_result(struct ectx *cx, struct rule_result *x)
{
	x->summary[0] = '\0';
	x->window_ns = x->observed_ns = 0;
	if (x->outcome != RULE_SKIP)
		x->since_ns = cx->t;
	x->outcome = RULE_SKIP;
	x->eval_ns = cx->t;
}

/* "unused by design: no IPv4 RoCE v2 GID, never ACTIVE (role from no_gid)" */
static void skip_role(const struct rprofile *pf, const struct object *p, struct ectx *cx,
		      struct rule_result *x)
{
	const char *role = p->f[F_PORT_ROLE].v.s;
	const struct field_val *why = &p->f[F_PORT_ROLE_REASON], *src = &p->f[F_PORT_ROLE_SOURCE];

	struct tbuf rb = { x->reason, 0, sizeof(x->reason) };

	x->reason[0] = '\0';
	tb_printf(&rb, "%s by design: %s (role from %s; profile %s judges %s)", role,
		  why->state == ABS_NONE ? why->v.s : "", src->state == ABS_NONE ? src->v.s : "?",
		  pf->info.name, pf->info.judged_src ? pf->info.judged_src : "");
	skip_result(cx, x);
}

static void skip_outside(const struct rprofile *pf, enum obj_kind k, struct ectx *cx,
			 struct rule_result *x)
{
	struct tbuf rb = { x->reason, 0, sizeof(x->reason) };
	int n = 0;

	x->reason[0] = '\0';
	/* pieces, not tb_printf(): every result outside a profile, every poll */
	tb_puts(&rb, "outside the profile: it applies to ");
	tb_puts(&rb, obj_kind_name(k));
	tb_puts(&rb, " where ");
	tb_puts(&rb, pf->info.applies_src[k]);
	tb_puts(&rb, " (here ");
	guard_fields(pf->applies[k], cx, &rb, &n);
	tb_puts(&rb, ")");
	skip_result(cx, x);
}

/*
 * Settled results (a fast poll's counters, most of them, most polls).  A
 * rule that reads only counters and numeric fields (rrule.settles) gives the
 * same result again while (1) each read gives what its last evaluation read,
 * and (2) that evaluation's counter calls found no increase in their windows,
 * no reset, no error.  Then every rate and increase is 0 again whatever the
 * time (a running total that did not grow over a window did not grow at any
 * sample in it), the guard and the branches go the same way, and the summary
 * renders the same text: only the windows' notes can differ (a window that
 * fills).  So its rings are sampled again with the values they had, exactly
 * as the evaluation would sample them, the notes written again after the
 * summary kept, and nothing else is done.  A change of any read, a window
 * with an increase in it, an unknown, a reset, an escalation or any poll but
 * a fast one evaluates it in full.
 */
/* A read as compared: its state, why and errno when not a value, else the number. */
static void read_of(const struct rrule *r, int i, struct ectx *cx, struct settled *out, int at)
{
	struct val v = rx_eval(r->settle_reads[i], cx);

	out->in[at].st = v.st;
	out->in[at].why = v.st == V_OK ? 0 : v.why;
	out->in[at].err = v.st == V_OK ? 0 : v.err;
	out->in[at].extra = v.st == V_OK ? 0 : v.extra;
	out->in[at].v = v.st != V_OK			      ? 0
			: r->settle_reads[i]->type == RT_BOOL ? (double)v.v.b
							      : v.v.n;
}

/* What each of the rule's reads gives now, into st; true if all equal what was there. */
static bool settle_reads(const struct rrule *r, struct ectx *cx, struct settled *st)
{
	bool same = st->n == r->n_settle_reads;

	for (int i = 0; i < r->n_settle_reads; i++) {
		struct settled now;

		read_of(r, i, cx, &now, 0);
		if (now.in[0].st == st->in[i].st && now.in[0].why == st->in[i].why &&
		    now.in[0].err == st->in[i].err && now.in[0].extra == st->in[i].extra &&
		    !memcmp(&now.in[0].v, &st->in[i].v, sizeof(double)))
			continue; /* as it was: its line is not written (most reads, most polls) */
		same = false;
		st->in[i] = now.in[0];
	}
	if (st->n != r->n_settle_reads)
		st->n = (uint8_t)r->n_settle_reads;
	return same;
}

/*
 * Frozen results (rx_freeze): a settled result whose windows are whole reads
 * the same after every further poll its counters do not move -- the window
 * stays whole (128 samples span more than it), no increase can enter it, its
 * summary's note is "(over the last 5m)" each time -- so on a fast poll whose
 * time went forward it stands without being touched at all: no ring
 * sampled, no note written, no health memory asked (only for a rule whose
 * escalation has nothing to forget: no episode, not failing).  Its rings
 * fall behind instead, by the passes in e->plog, and catch up when anything
 * but standing frozen happens to it (rx_thaw): each sampled at each pass's
 * time, as settled_again() would have sampled it, so every later result is
 * the one a full evaluation gives.  A result behind by half the log catches
 * up at once; anything that moves or saves results catches all of them up
 * first (a new layout, a reload, the health state).
 */
static bool windows_whole(const struct rule_result *x, const struct ectx *cx)
{
	return x->outcome == RULE_SKIP ||
	       (cx->windowed && cx->observed_ns >= cx->window_ns && !cx->reset);
}

void rx_thaw(const struct rules_engine *e, const struct rrule *r, struct slot_state *st)
{
	if (!st->lazy)
		return;
	for (uint64_t k = st->lazy - 1; k < e->thaw_upto; k++)
		for (uint64_t b = st->settled.pushed; b; b &= b - 1) {
			int i = __builtin_ctzll(b);

			if (i < r->n_rings)
				rx_ring_again(&st->rings[i], e->plog.t[k % POLL_LOG_CAP]);
		}
	st->lazy = 0;
}

void rx_thaw_all(struct rules_engine *e)
{
	for (size_t ri = 0; e->st && ri < e->n_rules; ri++) {
		const struct rrule *r = &e->rules[ri];

		for (size_t i = 0; i < r->res_n; i++)
			rx_thaw(e, r, &e->st[r->res_off + i]);
	}
}

/* A counter pass at t: logged for the frozen; each thaws up to the one before it. */
static void log_pass(struct rules_engine *e, int64_t t)
{
	struct poll_log *l = &e->plog;

	e->may_freeze = !l->n || t >= l->t[(l->n - 1) % POLL_LOG_CAP];
	e->thaw_upto = l->n;
	if (!e->may_freeze) {
		/*
		 * Time went back (a clock step, a replay starting over): every
		 * history starts over, after what it missed, and is judged in
		 * full -- on one sample a counter rule is unknown, not settled.
		 */
		rx_thaw_all(e);
		e->fast_pass = false;
	}
	l->t[l->n % POLL_LOG_CAP] = t;
	l->n++;
}

/* Between passes: a thaw takes every pass logged. */
static void end_pass(struct rules_engine *e)
{
	e->may_freeze = false;
	e->thaw_upto = e->plog.n;
}

/*
 * May x, settled and read the same again, stand frozen?  Its escalation must
 * have nothing to forget (rx_health_note then changes nothing).
 */
static bool may_stand_frozen(const struct rules_engine *e, const struct rrule *r,
			     const struct slot_state *st, const struct rule_result *x)
{
	return e->may_freeze && st->settled.frozen && !x->escalated &&
	       (r->info.cls != RCLASS_DEGRADED || r->info.escalate_after <= 0 ||
		(x->episodes == 0 && x->outcome != RULE_FAIL));
}

static void stand_frozen(struct rules_engine *e, const struct rrule *r, struct slot_state *st,
			 struct rule_result *x, int64_t t)
{
	uint64_t pass = e->plog.n - 1;

	if (st->lazy && pass - (st->lazy - 1) >= POLL_LOG_CAP / 2)
		rx_thaw(e, r, st);		  /* before the log forgets what it missed */
	if (!st->lazy && x->outcome != RULE_SKIP) /* a skip samples nothing */
		st->lazy = pass + 1;
	x->eval_ns = t;
	e->settled_total++;
	e->frozen_total++;
}

/*
 * After a full evaluation: may the result stand next time?  reads_now: the
 * reads were taken this poll already (a fast poll that found one moved).
 */
static void settle(const struct rules_engine *e, const struct rrule *r, struct ectx *cx,
		   const struct rule_result *x, bool reads_now)
{
	struct settled *st = &cx->st->settled;

	st->on = r->settles && !e->single_sample && !cx->moving && !cx->reset &&
		 (x->outcome == RULE_PASS || x->outcome == RULE_FAIL ||
		  (x->outcome == RULE_SKIP && !strncmp(x->reason, "guard false: ", 13)));
	if (!st->on)
		return;
	st->pushed = cx->pushed;
	st->base_len = (uint16_t)(x->outcome == RULE_SKIP ? 0 : cx->base_len);
	st->frozen = windows_whole(x, cx);
	if (!reads_now)
		settle_reads(r, cx, st);
}

static void settled_again(struct rules_engine *e, const struct rrule *r, struct ectx *cx,
			  struct rule_result *x)
{
	struct settled *st = &cx->st->settled;

	x->eval_ns = cx->t;
	if (x->outcome == RULE_SKIP)
		return; /* the guard said no again: nothing sampled, its words stand */
	cx->windowed = false;
	cx->reset = false;
	cx->window_ns = cx->observed_ns = 0;
	for (uint64_t b = st->pushed; b; b &= b - 1)
		rx_ring_touch(cx, __builtin_ctzll(b));
	x->summary[st->base_len] = '\0';
	note_window(e, r, cx, x);
	st->frozen = windows_whole(x, cx);
}

/* Every result of rule r, at t_ns (wall_ns: the wall-clock time its health memory dates by). */
static void eval_rule(struct rules_engine *e, const struct rrule *r, const struct node_model *m,
		      int64_t t_ns, int64_t wall_ns)
{
	const struct object *const *objs;

	objects(m, r->info.scope, &objs);
	for (size_t i = 0; i < r->res_n; i++) {
		size_t s = r->res_off + i;
		const struct object *o = object_at(m, r->info.scope, objs, i);
		struct rule_result *x = &e->res[s];
		struct ectx cx = { .m = m, .obj = o, .st = &e->st[s], .t = t_ns };

		const char *nd = o->kind == OBJ_NETDEV			 ? o->name
				 : o->kind == OBJ_RDMA_PORT && o->netdev ? o->netdev->name
									 : "";

		/* the same every poll but after a rename: compared, not copied */
		if ((o->kind == OBJ_NETDEV || o->kind == OBJ_RDMA_PORT) && strcmp(x->netdev, nd))
			strlcpy0(x->netdev, nd, sizeof(x->netdev));
		struct gate *g =
		    &e->gates[r->profile * e->gate_n + e->gate_base[r->info.scope] + i];

		if (g->pass != e->pass) {
			g->by_role = not_judged(&e->profiles[r->profile], m, o);
			g->in =
			    !g->by_role && admitted(&e->profiles[r->profile], r->info.scope, &cx);
			g->pass = e->pass;
		}
		if (g->by_role) {
			rx_thaw(e, r, cx.st);
			cx.st->settled.on = false;
			skip_role(&e->profiles[r->profile], g->by_role, &cx, x);
		} else if (!g->in) {
			rx_thaw(e, r, cx.st);
			cx.st->settled.on = false;
			skip_outside(&e->profiles[r->profile], r->info.scope, &cx, x);
		} else {
			/* on a fast poll a settled result's reads are taken (once) first */
			bool read = e->fast_pass && r->settles && cx.st->settled.on;

			if (read && settle_reads(r, &cx, &cx.st->settled)) {
				if (may_stand_frozen(e, r, cx.st, x)) {
					stand_frozen(e, r, cx.st, x, t_ns);
					continue; /* nothing else: see rx_freeze */
				}
				rx_thaw(e, r, cx.st);
				settled_again(e, r, &cx, x);
				e->settled_total++;
			} else {
				rx_thaw(e, r, cx.st);
				eval_one(e, r, &cx, x);
				settle(e, r, &cx, x, read);
			}
		}
		rx_health_note(e, x, wall_ns);
		/* an escalated outcome is the escalation's, not the rule's */
		if (x->escalated)
			cx.st->settled.on = false;
	}
}

int rules_evaluate(struct rules_engine *e, const struct node_model *m, int64_t t_ns)
{
	if (e->n_parked)
		parked_expire(e, t_ns);
	if (!e->synced || !ids_match(e, m, true)) {
		int r = sync_model(e, m, t_ns);

		if (r)
			return r;
	}
	e->last_t = t_ns;
	e->last_wall_ns = ts_ns(&m->time);
	if (e->n_pend)
		rx_health_apply_pending(e);
	e->pass++; /* the model may have changed since the last pass: the gates are asked again */
	log_pass(e, t_ns);
	for (size_t ri = 0; ri < e->n_rules; ri++)
		eval_rule(e, &e->rules[ri], m, t_ns, ts_ns(&m->time));
	end_pass(e);
	for (size_t p = 0; p < e->n_profiles; p++) {
		struct rprofile *pf = &e->profiles[p];
		struct rules_profile_info *pi = &pf->info;

		pi->requirements_met = true;
		for (int k = OBJ_NETDEV; k < OBJ__COUNT; k++) {
			const struct object *const *objs;
			size_t n = objects(m, (enum obj_kind)k, &objs), in = 0;

			if (!pi->requires[k])
				continue;
			/* only the objects the profile applies to count */
			for (size_t i = 0; i < n && !in; i++) {
				struct ectx cx = { .m = m, .obj = objs[i], .t = t_ns };

				in += admitted(pf, (enum obj_kind)k, &cx) &&
				      !not_judged(pf, m, objs[i]);
			}
			if (!in)
				pi->requirements_met = false;
		}
	}
	e->evaluations++;
	return 0;
}

static bool reads_any(const uint64_t *reads, const uint64_t *changed)
{
	for (int w = 0; w < RX_READS_WORDS; w++)
		if (reads[w] & changed[w])
			return true;
	return false;
}

int rules_evaluate_changed(struct rules_engine *e, const struct node_model *m, int64_t t_ns,
			   const bool changed[F__COUNT], unsigned flags, size_t *n_rules)
{
	uint64_t ch[RX_READS_WORDS] = { 0 };
	bool counters = flags & RULES_EVAL_COUNTERS;
	size_t n = 0;

	if (n_rules)
		*n_rules = 0;
	/* a new layout needs every result made, counter rules too: that is a poll's job */
	/* identities are configuration: unread, they are what the last evaluation saw */
	if (!e->synced || !ids_match(e, m, changed[F_PORT_NODE_GUID] || changed[F_NETDEV_BUS]))
		return -EAGAIN;
	if (e->n_parked)
		parked_expire(e, t_ns);
	for (int f = 0; f < F__COUNT; f++)
		if (changed[f])
			ch[f / 64] |= 1ULL << (f % 64);
	e->fast_pass = counters; /* settled results may stand (settle()) */
	e->pass++;
	if (counters)
		log_pass(e, t_ns);
	for (size_t ri = 0; ri < e->n_rules; ri++) {
		const struct rrule *r = &e->rules[ri];

		/*
		 * A counter window samples on the poll's clock: a sample between
		 * polls would be the last poll's counters under a new time.  On
		 * the poll, counter windows and counter sets are what changed.
		 */
		bool counter_rule = r->n_rings || r->n_caches;

		if (r->info.fleet || (r->n_rings && !counters))
			continue;
		if (!(counters && counter_rule) && !reads_any(r->reads, ch) &&
		    !reads_any(e->profiles[r->profile].applies_reads[r->info.scope], ch))
			continue;
		eval_rule(e, r, m, t_ns, counters ? ts_ns(&m->time) : t_ns);
		n++;
	}
	e->fast_pass = false;
	end_pass(e);
	e->last_t = t_ns;
	if (counters)
		e->last_wall_ns = ts_ns(&m->time);
	if (n)
		e->evaluations++;
	if (n_rules)
		*n_rules = n;
	return 0;
}

size_t rules_results(const struct rules_engine *e, const struct rule_result **out)
{
	*out = e->res;
	return e->synced ? e->n_res : 0;
}

uint64_t rules_layout(const struct rules_engine *e)
{
	return e->synced ? e->layout_gen : 0;
}

size_t rules_count(const struct rules_engine *e)
{
	return e->n_rules;
}

const struct rule_info *rules_rule(const struct rules_engine *e, size_t i)
{
	return i < e->n_rules ? &e->rules[i].info : NULL;
}

size_t rules_profile_count(const struct rules_engine *e)
{
	return e->n_profiles;
}

const struct rules_profile_info *rules_profile(const struct rules_engine *e, size_t i)
{
	return i < e->n_profiles ? &e->profiles[i].info : NULL;
}

void rules_profile_param(const struct rules_engine *e, size_t p, size_t i, const char **name,
			 const char **value)
{
	const struct rparam *pm = &e->profiles[p].params[i];

	*name = pm->name;
	*value = pm->text ? pm->text : "";
}

void rules_profile_param_arg(const struct rules_engine *e, size_t p, size_t i, char *buf,
			     size_t len)
{
	const struct rparam *pm = &e->profiles[p].params[i];
	size_t n = 0;

	buf[0] = '\0';
	switch (pm->type) {
	case RT_NUM: {
		/* the shortest text strtod() reads back to the same double */
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, len, "%.*g", prec, pm->v.v.n);
			if (strtod(buf, NULL) == pm->v.v.n)
				break;
		}
		break;
	}
	case RT_BOOL:
		snprintf(buf, len, "%s", pm->v.v.b ? "true" : "false");
		break;
	case RT_SET:
		for (int d = 0; d < RW_DSCP_COUNT && n < len; d++)
			if (pm->v.v.set & (1ULL << d))
				n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", d);
		break;
	default:
		snprintf(buf, len, "%s", pm->v.v.s ? pm->v.v.s : "");
		break;
	}
}

void rules_result_override(struct rules_engine *e, size_t i, const struct rule_override *o)
{
	struct rule_result *x;

	if (!e->synced || i >= e->n_res)
		return;
	x = &e->res[i];
	x->outcome = o->outcome;
	strlcpy0(x->summary, o->summary ? o->summary : "", sizeof(x->summary));
	strlcpy0(x->reason, o->reason ? o->reason : "", sizeof(x->reason));
	x->window_ns = o->window_ns;
	x->observed_ns = o->observed_ns;
	/* escalation is a degraded rule's, and only of a failure */
	x->episodes = o->episodes > UINT16_MAX ? UINT16_MAX : (uint16_t)o->episodes;
	x->escalated = o->escalated && x->rule->cls == RCLASS_DEGRADED && o->outcome == RULE_FAIL;
}

void rules_set_single_sample(struct rules_engine *e, bool on)
{
	e->single_sample = on;
}

void rules_reset(struct rules_engine *e)
{
	for (size_t i = 0; e->st && i < e->n_res; i++)
		rx_slot_free(rrule_of(e->res[i].rule), &e->st[i]);
	free(e->res);
	free(e->st);
	free(e->gates);
	e->res = NULL;
	e->st = NULL;
	e->gates = NULL;
	e->n_res = 0;
	for (int k = 0; k < OBJ__COUNT; k++) {
		free(e->ids[k]);
		e->ids[k] = NULL;
		e->n_ids[k] = 0;
	}
	parked_expire(e, -1);
	e->synced = false;
}

void rules_fields_used(const struct rules_engine *e, bool used[F__COUNT])
{
	for (int i = 0; i < F__COUNT; i++)
		used[i] = e->fields_used[i];
}

size_t rules_fleet_count(const struct rules_engine *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n_rules; i++)
		n += e->rules[i].info.fleet;
	return n;
}

size_t rules_node_count(const struct rules_engine *e)
{
	return e->n_rules - rules_fleet_count(e);
}

bool rules_need_history(const struct rules_engine *e)
{
	return e->need_history;
}

uint64_t rules_evaluations(const struct rules_engine *e)
{
	return e->evaluations;
}

uint64_t rules_settled_total(const struct rules_engine *e)
{
	return e->settled_total;
}

uint64_t rules_frozen_total(const struct rules_engine *e)
{
	return e->frozen_total;
}

enum rules_status rules_status_worse(enum rules_status a, enum rules_status b)
{
	/* an undecided critical must never hide behind a decided warning: a gate that
	 * opens on WARNING would start jobs on a node it could not judge */
	static const int rank[] = {
		[RULES_OK] = 0, [RULES_WARNING] = 1, [RULES_UNKNOWN] = 2, [RULES_CRITICAL] = 3
	};

	if ((unsigned)a > RULES_UNKNOWN)
		a = RULES_UNKNOWN;
	if ((unsigned)b > RULES_UNKNOWN)
		b = RULES_UNKNOWN;
	return rank[b] > rank[a] ? b : a;
}

enum rules_status rule_result_status(const struct rule_result *x)
{
	if (rule_result_severity(x) == SEV_INFO)
		return RULES_OK;
	if (x->outcome == RULE_FAIL)
		return rule_result_severity(x) == SEV_CRITICAL ? RULES_CRITICAL : RULES_WARNING;
	return x->outcome == RULE_UNKNOWN ? RULES_UNKNOWN : RULES_OK;
}

enum rules_status rules_status(const struct rules_engine *e)
{
	enum rules_status st = e->evaluations ? RULES_OK : RULES_UNKNOWN;

	for (size_t i = 0; e->synced && i < e->n_res; i++)
		st = rules_status_worse(st, rule_result_status(&e->res[i]));
	for (size_t p = 0; p < e->n_profiles; p++)
		if (e->evaluations && !e->profiles[p].info.requirements_met)
			st = rules_status_worse(st, RULES_UNKNOWN);
	return st;
}

void rules_adopt_history(struct rules_engine *new_e, struct rules_engine *old_e)
{
	struct objid *ids[OBJ__COUNT] = { 0 };

	if (!old_e)
		return;
	/* escalation memory follows the results: a reload is not a fresh start */
	if (!new_e->hm) {
		new_e->hm = old_e->hm;
		new_e->n_hm = old_e->n_hm;
		new_e->cap_hm = old_e->cap_hm;
		new_e->hm_dirty = old_e->hm_dirty;
		old_e->hm = NULL;
		old_e->n_hm = old_e->cap_hm = 0;
	}
	if (!old_e->synced || new_e->synced)
		return;
	/* the parked history of objects away now goes to the same rules of the new engine */
	for (size_t i = 0; i < old_e->n_parked; i++) {
		struct parked *p = &old_e->parked[i];
		const struct rrule *nr = NULL;
		struct parked *n;

		for (size_t ri = 0; ri < new_e->n_rules && !nr; ri++)
			if (new_e->rules[ri].info.fingerprint == p->r->info.fingerprint &&
			    !strcmp(new_e->rules[ri].info.name, p->r->info.name) &&
			    !strcmp(new_e->rules[ri].info.profile, p->r->info.profile))
				nr = &new_e->rules[ri];
		n = nr ? realloc(new_e->parked, (new_e->n_parked + 1) * sizeof(*n)) : NULL;
		if (!n) {
			rx_slot_free(p->r, &p->st);
			continue;
		}
		new_e->parked = n;
		n[new_e->n_parked] = *p;
		n[new_e->n_parked].r = nr;
		n[new_e->n_parked].res.rule = &nr->info;
		new_e->n_parked++;
	}
	free(old_e->parked);
	old_e->parked = NULL;
	old_e->n_parked = 0;
	for (int k = OBJ_NETDEV; k < OBJ__COUNT; k++) {
		ids[k] = malloc((old_e->n_ids[k] ? old_e->n_ids[k] : 1) * sizeof(*ids[k]));
		if (!ids[k])
			goto fail;
		memcpy(ids[k], old_e->ids[k], old_e->n_ids[k] * sizeof(*ids[k]));
	}
	/* On failure the new engine simply starts without history. */
	if (!sync_slots(new_e, ids, old_e->n_ids, old_e, old_e->last_t))
		return;
fail:
	for (int k = 0; k < OBJ__COUNT; k++)
		free(ids[k]);
}

void rules_free(struct rules_engine *e)
{
	if (!e)
		return;
	for (size_t i = 0; e->st && i < e->n_res; i++)
		rx_slot_free(rrule_of(e->res[i].rule), &e->st[i]);
	free(e->res);
	free(e->st);
	free(e->gates);
	for (int k = 0; k < OBJ__COUNT; k++)
		free(e->ids[k]);
	parked_expire(e, -1);
	rx_fleet_free(e);
	rx_health_free(e);
	free(e->rules);
	free(e->profiles);
	arena_free(&e->arena);
	free(e);
}

const char *rule_outcome_name(enum rule_outcome o)
{
	static const char *const names[] = { "pass", "fail", "unknown", "skip" };

	return o < RULE__OUTCOMES ? names[o] : "pending";
}

const char *rule_severity_name(enum rule_severity s)
{
	static const char *const names[] = { "critical", "warning", "info" };

	return names[s];
}

const char *rules_status_name(enum rules_status s)
{
	static const char *const names[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

	return names[s];
}

static bool src_reads_job(const char *src)
{
	for (const char *p = src ? strstr(src, "job.") : NULL; p; p = strstr(p + 1, "job."))
		if (p == src || !(p[-1] == '_' || p[-1] == '.' || (p[-1] >= 'a' && p[-1] <= 'z') ||
				  (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9')))
			return true;
	return false;
}

bool rule_reads_job(const struct rule_info *ri)
{
	return ri->scope == OBJ_NODE && !ri->fleet &&
	       (src_reads_job(ri->when_src) || src_reads_job(ri->expr_src));
}

int rules_fabric_config(const struct rules_engine *e, struct fabric_config *fc, char *err,
			size_t errlen)
{
	bool have_sources = false, have_prefix = false, have_peer = false;

	for (size_t p = 0; p < e->n_profiles; p++) {
		const struct rprofile *pf = &e->profiles[p];
		char origin[RW_NAME_MAX + 16];

		for (size_t i = 0; i < pf->info.n_params; i++) {
			const struct rparam *pm = &pf->params[i];
			int r;

			if (!have_sources && !strcmp(pm->name, "rail_source") &&
			    pm->type == RT_STR) {
				r = fabric_config_rail_sources(fc, pm->v.v.s, err, errlen);
				if (r)
					return r;
				have_sources = true;
			} else if (!have_prefix && !strcmp(pm->name, "rail_subnet_prefix") &&
				   pm->type == RT_NUM) {
				if (pm->v.v.n < 1 || pm->v.v.n > 32 ||
				    pm->v.v.n != (int)pm->v.v.n) {
					snprintf(
					    err, errlen,
					    "profile %s: rail_subnet_prefix %g: a prefix length "
					    "1-32",
					    pf->info.name, pm->v.v.n);
					return -EINVAL;
				}
				fc->subnet_prefix = (int)pm->v.v.n;
				have_prefix = true;
			} else if (!have_peer && !strcmp(pm->name, "peer_evidence") &&
				   pm->type == RT_BOOL) {
				fc->peer_evidence = pm->v.v.b;
				have_peer = true;
			}
		}
		snprintf(origin, sizeof(origin), "%s", pf->info.name);
		for (size_t i = 0; i < pf->n_roles; i++) {
			int r = fabric_config_add_role(fc, pf->roles[i].pattern,
						       (enum port_role)pf->roles[i].role, origin,
						       err, errlen);
			if (r)
				return r;
		}
	}
	return 0;
}
