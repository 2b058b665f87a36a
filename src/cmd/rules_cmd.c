// SPDX-License-Identifier: MIT
/* rocewatch rules lint|list: check rule files, show what a profile checks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bounded.h"
#include "engine.h"
#include "cli.h"
#include "engine_opts.h"
#include "commands.h"
#include "util.h"

static const char rules_usage[] =
    "Usage: rocewatch rules lint [--format text|json] [-j] FILE...\n"
    "       rocewatch rules list [--profile NAME|FILE]... [--param KEY=VALUE]...\n"
    "                            [--format text|json] [-j]\n"
    "       rocewatch rules show NAME\n\n"
    "lint   parse and type-check rule files; every error is reported as\n"
    "       FILE:LINE:COL.\n"
    "list   show the rules of the profiles (default " RULES_DEFAULT_PROFILE ") with their\n"
    "       parameters as given, and where each profile came from.  Profile names are\n"
    "       looked up in $ROCEWATCH_PROFILE_DIR, then in the installed profile\n"
    "       directory (" ROCEWATCH_DATA_PROFILE_DIR "), then among the\n"
    "       profiles built into this binary: an installed file of the same name wins.\n"
    "show   print the built-in profile NAME (a start for a site's own file).\n"
    "-j is the same as --format json.\n\n"
    "Exit status: 0 the files (lint) or profiles (list) are valid, 1 they are not or\n"
    "cannot be read, 2 bad usage.\n\n"
    "The rule language is described in docs/rules.md.\n";

static json_t *diags_json(const struct rules_diags *dg)
{
	json_t *a = json_array();

	for (size_t i = 0; i < dg->n; i++) {
		const struct rules_diag *d = &dg->d[i];

		json_array_append_new(a, json_pack("{s:s?,s:i,s:i,s:s,s:s}", "file", d->file,
						   "line", d->line, "column", d->col, "severity",
						   d->warning ? "warning" : "error", "message",
						   d->msg));
	}
	return a;
}

static void print_diags(const struct rules_diags *dg)
{
	for (size_t i = 0; i < dg->n; i++) {
		char line[1024];

		rules_diag_format(&dg->d[i], line, sizeof(line));
		fprintf(stderr, "%s\n", line);
	}
}

/* The JSON document on stdout, indented; out is consumed. */
static void print_json(json_t *out)
{
	char *s = json_dumps(out, JSON_INDENT(2));

	if (s)
		printf("%s\n", s);
	free(s);
	json_decref(out);
}

static int cmd_lint(int argc, char **argv, bool json)
{
	json_t *out = json ? json_array() : NULL;
	int bad = 0;

	if (argc < 1) {
		fprintf(stderr, "rocewatch rules lint: no FILE given (see --help)\n");
		json_decref(out);
		return 2;
	}
	for (int i = 0; i < argc; i++) {
		struct rules_diags dg = { 0 };
		struct rules_engine *e = NULL;
		char *text = NULL;
		size_t len = 0;
		int r = read_file_max(argv[i], RW_MAX_PROFILE_BYTES, &text, &len);

		if (r) {
			char msg[320], why[160];

			snprintf(msg, sizeof(msg), "cannot read: %s",
				 read_error_text(r, RW_MAX_PROFILE_BYTES, "a rule file", why,
						 sizeof(why)));
			if (json)
				json_array_append_new(
				    out, json_pack("{s:s,s:b,s:[{s:s,s:i,s:i,s:s,s:s}]}", "file",
						   argv[i], "ok", 0, "diagnostics", "file", argv[i],
						   "line", 0, "column", 0, "severity", "error",
						   "message", msg));
			else
				fprintf(stderr, "%s: error: %s\n", argv[i], msg);
			bad = 1;
			continue;
		}
		r = rules_load_buffer(argv[i], text, len, NULL, &e, &dg);
		free(text);
		if (json) {
			json_t *j = json_pack("{s:s,s:b}", "file", argv[i], "ok", !r);

			if (e) {
				json_object_set_new(j, "profile",
						    json_string(rules_profile(e, 0)->name));
				json_object_set_new(j, "rules",
						    json_integer((json_int_t)rules_count(e)));
			}
			json_object_set_new(j, "diagnostics", diags_json(&dg));
			json_array_append_new(out, j);
		} else {
			print_diags(&dg);
			if (!r)
				printf("%s: ok (profile %s, %zu rules)\n", argv[i],
				       rules_profile(e, 0)->name, rules_count(e));
		}
		if (r)
			bad = 1;
		rules_free(e);
		rules_diags_free(&dg);
	}
	if (json)
		print_json(out);
	return bad;
}

