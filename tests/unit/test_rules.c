// SPDX-License-Identifier: MIT
/*
 * The rule language: every load error with its exact file:line:col, the
 * evaluator's outcomes and reasons, counter functions over sample
 * sequences (resets, 32-bit wraps, windows, thinning), and no allocation
 * per evaluation in steady state (malloc is wrapped at link time).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine.h"
#include "helpers.h"

/* ---- allocation counting (-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc) ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
static unsigned long allocs;

void *__wrap_malloc(size_t n)
{
	allocs++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	allocs++;
	return __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	allocs++;
	return __real_realloc(p, n);
}

/* ---- helpers ---- */

static const char *source_dir;

static struct rules_engine *load_ok(const char *yaml)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	int r = rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg);

	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		if (!dg.d[i].warning)
			fprintf(stderr, "unexpected: %s\n", line);
	}
	assert_int_equal(r, 0);
	assert_non_null(e);
	rules_diags_free(&dg);
	return e;
}

/* The first error of loading yaml, formatted. */
static void expect_error(const char *yaml, const struct rules_spec *spec, const char *want)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	char line[1024] = "";
	int r = rules_load_buffer("t.yaml", yaml, strlen(yaml), spec, &e, &dg);

	assert_int_not_equal(r, 0);
	assert_null(e);
	for (size_t i = 0; i < dg.n; i++)
		if (!dg.d[i].warning) {
			rules_diag_format(&dg.d[i], line, sizeof(line));
			break;
		}
	if (strcmp(line, want))
		fprintf(stderr, "want: %s\n got: %s\n", want, line);
	assert_string_equal(line, want);
	rules_diags_free(&dg);
}

/* A profile with one rule: HEAD then the rule's lines (each indented 4). */
#define HEAD                                                    \
	"profile: t\n"                                          \
	"params: { p: 3, name: eth2, on: true, set: [3, 4] }\n" \
	"rules:\n"                                              \
	"  - name: r\n"

/* ---- load errors: exact positions ---- */

static void err_bad_yaml(void **state)
{
	(void)state;
	/* the flow sequence opened on line 6 is never closed: libyaml stops at the ':' of line 7 */
	expect_error(
	    HEAD "    scope: netdev\n    expr: [mtu\n    severity: warning\n", NULL,
	    "t.yaml:7:13: error: YAML: did not find expected ',' or ']' while parsing a flow "
	    "sequence (line 6)");
	expect_error(
	    "profile: t\nrules:\n  - name: a\n\tscope: node\n", NULL,
	    "t.yaml:4:1: error: YAML: found a tab character that violates indentation while "
	    "scanning a plain scalar (line 3)");
	expect_error("", NULL, "t.yaml: error: empty file: a profile needs profile: and rules:");
	expect_error("- 1\n- 2\n", NULL,
		     "t.yaml:1:1: error: a profile is a mapping with profile, description, params, "
		     "requires and rules");
	expect_error("profile: t\nrules: []\n---\nprofile: u\nrules: []\n", NULL,
		     "t.yaml:4:1: error: only one YAML document per profile file");
}

static void err_unknown_field(void **state)
{
	(void)state;
	/* "    expr: " is 10 columns: the path starts at column 11 */
	expect_error(HEAD "    scope: netdev\n    expr: pfc.enable == {3}\n    severity: warning\n",
		     NULL,
		     "t.yaml:6:11: error: expr: unknown netdev field 'pfc.enable' (did you mean "
		     "'pfc.enabled'?)");
	/* "    expr: " and "active_mtu > 0 && " are 10 + 18 columns */
	expect_error(HEAD "    scope: rdma_port\n    expr: active_mtu > 0 && frobnicate\n"
			  "    severity: warning\n",
		     NULL, "t.yaml:6:29: error: expr: unknown rdma_port field 'frobnicate'");
	/* netdev. from a port: resolved against the netdev table */
	expect_error(HEAD "    scope: rdma_port\n    expr: netdev.mtux > 0\n    severity: info\n",
		     NULL,
		     "t.yaml:6:11: error: expr: unknown netdev field 'mtux' (did you mean 'mtu'?)");
	expect_error(
	    HEAD "    scope: netdev\n    expr: netdev.mtu > 0\n    severity: info\n", NULL,
	    "t.yaml:6:11: error: expr: 'netdev.' reaches the netdev of an rdma_port; a netdev "
	    "rule names its own fields directly");
	expect_error(HEAD "    scope: netdev\n    expr: hw[\"out_of_sequence\"] == 0\n"
			  "    severity: info\n",
		     NULL,
		     "t.yaml:6:11: error: expr: counter set 'hw' belongs to rdma_port objects, not "
		     "netdev");
}

static void err_type_mismatch(void **state)
{
	(void)state;
	/* the operator's column: "    expr: mtu " is 14 columns */
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu == \"9000\"\n    severity: warning\n", NULL,
	    "t.yaml:6:15: error: expr: type mismatch: '==' cannot compare number with string");
	expect_error(
	    HEAD "    scope: netdev\n    expr: pfc.enabled == 3\n    severity: warning\n", NULL,
	    "t.yaml:6:23: error: expr: type mismatch: '==' cannot compare set with number");
	expect_error(HEAD "    scope: netdev\n    expr: mtu && rdma\n    severity: warning\n", NULL,
		     "t.yaml:6:15: error: expr: type mismatch: '&&' needs booleans, got number and "
		     "boolean");
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu + 1\n    severity: warning\n", NULL,
	    "t.yaml:6:11: error: expr must be a boolean (a comparison or a test), not number");
	expect_error(
	    HEAD "    scope: netdev\n    expr: $name in pfc.enabled\n    severity: warning\n", NULL,
	    "t.yaml:6:17: error: expr: type mismatch: 'in' tests a number against a set, got "
	    "string in set");
	expect_error(HEAD "    scope: netdev\n    expr: mtu[3] == 0\n    severity: warning\n", NULL,
		     "t.yaml:6:14: error: expr: only per-priority arrays and the DSCP map can be "
		     "indexed, not number");
	expect_error(HEAD
		     "    scope: netdev\n    expr: pfc.rx_pause[8] == 0\n    severity: warning\n",
		     NULL, "t.yaml:6:24: error: expr: index 8 is out of range 0-7");
	expect_error(HEAD
		     "    scope: netdev\n    expr: pfc.enabled == {3, 64}\n    severity: warning\n",
		     NULL, "t.yaml:6:30: error: expr: set element 64 is not an integer 0-63");
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu > 5m\n    severity: warning\n", NULL,
	    "t.yaml:6:17: error: expr: a duration is only allowed as the window of rate(), "
	    "increase() or delta()");
	expect_error(HEAD "    scope: netdev\n    expr: 1 < mtu < 3\n    severity: warning\n", NULL,
		     "t.yaml:6:19: error: expr: comparisons do not chain; use && between them");
}

static void err_functions(void **state)
{
	(void)state;
	char names[512], want[600];

	/*
	 * The list comes from the builtin table (rules/functions.c), so a new row needs no
	 * edit here; its shape is checked: per-node builtins first, aggregates after.
	 */
	rules_function_names(names, sizeof(names));
	assert_true(!strncmp(names, "rate, ", 6));
	assert_non_null(strstr(names, "; in fleet rules distinct, "));
	snprintf(want, sizeof(want),
		 "t.yaml:6:11: error: expr: unknown function 'rte' (functions: %s)", names);
	expect_error(HEAD "    scope: netdev\n    expr: rte(mtu, 5m) > 0\n    severity: warning\n",
		     NULL, want);
	/* wrong arity: at the function's name, here after "mtu > 0 && " */
	expect_error(HEAD "    scope: netdev\n    expr: mtu > 0 && increase(mtu) == 0\n"
			  "    severity: warning\n",
		     NULL, "t.yaml:6:22: error: expr: increase() takes 2 arguments, got 1");
	expect_error(HEAD "    scope: netdev\n    expr: abs() == 0\n    severity: warning\n", NULL,
		     "t.yaml:6:11: error: expr: abs() takes 1 argument, got 0");
	expect_error(
	    HEAD "    scope: netdev\n    expr: coalesce(mtu) == 0\n    severity: warning\n", NULL,
	    "t.yaml:6:11: error: expr: coalesce() takes at least 2 arguments, got 1");
	expect_error(
	    HEAD "    scope: rdma_port\n    expr: gid_count(gids) == 0\n    severity: warning\n",
	    NULL, "t.yaml:6:11: error: expr: gid_count() takes 3 to 4 arguments, got 1");
	expect_error(
	    HEAD "    scope: netdev\n    expr: rate(mtu, 30) > 0\n    severity: warning\n", NULL,
	    "t.yaml:6:21: error: expr: rate(): argument 2 must be a window like 5m or 30s");
	expect_error(
	    HEAD "    scope: netdev\n    expr: rate(trust, 5m) > 0\n    severity: warning\n", NULL,
	    "t.yaml:6:16: error: expr: rate(): argument 1 must be a number or a per-priority "
	    "array, not string");
	expect_error(
	    HEAD "    scope: netdev\n    expr: coalesce(mtu, trust) == 0\n"
		 "    severity: warning\n",
	    NULL,
	    "t.yaml:6:25: error: expr: coalesce(): argument 2 is string, argument 1 is number");
	expect_error(HEAD
		     "    scope: rdma_port\n    expr: gid_count(gids, \"RoCE v2\", \"ip4\") > 0\n"
		     "    severity: warning\n",
		     NULL,
		     "t.yaml:6:38: error: expr: gid_count(): family must be \"ipv4\", \"ipv6\", "
		     "\"link-local\" or \"any\"");
}

/* A table row of docs/rules.md (a line starting with '|') that shows `name(`. */
static bool documented(const char *doc, const char *name)
{
	char want[64];

	snprintf(want, sizeof(want), "`%s(", name);
	for (const char *l = doc; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n'), *hit;

		while (*l == ' ')
			l++;
		hit = strstr(l, want);
		if (*l == '|' && hit && (!end || hit < end))
			return true;
	}
	return false;
}

/*
 * Every function of the language has its line in docs/rules.md: the names
 * come from the "unknown function" error, which lists the table's rows.
 */
