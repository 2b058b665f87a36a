// SPDX-License-Identifier: MIT
/*
 * Health over time: class and action names, the node verdict, escalation of
 * degraded results that keep failing, and the state file that carries that
 * memory (and the counter history it leans on) across restarts.
 *
 * The file is text, one record a line, so a person can read what rocewatch
 * remembers and a damaged file is told apart from a foreign one:
 *
 *   rocewatch-health-state 1
 *   boot <boot_id | ->
 *   esc <key> <fingerprint> <failing 0|1> <n> <t_ns>...
 *   ring <key> <fingerprint> <index> <ncomp> <n> <have_prev> <prev_mask>
 *        <prev_raw x ncomp> <total x ncomp> (<t_ns> <mask> <acc x ncomp>) x n
 *
 * Counter history (ring) is kept for health rules (those with a class) only.
 *
 * key is the result's identity (profile, rule, object), fingerprint the
 * rule's definition: a changed rule starts afresh.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules_int.h"
#include "util.h"

#define STATE_MAGIC "rocewatch-health-state 1"

const char *rule_class_name(enum rule_class c)
{
	static const char *const names[] = { "", "fatal", "degraded" };

	return (unsigned)c < 3 ? names[c] : "";
}

const char *rule_action_name(enum rule_action a)
{
	static const char *const names[RACT__COUNT] = {
		[RACT_NONE] = "",
		[RACT_FIX_CONFIG] = "fix-config",
		[RACT_RESET_LINK] = "reset-link",
		[RACT_RESEAT_OR_REPLACE_CABLE] = "reseat-or-replace-cable",
		[RACT_DRAIN_NODE] = "drain-node",
		[RACT_RELOAD_DRIVER] = "reload-driver",
		[RACT_CONTACT_VENDOR] = "contact-vendor",
	};

	return (unsigned)a < RACT__COUNT ? names[a] : "";
}

const char *node_verdict_name(enum node_verdict v)
{
	static const char *const names[] = { "healthy", "degraded", "fatal", "unknown" };

	return (unsigned)v < 4 ? names[v] : "unknown";
}

static void name_add(char *list, const char *name)
{
	size_t n = strlen(list), k = strlen(name);

	/* once: a rule of two profiles, a device of two ports */
	for (const char *p = list; (p = strstr(p, name)); p += k)
		if ((p == list || p[-1] == ' ') && (p[k] == ',' || !p[k]))
			return;
	snprintf(list + n, RULE_COVERAGE_NAMES - n, "%s%s", n ? ", " : "", name);
}

static struct rule_coverage *cov_of(struct rule_coverage *c, size_t n, const struct rule_result *x)
{
	for (size_t i = 0; i < n; i++)
		if (x->kind == OBJ_RDMA_PORT ? !strcmp(c[i].device, x->device)
					     : c[i].netdev[0] && !strcmp(c[i].netdev, x->device))
			return &c[i];
	return NULL;
}

int rules_coverage(const struct rules_engine *e, struct rule_coverage **out, size_t *n)
{
	struct rule_coverage *c = NULL;
	size_t nc = 0, cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; e->synced && i < e->n_res; i++) {
		const struct rule_result *x = &e->res[i];

		if (x->kind != OBJ_RDMA_PORT || cov_of(c, nc, x))
			continue;
		if (array_grow(&c, &cap, nc, sizeof(*c), 4)) {
			free(c);
			return -ENOMEM;
		}
		memset(&c[nc], 0, sizeof(c[nc]));
		strlcpy0(c[nc].device, x->device, sizeof(c[nc].device));
		strlcpy0(c[nc].netdev, x->netdev, sizeof(c[nc].netdev));
		nc++;
	}
	for (size_t i = 0; e->synced && i < e->n_res; i++) {
		const struct rule_result *x = &e->res[i];
		struct rule_coverage *cv;
		enum rule_class cls = x->rule->cls;

		if (cls == RCLASS_NONE || (x->kind != OBJ_RDMA_PORT && x->kind != OBJ_NETDEV))
			continue;
		cv = cov_of(c, nc, x);
		if (!cv)
			continue; /* a netdev with no RDMA port: not a link this judges */
		if (x->outcome == RULE_SKIP) {
			/* guard false: the driver has not what it reads (a history is no guard) */
			if (strncmp(x->reason, "guard false", 11))
				continue;
			cv->total[cls]++;
			name_add(cv->missing, x->rule->name);
			if (cls == RCLASS_FATAL)
				name_add(cv->missing_fatal, x->rule->name);
			continue;
		}
		cv->total[cls]++;
		cv->watched[cls]++;
		name_add(cv->watching, x->rule->name);
	}
	*out = c;
	*n = nc;
	return 0;
}

bool rules_coverage_text(const struct rule_coverage *c, char *buf, size_t len)
{
	unsigned w = c->watched[RCLASS_FATAL] + c->watched[RCLASS_DEGRADED],
		 t = c->total[RCLASS_FATAL] + c->total[RCLASS_DEGRADED];
	bool gap = c->missing_fatal[0];

	snprintf(buf, len, "%s%s%s%s: %u of %u link-health rules watch it%s%s", c->device,
		 c->netdev[0] ? " (" : "", c->netdev, c->netdev[0] ? ")" : "", w, t,
		 gap ? "; fatal ones unavailable here (driver or source): " : "",
		 gap ? c->missing_fatal : "");
	return gap;
}

/*
 * A device on which every fatal link-health rule is skipped: nothing would
 * see its link go down or corrupt (the degraded ones left, rdma_port_not_
 * reappeared or carrier flaps, do not make a job's failure), so "healthy"
 * is not known there.
 */
