// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "prom.h"
#include "prom_rules.h"
#include "alerts_serve.h"
#include "rules_stage.h"
#include "util.h"

void alerts_serve_init(struct alerts_serve *as)
{
	memset(as, 0, sizeof(*as));
	alerts_init(&as->t);
	alert_latency_init(&as->lat);
}

/* --alertmanager.url, repeatable: one more of the member's URLs. */
static int opt_am_url(const struct cli_opt *o, void *member, const char *arg)
{
	struct am_config *amc = member;

	if (amc->n_urls >= AM_MAX_URLS) {
		fprintf(stderr, "rocewatch serve: --%s: at most %d\n", o->name, AM_MAX_URLS);
		return -EINVAL;
	}
	amc->urls[amc->n_urls++] = arg;
	return 0;
}

/* "pfc_on", or "RoceRuleUnknown(pfc_on)": the rule, whichever alert it is. */
static const char *event_name(const struct alert *a, char *buf, size_t len)
{
	if (!a->rule[0])
		return a->alertname;
	snprintf(buf, len, "%s(%s)", a->alertname, a->rule);
	return buf;
}
#define AS_DURATION(n, member, least, text)                                             \
	{                                                                               \
		.name = n, CLI_DURATION_AT(struct alerts_serve, member), .min = least,  \
		.bad = "a duration (e.g. 30s, 1m)", .metavar = "DURATION", .help = text \
	}
const struct cli_opt alerts_serve_opts[] = {
	{ .name = "alertmanager.url",
	  CLI_CALL_AT(struct alerts_serve, amc, opt_am_url),
	  .metavar = "URL",
	  .help = "push alerts to this Alertmanager (repeatable)" },
	AS_DURATION("alertmanager.resend-interval", amc.resend_ns, 1,
		    "   re-send firing alerts (default 1m)"),
	AS_DURATION("alertmanager.timeout", amc.timeout_ns, 1,
		    "           per request (default 5s)"),
	AS_DURATION("alert.unknown-for", t.unknown_for_ns, 0,
		    "   raise RoceRuleUnknown after a rule stays\n"
		    "unknown this long (default 1m)"),
	{ 0 },
};
#undef AS_DURATION

/*
 * Firing when the last serve stopped, passing now: a rule that passes has no
 * alert, so its results say it.  The recording is told once (it forgets
 * what it was asked), and the alert's next firing is a new one.
 */
static void note_ended_unseen(struct alerts_serve *as, int64_t now)
{
	const struct rule_result *res;
	size_t n = rules_results(as->rs->e, &res);

	for (size_t i = 0; i < n; i++) {
		const struct rule_result *r = &res[i];
		char port[12] = "";

		if (r->eval_ns != now || r->outcome == RULE_FAIL)
			continue;
		if (r->kind == OBJ_RDMA_PORT)
			snprintf(port, sizeof(port), "%u", r->port);
		if (alerts_find(&as->t, r->rule->name, "", r->rule->profile, r->device, port))
			continue; /* its alert says it, below */
		if (recorder_alert_was_standing(as->rec, r->device, r->rule->name))
			recorder_event(as->rec, now / 1000000, "alert", port[0] ? "rdma_port" : "",
				       r->device, r->rule->name,
				       "resolved (before or while this serve started)");
	}
}

/* The rules stage's fed(): the alerts are moved, their latency stages begin. */
static void on_fed(void *arg, int64_t now)
{
	struct alerts_serve *as = arg;

	if (as->rec && recorder_any_standing(as->rec))
		note_ended_unseen(as, now);
	as->st.t[AL_MODEL] = daemon_pass(as->d)->model_ns;
	as->st.t[AL_RULES] = as->rs->eval_done_ns;
	as->st.t[AL_ALERT] = mono_ns();
}

