// SPDX-License-Identifier: MIT
#include <string.h>

#include "alert_latency.h"
#include "prom.h"

static const double bounds[AL_BUCKETS] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
					   0.25,  0.5,	  1,	 2.5,  5,     10 };
/* the bounds as le="" prints them: the shortest text, as Prometheus' clients do */
static const char *const bound_text[AL_BUCKETS] = { "0.001", "0.0025", "0.005", "0.01", "0.025",
						    "0.05",  "0.1",    "0.25",	"0.5",	"1",
						    "2.5",   "5",      "10" };

static const char *const stage_names[AL__STAGES] = {
	[AL_MODEL] = "model_updated",
	[AL_RULES] = "rule_evaluated",
	[AL_ALERT] = "alert_state_changed",
	[AL_ENQUEUED] = "batch_enqueued",
	[AL_SENT] = "post_sent",
	[AL_ACCEPTED] = "alertmanager_accepted",
};

const char *alert_stage_name(enum alert_stage s)
{
	return s < AL__STAGES ? stage_names[s] : "";
}

void alert_latency_init(struct alert_latency *l)
{
	memset(l, 0, sizeof(*l));
	pthread_mutex_init(&l->lock, NULL);
}

void alert_latency_fini(struct alert_latency *l)
{
	pthread_mutex_destroy(&l->lock);
}

void alert_latency_observe(struct alert_latency *l, const struct alert_stamps *st,
			   enum alert_stage from, enum alert_stage to)
{
	if (!l || !st->origin)
		return;
	pthread_mutex_lock(&l->lock);
	for (int s = from; s <= (int)to && s < AL__STAGES; s++) {
		double v;
		int b = 0;

		if (!st->t[s] || st->t[s] < st->origin)
			continue;
		v = (double)(st->t[s] - st->origin) / 1e9;
		while (b < AL_BUCKETS && v > bounds[b])
			b++;
		if (b < AL_BUCKETS)
			l->bucket[s][b]++;
		l->count[s]++;
		l->sum[s] += v;
	}
	pthread_mutex_unlock(&l->lock);
}

void alert_latency_render(struct alert_latency *l, struct strbuf *sb)
{
	static const char name[] = "rocewatch_alert_latency_seconds";

	if (!l)
		return;
	prom_family(
	    sb, name, "histogram",
	    "Seconds from a fault being seen (a kernel notification's arrival, or the start "
	    "of the poll that read it) to the end of each stage of its alert: "
	    "model_updated, rule_evaluated, alert_state_changed, batch_enqueued, post_sent, "
	    "alertmanager_accepted (once per Alertmanager). Only passes that change an "
	    "alert's state are observed.");
	pthread_mutex_lock(&l->lock);
	for (int s = 0; s < AL__STAGES; s++) {
		uint64_t cum = 0;
		int first;

		for (int b = 0; b <= AL_BUCKETS; b++) {
			cum += b < AL_BUCKETS ? l->bucket[s][b] : 0;
			first = 1;
			prom_sample_begin(sb, "rocewatch_alert_latency_seconds_bucket");
			prom_label(sb, &first, "stage", stage_names[s]);
			prom_label(sb, &first, "le", b < AL_BUCKETS ? bound_text[b] : "+Inf");
			prom_sample_end_u64(sb, first, b < AL_BUCKETS ? cum : l->count[s]);
		}
		first = 1;
		prom_sample_begin(sb, "rocewatch_alert_latency_seconds_sum");
		prom_label(sb, &first, "stage", stage_names[s]);
		prom_sample_end_double(sb, first, l->sum[s]);
		first = 1;
		prom_sample_begin(sb, "rocewatch_alert_latency_seconds_count");
		prom_label(sb, &first, "stage", stage_names[s]);
		prom_sample_end_u64(sb, first, l->count[s]);
	}
	pthread_mutex_unlock(&l->lock);
}
