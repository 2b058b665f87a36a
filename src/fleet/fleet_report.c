// SPDX-License-Identifier: MIT
/*
 * The fleet report: a text table (each fleet rule on one line with its
 * majority and outliers, then the nodes that did not answer and the nodes
 * whose own rules did not pass) and the JSON document (schema
 * rocewatch-fleet, docs/rules.md).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "fleet.h"
#include "strbuf.h"
#include "term.h"
#include "verdict_color.h"
#include "util.h"

/* "NCCL_IB_HCA=mlx5_0,mlx5_1, NCCL_IB_TC=106", or "no NCCL_* variable set". */
static void job_settings(const struct nccl_env *job, struct strbuf *sb)
{
	size_t n = 0;

	for (int v = 0; v < NCCL__VARS; v++)
		if (job->set[v])
			sb_printf(sb, "%s%s=%.80s", n++ ? ", " : "",
				  nccl_var_name((enum nccl_var)v), job->val[v]);
	if (!n)
		sb_puts(sb, "no NCCL_* variable set (NCCL's defaults)");
}

/* The job section: its settings, and with -v what its NCCL does on each node. */
static void job_text(const struct fleet_run *fr, struct term *t)
{
	struct strbuf sb = { 0 };

	term_newline(t);
	term_code(t, TERM_BOLD);
	term_printf(t, "job");
	term_code(t, TERM_RESET);
	term_newline(t);
	sb_printf(&sb, "NCCL from %s: ", fr->job_from);
	job_settings(fr->job, &sb);
	term_printf(t, "  ");
	term_wrap(t, 4, sb.oom ? "NCCL settings" : sb.buf, false);
	for (size_t i = 0; fr->verbose && i < fr->n; i++) {
		const struct fleet_member *nm = &fr->nodes[i];

		if (!nm->answered || !nm->job_hca)
			continue;
		sb_reset(&sb);
		sb_printf(&sb, "%s: devices %s; rails %s; GID %s", nm->name,
			  nm->job_hca[0] ? nm->job_hca : "none",
			  nm->job_rails[0] ? nm->job_rails : "-",
			  nm->job_gids[0] ? nm->job_gids : "-");
		term_printf(t, "  ");
		term_wrap(t, 4, sb.oom ? nm->name : sb.buf, false);
	}
	sb_free(&sb);
}

/* A space-separated list as a JSON array of strings. */
static json_t *words_json(const char *s)
{
	json_t *a = json_array();

	while (s && *s) {
		size_t n = strcspn(s, " ");

		if (n)
			json_array_append_new(a, json_stringn(s, n));
		s += n + (s[n] == ' ');
	}
	return a;
}

/*
 * "job": the settings and, per node that answered, what its NCCL does:
 * effective_hca (NCCL's devices in its order), rails (each device's rail),
 * gid_index (per port it uses, the index: the job's or the one NCCL picks).
 */
static json_t *job_json(const struct fleet_run *fr)
{
	json_t *j = json_object(), *vars = json_object(), *nodes = json_array();

	for (int v = 0; v < NCCL__VARS; v++)
		if (fr->job->set[v])
			json_object_set_new(vars, nccl_var_name((enum nccl_var)v),
					    json_string(fr->job->val[v]));
	for (size_t i = 0; i < fr->n; i++) {
		const struct fleet_member *nm = &fr->nodes[i];
		json_t *n;

		if (!nm->answered || !nm->job_hca)
			continue;
		n = json_object();
		json_object_set_new(n, "name", json_string(nm->name));
		json_object_set_new(n, "effective_hca", words_json(nm->job_hca));
		json_object_set_new(n, "rails", words_json(nm->job_rails));
		json_object_set_new(n, "gid_index", words_json(nm->job_gids));
		json_array_append_new(nodes, n);
	}
	json_object_set_new(j, "nccl_env", json_string(fr->job_from));
	json_object_set_new(j, "variables", vars);
	json_object_set_new(
	    j, "gid_index_from",
	    json_string(fr->job->set[NCCL_IB_GID_INDEX] ? "NCCL_IB_GID_INDEX" : "picked by NCCL"));
	json_object_set_new(j, "nodes", nodes);
	return j;
}

/* A rule's doc, reflowed at the terminal's width under its row. */
static void print_doc(const struct term *row, const char *doc, int indent)
{
	struct term t;

	term_init(&t, row->f, row->color ? TERM_COLOR_ALWAYS : TERM_COLOR_NEVER);
	term_code(&t, TERM_DIM);
	term_pad_to(&t, indent);
	term_wrap(&t, indent, doc, true);
	term_code(&t, TERM_RESET);
}