static void functions_documented(void **state)
{
	const char *yaml = HEAD "    scope: netdev\n    expr: nosuch() > 0\n    severity: info\n";
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	char path[4096], *doc, *list = NULL, *p;
	int n = 0;

	(void)state;
	assert_int_not_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg), 0);
	for (size_t i = 0; i < dg.n && !list; i++)
		if (!dg.d[i].warning)
			list = strstr(dg.d[i].msg, "(functions: ");
	assert_non_null(list);
	list += strlen("(functions: ");
	snprintf(path, sizeof(path), "%s/docs/rules.md", source_dir);
	doc = slurp(path);
	assert_non_null(doc);
	for (p = strtok(list, ",;)"); p; p = strtok(NULL, ",;)")) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, "in fleet rules ", 15))
			p += 15;
		if (!documented(doc, p))
			fprintf(stderr, "docs/rules.md has no table row for %s()\n", p);
		assert_true(documented(doc, p));
		n++;
	}
	assert_true(n >= 19); /* the list was read */
	free(doc);
	rules_diags_free(&dg);
}

static void err_lexer_and_syntax(void **state)
{
	(void)state;
	expect_error(HEAD "    scope: netdev\n    expr: trust == \"dscp\n    severity: warning\n",
		     NULL, "t.yaml:6:20: error: expr: unterminated string");
	expect_error(HEAD "    scope: netdev\n    expr: mtu = 9000\n    severity: warning\n", NULL,
		     "t.yaml:6:15: error: expr: unexpected '=' (comparison is '==')");
	expect_error(HEAD "    scope: netdev\n    expr: mtu >= 9000 )\n    severity: warning\n",
		     NULL,
		     "t.yaml:6:23: error: expr: unexpected ')' after the end of the expression");
	/* at the end of the expression: just after its last character */
	expect_error(
	    HEAD "    scope: netdev\n    expr: (mtu >= 9000\n    severity: warning\n", NULL,
	    "t.yaml:6:23: error: expr: expected ')' to close the '(' at offset 0, found end of "
	    "expression");
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu >= 5x\n    severity: warning\n", NULL,
	    "t.yaml:6:18: error: expr: '5x' is neither a number nor a duration (5m, 30s, 1h)");
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu >= $nope\n    severity: warning\n", NULL,
	    "t.yaml:6:18: error: expr: unknown parameter '$nope' (this profile declares $p, "
	    "$name, $on, $set)");
	expect_error(HEAD "    scope: netdev\n    expr: mtu >= @\n    severity: warning\n", NULL,
		     "t.yaml:6:18: error: expr: unexpected character '@'");
}

/* Errors inside quoted and block scalars point into the file, not into the string. */
static void err_positions_in_scalars(void **state)
{
	(void)state;
	/* double quotes: one column for the quote */
	expect_error(
	    HEAD "    scope: netdev\n    expr: \"mtu >= $nope\"\n    severity: warning\n", NULL,
	    "t.yaml:6:19: error: expr: unknown parameter '$nope' (this profile declares $p, "
	    "$name, $on, $set)");
	/* an escaped quote before the error shifts it by the backslash */
	expect_error(HEAD "    scope: netdev\n    expr: \"trust == \\\"x\\\" && nope\"\n"
			  "    severity: warning\n",
		     NULL, "t.yaml:6:30: error: expr: unknown netdev field 'nope'");
	/* single quotes: '' is one quote in the value */
	expect_error(HEAD "    scope: netdev\n    expr: 'trust == \"it''s\" && nope'\n"
			  "    severity: warning\n",
		     NULL, "t.yaml:6:32: error: expr: unknown netdev field 'nope'");
	/* literal block: line 3 of the block, column after its indentation */
	expect_error(
	    HEAD "    scope: netdev\n    expr: |\n      mtu >= 9000 &&\n"
		 "        pfc.enabled == 3\n    severity: warning\n",
	    NULL, "t.yaml:8:21: error: expr: type mismatch: '==' cannot compare set with number");
	/* folded block: the line break became a space but the position is still exact */
	expect_error(
	    HEAD "    scope: netdev\n    expr: >\n      mtu >= 9000 &&\n"
		 "      pfc.enabled == 3\n    severity: warning\n",
	    NULL, "t.yaml:8:19: error: expr: type mismatch: '==' cannot compare set with number");
	/* plain scalar continued on the next line */
	expect_error(HEAD "    scope: netdev\n    expr: mtu >= 9000 &&\n      bogus\n"
			  "    severity: warning\n",
		     NULL, "t.yaml:7:7: error: expr: unknown netdev field 'bogus'");
	/* a summary interpolation */
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu > 0\n    severity: warning\n"
		 "    summary: \"MTU {mtu}, PFC {pfc.enabeld}\"\n",
	    NULL,
	    "t.yaml:8:31: error: summary: unknown netdev field 'pfc.enabeld' (did you mean "
	    "'pfc.enabled'?)");
	expect_error(HEAD "    scope: netdev\n    expr: mtu > 0\n    severity: warning\n"
			  "    summary: \"MTU {mtu\"\n",
		     NULL,
		     "t.yaml:8:19: error: summary: '{' opens an interpolation that is never closed "
		     "(write {\"{\"} for a literal brace)");
	expect_error(
	    HEAD "    scope: netdev\n    when: mtu\n    expr: mtu > 0\n    severity: warning\n",
	    NULL,
	    "t.yaml:6:11: error: when must be a boolean (a comparison or a test), not number");
}

static void err_structure(void **state)
{
	(void)state;
	expect_error(HEAD "    scope: netdev\n    exprr: mtu > 0\n    severity: warning\n", NULL,
		     "t.yaml:6:5: error: unknown rule key 'exprr' (keys: name, scope, when, expr, "
		     "severity, for, summary, doc, class, action; fleet rules also each, by)");
	expect_error(HEAD "    scope: netdev\n    severity: warning\n", NULL,
		     "t.yaml:4:5: error: rule 'r' has no expr");
	expect_error(HEAD "    scope: netdev\n    expr: mtu > 0\n    severity: fatal\n", NULL,
		     "t.yaml:7:15: error: severity must be critical, warning or info, not 'fatal'");
	expect_error(HEAD "    scope: switch\n    expr: mtu > 0\n    severity: info\n", NULL,
		     "t.yaml:5:12: error: scope must be node, netdev, rdma_port or fleet, not "
		     "'switch'");
	expect_error(HEAD
		     "    scope: netdev\n    expr: mtu > 0\n    severity: info\n    for: soon\n",
		     NULL, "t.yaml:8:10: error: for: 'soon' is not a duration (30s, 5m, 1h)");
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu > 0\n    severity: info\n    expr: mtu > 1\n",
	    NULL, "t.yaml:8:5: error: duplicate key 'expr' (first at line 6)");
	expect_error(HEAD "    scope: netdev\n    expr: mtu > 0\n    severity: info\n"
			  "  - name: r\n    scope: netdev\n    expr: mtu > 0\n    severity: info\n",
		     NULL, "t.yaml:8:11: error: duplicate rule name 'r' (first at line 4)");
	expect_error(HEAD "    scope: netdev\n    expr: [mtu]\n    severity: info\n", NULL,
		     "t.yaml:6:11: error: expr must be a single value (a string), not a list");
	expect_error("profile: t\nrule: []\n", NULL,
		     "t.yaml:2:1: error: unknown key 'rule' (keys: profile, description, params, "
		     "requires, applies_to, roles, rules)");
	expect_error("rules: []\n", NULL, "t.yaml:1:1: error: missing 'profile: NAME'");
	expect_error("profile: Big Name\nrules: []\n", NULL,
		     "t.yaml:1:10: error: profile name 'Big Name': use lower-case letters, digits, "
		     "'-', '_' and '.'");
	expect_error("profile: t\nrules: {a: 1}\n", NULL,
		     "t.yaml:2:8: error: rules must be a list (each item starts with '- name:')");
	expect_error("profile: t\nrequires: [switch]\nrules: []\n", NULL,
		     "t.yaml:2:12: error: requires: 'switch' is not node, netdev or rdma_port");
	expect_error("profile: t\nparams: {p: [1, 99]}\nrules: []\n", NULL,
		     "t.yaml:2:17: error: parameter 'p': set elements are integers 0-63");
}

static void err_params(void **state)
{
	struct rules_spec spec = { 0 };

	(void)state;
	assert_int_equal(rules_spec_add_param(&spec, "p=three"), 0);
	expect_error(
	    HEAD "    scope: netdev\n    expr: mtu > $p\n    severity: info\n", &spec,
	    "error: --param p=three: profile t.yaml declares p as number; expected a number");
	rules_spec_free(&spec);
	assert_int_equal(rules_spec_add_param(&spec, "nope=1"), 0);
	expect_error(HEAD "    scope: netdev\n    expr: mtu > $p\n    severity: info\n", &spec,
		     "error: --param nope: no loaded profile declares a parameter 'nope'");
	rules_spec_free(&spec);
	assert_int_equal(rules_spec_add_param(&spec, "=1"), -EINVAL);
	assert_int_equal(rules_spec_add_param(&spec, "novalue"), -EINVAL);
	rules_spec_free(&spec);
}

/*
 * What a recording keeps of a parameter (rules_profile_param_arg) reads back
 * through --param to the same value, and replay's recorded values are
 * optional and scoped to their profile: no error where not declared, a
 * warning (and the declared value) where the type no longer fits.
 */
