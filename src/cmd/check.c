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
#include "check_serve.h"
#include "cli.h"
#include "commands.h"
#include "daemon.h"
#include "util.h"

enum {
	OPT_PROFILE = OPT__COMMON_END + 1,
	OPT_PARAM,
	OPT_FORMAT,
	OPT_INTERVAL,
	OPT_COLOR,
	OPT_SERVE,
};

static const char check_usage[] =
    "Usage: rocewatch check [--profile NAME|FILE]... [--param KEY=VALUE]...\n"
    "                       [--format text|json|nfd] [--serve URL|none] [--from FILE] [OPTIONS]\n\n"
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
    "at its own time.  The language and the JSON are described in docs/rules.md.\n\n"
    "Exit status (Nagios plugin convention, for NHC, Nagios, Icinga and Slurm):\n"
    "  0 OK, 1 WARNING (a warning rule fails), 2 CRITICAL (a critical rule fails),\n"
    "  3 UNKNOWN (a rule could not be decided, a profile's required RDMA device is\n"
    "  missing, bad flags, bad rule files or an unreadable snapshot).\n\n"
    "Options:\n"
    "  --profile NAME|FILE        profile to check (repeatable; default " RULES_DEFAULT_PROFILE
    ");\n"
    "                             NAME is looked up in $ROCEWATCH_PROFILE_DIR and the\n"
    "                             installed profiles\n"
    "  --param KEY=VALUE          override a profile parameter (repeatable)\n"
    "  --format text|json|nfd     report format (default text); nfd: a Node Feature\n"
    "                             Discovery feature file (roce-ready, status, ...)\n"
    "  --interval DURATION        gap between the two counter samples (default 100ms:\n"
    "                             a pre-flight check must not hold up a job start)\n"
    "  --serve URL|none           take counter rules from the rocewatch serve at URL\n"
    "                             (default " CHECK_SERVE_DEFAULT_URL " when reading this\n"
    "                             machine; none: only this check's samples)\n"
    "  --color auto|always|never  colour the text report (default auto: on a terminal,\n"
    "                             unless NO_COLOR is set)\n"
    "  -v, --verbose              also list skipped rules, and the doc of every "
    "rule\n" COMMON_OPTIONS_HELP;

struct check_opts {
	bool json, nfd, color, verbose;
};

static const char *col(const struct check_opts *o, const char *code)
{
	return o->color ? code : "";
}

#define C_RESET "\033[0m"
#define C_BOLD	"\033[1m"
#define C_RED	"\033[31m"
#define C_GREEN "\033[32m"
#define C_YEL	"\033[33m"
#define C_MAG	"\033[35m"
#define C_DIM	"\033[2m"

static const char *outcome_color(const struct rule_result *x)
{
	switch (x->outcome) {
	case RULE_PASS:
		return C_GREEN;
	case RULE_FAIL:
		return x->rule->severity == SEV_CRITICAL  ? C_RED
		       : x->rule->severity == SEV_WARNING ? C_YEL
							  : "";
	case RULE_UNKNOWN:
		return C_MAG;
	default:
		return C_DIM;
	}
}

static bool same_object(const struct rule_result *x, enum obj_kind k, const struct object *o)
{
	if (x->kind != k)
		return false;
	if (k == OBJ_NODE)
		return true;
	return x->port == o->port && !strcmp(x->device, o->name);
}

static bool visible(const struct check_opts *o, const struct rule_result *x)
{
	return o->verbose || (x->outcome != RULE_SKIP && x->outcome != RULE__OUTCOMES);
}

/* A doc, indented under its row. */
static void print_doc(const char *doc, int indent)
{
	const char *p = doc;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		if (len)
			printf("%*s%.*s\n", indent, "", len, p);
		else if (nl && nl[1])
			putchar('\n');
		p += len + (nl ? 1 : 0);
	}
}

static void print_header(const struct check_opts *o, const struct node_model *m, enum obj_kind k,
			 const struct object *ob)
{
	if (k == OBJ_NODE)
		printf("\n%snode %s%s\n", col(o, C_BOLD), m->host, col(o, C_RESET));
	else if (k == OBJ_NETDEV)
		printf("\n%snetdev %s%s\n", col(o, C_BOLD), ob->name, col(o, C_RESET));
	else
		printf("\n%srdma_port %s/%u%s%s%s%s\n", col(o, C_BOLD), ob->name, ob->port,
		       ob->netdev ? " (" : "", ob->netdev ? ob->netdev->name : "",
		       ob->netdev ? ")" : "", col(o, C_RESET));
}

