// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "alertmanager.h"
#include "client.h"
#include "prom.h"
#include "ring.h"
#include "util.h"

/*
 * Each Alertmanager has its own queue and its own sender thread: one that
 * accepts connections and never answers holds up only its own deliveries,
 * never those to the others (each POST is bounded by the timeout, but a
 * shared sender would wait it out once per batch).
 */
struct batch {
	char *body;
	size_t len;
	int tries;
	int64_t next_try_ns; /* monotonic */
	bool timed;	     /* carries a state change: its stages are observed */
	struct alert_stamps st;
};

struct am_stats {
	uint64_t sent, errors;
	double latency_sum;
	uint64_t latency_count;
	int64_t last_success_ns, last_error_ns;
	char last_error[128];
};

struct am_dest {
	struct am_pusher *p;
	char *url; /* full endpoint: base + /api/v2/alerts */
	pthread_t thread;
	bool started;
	pthread_cond_t cond;
	struct ring q; /* batches not yet accepted, oldest first, at most queue_max */
	uint64_t dropped;
	struct am_stats st;
};

struct am_pusher {
	struct am_config cfg;
	pthread_mutex_t lock; /* the queues and the stats of every destination */
	bool stop;
	struct am_dest dest[AM_MAX_URLS];
};

static void add_label(json_t *obj, const char *k, const char *v)
{
	if (v && *v)
		json_object_set_new(obj, k, json_string(v));
}

int am_encode(struct strbuf *out, const struct alert *const *alerts, size_t n, int64_t now,
	      int64_t resend_ns, const char *instance, const char *generator_url)
{
	json_t *arr = json_array();
	char ts[40];
	char *s;

	for (size_t i = 0; i < n; i++) {
		const struct alert *a = alerts[i];
		json_t *j = json_object(), *l = json_object(), *an = json_object();

		add_label(l, "alertname", a->alertname);
		add_label(l, "severity", a->severity);
		add_label(l, "instance", instance);
		add_label(l, "profile", a->profile);
		add_label(l, "device", a->device);
		add_label(l, "port", a->port);
		add_label(l, "rule", a->rule);
		add_label(an, "summary", a->summary);
		add_label(an, "description", a->description ? a->description : "");
		add_label(an, "value", a->value);
		json_object_set_new(j, "labels", l);
		json_object_set_new(j, "annotations", an);
		format_rfc3339(a->fired_at ? a->fired_at : a->active_since, ts, sizeof(ts));
		json_object_set_new(j, "startsAt", json_string(ts));
		/*
		 * Firing: endsAt a few resend intervals ahead, so Alertmanager
		 * resolves the alert by itself if rocewatch goes away (what
		 * Prometheus does too).  Resolved: the time it was resolved.
		 */
		format_rfc3339(a->resolved ? a->resolved_at : now + 4 * resend_ns, ts, sizeof(ts));
		json_object_set_new(j, "endsAt", json_string(ts));
		if (generator_url && *generator_url)
			json_object_set_new(j, "generatorURL", json_string(generator_url));
		json_array_append_new(arr, j);
	}
	s = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (!s)
		return -ENOMEM;
	sb_puts(out, s);
	free(s);
	return out->oom ? -ENOMEM : 0;
}

static void batch_free(struct batch *b)
{
	free(b->body);
	free(b);
}

/* Called with p->lock held. */
static void enqueue(struct am_dest *d, struct batch *b)
{
	/* Bounded: drop the oldest, count it. */
	while (!ring_push(&d->q, b)) {
		struct batch *old = ring_pop(&d->q);

		d->dropped++;
		if (!old) { /* no room at all */
			batch_free(b);
			return;
		}
		batch_free(old);
	}
	pthread_cond_signal(&d->cond);
}

