/* SPDX-License-Identifier: MIT */
/*
 * How long a fault takes to become an alert Alertmanager holds, stage by
 * stage: rocewatch_alert_latency_seconds{stage}, a Prometheus histogram.
 * Every stage is timed on CLOCK_MONOTONIC from the same origin -- the
 * kernel notification's arrival (the wake-up of the poll loop on its
 * socket), or the start of the poll that read the fault -- so each stage's
 * histogram is the latency up to its end, and the step between two stages
 * is where the time went.  Only passes that change an alert's state (it
 * starts firing, or resolves) are observed; resends are not latency.
 *
 * Observed from the poll thread (model .. batch_enqueued) and from each
 * Alertmanager's sender thread (post_sent, alertmanager_accepted, once per
 * Alertmanager); rendered from the HTTP thread.  Its own lock.
 */
#ifndef ROCEWATCH_ALERT_LATENCY_H
#define ROCEWATCH_ALERT_LATENCY_H

#include <pthread.h>
#include <stdint.h>

#include "strbuf.h"

enum alert_stage {
	AL_MODEL,    /* the model holds the new facts */
	AL_RULES,    /* the rules that read them are evaluated */
	AL_ALERT,    /* the alert state machine moved */
	AL_ENQUEUED, /* the batch is in an Alertmanager's queue */
	AL_SENT,     /* its POST started (first try) */
	AL_ACCEPTED, /* Alertmanager answered 2xx */
	AL__STAGES,
};

/* 1 ms to 10 s, as Prometheus' own defaults spaced (1, 2.5, 5 per decade). */
#define AL_BUCKETS 13

struct alert_latency {
	pthread_mutex_t lock;
	uint64_t bucket[AL__STAGES][AL_BUCKETS]; /* not cumulative: rendered so */
	uint64_t count[AL__STAGES];
	double sum[AL__STAGES];
};

/* Monotonic stamps of one pass, in ns; 0: not reached. */
struct alert_stamps {
	int64_t origin, t[AL__STAGES];
};

void alert_latency_init(struct alert_latency *l);
void alert_latency_fini(struct alert_latency *l);
/* Observe stages [from, to] of st (each stamped, after st->origin); NULL l: nothing. */
void alert_latency_observe(struct alert_latency *l, const struct alert_stamps *st,
			   enum alert_stage from, enum alert_stage to);
/* The stage's label value ("model_updated", ...). */
const char *alert_stage_name(enum alert_stage s);
/* The family, every stage (zeros before the first observation). */
void alert_latency_render(struct alert_latency *l, struct strbuf *sb);

#endif