static void rule_label(const struct fleet_result *x, char *buf, size_t len)
{
	if (x->group[0])
		snprintf(buf, len, "%s (%s)", x->rule->name, x->group);
	else
		snprintf(buf, len, "%s", x->rule->name);
}

/* A row's text: the detail, why it is unknown, the summary. */
static void row_text(const struct fleet_run *fr, const struct fleet_result *x, char *buf,
		     size_t len)
{
	size_t l;

	if (x->outcome == RULE_SKIP)
		snprintf(buf, len, "%s", x->reason);
	else
		rules_fleet_describe(x, fr->fnodes, fr->max_names, buf, len);
	l = strlen(buf);
	/* the detail names the unknown units; otherwise say why the rule is unknown */
	if (x->outcome == RULE_UNKNOWN && x->reason[0] && !x->n_unknown && l < len)
		l += (size_t)snprintf(buf + l, len - l, " [%s]", x->reason);
	if (x->summary[0] && l < len)
		snprintf(buf + l, len - l, " - %s", x->summary);
}

static void section(struct term *t, const char *title)
{
	term_newline(t);
	term_code(t, TERM_BOLD);
	term_printf(t, "%s", title);
	term_code(t, TERM_RESET);
	term_newline(t);
}

static void text_unanswered(const struct fleet_run *fr, struct term *t, int wnode)
{
	bool header = false;

	for (size_t i = 0; i < fr->n; i++) {
		const struct fleet_member *nm = &fr->nodes[i];

		if (nm->answered)
			continue;
		if (!header)
			section(t, "nodes that did not answer");
		header = true;
		term_printf(t, "  ");
		term_code(t, TERM_MAG);
		term_printf(t, "unknown");
		term_code(t, TERM_RESET);
		term_printf(t, "  %-*s", wnode, nm->name);
		term_pad_to(t, 11 + wnode + 2);
		term_wrap(t, wnode + 13 < t->width / 2 ? wnode + 13 : 11, fleet_member_reason(nm),
			  false);
	}
}

/* Where a row's text starts: beside the name when every row fits there (0: under it). */
static int text_column(const struct fleet_run *fr, const struct fleet_result *res, size_t n,
		       const struct term *t)
{
	char label[160], line[4096];
	int wname = 10, textcol;

	for (size_t i = 0; i < n; i++) {
		rule_label(&res[i], label, sizeof(label));
		if ((int)strlen(label) > wname)
			wname = (int)strlen(label);
	}
	textcol = 21 + wname + 2;
	for (size_t i = 0; i < n; i++) {
		if (res[i].outcome == RULE_SKIP && !fr->verbose)
			continue;
		row_text(fr, &res[i], line, sizeof(line));
		if (textcol + term_strwidth(line, strlen(line)) > t->width)
			return 0;
	}
	return textcol;
}

static void text_rule(const struct fleet_run *fr, struct term *t, const struct fleet_result *x,
		      int textcol)
{
	char label[160], line[4096];

	rule_label(x, label, sizeof(label));
	row_text(fr, x, line, sizeof(line));
	term_printf(t, "  ");
	term_code(t, term_outcome_color(x->outcome, x->rule->severity));
	term_printf(t, "%-7s", rule_outcome_name(x->outcome));
	term_code(t, TERM_RESET);
	term_printf(t, "  %-8s  %s", rule_severity_name(x->rule->severity), label);
	if (textcol) {
		term_pad_to(t, textcol);
		term_wrap(t, textcol, line, false);
	} else {
		term_newline(t);
		term_pad_to(t, 21);
		term_wrap(t, 21, line, false);
	}
	/* an unknown rule saw no failure: never the fix for one */
	if (x->outcome == RULE_UNKNOWN)
		print_doc(t,
			  "Not decided (nothing was seen to fail): the units above could not "
			  "be read. `rocewatch check` on those nodes says which fact and how "
			  "to let rocewatch read it.",
			  21);
	else if ((x->outcome == RULE_FAIL || fr->verbose) && x->rule->doc[0])
		print_doc(t, x->rule->doc, 21);
}