static void print_object(const struct check_opts *o, const struct rules_engine *e,
			 const struct node_model *m, enum obj_kind k, const struct object *ob,
			 int wname, bool multi)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res);
	bool header = false;
	char name[160];

	for (size_t i = 0; i < n; i++) {
		const struct rule_result *x = &res[i];

		if (!same_object(x, k, ob) || !visible(o, x))
			continue;
		if (!header) {
			print_header(o, m, k, ob);
			header = true;
		}
		printf("  %s%-7s%s  %-8s  ", col(o, outcome_color(x)),
		       rule_outcome_name(x->outcome), col(o, C_RESET),
		       rule_severity_name(x->rule->severity));
		if (multi)
			snprintf(name, sizeof(name), "%s/%s", x->rule->profile, x->rule->name);
		printf("%-*s  %s\n", wname, multi ? name : x->rule->name,
		       x->outcome == RULE_SKIP || x->outcome == RULE_UNKNOWN ? x->reason
									     : x->summary);
		if (x->outcome == RULE_UNKNOWN && x->summary[0] && o->verbose)
			printf("%*s%s\n", 23 + wname, "", x->summary);
		if ((x->outcome == RULE_FAIL || x->outcome == RULE_UNKNOWN || o->verbose) &&
		    x->rule->doc[0]) {
			char doc[4096];

			/* the fix hints name this netdev and device, not IF and DEV */
			rules_doc_for(x, m, doc, sizeof(doc));
			printf("%s", col(o, C_DIM));
			print_doc(doc, 21);
			printf("%s", col(o, C_RESET));
		}
	}
	if (header || o->verbose)
		return;
	/* a port the profile does not apply to (native InfiniBand) says so in one line */
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *x = &res[i];

		if (!same_object(x, k, ob) || x->outcome != RULE_SKIP ||
		    strncmp(x->reason, "outside the profile", 19))
			continue;
		print_header(o, m, k, ob);
		printf("  %s%-7s%s  %-8s  %-*s  %s\n", col(o, C_DIM), "skip", col(o, C_RESET), "",
		       wname, multi ? x->rule->profile : "(all rules)", x->reason);
		return;
	}
}

static void print_text(const struct check_opts *o, const struct rules_engine *e,
		       const struct node_model *m, unsigned samples, double gap,
		       const struct check_history *h)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res), cnt[RULE__OUTCOMES + 1] = { 0 }, crit = 0, warn = 0;
	enum rules_status st = rules_status(e);
	struct object **objs;
	size_t nobj;
	int wname = 4;
	bool multi = rules_profile_count(e) > 1;

	for (size_t i = 0; i < n; i++) {
		int l = (int)strlen(res[i].rule->name) +
			(multi ? (int)strlen(res[i].rule->profile) + 1 : 0);

		if (l > wname)
			wname = l;
		cnt[res[i].outcome]++;
		if (res[i].outcome == RULE_FAIL)
			crit += res[i].rule->severity == SEV_CRITICAL,
			    warn += res[i].rule->severity == SEV_WARNING;
	}
	printf("rocewatch check on %s: ", m->host);
	for (size_t p = 0; p < rules_profile_count(e); p++)
		printf("%s%s", p ? ", " : "", rules_profile(e, p)->name);
	if (samples > 1)
		printf(" (%u samples over %.1f s)", samples, gap);
	printf("\n");
	/* what the counter rules' verdicts rest on: serve's minutes or our 100 ms */
	if (h->note[0])
		printf("%s%s%s\n", col(o, h->from_serve ? "" : C_MAG), h->note, col(o, C_RESET));
	for (size_t p = 0; p < rules_profile_count(e); p++) {
		const struct rules_profile_info *pi = rules_profile(e, p);

		for (int k = 0; k < OBJ__COUNT; k++)
			if (pi->requires[k] && !pi->requirements_met)
				printf(
				    "%sprofile %s requires an %s%s%s%s and this node has none%s\n",
				    col(o, C_MAG), pi->name, obj_kind_name((enum obj_kind)k),
				    pi->applies_src[k] ? " where " : "",
				    pi->applies_src[k] ? pi->applies_src[k] : "",
				    pi->applies_src[k] ? "," : "", col(o, C_RESET));
	}
	print_object(o, e, m, OBJ_NODE, &m->node, wname, multi);
	nobj = model_objects((struct node_model *)m, OBJ_NETDEV, &objs);
	for (size_t i = 0; i < nobj; i++)
		print_object(o, e, m, OBJ_NETDEV, objs[i], wname, multi);
	nobj = model_objects((struct node_model *)m, OBJ_RDMA_PORT, &objs);
	for (size_t i = 0; i < nobj; i++)
		print_object(o, e, m, OBJ_RDMA_PORT, objs[i], wname, multi);
	printf("\n%zu passed, %zu failed (%zu critical, %zu warning), %zu unknown, %zu skipped: "
	       "%s%s%s\n",
	       cnt[RULE_PASS], cnt[RULE_FAIL], crit, warn, cnt[RULE_UNKNOWN], cnt[RULE_SKIP],
	       col(o, st == RULES_OK	     ? C_GREEN
		      : st == RULES_WARNING  ? C_YEL
		      : st == RULES_CRITICAL ? C_RED
					     : C_MAG),
	       rules_status_name(st), col(o, C_RESET));
}