static bool unwatched_device(const struct rules_engine *e)
{
	struct rule_coverage *c;
	bool none = false;
	size_t n;

	if (rules_coverage(e, &c, &n))
		return true; /* out of memory: not "healthy" on that */
	for (size_t i = 0; i < n && !none; i++)
		none = c[i].total[RCLASS_FATAL] && !c[i].watched[RCLASS_FATAL];
	free(c);
	return none;
}

enum node_verdict rules_verdict(const struct rules_engine *e)
{
	bool fatal = false, degraded = false, unknown = !e->evaluations || !e->synced;

	for (size_t i = 0; e->synced && i < e->n_res; i++) {
		const struct rule_result *x = &e->res[i];
		enum rule_class c = rule_result_verdict_class(x);

		if (c == RCLASS_NONE)
			continue; /* info */
		if (x->outcome == RULE_FAIL)
			*(c == RCLASS_FATAL ? &fatal : &degraded) = true;
		else if (x->outcome == RULE_UNKNOWN)
			unknown = true;
	}
	for (size_t p = 0; p < e->n_profiles; p++)
		if (e->evaluations && !e->profiles[p].info.requirements_met)
			unknown = true;
	if (fatal)
		return VERDICT_FATAL;
	if (degraded)
		return VERDICT_DEGRADED;
	/* healthy with no fatal link-health rule watching a device is not known to be healthy */
	return unknown || unwatched_device(e) ? VERDICT_UNKNOWN : VERDICT_HEALTHY;
}

/* ---- escalation memory ---- */

/*
 * Sorted by key: a result finds its memory in log time at every evaluation,
 * and a state file of many records loads in n log n, not n^2.
 */