static void text_node(struct term *t, const struct fleet_member *nm)
{
	char line[4096];

	term_printf(t, "  ");
	term_code(t, term_status_color(nm->status));
	term_printf(t, "%-8s", rules_status_name(nm->status));
	term_code(t, TERM_RESET);
	snprintf(line, sizeof(line), "%s: %zu passed, %zu failed, %zu unknown, %zu skipped",
		 nm->name, nm->counts[RULE_PASS], nm->counts[RULE_FAIL], nm->counts[RULE_UNKNOWN],
		 nm->counts[RULE_SKIP]);
	term_printf(t, "  ");
	term_wrap(t, 12, line, false);
	for (size_t k = 0; k < nm->n_res; k++) {
		const struct fleet_node_result *r = &nm->res[k];

		term_printf(t, "      ");
		term_code(t, term_outcome_color(r->outcome, r->rule->severity));
		term_printf(t, "%-7s", rule_outcome_name(r->outcome));
		term_code(t, TERM_RESET);
		term_printf(t, "  %-8s  %s%s%s%s", rule_severity_name(r->rule->severity),
			    r->rule->name, r->object[0] ? " (" : "", r->object,
			    r->object[0] ? ")" : "");
		term_newline(t);
		term_pad_to(t, 25);
		term_wrap(t, 25, r->text, false);
	}
}

static void text_per_node(const struct fleet_run *fr, struct term *t)
{
	bool header = false;

	for (size_t i = 0; i < fr->n; i++) {
		const struct fleet_member *nm = &fr->nodes[i];

		if (!nm->evaluated || (nm->status == RULES_OK && !fr->verbose))
			continue;
		if (!header)
			section(t, "per-node rules");
		header = true;
		text_node(t, nm);
	}
}

/* The totals, then the verdict, last and short: what PrologSlurmctld puts in its log line. */
static void text_totals(const struct fleet_run *fr, struct term *t, const struct fleet_result *res,
			size_t n, size_t answered)
{
	size_t crit = 0, warn = 0, cnt[RULE__OUTCOMES] = { 0 }, st_count[4] = { 0 };
	struct strbuf sb = { 0 };

	for (size_t i = 0; i < n; i++) {
		cnt[res[i].outcome]++;
		if (res[i].outcome == RULE_FAIL) {
			crit += res[i].rule->severity == SEV_CRITICAL;
			warn += res[i].rule->severity == SEV_WARNING;
		}
	}
	for (size_t i = 0; i < fr->n; i++)
		if (fr->nodes[i].evaluated)
			st_count[fr->nodes[i].status]++;
	term_newline(t);
	sb_printf(&sb,
		  "fleet rules: %zu passed, %zu failed (%zu critical, %zu warning), %zu "
		  "unknown, %zu skipped",
		  cnt[RULE_PASS], cnt[RULE_FAIL], crit, warn, cnt[RULE_UNKNOWN], cnt[RULE_SKIP]);
	if (fr->per_node)
		sb_printf(&sb, "; per-node: %zu OK, %zu WARNING, %zu CRITICAL, %zu UNKNOWN",
			  st_count[RULES_OK], st_count[RULES_WARNING], st_count[RULES_CRITICAL],
			  st_count[RULES_UNKNOWN]);
	term_wrap(t, 2, sb.oom ? "fleet rules" : sb.buf, false);
	sb_free(&sb);
	term_printf(t, "%zu node%s, %zu unknown: ", fr->n, fr->n == 1 ? "" : "s", fr->n - answered);
	term_code(t, term_status_color(fr->status));
	term_printf(t, "%s", rules_status_name(fr->status));
	term_code(t, TERM_RESET);
	term_newline(t);
}

/*
 * The text report fits the terminal (COLUMNS, else the terminal's, else 80)
 * as check's does: a row's text beside its name when every row fits, else
 * under it; the last line stays one short line with the verdict, for the
 * scripts (PrologSlurmctld) that read it.
 */
int fleet_report_text(const struct fleet_run *fr, FILE *f)
{
	const struct fleet_result *res;
	size_t n = rules_fleet_results(fr->e, &res), answered = 0;
	int wnode = 4, textcol;
	struct term t;
	struct strbuf sb = { 0 };

	term_init(&t, f, fr->color);
	for (size_t i = 0; i < fr->n; i++) {
		int l = (int)strlen(fr->nodes[i].name);

		answered += fr->nodes[i].answered;
		if (l > wnode)
			wnode = l;
	}
	textcol = text_column(fr, res, n, &t);
	sb_printf(&sb, "rocewatch fleet check: %zu node%s, %zu answered, %zu unknown; profiles ",
		  fr->n, fr->n == 1 ? "" : "s", answered, fr->n - answered);
	for (size_t p = 0; p < rules_profile_count(fr->e); p++)
		sb_printf(&sb, "%s%s", p ? ", " : "", rules_profile(fr->e, p)->name);
	sb_printf(&sb, " (%.2f s)", (double)(fr->gathered_ns - fr->started_ns) / 1e9);
	term_wrap(&t, 2, sb.oom ? "rocewatch fleet check" : sb.buf, false);
	sb_free(&sb);

	text_unanswered(fr, &t, wnode);
	if (fr->job)
		job_text(fr, &t);
	section(&t, "fleet rules");
	for (size_t i = 0; i < n; i++)
		if (res[i].outcome != RULE_SKIP || fr->verbose)
			text_rule(fr, &t, &res[i], textcol);
	if (fr->per_node)
		text_per_node(fr, &t);
	text_totals(fr, &t, res, n, answered);
	return 0;
}