static void params_recorded(void **state)
{
	static const char yaml[] =
	    "profile: t\nparams:\n  n: 0.1\n  big: 67108864\n  tiny: 1e-5\n  on: true\n"
	    "  s: text\n  set: [3, 4, 5, 9]\nrules:\n"
	    "  - name: r\n    scope: netdev\n    severity: info\n    doc: a rule for the test of "
	    "what a recording keeps of its parameters\n"
	    "    expr: mtu > $n && mtu > $big && mtu > $tiny && $on && $s == \"x\" && "
	    "pfc.enabled == $set\n";
	struct rules_engine *e = NULL, *e2 = NULL;
	struct rules_diags dg = { 0 };
	struct rules_spec spec = { 0 };
	char arg[256], want[6][256];
	const char *name, *value;

	(void)state;
	assert_int_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), NULL, &e, &dg), 0);
	assert_int_equal(rules_profile(e, 0)->n_params, 6);
	/* every value back through the loader, scoped to its profile, gives the same text */
	for (size_t i = 0; i < 6; i++) {
		rules_profile_param(e, 0, i, &name, &value);
		snprintf(want[i], sizeof(want[i]), "%s", value);
		rules_profile_param_arg(e, 0, i, arg, sizeof(arg));
		assert_int_equal(rules_spec_add_param_for(&spec, "t", name, arg), 0);
	}
	rules_profile_param_arg(e, 0, 0, arg, sizeof(arg));
	assert_string_equal(arg, "0.1");
	rules_profile_param_arg(e, 0, 1, arg, sizeof(arg));
	assert_string_equal(arg, "67108864");
	rules_profile_param_arg(e, 0, 5, arg, sizeof(arg));
	assert_string_equal(arg, "3,4,5,9");
	/* another profile's value, and one for a parameter nobody declares: no error */
	assert_int_equal(rules_spec_add_param_for(&spec, "other", "n", "7"), 0);
	assert_int_equal(rules_spec_add_param_for(&spec, NULL, "gone", "1"), 0);
	assert_int_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), &spec, &e2, &dg), 0);
	assert_int_equal(dg.n, 0);
	for (size_t i = 0; i < 6; i++) {
		rules_profile_param(e2, 0, i, &name, &value);
		assert_string_equal(value, want[i]);
	}
	assert_int_equal(rules_profile(e2, 0)->text_hash, rules_profile(e, 0)->text_hash);
	rules_free(e2);
	/* a value whose type no longer fits: a warning, the declared value kept */
	assert_int_equal(rules_spec_add_param_for(&spec, "t", "on", "maybe"), 0);
	assert_int_equal(rules_load_buffer("t.yaml", yaml, strlen(yaml), &spec, &e2, &dg), 0);
	assert_int_equal(dg.n, 1);
	assert_true(dg.d[0].warning);
	rules_profile_param(e2, 0, 3, &name, &value);
	assert_string_equal(value, "true");
	rules_free(e2);
	rules_diags_free(&dg);
	/* a different text is a different hash */
	{
		char other[sizeof(yaml) + 8];

		snprintf(other, sizeof(other), "%s\n", yaml);
		assert_int_equal(rules_load_buffer("t.yaml", other, strlen(other), NULL, &e2, &dg),
				 0);
		assert_int_not_equal(rules_profile(e2, 0)->text_hash,
				     rules_profile(e, 0)->text_hash);
		rules_free(e2);
	}
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	rules_free(e);
}

/* ---- evaluation ---- */

struct found {
	enum rule_outcome outcome;
	int64_t window_ns, observed_ns;
	char summary[RULE_SUMMARY_MAX];
	char reason[RULE_REASON_MAX];
};

static struct found result(struct rules_engine *e, const char *rule, const char *dev)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(res[i].rule->name, rule) && !strcmp(res[i].device, dev)) {
			struct found f = { .outcome = res[i].outcome,
					   .window_ns = res[i].window_ns,
					   .observed_ns = res[i].observed_ns };

			strcpy(f.summary, res[i].summary);
			strcpy(f.reason, res[i].reason);
			return f;
		}
	fail_msg("no result for %s on '%s'", rule, dev);
	return (struct found){ 0 };
}

#define RULE(name, scope, expr) \
	"  - name: " name "\n    scope: " scope "\n    severity: warning\n    expr: '" expr "'\n"

static void check_outcome(struct rules_engine *e, const char *rule, const char *dev,
			  enum rule_outcome want, const char *reason)
{
	struct found f = result(e, rule, dev);

	if (f.outcome != want || (reason && strcmp(f.reason, reason)))
		fail_msg("%s on '%s': %s (%s), want %s (%s)", rule, dev,
			 rule_outcome_name(f.outcome), f.reason, rule_outcome_name(want),
			 reason ? reason : "");
}

static void eval_outcomes(void **state)
{
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	build_model(&m);
	/* eth2: mtu 9000, PFC {3}; eth3: mtu 1500, PFC absent (EOPNOTSUPP); mlx5_0/1 on eth2 */
	e = load_ok(
	    "profile: t\nparams: {p: 3, big: 64KiB}\nrules:\n" RULE("mtu", "netdev", "mtu >= 4200")
		RULE(
		    "pfc", "netdev",
		    "pfc.enabled == {$p}") "  - name: guarded\n    scope: netdev\n    severity: "
					   "info\n"
					   "    when: mtu > 2000\n    expr: mtu == 9000\n" RULE(
					       "kleene_and", "netdev",
					       "mtu > 9000 && pfc.enabled == {3}") RULE("kleene_or",
											"netdev",
											"mtu < "
											"9000 || "
											"pfc."
											"enabled "
											"== {3}")
					       RULE("present", "netdev",
						    "!present(pfc.enabled) || "
						    "supported(pfc.enabled)") RULE("supported",
										   "netdev",
										   "supported(pfc."
										   "enabled)")
						   RULE("sets", "netdev",
							"{0..2, 5} == {0,1,2,5} && {3} <= {3,4} && "
							"!({3,4} <= {3}) && {3} < {3,4} &&"
							" {0..7} - {3} == {0,1,2,4..7} && ({1} | "
							"{2}) == {1,2} && ({1,2} & {2}) == {2} &&"
							" 3 in {3} && !(4 in {3}) && "
							"count({1,2,60}) == 3 && {} == {}")
						       RULE("arrays", "netdev",
							    "pfc.rx_pause[3] == 1234 && "
							    "pfc.rx_pause[$p] == 1234 && "
							    "max(pfc.rx_pause) == 1234"
							    " && sum(pfc.rx_pause) == 1234 && "
							    "count(pfc.rx_pause) == 1"
							    " && max(pfc.rx_pause[{0..2}]) == 0")
							   RULE(
							       "element", "netdev",
							       "pfc.rx_pause[0] == 0") RULE("dscp",
											    "netde"
											    "v",
											    "dscp2p"
											    "rio["
											    "26] "
											    "== 3 "
											    "&& "
											    "dscp2p"
											    "rio["
											    "48] "
											    "== 6 "
											    "&& "
											    "dscp2p"
											    "rio["
											    "27] "
											    "== -1")
							       RULE("hop", "rdma_port",
								    "netdev.mtu == 9000 && "
								    "node.memlock == 65536 && "
								    "netdev.rdma")
								   RULE(
								       "cset", "rdma_port",
								       "hw[\"out_of_sequence\"] == "
								       "12") RULE("cset_missing",
										  "rdma_port",
										  "hw[\"nope\"] == "
										  "0")
								       RULE("cset_empty", "netdev",
									    "cc[\"rp_ai_rate\"] == "
									    "5") RULE("coalesce",
										      "rdma_port",
										      "coalesce(hw["
										      "\"nope\"], "
										      "hw[\"out_of_"
										      "sequence\"])"
										      " == 12")
									   RULE("math", "node",
										"ib_mtu_for(1500) "
										"== 1024 && "
										"ib_mtu_for(2200) "
										"== 2048 && "
										"ib_mtu_for(4191) "
										"== 2048"
										" && "
										"ib_mtu_for(4192) "
										"== 4096 && "
										"ib_mtu_for(9000) "
										"== 4096 && "
										"ib_mtu_for(351) "
										"== 0"
										" && "
										"ib_mtu_for(352) "
										"== 256 && "
										"tos_dscp(106) == "
										"26 && abs(-2) == 2"
										" && min(3, 1, 2) "
										"== 1 && max(3, 1, "
										"2) == 3 && 7 % 4 "
										"== 3 && 1 / 4 == "
										"0.25"
										" && -(2 - 5) == 3 "
										"&& $big == 65536")
									       RULE("divzero",
										    "node",
										    "1 / (memlock "
										    "- 65536) > 0")
										   RULE(
										       "gids",
										       "rdma_port",
										       "gid_count("
										       "gids, "
										       "\"RoCE "
										       "v2\", "
										       "\"ipv4\") "
										       "== 1 && "
										       "gid_count("
										       "gids, "
										       "\"any\", "
										       "\"any\") "
										       "== 2"
										       " && "
										       "gid_count("
										       "gids, "
										       "\"RoCE "
										       "v1\", "
										       "\"link-"
										       "local\") "
										       "== 1"
										       " && "
										       "gid_count("
										       "gids, "
										       "\"RoCE "
										       "v2\", "
										       "\"ipv4\", "
										       "\"eth9\") "
										       "== 0 && "
										       "count(gids)"
										       " == 2")
										       RULE(
											   "string"
											   "s",
											   "rdma_"
											   "port",
											   "state "
											   "== "
											   "\"ACTIV"
											   "E\" && "
											   "state "
											   "!= "
											   "\"DOWN"
											   "\""));
	assert_int_equal(rules_evaluate(e, &m, 1000000000), 0);
	check_outcome(e, "mtu", "eth2", RULE_PASS, "");
	check_outcome(e, "mtu", "eth3", RULE_FAIL, "");
	check_outcome(e, "pfc", "eth2", RULE_PASS, "");
	check_outcome(e, "pfc", "eth3", RULE_UNKNOWN, "pfc.enabled absent: unsupported");
	check_outcome(e, "guarded", "eth2", RULE_PASS, "");
	check_outcome(e, "guarded", "eth3", RULE_SKIP, "guard false: mtu > 2000");
	/* false && unknown is false; true || unknown is true */
	check_outcome(e, "kleene_and", "eth3", RULE_FAIL, "");
	check_outcome(e, "kleene_or", "eth3", RULE_PASS, "");
	check_outcome(e, "kleene_and", "eth2", RULE_FAIL, "");
	check_outcome(e, "present", "eth3", RULE_PASS, "");
	check_outcome(e, "supported", "eth3", RULE_FAIL, "");
	check_outcome(e, "sets", "eth2", RULE_PASS, "");
	check_outcome(e, "arrays", "eth2", RULE_PASS, "");
	/* mlx5 has pause counters only where PFC is on: the element is absent, not 0 */
	check_outcome(e, "element", "eth2", RULE_UNKNOWN, "pfc.rx_pause[0] absent: unsupported");
	check_outcome(e, "element", "eth3", RULE_UNKNOWN, "pfc.rx_pause absent: not_collected");
	check_outcome(e, "dscp", "eth2", RULE_PASS, "");
	check_outcome(e, "hop", "mlx5_0", RULE_PASS, "");
	check_outcome(e, "cset", "mlx5_0", RULE_PASS, "");
	check_outcome(e, "cset_missing", "mlx5_0", RULE_UNKNOWN,
		      "hw[\"nope\"] absent: unsupported");
	check_outcome(e, "cset_empty", "eth2", RULE_UNKNOWN,
		      "cc[\"rp_ai_rate\"] absent: not_collected");
	check_outcome(e, "coalesce", "mlx5_0", RULE_PASS, "");
	check_outcome(e, "math", "", RULE_PASS, "");
	check_outcome(e, "divzero", "", RULE_UNKNOWN, "1 / (memlock - 65536): division by zero");
	check_outcome(e, "gids", "mlx5_0", RULE_PASS, "");
	check_outcome(e, "strings", "mlx5_0", RULE_PASS, "");
	rules_free(e);

	/* a port bound to no netdev */
	m.ports[0]->netdev = NULL;
	e = load_ok("profile: t\nrules:\n" RULE("hop", "rdma_port", "netdev.mtu == 9000"));
	assert_int_equal(rules_evaluate(e, &m, 1), 0);
	check_outcome(e, "hop", "mlx5_0", RULE_UNKNOWN,
		      "netdev.mtu absent: the port is bound to no netdev");
	rules_free(e);
	model_free(&m);
}

