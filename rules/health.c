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
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

enum node_verdict rules_verdict(const struct rules_engine *e)
{
	bool fatal = false, degraded = false, unknown = !e->evaluations || !e->synced;

	for (size_t i = 0; e->synced && i < e->n_res; i++) {
		const struct rule_result *x = &e->res[i];
		enum rule_class c = rule_result_class(x);

		if (c == RCLASS_NONE) {
			/* a configuration rule: critical breaks jobs, warning slows them */
			if (x->rule->severity == SEV_CRITICAL)
				c = RCLASS_FATAL;
			else if (x->rule->severity == SEV_WARNING)
				c = RCLASS_DEGRADED;
			else
				continue;
		}
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
	return unknown ? VERDICT_UNKNOWN : VERDICT_HEALTHY;
}

/* ---- escalation memory ---- */

static struct hmem *hmem_find(struct rules_engine *e, uint64_t key, bool add)
{
	for (size_t i = 0; i < e->n_hm; i++)
		if (e->hm[i].key == key)
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
	memset(&e->hm[e->n_hm], 0, sizeof(e->hm[0]));
	e->hm[e->n_hm].key = key;
	return &e->hm[e->n_hm++];
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
	h = hmem_find(e, x->key, true);
	if (!h)
		return; /* out of memory: judged without its history, never wrongly escalated */
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
	if (h->n < ri->escalate_after || (x->outcome != RULE_PASS && x->outcome != RULE_FAIL))
		return;
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

bool rules_health_dirty(const struct rules_engine *e)
{
	return e->hm_dirty;
}

/* ---- the state file ---- */

static void put_ring(FILE *f, uint64_t key, uint64_t fp, int idx, const struct ring *r)
{
	fprintf(f, "ring %016" PRIx64 " %016" PRIx64 " %d %u %u %d %u", key, fp, idx, r->ncomp,
		r->n, r->have_prev, r->prev_mask);
	for (int p = 0; p < r->ncomp; p++)
		fprintf(f, " %.17g", r->prev_raw[p]);
	for (int p = 0; p < r->ncomp; p++)
		fprintf(f, " %.17g", r->total[p]);
	for (int i = 0; i < r->n; i++) {
		int s = (r->first + i) % r->cap;

		fprintf(f, " %" PRId64 " %u", r->t[s], r->mask[s]);
		for (int p = 0; p < r->ncomp; p++)
			fprintf(f, " %.17g", r->acc[(size_t)s * r->ncomp + p]);
	}
	fputc('\n', f);
}

int rules_health_save(const struct rules_engine *e, const char *path, const char *boot_id)
{
	char tmp[4096], dir[4096];
	FILE *f;
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	fprintf(f, "%s\nboot %s\n", STATE_MAGIC, boot_id && *boot_id ? boot_id : "-");
	for (size_t i = 0; i < e->n_hm; i++) {
		const struct hmem *h = &e->hm[i];

		fprintf(f, "esc %016" PRIx64 " %016" PRIx64 " %d %u", h->key, h->fp, h->failing,
			h->n);
		for (int k = 0; k < h->n; k++)
			fprintf(f, " %" PRId64, h->t[k]);
		fputc('\n', f);
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
				put_ring(f, e->res[i].key, rr->info.fingerprint, j,
					 &e->st[i].rings[j]);
	}
	/* all of it on disk before the rename makes it the state: kill -9 or a crash leaves
	 * the old file or the new one, never half of one */
	if (fflush(f) || fsync(fd))
		r = -errno;
	if (fclose(f) && !r)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r) {
		unlink(tmp);
		return r;
	}
	strlcpy0(dir, path, sizeof(dir));
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd); /* the rename itself, through a power loss */
		close(fd);
	}
	((struct rules_engine *)e)->hm_dirty = false;
	return 0;
}

/* Tokens of one line. */
struct lx {
	char *p;
	int line;
	bool bad;
};

static char *tok(struct lx *l)
{
	char *s;

	while (*l->p == ' ')
		l->p++;
	if (!*l->p || *l->p == '\n') {
		l->bad = true;
		return NULL;
	}
	s = l->p;
	while (*l->p && *l->p != ' ' && *l->p != '\n')
		l->p++;
	if (*l->p)
		*l->p++ = '\0';
	return s;
}

static uint64_t tok_hex(struct lx *l)
{
	char *s = tok(l), *end;
	uint64_t v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (*end || errno || strlen(s) != 16)
		l->bad = true;
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
	if (*end || errno || v < lo || v > hi)
		l->bad = true;
	return v;
}

