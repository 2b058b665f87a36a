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
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "alerts.h"
#include "daemon.h"
#include "engine.h"
#include "model_source.h"
#include "recording.h"
#include "rules_stage.h"
#include "pm_text.h"
#include "replay.h"
#include "util.h"

struct transition {
	int64_t t_ms;
	bool fired; /* else resolved */
	char alertname[64], rule[64], severity[16], profile[64], device[64], port[12];
	char cls[12], action[32]; /* what the verdict counts it as, what to do; "" none */
	char summary[256], value[96];
	int64_t since_ms; /* resolved: when it fired */
};

struct replay {
	/* serve's engine: the daemon over the recording, and the one rules stage */
	struct rw_config cfg;
	struct daemon *d;
	struct model_source *src; /* the daemon's: the recording */
	const struct rec_reader *rd;
	const struct rec_poll *last; /* the poll the rules last ran over */
	struct rules_stage stage;
	int width; /* of the text */
	struct rules_engine *e;
	const struct replay_rules *rules; /* or NULL */
	struct alert_table at;
	struct transition *tr;
	size_t n_tr, cap_tr;
	size_t n_window_polls;
	int64_t win_first, win_last;
	bool in_window, oom;
	int eval_errors;
};

static void add_transition(struct replay *rp, const struct alert *a, bool fired, int64_t t_ms)
{
	struct transition *t;

	if (array_grow(&rp->tr, &rp->cap_tr, rp->n_tr, sizeof(*rp->tr), 32)) {
		rp->oom = true;
		return;
	}
	t = &rp->tr[rp->n_tr++];
	memset(t, 0, sizeof(*t));
	t->t_ms = t_ms;
	t->fired = fired;
	t->since_ms = a->fired_at / 1000000;
	strlcpy0(t->alertname, a->alertname, sizeof(t->alertname));
	strlcpy0(t->rule, a->rule, sizeof(t->rule));
	strlcpy0(t->severity, a->severity, sizeof(t->severity));
	strlcpy0(t->cls, a->cls, sizeof(t->cls));
	strlcpy0(t->action, a->action, sizeof(t->action));
	strlcpy0(t->profile, a->profile, sizeof(t->profile));
	strlcpy0(t->device, a->device, sizeof(t->device));
	strlcpy0(t->port, a->port, sizeof(t->port));
	strlcpy0(t->summary, a->summary, sizeof(t->summary));
	strlcpy0(t->value, a->value, sizeof(t->value));
}

/* The alerts as the rules moved them: those that fired or resolved in the window are listed. */
static void on_alert(void *arg, struct alert *a, int64_t now)
{
	struct replay *rp = arg;

	if (!rp->in_window)
		return; /* before the window: the polls only build the state */
	if (a->state == ALERT_FIRING && a->fired_at == now)
		add_transition(rp, a, true, now / 1000000);
	if (a->resolved && a->resolved_at == now)
		add_transition(rp, a, false, now / 1000000);
}

/* The daemon's hook, after every recorded poll: serve's rules stage at the poll's time. */
static void after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct replay *rp = arg;
	const struct rec_poll *p = recording_source_poll(rp->src);
	struct rules_pass pass = { 0 };

	(void)what;
	if (!p || p == rp->last)
		return; /* no poll was read (past the end) */
	rp->last = p;
	pass.now_ns = p->t_ms * 1000000;
	rp->in_window = p->in_window;
	if (rules_stage_run(&rp->stage, m, &pass)) {
		rp->eval_errors++;
		return;
	}
	if (p->in_window) {
		if (!rp->n_window_polls++)
			rp->win_first = p->t_ms;
		rp->win_last = p->t_ms;
	}
}

/* One name for an object everywhere in the report: mlx5_0/1, eth2, node. */
static const char *object_name(const char *device, const char *port, char *buf, size_t len)
{
	if (port[0])
		snprintf(buf, len, "%s/%s", device, port);
	else
		snprintf(buf, len, "%s", device[0] ? device : "node");
	return buf;
}

static const char *where(const struct transition *t, char *buf, size_t len)
{
	return object_name(t->device, t->port, buf, len);
}