/* The first of n records of size bytes, sorted by a leading uint64_t key, not below key. */
static size_t key_lower_bound(const void *base, size_t n, size_t size, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t hmem_pos(const struct rules_engine *e, uint64_t key)
{
	_Static_assert(offsetof(struct hmem, key) == 0, "key_lower_bound reads the key first");
	return key_lower_bound(e->hm, e->n_hm, sizeof(*e->hm), key);
}

static struct hmem *hmem_find(struct rules_engine *e, uint64_t key, bool add)
{
	size_t i = hmem_pos(e, key);

	if (i < e->n_hm && e->hm[i].key == key)
		return &e->hm[i];
	if (!add)
		return NULL;
	if (e->n_hm == e->cap_hm) {
		size_t cap = e->cap_hm ? 2 * e->cap_hm : 16;
		struct hmem *n = realloc(e->hm, cap * sizeof(*n));

		if (!n)
			return NULL;
		e->hm = n;
		e->cap_hm = cap;
	}
	memmove(&e->hm[i + 1], &e->hm[i], (e->n_hm - i) * sizeof(e->hm[0]));
	memset(&e->hm[i], 0, sizeof(e->hm[0]));
	e->hm[i].key = key;
	e->n_hm++;
	return &e->hm[i];
}

/* The hardware identity of result x (engine.c's ident: "guid:...", "pci:..."), or "". */
static const char *ident_of(const struct rules_engine *e, const struct rule_result *x)
{
	const struct rrule *r = (const struct rrule *)x->rule;
	size_t s = (size_t)(x - e->res), i;

	if (x->kind == OBJ_NODE || s < r->res_off || s - r->res_off >= e->n_ids[x->kind])
		return "";
	i = s - r->res_off;
	return e->ids[x->kind][i].ident;
}

/*
 * "mlx5_0/1", "eth2" or "node": what a result's memory is about, written
 * without printf (every degraded-class result, every poll).
 */
static void result_name(const struct rule_result *x, char *buf, size_t len)
{
	char num[24], *d;
	size_t n;

	if (x->kind != OBJ_RDMA_PORT) {
		strlcpy0(buf, x->kind == OBJ_NODE ? "node" : x->device, len);
		return;
	}
	n = strlcpy0(buf, x->device, len);
	if (n + 1 >= len)
		return;
	buf[n++] = '/';
	d = u64_digits(num + sizeof(num) - 1, x->port);
	num[sizeof(num) - 1] = '\0';
	strlcpy0(buf + n, d, len - n);
}

/* Is have what result_name(x) writes (in len bytes)?  Without writing it: every poll. */
static bool name_is(const char *have, const struct rule_result *x, size_t len)
{
	const char *dev = x->kind == OBJ_NODE ? "node" : x->device;
	size_t n = strlen(dev);
	char num[24], *d;

	if (n + 1 >= len || strncmp(have, dev, n))
		return false; /* or cut short: result_name() says */
	if (x->kind != OBJ_RDMA_PORT)
		return !have[n];
	if (have[n] != '/')
		return false;
	num[sizeof(num) - 1] = '\0';
	d = u64_digits(num + sizeof(num) - 1, x->port);
	return n + 1 + strlen(d) < len && !strcmp(have + n + 1, d);
}

/*
 * The escalation memory of result x, keyed by what does not move: its
 * identity (the port's node GUID and port number, the netdev's PCI function),
 * so a device renamed at reboot keeps it.  A memory under the name key (a
 * state file from before, an object without identity) is taken over once.
 * A new identity under a remembered name is another card: it starts fresh,
 * and the log says so once.
 */
static struct hmem *memory_of(struct rules_engine *e, const struct rule_result *x)
{
	const char *ident = ident_of(e, x);
	struct slot_state *st = &e->st[x - e->res];
	struct hmem *h, *old;
	char name[sizeof(h->name)];

	/* where it was last poll, unless the table moved since (keys are unique) */
	if (st->hm_at < e->n_hm && e->hm[st->hm_at].key == x->ikey)
		h = &e->hm[st->hm_at];
	else
		h = hmem_find(e, x->ikey, false);
	if (h && name_is(h->name, x, sizeof(h->name)) && !strcmp(h->ident, ident)) {
		st->hm_at = (uint32_t)(h - e->hm);
		return h; /* the same as last time: nothing to compare or copy */
	}
	result_name(x, name, sizeof(name));
	if (!h && x->ikey != x->key && (old = hmem_find(e, x->key, false))) {
		struct hmem moved = *old;
		size_t at = (size_t)(old - e->hm);

		/* remembered by name: by identity from now on (the table stays sorted) */
		memmove(old, old + 1, (e->n_hm - at - 1) * sizeof(*old));
		e->n_hm--;
		h = hmem_find(e, x->ikey, true);
		if (h) {
			moved.key = x->ikey;
			*h = moved;
		}
		e->hm_dirty = true;
	}
	if (!h) {
		h = hmem_find(e, x->ikey, true);
		if (!h)
			return NULL;
		for (size_t i = 0; *ident && i < e->n_hm; i++) {
			const struct hmem *o = &e->hm[i];
			char once[200];

			if (o == h || !o->ident[0] || strcmp(o->name, name) ||
			    !strcmp(o->ident, ident))
				continue;
			snprintf(once, sizeof(once), "health:new:%s:%s", name, ident);
			rw_log_once(LOG_LVL_INFO, once,
				    "rules: health memory: %s is new hardware (%s, was %s): its "
				    "escalation memory starts fresh",
				    name, ident, o->ident);
			break;
		}
	} else if (h->name[0] && strcmp(h->name, name)) {
		log_info("rules: health memory: %s (%s) was %s before: its memory carried over",
			 name, *ident ? ident : "no identity", h->name);
		e->hm_dirty = true;
	}
	/* the same every poll but the first: compared, not copied */
	if (strcmp(h->name, name))
		strlcpy0(h->name, name, sizeof(h->name));
	if (strcmp(h->ident, ident))
		strlcpy0(h->ident, ident, sizeof(h->ident));
	st->hm_at = (uint32_t)(h - e->hm);
	return h;
}

void rx_health_note(struct rules_engine *e, struct rule_result *x, int64_t wall_ns)
{
	const struct rule_info *ri = x->rule;
	struct hmem *h;
	int k = 0;

	x->escalated = false;
	x->episodes = 0;
	if (ri->cls != RCLASS_DEGRADED || ri->escalate_after <= 0)
		return;
	h = memory_of(e, x);
	if (!h)
		return; /* out of memory: judged without its history, never wrongly escalated */
	h->window_ns = ri->escalate_window_ns;
	if (h->fp != ri->fingerprint) {
		/* a new or changed rule: what the old one remembered is not about it */
		memset(h->t, 0, sizeof(h->t));
		h->n = 0;
		h->failing = false;
		h->fp = ri->fingerprint;
	}
	/* forget episodes that left the window */
	for (int i = 0; i < h->n; i++)
		if (h->t[i] > wall_ns - ri->escalate_window_ns)
			h->t[k++] = h->t[i];
	h->n = (uint8_t)k;
	if (x->outcome == RULE_FAIL && !h->failing) {
		/* a new failure episode (a rule that stays failing counts once) */
		if (h->n == RULE_ESCALATE_MAX) {
			memmove(h->t, h->t + 1, (RULE_ESCALATE_MAX - 1) * sizeof(h->t[0]));
			h->n--;
		}
		h->t[h->n++] = wall_ns;
		e->hm_dirty = true;
	}
	if (x->outcome == RULE_FAIL)
		h->failing = true;
	else if (x->outcome == RULE_PASS)
		h->failing = false;
	x->episodes = h->n;
	if (h->n < ri->escalate_after || (x->outcome != RULE_PASS && x->outcome != RULE_FAIL)) {
		/* escalation seen coming: "2 of 5 failures in 24h that make it fatal" */
		if (h->n && x->outcome != RULE_SKIP) {
			struct tbuf tb = { x->summary, strlen(x->summary), sizeof(x->summary) };

			tb_printf(&tb, " (%u of %d failures in %gh that make it fatal)",
				  (unsigned)h->n, ri->escalate_after,
				  (double)ri->escalate_window_ns / 3.6e12);
		}
		return;
	}
	/* fatal until enough of those episodes leave the window, even while it passes now */
	x->escalated = true;
	if (x->outcome == RULE_PASS) {
		x->outcome = RULE_FAIL;
		x->since_ns = x->eval_ns;
	}
	{
		char s[RULE_SUMMARY_MAX];
		int n = snprintf(s, sizeof(s),
				 "escalated to fatal: %u failures in %gh; last: ", (unsigned)h->n,
				 (double)ri->escalate_window_ns / 3.6e12);

		if (n > 0 && (size_t)n < sizeof(s))
			strlcpy0(s + n, x->summary[0] ? x->summary : "-", sizeof(s) - (size_t)n);
		strlcpy0(x->summary, s, sizeof(x->summary));
	}
}

int rules_health_forget(struct rules_engine *e, const char *rule, const char *object,
			size_t *forgotten, char *err, size_t errlen)
{
	char dev[RW_NAME_MAX] = "";
	bool found = false, degraded = false;
	uint32_t port = 0;

	*forgotten = 0;
	for (size_t i = 0; i < e->n_rules; i++) {
		const struct rrule *r = &e->rules[i];
		enum obj_kind k = r->info.scope;
		struct hmem *h;
		uint64_t key;

		if (r->info.fleet || strcmp(r->info.name, rule))
			continue;
		found = true;
		if (r->info.cls != RCLASS_DEGRADED)
			continue;
		degraded = true;
		if (k == OBJ_NODE) {
			if (*object && strcmp(object, "node")) {
				snprintf(err, errlen,
					 "%s judges the node: its object is 'node', not '%s'", rule,
					 object);
				return -EINVAL;
			}
		} else {
			const char *slash = strchr(object, '/');
			size_t n = slash ? (size_t)(slash - object) : strlen(object);
			char *end;

			if (!n || n >= sizeof(dev) || (k == OBJ_NETDEV && slash)) {
				snprintf(err, errlen, "%s judges %s: '%s' is not one (%s)", rule,
					 obj_kind_name(k), object,
					 k == OBJ_NETDEV ? "a netdev name: eth2"
							 : "DEVICE/PORT: mlx5_0/1");
				return -EINVAL;
			}
			memcpy(dev, object, n);
			dev[n] = '\0';
			port = 0;
			if (k == OBJ_RDMA_PORT) {
				unsigned long p = 1; /* a device alone: its first port */

				if (slash) {
					errno = 0;
					p = strtoul(slash + 1, &end, 10);
					if (!slash[1] || *end || errno || !p || p > 255) {
						snprintf(err, errlen,
							 "%s: '%s' has no port number 1-255", rule,
							 object);
						return -EINVAL;
					}
				}
				port = (uint32_t)p;
			}
		}
		key = rx_result_key(r, k, k == OBJ_NODE ? "" : dev, port);
		/* the memory is under the object's identity where it has one */
		for (int pass = 0; pass < 2; pass++) {
			uint64_t mk = key;

			for (size_t s = 0; pass && s < e->n_res; s++)
				if (e->res[s].key == key)
					mk = e->res[s].ikey;
			if (pass && mk == key)
				break;
			h = hmem_find(e, mk, false);
			if (h && (h->n || h->failing)) {
				*forgotten += h->n;
				h->n = 0;
				h->failing = false;
				e->hm_dirty = true;
			}
		}
		/* the result as it reads now: not escalated (the next poll decides it anew) */
		for (size_t s = 0; s < e->n_res; s++)
			if (e->res[s].key == key && e->res[s].escalated) {
				e->res[s].escalated = false;
				e->res[s].episodes = 0;
			}
	}
	if (!found) {
		snprintf(err, errlen, "no rule '%s' in the loaded profiles", rule);
		return -ENOENT;
	}
	if (!degraded) {
		snprintf(err, errlen,
			 "%s is not a degraded rule: it never escalates, there is nothing to reset",
			 rule);
		return -EINVAL;
	}
	return 0;
}

bool rules_health_dirty(const struct rules_engine *e)
{
	return e->hm_dirty;
}

/* ---- the state file ---- */

/* A state file larger than this is not one rocewatch wrote (an 8-NIC node's is ~25 KB). */
#define STATE_MAX_BYTES (16u << 20)
/* An episode or sample dated later than now by more than this: a clock that ran ahead. */
#define STATE_FUTURE_SLACK_NS (5LL * 60 * 1000000000LL)
/* Before 2001: no clock rocewatch ran under said so. */
#define STATE_MIN_TIME_NS (978307200LL * 1000000000LL)
/* Counters are 64-bit at most. */
#define STATE_COUNTER_MAX 18446744073709551616.0

/* The longest escalation window of the engine's rules (24 h when it has none). */
static int64_t max_window(const struct rules_engine *e)
{
	int64_t w = 0;

	for (size_t i = 0; i < e->n_rules; i++)
		if (e->rules[i].info.escalate_window_ns > w)
			w = e->rules[i].info.escalate_window_ns;
	return w ? w : 24LL * 3600 * 1000000000LL;
}

/* Is what h remembers still worth remembering at wall-clock now? */
static bool hmem_live(const struct rules_engine *e, const struct hmem *h, int64_t now)
{
	int64_t w = h->window_ns ? h->window_ns : max_window(e);

	if (h->failing)
		return true; /* the episode goes on, however old its start */
	return h->n && h->t[h->n - 1] > now - w;
}

static void put_ring(struct strbuf *sb, uint64_t key, uint64_t fp, int idx, const struct ring *r)
{
	sb_printf(sb, "ring %016" PRIx64 " %016" PRIx64 " %d %u %u %d %u", key, fp, idx, r->ncomp,
		  r->n, r->have_prev, r->prev_mask);
	for (int p = 0; p < r->ncomp; p++)
		sb_printf(sb, " %.17g", r->prev_raw[p]);
	for (int p = 0; p < r->ncomp; p++)
		sb_printf(sb, " %.17g", r->total[p]);
	for (int i = 0; i < r->n; i++) {
		int s = (r->first + i) % r->cap;

		sb_printf(sb, " %" PRId64 " %u", r->t[s], r->mask[s]);
		for (int p = 0; p < r->ncomp; p++)
			sb_printf(sb, " %.17g", r->acc[(size_t)s * r->ncomp + p]);
	}
	sb_putc(sb, '\n');
}

int rules_health_serialize(struct rules_engine *e, const char *boot_id, struct strbuf *out)
{
	/* the engine's own now: the wall-clock time of the last model it judged */
	int64_t now = e->last_wall_ns;

	rx_thaw_all(e); /* a frozen result's rings as its passes sampled them */
	sb_reset(out);
	sb_printf(out, "%s\nboot %s\n", STATE_MAGIC, boot_id && *boot_id ? boot_id : "-");
	for (size_t i = 0; i < e->n_hm; i++) {
		const struct hmem *h = &e->hm[i];

		/* an object gone longer than the window: nothing to carry */
		if (now && !hmem_live(e, h, now))
			continue;
		sb_printf(out, "esc %016" PRIx64 " %016" PRIx64 " %d %u", h->key, h->fp, h->failing,
			  h->n);
		for (int k = 0; k < h->n; k++)
			sb_printf(out, " %" PRId64, h->t[k]);
		/* what it is about, for a person and for a card replaced under the same name */
		if (h->name[0])
			sb_printf(out, " = %s %s", h->name, h->ident[0] ? h->ident : "-");
		sb_putc(out, '\n');
	}
	for (size_t i = 0; e->synced && e->st && i < e->n_res; i++) {
		const struct rrule *rr = (const struct rrule *)e->res[i].rule;

		/*
		 * The health rules' counter history only: they judge events that must not
		 * be lost across a restart, and keeping every rule's would write
		 * megabytes every few seconds on an 8-NIC node.
		 */
		if (rr->info.cls == RCLASS_NONE)
			continue;
		for (int j = 0; e->st[i].rings && j < rr->n_rings; j++)
			if (e->st[i].rings[j].n)
				put_ring(out, e->res[i].ikey, rr->info.fingerprint, j,
					 &e->st[i].rings[j]);
	}
	/* history read from the file and not yet given to a result (no poll since): kept */
	for (size_t i = 0; i < e->n_pend; i++) {
		const struct pending_ring *pr = &e->pend[i];

		sb_printf(out, "ring %016" PRIx64 " %016" PRIx64 " %d %d %d %d %u", pr->key, pr->fp,
			  pr->idx, pr->ncomp, pr->n, pr->have_prev, pr->prev_mask);
		for (int p = 0; p < pr->ncomp; p++)
			sb_printf(out, " %.17g", pr->prev_raw[p]);
		for (int p = 0; p < pr->ncomp; p++)
			sb_printf(out, " %.17g", pr->total[p]);
		for (int k = 0; k < pr->n; k++) {
			sb_printf(out, " %" PRId64 " %u", pr->t[k], pr->mask[k]);
			for (int p = 0; p < pr->ncomp; p++)
				sb_printf(out, " %.17g", pr->acc[(size_t)k * pr->ncomp + p]);
		}
		sb_putc(out, '\n');
	}
	if (out->oom)
		return -ENOMEM;
	e->hm_dirty = false; /* on its way to disk */
	return 0;
}

int rules_health_write(const char *path, const char *data, size_t len)
{
	char tmp[4096], dir[4096];
	int fd = -1, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	/*
	 * Created here, never opened through what is there: O_EXCL fails on a
	 * planted symlink (whose target would be truncated, as root) and on a
	 * FIFO (which would block the writer).  What is there is a stale file
	 * of a kill -9 mid-write or something planted: unlinked (the name, never
	 * what it points to) and created once more.
	 */
	for (int attempt = 0; fd < 0; attempt++) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			  0600);
		if (fd >= 0)
			break;
		if (errno != EEXIST || attempt)
			return -errno;
		if (unlink(tmp) && errno != ENOENT)
			return -errno;
	}
	/* all of it on disk before the rename makes it the state: kill -9 or a crash leaves
	 * the old file or the new one, never half of one */
	r = rw_replace_file(fd, tmp, path, data, len);
	if (r)
		return r;
	strlcpy0(dir, path, sizeof(dir));
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* the rename itself, through a power loss */
		close(fd);
	}
	return 0;
}