static void eval_summary_and_status(void **state)
{
	struct node_model m;
	struct rules_engine *e;
	struct found f;

	(void)state;
	build_model(&m);
	e = load_ok("profile: t\nparams: {p: 3}\nrules:\n"
		    "  - name: pfc\n    scope: netdev\n    severity: critical\n"
		    "    expr: pfc.enabled == {$p}\n"
		    "    summary: \"PFC on {pfc.enabled}, want {{$p}}; {\\\"{\\\"} mtu={mtu} "
		    "pause={pfc.rx_pause} map26={dscp2prio[26]} ok={mtu > 1} s={trust}\"\n"
		    "  - name: info_fail\n    scope: node\n    severity: info\n    expr: false\n");
	assert_int_equal(rules_evaluate(e, &m, 5), 0);
	f = result(e, "pfc", "eth2");
	assert_string_equal(f.summary,
			    "PFC on {3}, want {3}; { mtu=9000 pause=[-,-,-,1234,-,-,-,-] "
			    "map26=3 ok=true s=absent (not_collected)");
	f = result(e, "pfc", "eth3");
	assert_int_equal(f.outcome, RULE_UNKNOWN);
	assert_string_equal(f.summary, "PFC on absent (unsupported), want {3}; { mtu=1500 "
				       "pause=absent (not_collected) map26=absent (not_collected) "
				       "ok=true s=absent (not_collected)");
	/* a critical rule unknown, an info rule failing: UNKNOWN */
	assert_int_equal(rules_status(e), RULES_UNKNOWN);
	field_set_set(m.netdevs[1], F_NETDEV_PFC_ENABLED, 1u << 0);
	assert_int_equal(rules_evaluate(e, &m, 6), 0);
	assert_int_equal(rules_status(e), RULES_CRITICAL);
	field_set_set(m.netdevs[1], F_NETDEV_PFC_ENABLED, 1u << 3);
	assert_int_equal(rules_evaluate(e, &m, 7), 0);
	assert_int_equal(rules_status(e), RULES_OK);
	rules_free(e);
	model_free(&m);
}

/* A dcb fact as a rule sees it: the TC max rates, in dcbnl's kbit/s, 0 for "no limit". */
static void eval_tc_maxrate(void **state)
{
	struct node_model m;
	struct rules_engine *e;
	struct found f;

	(void)state;
	build_model(&m);
	e = load_ok(
	    "profile: t\nparams: {tc: 3}\nrules:\n"
	    "  - name: roce_tc_unlimited\n    scope: netdev\n    severity: warning\n"
	    "    expr: ets.tc_maxrate_kbps[$tc] == 0\n"
	    "    summary: \"TC {$tc} capped at {ets.tc_maxrate_kbps[$tc]} kbit/s\"\n" RULE(
		"others_unlimited", "netdev", "max(ets.tc_maxrate_kbps[{0..2, 4..7}]) == 0"));
	assert_int_equal(rules_evaluate(e, &m, 1), 0);
	f = result(e, "roce_tc_unlimited", "eth2");
	assert_int_equal(f.outcome, RULE_FAIL);
	assert_string_equal(f.summary, "TC 3 capped at 25000000 kbit/s");
	assert_int_equal(result(e, "others_unlimited", "eth2").outcome, RULE_PASS);
	/* eth3 has no max rates (a driver without ieee_getmaxrate): unknown, never a pass */
	assert_int_equal(result(e, "roce_tc_unlimited", "eth3").outcome, RULE_UNKNOWN);
	field_set_prio(model_netdev(&m, "eth2"), F_NETDEV_ETS_TC_MAXRATE, 3, 0);
	assert_int_equal(rules_evaluate(e, &m, 2), 0);
	assert_int_equal(result(e, "roce_tc_unlimited", "eth2").outcome, RULE_PASS);
	rules_free(e);
	model_free(&m);
}

/* applies_to: a profile keeps off the objects it is not about, and says why */
static void applies_to(void **state)
{
	static const char prof[] = "profile: t\nrequires: [rdma_port]\n"
				   "applies_to:\n  rdma_port: link_layer == \"Ethernet\"\n"
				   "rules:\n"
				   "  - name: up\n    scope: rdma_port\n    severity: critical\n"
				   "    expr: state == \"ACTIVE\"\n";
	struct node_model m;
	struct rules_engine *e;
	struct found f;

	(void)state;
	build_model(&m);
	e = load_ok(prof);
	/* link_layer unknown: the rule decides what it can */
	assert_int_equal(rules_evaluate(e, &m, 1), 0);
	assert_int_equal(result(e, "up", "mlx5_0").outcome, RULE_PASS);
	field_set_str(m.ports[0], F_PORT_LINK_LAYER, "InfiniBand");
	assert_int_equal(rules_evaluate(e, &m, 2), 0);
	f = result(e, "up", "mlx5_0");
	assert_int_equal(f.outcome, RULE_SKIP);
	assert_string_equal(f.reason, "outside the profile: it applies to rdma_port where "
				      "link_layer == \"Ethernet\" (here link_layer=InfiniBand)");
	/* the only port is not one the profile is about: its requirement is not met */
	assert_int_equal(rules_status(e), RULES_UNKNOWN);
	field_set_str(m.ports[0], F_PORT_LINK_LAYER, "Ethernet");
	assert_int_equal(rules_evaluate(e, &m, 3), 0);
	assert_int_equal(rules_status(e), RULES_OK);
	rules_free(e);
	expect_error("profile: t\napplies_to:\n  rdma_port: increase(hw[\"x\"], 5m) > 0\n"
		     "rules: []\n",
		     NULL,
		     "t.yaml:3:14: error: applies_to: fields, parameters and constants only (no "
		     "counter sets, no rate/increase/delta)");
	expect_error("profile: t\napplies_to:\n  nic: mtu > 0\nrules: []\n", NULL,
		     "t.yaml:3:3: error: applies_to: 'nic' is not netdev or rdma_port");
	model_free(&m);
}

/*
 * One profile's applies_to is asked once a pass for each object and its
 * answer given to every rule of the profile: each object gets its own, and
 * the next pass asks again.
 */
static void applies_to_shared(void **state)
{
	static const char prof[] =
	    "profile: t\n"
	    "applies_to:\n  netdev: mtu >= 4200\n"
	    "rules:\n" RULE("a", "netdev", "mtu > 0") RULE("b", "netdev", "mtu > 9000");
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	build_model(&m); /* eth2 at 9000, eth3 at 1500 */
	e = load_ok(prof);
	assert_int_equal(rules_evaluate(e, &m, 1), 0);
	assert_int_equal(result(e, "a", "eth2").outcome, RULE_PASS);
	assert_int_equal(result(e, "b", "eth2").outcome, RULE_FAIL);
	assert_int_equal(result(e, "a", "eth3").outcome, RULE_SKIP);
	assert_int_equal(result(e, "b", "eth3").outcome, RULE_SKIP);
	assert_string_equal(result(e, "b", "eth3").reason,
			    "outside the profile: it applies to netdev where mtu >= 4200 (here "
			    "mtu=1500)");
	field_set_int(model_netdev(&m, "eth2"), F_NETDEV_MTU, 1500);
	field_set_int(model_netdev(&m, "eth3"), F_NETDEV_MTU, 9216);
	assert_int_equal(rules_evaluate(e, &m, 2), 0);
	assert_int_equal(result(e, "a", "eth2").outcome, RULE_SKIP);
	assert_int_equal(result(e, "b", "eth2").outcome, RULE_SKIP);
	assert_int_equal(result(e, "a", "eth3").outcome, RULE_PASS);
	assert_int_equal(result(e, "b", "eth3").outcome, RULE_PASS);
	rules_free(e);
	model_free(&m);
}

/* if(): a summary prints the branch taken (types may differ there, not in an expr) */
static void eval_if(void **state)
{
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	build_model(&m);
	e = load_ok("profile: t\nrules:\n"
		    "  - name: ml\n    scope: node\n    severity: critical\n"
		    "    expr: memlock_unlimited || if(memlock > 0, memlock >= 65536, false)\n"
		    "    summary: \"RLIMIT_MEMLOCK (bytes): "
		    "{if(memlock_unlimited, \\\"unlimited\\\", memlock)}\"\n");
	assert_int_equal(rules_evaluate(e, &m, 1), 0);
	assert_string_equal(result(e, "ml", "").summary, "RLIMIT_MEMLOCK (bytes): 65536");
	assert_int_equal(result(e, "ml", "").outcome, RULE_PASS);
	field_set_bool(&m.node, F_NODE_MEMLOCK_UNLIMITED, true);
	field_absent(&m.node, F_NODE_MEMLOCK, ABS_UNSUPPORTED, 0);
	assert_int_equal(rules_evaluate(e, &m, 2), 0);
	assert_string_equal(result(e, "ml", "").summary, "RLIMIT_MEMLOCK (bytes): unlimited");
	rules_free(e);
	expect_error(
	    HEAD "    scope: node\n    expr: if(true, 1, \"x\") == 1\n    severity: info\n", NULL,
	    "t.yaml:6:23: error: expr: if(): argument 3 is string, argument 2 is number "
	    "(only a summary may mix them)");
	model_free(&m);
}