static void write_text(const struct replay *rp, FILE *f)
{
	char a[40], b[40], obj[96], head[320], text[4096];
	size_t firing = 0, len;
	int w = rp->width;

	rec_format_time(rp->win_first, a, sizeof(a));
	rec_format_time(rp->win_last, b, sizeof(b));
	len = (size_t)snprintf(text, sizeof(text), "rocewatch replay: %s, %s .. %s, %zu polls; ",
			       rp->rd->host[0] ? rp->rd->host : "?", a, b, rp->n_window_polls);
	for (size_t p = 0; p < rules_profile_count(rp->e) && len < sizeof(text); p++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%sprofile %s (%zu rules)",
					p ? ", " : "", rules_profile(rp->e, p)->name,
					rules_profile(rp->e, p)->n_rules);
	pm_wrap(f, 0, w, 2, text);
	/* where the rules and their parameters came from, and what is not serve's */
	for (size_t i = 0; rp->rules && i < rp->rules->n_notes; i++)
		pm_wrap(f, 0, w, 2, rp->rules->notes[i]);
	if (!rp->n_tr)
		fprintf(f, "no alert would have fired or resolved.\n");
	/* a row: when, FIRING/RESOLVED, the alert and its object; its text beside or below */
	for (size_t i = 0; i < rp->n_tr; i++) {
		const struct transition *t = &rp->tr[i];
		/* RoceRuleUnknown names the rule it is about */
		bool other = strcmp(t->alertname, t->rule) && t->rule[0];

		rec_format_time(t->t_ms, a, sizeof(a));
		/* the value behind it, when it says more than the summary (an unknown's reason) */
		bool more = t->value[0] && strncmp(t->summary, t->value, strlen(t->value));

		if (t->fired) {
			char tag[64];

			/* beside the severity: would it drain the node, and what to do */
			snprintf(tag, sizeof(tag), "%s%s%s%s%s", t->cls,
				 t->cls[0] && t->action[0] ? ", " : "",
				 t->action[0] ? "action: " : "", t->action,
				 t->cls[0] || t->action[0] ? "; " : "");
			snprintf(head, sizeof(head), "%s  FIRING    %-32s %-14s %-8s", a,
				 t->alertname, where(t, obj, sizeof(obj)), t->severity);
			snprintf(text, sizeof(text), "%s%s%s%s", tag, other ? t->rule : t->summary,
				 more ? " -- " : "", more ? t->value : "");
		} else {
			snprintf(head, sizeof(head), "%s  RESOLVED  %-32s %-14s", a, t->alertname,
				 where(t, obj, sizeof(obj)));
			snprintf(text, sizeof(text), "after %.1f s%s%s",
				 (double)(t->t_ms - t->since_ms) / 1e3, other ? ": " : "",
				 other ? t->rule : "");
		}
		pm_row(f, w, 4, head, text);
	}
	for (size_t i = 0; i < rp->at.n; i++)
		firing += rp->at.a[i].state == ALERT_FIRING;
	if (firing) {
		len = (size_t)snprintf(text, sizeof(text), "still firing at the end:");
		/* the failing rules first, then the undecided ones (with their rule) */
		for (int unk = 0; unk < 2; unk++)
			for (size_t i = 0; i < rp->at.n && len < sizeof(text); i++) {
				const struct alert *x = &rp->at.a[i];

				if (x->state != ALERT_FIRING || (x->rule[0] != 0) != unk)
					continue;
				len += (size_t)snprintf(
				    text + len, sizeof(text) - len, " %s%s%s%s@%s", x->alertname,
				    unk ? "(" : "", unk ? x->rule : "", unk ? ")" : "",
				    object_name(x->device, x->port, obj, sizeof(obj)));
			}
		pm_wrap(f, 0, w, 2, text);
	}
}

