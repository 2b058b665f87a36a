/* SPDX-License-Identifier: MIT */
/*
 * The status page (`/` of serve): what an engineer walking up to a node
 * reads first.  The verdict (as `check` gives it) with the profiles and
 * parameters; the failing and undecided rules with the fix for this node's
 * devices and since when; pending and firing alerts, the Alertmanager
 * deliveries and the last rule reload; per RDMA port, sparklines of the
 * last minutes of pause, retry, out-of-sequence, CNP and discard rates
 * (inline SVG drawn here); the passing rules folded away.  One HTML
 * document, its own CSS, no script, no external asset; it refreshes itself.
 * Every string that comes from the machine is escaped.
 *
 * It renders what it is given (struct status_page_input, filled by serve)
 * and knows nothing of the daemon.  The rates come from a history
 * (history.h) that status_history_feed() fills from the model after each
 * poll: which counters make each sparkline is decided here.
 */
#ifndef ROCEWATCH_STATUS_PAGE_H
#define ROCEWATCH_STATUS_PAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "alertmanager.h"
#include "alerts.h"
#include "engine.h"
#include "history.h"
#include "model.h"
#include "strbuf.h"

#define STATUS_PAGE_REFRESH_S 5

struct status_page_reload {
	bool ok;	   /* the last load (start-up or SIGHUP) succeeded */
	int64_t ns;	   /* realtime of the last load */
	uint64_t reloads;  /* SIGHUP reloads so far (0: loaded at start-up only) */
	uint64_t failures; /* reloads that failed */
	const char *error; /* the last failed reload's first error, or "" */
};

struct status_page_input {
	const char *version;
	const char *host;
	const char *telemetry_path;
	int64_t now_ns;	     /* realtime at rendering: "4 min ago" */
	int64_t poll_ns;     /* realtime of the poll shown */
	int64_t interval_ns; /* the fast loop */
	uint64_t fast_polls, slow_polls;
	bool replay; /* the model comes from --from, not this machine */
	const struct node_model *m;
	const struct rules_engine *e; /* NULL: no rules loaded */
	const struct alert_table *alerts;
	const struct am_status *am; /* n_urls 0: no --alertmanager.url */
	struct status_page_reload reload;
	const struct history *hist;
	int refresh_s; /* 0: STATUS_PAGE_REFRESH_S */
};

/* Append the page to out; 0 or -ENOMEM. */
int status_page_render(struct strbuf *out, const struct status_page_input *in);

/* A history shaped for the page's sparklines; step_ns as history_init(). */
void status_history_init(struct history *h, int64_t step_ns);
/* After a poll: the counters of every RoCE netdev and RDMA port into h (t_ns: the poll). */
void status_history_feed(struct history *h, const struct node_model *m, int64_t t_ns);

#endif