/* Feed one counter through a sequence of samples; return the last result's summary. */
static void counter_seq(struct rules_engine *e, struct node_model *m, const uint64_t *v,
			const int64_t *t_s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cset_set(&m->ports[0]->cs[CSET_HW], "out_of_sequence", v[i]);
		assert_int_equal(rules_evaluate(e, m, t_s[i] * 1000000000LL), 0);
	}
}

static const char counter_rules[] =
    "profile: t\nrules:\n"
    "  - name: inc\n    scope: rdma_port\n    severity: warning\n"
    "    expr: increase(hw[\"out_of_sequence\"], 5m) == 0\n"
    "    summary: \"inc={increase(hw[\\\"out_of_sequence\\\"], 5m)} "
    "rate={rate(hw[\\\"out_of_sequence\\\"], 5m)} delta={delta(hw[\\\"out_of_sequence\\\"], "
    "5m)}\"\n";

/*
 * A summary that shows its expr's own call takes the value the expr computed;
 * where the expr short-circuits past the call (the port down), the summary
 * evaluates it itself, on the same history: every poll shows the increase
 * over the samples of every poll, whichever side sampled it.
 */
static void summary_shares_the_exprs_call(void **state)
{
	static const uint64_t v[] = { 10, 12, 15, 15, 20, 21 };
	static const char *const st[] = { "ACTIVE", "DOWN", "ACTIVE", "DOWN", "DOWN", "ACTIVE" };
	static const char *const want[] = { "", "inc=2", "inc=5", "inc=5", "inc=10", "inc=11" };
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	build_model(&m);
	e = load_ok("profile: t\nrules:\n"
		    "  - name: inc\n    scope: rdma_port\n    severity: warning\n"
		    "    expr: state != \"ACTIVE\" || increase(hw[\"out_of_sequence\"], 5m) == 0\n"
		    "    summary: \"inc={increase(hw[\\\"out_of_sequence\\\"], 5m)}\"\n");
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct found f;

		field_set_str(m.ports[0], F_PORT_STATE, st[i]);
		cset_set(&m.ports[0]->cs[CSET_HW], "out_of_sequence", v[i]);
		assert_int_equal(rules_evaluate(e, &m, (int64_t)i * 10 * 1000000000LL), 0);
		f = result(e, "inc", "mlx5_0");
		if (i)
			assert_true(!strncmp(f.summary, want[i], strlen(want[i])) &&
				    f.summary[strlen(want[i])] == ' ');
		assert_int_equal(f.outcome, i == 0 ? RULE_UNKNOWN /* one sample */
					    : !strcmp(st[i], "ACTIVE") ? RULE_FAIL
								       : RULE_PASS);
	}
	rules_free(e);
	model_free(&m);
}

static void counter_reset_and_wrap(void **state)
{
	static const uint64_t reset[] = { 100, 150, 5, 20 };
	static const uint64_t only_reset[] = { 500, 500, 0, 0 };
	static const uint64_t wrap[] = { 4294967290ULL, 10 };
	static const int64_t t[] = { 0, 10, 20, 30 };
	struct node_model m;
	struct rules_engine *e;
	struct found f;

	(void)state;
	build_model(&m);
	e = load_ok(counter_rules);
	assert_true(rules_need_history(e));
	counter_seq(e, &m, reset, t, 1);
	f = result(e, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_UNKNOWN);
	assert_string_equal(f.reason,
			    "increase(hw[\"out_of_sequence\"], 5m): needs two samples, have 1");
	/* 100 -> 150 (+50) -> reset, rebaselined at 5 (+0) -> 20 (+15) */
	counter_seq(e, &m, reset + 1, t + 1, 3);
	f = result(e, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_FAIL);
	assert_string_equal(f.summary,
			    "inc=65 rate=2.167 delta=-80 (counter reset 150 -> 5 in the window: "
			    "rebaselined, not counted) (only 30s of the 5m window observed)");
	assert_int_equal(f.window_ns, 300000000000LL);
	assert_int_equal(f.observed_ns, 30000000000LL);
	rules_free(e);

	/* a reset alone is no event */
	e = load_ok(counter_rules);
	counter_seq(e, &m, only_reset, t, 4);
	f = result(e, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_PASS);
	assert_string_equal(f.summary,
			    "inc=0 rate=0 delta=-500 (counter reset 500 -> 0 in the window: "
			    "rebaselined, not counted) (only 30s of the 5m window observed)");
	rules_free(e);

	/*
	 * Issue 42: a decrease that is not to 0 is a reset too, never events.
	 * link_downed 1000 -> 999 was "999 link down events", fatal, drain-node.
	 */
	{
		static const uint64_t down_one[] = { 1000, 999, 999, 1001 };

		e = load_ok(counter_rules);
		counter_seq(e, &m, down_one, t, 3);
		f = result(e, "inc", "mlx5_0");
		assert_int_equal(f.outcome, RULE_PASS);
		assert_true(!strncmp(f.summary, "inc=0 ", 6));
		assert_non_null(strstr(f.summary, "counter reset 1000 -> 999 in the window"));
		/* counting goes on from the new baseline: 999 -> 1001 is 2 */
		counter_seq(e, &m, down_one + 3, t + 3, 1);
		f = result(e, "inc", "mlx5_0");
		assert_int_equal(f.outcome, RULE_FAIL);
		assert_true(!strncmp(f.summary, "inc=2 ", 6));
		rules_free(e);
	}

	/* a 32-bit wrap is a reset too: rebaselined, what it counted across the wrap is lost */
	e = load_ok(counter_rules);
	counter_seq(e, &m, wrap, t, 2);
	f = result(e, "inc", "mlx5_0");
	assert_string_equal(f.summary,
			    "inc=0 rate=0 delta=-4294967280 (counter reset 4294967290 -> "
			    "10 in the window: rebaselined, not counted) (only 10s of "
			    "the 5m window observed)");

	/* time going backwards (a replay restarting) starts the history over */
	counter_seq(e, &m, wrap, t, 1);
	f = result(e, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_UNKNOWN);
	rules_free(e);
	model_free(&m);
}

/* Issue 41 item 8: "(s)" is the plural of the number before it: "1 link down event". */
static void summary_plurals(void **state)
{
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	build_model(&m);
	e = load_ok("profile: t\nrules:\n"
		    "  - name: n\n    scope: node\n    severity: warning\n"
		    "    expr: \"true\"\n"
		    "    summary: \"{1 * 1} event(s), {2 * 1} event(s), {0 * 1} flap(s), "
		    "{0.5 * 2} GPU(s) and NIC(s), {\\\"a\\\"} (s)\"\n");
	assert_int_equal(rules_evaluate(e, &m, 0), 0);
	assert_string_equal(result(e, "n", "").summary,
			    "1 event, 2 events, 0 flaps, 1 GPU and NIC, a s");
	rules_free(e);
	model_free(&m);
}

/* Issue 41 item 8: one number format in every summary, no scientific notation for rates. */
static void summary_rates(void **state)
{
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	build_model(&m);
	e = load_ok("profile: t\nrules:\n"
		    "  - name: n\n    scope: node\n    severity: warning\n"
		    "    expr: \"true\"\n"
		    "    summary: \"{10416.67 * 1} {2.33333 * 1} {0.000000001 * 1} {-12345.5 * 1} "
		    "{12 * 1}\"\n");
	assert_int_equal(rules_evaluate(e, &m, 0), 0);
	assert_string_equal(result(e, "n", "").summary, "10417 2.333 1e-09 -12346 12");
	rules_free(e);
	model_free(&m);
}

/*
 * Issue 41: one precedence, CRITICAL > UNKNOWN > WARNING > OK, as a table over a
 * critical and a warning rule that each pass, fail or are unknown.
 */
static void status_precedence(void **state)
{
	enum {
		P,
		F,
		U
	};
	static const struct {
		int crit, warn;
		enum rules_status want;
	} table[] = {
		{ P, P, RULES_OK },	  { P, F, RULES_WARNING },  { P, U, RULES_UNKNOWN },
		{ F, P, RULES_CRITICAL }, { F, F, RULES_CRITICAL }, { F, U, RULES_CRITICAL },
		{ U, P, RULES_UNKNOWN },  { U, F, RULES_UNKNOWN },  { U, U, RULES_UNKNOWN },
	};
	static const enum rules_status all[] = { RULES_OK, RULES_WARNING, RULES_CRITICAL,
						 RULES_UNKNOWN };
	static const int rank[] = { 0, 1, 3, 2 };
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	/* the pairwise function: commutative, the higher rank wins */
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++) {
			enum rules_status w = rules_status_worse(all[a], all[b]);

			assert_int_equal(w, rules_status_worse(all[b], all[a]));
			assert_int_equal(w, rank[all[a]] >= rank[all[b]] ? all[a] : all[b]);
		}
	build_model(&m);
	e = load_ok("profile: t\nrules:\n"
		    "  - name: c\n    scope: node\n    severity: critical\n"
		    "    expr: memlock < 100\n"
		    "  - name: w\n    scope: node\n    severity: warning\n"
		    "    expr: kernel == \"ok\"\n");
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (table[i].crit == U)
			field_absent(&m.node, F_NODE_MEMLOCK, ABS_PERMISSION, EACCES);
		else
			field_set_int(&m.node, F_NODE_MEMLOCK, table[i].crit == P ? 50 : 500);
		if (table[i].warn == U)
			field_absent(&m.node, F_NODE_KERNEL, ABS_PERMISSION, EACCES);
		else
			field_set_str(&m.node, F_NODE_KERNEL, table[i].warn == P ? "ok" : "bad");
		assert_int_equal(rules_evaluate(e, &m, (int64_t)(i + 1) * 1000000000LL), 0);
		if (rules_status(e) != table[i].want)
			fail_msg("row %zu: %s, want %s", i, rules_status_name(rules_status(e)),
				 rules_status_name(table[i].want));
	}
	rules_free(e);
	model_free(&m);
}

/* Issue 42: the RDMA ports of the model are replaced by one (name, GUID) with counter v. */
static void port_now(struct node_model *m, const char *name, const char *guid, uint64_t v)
{
	struct object *p;

	model_begin(m, OBJ_RDMA_PORT);
	model_sweep(m, OBJ_RDMA_PORT);
	if (!name)
		return; /* gone */
	p = model_add_port(m, name, 1);
	assert_non_null(p);
	field_set_str(p, F_PORT_STATE, "ACTIVE");
	field_set_str(p, F_PORT_NETDEV, "eth2");
	field_set_str(p, F_PORT_NODE_GUID, guid);
	cset_set(&p->cs[CSET_HW], "out_of_sequence", v);
	model_link_ports(m);
}

