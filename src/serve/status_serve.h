/* SPDX-License-Identifier: MIT */
/*
 * The status page inside `serve`: a daemon hook feeds the rate history of
 * the sparklines after every poll (under the model lock, as every hook), and
 * GET / fills the page's input from the daemon, the rules, the alerts and
 * the Alertmanager pusher, and renders it (exporters/status_page.c).  The
 * history belongs here, not to the page: the page only draws what it is
 * given.
 */
#ifndef ROCEWATCH_STATUS_SERVE_H
#define ROCEWATCH_STATUS_SERVE_H

#include "history.h"
#include "alerts_serve.h"
#include "daemon.h"
#include "rules_serve.h"

struct status_serve {
	struct history hist;
	struct daemon *d;
	struct rules_serve *rs;
	struct alerts_serve *as;
	const char *telemetry_path;
};

/* The page over d, rs and as. 0 or -errno (printed). */
int status_serve_start(struct status_serve *ss, struct daemon *d, struct rules_serve *rs,
		       struct alerts_serve *as, const char *telemetry_path);
/* The daemon hook that feeds its history (after the rules'): serve adds it. */
struct daemon_hook status_serve_hook(struct status_serve *ss);
/* GET / (an http_route render callback; arg is the status_serve). */
int status_serve_render(void *arg, struct strbuf *out);
void status_serve_fini(struct status_serve *ss);

#endif