int rules_health_save(struct rules_engine *e, const char *path, const char *boot_id)
{
	struct strbuf sb = { 0 };
	int r = rules_health_serialize(e, boot_id, &sb);

	if (!r)
		r = rules_health_write(path, sb.buf, sb.len);
	sb_free(&sb);
	return r;
}

/* Tokens of one line; why names the first thing wrong with it. */
struct lx {
	char *p;
	size_t line;
	bool bad;
	const char *why;
};

static void lx_bad(struct lx *l, const char *why)
{
	if (!l->bad)
		l->why = why;
	l->bad = true;
}

static char *tok(struct lx *l)
{
	char *s;

	while (*l->p == ' ')
		l->p++;
	if (!*l->p || *l->p == '\n') {
		lx_bad(l, "a field missing");
		return NULL;
	}
	s = l->p;
	while (*l->p && *l->p != ' ' && *l->p != '\n')
		l->p++;
	if (*l->p)
		*l->p++ = '\0';
	return s;
}

/* The next field: the word want, or (want NULL) any printable word into out. */
static bool tok_word(struct lx *l, const char *want, char *out, size_t len)
{
	char *s = tok(l);

	if (!s)
		return false;
	if (want)
		return !strcmp(s, want);
	if (strlen(s) >= len)
		return false;
	for (const char *c = s; *c; c++)
		if (*c < 0x21 || *c > 0x7e)
			return false;
	memcpy(out, s, strlen(s) + 1);
	return true;
}