static double tok_num(struct lx *l)
{
	char *s = tok(l), *end;
	double v;

	if (!s)
		return 0;
	v = strtod(s, &end);
	if (*end || v != v)
		l->bad = true;
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

static int parse_ring(struct lx *l, struct pending_ring *pr)
{
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
	for (int p = 0; p < pr->ncomp; p++)
		pr->prev_raw[p] = tok_num(l);
	for (int p = 0; p < pr->ncomp; p++)
		pr->total[p] = tok_num(l);
	pr->t = calloc((size_t)pr->n + 1, sizeof(*pr->t));
	pr->mask = calloc((size_t)pr->n + 1, 1);
	pr->acc = calloc(((size_t)pr->n + 1) * (size_t)pr->ncomp, sizeof(*pr->acc));
	if (!pr->t || !pr->mask || !pr->acc)
		return -ENOMEM;
	for (int i = 0; i < pr->n && !l->bad; i++) {
		pr->t[i] = tok_int(l, INT64_MIN, INT64_MAX);
		if (i && pr->t[i] < pr->t[i - 1])
			l->bad = true; /* samples are oldest first */
		pr->mask[i] = (uint8_t)tok_int(l, 0, 255);
		for (int p = 0; p < pr->ncomp; p++)
			pr->acc[(size_t)i * pr->ncomp + p] = tok_num(l);
	}
	return l->bad || !at_end(l) ? -EINVAL : 0;
}

int rules_health_load(struct rules_engine *e, const char *path, const char *boot_id, char *msg,
		      size_t msglen)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, *what = "";
	size_t cap = 0;
	bool same_boot = false;
	struct lx l = { 0 };
	int r = 0;

	msg[0] = '\0';
	if (!f) {
		if (errno == ENOENT)
			return 0; /* the first start */
		r = -errno;
		snprintf(msg, msglen, "%s: %s; starting afresh", path, strerror(-r));
		return r;
	}
	while (getline(&line, &cap, f) > 0) {
		char *kind;

		l.p = line;
		l.line++;
		if (l.line == 1) {
			if (strcmp(line, STATE_MAGIC "\n")) {
				what = "not a rocewatch health state file (foreign or of another "
				       "version)";
				r = -EINVAL;
				break;
			}
			continue;
		}
		kind = tok(&l);
		if (!kind) {
			r = -EINVAL;
			break;
		}
		if (!strcmp(kind, "boot")) {
			char *b = tok(&l);

			same_boot = b && boot_id && *boot_id && !strcmp(b, boot_id);
		} else if (!strcmp(kind, "esc")) {
			struct hmem h = { 0 };
			struct hmem *d;

			h.key = tok_hex(&l);
			h.fp = tok_hex(&l);
			h.failing = tok_int(&l, 0, 1) != 0;
			h.n = (uint8_t)tok_int(&l, 0, RULE_ESCALATE_MAX);
			for (int k = 0; k < h.n && !l.bad; k++)
				h.t[k] = tok_int(&l, INT64_MIN, INT64_MAX);
			if (l.bad || !at_end(&l)) {
				r = -EINVAL;
				break;
			}
			d = hmem_find(e, h.key, true);
			if (!d) {
				r = -ENOMEM;
				break;
			}
			*d = h;
		} else if (!strcmp(kind, "ring")) {
			struct pending_ring pr;
			struct pending_ring *n;

			r = parse_ring(&l, &pr);
			if (r || !same_boot) {
				/* after a reboot every counter started again: no history spans it
				 */
				free(pr.t);
				free(pr.mask);
				free(pr.acc);
				if (r)
					break;
				continue;
			}
			n = realloc(e->pend, (e->n_pend + 1) * sizeof(*n));
			if (!n) {
				free(pr.t);
				free(pr.mask);
				free(pr.acc);
				r = -ENOMEM;
				break;
			}
			e->pend = n;
			e->pend[e->n_pend++] = pr;
		} else {
			r = -EINVAL;
			break;
		}
	}
	if (!r && ferror(f))
		r = -EIO;
	if (!r && l.line == 0) {
		what = "empty";
		r = -EINVAL;
	}
	fclose(f);
	free(line);
	if (r) {
		e->n_hm = 0;
		pending_free(e);
		if (*what)
			snprintf(msg, msglen, "%s: %s; starting afresh", path, what);
		else
			snprintf(msg, msglen, "%s:%d: %s; starting afresh", path, l.line,
				 r == -EINVAL ? "corrupt record" : strerror(-r));
	}
	return r;
}

/* After the first layout: give each result the counter history saved for it. */
void rx_health_apply_pending(struct rules_engine *e)
{
	for (size_t i = 0; i < e->n_pend; i++) {
		const struct pending_ring *pr = &e->pend[i];

		for (size_t s = 0; s < e->n_res; s++) {
			const struct rrule *rr = (const struct rrule *)e->res[s].rule;
			struct ring *g;

			if (e->res[s].key != pr->key || rr->info.fingerprint != pr->fp ||
			    pr->idx >= rr->n_rings || !e->st[s].rings)
				continue;
			g = &e->st[s].rings[pr->idx];
			if (g->ncomp != pr->ncomp || pr->n > g->cap)
				break;
			g->first = 0;
			g->n = (uint16_t)pr->n;
			g->have_prev = pr->have_prev;
			g->prev_mask = pr->prev_mask;
			memcpy(g->prev_raw, pr->prev_raw, sizeof(g->prev_raw));
			memcpy(g->total, pr->total, sizeof(g->total));
			memcpy(g->t, pr->t, (size_t)pr->n * sizeof(*g->t));
			memcpy(g->mask, pr->mask, (size_t)pr->n);
			memcpy(g->acc, pr->acc,
			       (size_t)pr->n * (size_t)pr->ncomp * sizeof(*g->acc));
			break;
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