static int write_json(const struct replay *rp, FILE *f)
{
	json_t *root = json_object(), *arr = json_array(), *profs = json_array();
	char a[40];
	int r;

	json_object_set_new(root, "host", json_string(rp->rd->host));
	json_object_set_new(root, "source", json_string(rp->rd->path));
	rec_format_time(rp->win_first, a, sizeof(a));
	json_object_set_new(root, "from", json_string(a));
	rec_format_time(rp->win_last, a, sizeof(a));
	json_object_set_new(root, "to", json_string(a));
	json_object_set_new(root, "polls", json_integer((json_int_t)rp->n_window_polls));
	for (size_t p = 0; p < rules_profile_count(rp->e); p++)
		json_array_append_new(profs, json_string(rules_profile(rp->e, p)->name));
	json_object_set_new(root, "profiles", profs);
	if (rp->rules) {
		json_t *notes = json_array(), *params = json_array();

		json_object_set_new(root, "rules_recorded", json_boolean(rp->rules->recorded));
		for (size_t i = 0; i < rp->rules->n_notes; i++)
			json_array_append_new(notes, json_string(rp->rules->notes[i]));
		json_object_set_new(root, "notes", notes);
		for (size_t i = 0; i < rp->rules->n_params; i++) {
			const struct replay_param *x = &rp->rules->params[i];

			json_array_append_new(
			    params, json_pack("{s:s,s:s,s:s,s:s}", "profile", x->profile, "name",
					      x->name, "value", x->value, "from", x->from));
		}
		json_object_set_new(root, "parameters", params);
	}
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
		if (t->cls[0])
			json_object_set_new(o, "class", json_string(t->cls));
		if (t->action[0])
			json_object_set_new(o, "action", json_string(t->action));
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

/* The daemon over the recording, the rules stage hooked in: 0 or -errno with err set. */
static int replay_open(struct replay *rp, const struct replay_opts *o, char *err, size_t errlen)
{
	const struct daemon_hook hook = { .name = "replay", .after_poll = after_poll, .arg = rp };
	int r = recording_source_open(&rp->src, o->db, o->since_ms, o->until_ms, "rocewatch replay",
				      err, errlen);

	if (r)
		return r;
	rp->rd = recording_source_reader(rp->src);
	r = daemon_open(&rp->d, &rp->cfg, rp->src); /* the recording is its own from now on */
	if (r) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	rp->stage =
	    (struct rules_stage){ .e = rp->e, .alerts = &rp->at, .alert = on_alert, .arg = rp };
	r = daemon_reserve_hooks(rp->d, 1);
	if (!r)
		r = daemon_add_hook(rp->d, &hook);
	if (r)
		snprintf(err, errlen, "%s", strerror(-r));
	return r;
}

int replay_run(struct replay **out, const struct replay_opts *o, char *err, size_t errlen)
{
	struct replay *rp = calloc(1, sizeof(*rp));
	int r;

	*out = rp;
	if (!rp) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	alerts_init(&rp->at);
	rp->e = o->e;
	rp->rules = o->rules;
	rp->width = o->width > 0 ? o->width : PM_DEFAULT_WIDTH;
	r = replay_open(rp, o, err, errlen);
	if (r)
		return r;
	/* poll by poll, as serve's loop would have: the source says how many there are */
	for (size_t i = daemon_samples(rp->d); i && !r; i--)
		r = daemon_collect(rp->d, COLLECT_FAST | COLLECT_SLOW);
	rec_bad_summary(recording_source_reader(rp->src));
	if (r) {
		snprintf(err, errlen, "%s", recording_source_error(rp->src));
		return r;
	}
	if (rp->oom) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (!rp->n_window_polls) { /* say which window was empty, not 1970 */
		rp->win_first = o->since_ms == INT64_MIN ? rp->rd->first_ms : o->since_ms;
		rp->win_last = o->until_ms == INT64_MAX ? rp->rd->last_ms : o->until_ms;
		if (rp->win_last < rp->win_first)
			rp->win_last = rp->win_first;
	}
	return 0;
}

int replay_write(const struct replay *rp, bool json, FILE *f)
{
	if (json)
		return write_json(rp, f);
	write_text(rp, f);
	return 0;
}

int replay_worst_fired(const struct replay *rp)
{
	int worst = 0;

	for (size_t i = 0; i < rp->n_tr; i++)
		if (rp->tr[i].fired) {
			int sev = !strcmp(rp->tr[i].severity, "critical")  ? 2
				  : !strcmp(rp->tr[i].severity, "warning") ? 1
									   : 0;

			if (sev > worst)
				worst = sev;
		}
	return worst;
}

int replay_eval_errors(const struct replay *rp)
{
	return rp->eval_errors;
}

void replay_free(struct replay *rp)
{
	if (!rp)
		return;
	alerts_free(&rp->at);
	daemon_close(rp->d); /* and the recording with it */
	free(rp->tr);
	free(rp);
}