/*
 * Issue 42: a device that misses a config poll keeps its counter history,
 * keyed by node GUID, for history_grace_minutes: 4 -> gone -> 5 is 1 event.
 */
static void history_follows_the_device(void **state)
{
	static const char guid_a[] = "0c42:a103:0001:0002", guid_b[] = "0c42:a103:00ff:0002";
	struct node_model m;
	struct rules_engine *e;
	struct found f;

	(void)state;
	build_model(&m);
	e = load_ok(counter_rules);
	port_now(&m, "mlx5_0", guid_a, 4);
	assert_int_equal(rules_evaluate(e, &m, 0), 0);
	assert_int_equal(rules_evaluate(e, &m, 10 * 1000000000LL), 0);
	port_now(&m, NULL, NULL, 0); /* a config poll without it */
	assert_int_equal(rules_evaluate(e, &m, 20 * 1000000000LL), 0);
	port_now(&m, "mlx5_0", guid_a, 5); /* back: one event meanwhile */
	assert_int_equal(rules_evaluate(e, &m, 30 * 1000000000LL), 0);
	f = result(e, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_FAIL);
	assert_true(!strncmp(f.summary, "inc=1 ", 6));

	/* renamed by a reload (mlx5_0 is now mlx5_2), the same GUID: the same history */
	port_now(&m, NULL, NULL, 0);
	assert_int_equal(rules_evaluate(e, &m, 40 * 1000000000LL), 0);
	port_now(&m, "mlx5_2", guid_a, 7);
	assert_int_equal(rules_evaluate(e, &m, 50 * 1000000000LL), 0);
	f = result(e, "inc", "mlx5_2");
	assert_true(!strncmp(f.summary, "inc=3 ", 6));

	/* a driver reload that brings it back reset: no event from the reset */
	port_now(&m, NULL, NULL, 0);
	assert_int_equal(rules_evaluate(e, &m, 60 * 1000000000LL), 0);
	port_now(&m, "mlx5_2", guid_a, 0);
	assert_int_equal(rules_evaluate(e, &m, 70 * 1000000000LL), 0);
	f = result(e, "inc", "mlx5_2");
	assert_true(!strncmp(f.summary, "inc=3 ", 6));
	assert_non_null(strstr(f.summary, "counter reset 7 -> 0"));

	/* another device under the old name (a new GUID): fresh, nothing of the old one's */
	port_now(&m, NULL, NULL, 0);
	assert_int_equal(rules_evaluate(e, &m, 80 * 1000000000LL), 0);
	port_now(&m, "mlx5_2", guid_b, 1000);
	assert_int_equal(rules_evaluate(e, &m, 90 * 1000000000LL), 0);
	f = result(e, "inc", "mlx5_2");
	assert_int_equal(f.outcome, RULE_UNKNOWN);
	assert_string_equal(f.reason,
			    "increase(hw[\"out_of_sequence\"], 5m): needs two samples, have 1");
	/* ... and replacing the GUID in place (no poll without it) is fresh too */
	port_now(&m, "mlx5_2", guid_a, 1000);
	assert_int_equal(rules_evaluate(e, &m, 100 * 1000000000LL), 0);
	assert_int_equal(result(e, "inc", "mlx5_2").outcome, RULE_UNKNOWN);

	/* gone longer than the grace period (5 min by default): fresh */
	port_now(&m, NULL, NULL, 0);
	assert_int_equal(rules_evaluate(e, &m, 110 * 1000000000LL), 0);
	assert_int_equal(rules_evaluate(e, &m, 411 * 1000000000LL), 0);
	port_now(&m, "mlx5_2", guid_a, 1001);
	assert_int_equal(rules_evaluate(e, &m, 412 * 1000000000LL), 0);
	assert_int_equal(result(e, "inc", "mlx5_2").outcome, RULE_UNKNOWN);
	rules_free(e);

	/* history_grace_minutes: 0 forgets at once; a reload of the rules keeps what is parked */
	{
		char y[sizeof(counter_rules) + 64];
		struct rules_engine *e2;

		snprintf(y, sizeof(y), "profile: t\nparams:\n  history_grace_minutes: 0\n%s",
			 counter_rules + strlen("profile: t\n"));
		e = load_ok(y);
		port_now(&m, "mlx5_0", guid_a, 4);
		assert_int_equal(rules_evaluate(e, &m, 0), 0);
		port_now(&m, NULL, NULL, 0);
		assert_int_equal(rules_evaluate(e, &m, 10 * 1000000000LL), 0);
		port_now(&m, "mlx5_0", guid_a, 5);
		assert_int_equal(rules_evaluate(e, &m, 20 * 1000000000LL), 0);
		assert_int_equal(result(e, "inc", "mlx5_0").outcome, RULE_UNKNOWN);
		rules_free(e);

		e = load_ok(counter_rules);
		port_now(&m, "mlx5_0", guid_a, 4);
		assert_int_equal(rules_evaluate(e, &m, 0), 0);
		port_now(&m, NULL, NULL, 0);
		assert_int_equal(rules_evaluate(e, &m, 10 * 1000000000LL), 0);
		e2 = load_ok(counter_rules);
		rules_adopt_history(e2, e);
		rules_free(e);
		port_now(&m, "mlx5_0", guid_a, 6);
		assert_int_equal(rules_evaluate(e2, &m, 20 * 1000000000LL), 0);
		assert_true(!strncmp(result(e2, "inc", "mlx5_0").summary, "inc=2 ", 6));
		rules_free(e2);
	}
	model_free(&m);
}

/* IB port counters saturate: stuck at 2^32-1, increase() is unknown, never 0. */
static void counter_saturated(void **state)
{
	static const uint64_t stuck[] = { 4294967295ULL, 4294967295ULL, 4294967295ULL };
	static const uint64_t reaches[] = { 4294967000ULL, 4294967295ULL, 17 };
	static const int64_t t[] = { 0, 10, 20 };
	struct node_model m;
	struct rules_engine *e;
	struct found f;

	(void)state;
	build_model(&m);
	e = load_ok(counter_rules);
	counter_seq(e, &m, stuck, t, 3);
	f = result(e, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_UNKNOWN);
	assert_string_equal(f.reason, "increase(hw[\"out_of_sequence\"], 5m): counter stuck at "
				      "2^32-1 (saturated), what it counted is unknown");
	rules_free(e);
	/* reaching it is unknown too; after a reset (a clear) it is known and counts again */
	e = load_ok(counter_rules);
	counter_seq(e, &m, reaches, t, 2);
	assert_int_equal(result(e, "inc", "mlx5_0").outcome, RULE_UNKNOWN);
	counter_seq(e, &m, reaches + 2, t + 2, 1);
	f = result(e, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_FAIL); /* the 295 before saturating */
	assert_true(!strncmp(f.summary, "inc=295 ", 8));
	{
		static const uint64_t more[] = { 30 };
		static const int64_t t30[] = { 30 };

		counter_seq(e, &m, more, t30, 1);
		f = result(e, "inc", "mlx5_0");
		assert_true(!strncmp(f.summary, "inc=308 ", 8));
	}
	rules_free(e);
	model_free(&m);
}

static void counter_window(void **state)
{
	struct node_model m;
	struct rules_engine *e;
	struct found f;
	uint64_t v = 0;

	(void)state;
	build_model(&m);
	e = load_ok("profile: t\nrules:\n"
		    "  - name: inc\n    scope: rdma_port\n    severity: warning\n"
		    "    expr: increase(hw[\"out_of_sequence\"], 1m) == 0\n"
		    "    summary: \"{increase(hw[\\\"out_of_sequence\\\"], 1m)}\"\n");
	/* one event at t=10 s, samples every 10 s */
	for (int64_t t = 0; t <= 180; t += 10) {
		if (t == 10)
			v += 4;
		cset_set(&m.ports[0]->cs[CSET_HW], "out_of_sequence", v);
		assert_int_equal(rules_evaluate(e, &m, t * 1000000000LL), 0);
		f = result(e, "inc", "mlx5_0");
		/* counted while the window [t-60 s, t] reaches back to a sample before the event */
		if (t >= 10 && t < 60)
			assert_true(!strncmp(f.summary, "4 (only ", 8));
		else if (t == 60)
			assert_string_equal(f.summary, "4 (over the last 1m)");
		else if (t > 60)
			assert_string_equal(f.summary, "0 (over the last 1m)");
	}
	rules_free(e);

	/*
	 * Issue 41: a 1 m window at 100 ms and 200 ms polls is whole once a minute of polls
	 * was seen (counted: 600 and 300 polls), and stays whole; the thinning kept two
	 * samples per spacing and it read "only 50s of the 1m window observed" for ever.
	 */
	for (int64_t step_ms = 100; step_ms <= 200; step_ms += 100) {
		e = load_ok("profile: t\nrules:\n"
			    "  - name: inc\n    scope: rdma_port\n    severity: warning\n"
			    "    expr: increase(hw[\"out_of_sequence\"], 1m) == 0\n"
			    "    summary: \"{increase(hw[\\\"out_of_sequence\\\"], 1m)}\"\n");
		v = 0;
		for (int64_t i = 0; i <= 3 * 60000 / step_ms; i++) {
			if (i == 60000 / step_ms + 10)
				v += 1; /* one event, a little after the first minute */
			cset_set(&m.ports[0]->cs[CSET_HW], "out_of_sequence", v);
			assert_int_equal(rules_evaluate(e, &m, i * step_ms * 1000000LL), 0);
			f = result(e, "inc", "mlx5_0");
			if (i < 60000 / step_ms)
				assert_non_null(strstr(f.summary, "of the 1m window observed)"));
			else if (!strstr(f.summary, "(over the last 1m)"))
				fail_msg("%lld ms polls, poll %lld: '%s'", (long long)step_ms,
					 (long long)i, f.summary);
			/* the event is counted for a minute, then leaves the window */
			if (i > 60000 / step_ms + 10 && i < 2 * 60000 / step_ms)
				assert_true(!strncmp(f.summary, "1 ", 2));
		}
		rules_free(e);
	}

	/* 10 polls a second for 10 minutes: the ring thins samples but still spans 5 m */
	e = load_ok(counter_rules);
	v = 0;
	for (int64_t ms = 0; ms <= 600000; ms += 100) {
		cset_set(&m.ports[0]->cs[CSET_HW], "out_of_sequence", v++);
		assert_int_equal(rules_evaluate(e, &m, ms * 1000000LL), 0);
	}
	{
		const struct rule_result *res;
		size_t n = rules_results(e, &res);
		double inc = -1, rate = -1;

		for (size_t i = 0; i < n; i++)
			if (!strcmp(res[i].rule->name, "inc"))
				assert_int_equal(
				    sscanf(res[i].summary, "inc=%lf rate=%lf", &inc, &rate), 2);
		/* 3000 increments in 5 m, plus at most one thinning step (5 m / 120 = 2.5 s) */
		assert_true(inc >= 3000 && inc <= 3025);
		assert_true(rate > 9.9 && rate < 10.1);
	}
	rules_free(e);
	model_free(&m);
}