static uint64_t tok_hex(struct lx *l)
{
	char *s = tok(l), *end;
	uint64_t v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (*end || errno || strlen(s) != 16 || !isxdigit((unsigned char)s[0]))
		lx_bad(l, "not a 16-digit hex key");
	return v;
}

static int64_t tok_int(struct lx *l, int64_t lo, int64_t hi)
{
	char *s = tok(l), *end;
	long long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end || errno || !(isdigit((unsigned char)s[0]) || s[0] == '-'))
		lx_bad(l, "not an integer");
	else if (v < lo || v > hi)
		lx_bad(l, "a number out of range");
	return v;
}

/* A time: a wall-clock instant in ns, neither before 2001 nor in the future. */
static int64_t tok_time(struct lx *l, int64_t now, bool *future)
{
	int64_t t = tok_int(l, INT64_MIN, INT64_MAX);

	if (l->bad)
		return 0;
	if (t < STATE_MIN_TIME_NS)
		lx_bad(l, t < 0 ? "a negative time" : "a time before 2001");
	else if (t > now + STATE_FUTURE_SLACK_NS)
		*future = true;
	return t;
}

/*
 * A counter value as %.17g writes it: finite, at most 2^64 in size, and
 * not negative where it is a count (totals); never "inf", "nan" or hex.
 */