/* Expressions on one line, for a table. */
static void print_flat(const char *s)
{
	bool space = false;

	for (; *s; s++) {
		if (*s == '\n' || *s == ' ' || *s == '\t') {
			space = true;
			continue;
		}
		if (space)
			putchar(' ');
		space = false;
		putchar(*s);
	}
}

/* Where a profile file came from, in words (rules list). */
static const char *origin_text(const char *origin)
{
	if (!strcmp(origin, rules_origin_name(RULES_ORIGIN_ENV_DIR)))
		return "from $ROCEWATCH_PROFILE_DIR";
	if (!strcmp(origin, rules_origin_name(RULES_ORIGIN_DATA_DIR)))
		return "the installed copy";
	return "named on the command line";
}

static int cmd_list(const struct rules_spec *spec, bool json)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	int r = rules_load(spec, &e, &dg);
	json_t *out = NULL;

	print_diags(&dg);
	rules_diags_free(&dg);
	if (r)
		return 1;
	if (json)
		out = json_pack("{s:[]}", "profiles");
	for (size_t p = 0; p < rules_profile_count(e); p++) {
		const struct rules_profile_info *pi = rules_profile(e, p);
		json_t *pj = NULL, *params = NULL, *rl = NULL, *req = NULL;

		if (json) {
			params = json_object();
			rl = json_array();
			req = json_array();
			pj = json_pack("{s:s,s:s,s:s,s:s}", "name", pi->name, "description",
				       pi->description, "file", pi->file, "origin", pi->origin);
			json_array_append_new(json_object_get(out, "profiles"), pj);
		} else if (!strcmp(pi->origin, rules_origin_name(RULES_ORIGIN_BUILTIN))) {
			printf("%sprofile %s (built into this binary)\n  %s\n", p ? "\n" : "",
			       pi->name, pi->description);
		} else {
			printf("%sprofile %s (%s, %s)\n  %s\n", p ? "\n" : "", pi->name, pi->file,
			       origin_text(pi->origin), pi->description);
		}
		for (size_t i = 0; i < pi->n_params; i++) {
			const char *name, *value;

			rules_profile_param(e, p, i, &name, &value);
			if (json)
				json_object_set_new(params, name, json_string(value));
			else
				printf("%s%s=%s", i ? " " : "  params: ", name, value);
		}
		if (!json && pi->n_params)
			printf("\n");
		for (int k = 0; k < OBJ__COUNT; k++) {
			if (!pi->requires[k])
				continue;
			if (json)
				json_array_append_new(req,
						      json_string(obj_kind_name((enum obj_kind)k)));
			else
				printf("  requires: %s\n", obj_kind_name((enum obj_kind)k));
		}
		if (!json)
			printf("\n  %-34s %-9s %-8s %-5s %s\n", "RULE", "SCOPE", "SEVERITY", "FOR",
			       "EXPR");
		for (size_t i = 0; i < rules_count(e); i++) {
			const struct rule_info *ri = rules_rule(e, i);
			/* a fleet rule: "fleet" here, the kind of its units in "each" */
			const char *scope = ri->fleet ? "fleet" : obj_kind_name(ri->scope);
			char dur[32];

			if (strcmp(ri->profile, pi->name))
				continue;
			if (json) {
				json_t *rj = json_pack("{s:s,s:s,s:s,s:f,s:s?,s:s,s:s?,s:s}",
						       "name", ri->name, "scope", scope, "severity",
						       rule_severity_name(ri->severity),
						       "for_seconds", (double)ri->for_ns / 1e9,
						       "when", ri->when_src, "expr", ri->expr_src,
						       "summary", ri->summary_src, "doc", ri->doc);

				if (ri->fleet)
					json_object_set_new(rj, "each",
							    json_string(obj_kind_name(ri->scope)));
				json_array_append_new(rl, rj);
				continue;
			}
			printf("  %-34s %-9s %-8s ", ri->name, scope,
			       rule_severity_name(ri->severity));
			if (ri->for_ns)
				snprintf(dur, sizeof(dur), "%gs", (double)ri->for_ns / 1e9);
			else
				snprintf(dur, sizeof(dur), "-");
			printf("%-5s ", dur);
			if (ri->when_src) {
				printf("when ");
				print_flat(ri->when_src);
				printf(": ");
			}
			print_flat(ri->expr_src);
			printf("\n");
		}
		if (json) {
			json_object_set_new(pj, "params", params);
			json_object_set_new(pj, "requires", req);
			json_object_set_new(pj, "rules", rl);
		}
	}
	if (json)
		print_json(out);
	rules_free(e);
	return 0;
}

