/* SPDX-License-Identifier: MIT */
/*
 * Push alerts to Alertmanager's v2 API (libcurl) from a thread of its own:
 * the poll loop only builds a batch and enqueues it, so a dead or slow
 * Alertmanager never blocks polling or scraping.
 */
#ifndef ROCEWATCH_ALERTMANAGER_H
#define ROCEWATCH_ALERTMANAGER_H

#include <stddef.h>
#include <stdint.h>

#include "alert_latency.h"
#include "alerts.h"
#include "strbuf.h"

#define AM_MAX_URLS 8

struct am_config {
	const char *urls[AM_MAX_URLS]; /* base URLs: http://host:9093 */
	int n_urls;
	int64_t resend_ns;	   /* re-send firing alerts this often (default 1m) */
	int64_t timeout_ns;	   /* per POST, each Alertmanager its own (default 5s) */
	size_t queue_max;	   /* batches kept per Alertmanager while it is away (default 64) */
	const char *instance;	   /* instance label: the host name */
	const char *generator_url; /* link back to this rocewatch */
	/* post_sent and alertmanager_accepted of timed batches go here (NULL: nowhere) */
	struct alert_latency *latency;
};

struct am_pusher;

/* Where deliveries to one Alertmanager stand (the status page). */
struct am_url_status {
	const char *url; /* as given; lives as long as the pusher's configuration */
	uint64_t sent, errors;
	int64_t last_success_ns, last_error_ns; /* realtime; 0: never */
	char last_error[128];			/* "HTTP 500", curl's text; "" if none */
};

struct am_status {
	struct am_url_status u[AM_MAX_URLS];
	int n_urls;
	size_t queued;
	uint64_t dropped;
};

int am_start(struct am_pusher **out, const struct am_config *cfg, char *err, size_t errlen);
/*
 * After an evaluation: enqueue what is due (new, resend, resolved).  When
 * st is not NULL and the batch carries an alert whose state changed at now,
 * the batch is timed: st gets its batch_enqueued stamp (and the latency
 * histogram that stage), the senders its post_sent and alertmanager_accepted.
 */
void am_submit(struct am_pusher *p, struct alert_table *t, int64_t now, struct alert_stamps *st);
void am_render_metrics(struct am_pusher *p, struct strbuf *sb);
/* A copy of the delivery state, taken under the pusher's lock (NULL p: no URLs). */
void am_get_status(struct am_pusher *p, struct am_status *out);
void am_stop(struct am_pusher *p);

/* The v2 JSON body for a set of alerts (exposed for tests). */
int am_encode(struct strbuf *out, const struct alert *const *alerts, size_t n, int64_t now,
	      int64_t resend_ns, const char *instance, const char *generator_url);

#endif