/* The rules stage's alert(): one alert after the results moved it; log, record, capture. */
static void on_alert(void *arg, struct alert *a, int64_t now)
{
	struct alerts_serve *as = arg;
	bool standing = false;
	char name[140];

	/*
	 * the event names the rule (RoceRuleUnknown's own name says none) and
	 * what fired, so a report read later needs nothing else
	 */
	if (a->resolved && a->resolved_at == now) {
		if (as->rec)
			recorder_event(as->rec, now / 1000000, "alert",
				       a->port[0] ? "rdma_port" : "", a->device,
				       event_name(a, name, sizeof(name)), "resolved");
		/* the log says an incident's end as it said its start */
		log_info("alert resolved: %s%s%s%s%s", a->alertname, a->device[0] ? " " : "",
			 a->device, a->port[0] ? "/" : "", a->port);
	}
	/*
	 * firing when the last serve stopped, passing now: it ended while
	 * nobody watched; the recording says so, and its next firing is new
	 */
	if (as->rec && a->state == ALERT_INACTIVE && a->last_eval == now &&
	    recorder_any_standing(as->rec) &&
	    recorder_alert_was_standing(as->rec, a->device, event_name(a, name, sizeof(name))))
		recorder_event(as->rec, now / 1000000, "alert", a->port[0] ? "rdma_port" : "",
			       a->device, event_name(a, name, sizeof(name)),
			       "resolved (before or while this serve started)");
	if (a->state != ALERT_FIRING || a->fired_at != now)
		return;
	if (as->rec) {
		char detail[340];

		standing = recorder_alert_was_standing(as->rec, a->device,
						       event_name(a, name, sizeof(name)));
		snprintf(detail, sizeof(detail), "firing%s: %s",
			 standing ? " (already when the last serve stopped)" : "", a->summary);
		recorder_event(as->rec, now / 1000000, "alert", a->port[0] ? "rdma_port" : "",
			       a->device, event_name(a, name, sizeof(name)), detail);
	}
	log_warn("alert firing: %s%s%s%s%s: %s", a->alertname, a->device[0] ? " " : "", a->device,
		 a->port[0] ? "/" : "", a->port, a->summary);
	/*
	 * The incident starts now: keep the minutes around it at full
	 * resolution -- unless it was firing when the last serve stopped
	 * (a restart is no new incident; that one's capture was written)
	 */
	if (as->rec && strcmp(a->alertname, ALERT_UNKNOWN_NAME) && !standing &&
	    !recorder_capture(as->rec, a->alertname, NULL, 0))
		as->captures++;
}

/* The rules stage's deliver(): to Alertmanager, which takes the resolved ones too. */
static bool on_deliver(void *arg, struct alert_table *t, int64_t now)
{
	struct alerts_serve *as = arg;

	/* a state changed in this pass: its stages are latency (a resend's are not) */
	if (t->fired_total != as->fired0 || t->resolved_total != as->resolved0)
		alert_latency_observe(&as->lat, &as->st, AL_MODEL, AL_ALERT);
	else
		as->st.origin = 0;
	am_submit(as->am, t, now, as->st.origin ? &as->st : NULL);
	return as->am != NULL;
}

/*
 * After the rules hook: the rules stage moves the alerts with the results
 * -> Alertmanager and captures, at now (realtime); event: an event pass,
 * where only some results were made again.
 */
static void advance(struct alerts_serve *as, int64_t now, bool event)
{
	const struct rules_stage st = { .e = as->rs->e,
					.alerts = &as->t,
					.fed = on_fed,
					.alert = on_alert,
					.deliver = on_deliver,
					.arg = as };
	const struct rules_pass pass = { .now_ns = now, .event = event };

	if (!as->rs->e)
		return;
	as->st = (struct alert_stamps){ .origin = daemon_pass(as->d)->origin_ns };
	as->fired0 = as->t.fired_total;
	as->resolved0 = as->t.resolved_total;
	rules_stage_alerts(&st, &pass);
}

static void after_poll(void *arg, struct node_model *m, unsigned what)
{
	(void)what;
	advance(arg, ts_ns(&m->time), false);
}

/* An event pass: a `for: 0` rule that fails now is sent now, not at the next poll. */
static void after_event(void *arg, struct node_model *m, const struct daemon_event *ev)
{
	(void)m;
	advance(arg, ev->t_ns, true);
}