/* The YAML a site copies to start its own profile: exactly the built-in text. */
static int cmd_show(int argc, char **argv)
{
	const struct rules_builtin *b;

	if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		fputs(rules_usage, stdout);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr,
			"rocewatch rules show: one NAME, a built-in profile (see --help)\n");
		return 2;
	}
	b = rules_builtin_find(argv[2]);
	if (!b) {
		fprintf(stderr,
			"rocewatch rules show: no built-in profile '%s' (built in:", argv[2]);
		for (size_t i = 0; i < rules_builtin_count; i++)
			fprintf(stderr, "%s %s", i ? "," : "", rules_builtin_profiles[i].name);
		fprintf(stderr, ")\n");
		return 1;
	}
	if (fwrite(b->text, 1, b->len, stdout) != b->len || fflush(stdout)) {
		fprintf(stderr, "rocewatch rules show: writing: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

struct rules_args {
	struct rules_spec spec;
	bool json, lint;
};

/* lint's --profile and --param: they are list's */
static int opt_not_lint(const struct cli_opt *o, void *member, const char *arg)
{
	(void)member, (void)arg;
	fprintf(stderr, "rocewatch rules lint: --%s applies to list, not lint\n", o->name);
	return -EINVAL;
}

/* Every flag is described in rules_usage, above the tables. */
static const struct cli_opt rules_list_opts[] = {
	{ .name = "profile", CLI_RULES_AT(struct rules_args, spec, CLI_RULES_PROFILE) },
	{ .name = "param", CLI_RULES_AT(struct rules_args, spec, CLI_RULES_PARAM) },
	{ .name = "format", CLI_FORMAT_AT(struct rules_args, json) },
	{ .name = "", .short_name = 'j', CLI_FLAG_AT(struct rules_args, json) },
	{ .name = "help", .short_name = 'h', .kind = CLI_HELP },
	{ 0 },
};

static const struct cli_opt rules_lint_opts[] = {
	{ .name = "profile", CLI_CALL_AT(struct rules_args, spec, opt_not_lint) },
	{ .name = "param", CLI_CALL_AT(struct rules_args, spec, opt_not_lint) },
	{ .name = "format", CLI_FORMAT_AT(struct rules_args, json) },
	{ .name = "", .short_name = 'j', CLI_FLAG_AT(struct rules_args, json) },
	{ .name = "help", .short_name = 'h', .kind = CLI_HELP },
	{ 0 },
};

const struct cli_cmd rules_lint_cli = {
	.name = "rules lint",
	.head = rules_usage,
	.tables = { CLI_TABLE(rules_lint_opts) },
};

const struct cli_cmd rules_list_cli = {
	.name = "rules list",
	.head = rules_usage,
	.tables = { CLI_TABLE(rules_list_opts) },
};

int cmd_rules(int argc, char **argv)
{
	struct rules_args a = { 0 };
	const char *sub;
	int rc = 2, r, first;

	if (argc < 2) {
		fputs(rules_usage, argc > 1 ? stdout : stderr);
		return 2;
	}
	sub = argv[1];
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")) {
		fputs(rules_usage, stdout);
		return 0;
	}
	if (!strcmp(sub, "show"))
		return cmd_show(argc, argv);
	if (strcmp(sub, "lint") && strcmp(sub, "list")) {
		fprintf(stderr, "rocewatch rules: unknown subcommand '%s' (lint, list or show)\n",
			sub);
		return 2;
	}
	a.lint = !strcmp(sub, "lint");
	argc--;
	argv++;
	r = cli_parse(a.lint ? &rules_lint_cli : &rules_list_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	else if (r)
		;
	else if (a.lint)
		rc = cmd_lint(argc - first, argv + first, a.json);
	else if (first < argc)
		fprintf(stderr, "rocewatch rules list: unexpected argument '%s' (use --profile)\n",
			argv[first]);
	else
		rc = cmd_list(&a.spec, a.json);
	rules_spec_free(&a.spec);
	return rc;
}