/* A copy of body for every destination: 0, or -ENOMEM with none queued. */
static int enqueue_all(struct am_pusher *p, const struct strbuf *body, struct alert_stamps *st)
{
	struct batch *b[AM_MAX_URLS] = { 0 };
	int n = p->cfg.n_urls;

	for (int u = 0; u < n; u++) {
		b[u] = calloc(1, sizeof(*b[u]));
		if (b[u])
			b[u]->body = malloc(body->len + 1);
		if (!b[u] || !b[u]->body) {
			for (int v = 0; v <= u; v++)
				if (b[v])
					batch_free(b[v]);
			return -ENOMEM;
		}
		memcpy(b[u]->body, body->buf, body->len);
		b[u]->body[body->len] = '\0';
		b[u]->len = body->len;
	}
	pthread_mutex_lock(&p->lock);
	if (st)
		st->t[AL_ENQUEUED] = mono_ns();
	for (int u = 0; u < n; u++) {
		if (st) {
			b[u]->timed = true;
			b[u]->st = *st;
		}
		enqueue(&p->dest[u], b[u]);
	}
	pthread_mutex_unlock(&p->lock);
	if (st)
		alert_latency_observe(p->cfg.latency, st, AL_ENQUEUED, AL_ENQUEUED);
	return 0;
}

void am_submit(struct am_pusher *p, struct alert_table *t, int64_t now, struct alert_stamps *st)
{
	const struct alert **due;
	struct strbuf sb = { 0 };
	size_t n = 0;
	bool changed = false;

	if (!p || !t->n)
		return;
	due = malloc(t->n * sizeof(*due));
	if (!due)
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct alert *a = &t->a[i];

		if (a->resolved || (a->state == ALERT_FIRING &&
				    (!a->last_sent || now - a->last_sent >= p->cfg.resend_ns))) {
			due[n++] = a;
			changed |= a->resolved ? a->resolved_at == now : a->fired_at == now;
		}
	}
	if (n &&
	    !am_encode(&sb, due, n, now, p->cfg.resend_ns, p->cfg.instance, p->cfg.generator_url) &&
	    !enqueue_all(p, &sb, changed ? st : NULL)) {
		/* Handed over: the resolved ones are delivered by the queues now. */
		for (size_t i = 0; i < n; i++) {
			struct alert *a = (struct alert *)due[i];

			a->last_sent = now;
			a->resolved = false;
		}
	}
	sb_free(&sb);
	free(due);
}

/* One POST of b to d through the outbound client; the outcome in d's stats. */
static bool post(struct am_dest *d, const struct batch *b)
{
	struct am_pusher *p = d->p;
	struct am_stats *st = &d->st;
	struct client_http_opts ho;
	struct client_req req = {
		.url = d->url, .post = b->body, .content_type = "application/json", .any_2xx = true
	};
	int64_t t0 = mono_ns();
	bool ok;

	client_http_defaults(&ho);
	ho.parallel = 1;
	ho.connect_timeout_ms = ho.timeout_ms =
	    p->cfg.timeout_ns / 1000000 ? (long)(p->cfg.timeout_ns / 1000000) : 1;
	ho.max_body = 1u << 20; /* Alertmanager's answer is empty or an error text */
	if (client_http_run(&req, 1, &ho, NULL, NULL) && !req.err) {
		req.err = -EIO;
		snprintf(req.errmsg, sizeof(req.errmsg), "cannot start an HTTP client");
	}
	ok = !req.err;
	pthread_mutex_lock(&p->lock);
	if (ok) {
		st->sent++;
		st->latency_sum += (double)(mono_ns() - t0) / 1e9;
		st->latency_count++;
		st->last_success_ns = real_ns();
	} else {
		st->errors++;
		st->last_error_ns = real_ns();
		if (req.transfer_error || !req.http_code)
			snprintf(st->last_error, sizeof(st->last_error), "%.127s",
				 req.transfer_error ? req.transfer_error : req.errmsg);
		else
			snprintf(st->last_error, sizeof(st->last_error), "HTTP %ld", req.http_code);
	}
	pthread_mutex_unlock(&p->lock);
	if (ok)
		rw_log_once_reset(d->url);
	else if (req.transfer_error || !req.http_code)
		rw_log_once(LOG_LVL_WARN, d->url, "alertmanager %s: %s (retrying; said once)",
			    d->url, req.transfer_error ? req.transfer_error : req.errmsg);
	else
		rw_log_once(LOG_LVL_WARN, d->url, "alertmanager %s: HTTP %ld (retrying; said once)",
			    d->url, req.http_code);
	client_req_free(&req);
	return ok;
}