static double tok_num(struct lx *l, bool count)
{
	char *s = tok(l), *end;
	const char *c;
	double v;

	if (!s)
		return 0;
	c = s + (*s == '-');
	if (!isdigit((unsigned char)*c)) {
		lx_bad(l, "not a number");
		return 0;
	}
	for (; *c; c++)
		if (!isdigit((unsigned char)*c) && !strchr(".eE+-", *c)) {
			lx_bad(l, "not a number");
			return 0;
		}
	v = strtod(s, &end);
	if (*end || !isfinite(v))
		lx_bad(l, "not a number");
	else if (fabs(v) > STATE_COUNTER_MAX)
		lx_bad(l, "a counter beyond 64 bits");
	else if (count && v < 0)
		lx_bad(l, "a negative count");
	return v;
}

static bool at_end(struct lx *l)
{
	while (*l->p == ' ')
		l->p++;
	return !*l->p || *l->p == '\n';
}

static void pending_free(struct rules_engine *e)
{
	for (size_t i = 0; i < e->n_pend; i++) {
		free(e->pend[i].t);
		free(e->pend[i].mask);
		free(e->pend[i].acc);
	}
	free(e->pend);
	e->pend = NULL;
	e->n_pend = 0;
}

static void pr_free(struct pending_ring *pr)
{
	free(pr->t);
	free(pr->mask);
	free(pr->acc);
}

static int parse_ring(struct lx *l, struct pending_ring *pr, int64_t now)
{
	bool future = false;

	memset(pr, 0, sizeof(*pr));
	pr->key = tok_hex(l);
	pr->fp = tok_hex(l);
	pr->idx = (int)tok_int(l, 0, 1000);
	pr->ncomp = (int)tok_int(l, 1, RW_PRIO_COUNT);
	pr->n = (int)tok_int(l, 0, RING_CAP);
	pr->have_prev = tok_int(l, 0, 1) != 0;
	pr->prev_mask = (uint8_t)tok_int(l, 0, 255);
	if (l->bad)
		return -EINVAL;
	/* raw values may be a gauge's (delta): any sign; totals only grow from 0 */
	for (int p = 0; p < pr->ncomp; p++)
		pr->prev_raw[p] = tok_num(l, false);
	for (int p = 0; p < pr->ncomp; p++)
		pr->total[p] = tok_num(l, true);
	if (l->bad)
		return -EINVAL;
	pr->t = calloc((size_t)pr->n + 1, sizeof(*pr->t));
	pr->mask = calloc((size_t)pr->n + 1, 1);
	pr->acc = calloc(((size_t)pr->n + 1) * (size_t)pr->ncomp, sizeof(*pr->acc));
	if (!pr->t || !pr->mask || !pr->acc)
		return -ENOMEM;
	for (int i = 0; i < pr->n && !l->bad; i++) {
		pr->t[i] = tok_time(l, now, &future);
		if (i && pr->t[i] < pr->t[i - 1])
			lx_bad(l, "samples out of time order"); /* they are oldest first */
		pr->mask[i] = (uint8_t)tok_int(l, 0, 255);
		for (int p = 0; p < pr->ncomp; p++)
			pr->acc[(size_t)i * pr->ncomp + p] = tok_num(l, false);
	}
	if (!l->bad && future)
		lx_bad(l, "samples dated in the future");
	if (!l->bad && !at_end(l))
		lx_bad(l, "more fields than it has");
	return l->bad ? -EINVAL : 0;
}

/* " = NAME IDENT": the object a record is about (IDENT "-": none); printable words only. */
static void parse_about(struct lx *l, struct hmem *h)
{
	char name[sizeof(h->name)], ident[sizeof(h->ident)];

	if (!tok_word(l, "=", NULL, 0) || !tok_word(l, NULL, name, sizeof(name)) ||
	    !tok_word(l, NULL, ident, sizeof(ident))) {
		lx_bad(l, "a malformed '= NAME IDENT' part");
		return;
	}
	strlcpy0(h->name, name, sizeof(h->name));
	strlcpy0(h->ident, strcmp(ident, "-") ? ident : "", sizeof(h->ident));
}

/* An escalation record; its episodes dated in the future are dropped (*dropped counts them). */
static int parse_esc(struct lx *l, struct hmem *h, int64_t now, size_t *dropped)
{
	int k = 0;

	memset(h, 0, sizeof(*h));
	h->key = tok_hex(l);
	h->fp = tok_hex(l);
	h->failing = tok_int(l, 0, 1) != 0;
	h->n = (uint8_t)tok_int(l, 0, RULE_ESCALATE_MAX);
	for (int i = 0; i < h->n && !l->bad; i++) {
		bool future = false;
		int64_t t = tok_time(l, now, &future);

		if (k && t < h->t[k - 1])
			lx_bad(l, "episodes out of time order");
		if (future)
			(*dropped)++; /* a clock that ran ahead before NTP: not an episode */
		else
			h->t[k++] = t;
	}
	if (!l->bad && !at_end(l))
		parse_about(l, h);
	if (!l->bad && !at_end(l))
		lx_bad(l, "more fields than it has");
	h->n = (uint8_t)k;
	return l->bad ? -EINVAL : 0;
}