static void render(struct strbuf *sb, void *arg)
{
	struct alerts_serve *as = arg;

	prom_alerts_render(sb, &as->t);
	prom_family(sb, "rocewatch_alerts_fired_total", "counter",
		    "Alerts that started firing since rocewatch started.");
	prom_sample1_u64(sb, "rocewatch_alerts_fired_total", NULL, NULL, as->t.fired_total);
	prom_family(sb, "rocewatch_alerts_resolved_total", "counter",
		    "Firing alerts that resolved since rocewatch started.");
	prom_sample1_u64(sb, "rocewatch_alerts_resolved_total", NULL, NULL, as->t.resolved_total);
	alert_latency_render(&as->lat, sb);
	am_render_metrics(as->am, sb);
}

int alerts_serve_start(struct alerts_serve *as, struct daemon *d, struct rules_serve *rs,
		       struct recorder *rec, int port)
{
	char err[256] = "";
	int r;

	as->rs = rs;
	as->rec = rec;
	as->d = d;
	snprintf(as->generator_url, sizeof(as->generator_url), "http://%s:%d/", daemon_host(d),
		 port);
	if (as->amc.n_urls) {
		as->amc.instance = daemon_host(d);
		as->amc.generator_url = as->generator_url;
		as->amc.latency = &as->lat;
		r = am_start(&as->am, &as->amc, err, sizeof(err));
		if (r) {
			fprintf(stderr, "rocewatch serve: %s\n", err[0] ? err : strerror(-r));
			return r;
		}
	}
	return 0;
}

struct daemon_hook alerts_serve_hook(struct alerts_serve *as)
{
	return (struct daemon_hook){ .name = "alerts",
				     .after_poll = after_poll,
				     .after_event = after_event,
				     .render = render,
				     .arg = as };
}

static const char *state_name(enum alert_state s)
{
	return s == ALERT_FIRING ? "firing" : s == ALERT_PENDING ? "pending" : "inactive";
}

int alerts_serve_render_json(void *arg, struct strbuf *out)
{
	struct alerts_serve *as = arg;
	json_t *root = json_object(), *list = json_array();
	char ts[40];
	char *s;

	daemon_model_lock(as->d);
	for (size_t i = 0; i < as->t.n; i++) {
		const struct alert *a = &as->t.a[i];
		json_t *j, *l, *an;

		if (a->state == ALERT_INACTIVE)
			continue;
		l = json_pack("{s:s,s:s,s:s}", "alertname", a->alertname, "severity", a->severity,
			      "instance", daemon_host(as->d));
		if (a->profile[0])
			json_object_set_new(l, "profile", json_string(a->profile));
		if (a->device[0])
			json_object_set_new(l, "device", json_string(a->device));
		if (a->port[0])
			json_object_set_new(l, "port", json_string(a->port));
		if (a->rule[0])
			json_object_set_new(l, "rule", json_string(a->rule));
		an = json_pack("{s:s,s:s}", "summary", a->summary, "description",
			       a->description ? a->description : "");
		format_rfc3339(a->active_since, ts, sizeof(ts));
		j = json_pack("{s:o,s:o,s:s,s:s,s:s}", "labels", l, "annotations", an, "state",
			      state_name(a->state), "activeAt", ts, "value", a->value);
		if (a->state == ALERT_FIRING) {
			format_rfc3339(a->fired_at, ts, sizeof(ts));
			json_object_set_new(j, "firedAt", json_string(ts));
		}
		json_array_append_new(list, j);
	}
	daemon_model_unlock(as->d);
	json_object_set_new(root, "status", json_string("success"));
	json_object_set_new(root, "data", json_pack("{s:o}", "alerts", list));
	s = json_dumps(root, JSON_INDENT(2));
	json_decref(root);
	if (!s) {
		sb_puts(out, "{\"status\":\"error\"}\n");
		return 500;
	}
	sb_puts(out, s);
	sb_putc(out, '\n');
	free(s);
	return 200;
}

void alerts_serve_fini(struct alerts_serve *as)
{
	am_stop(as->am);
	as->am = NULL;
	alerts_free(&as->t);
	alert_latency_fini(&as->lat);
}
