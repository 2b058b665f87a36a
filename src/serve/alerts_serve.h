/* SPDX-License-Identifier: MIT */
/*
 * Alerts inside `serve`: after the rules hook has evaluated, the rule results
 * advance the alert state machine (rules/alerts.c); firing alerts go to
 * /metrics, /api/v1/alerts and the status page (status_serve.c reads the table), are pushed to
 * Alertmanager (exporters/alertmanager.c) and start an incident capture when recording.
 */
#ifndef ROCEWATCH_ALERTS_SERVE_H
#define ROCEWATCH_ALERTS_SERVE_H

#include "alertmanager.h"
#include "recorder.h"
#include "alerts.h"
#include "daemon.h"
#include "rules_serve.h"

struct alerts_serve {
	struct alert_table t;
	struct am_config amc;
	struct am_pusher *am;
	struct rules_serve *rs;
	struct daemon *d;
	struct recorder *rec;
	char generator_url[128];
	uint64_t captures;
	struct alert_latency lat; /* rocewatch_alert_latency_seconds */
	/* the pass the rules stage runs: its stamps, and the counts before it */
	struct alert_stamps st;
	uint64_t fired0, resolved0;
};

void alerts_serve_init(struct alerts_serve *as);
/* --alertmanager.* and --alert.unknown-for; base: struct alerts_serve (cli.h). */
extern const struct cli_opt alerts_serve_opts[];
/* The pusher, for the results of rs (and captures in rec, if any). 0 or -errno (printed). */
int alerts_serve_start(struct alerts_serve *as, struct daemon *d, struct rules_serve *rs,
		       struct recorder *rec, int port);
/* The daemon hook, after the rules' (and the recorder's, if any): serve adds it. */
struct daemon_hook alerts_serve_hook(struct alerts_serve *as);
/* GET /api/v1/alerts (render callback; arg is the alerts_serve, the model lock taken inside). */
int alerts_serve_render_json(void *arg, struct strbuf *out);
void alerts_serve_fini(struct alerts_serve *as);

#endif