/* The later record wins where the file has two for one key (qsort is not stable). */
static int cmp_hmem(const void *a, const void *b)
{
	const struct hmem *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->window_ns < y->window_ns ? -1 : x->window_ns > y->window_ns;
}

static int cmp_pend(const void *a, const void *b)
{
	const struct pending_ring *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* A state file being read: the records kept so far. */
struct hload {
	struct rules_engine *e;
	struct rules_health_load_stats *st;
	const char *boot_id;
	int64_t now;
	struct hmem *hm;
	size_t n_hm, cap_hm, cap_pend;
	bool same_boot;
};

static int keep_esc(struct hload *h, const struct hmem *m, size_t line)
{
	if (h->n_hm == h->cap_hm) {
		size_t cap = h->cap_hm ? 2 * h->cap_hm : 64;
		struct hmem *n = realloc(h->hm, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		h->hm = n;
		h->cap_hm = cap;
	}
	h->hm[h->n_hm] = *m;
	/* the line in window_ns until sorted: the later record wins */
	h->hm[h->n_hm++].window_ns = (int64_t)line;
	h->st->records++;
	return 0;
}

static int keep_ring(struct hload *h, struct pending_ring *pr, size_t line)
{
	struct rules_engine *e = h->e;

	if (e->n_pend == h->cap_pend) {
		size_t cap = h->cap_pend ? 2 * h->cap_pend : 64;
		struct pending_ring *n = realloc(e->pend, cap * sizeof(*n));

		if (!n) {
			pr_free(pr);
			return -ENOMEM;
		}
		e->pend = n;
		h->cap_pend = cap;
	}
	pr->line = line;
	e->pend[e->n_pend++] = *pr;
	h->st->records++;
	return 0;
}

/* One record after the magic line: 0 kept or passed over, 1 refused (l->why), -ENOMEM. */
static int load_record(struct hload *h, struct lx *l)
{
	char *kind = tok(l);

	if (!kind)
		return 1;
	if (!strcmp(kind, "boot")) {
		char *b = tok(l);

		h->same_boot = b && h->boot_id && *h->boot_id && !strcmp(b, h->boot_id);
		if (l->bad || !at_end(l))
			lx_bad(l, "more fields than it has");
	} else if (!strcmp(kind, "esc")) {
		struct hmem m;

		if (parse_esc(l, &m, h->now, &h->st->future))
			return 1;
		return !m.failing && !m.n ? 0 : keep_esc(h, &m, l->line);
	} else if (!strcmp(kind, "ring")) {
		struct pending_ring pr;
		int r = parse_ring(l, &pr, h->now);

		if (r == -ENOMEM) {
			pr_free(&pr);
			return -ENOMEM;
		}
		if (r || !h->same_boot) {
			/* after a reboot every counter started again: no history spans it */
			pr_free(&pr);
			return r ? 1 : 0;
		}
		return keep_ring(h, &pr, l->line);
	} else {
		lx_bad(l, "not a record rocewatch writes");
	}
	return l->bad;
}

/* Sorted by key, the later of two records for a key kept: n log n, however many. */
static size_t dedupe_hm(struct hmem *hm, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	qsort(hm, n, sizeof(*hm), cmp_hmem);
	for (size_t i = 0; i < n; i++) {
		if (k && hm[k - 1].key == hm[i].key)
			k--;
		hm[k] = hm[i];
		hm[k++].window_ns = 0; /* not known until its rule is evaluated */
	}
	return k;
}

int rules_health_load_buffer(struct rules_engine *e, char *buf, size_t len, const char *boot_id,
			     int64_t now, struct rules_health_load_stats *st)
{
	struct hload h = { .e = e, .st = st, .boot_id = boot_id, .now = now };
	char *p = buf, *endp = buf + len;
	size_t line = 0;
	int r = 0;

	memset(st, 0, sizeof(*st));
	while (p < endp && r >= 0) {
		char *nl = memchr(p, '\n', (size_t)(endp - p));
		struct lx l = { 0 };

		if (!nl) {
			st->why = "the last line is cut (no newline)";
			st->refused++;
			st->first_line = line + 1;
			break;
		}
		*nl = '\0';
		l.p = p;
		l.line = ++line;
		p = nl + 1;
		if (memchr(l.p, '\0', (size_t)(nl - l.p))) {
			l.why = "a NUL byte";
			r = 1;
		} else if (line == 1) {
			if (strcmp(l.p, STATE_MAGIC))
				r = -EINVAL; /* foreign: all of it */
			continue;
		} else {
			r = load_record(&h, &l);
		}
		/* one bad record is refused alone; the others stand */
		if (r == 1 && !st->refused++) {
			st->why = l.why ? l.why : "corrupt";
			st->first_line = line;
		}
	}
	if (r > 0)
		r = 0;
	if (!r && line == 0)
		r = -ENODATA;
	if (r) {
		free(h.hm);
		pending_free(e);
		return r;
	}
	free(e->hm);
	e->hm = h.hm;
	e->n_hm = dedupe_hm(h.hm, h.n_hm);
	e->cap_hm = h.cap_hm;
	if (e->n_pend)
		qsort(e->pend, e->n_pend, sizeof(*e->pend), cmp_pend);
	return 0;
}

static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m)		  ? "a FIFO"
	       : S_ISDIR(m)		  ? "a directory"
	       : S_ISSOCK(m)		  ? "a socket"
	       : S_ISCHR(m) || S_ISBLK(m) ? "a device"
					  : "not a regular file";
}

