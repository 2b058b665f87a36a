// SPDX-License-Identifier: MIT
/*
 * rocewatch replay: the rules run over a recording (or a capture) poll by
 * poll, in time order, at the time each poll was taken: the node model is
 * rebuilt from the recorded rows, the rule engine evaluates it (rate(),
 * increase() and delta() see the recorded counters at their real times), and
 * the alert state machine (for:, unknown_for) says when each alert would have
 * fired and resolved.  Rules can be newer than the recording: "would my new
 * rule have caught last night's incident?"
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../exporters/recording.h"
#include "../rules/alerts.h"
#include "../rules/engine.h"
#include "cli.h"
#include "commands.h"
#include "util.h"

static const char replay_usage[] =
    "Usage: rocewatch replay (CAPTURE | --db DIR) [--profile NAME|FILE]... [--param KEY=VALUE]...\n"
    "                        [--since T] [--until T] [--format text|json]\n\n"
    "Run the rule profiles over a recording (serve --record DIR) or a capture file,\n"
    "poll by poll at the recorded times, and print when each alert would have fired\n"
    "and resolved (for: and counter functions included).  The rules need not be the\n"
    "ones serve ran: replay a new rule against an old incident.\n\n"
    "Options:\n"
    "  --db DIR                   the recording directory (or its rocewatch.db)\n"
    "  --profile NAME|FILE        profile to run (repeatable; default " RULES_DEFAULT_PROFILE ")\n"
    "  --param KEY=VALUE          override a profile parameter (repeatable)\n"
    "  --since T, --until T       print transitions in this window only: RFC 3339,\n"
    "                             'now', or relative (-10m); the rules still see the\n"
    "                             polls before it, from the keyframe at or before T\n"
    "  --format text|json         output (default text); -j is json\n"
    "  -h, --help                 this help\n\n"
    "Exit status: 0 no alert fired, 1 a warning alert fired, 2 a critical alert fired,\n"
    "3 the recording or the rules cannot be read, or bad usage.\n";

struct transition {
	int64_t t_ms;
	bool fired; /* else resolved */
	char alertname[64], rule[64], severity[16], profile[64], device[64], port[12];
	char summary[256], value[96];
	int64_t since_ms; /* resolved: when it fired */
};

struct replay {
	struct rec_reader rd;
	struct rules_engine *e;
	struct alert_table at;
	struct node_model m;
	struct transition *tr;
	size_t n_tr, cap_tr;
	size_t n_window_polls;
	int64_t win_first, win_last;
	bool warned, oom;
	int eval_errors;
};

static void on_sample(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const struct rec_value *v)
{
	struct replay *rp = arg;

	(void)p;
	rec_model_sample(&rp->m, s, v);
}

static void on_config(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const char *json, const char *absent)
{
	struct replay *rp = arg;
	char err[256];

	(void)p;
	if (rec_model_config(&rp->m, s, json, absent, err, sizeof(err)) && !rp->warned) {
		rp->warned = true; /* a value a newer rocewatch wrote: say so once */
		fprintf(stderr, "rocewatch replay: %s: %s (that field stays absent)\n", rp->rd.path,
			err);
	}
}

static void add_transition(struct replay *rp, const struct alert *a, bool fired, int64_t t_ms)
{
	struct transition *t;

	if (rp->n_tr == rp->cap_tr) {
		size_t nc = rp->cap_tr ? rp->cap_tr * 2 : 32;
		void *np = realloc(rp->tr, nc * sizeof(*rp->tr));

		if (!np) {
			rp->oom = true;
			return;
		}
		rp->tr = np;
		rp->cap_tr = nc;
	}
	t = &rp->tr[rp->n_tr++];
	memset(t, 0, sizeof(*t));
	t->t_ms = t_ms;
	t->fired = fired;
	t->since_ms = a->fired_at / 1000000;
	strlcpy0(t->alertname, a->alertname, sizeof(t->alertname));
	strlcpy0(t->rule, a->rule, sizeof(t->rule));
	strlcpy0(t->severity, a->severity, sizeof(t->severity));
	strlcpy0(t->profile, a->profile, sizeof(t->profile));
	strlcpy0(t->device, a->device, sizeof(t->device));
	strlcpy0(t->port, a->port, sizeof(t->port));
	strlcpy0(t->summary, a->summary, sizeof(t->summary));
	strlcpy0(t->value, a->value, sizeof(t->value));
}