/* ---- JSON ---- */

static json_t *unit_json(const struct fleet_run *fr, const struct fleet_unit *u)
{
	json_t *j = json_object();

	json_object_set_new(j, "node", json_string(fr->nodes[u->node].name));
	json_object_set_new(j, "object", u->object[0] ? json_string(u->object) : json_null());
	return j;
}

static json_t *fleet_result_json(const struct fleet_run *fr, const struct fleet_result *x)
{
	const struct rule_info *ri = x->rule;
	json_t *j = json_object(), *vals = json_array(), *outl = json_array(), *unk = json_array();
	char line[4096];

	json_object_set_new(j, "profile", json_string(ri->profile));
	json_object_set_new(j, "rule", json_string(ri->name));
	json_object_set_new(j, "severity", json_string(rule_severity_name(ri->severity)));
	json_object_set_new(j, "each", json_string(obj_kind_name(ri->scope)));
	json_object_set_new(j, "by",
			    ri->by == FLEET_BY_RAIL	  ? json_string("rail")
			    : ri->by == FLEET_BY_DEVICE	  ? json_string("device")
			    : ri->by == FLEET_BY_POOL	  ? json_string("pool")
			    : ri->by == FLEET_BY_POSITION ? json_string("position")
			    : ri->scope != OBJ_NODE	  ? json_string("position")
							  : json_null());
	json_object_set_new(j, "group", x->group[0] ? json_string(x->group) : json_null());
	json_object_set_new(j, "outcome", json_string(rule_outcome_name(x->outcome)));
	rules_fleet_describe(x, fr->fnodes, fr->max_names, line, sizeof(line));
	json_object_set_new(j, "detail", json_string(x->outcome == RULE_SKIP ? "" : line));
	json_object_set_new(j, "summary", json_string(x->summary));
	json_object_set_new(j, "reason", x->reason[0] ? json_string(x->reason) : json_null());
	json_object_set_new(j, "units", json_integer((json_int_t)x->n_units));
	json_object_set_new(j, "nodes", json_integer((json_int_t)x->n_nodes));
	if (x->majority >= 0) {
		const struct fleet_value *mv = &x->values[x->majority];

		json_object_set_new(j, "majority",
				    json_pack("{s:s,s:I,s:I}", "value", mv->text, "units",
					      (json_int_t)mv->n_units, "nodes",
					      (json_int_t)mv->n_nodes));
	} else {
		json_object_set_new(j, "majority", json_null());
	}
	for (size_t i = 0; i < x->n_values; i++) {
		const struct fleet_value *v = &x->values[i];

		json_array_append_new(vals, json_pack("{s:s,s:I,s:I}", "value", v->text, "units",
						      (json_int_t)v->n_units, "nodes",
						      (json_int_t)v->n_nodes));
		if ((ssize_t)i == x->majority)
			continue;
		for (size_t u = 0; u < v->n_units; u++) {
			json_t *o = unit_json(fr, &v->units[u]);

			json_object_set_new(o, "value", json_string(v->text));
			json_array_append_new(outl, o);
		}
	}
	for (size_t u = 0; u < x->n_unknown; u++) {
		json_t *o = unit_json(fr, &x->unknown[u].u);

		json_object_set_new(o, "reason", json_string(x->unknown[u].reason));
		json_array_append_new(unk, o);
	}
	json_object_set_new(j, "values", vals);
	json_object_set_new(j, "outliers", outl);
	json_object_set_new(j, "unknown", unk);
	json_object_set_new(j, "doc", json_string(ri->doc));
	return j;
}

static const char *source_name(enum fleet_source s)
{
	return s == FSRC_HTTP	    ? "http"
	       : s == FSRC_FILE	    ? "file"
	       : s == FSRC_JOB_LIST ? "job"
				    : "prometheus";
}