static void *sender(void *arg)
{
	struct am_dest *d = arg;
	struct am_pusher *p = d->p;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct batch *b = ring_peek(&d->q);
		int64_t now = mono_ns();
		bool ok;

		if (!b) {
			pthread_cond_wait(&d->cond, &p->lock);
			continue;
		}
		if (b->next_try_ns > now) {
			struct timespec ts = ns_ts(real_ns() + (b->next_try_ns - now));

			pthread_cond_timedwait(&d->cond, &p->lock, &ts);
			continue;
		}
		/* Take it off the queue while sending: enqueue() may drop old batches meanwhile. */
		ring_pop(&d->q);
		pthread_mutex_unlock(&p->lock);
		if (b->timed && !b->tries) {
			b->st.t[AL_SENT] = mono_ns();
			alert_latency_observe(p->cfg.latency, &b->st, AL_SENT, AL_SENT);
		}
		ok = post(d, b);
		if (ok && b->timed) {
			b->st.t[AL_ACCEPTED] = mono_ns();
			alert_latency_observe(p->cfg.latency, &b->st, AL_ACCEPTED, AL_ACCEPTED);
		}
		pthread_mutex_lock(&p->lock);
		if (ok) {
			batch_free(b);
		} else {
			/* Back off: 0.5 s, 1 s, 2 s ... at most 30 s; it stays first in line. */
			int shift = b->tries < 6 ? b->tries : 6;
			int64_t wait = 500000000LL << shift;

			b->tries++;
			b->next_try_ns = mono_ns() + (wait > 30000000000LL ? 30000000000LL : wait);
			if (!ring_push_front(&d->q, b)) {
				d->dropped++;
				batch_free(b);
			}
		}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void stop_senders(struct am_pusher *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	for (int u = 0; u < AM_MAX_URLS; u++)
		pthread_cond_signal(&p->dest[u].cond);
	pthread_mutex_unlock(&p->lock);
	for (int u = 0; u < AM_MAX_URLS; u++)
		if (p->dest[u].started)
			pthread_join(p->dest[u].thread, NULL);
}

static void free_pusher(struct am_pusher *p)
{
	for (int u = 0; u < AM_MAX_URLS; u++) {
		struct am_dest *d = &p->dest[u];

		for (struct batch *b; (b = ring_pop(&d->q));)
			batch_free(b);
		ring_free(&d->q);
		free(d->url);
		pthread_cond_destroy(&d->cond);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int am_start(struct am_pusher **out, const struct am_config *cfg, char *err, size_t errlen)
{
	struct am_pusher *p = calloc(1, sizeof(*p));
	int r = -EINVAL;

	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	if (!p->cfg.resend_ns)
		p->cfg.resend_ns = 60LL * 1000000000LL;
	if (!p->cfg.timeout_ns)
		p->cfg.timeout_ns = 5000000000LL;
	if (!p->cfg.queue_max)
		p->cfg.queue_max = 64;
	pthread_mutex_init(&p->lock, NULL);
	for (int i = 0; i < AM_MAX_URLS; i++) {
		p->dest[i].p = p;
		pthread_cond_init(&p->dest[i].cond, NULL);
	}
	for (int i = 0; i < cfg->n_urls; i++) {
		const char *u = cfg->urls[i];
		size_t l = strlen(u);

		if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
			snprintf(err, errlen, "--alertmanager.url: '%s' is not an http(s) URL", u);
			goto fail;
		}
		while (l && u[l - 1] == '/')
			l--;
		p->dest[i].url = malloc(l + sizeof("/api/v2/alerts"));
		if (!p->dest[i].url) {
			r = -ENOMEM;
			goto fail;
		}
		memcpy(p->dest[i].url, u, l);
		strcpy(p->dest[i].url + l, "/api/v2/alerts");
		if (ring_alloc(&p->dest[i].q, p->cfg.queue_max)) {
			r = -ENOMEM;
			goto fail;
		}
	}
	for (int i = 0; i < cfg->n_urls; i++) {
		if (pthread_create(&p->dest[i].thread, NULL, sender, &p->dest[i])) {
			snprintf(err, errlen, "alertmanager: cannot start the sender threads");
			stop_senders(p);
			free_pusher(p);
			return -EAGAIN;
		}
		p->dest[i].started = true;
	}
	*out = p;
	return 0;
fail:
	free_pusher(p);
	return r;
}

/* Batches dropped, all destinations together (p->lock held). */
static uint64_t dropped(const struct am_pusher *p)
{
	uint64_t n = 0;

	for (int u = 0; u < p->cfg.n_urls; u++)
		n += p->dest[u].dropped;
	return n;
}

/* Batches not yet delivered everywhere: the longest queue (p->lock held). */
static size_t queued(const struct am_pusher *p)
{
	size_t n = 0;

	for (int u = 0; u < p->cfg.n_urls; u++)
		if (ring_len(&p->dest[u].q) > n)
			n = ring_len(&p->dest[u].q);
	return n;
}

void am_render_metrics(struct am_pusher *p, struct strbuf *sb)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "rocewatch_alertmanager_notifications_total", "counter",
		  "Alert batches Alertmanager accepted." },
		{ "rocewatch_alertmanager_errors_total", "counter",
		  "Failed POSTs to Alertmanager (each is retried with backoff)." },
		{ "rocewatch_alertmanager_latency_seconds", "summary",
		  "Time to deliver a batch to Alertmanager." },
		{ "rocewatch_alertmanager_last_success_timestamp_seconds", "gauge",
		  "Unix time of the last batch Alertmanager accepted." },
	};

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		prom_family(sb, fam[f].name, fam[f].type, fam[f].help);
		for (int u = 0; u < p->cfg.n_urls; u++) {
			const struct am_stats *s = &p->dest[u].st;

			switch (f) {
			case 0:
				prom_sample1_u64(sb, fam[f].name, "url", p->cfg.urls[u], s->sent);
				break;
			case 1:
				prom_sample1_u64(sb, fam[f].name, "url", p->cfg.urls[u], s->errors);
				break;
			case 2:
				prom_sample1_double(sb,
						    "rocewatch_alertmanager_latency_seconds_sum",
						    "url", p->cfg.urls[u], s->latency_sum);
				prom_sample1_u64(sb, "rocewatch_alertmanager_latency_seconds_count",
						 "url", p->cfg.urls[u], s->latency_count);
				break;
			case 3:
				if (!s->last_success_ns)
					break;
				prom_sample1_double(sb, fam[f].name, "url", p->cfg.urls[u],
						    (double)s->last_success_ns / 1e9);
				break;
			}
		}
	}
	prom_family(
	    sb, "rocewatch_alertmanager_dropped_total", "counter",
	    "Alert batches dropped because the queue was full (Alertmanager away too long).");
	prom_sample1_u64(sb, "rocewatch_alertmanager_dropped_total", NULL, NULL, dropped(p));
	prom_family(sb, "rocewatch_alertmanager_queue_length", "gauge",
		    "Alert batches waiting to be delivered.");
	prom_sample1_u64(sb, "rocewatch_alertmanager_queue_length", NULL, NULL, queued(p));
	pthread_mutex_unlock(&p->lock);
}

void am_get_status(struct am_pusher *p, struct am_status *out)
{
	memset(out, 0, sizeof(*out));
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	out->n_urls = p->cfg.n_urls;
	for (int u = 0; u < p->cfg.n_urls; u++) {
		const struct am_stats *s = &p->dest[u].st;
		struct am_url_status *o = &out->u[u];

		o->url = p->cfg.urls[u];
		o->sent = s->sent;
		o->errors = s->errors;
		o->last_success_ns = s->last_success_ns;
		o->last_error_ns = s->last_error_ns;
		memcpy(o->last_error, s->last_error, sizeof(o->last_error));
	}
	out->queued = queued(p);
	out->dropped = dropped(p);
	pthread_mutex_unlock(&p->lock);
}

void am_stop(struct am_pusher *p)
{
	if (!p)
		return;
	stop_senders(p);
	free_pusher(p);
}