static void on_poll_end(void *arg, const struct rec_poll *p)
{
	struct replay *rp = arg;
	int64_t now = p->t_ms * 1000000;

	rec_model_sweep(&rp->m);
	model_link_ports(&rp->m);
	rp->m.time.tv_sec = p->t_ms / 1000;
	rp->m.time.tv_nsec = (p->t_ms % 1000) * 1000000;
	if (rules_evaluate(rp->e, &rp->m, now)) {
		rp->eval_errors++;
		return;
	}
	alerts_feed_rules(&rp->at, rp->e, now);
	for (size_t i = 0; i < rp->at.n; i++) {
		struct alert *a = &rp->at.a[i];

		if (p->in_window && a->state == ALERT_FIRING && a->fired_at == now)
			add_transition(rp, a, true, p->t_ms);
		if (p->in_window && a->resolved && a->resolved_at == now)
			add_transition(rp, a, false, p->t_ms);
		a->resolved = false; /* reported (or before the window): nobody delivers it */
	}
	alerts_gc(&rp->at, false);
	if (p->in_window) {
		if (!rp->n_window_polls++)
			rp->win_first = p->t_ms;
		rp->win_last = p->t_ms;
	}
}

static const char *where(const struct transition *t, char *buf, size_t len)
{
	if (t->port[0])
		snprintf(buf, len, "%s/%s", t->device, t->port);
	else
		snprintf(buf, len, "%s", t->device[0] ? t->device : "node");
	return buf;
}

static void write_text(const struct replay *rp, FILE *f)
{
	char a[40], b[40], obj[96];
	size_t firing = 0;

	rec_format_time(rp->win_first, a, sizeof(a));
	rec_format_time(rp->win_last, b, sizeof(b));
	fprintf(f, "rocewatch replay: %s, %s .. %s, %zu polls; ",
		rp->rd.host[0] ? rp->rd.host : "?", a, b, rp->n_window_polls);
	for (size_t p = 0; p < rules_profile_count(rp->e); p++)
		fprintf(f, "%sprofile %s (%zu rules)", p ? ", " : "", rules_profile(rp->e, p)->name,
			rules_profile(rp->e, p)->n_rules);
	fputc('\n', f);
	if (!rp->n_tr)
		fprintf(f, "no alert would have fired or resolved.\n");
	for (size_t i = 0; i < rp->n_tr; i++) {
		const struct transition *t = &rp->tr[i];

		rec_format_time(t->t_ms, a, sizeof(a));
		if (t->fired)
			fprintf(f, "%s  FIRING    %-32s %-14s %-8s %s%s%s\n", a, t->alertname,
				where(t, obj, sizeof(obj)), t->severity,
				strcmp(t->alertname, t->rule) && t->rule[0] ? t->rule : t->summary,
				t->value[0] ? " -- " : "", t->value);
		else
			fprintf(f, "%s  RESOLVED  %-32s %-14s after %.1f s\n", a, t->alertname,
				where(t, obj, sizeof(obj)), (double)(t->t_ms - t->since_ms) / 1e3);
	}
	for (size_t i = 0; i < rp->at.n; i++)
		firing += rp->at.a[i].state == ALERT_FIRING;
	if (firing) {
		fprintf(f, "still firing at the end:");
		for (size_t i = 0; i < rp->at.n; i++) {
			const struct alert *x = &rp->at.a[i];

			if (x->state == ALERT_FIRING)
				fprintf(f, " %s%s%s", x->alertname, x->device[0] ? "@" : "",
					x->device);
		}
		fputc('\n', f);
	}
}

static int write_json(const struct replay *rp, FILE *f)
{
	json_t *root = json_object(), *arr = json_array(), *profs = json_array();
	char a[40];
	int r;

	json_object_set_new(root, "host", json_string(rp->rd.host));
	json_object_set_new(root, "source", json_string(rp->rd.path));
	rec_format_time(rp->win_first, a, sizeof(a));
	json_object_set_new(root, "from", json_string(a));
	rec_format_time(rp->win_last, a, sizeof(a));
	json_object_set_new(root, "to", json_string(a));
	json_object_set_new(root, "polls", json_integer((json_int_t)rp->n_window_polls));
	for (size_t p = 0; p < rules_profile_count(rp->e); p++)
		json_array_append_new(profs, json_string(rules_profile(rp->e, p)->name));
	json_object_set_new(root, "profiles", profs);
	for (size_t i = 0; i < rp->n_tr; i++) {
		const struct transition *t = &rp->tr[i];
		json_t *o;

		rec_format_time(t->t_ms, a, sizeof(a));
		o = json_pack("{s:s,s:s,s:I,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "state",
			      t->fired ? "firing" : "resolved", "time", a, "time_unix_ms",
			      (json_int_t)t->t_ms, "alertname", t->alertname, "rule",
			      t->rule[0] ? t->rule : t->alertname, "severity", t->severity,
			      "profile", t->profile, "device", t->device, "summary", t->summary,
			      "value", t->value);
		if (!o)
			continue;
		if (t->port[0])
			json_object_set_new(o, "port", json_string(t->port));
		if (!t->fired)
			json_object_set_new(o, "fired_unix_ms", json_integer(t->since_ms));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "transitions", arr);
	r = json_dumpf(root, f, JSON_INDENT(2));
	fputc('\n', f);
	json_decref(root);
	return r ? -EIO : 0;
}

