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

#include "alerts.h"
#include "strbuf.h"

#define AM_MAX_URLS 8

struct am_config {
	const char *urls[AM_MAX_URLS]; /* base URLs: http://host:9093 */
	int n_urls;
	int64_t resend_ns;	   /* re-send firing alerts this often (default 1m) */
	long timeout_ms;	   /* per POST (default 5000) */
	size_t queue_max;	   /* batches kept while Alertmanager is away (default 64) */
	const char *instance;	   /* instance label: the host name */
	const char *generator_url; /* link back to this rocewatch */
};

struct am_pusher;

int am_start(struct am_pusher **out, const struct am_config *cfg, char *err, size_t errlen);
/* After an evaluation: enqueue what is due (new, resend, resolved). */
void am_submit(struct am_pusher *p, struct alert_table *t, int64_t now);
void am_render_metrics(struct am_pusher *p, struct strbuf *sb);
void am_stop(struct am_pusher *p);

/* The v2 JSON body for a set of alerts (exposed for tests). */
int am_encode(struct strbuf *out, const struct alert *const *alerts, size_t n, int64_t now,
	      int64_t resend_ns, const char *instance, const char *generator_url);

#endif
