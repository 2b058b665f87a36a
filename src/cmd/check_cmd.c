// SPDX-License-Identifier: MIT
/*
 * rocewatch check: one collection (two fast samples an interval apart when
 * a rule needs a rate), the rules evaluated once, a report, and an exit
 * code in the Nagios plugin convention so it drops into NHC, Nagios,
 * Icinga and Slurm prologs: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nfd.h"
#include "rules_json.h"
#include "engine.h"
#include "check_history.h"
#include "client_opts.h"
#include "cli.h"
#include "engine_opts.h"
#include "commands.h"
#include "daemon.h"
#include "rules_serve.h"
#include "nccl.h"
#include "term.h"
#include "verdict_color.h"
#include "util.h"

static const char check_usage[] =
    "Collect once, evaluate the rule profiles, print a report and exit.  When a rule\n"
    "uses rate(), increase() or delta(), a second sample of the counters is taken\n"
    "--interval later; such a rule (\"no retries in 5m\") is then decided on what\n"
    "those samples cover, and every summary says the window it actually had.  A\n"
    "rocewatch serve on the node has minutes of history: by default (reading this\n"
    "machine, no --from or --*-root) check asks the one at " CHECK_SERVE_DEFAULT_URL "\n"
    "and takes its result for every counter rule it evaluates with the same rule\n"
    "and parameters; when none answers, the report says so and the counter rules\n"
    "rest on this check's samples.  Configuration is always read by check itself.\n"
    "With --from and a JSON array of snapshots, every sample is evaluated in order\n"
    "at its own time; with one snapshot, counter rules are skipped (no history).\n"
    "The language and the JSON are described in docs/rules.md.\n\n"
    "With --nccl (this environment) or --nccl-env FILE (a job's KEY=VALUE lines),\n"
    "the job's NCCL settings are judged against this node too: NCCL_IB_HCA,\n"
    "NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX, NCCL_IB_TC, NCCL_IB_DISABLE,\n"
    "NCCL_NET_GDR_LEVEL, NCCL_CROSS_NIC and debugging/tuning variables left set\n"
    "(NCCL_DEBUG=INFO/TRACE, NCCL_ALGO, NCCL_PROTO), each read as NCCL's own code\n"
    "reads it (2.21 to 2.30): the report shows one line per variable with what NCCL\n"
    "will use, and the profile's nccl_* rules judge that as job.* facts.\n\n"
    "The text report puts the verdict first, then what is not OK, worst first\n"
    "(critical failures, warnings, then unknowns) grouped by object, with the fix\n"
    "for this node's devices (for an unknown: what could not be read and how to let\n"
    "rocewatch read it), then one line for what passed; it wraps at the terminal's\n"
    "width (COLUMNS, else the terminal's, else 80) and its last line is\n"
    "\"N passed, N failed (...), N unknown, N skipped: STATUS\".\n\n"
    "Exit status (Nagios plugin convention, for NHC, Nagios, Icinga and Slurm):\n"
    "  0 OK, 1 WARNING (a warning rule fails), 2 CRITICAL (a critical rule fails),\n"
    "  3 UNKNOWN (a rule could not be decided, a profile's required RDMA device is\n"
    "  missing, bad flags, bad rule files or an unreadable snapshot). The most\n"
    "  severe wins, CRITICAL > UNKNOWN > WARNING > OK: an undecided rule beside a\n"
    "  failing warning is UNKNOWN, so a fail-closed prolog does not start the job.\n\n"
    "Options:\n";

struct check_opts {
	bool json, nfd, verbose, quiet;
	enum term_color color;
};

/*
 * The text report, in sections: the verdict and what it rests on, what is
 * not OK grouped by object, the objects the profiles do not apply to, one
 * line for what passed, and the Nagios summary last (scripts read the last
 * line).  A new section (a job's view) joins print_text()'s list.
 */
struct report {
	struct term t;
	const struct check_opts *o;
	const struct rules_engine *e;
	const struct node_model *m;
	const struct rule_result *res;
	size_t n;
	bool multi; /* several profiles: rules are named profile/rule */
	int wname;  /* the name column: the longest name shown */
	bool table; /* every row's text fits beside its name: one line per rule */
	int rank;   /* the rank of rows print_object() prints now (not -v) */
	/* the object whose header was printed last: a rank that goes on with it adds none */
	enum obj_kind last_k;
	const struct object *last_ob;
	const struct nccl_env *job; /* --nccl / --nccl-env: what NCCL does with each variable */
	bool job_shown;		    /* the job's variable lines were printed */
};

/*
 * The job's section: node rules over job.* facts (check --nccl), reported
 * apart from the node's own facts.  A kind of its own for the report only.
 */
#define OBJ_JOB_VIEW ((enum obj_kind)OBJ__COUNT)

/* Columns before the rule name: "  unknown  critical  " */
#define ROW_NAME_COL 21
/* Lines without a rule: "  pass     text" */
#define LINE_TEXT_COL 11
/* Prose (a rule's doc) is hard to read in longer lines, as man(1) knows. */
#define DOC_MAX_COLS 100

static bool is_problem(const struct rule_result *x)
{
	return x->outcome == RULE_FAIL || x->outcome == RULE_UNKNOWN;
}

