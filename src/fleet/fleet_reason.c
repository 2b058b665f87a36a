// SPDX-License-Identifier: MIT
/*
 * The fleet verdict as one line (--format reason), for a field a scheduler
 * shows, such as the job comment the PrologSlurmctld sets: everything that
 * is not OK, worst first as rules_status_worse() ranks it, each finding as
 * "STATUS what: item, item", e.g.
 *
 *   CRITICAL rocev2_gid_index: gpu03=5 (fleet 3), gpu07=5; UNKNOWN no answer: gpu09 (...)
 *
 * cut to a byte budget at the end of an item, never inside one: every
 * finding that fits gets its first item, then the worst ones get the rest of
 * the room, and "+N more" counts what was left out, so a line never just
 * stops and the reader knows how much the full report (text or JSON) holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet.h"
#include "strbuf.h"
#include "util.h"

/*
 * A name, a value, a note at most: one DSCP map or one curl error would
 * otherwise take the whole line, and the node is what the reader looks for.
 */
#define NAME_CLIP 80
#define PART_CLIP 48
#define NOTE_CLIP 64
/* a unit's name before it is clipped: node (a path, for a file) and object */
#define WHO_MAX 512

struct item {
	size_t off, len; /* in the finding's text */
};

struct finding {
	enum rules_status status;
	size_t order;		      /* the order found in: qsort is not stable */
	const struct rule_info *rule; /* per-node findings: one per rule and status */
	char head[256];		      /* "CRITICAL rocev2_gid_index", "UNKNOWN no answer" */
	struct strbuf text;	      /* the items kept, each ending in a NUL */
	struct item *items;
	size_t n_kept, cap;
	size_t n_items; /* kept or only counted */
	size_t shown;
};

struct reason {
	struct finding *f;
	size_t n, cap;
	size_t budget; /* bytes of the line */
	bool oom;
};

/*
 * src, at most max bytes of it (cut at a UTF-8 character, "..." added), with
 * control bytes as '?': the line goes into a field that must stay one line.
 * size: at least max + 4.
 */