static int evaluate(struct rules_engine *e, struct daemon *d)
{
	int64_t t = (int64_t)d->m.time.tv_sec * 1000000000LL + d->m.time.tv_nsec;
	int r = rules_evaluate(e, &d->m, t);

	if (r)
		fprintf(stderr, "rocewatch check: evaluating rules: %s\n", strerror(-r));
	return r;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

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

int cmd_check(int argc, char **argv)
{
	static const struct option own[] = {
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "color", required_argument, NULL, OPT_COLOR },
		{ "serve", required_argument, NULL, OPT_SERVE },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 },
	};
	struct rw_config cfg;
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	struct check_opts o = { 0 };
	struct option *opts = cli_options(own);
	struct daemon *d = NULL;
	const char *color = "auto", *serve_url = NULL;
	struct check_history hist = { 0 };
	bool serve_given = false;
	char err[512] = "";
	int opt, idx, rc = RULES_UNKNOWN, r;
	unsigned samples = 0;
	int64_t t_first = 0, t_last = 0;

	config_defaults(&cfg);
	/* A prolog waits for us: sample counters 100 ms apart, not serve's 1 s. */
	cfg.interval_ns = 100000000LL;
	if (!opts) {
		fprintf(stderr, "rocewatch check: out of memory\n");
		return RULES_UNKNOWN;
	}
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hv", opts, &idx)) != -1) {
		int64_t ns;

		switch (opt) {
		case 'h':
			fputs(check_usage, stdout);
			cli_print_collectors(stdout);
			rc = 0;
			goto free_opts;
		case 'v':
			o.verbose = true;
			continue;
		case OPT_PROFILE:
			if (rules_spec_add_profile(&spec, optarg))
				goto nomem;
			continue;
		case OPT_PARAM:
			r = rules_spec_add_param(&spec, optarg);
			if (r == -EINVAL) {
				fprintf(stderr,
					"rocewatch check: --param '%s': expected KEY=VALUE\n",
					optarg);
				goto free_opts;
			}
			if (r)
				goto nomem;
			continue;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json") &&
			    strcmp(optarg, "nfd")) {
				fprintf(
				    stderr,
				    "rocewatch check: --format: '%s' is not text, json or nfd\n",
				    optarg);
				goto free_opts;
			}
			o.json = !strcmp(optarg, "json");
			o.nfd = !strcmp(optarg, "nfd");
			continue;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") &&
			    strcmp(optarg, "never")) {
				fprintf(
				    stderr,
				    "rocewatch check: --color: '%s' is not auto, always or never\n",
				    optarg);
				goto free_opts;
			}
			color = optarg;
			continue;
		case OPT_SERVE:
			if (strcmp(optarg, "none") && strncmp(optarg, "http://", 7) &&
			    strncmp(optarg, "https://", 8)) {
				fprintf(
				    stderr,
				    "rocewatch check: --serve: '%s' is not an http:// or https:// "
				    "URL, or none\n",
				    optarg);
				goto free_opts;
			}
			serve_url = strcmp(optarg, "none") ? optarg : NULL;
			serve_given = true;
			continue;
		case OPT_INTERVAL:
			if (parse_duration(optarg, &ns) || ns <= 0 || ns > 3600000000000LL) {
				fprintf(stderr,
					"rocewatch check: --interval: '%s' is not a duration up to "
					"1h (e.g. 1s, 500ms)\n",
					optarg);
				goto free_opts;
			}
			cfg.interval_ns = ns;
			continue;
		case '?':
		case ':':
			cli_bad_option("check", argv, optind);
			goto free_opts;
		}
		r = cli_common(&cfg, opt, optarg, opts[idx].name);
		if (r)
			goto free_opts;
	}
	if (optind < argc) {
		fprintf(stderr, "rocewatch check: unexpected argument '%s'\n", argv[optind]);
		goto free_opts;
	}
	if (serve_url && cfg.from) {
		fprintf(stderr, "rocewatch check: --serve and --from: serve's history is of the "
				"machine it runs on, not of the snapshot\n");
		goto free_opts;
	}
	/* Reading this machine: a serve on it has the history check lacks. */
	if (!serve_given && reads_this_machine(&cfg))
		serve_url = CHECK_SERVE_DEFAULT_URL;
	/* https://no-color.org: set and not empty disables colour */
	o.color = !strcmp(color, "always") || (!strcmp(color, "auto") && isatty(STDOUT_FILENO) &&
					       !(getenv("NO_COLOR") && *getenv("NO_COLOR")));

	r = rules_load(&spec, &e, &dg);
	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch check: %s\n", line);
	}
	if (r)
		goto free_opts;

	d = calloc(1, sizeof(*d));
	if (!d)
		goto nomem;
	r = daemon_init(d, &cfg, err, sizeof(err));
	if (!r)
		r = daemon_start(d, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch check: %s\n", err[0] ? err : strerror(-r));
		goto fini;
	}
	if (d->replay) {
		size_t n = snapshot_count(d->replay);

		for (size_t i = 0; i < n; i++) {
			if (daemon_collect(d, COLLECT_SLOW | COLLECT_FAST) || evaluate(e, d))
				goto fini;
			t_last = (int64_t)d->m.time.tv_sec * 1000000000LL + d->m.time.tv_nsec;
			if (!samples++)
				t_first = t_last;
		}
	} else {
		daemon_collect(d, COLLECT_SLOW | COLLECT_FAST);
		if (evaluate(e, d))
			goto fini;
		t_first = t_last = (int64_t)d->m.time.tv_sec * 1000000000LL + d->m.time.tv_nsec;
		samples = 1;
		if (rules_need_history(e)) {
			sleep_ns(cfg.interval_ns);
			daemon_collect(d, COLLECT_FAST);
			if (evaluate(e, d))
				goto fini;
			t_last = (int64_t)d->m.time.tv_sec * 1000000000LL + d->m.time.tv_nsec;
			samples = 2;
		}
	}
	if (!rules_need_history(e))
		hist = (struct check_history){ 0 };
	else if (serve_url)
		check_serve_merge(&hist, e, serve_url, serve_given, d->m.host, real_ns());
	else
		check_history_local(&hist, e, d->replay != NULL,
				    serve_given ? "--serve none" : NULL);
	rc = (int)rules_status(e);
	if (o.nfd) {
		struct strbuf sb = { 0 };

		/* no expiry: whoever installs the file decides how long it holds */
		nfd_render(&sb, e, &d->m, 0);
		if (sb.oom) {
			fprintf(stderr, "rocewatch check: out of memory\n");
			rc = RULES_UNKNOWN;
		} else {
			fwrite(sb.buf, 1, sb.len, stdout);
		}
		sb_free(&sb);
	} else if (o.json) {
		struct strbuf sb = { 0 };
		struct rules_json_meta meta = { .host = d->m.host,
						.time_ns = t_last,
						.samples = samples,
						.history_source = hist.source,
						.history_url = hist.url,
						.history_note = hist.note,
						.history_from_serve = hist.from_serve,
						.history_counter_results = hist.counter_results,
						.m = &d->m };

		if (rules_json_write(&sb, e, &meta, true)) {
			fprintf(stderr, "rocewatch check: out of memory\n");
			rc = RULES_UNKNOWN;
		} else {
			fwrite(sb.buf, 1, sb.len, stdout);
		}
		sb_free(&sb);
	} else {
		print_text(&o, e, &d->m, samples, (double)(t_last - t_first) / 1e9, &hist);
	}
	if (fflush(stdout)) {
		fprintf(stderr, "rocewatch check: writing the report: %s\n", strerror(errno));
		rc = RULES_UNKNOWN;
	}
fini:
	if (d)
		daemon_fini(d);
	free(d);
	goto free_opts;
nomem:
	fprintf(stderr, "rocewatch check: out of memory\n");
	rc = RULES_UNKNOWN;
free_opts:
	rules_free(e);
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	config_free(&cfg);
	free(opts);
	return rc;
}