static bool same_object(const struct rule_result *x, enum obj_kind k, const struct object *o)
{
	if (k == OBJ_JOB_VIEW)
		return x->kind == OBJ_NODE && rule_reads_job(x->rule);
	if (x->kind != k)
		return false;
	if (k == OBJ_NODE)
		return !rule_reads_job(x->rule);
	return x->port == o->port && !strcmp(x->device, o->name);
}

static bool shown(const struct report *rp, const struct rule_result *x)
{
	if (rp->o->verbose)
		return x->outcome != RULE__OUTCOMES;
	return is_problem(x);
}

static void rule_name(const struct report *rp, const struct rule_result *x, char *buf, size_t len)
{
	if (rp->multi)
		snprintf(buf, len, "%s/%s", x->rule->profile, x->rule->name);
	else
		snprintf(buf, len, "%s", x->rule->name);
}

static void object_label(const struct node_model *m, enum obj_kind k, const struct object *ob,
			 char *buf, size_t len)
{
	if (k == OBJ_NODE)
		snprintf(buf, len, "node %s", m->host);
	else if (k == OBJ_JOB_VIEW)
		snprintf(buf, len, "job (NCCL settings on %s)", m->host);
	else if (k == OBJ_NETDEV)
		snprintf(buf, len, "netdev %s", ob->name);
	else
		snprintf(buf, len, "rdma_port %s/%u%s%s%s", ob->name, ob->port,
			 ob->netdev ? " (" : "", ob->netdev ? ob->netdev->name : "",
			 ob->netdev ? ")" : "");
}

static void print_header(struct report *rp, enum obj_kind k, const struct object *ob)
{
	char label[RW_NAME_MAX * 2 + 32];

	object_label(rp->m, k, ob, label, sizeof(label));
	term_newline(&rp->t);
	term_code(&rp->t, TERM_BOLD);
	term_printf(&rp->t, "%s", label);
	term_code(&rp->t, TERM_RESET);
	term_newline(&rp->t);
}

/*
 * The first result of x's rule with x's outcome (and, unknown, its reason):
 * a rule has one scope and one severity, its results come in model order
 * and the report prints one rank at a time in model order, so this is
 * where its fix (or what to let rocewatch read) was printed.
 */
static const struct rule_result *first_problem(const struct report *rp, const struct rule_result *x)
{
	for (size_t i = 0; i < rp->n; i++) {
		const struct rule_result *y = &rp->res[i];

		if (y->rule == x->rule && y->outcome == x->outcome &&
		    (x->outcome != RULE_UNKNOWN || !strcmp(y->reason, x->reason)))
			return y;
	}
	return x;
}

static const char *row_text(const struct rule_result *x)
{
	return x->outcome == RULE_SKIP || x->outcome == RULE_UNKNOWN ? x->reason : x->summary;
}

/* "  fail     critical  rule  summary", or the text under the name (not a table). */
static void print_row(struct report *rp, const struct rule_result *x)
{
	struct term *t = &rp->t;
	const char *text = row_text(x);
	int textcol = ROW_NAME_COL + rp->wname + 2, width;
	char name[160], doc[4096];

	rule_name(rp, x, name, sizeof(name));
	term_printf(t, "  ");
	term_code(t, term_outcome_color(x->outcome, rule_result_severity(x)));
	term_printf(t, "%-7s", rule_outcome_name(x->outcome));
	term_code(t, TERM_RESET);
	term_printf(t, "  %-8s  %s", rule_severity_name(rule_result_severity(x)), name);
	if (!text[0]) {
		term_newline(t);
	} else if (rp->table) {
		term_pad_to(t, textcol);
		term_wrap(t, textcol, text, false);
	} else {
		term_newline(t);
		term_pad_to(t, ROW_NAME_COL);
		term_wrap(t, ROW_NAME_COL, text, false);
	}
	if (x->outcome == RULE_UNKNOWN && x->summary[0] && rp->o->verbose) {
		term_pad_to(t, ROW_NAME_COL);
		term_wrap(t, ROW_NAME_COL, x->summary, false);
	}
	if (rp->o->quiet || (!x->rule->doc[0] && x->outcome != RULE_UNKNOWN) ||
	    (!is_problem(x) && !rp->o->verbose))
		return;
	if (!rp->o->verbose && first_problem(rp, x) != x) {
		const struct rule_result *f = first_problem(rp, x);
		char label[RW_NAME_MAX * 2 + 32];

		/* eight NICs with one wrong setting: the fix once, not eight times */
		snprintf(label, sizeof(label), "%s%s%s", obj_kind_name(f->kind),
			 f->kind == OBJ_NODE ? "" : " ", f->device);
		term_code(t, TERM_DIM);
		term_printf(t, "%*s%s %s above", ROW_NAME_COL, "",
			    x->outcome == RULE_UNKNOWN ? "as for" : "fix: as for", label);
		term_code(t, TERM_RESET);
		term_newline(t);
		return;
	}
	/*
	 * the fix hints name this netdev and device, not IF and DEV; an unknown
	 * result gets what could not be read and how to let rocewatch read it
	 */
	rules_doc_for(x, rp->m, doc, sizeof(doc));
	term_code(t, TERM_DIM);
	width = t->width;
	if (t->width > DOC_MAX_COLS)
		t->width = DOC_MAX_COLS;
	term_pad_to(t, ROW_NAME_COL);
	term_wrap(t, ROW_NAME_COL, doc, true);
	t->width = width;
	term_code(t, TERM_RESET);
	if (x->rule->action && x->outcome == RULE_FAIL) {
		term_printf(t, "%*saction: %s", ROW_NAME_COL, "",
			    rule_action_name(x->rule->action));
		term_newline(t);
	}
}