static json_t *node_json(const struct fleet_member *nm)
{
	json_t *j = json_object();

	json_object_set_new(j, "name", json_string(nm->name));
	json_object_set_new(j, "source", json_string(source_name(nm->src)));
	json_object_set_new(j, "where", json_string(nm->where));
	json_object_set_new(j, "state", json_string(nm->answered ? "ok" : "unknown"));
	json_object_set_new(j, "reason",
			    nm->answered ? json_null() : json_string(fleet_member_reason(nm)));
	json_object_set_new(j, "host", nm->answered ? json_string(nm->host) : json_null());
	if (nm->src == FSRC_HTTP)
		json_object_set_new(j, "seconds", json_real(nm->seconds));
	if (nm->evaluated) {
		json_t *rs = json_array();

		json_object_set_new(j, "status", json_string(rules_status_name(nm->status)));
		json_object_set_new(j, "outcome", json_string(nm->outcome ? nm->outcome : ""));
		json_object_set_new(j, "counts",
				    json_pack("{s:I,s:I,s:I,s:I}", "pass",
					      (json_int_t)nm->counts[RULE_PASS], "fail",
					      (json_int_t)nm->counts[RULE_FAIL], "unknown",
					      (json_int_t)nm->counts[RULE_UNKNOWN], "skip",
					      (json_int_t)nm->counts[RULE_SKIP]));
		for (size_t k = 0; k < nm->n_res; k++) {
			const struct fleet_node_result *r = &nm->res[k];

			json_array_append_new(
			    rs, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "profile", r->rule->profile,
					  "rule", r->rule->name, "severity",
					  rule_severity_name(r->rule->severity), "object",
					  r->object, "outcome", rule_outcome_name(r->outcome),
					  r->outcome == RULE_FAIL ? "summary" : "reason", r->text));
		}
		json_object_set_new(j, "results", rs);
	}
	return j;
}

int fleet_report_json(const struct fleet_run *fr)
{
	const struct fleet_result *res;
	size_t n = rules_fleet_results(fr->e, &res), answered = 0, cnt[RULE__OUTCOMES] = { 0 };
	json_t *root = json_object(), *nodes = json_array(), *results = json_array(),
	       *profiles = json_array();
	char ts[40];
	int r;

	for (size_t i = 0; i < fr->n; i++) {
		answered += fr->nodes[i].answered;
		json_array_append_new(nodes, node_json(&fr->nodes[i]));
	}
	for (size_t i = 0; i < n; i++) {
		cnt[res[i].outcome]++;
		json_array_append_new(results, fleet_result_json(fr, &res[i]));
	}
	for (size_t p = 0; p < rules_profile_count(fr->e); p++) {
		const struct rules_profile_info *pi = rules_profile(fr->e, p);

		json_array_append_new(profiles,
				      json_pack("{s:s,s:s,s:I}", "name", pi->name, "file", pi->file,
						"rules", (json_int_t)pi->n_rules));
	}
	format_rfc3339(fr->gathered_ns, ts, sizeof(ts));
	json_object_set_new(root, "schema", json_string("rocewatch-fleet"));
	json_object_set_new(root, "schema_version", json_integer(1));
	json_object_set_new(root, "rocewatch_version", json_string(ROCEWATCH_VERSION));
	json_object_set_new(root, "time", json_string(ts));
	json_object_set_new(root, "gather_seconds",
			    json_real((double)(fr->gathered_ns - fr->started_ns) / 1e9));
	json_object_set_new(root, "status", json_string(rules_status_name(fr->status)));
	json_object_set_new(root, "exit_code", json_integer((int)fr->status));
	json_object_set_new(
	    root, "counts",
	    json_pack("{s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I}}", "nodes", (json_int_t)fr->n, "answered",
		      (json_int_t)answered, "unknown", (json_int_t)(fr->n - answered), "rules",
		      "pass", (json_int_t)cnt[RULE_PASS], "fail", (json_int_t)cnt[RULE_FAIL],
		      "unknown", (json_int_t)cnt[RULE_UNKNOWN], "skip",
		      (json_int_t)cnt[RULE_SKIP]));
	json_object_set_new(root, "profiles", profiles);
	json_object_set_new(root, "nodes", nodes);
	if (fr->job)
		json_object_set_new(root, "job", job_json(fr));
	if (fr->engine)
		json_object_set_new(root, "compare",
				    json_pack("{s:I,s:I,s:I,s:I}", "engine", (json_int_t)fr->told,
					      "client", (json_int_t)fr->untold, "digest_groups",
					      (json_int_t)fr->shared_groups, "digest_nodes",
					      (json_int_t)(fr->shared + fr->shared_groups)));
	json_object_set_new(root, "results", results);
	r = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	putchar('\n');
	return r ? -EIO : 0;
}