static void clip(char *dst, size_t size, const char *src, size_t max)
{
	size_t n = strlen(src), o = 0;
	bool cut = n > max;

	if (cut) {
		n = max;
		while (n && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n && o + 1 < size; i++)
		dst[o++] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
	for (int k = 0; cut && k < 3 && o + 1 < size; k++)
		dst[o++] = '.';
	dst[o] = '\0';
}

static struct finding *new_finding(struct reason *r, enum rules_status st,
				   const struct rule_info *rule, const char *what,
				   const char *group)
{
	char w[NAME_CLIP + 4], g[PART_CLIP + 4];
	struct finding *f;

	if (array_grow(&r->f, &r->cap, r->n, sizeof(*r->f), 16)) {
		r->oom = true;
		return NULL;
	}
	f = &r->f[r->n];
	memset(f, 0, sizeof(*f));
	f->status = st;
	f->order = r->n++;
	f->rule = rule;
	clip(w, sizeof(w), what, NAME_CLIP);
	clip(g, sizeof(g), group ? group : "", PART_CLIP);
	if (g[0])
		snprintf(f->head, sizeof(f->head), "%s %s (%s)", rules_status_name(st), w, g);
	else
		snprintf(f->head, sizeof(f->head), "%s %s", rules_status_name(st), w);
	return f;
}

/*
 * "NAME", "NAME=VALUE" or "NAME VALUE" (op), with " (NOTE)" when note is
 * given.  Kept only while the finding's items so far fit the line: the rest
 * could never be shown, and are counted.
 */
static void add_item(struct reason *r, struct finding *f, const char *name, const char *op,
		     const char *value, const char *note)
{
	char n[NAME_CLIP + 4], v[PART_CLIP + 4], w[NOTE_CLIP + 4];
	size_t start = f->text.len;

	f->n_items++;
	if (f->text.len > r->budget)
		return;
	if (array_grow(&f->items, &f->cap, f->n_kept, sizeof(*f->items), 8)) {
		r->oom = true;
		return;
	}
	clip(n, sizeof(n), name, NAME_CLIP);
	sb_puts(&f->text, n);
	if (value) {
		clip(v, sizeof(v), value, PART_CLIP);
		sb_puts(&f->text, op);
		sb_puts(&f->text, v);
	}
	if (note && note[0]) {
		clip(w, sizeof(w), note, NOTE_CLIP);
		sb_printf(&f->text, " (%s)", w);
	}
	sb_putc(&f->text, '\0');
	if (f->text.oom) {
		r->oom = true;
		return;
	}
	f->items[f->n_kept++] = (struct item){ start, f->text.len - 1 - start };
}

/* The nodes that did not answer: one finding, each node with why for the first. */
static void unanswered(struct reason *r, const struct fleet_run *fr)
{
	struct finding *f = NULL;

	for (size_t i = 0; i < fr->n && !r->oom; i++) {
		const struct fleet_member *nm = &fr->nodes[i];

		if (nm->answered)
			continue;
		if (!f && !(f = new_finding(r, RULES_UNKNOWN, NULL, "no answer", NULL)))
			return;
		add_item(r, f, nm->name, NULL, NULL, f->n_items ? NULL : fleet_member_reason(nm));
	}
}

static void unit_name(const struct fleet_run *fr, const struct fleet_result *x,
		      const struct fleet_unit *u, char *buf, size_t len)
{
	/* as the text report names it: the node alone when it has one unit */
	if (x->per_node || !u->object[0])
		snprintf(buf, len, "%s", fr->nodes[u->node].name);
	else
		snprintf(buf, len, "%s/%s", fr->nodes[u->node].name, u->object);
}

/* Each fleet rule that is not OK: its outliers with their values, then its unknown units. */
static void fleet_rules(struct reason *r, const struct fleet_run *fr)
{
	const struct fleet_result *res;
	size_t n = rules_fleet_results(fr->e, &res);
	char who[WHO_MAX], val[FLEET_VALUE_MAX];
	char note[FLEET_VALUE_MAX + 8];

	for (size_t i = 0; i < n && !r->oom; i++) {
		const struct fleet_result *x = &res[i];
		enum rules_status st = fleet_outcome_status(x->rule, x->outcome);
		/* a DSCP map reads "differs at {26:0}" beside its unit, not after a '=' */
		const char *op = x->dscp_map && x->majority >= 0 ? " " : "=";
		const char *first;
		struct finding *f;

		if (st == RULES_OK)
			continue;
		f = new_finding(r, st, NULL, x->rule->name, x->group);
		if (!f)
			return;
		if (x->majority >= 0) {
			rules_fleet_value_text(x, &x->values[x->majority], val, sizeof(val));
			snprintf(note, sizeof(note), "fleet %s", val);
		} else {
			snprintf(note, sizeof(note), "no majority");
		}
		/* what the fleet holds, beside the first outlier only */
		first = note;
		for (size_t v = 0; v < x->n_values; v++) {
			if ((ssize_t)v == x->majority)
				continue;
			rules_fleet_value_text(x, &x->values[v], val, sizeof(val));
			for (size_t u = 0; u < x->values[v].n_units; u++) {
				unit_name(fr, x, &x->values[v].units[u], who, sizeof(who));
				add_item(r, f, who, op, val, first);
				first = NULL;
			}
		}
		for (size_t u = 0; u < x->n_unknown; u++) {
			unit_name(fr, x, &x->unknown[u].u, who, sizeof(who));
			add_item(r, f, who, "=", "?", u ? NULL : x->unknown[u].reason);
		}
		/* undecided with no unit to name (an error in the expression): say why */
		if (!f->n_items && x->reason[0])
			add_item(r, f, x->reason, NULL, NULL, NULL);
	}
}

static struct finding *node_finding(struct reason *r, enum rules_status st,
				    const struct rule_info *ri, const char *what)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->f[i].rule == ri && r->f[i].status == st)
			return &r->f[i];
	return new_finding(r, st, ri, what, NULL);
}

/*
 * --profile: each node rule that did not pass, named profile/rule (the fleet
 * profile has rules of the same name), with the nodes and objects it failed
 * on; a node that is not OK for no rule of its own (a profile's requirements
 * unmet) with its outcome.
 */
static void node_rules(struct reason *r, const struct fleet_run *fr)
{
	/* a rule_info of no rule: the key of the "per-node" findings */
	static const struct rule_info whole_node;
	char what[256], who[WHO_MAX];

	for (size_t i = 0; i < fr->n && !r->oom; i++) {
		const struct fleet_member *nm = &fr->nodes[i];
		bool said = false;
		struct finding *f;

		if (!nm->evaluated || nm->status == RULES_OK)
			continue;
		for (size_t k = 0; k < nm->n_res && !r->oom; k++) {
			const struct fleet_node_result *res = &nm->res[k];
			enum rules_status st = fleet_outcome_status(res->rule, res->outcome);

			if (st == RULES_OK)
				continue;
			snprintf(what, sizeof(what), "%s/%s", res->rule->profile, res->rule->name);
			f = node_finding(r, st, res->rule, what);
			if (!f)
				return;
			if (res->object[0])
				snprintf(who, sizeof(who), "%s/%s", nm->name, res->object);
			else
				snprintf(who, sizeof(who), "%s", nm->name);
			add_item(r, f, who, NULL, NULL, f->n_items ? NULL : res->text);
			said = true;
		}
		if (said)
			continue;
		f = node_finding(r, nm->status, &whole_node, "per-node");
		if (f)
			add_item(r, f, nm->name, NULL, NULL, f->n_items ? NULL : nm->outcome);
	}
}