/*
 * The file, guarded as the recorder's: never through a symlink, never a
 * FIFO (which would hang start-up before the listener), never one that
 * another user could have written; at most STATE_MAX_BYTES.
 */
static int read_state_file(const char *path, char **out, size_t *len, char *msg, size_t msglen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	size_t got = 0;
	char *buf;

	*out = NULL;
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT)
			return 0; /* the first start */
		if (err == ELOOP)
			snprintf(msg, msglen, "%s: a symbolic link: refused; starting afresh",
				 path);
		else
			snprintf(msg, msglen, "%s: %s; starting afresh", path, strerror(err));
		return -err;
	}
	if (fstat(fd, &st)) {
		int err = errno;

		close(fd);
		snprintf(msg, msglen, "%s: %s; starting afresh", path, strerror(err));
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(msg, msglen, "%s: %s, not a regular file: refused; starting afresh", path,
			 file_kind(st.st_mode));
		return -EINVAL;
	}
	if (st.st_mode & S_IWOTH) {
		close(fd);
		snprintf(msg, msglen,
			 "%s: world-writable (mode %04o): anyone could have written it; refused, "
			 "starting afresh",
			 path, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		snprintf(
		    msg, msglen,
		    "%s: owned by uid %u, not by rocewatch (uid %u) or root: refused; starting "
		    "afresh",
		    path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if ((uint64_t)st.st_size > STATE_MAX_BYTES) {
		close(fd);
		snprintf(msg, msglen,
			 "%s: %lld bytes, more than a health state file can be (%u): refused; "
			 "starting afresh",
			 path, (long long)st.st_size, STATE_MAX_BYTES);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		snprintf(msg, msglen, "%s: out of memory; starting afresh", path);
		return -ENOMEM;
	}
	/* at most its size then: a file that grows meanwhile is read as it was */
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			free(buf);
			close(fd);
			snprintf(msg, msglen, "%s: %s; starting afresh", path, strerror(err));
			return -err;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

int rules_health_load(struct rules_engine *e, const char *path, const char *boot_id, char *msg,
		      size_t msglen)
{
	struct rules_health_load_stats st;
	char *buf;
	size_t len = 0;
	int r;

	msg[0] = '\0';
	r = read_state_file(path, &buf, &len, msg, msglen);
	if (r || !buf)
		return r;
	r = rules_health_load_buffer(e, buf, len, boot_id, real_ns(), &st);
	free(buf);
	if (r == -EINVAL) {
		snprintf(msg, msglen,
			 "%s: not a rocewatch health state file (foreign or of another version); "
			 "starting afresh",
			 path);
	} else if (r == -ENODATA) {
		snprintf(msg, msglen, "%s: empty; starting afresh", path);
		r = -EINVAL;
	} else if (r) {
		snprintf(msg, msglen, "%s: %s; starting afresh", path, strerror(-r));
	} else if (st.refused || st.future) {
		struct tbuf tb = { msg, 0, msglen };

		tb_printf(&tb, "%s:", path);
		if (st.refused)
			tb_printf(&tb, " %zu of %zu records refused (line %zu: %s)", st.refused,
				  st.refused + st.records, st.first_line, st.why);
		if (st.future)
			tb_printf(&tb, "%s %zu failure episodes dated in the future dropped",
				  st.refused ? ";" : "", st.future);
		tb_puts(&tb, "; the rest is kept");
	}
	return r;
}

/* After the first layout: give each result the counter history saved for it. */
void rx_health_apply_pending(struct rules_engine *e)
{
	/* pend is sorted by key (then by line): one binary search per result */
	for (size_t s = 0; s < e->n_res; s++) {
		const struct rrule *rr = (const struct rrule *)e->res[s].rule;
		uint64_t key = e->res[s].ikey;
		size_t lo;

		if (!e->st[s].rings)
			continue;
		_Static_assert(offsetof(struct pending_ring, key) == 0, "key first");
		lo = key_lower_bound(e->pend, e->n_pend, sizeof(*e->pend), key);
		if ((lo >= e->n_pend || e->pend[lo].key != key) && key != e->res[s].key) {
			/* a file from before identity keys: by name */
			key = e->res[s].key;
			lo = key_lower_bound(e->pend, e->n_pend, sizeof(*e->pend), key);
		}
		for (size_t i = lo; i < e->n_pend && e->pend[i].key == key; i++) {
			const struct pending_ring *pr = &e->pend[i];
			struct ring *g;

			if (rr->info.fingerprint != pr->fp || pr->idx >= rr->n_rings)
				continue;
			g = &e->st[s].rings[pr->idx];
			if (g->ncomp != pr->ncomp || pr->n > g->cap)
				continue;
			/* in file order: the later record for a ring is the one kept; a
			 * history from the file is evaluated in full */
			rx_thaw(e, rr, &e->st[s]);
			e->st[s].settled.on = false;
			g->first = 0;
			g->n = (uint16_t)pr->n;
			g->have_prev = pr->have_prev;
			g->prev_mask = pr->prev_mask;
			g->has_reset = false;
			memcpy(g->prev_raw, pr->prev_raw, sizeof(g->prev_raw));
			memcpy(g->total, pr->total, sizeof(g->total));
			memcpy(g->t, pr->t, (size_t)pr->n * sizeof(*g->t));
			memcpy(g->mask, pr->mask, (size_t)pr->n);
			memcpy(g->acc, pr->acc,
			       (size_t)pr->n * (size_t)pr->ncomp * sizeof(*g->acc));
		}
	}
	pending_free(e);
}

void rx_health_free(struct rules_engine *e)
{
	pending_free(e);
	free(e->hm);
	e->hm = NULL;
	e->n_hm = e->cap_hm = 0;
}