enum {
	OPT_DB = 1,
	OPT_PROFILE,
	OPT_PARAM,
	OPT_SINCE,
	OPT_UNTIL,
	OPT_FORMAT
};

int cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, OPT_DB },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct replay *rp = calloc(1, sizeof(*rp));
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rec_scan_ops ops = { .sample = on_sample,
				    .config = on_config,
				    .poll_end = on_poll_end };
	const char *db = NULL;
	int64_t since = INT64_MIN, until = INT64_MAX, now_ms = real_ns() / 1000000;
	bool json = false;
	char err[512] = "";
	int opt, rc = 3, r;

	if (!rp) {
		fprintf(stderr, "rocewatch replay: out of memory\n");
		return 3;
	}
	model_init(&rp->m);
	alerts_init(&rp->at);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hj", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			fputs(replay_usage, stdout);
			rc = 0;
			goto free_rp;
		case OPT_DB:
			db = optarg;
			break;
		case OPT_PROFILE:
		case OPT_PARAM:
			r = opt == OPT_PROFILE ? rules_spec_add_profile(&spec, optarg)
					       : rules_spec_add_param(&spec, optarg);
			if (r) {
				fprintf(stderr, "rocewatch replay: --%s '%s': %s\n",
					opt == OPT_PROFILE ? "profile" : "param", optarg,
					r == -EINVAL ? "expected KEY=VALUE" : "out of memory");
				goto free_rp;
			}
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (rec_parse_time(optarg, now_ms, opt == OPT_SINCE ? &since : &until)) {
				fprintf(stderr,
					"rocewatch replay: --%s: '%s' is not a time (RFC 3339, "
					"'now' or -10m)\n",
					opt == OPT_SINCE ? "since" : "until", optarg);
				goto free_rp;
			}
			break;
		case 'j':
			json = true;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				fprintf(stderr,
					"rocewatch replay: --format: '%s' is not text or json\n",
					optarg);
				goto free_rp;
			}
			json = !strcmp(optarg, "json");
			break;
		default:
			cli_bad_option("replay", argv, optind);
			goto free_rp;
		}
	}
	if (optind < argc && !db)
		db = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "rocewatch replay: unexpected argument '%s'\n", argv[optind]);
		goto free_rp;
	}
	if (!db) {
		fprintf(stderr, "rocewatch replay: which recording? a capture file or --db DIR\n");
		goto free_rp;
	}
	r = rules_load(&spec, &rp->e, &dg);
	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch replay: %s\n", line);
	}
	if (r)
		goto free_rp;
	r = rec_open(&rp->rd, db, err, sizeof(err));
	if (!r)
		r = rec_load(&rp->rd, since, until, err, sizeof(err));
	if (!r)
		r = rec_scan(&rp->rd, &ops, rp, err, sizeof(err));
	if (r || rp->oom) {
		fprintf(stderr, "rocewatch replay: %s\n", r ? err : "out of memory");
		goto free_rp;
	}
	if (!rp->n_window_polls) { /* say which window was empty, not 1970 */
		rp->win_first = since == INT64_MIN ? rp->rd.first_ms : since;
		rp->win_last = until == INT64_MAX ? rp->rd.last_ms : until;
		if (rp->win_last < rp->win_first)
			rp->win_last = rp->win_first;
	}
	if (rp->eval_errors)
		fprintf(stderr,
			"rocewatch replay: %d polls could not be evaluated (out of memory)\n",
			rp->eval_errors);
	if (json)
		r = write_json(rp, stdout);
	else
		write_text(rp, stdout);
	if (fflush(stdout) || r) {
		fprintf(stderr, "rocewatch replay: write error\n");
		goto free_rp;
	}
	rc = 0;
	for (size_t i = 0; i < rp->n_tr; i++)
		if (rp->tr[i].fired) {
			int sev = !strcmp(rp->tr[i].severity, "critical")  ? 2
				  : !strcmp(rp->tr[i].severity, "warning") ? 1
									   : 0;

			if (sev > rc)
				rc = sev;
		}
free_rp:
	rules_diags_free(&dg);
	rules_spec_free(&spec);
	rules_free(rp->e);
	alerts_free(&rp->at);
	model_free(&rp->m);
	rec_close(&rp->rd);
	free(rp->tr);
	free(rp);
	return rc;
}