static int finding_cmp(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;

	if (x->status != y->status)
		return rules_status_worse(x->status, y->status) == x->status ? -1 : 1;
	return x->order < y->order ? -1 : 1;
}

static size_t digits(size_t v)
{
	size_t d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* ", +N more" after the items shown, "+N more" when none is; "" when all are. */
static size_t more_len(size_t shown, size_t left)
{
	return left ? (shown ? 2 : 0) + 1 + digits(left) + strlen(" more") : 0;
}

/* "; +N more rules" after the findings shown, "+N more rules" when none is. */
static size_t tail_len(size_t shown, size_t left)
{
	return left ? (shown ? 2 : 0) + 1 + digits(left) + strlen(" more rules") : 0;
}

/* "HEAD", or "HEAD: item, item, +N more" with f->shown items. */
static size_t finding_len(const struct finding *f)
{
	size_t l = strlen(f->head);

	if (!f->n_items)
		return l;
	l += 2;
	for (size_t k = 0; k < f->shown; k++)
		l += (k ? 2 : 0) + f->items[k].len;
	return l + more_len(f->shown, f->n_items - f->shown);
}

/*
 * How much of each finding the budget holds: the findings in order, each
 * with its first item (or only its count when even that does not fit),
 * until one does not fit at all; then the room left, worst finding first.
 * The findings shown.
 */
static size_t fit(struct reason *r)
{
	size_t used = 0, e = 0, n = r->n;

	for (; e < n; e++) {
		struct finding *f = &r->f[e];
		size_t sep = e ? 2 : 0, l;

		f->shown = f->n_kept ? 1 : 0;
		l = finding_len(f);
		if (f->shown && used + sep + l + tail_len(e + 1, n - e - 1) > r->budget) {
			f->shown = 0;
			l = finding_len(f);
		}
		if (used + sep + l + tail_len(e + 1, n - e - 1) > r->budget)
			break;
		used += sep + l;
	}
	for (size_t i = 0; i < e; i++) {
		struct finding *f = &r->f[i];

		while (f->shown && f->shown < f->n_kept) {
			size_t left = f->n_items - f->shown;
			/* one more item, and the count after it one less (or gone) */
			size_t without = used - more_len(f->shown, left);
			size_t with =
			    without + 2 + f->items[f->shown].len + more_len(f->shown + 1, left - 1);

			if (with + tail_len(e, n - e) > r->budget)
				break;
			used = with;
			f->shown++;
		}
	}
	return e;
}

static void render(const struct reason *r, size_t e, struct strbuf *sb)
{
	for (size_t i = 0; i < e; i++) {
		const struct finding *f = &r->f[i];
		size_t left = f->n_items - f->shown;

		sb_printf(sb, "%s%s", i ? "; " : "", f->head);
		if (!f->n_items)
			continue;
		sb_puts(sb, ": ");
		for (size_t k = 0; k < f->shown; k++)
			sb_printf(sb, "%s%s", k ? ", " : "", f->text.buf + f->items[k].off);
		if (left)
			sb_printf(sb, "%s+%zu more", f->shown ? ", " : "", left);
	}
	if (e < r->n)
		sb_printf(sb, "%s+%zu more rules", e ? "; " : "", r->n - e);
}

int fleet_report_reason(const struct fleet_run *fr)
{
	struct reason r = { .budget = fr->max_bytes };
	struct strbuf sb = { 0 };
	size_t e;
	int rc = 0;

	unanswered(&r, fr);
	fleet_rules(&r, fr);
	node_rules(&r, fr);
	if (r.oom) {
		rc = -ENOMEM;
		goto out;
	}
	if (r.n > 1)
		qsort(r.f, r.n, sizeof(*r.f), finding_cmp);
	e = fit(&r);
	render(&r, e, &sb);
	if (sb.oom) {
		rc = -ENOMEM;
		goto out;
	}
	/* nothing failed: the verdict alone (OK, or UNKNOWN with no node at all) */
	if (!r.n)
		sb_puts(&sb, rules_status_name(fr->status));
	printf("%s\n", sb.buf ? sb.buf : "");
out:
	for (size_t i = 0; i < r.n; i++) {
		sb_free(&r.f[i].text);
		free(r.f[i].items);
	}
	free(r.f);
	sb_free(&sb);
	return rc;
}
