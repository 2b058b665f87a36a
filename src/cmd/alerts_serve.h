/* SPDX-License-Identifier: MIT */
/*
 * Alerts inside `serve`: after the rules hook has evaluated, the rule results
 * advance the alert state machine (rules/alerts.c); firing alerts go to
 * /metrics, /api/v1/alerts and the status page (status_serve.c reads the table), are pushed to
 * Alertmanager (exporters/alertmanager.c) and start an incident capture when recording.
 */
#ifndef ROCEWATCH_ALERTS_SERVE_H
#define ROCEWATCH_ALERTS_SERVE_H

#include <getopt.h>

#include "alertmanager.h"
#include "recorder.h"
#include "alerts.h"
#include "daemon.h"
#include "rules_serve.h"

enum {
	OPT_AM_URL = 2100,
	OPT_AM_RESEND,
	OPT_AM_TIMEOUT,
	OPT_ALERT_UNKNOWN_FOR,
};

#define ALERTS_SERVE_OPTIONS                                                            \
	{ "alertmanager.url", required_argument, NULL, OPT_AM_URL },                    \
	    { "alertmanager.resend-interval", required_argument, NULL, OPT_AM_RESEND }, \
	    { "alertmanager.timeout", required_argument, NULL, OPT_AM_TIMEOUT },        \
	{                                                                               \
		"alert.unknown-for", required_argument, NULL, OPT_ALERT_UNKNOWN_FOR     \
	}

#define ALERTS_SERVE_HELP                                                                     \
	"  --alertmanager.url URL     push alerts to this Alertmanager (repeatable)\n"        \
	"  --alertmanager.resend-interval DURATION   re-send firing alerts (default 1m)\n"    \
	"  --alertmanager.timeout DURATION           per request (default 5s)\n"              \
	"  --alert.unknown-for DURATION   raise RoceRuleUnknown after a rule stays\n"      \
	"                             unknown this long (default 1m)\n"

struct alerts_serve {
	struct alert_table t;
	struct am_config amc;
	struct am_pusher *am;
	struct rules_serve *rs;
	struct daemon *d;
	struct recorder *rec;
	char generator_url[128];
	uint64_t captures;
};

void alerts_serve_init(struct alerts_serve *as);
/* One of the options above; 0, or -EINVAL (printed). */
int alerts_serve_option(struct alerts_serve *as, int opt, const char *arg);
/* Hook in after the rules (and the recorder, if any). 0 or -errno (printed). */
int alerts_serve_start(struct alerts_serve *as, struct daemon *d, struct rules_serve *rs,
		       struct recorder *rec, int port);
/* GET /api/v1/alerts (render callback; arg is the alerts_serve, d->lock taken inside). */
int alerts_serve_render_json(void *arg, struct strbuf *out);
void alerts_serve_fini(struct alerts_serve *as);

#endif