/*
 * The health verdict, when a health rule (one with a class) is what fails:
 * configuration-only reports keep their shape.
 */
static void print_verdict(struct report *rp)
{
	const struct rule_result *res;
	size_t n = rules_results(rp->e, &res);
	bool health = false, seen[RACT__COUNT] = { false };
	struct term *t = &rp->t;
	enum node_verdict v;
	int k = 0;

	for (size_t i = 0; i < n; i++) {
		if (res[i].outcome != RULE_FAIL)
			continue;
		health |= res[i].rule->cls != RCLASS_NONE;
		seen[res[i].rule->action] = true;
	}
	if (!health)
		return;
	v = rules_verdict(rp->e);
	term_printf(t, "node verdict: %s%s", node_verdict_name(v),
		    v == VERDICT_FATAL ? " (drain)" : "");
	for (int a = 1; a < RACT__COUNT; a++)
		if (seen[a])
			term_printf(t, "%s%s",
				    k++ ? ", " : "; do: ", rule_action_name((enum rule_action)a));
	term_newline(t);
}

/*
 * What watches each RDMA device's link where a fatal link-health rule cannot
 * (bnxt_re, irdma: no PMA counters/): said once per device, not folded
 * among the skipped rules (JSON: "coverage", every device).
 */
static void print_coverage(struct report *rp)
{
	struct rule_coverage *c;
	size_t n;

	if (rules_coverage(rp->e, &c, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		char text[RULE_COVERAGE_NAMES * 2 + 160], line[sizeof(text) + 16];

		if (!rules_coverage_text(&c[i], text, sizeof(text)))
			continue;
		snprintf(line, sizeof(line), "coverage: %s", text);
		term_wrap(&rp->t, 10, line, false);
	}
	free(c);
}

#define RANK_COUNT 7

/* Failures by severity, then unknowns by severity, then the rest. */
static int severity_rank(const struct rule_result *x)
{
	if (x->outcome == RULE_FAIL)
		return (int)rule_result_severity(x); /* critical, warning, info */
	return x->outcome == RULE_UNKNOWN ? 3 + (int)rule_result_severity(x) : 6;
}

/* "NCCL_IB_TC=0152: 106; NCCL_IB_TC=0152 is read as 106 (octal)" */
static void job_line(struct strbuf *sb, const struct nccl_env *job, enum nccl_var v)
{
	const struct nccl_reading *r = &job->out[v];
	const char *val = job->val[v];

	if (val)
		sb_printf(sb, "%s=%.60s%s: ", nccl_var_name(v), val, strlen(val) > 60 ? "..." : "");
	else
		sb_printf(sb, "%s unset: ", nccl_var_name(v));
	switch (r->kind) {
	case NCCL_EFF_LIST:
		for (size_t i = 0; i < r->n; i++)
			sb_printf(sb, "%s%s", i ? " " : "", r->items[i]);
		if (!r->n)
			sb_printf(sb, "nothing");
		break;
	case NCCL_EFF_INT:
		sb_printf(sb, "%lld", (long long)r->num);
		break;
	case NCCL_EFF_STR:
		sb_printf(sb, "%s", r->n ? r->items[0] : "");
		break;
	case NCCL_EFF_NONE:
		sb_printf(sb, "%s", val ? "ignored" : "NCCL's default");
		break;
	}
	if (r->note.len)
		sb_printf(sb, "; %s", nccl_note(r));
	if (r->note.oom)
		sb_puts(sb, " (the rest of the note: out of memory)");
}

/* The job's section opens with one line per NCCL variable: its value and NCCL's reading. */
static void print_job_lines(struct report *rp)
{
	for (int v = 0; v < NCCL__VARS; v++) {
		struct strbuf sb = { 0 };

		if (!nccl_var_reported((enum nccl_var)v) && !rp->job->set[v])
			continue;
		if (v >= NCCL_DEBUG)
			break; /* debugging and tuning: one rule, nothing to read */
		job_line(&sb, rp->job, (enum nccl_var)v);
		if (sb.oom) {
			sb_free(&sb);
			return;
		}
		term_printf(&rp->t, "  ");
		term_wrap(&rp->t, 4, sb.buf, false);
		sb_free(&sb);
	}
	/* then what rocewatch does not model, named rather than passed over in silence */
	if (rp->job->n_unjudged) {
		struct strbuf sb = { 0 };

		sb_puts(&sb, "not judged:");
		for (size_t i = 0; i < rp->job->n_unjudged; i++)
			sb_printf(&sb, "%s %s", i ? ";" : "", rp->job->unjudged[i]);
		if (!sb.oom) {
			term_printf(&rp->t, "  ");
			term_wrap(&rp->t, 4, sb.buf, false);
		}
		sb_free(&sb);
	}
}

/*
 * One object's rows of rp->rank, or every row with -v.  The report walks
 * the objects once per rank, so a critical failure on a port comes before
 * a warning on the node (what an operator must see first fits a screen);
 * an object's header is repeated only when another object came between.
 */
static void print_object_rank(struct report *rp, enum obj_kind k, const struct object *ob,
			      int rank);

static void print_object(struct report *rp, enum obj_kind k, const struct object *ob)
{
	/* the job's section opens, once, with what NCCL does with each variable */
	if (k == OBJ_JOB_VIEW && rp->job && rp->job->given && !rp->o->quiet && !rp->job_shown) {
		print_header(rp, k, ob);
		rp->last_k = k;
		rp->last_ob = ob;
		print_job_lines(rp);
		rp->job_shown = true;
	}
	/*
	 * -q: each object once, where its worst row ranks, with all its rows
	 * worst first (a short list is read by object, not by severity)
	 */
	if (rp->o->quiet) {
		int worst = RANK_COUNT;

		for (size_t i = 0; i < rp->n; i++)
			if (same_object(&rp->res[i], k, ob) && shown(rp, &rp->res[i]) &&
			    severity_rank(&rp->res[i]) < worst)
				worst = severity_rank(&rp->res[i]);
		if (worst != rp->rank)
			return;
	}
	for (int rank = rp->rank; rank < (rp->o->quiet ? RANK_COUNT : rp->rank + 1); rank++)
		print_object_rank(rp, k, ob, rank);
}

static void print_object_rank(struct report *rp, enum obj_kind k, const struct object *ob, int rank)
{
	for (size_t i = 0; i < rp->n; i++) {
		const struct rule_result *x = &rp->res[i];

		if (!same_object(x, k, ob) || !shown(rp, x))
			continue;
		/* -v: the profile's order, as the rules are written */
		if (!rp->o->verbose && severity_rank(x) != rank)
			continue;
		if (rp->last_k != k || rp->last_ob != ob) {
			print_header(rp, k, ob);
			rp->last_k = k;
			rp->last_ob = ob;
		}
		print_row(rp, x);
	}
}

static void for_each_object(struct report *rp,
			    void (*fn)(struct report *, enum obj_kind, const struct object *))
{
	struct node_model *m = (struct node_model *)rp->m;
	struct object **objs;
	size_t nobj;

	fn(rp, OBJ_NODE, &m->node);
	/* -v lists the job's rules (skipped) even without --nccl */
	if (field_present(&m->node, F_JOB_NCCL) || rp->o->verbose)
		fn(rp, OBJ_JOB_VIEW, &m->node);
	nobj = model_objects(m, OBJ_NETDEV, &objs);
	for (size_t i = 0; i < nobj; i++)
		fn(rp, OBJ_NETDEV, objs[i]);
	nobj = model_objects(m, OBJ_RDMA_PORT, &objs);
	for (size_t i = 0; i < nobj; i++)
		fn(rp, OBJ_RDMA_PORT, objs[i]);
}

static void section_head(struct report *rp, const struct check_history *h, unsigned samples,
			 double gap)
{
	struct term *t = &rp->t;
	enum rules_status st = rules_status(rp->e);
	size_t np = rules_profile_count(rp->e);
	struct strbuf line = { 0 };

	if (rp->o->quiet)
		goto requirements;
	term_printf(t, "rocewatch check on %s: ", rp->m->host);
	term_code(t, TERM_BOLD);
	term_code(t, term_status_color(st));
	term_printf(t, "%s", rules_status_name(st));
	term_code(t, TERM_RESET);
	term_newline(t);
	print_verdict(rp);
	print_coverage(rp);
	sb_printf(&line, "profile%s ", np > 1 ? "s" : "");
	for (size_t p = 0; p < np; p++) {
		const struct rules_profile_info *pi = rules_profile(rp->e, p);

		sb_printf(&line, "%s%s", p ? ", " : "", pi->name);
		/* -v: the parameters the rules ran with (--param overrides included) */
		for (size_t i = 0; rp->o->verbose && i < pi->n_params; i++) {
			const char *k, *v;

			rules_profile_param(rp->e, p, i, &k, &v);
			sb_printf(&line, "%s%s=%s%s", i ? " " : " (", k, v,
				  i + 1 == pi->n_params ? ")" : "");
		}
	}
	if (samples > 1)
		sb_printf(&line, "; %u samples over %.1f s", samples, gap);
	term_wrap(t, 2, line.oom ? "profile ?" : line.buf, false);
	sb_free(&line);
	/* what the counter rules' verdicts rest on: serve's minutes or our 100 ms */
	if (h->note[0]) {
		term_code(t, h->from_serve ? "" : TERM_MAG);
		term_wrap(t, 2, h->note, false);
		term_code(t, TERM_RESET);
	}
requirements:
	for (size_t p = 0; p < np; p++) {
		const struct rules_profile_info *pi = rules_profile(rp->e, p);
		char req[512];

		for (int k = 0; k < OBJ__COUNT; k++) {
			if (!pi->requires[k] || pi->requirements_met)
				continue;
			snprintf(req, sizeof(req),
				 "profile %s requires an %s%s%s%s and this node has none", pi->name,
				 obj_kind_name((enum obj_kind)k),
				 pi->applies_src[k] ? " where " : "",
				 pi->applies_src[k] ? pi->applies_src[k] : "",
				 pi->applies_src[k] ? "," : "");
			term_code(t, TERM_MAG);
			term_wrap(t, 2, req, false);
			term_code(t, TERM_RESET);
		}
	}
}

/* An object no rule of a profile applies to (native InfiniBand) says so in one line. */
static void outside_profile(struct report *rp, enum obj_kind k, const struct object *ob)
{
	char label[RW_NAME_MAX * 2 + 32];

	for (size_t i = 0; i < rp->n; i++) {
		const struct rule_result *x = &rp->res[i];

		if (!same_object(x, k, ob) || x->outcome != RULE_SKIP ||
		    strncmp(x->reason, "outside the profile", 19))
			continue;
		for (size_t j = 0; j < rp->n; j++)
			if (same_object(&rp->res[j], k, ob) && rp->res[j].outcome != RULE_SKIP)
				return; /* another profile checks it: its rows say so */
		object_label(rp->m, k, ob, label, sizeof(label));
		term_printf(&rp->t, "  ");
		term_code(&rp->t, TERM_DIM);
		term_printf(&rp->t, "%-7s", "skip");
		term_code(&rp->t, TERM_RESET);
		term_printf(&rp->t, "  %s: ", label);
		term_wrap(&rp->t, LINE_TEXT_COL, x->reason, false);
		return;
	}
}

/* One line for what passed: how many rules on how many objects of each kind. */
static void section_passed(struct report *rp, const size_t cnt[RULE__OUTCOMES + 1])
{
	struct term *t = &rp->t;
	size_t objs[OBJ__COUNT] = { 0 }, job = 0;
	char line[256];
	struct node_model *m = (struct node_model *)rp->m;
	struct object **list;

	for (int k = 0; k < OBJ__COUNT; k++) {
		size_t nobj = k == OBJ_NODE ? 1 : model_objects(m, (enum obj_kind)k, &list);

		for (size_t i = 0; i < nobj; i++) {
			const struct object *ob = k == OBJ_NODE ? &m->node : list[i];

			for (size_t j = 0; j < rp->n; j++)
				if (rp->res[j].outcome == RULE_PASS &&
				    same_object(&rp->res[j], (enum obj_kind)k, ob)) {
					objs[k]++;
					break;
				}
		}
	}
	for (size_t j = 0; j < rp->n && !job; j++)
		job =
		    rp->res[j].outcome == RULE_PASS && same_object(&rp->res[j], OBJ_JOB_VIEW, NULL);
	snprintf(line, sizeof(line),
		 "%zu rule%s on %s%s%zu netdev%s, %zu RDMA port%s (-v lists them)", cnt[RULE_PASS],
		 cnt[RULE_PASS] == 1 ? "" : "s", objs[OBJ_NODE] ? "the node, " : "",
		 job ? "the job, " : "", objs[OBJ_NETDEV], objs[OBJ_NETDEV] == 1 ? "" : "s",
		 objs[OBJ_RDMA_PORT], objs[OBJ_RDMA_PORT] == 1 ? "" : "s");
	term_newline(t);
	term_printf(t, "  ");
	term_code(t, TERM_GREEN);
	term_printf(t, "%-7s", "pass");
	term_code(t, TERM_RESET);
	term_printf(t, "  ");
	term_wrap(t, LINE_TEXT_COL, line, false);
}

static void print_text(const struct check_opts *o, const struct rules_engine *e,
		       const struct node_model *m, unsigned samples, double gap,
		       const struct check_history *h, const struct nccl_env *job)
{
	struct report rp = { .o = o, .e = e, .m = m, .wname = 4, .job = job };
	size_t cnt[RULE__OUTCOMES + 1] = { 0 }, crit = 0, warn = 0, problems = 0;
	enum rules_status st = rules_status(e);

	term_init(&rp.t, stdout, o->color);
	rp.n = rules_results(e, &rp.res);
	rp.multi = rules_profile_count(e) > 1;
	for (size_t i = 0; i < rp.n; i++) {
		const struct rule_result *x = &rp.res[i];
		char name[160];

		cnt[x->outcome]++;
		problems += is_problem(x);
		if (x->outcome == RULE_FAIL)
			crit += rule_result_severity(x) == SEV_CRITICAL,
			    warn += rule_result_severity(x) == SEV_WARNING;
		rule_name(&rp, x, name, sizeof(name));
		if (shown(&rp, x) && (int)strlen(name) > rp.wname)
			rp.wname = (int)strlen(name);
	}
	/* a table when every row fits the width, else each text under its name */
	rp.table = true;
	for (size_t i = 0; i < rp.n && rp.table; i++)
		rp.table = !shown(&rp, &rp.res[i]) ||
			   ROW_NAME_COL + rp.wname + 2 +
				   term_strwidth(row_text(&rp.res[i]), RULE_SUMMARY_MAX) <=
			       rp.t.width;
	section_head(&rp, h, samples, gap);
	/* what is not OK, worst first, grouped by object (-v: every rule of every object) */
	rp.last_ob = NULL;
	for (rp.rank = 0; rp.rank < (o->verbose ? 1 : RANK_COUNT); rp.rank++)
		for_each_object(&rp, print_object);
	if (!o->verbose && !o->quiet) {
		bool any = false;

		/* a blank line before the first one only */
		for (size_t i = 0; i < rp.n && !any; i++)
			any = rp.res[i].outcome == RULE_SKIP &&
			      !strncmp(rp.res[i].reason, "outside the profile", 19);
		if (any)
			term_newline(&rp.t);
		for_each_object(&rp, outside_profile);
		if (cnt[RULE_PASS])
			section_passed(&rp, cnt);
	}
	if (!o->quiet || problems)
		term_newline(&rp.t);
	term_printf(
	    &rp.t, "%zu passed, %zu failed (%zu critical, %zu warning), %zu unknown, %zu skipped: ",
	    cnt[RULE_PASS], cnt[RULE_FAIL], crit, warn, cnt[RULE_UNKNOWN], cnt[RULE_SKIP]);
	term_code(&rp.t, term_status_color(st));
	term_printf(&rp.t, "%s", rules_status_name(st));
	term_code(&rp.t, TERM_RESET);
	term_newline(&rp.t);
}

static int evaluate(struct rules_engine *e, struct daemon *d, struct nccl_env *job)
{
	struct node_model *m = daemon_model(d);
	int64_t t = ts_ns(&m->time);
	int r;

	/* after every collection: a replayed snapshot brings its own node facts */
	nccl_apply(job, m);
	r = rules_evaluate(e, m, t);

	if (r)
		fprintf(stderr, "rocewatch check: evaluating rules: %s\n", strerror(-r));
	return r;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = ns_ts(ns);

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Not a snapshot, not another tree: what a serve on this machine watches too. */
static bool reads_this_machine(const struct rw_config *c)
{
	struct rw_config d;

	config_defaults(&d);
	return !c->from && !strcmp(c->sysfs_root, d.sysfs_root) &&
	       !strcmp(c->procfs_root, d.procfs_root) &&
	       !strcmp(c->configfs_root, d.configfs_root) &&
	       !strcmp(c->debugfs_root, d.debugfs_root);
}

struct check_args {
	struct rw_config cfg;
	struct rules_spec spec;
	struct check_opts o;
	struct client_opts client; /* --serve's */
	struct check_serve {
		const char *url; /* --serve URL, NULL: none */
		bool given;
	} serve;
	const char *nccl_file;
	const char *rail_map; /* --rail-map */
	int format;	      /* --format, -j: CHECK_FMT_* */
	bool nccl_environ;
};

/* --serve URL|none: none is no serve at all. */
static int opt_serve(const struct cli_opt *o, void *member, const char *arg)
{
	struct check_serve *cs = member;

	(void)o;
	if (strcmp(arg, "none") && strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
		return CLI_BAD;
	cs->url = strcmp(arg, "none") ? arg : NULL;
	cs->given = true;
	return 0;
}

/* --format's words, in the order of check_args.format */
enum {
	CHECK_FMT_TEXT,
	CHECK_FMT_JSON,
	CHECK_FMT_NFD
};
static const char *const check_formats[] = { "text", "json", "nfd", NULL };

static const struct cli_opt check_opts[] = {
	CLI_OPT_RULES(struct check_args, spec,
		      "profile to check (repeatable; default\n" RULES_DEFAULT_PROFILE
		      "); NAME is looked up in\n"
		      "$ROCEWATCH_PROFILE_DIR and the installed profiles"),
	CLI_OPT_RAIL_MAP(struct check_args, rail_map),
	{ .name = "format",
	  CLI_CHOICE_AT(struct check_args, format, check_formats),
	  .metavar = "text|json|nfd",
	  .help = "report format (default text); nfd: a Node Feature\n"
		  "Discovery feature file (roce-ready, status, ...)" },
	{ .name = "",
	  .short_name = 'j',
	  CLI_SET_AT(struct check_args, format, CHECK_FMT_JSON),
	  .help = "same as --format json" },
	{ .name = "interval",
	  CLI_DURATION_AT(struct check_args, cfg.interval_ns),
	  .min = 1,
	  .max = 3600000000000LL,
	  .bad = "a duration up to 1h (e.g. 1s, 500ms)",
	  .metavar = "DURATION",
	  .help = "gap between the two counter samples (default 100ms:\n"
		  "a pre-flight check must not hold up a job start)" },
	{ .name = "serve",
	  CLI_CALL_AT(struct check_args, serve, opt_serve),
	  .bad = "an http:// or https:// URL, or none",
	  .metavar = "URL|none",
	  .help = "take counter rules from the rocewatch serve at URL\n"
		  "(default " CHECK_SERVE_DEFAULT_URL " when reading this\n"
		  "machine; none: only this check's samples); the\n"
		  "client flags below as fleet check takes them, with\n"
		  "500ms, 2s and 16MiB the defaults here" },
	{ .name = "nccl",
	  CLI_FLAG_AT(struct check_args, nccl_environ),
	  .help = "judge the NCCL_* variables of this environment" },
	{ .name = "nccl-env",
	  CLI_STRING_AT(struct check_args, nccl_file),
	  .metavar = "FILE",
	  .help = "judge those of a KEY=VALUE file (a job's\n"
		  "environment)" },
	TERM_OPT_COLOR(struct check_args, o.color),
	{ .name = "quiet",
	  .short_name = 'q',
	  CLI_FLAG_AT(struct check_args, o.quiet),
	  .help = "only what is not OK (no fix text), and the summary" },
	{ .name = "verbose",
	  .short_name = 'v',
	  CLI_FLAG_AT(struct check_args, o.verbose),
	  .help = "every rule of every object in profile order,\n"
		  "skipped ones too, with its doc, and the\n"
		  "profiles' parameters" },
	{ 0 },
};

static const struct cli_opt check_client_head[] = {
	CLI_TEXT_ROW("\nClient (--serve):\n"),
	{ 0 },
};

const struct cli_cmd check_cli = {
	.name = "check",
	.synopsis = "[--profile NAME|FILE]... [--param KEY=VALUE]...\n"
		    "[--format text|json|nfd] [-j] [-q|-v] [--serve URL|none]\n"
		    "[--nccl | --nccl-env FILE] [--from FILE] [OPTIONS]",
	.head = check_usage,
	.help_after = cli_print_collectors,
	.tables = { CLI_TABLE(check_opts), CLI_SUB(cli_common_opts, struct check_args, cfg),
		    CLI_TABLE(check_client_head),
		    CLI_SUB(client_cli_opts, struct check_args, client) },
};

/* What the flags say together, and the job's NCCL settings: 0 or -EINVAL (printed). */
static int check_validate(struct check_args *a, struct nccl_env *job)
{
	char err[512] = "";

	if (a->serve.url && a->cfg.from) {
		fprintf(stderr, "rocewatch check: --serve and --from: serve's history is of the "
				"machine it runs on, not of the snapshot\n");
		return -EINVAL;
	}
	/* Reading this machine: a serve on it has the history check lacks. */
	if (!a->serve.given && reads_this_machine(&a->cfg))
		a->serve.url = CHECK_SERVE_DEFAULT_URL;
	if (a->o.quiet && a->o.verbose) {
		fprintf(stderr, "rocewatch check: -q and -v: one or the other\n");
		return -EINVAL;
	}
	if (a->nccl_environ && a->nccl_file) {
		fprintf(stderr, "rocewatch check: --nccl and --nccl-env: one or the other\n");
		return -EINVAL;
	}
	if (client_opts_finish(&a->client))
		return -EINVAL;
	if (a->nccl_environ) {
		extern char **environ;

		if (nccl_env_from_environ(job, environ)) {
			fprintf(stderr, "rocewatch check: out of memory\n");
			return -ENOMEM;
		}
	} else if (a->nccl_file && nccl_env_read_file(job, a->nccl_file, err, sizeof(err))) {
		fprintf(stderr, "rocewatch check: --nccl-env %s\n", err);
		return -EINVAL;
	}
	return 0;
}

/* The rule files, their diagnostics printed: 0 or -errno. */
static int check_load_rules(struct check_args *a, struct rules_engine **e)
{
	struct rules_diags dg = { 0 };
	int r = rules_load(&a->spec, e, &dg);

	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch check: %s\n", line);
	}
	rules_diags_free(&dg);
	return r;
}

/* The samples check evaluates, and the time they cover. */
struct check_samples {
	unsigned n;
	int64_t t_first, t_last;
};

/* Collect and evaluate: every snapshot of --from, or one or two samples of this machine. */
static int check_collect(struct check_args *a, struct rules_engine *e, struct daemon *d,
			 struct nccl_env *job, struct check_samples *sm)
{
	if (daemon_samples(d)) {
		size_t n = daemon_samples(d);

		/*
		 * One snapshot has no counter history: its counter rules are
		 * skipped with that reason, as fleet check does, so a healthy
		 * recorded node is OK rather than UNKNOWN for want of a rate.
		 */
		if (n == 1)
			rules_set_single_sample(e, true);

		for (size_t i = 0; i < n; i++) {
			if (daemon_collect(d, COLLECT_SLOW | COLLECT_FAST) || evaluate(e, d, job))
				return -EIO;
			sm->t_last = ts_ns(&daemon_model(d)->time);
			if (!sm->n++)
				sm->t_first = sm->t_last;
		}
		return 0;
	}
	daemon_collect(d, COLLECT_SLOW | COLLECT_FAST);
	if (evaluate(e, d, job))
		return -EIO;
	sm->t_first = sm->t_last = ts_ns(&daemon_model(d)->time);
	sm->n = 1;
	if (rules_need_history(e)) {
		sleep_ns(a->cfg.interval_ns);
		daemon_collect(d, COLLECT_FAST);
		if (evaluate(e, d, job))
			return -EIO;
		sm->t_last = ts_ns(&daemon_model(d)->time);
		sm->n = 2;
	}
	return 0;
}

/* The report in the format asked for, on stdout: the exit status. */
static int check_report(const struct check_args *a, const struct rules_engine *e, struct daemon *d,
			const struct check_samples *sm, const struct check_history *hist,
			const struct nccl_env *job)
{
	const struct check_opts *o = &a->o;
	const struct node_model *m = daemon_model(d);
	int rc = (int)rules_status(e);

	if (o->nfd) {
		struct strbuf sb = { 0 };

		/* no expiry: whoever installs the file decides how long it holds */
		nfd_render(&sb, e, m, 0);
		if (sb.oom) {
			fprintf(stderr, "rocewatch check: out of memory\n");
			rc = RULES_UNKNOWN;
		} else {
			fwrite(sb.buf, 1, sb.len, stdout);
		}
		sb_free(&sb);
	} else if (o->json) {
		struct strbuf sb = { 0 };
		struct rules_json_meta meta = { .host = m->host,
						.time_ns = sm->t_last,
						.samples = sm->n,
						.history_source = hist->source,
						.history_url = hist->url,
						.history_note = hist->note,
						.history_from_serve = hist->from_serve,
						.history_counter_results = hist->counter_results,
						.m = m,
						.job = job };

		if (rules_json_write(&sb, e, &meta, true)) {
			fprintf(stderr, "rocewatch check: out of memory\n");
			rc = RULES_UNKNOWN;
		} else {
			fwrite(sb.buf, 1, sb.len, stdout);
		}
		sb_free(&sb);
	} else {
		print_text(o, e, m, sm->n, (double)(sm->t_last - sm->t_first) / 1e9, hist, job);
	}
	if (fflush(stdout)) {
		fprintf(stderr, "rocewatch check: writing the report: %s\n", strerror(errno));
		rc = RULES_UNKNOWN;
	}
	return rc;
}

/* Set up, collect, evaluate, report, tear down: the exit status. */
static int check_run(struct check_args *a, struct rules_engine *e, struct nccl_env *job)
{
	struct check_history hist = { 0 };
	struct check_samples sm = { 0 };
	struct daemon *d = NULL;
	struct model_source *src;
	char err[512] = "";
	int rc = RULES_UNKNOWN, r;

	r = model_source_open(&src, &a->cfg, err, sizeof(err));
	if (!r && (r = daemon_open(&d, &a->cfg, src)))
		snprintf(err, sizeof(err), "out of memory");
	if (!r) {
		r = rules_fabric_setup(e, a->rail_map, d, err, sizeof(err));
		if (!r)
			r = daemon_start(d, err, sizeof(err));
	}
	if (r) {
		fprintf(stderr, "rocewatch check: %s\n", err[0] ? err : strerror(-r));
		goto out;
	}
	if (check_collect(a, e, d, job, &sm))
		goto out;
	if (!rules_need_history(e))
		hist = (struct check_history){ 0 };
	else if (a->serve.url)
		check_serve_merge(&hist, e, a->serve.url, &a->client.ho, a->serve.given,
				  daemon_host(d), real_ns());
	else
		check_history_local(&hist, e, daemon_samples(d) > 0,
				    a->serve.given ? "--serve none" : NULL);
	if (daemon_samples(d) && sm.n == 1 && rules_need_history(e))
		snprintf(hist.note, sizeof(hist.note),
			 "counter rules: skipped, one snapshot has no counter history (give "
			 "--from a JSON array of snapshots to decide them)");
	rc = check_report(a, e, d, &sm, &hist, job);
out:
	daemon_close(d);
	return rc;
}

int cmd_check(int argc, char **argv)
{
	struct check_args a = { 0 };
	struct rules_engine *e = NULL;
	struct nccl_env *job = calloc(1, sizeof(*job));
	struct nccl_ifaddrs ifs = { 0 };
	int rc = RULES_UNKNOWN, r, first;

	config_defaults(&a.cfg);
	/* A prolog waits for us: sample counters 100 ms apart, not serve's 1 s. */
	a.cfg.interval_ns = 100000000LL;
	client_opts_init(&a.client, "check");
	check_serve_client_defaults(&a.client.ho);
	a.client.connect_timeout_ns = a.client.ho.connect_timeout_ms * 1000000LL;
	a.client.timeout_ns = a.client.ho.timeout_ms * 1000000LL;
	if (!job) {
		fprintf(stderr, "rocewatch check: out of memory\n");
		config_free(&a.cfg);
		return RULES_UNKNOWN;
	}
	r = cli_parse(&check_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	if (r)
		goto out;
	a.o.json = a.format == CHECK_FMT_JSON;
	a.o.nfd = a.format == CHECK_FMT_NFD;
	if (first < argc) {
		fprintf(stderr, "rocewatch check: unexpected argument '%s'\n", argv[first]);
		goto out;
	}
	if (check_validate(&a, job))
		goto out;
	/* NCCL sees this machine's interfaces through getifaddrs(); a snapshot has its netdevs */
	if (job->given && reads_this_machine(&a.cfg) && !nccl_ifaddrs_read(&ifs))
		job->ifs = &ifs;
	if (check_load_rules(&a, &e))
		goto out;
	rc = check_run(&a, e, job);
out:
	rules_free(e);
	rules_spec_free(&a.spec);
	client_opts_free(&a.client);
	config_free(&a.cfg);
	if (job)
		nccl_env_free(job);
	free(job);
	nccl_ifaddrs_free(&ifs);
	return rc;
}