static void counter_arrays(void **state)
{
	struct node_model m;
	struct rules_engine *e;
	struct found f;

	(void)state;
	build_model(&m);
	e = load_ok("profile: t\nrules:\n"
		    "  - name: np\n    scope: netdev\n    severity: warning\n"
		    "    expr: max(increase(pfc.indications, 5m)[{0..7} - pfc.enabled]) == 0\n"
		    "    summary: \"{increase(pfc.indications, 5m)}\"\n");
	for (int p = 0; p < 8; p++)
		field_set_prio(m.netdevs[0], F_NETDEV_PFC_INDICATIONS, p, 100);
	assert_int_equal(rules_evaluate(e, &m, 0), 0);
	/* priority 3 (PFC on) moves, priority 5 resets to 2 (no event), priority 0 moves by 7 */
	field_set_prio(m.netdevs[0], F_NETDEV_PFC_INDICATIONS, 3, 900);
	field_set_prio(m.netdevs[0], F_NETDEV_PFC_INDICATIONS, 5, 2);
	assert_int_equal(rules_evaluate(e, &m, 1000000000), 0);
	f = result(e, "np", "eth2");
	assert_int_equal(f.outcome, RULE_PASS);
	assert_string_equal(f.summary,
			    "[0,0,0,800,0,0,0,0] (counter reset 100 -> 2 in the window: "
			    "rebaselined, not counted) (only 1s of the 5m window observed)");
	field_set_prio(m.netdevs[0], F_NETDEV_PFC_INDICATIONS, 5, 4);
	field_set_prio(m.netdevs[0], F_NETDEV_PFC_INDICATIONS, 0, 107);
	assert_int_equal(rules_evaluate(e, &m, 2000000000), 0);
	f = result(e, "np", "eth2");
	assert_int_equal(f.outcome, RULE_FAIL);
	assert_true(!strncmp(f.summary, "[7,0,0,800,0,2,0,0] (counter reset", 34));
	rules_free(e);
	model_free(&m);
}

/* Steady state: no allocation per evaluation; objects appearing re-lay the results. */
/*
 * Settled and frozen results (engine.c, rx_settle, rx_freeze) are the same
 * results: the shipped profile evaluated by two engines over the same polls,
 * one on fast passes (where a result whose counters did not move stands, and
 * one whose windows are whole stands frozen), one in full every poll.  The
 * counters sit still for `phase` polls, then creep and jump, reset, vanish
 * and come back; every result must read the same after every poll.  A
 * configuration poll every conf_every (0: none) evaluates both in full; the
 * clock steps back a minute at back_at (0: never).
 */
static void fast_and_full(int polls, int64_t step_ns, int phase, int conf_every, int back_at,
			  uint64_t *settled, uint64_t *frozen)
{
	static const char *const port_ctr[] = { "link_downed",
						"symbol_error",
						"port_xmit_discards",
						"local_link_integrity_errors",
						"excessive_buffer_overrun_errors",
						"link_error_recovery" };
	static const char *const hw_ctr[] = { "out_of_sequence", "rnr_nak_retry_err",
					      "req_transport_retries_exceeded",
					      "roce_slow_restart" };
	uint64_t pv[6] = { 0 }, hv[4] = { 0 }, rng = 42;
	static bool changed[F__COUNT];
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *fast, *full;
	struct node_model m;
	char path[4096];

	build_model(&m);
	snprintf(path, sizeof(path), "%s/rules/profiles/lossless-roce.yaml", source_dir);
	assert_int_equal(rules_spec_add_profile(&spec, path), 0);
	assert_int_equal(rules_load(&spec, &fast, &dg), 0);
	assert_int_equal(rules_load(&spec, &full, &dg), 0);
	for (int poll = 0; poll < polls; poll++) {
		/* from back_at on, the clock a minute behind (a step back: histories start over) */
		int64_t t =
		    (int64_t)poll * step_ns - (back_at && poll >= back_at ? 60000000000LL : 0);
		const struct rule_result *a, *b;
		size_t na, nb;
		/* phases: still, a creep on one counter, jumps, a reset, one gone a while */
		bool still = (poll / phase) % 2 == 0;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		if (!still && (rng >> 33) % 7 == 0)
			pv[(rng >> 40) % 6] += 1 + (rng >> 50) % 3;
		if (!still && (rng >> 35) % 11 == 0)
			hv[(rng >> 42) % 4] += 5;
		if (poll == polls / 2)
			pv[1] = 0; /* a reset */
		cset_clear(&m.ports[0]->cs[CSET_PORT]);
		cset_clear(&m.ports[0]->cs[CSET_HW]);
		for (int i = 0; i < 6; i++)
			if (!(poll >= polls * 5 / 8 && poll < polls * 2 / 3 &&
			      i == 2)) /* unreadable a while */
				cset_set(&m.ports[0]->cs[CSET_PORT], port_ctr[i], pv[i]);
		for (int i = 0; i < 4; i++)
			cset_set(&m.ports[0]->cs[CSET_HW], hw_ctr[i], hv[i]);
		/* counters the model carries as fields (vendor_fill_port, ethtool, link) */
		field_set_int(m.ports[0], F_PORT_RDMA_OUT_OF_SEQUENCE, (int64_t)hv[0]);
		if (poll >= polls / 3 && poll < polls / 3 + 30)
			field_absent(m.ports[0], F_PORT_RDMA_RETRIES_EXCEEDED, ABS_ERROR, EIO);
		else
			field_set_int(m.ports[0], F_PORT_RDMA_RETRIES_EXCEEDED, (int64_t)hv[2]);
		field_set_int(m.ports[0], F_PORT_REAPPEARED, (int64_t)(pv[3] / 2));
		field_set_int(m.netdevs[0], F_NETDEV_LINK_DOWN_EVENTS, (int64_t)pv[0]);
		field_set_int(m.netdevs[0], F_NETDEV_CARRIER_CHANGES, (int64_t)(2 * pv[0]));
		m.time.tv_sec = 1764672000 + t / 1000000000;
		if (poll == 0 || (conf_every && poll % conf_every == 0)) {
			/* a configuration poll: both in full */
			assert_int_equal(rules_evaluate(fast, &m, t), 0);
		} else {
			assert_int_equal(
			    rules_evaluate_changed(fast, &m, t, changed, RULES_EVAL_COUNTERS, NULL),
			    0);
		}
		assert_int_equal(rules_evaluate(full, &m, t), 0);
		na = rules_results(fast, &a);
		nb = rules_results(full, &b);
		assert_int_equal(na, nb);
		for (size_t i = 0; i < na; i++) {
			if (a[i].outcome != b[i].outcome || strcmp(a[i].summary, b[i].summary) ||
			    strcmp(a[i].reason, b[i].reason) || a[i].window_ns != b[i].window_ns ||
			    a[i].observed_ns != b[i].observed_ns ||
			    a[i].since_ns != b[i].since_ns || a[i].episodes != b[i].episodes ||
			    /* a counter rule is judged every poll, standing or not */
			    (b[i].window_ns && a[i].eval_ns != b[i].eval_ns))
				fail_msg(
				    "poll %d, %s %s: settled '%s' (%d, %s), full '%s' (%d, %s)",
				    poll, a[i].rule->name, a[i].device, a[i].summary, a[i].outcome,
				    a[i].reason, b[i].summary, b[i].outcome, b[i].reason);
		}
	}
	*settled = rules_settled_total(fast);
	*frozen = rules_frozen_total(fast);
	assert_int_equal(rules_settled_total(full), 0);
	rules_free(fast);
	rules_free(full);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	model_free(&m);
}

/* Two hours of 5 s polls, a configuration poll every 5 minutes. */
static void settled_equals_full(void **state)
{
	uint64_t settled, frozen;

	(void)state;
	fast_and_full(1440, 5000000000LL, 120, 60, 0, &settled, &frozen);
	/* and it did stand: most counter results, most polls of the still phases */
	assert_true(settled > 1000);
	assert_true(frozen > 0);
}

/*
 * Frozen for longer than the pass log holds (no configuration poll between),
 * at an interval where the 5 m windows thin their samples: 200 ms polls, 12
 * minutes still, 12 moving, twice; the clock steps back while they stand.
 */
static void frozen_equals_full(void **state)
{
	uint64_t settled, frozen;

	(void)state;
	fast_and_full(4 * 3600, 200000000LL, 3600, 0, 10000, &settled, &frozen);
	print_message("frozen_equals_full: %llu settled, %llu of them frozen\n",
		      (unsigned long long)settled, (unsigned long long)frozen);
	assert_true(frozen > 100000); /* about 100 results, 2000 polls, twice */
	assert_true(frozen < settled);
}

static void no_alloc_steady_state(void **state)
{
	struct node_model m;
	struct rules_engine *e;
	char path[4096];
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	unsigned long before;

	(void)state;
	build_model(&m);
	snprintf(path, sizeof(path), "%s/rules/profiles/lossless-roce.yaml", source_dir);
	assert_int_equal(rules_spec_add_profile(&spec, path), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	assert_int_equal(dg.n, 0);
	assert_int_equal(rules_evaluate(e, &m, 1000000000), 0);
	before = allocs;
	for (int i = 2; i < 200; i++) {
		cset_set(&m.ports[0]->cs[CSET_HW], "out_of_sequence", (uint64_t)i);
		assert_int_equal(rules_evaluate(e, &m, i * 1000000000LL), 0);
	}
	assert_int_equal(allocs - before, 0);
	/* a new netdev: the engine lays out results again (and that allocates) */
	model_add_netdev(&m, "eth9");
	before = allocs;
	assert_int_equal(rules_evaluate(e, &m, 300000000000LL), 0);
	assert_true(allocs - before > 0);
	rules_free(e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	model_free(&m);
}

/*
 * A counter the device lacks is looked up once per set of names, not per
 * poll: it turns up the poll after a driver adds it, and a set rebuilt with
 * other names is searched again.
 */
static void counter_lookup_follows_names(void **state)
{
	struct node_model m;
	struct rules_engine *e;
	struct counter_set *hw;

	(void)state;
	build_model(&m);
	hw = &m.ports[0]->cs[CSET_HW];
	e = load_ok("profile: t\nrules:\n"
		    "  - name: late\n    scope: rdma_port\n    severity: warning\n"
		    "    expr: hw[\"late_counter\"] == 0\n");
	assert_int_equal(rules_evaluate(e, &m, 1000000000), 0);
	assert_int_equal(result(e, "late", "mlx5_0").outcome, RULE_UNKNOWN);
	assert_int_equal(rules_evaluate(e, &m, 2000000000), 0);
	assert_int_equal(result(e, "late", "mlx5_0").outcome, RULE_UNKNOWN);
	cset_set(hw, "late_counter", 0);
	assert_int_equal(rules_evaluate(e, &m, 3000000000), 0);
	assert_int_equal(result(e, "late", "mlx5_0").outcome, RULE_PASS);
	cset_set(hw, "late_counter", 5);
	assert_int_equal(rules_evaluate(e, &m, 4000000000), 0);
	assert_int_equal(result(e, "late", "mlx5_0").outcome, RULE_FAIL);
	/* the set rebuilt from scratch, the name elsewhere: found where it is now */
	cset_free(hw);
	cset_set(hw, "other", 1);
	cset_set(hw, "late_counter", 0);
	assert_int_equal(rules_evaluate(e, &m, 5000000000), 0);
	assert_int_equal(result(e, "late", "mlx5_0").outcome, RULE_PASS);
	cset_free(hw);
	cset_set(hw, "late_counter", 7);
	assert_int_equal(rules_evaluate(e, &m, 6000000000), 0);
	assert_int_equal(result(e, "late", "mlx5_0").outcome, RULE_FAIL);
	rules_free(e);
	model_free(&m);
}

/* Numbers in summaries: integers digit by digit, as "%.0f" wrote them; others "%.4g". */
static void summary_numbers(void **state)
{
	struct node_model m;
	struct rules_engine *e;

	(void)state;
	build_model(&m);
	e = load_ok(
	    "profile: t\nrules:\n"
	    "  - name: n\n    scope: netdev\n    severity: warning\n"
	    "    expr: mtu > 100000\n"
	    "    summary: \"{mtu} {0 - mtu} {mtu * 0} {mtu * 0 * (0 - 1)} {mtu * 1000000000000} "
	    "{mtu / 7} {0 - mtu / 8}\"\n");
	assert_int_equal(rules_evaluate(e, &m, 1000000000), 0);
	assert_string_equal(result(e, "n", "eth2").summary,
			    "9000 -9000 0 -0 9000000000000000 1286 -1125");
	assert_string_equal(result(e, "n", "eth3").summary,
			    "1500 -1500 0 -0 1500000000000000 214.3 -187.5");
	rules_free(e);
	model_free(&m);
}

/* A reload keeps history and identity for unchanged rules. */
static void reload_adopts_history(void **state)
{
	struct node_model m;
	struct rules_engine *a, *b, *c;
	const struct rule_result *ra, *rb;
	uint64_t key;
	struct found f;

	(void)state;
	build_model(&m);
	a = load_ok(counter_rules);
	cset_set(&m.ports[0]->cs[CSET_HW], "out_of_sequence", 1);
	assert_int_equal(rules_evaluate(a, &m, 1000000000), 0);
	rules_results(a, &ra);
	key = ra[0].key;
	b = load_ok(counter_rules);
	rules_adopt_history(b, a);
	rules_free(a);
	cset_set(&m.ports[0]->cs[CSET_HW], "out_of_sequence", 3);
	assert_int_equal(rules_evaluate(b, &m, 2000000000), 0);
	f = result(b, "inc", "mlx5_0");
	assert_int_equal(f.outcome, RULE_FAIL);
	assert_string_equal(f.summary, "inc=2 rate=2 delta=2 (only 1s of the 5m window observed)");
	rules_results(b, &rb);
	assert_true(rb[0].key == key);
	/* a changed rule starts over */
	c = load_ok("profile: t\nrules:\n"
		    "  - name: inc\n    scope: rdma_port\n    severity: warning\n"
		    "    expr: increase(hw[\"out_of_sequence\"], 10m) == 0\n");
	rules_adopt_history(c, b);
	rules_free(b);
	assert_int_equal(rules_evaluate(c, &m, 3000000000), 0);
	assert_int_equal(result(c, "inc", "mlx5_0").outcome, RULE_UNKNOWN);
	rules_free(c);
	model_free(&m);
}

static void profiles_and_lookup(void **state)
{
	char dir[] = "/tmp/rocewatch-profiles-XXXXXX", path[4096], out[4096], searched[1024];
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e;
	FILE *f;

	(void)state;
	/* the shipped profiles load without a single warning, and every rule has a doc */
	assert_int_equal(rules_spec_add_profile(&spec, "lossless-roce"), 0);
	assert_int_equal(rules_spec_add_profile(&spec, "lossy-roce"), 0);
	assert_int_equal(rules_spec_add_param(&spec, "roce_priority=5"), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	assert_int_equal(dg.n, 0);
	assert_int_equal(rules_profile_count(e), 2);
	for (size_t i = 0; i < rules_count(e); i++)
		assert_true(strlen(rules_rule(e, i)->doc) > 40);
	for (size_t p = 0; p < 2; p++) {
		const char *name, *value;

		rules_profile_param(e, p, 0, &name, &value);
		assert_string_equal(name, "roce_priority");
		assert_string_equal(value, "5");
	}
	rules_free(e);
	rules_spec_free(&spec);

	/* $ROCEWATCH_PROFILE_DIR comes first */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lossless-roce.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("profile: lossless-roce\nrules: []\n", f);
	fclose(f);
	setenv("ROCEWATCH_PROFILE_DIR", dir, 1);
	assert_int_equal(rules_profile_path("lossless-roce", out, sizeof(out), NULL, 0), 0);
	assert_string_equal(out, path);
	assert_int_equal(rules_profile_path("nope", out, sizeof(out), searched, sizeof(searched)),
			 -ENOENT);
	assert_non_null(strstr(searched, dir));
	assert_int_equal(rules_spec_add_profile(&spec, "nope"), 0);
	assert_int_not_equal(rules_load(&spec, &e, &dg), 0);
	rules_diag_format(&dg.d[0], out, sizeof(out));
	assert_non_null(strstr(out, "error: profile 'nope' not found (looked in "));
	assert_non_null(strstr(out, "; built in: container, fleet, lossless-roce, lossy-roce)"));
	rules_diags_free(&dg);
	rules_spec_free(&spec);

	/* a file of the same name wins over the built-in copy: a site edits its own */
	assert_int_equal(rules_spec_add_profile(&spec, "lossless-roce"), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	assert_string_equal(rules_profile(e, 0)->file, path);
	assert_string_equal(rules_profile(e, 0)->origin, "ROCEWATCH_PROFILE_DIR");
	assert_int_equal(rules_count(e), 0);
	rules_free(e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	/* not in the directory (nor installed): the built-in copy, the same text as the file */
	assert_int_equal(rules_spec_add_profile(&spec, "lossy-roce"), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	if (strcmp(rules_profile(e, 0)->origin, "data directory")) {
		const struct rules_builtin *b = rules_builtin_find("lossy-roce");
		char *text = NULL;
		size_t len = 0;

		assert_string_equal(rules_profile(e, 0)->origin, "built-in");
		assert_string_equal(rules_profile(e, 0)->file, "built-in:lossy-roce.yaml");
		assert_non_null(b);
		snprintf(out, sizeof(out), "%s/rules/profiles/lossy-roce.yaml", source_dir);
		assert_int_equal(read_file_all(out, &text, &len), 0);
		assert_int_equal(b->len, len);
		assert_memory_equal(b->text, text, len);
		free(text);
	}
	assert_true(rules_count(e) > 30);
	assert_null(rules_builtin_find("nope"));
	rules_free(e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	unsetenv("ROCEWATCH_PROFILE_DIR");
	unlink(path);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(err_bad_yaml),
		cmocka_unit_test(err_unknown_field),
		cmocka_unit_test(err_type_mismatch),
		cmocka_unit_test(err_functions),
		cmocka_unit_test(functions_documented),
		cmocka_unit_test(err_lexer_and_syntax),
		cmocka_unit_test(err_positions_in_scalars),
		cmocka_unit_test(err_structure),
		cmocka_unit_test(err_params),
		cmocka_unit_test(params_recorded),
		cmocka_unit_test(eval_outcomes),
		cmocka_unit_test(eval_summary_and_status),
		cmocka_unit_test(eval_tc_maxrate),
		cmocka_unit_test(eval_if),
		cmocka_unit_test(applies_to),
		cmocka_unit_test(applies_to_shared),
		cmocka_unit_test(summary_shares_the_exprs_call),
		cmocka_unit_test(counter_reset_and_wrap),
		cmocka_unit_test(history_follows_the_device),
		cmocka_unit_test(status_precedence),
		cmocka_unit_test(summary_rates),
		cmocka_unit_test(summary_plurals),
		cmocka_unit_test(counter_saturated),
		cmocka_unit_test(counter_window),
		cmocka_unit_test(counter_arrays),
		cmocka_unit_test(settled_equals_full),
		cmocka_unit_test(frozen_equals_full),
		cmocka_unit_test(no_alloc_steady_state),
		cmocka_unit_test(counter_lookup_follows_names),
		cmocka_unit_test(summary_numbers),
		cmocka_unit_test(reload_adopts_history),
		cmocka_unit_test(profiles_and_lookup),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s SOURCE_DIR\n", argv[0]);
		return 2;
	}
	source_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
