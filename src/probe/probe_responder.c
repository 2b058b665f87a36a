// SPDX-License-Identifier: MIT
/* The probe responder of `serve --probe` (probe_responder.h). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "probe_ahs.h"
#include "probe_exec.h"
#include "probe_locate.h"
#include "probe_responder.h"
#include "probe_ud.h"
#include "util.h"

#define MAX_EPS 64
/* probes in flight, by sequence number modulo: 1 s of 256 peers x 8 sizes at 1 s */
#define OUT_N 4096

/* RTT histogram bounds, seconds: from a NIC's microseconds to a soft-RoCE guest's */
static const double rtt_le[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				 0.025,	 0.05,	  0.1,	  0.25,	 0.5,	 1 };
#define N_LE (sizeof(rtt_le) / sizeof(rtt_le[0]))

struct cont_stat {
	uint64_t sent, lost, received;
	uint64_t bucket[N_LE + 1]; /* not cumulative; the last is +Inf */
	double sum;
};

struct cont_peer {
	char name[300];
	struct probe_info pi;
	bool known;	   /* pi holds the peer's last published probe info */
	struct ibv_ah *ah; /* to pi.gid, on ah_ep */
	struct probe_ep *ah_ep;
	uint8_t ah_gid[16];
	char error[256];
	struct cont_stat st[PROBE_CONT_MAX_SIZES];
};

struct in_flight {
	uint64_t seq;
	int64_t t_send_ns;
	uint16_t peer;
	uint8_t size;
	bool live;
};

/* A fleet probe plan's slice for this node, while it runs and after. */
struct plan_run {
	struct probe_slice s;
	struct probe_exec ex;
	struct probe_ep *ep_of[PROBE_PLAN_MAX_PORTS]; /* slice port -> endpoint */
	struct probe_ahs *ahs;			      /* its address handles */
	struct probe_ah_stats ah_st;		      /* when done */
	bool ahs_held;				      /* done, handles not yet released */
	uint8_t tclass;
	bool running, sent;
	int64_t next_ns;
	struct strbuf results; /* when done */
};

/* What the plans this node took part in found, per rail (roce_probe_pairs_total ...). */
struct plan_rail_stat {
	char rail[80];
	uint64_t pairs[PROBE_OUT_PATHS + 1];
	/* the last plan's pairs' smallest RTTs */
	int64_t p50_ns, p99_ns;
	double sum_s;
	uint64_t count;
};

#define PLAN_MAX_RAILS MAX_EPS

struct probe_responder {
	pthread_t thr;
	bool running;
	int stop_pipe[2];
	pthread_mutex_t lock; /* eps and err: the thread changes them, render reads them */
	struct probe_ep *eps[MAX_EPS];
	size_t n;
	char err[256]; /* the last rescan's problem, "" when none */
	/* continuous mode */
	struct cont_peer *peers;
	size_t n_peers;
	unsigned sizes[PROBE_CONT_MAX_SIZES];
	size_t n_sizes;
	int64_t interval_ns;
	uint8_t tclass;
	uint32_t session;
	uint64_t seq;
	struct in_flight *fl;
	struct probe_ep *sender; /* the endpoint replies are routed on */
	/* serve's notes on the ports (probe_responder_annotate) */
	struct probe_port_note *notes;
	size_t n_notes;
	char host[256];
	/* fleet probe: the last plan, and what the plans found */
	struct plan_run *plan;
	struct plan_rail_stat pstat[PLAN_MAX_RAILS];
	size_t n_pstat;
	uint64_t plans;
	int64_t last_plan_ns;
};

/* Address handles live on an endpoint's PD: they go before it does. */
static void forget_ep(struct probe_responder *r, struct probe_ep *ep)
{
	if (r->plan)
		for (size_t k = 0; k < r->plan->s.n_ports; k++)
			if (r->plan->ep_of[k] == ep) {
				probe_ep_set_ah_find(ep, NULL, NULL);
				/* the rest of the plan's handles are made as their probes are due
				 */
				probe_ahs_stop(r->plan->ahs);
				probe_ahs_release(r->plan->ahs, (int)k);
				r->plan->ep_of[k] = NULL;
			}
	for (size_t i = 0; i < r->n_peers; i++)
		if (r->peers[i].ah && r->peers[i].ah_ep == ep) {
			probe_ep_ah_destroy(r->peers[i].ah);
			r->peers[i].ah = NULL;
			r->peers[i].ah_ep = NULL;
		}
	if (r->sender == ep)
		r->sender = NULL;
}

static bool same_port(const struct probe_port *a, const struct probe_port *b)
{
	return !strcmp(a->device, b->device) && a->port == b->port;
}

/* Open what is new, update what changed.  Called with the lock held. */
static void rescan(struct probe_responder *r, bool first)
{
	struct probe_port *pp = NULL;
	size_t np = 0;
	char err[256] = "";
	int rc = probe_ports(&pp, &np, err, sizeof(err));

	if (rc && rc != -ENODEV) {
		snprintf(r->err, sizeof(r->err), "%s", err);
		free(pp);
		return;
	}
	r->err[0] = 0;
	for (size_t i = 0; i < np; i++) {
		size_t k;
		struct probe_ep *ep;

		for (k = 0; k < r->n; k++)
			if (same_port(probe_ep_port(r->eps[k]), &pp[i]))
				break;
		if (k < r->n) {
			probe_ep_update(r->eps[k], &pp[i]);
			continue;
		}
		if (r->n == MAX_EPS)
			break;
		if (probe_ep_open(&ep, &pp[i], err, sizeof(err))) {
			snprintf(r->err, sizeof(r->err), "%s", err);
			log_warn("probe: %s", err);
			continue;
		}
		r->eps[r->n++] = ep;
		if (!first)
			log_info("probe: responding on %s/%u (%s, GID index %d, QPN %u)",
				 pp[i].device, pp[i].port, pp[i].gid, pp[i].gid_index,
				 probe_ep_qpn(ep));
	}
	free(pp);
}

static void drop_ep(struct probe_responder *r, size_t k, const char *why)
{
	const struct probe_port *p = probe_ep_port(r->eps[k]);

	log_info("probe: %s/%u: %s; its probe QP is closed", p->device, p->port, why);
	forget_ep(r, r->eps[k]);
	probe_ep_close(r->eps[k]);
	r->eps[k] = r->eps[--r->n];
}

/* A removed device's uverbs node goes first; its context must go before the removal can end. */
static void reap_removed(struct probe_responder *r)
{
	for (size_t k = r->n; k-- > 0;)
		if (access(probe_ep_port(r->eps[k])->dev_path, F_OK))
			drop_ep(r, k, "device removed");
}

static void on_reply(void *arg, const struct probe_hdr *h, bool intact, int64_t t_ns)
{
	struct probe_responder *r = arg;
	struct in_flight *f = &r->fl[h->seq % OUT_N];
	struct cont_stat *st;
	double rtt;
	size_t b = 0;

	if (!f->live || f->seq != h->seq || h->size != r->sizes[f->size])
		return; /* late (already counted lost), or not ours */
	f->live = false;
	st = &r->peers[f->peer].st[f->size];
	if (!intact) {
		st->lost++;
		return;
	}
	rtt = (double)(t_ns - f->t_send_ns) / 1e9;
	while (b < N_LE && rtt > rtt_le[b])
		b++;
	st->bucket[b]++;
	st->sum += rtt;
	st->received++;
}

static void expire(struct probe_responder *r, int64_t now)
{
	for (size_t i = 0; i < OUT_N; i++) {
		struct in_flight *f = &r->fl[i];

		if (f->live && now - f->t_send_ns > PROBE_CONT_TIMEOUT_NS) {
			f->live = false;
			r->peers[f->peer].st[f->size].lost++;
		}
	}
}

/* One probe of each size to each peer whose probe info is known. */
static void send_round(struct probe_responder *r)
{
	struct probe_ep *ep = NULL;

	for (size_t k = 0; k < r->n && !ep; k++)
		if (probe_ep_port(r->eps[k])->active)
			ep = r->eps[k];
	if (!ep)
		return;
	if (r->sender != ep) {
		if (r->sender)
			probe_ep_on_reply(r->sender, 0, NULL, NULL);
		r->sender = ep;
		probe_ep_on_reply(ep, r->session, on_reply, r);
	}
	for (size_t i = 0; i < r->n_peers; i++) {
		struct cont_peer *p = &r->peers[i];
		char err[256];

		if (!p->known)
			continue;
		/* a new GID or another local port: a new handle, once nothing uses the old one */
		if (p->ah && (p->ah_ep != ep || memcmp(p->ah_gid, p->pi.gid_raw, 16))) {
			if (probe_ep_sends_out(p->ah_ep))
				continue;
			probe_ep_ah_destroy(p->ah);
			p->ah = NULL;
		}
		if (!p->ah) {
			p->ah = probe_ep_ah_create(ep, p->pi.gid_raw, r->tclass, err, sizeof(err));
			if (!p->ah) {
				snprintf(p->error, sizeof(p->error), "%s", err);
				continue;
			}
			p->ah_ep = ep;
			memcpy(p->ah_gid, p->pi.gid_raw, 16);
			p->error[0] = 0;
		}
		for (size_t k = 0; k < r->n_sizes; k++) {
			struct probe_hdr h = { .size = r->sizes[k],
					       .session = r->session,
					       .seq = r->seq };
			struct in_flight *f = &r->fl[h.seq % OUT_N];

			if (r->sizes[k] > probe_ep_port(ep)->active_mtu)
				continue;
			if (probe_ep_send_to(ep, p->ah, p->pi.qpn, p->pi.qkey, &h))
				continue; /* no send slot free: not sent, so not lost either */
			if (f->live)
				r->peers[f->peer].st[f->size].lost++;
			*f = (struct in_flight){ .seq = h.seq,
						 .t_send_ns = (int64_t)h.t_send_ns,
						 .peer = (uint16_t)i,
						 .size = (uint8_t)k,
						 .live = true };
			r->seq++;
			p->st[k].sent++;
		}
	}
}

/* ---- a fleet probe plan (probe_exec.h) on this node's endpoints ---- */

static int plan_send(void *ctx, size_t entry, const struct probe_slice_entry *e, unsigned fl,
		     struct probe_hdr *h)
{
	struct plan_run *pl = ctx;
	struct probe_ep *ep = e->port < pl->s.n_ports ? pl->ep_of[e->port] : NULL;
	struct ibv_ah *ah;
	int r;

	if (!ep)
		return -ENODEV;
	r = probe_ahs_get(pl->ahs, entry, fl, &ah);
	return r ? r : probe_ep_send_to(ep, ah, e->qpn, PROBE_QKEY, h);
}

/* A reply to one of the plan's peers: the handle made for probing it, if there is one. */
static struct ibv_ah *plan_ah_find(void *arg, const struct probe_ep *ep, const uint8_t gid[16],
				   uint8_t tclass)
{
	struct plan_run *pl = arg;

	for (size_t k = 0; k < pl->s.n_ports; k++)
		if (pl->ep_of[k] == ep)
			return probe_ahs_find(pl->ahs, (unsigned)k, gid, tclass);
	return NULL;
}

static void plan_hooks(struct plan_run *pl, bool on)
{
	for (size_t k = 0; k < pl->s.n_ports; k++)
		if (pl->ep_of[k])
			probe_ep_set_ah_find(pl->ep_of[k], on ? plan_ah_find : NULL,
					     on ? pl : NULL);
}

/* The plan's handles go once no send (a probe, or a reply through them) is out. */
static void plan_release(struct plan_run *pl)
{
	plan_hooks(pl, false);
	for (size_t k = 0; k < pl->s.n_ports; k++)
		if (pl->ep_of[k] && probe_ep_sends_out(pl->ep_of[k])) {
			pl->ahs_held = true;
			return;
		}
	probe_ahs_release(pl->ahs, -1);
	pl->ahs_held = false;
}

static void plan_reply(void *arg, const struct probe_hdr *h, bool intact, int64_t t_ns)
{
	struct plan_run *pl = arg;

	probe_exec_reply(&pl->ex, h, intact, t_ns);
}

static void plan_free(struct plan_run *pl)
{
	if (!pl)
		return;
	/* a plan is replaced or the responder stops: whatever is still out is not waited for */
	plan_hooks(pl, false);
	probe_ahs_free(pl->ahs);
	probe_exec_free(&pl->ex);
	probe_slice_free(&pl->s);
	sb_free(&pl->results);
	free(pl);
}

/* The rail a slice port's pairs count under: serve's rail, else the device/port. */
static void port_rail(const struct probe_responder *r, const struct probe_slice_port *sp, char *buf,
		      size_t len)
{
	for (size_t i = 0; i < r->n_notes; i++)
		if (!strcmp(r->notes[i].device, sp->device) && r->notes[i].port == sp->port &&
		    r->notes[i].rail[0]) {
			snprintf(buf, len, "%s", r->notes[i].rail);
			return;
		}
	snprintf(buf, len, "%s/%u", sp->device, sp->port);
}

static struct plan_rail_stat *rail_stat(struct probe_responder *r, const char *rail)
{
	for (size_t i = 0; i < r->n_pstat; i++)
		if (!strcmp(r->pstat[i].rail, rail))
			return &r->pstat[i];
	if (r->n_pstat == PLAN_MAX_RAILS)
		return NULL;
	memset(&r->pstat[r->n_pstat], 0, sizeof(r->pstat[0]));
	snprintf(r->pstat[r->n_pstat].rail, sizeof(r->pstat[0].rail), "%s", rail);
	return &r->pstat[r->n_pstat++];
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The plan is over: its results for the coordinator, its counts for /metrics. */
static void plan_finish(struct probe_responder *r)
{
	struct plan_run *pl = r->plan;
	const struct probe_result *res = probe_exec_results(&pl->ex);
	int64_t *rtt = malloc((pl->s.n ? pl->s.n : 1) * sizeof(*rtt));

	for (size_t k = 0; k < pl->s.n_ports; k++)
		if (pl->ep_of[k])
			probe_ep_on_plan_reply(pl->ep_of[k], 0, NULL, NULL);
	pl->running = false;
	probe_ahs_stop(pl->ahs);
	probe_ahs_stats(pl->ahs, &pl->ah_st);
	if (*probe_ahs_error(pl->ahs))
		log_warn(
		    "probe: plan %016llx: %llu address handles could not be made, the first: %s",
		    (unsigned long long)pl->s.plan, (unsigned long long)pl->ah_st.failed,
		    probe_ahs_error(pl->ahs));
	plan_release(pl);
	if (probe_results_encode(&pl->results, pl->s.plan, pl->s.node, true, res, pl->s.n,
				 &pl->ah_st))
		log_warn("probe: plan %016llx: out of memory for its results",
			 (unsigned long long)pl->s.plan);
	for (size_t k = 0; k < pl->s.n_ports; k++) {
		char rail[80];
		struct plan_rail_stat *st;
		size_t n = 0;

		port_rail(r, &pl->s.ports[k], rail, sizeof(rail));
		if (!(st = rail_stat(r, rail)))
			continue;
		st->sum_s = 0;
		st->count = 0;
		for (size_t e = 0; e < pl->s.n; e++) {
			if (pl->s.e[e].port != k || pl->s.e[e].kind != PROBE_PAIR_RAIL)
				continue;
			st->pairs[probe_result_outcome(pl->s.e[e].mtu, &res[e])]++;
			if (rtt && res[e].rtt_ns != PROBE_RTT_NONE) {
				rtt[n++] = res[e].rtt_ns;
				st->sum_s += res[e].rtt_ns / 1e9;
			}
		}
		st->count = n;
		if (rtt && n)
			qsort(rtt, n, sizeof(*rtt), cmp_i64);
		st->p50_ns = n ? probe_percentile(rtt, n, 50) : -1;
		st->p99_ns = n ? probe_percentile(rtt, n, 99) : -1;
	}
	free(rtt);
	r->plans++;
	r->last_plan_ns = real_ns();
	log_info("probe: plan %016llx done: %llu probes sent, %llu answered, %llu sent late on a "
		 "second pass, %llu late on both and not sent, %llu not sent (%s); "
		 "%llu address handles in %.1f ms (%.1f us each, the longest %.1f us, %llu made "
		 "late)%s",
		 (unsigned long long)pl->s.plan, (unsigned long long)pl->ex.sent,
		 (unsigned long long)pl->ex.replied, (unsigned long long)pl->ex.retried,
		 (unsigned long long)pl->ex.late, (unsigned long long)pl->ex.send_errors,
		 pl->ex.send_errors ? strerror(-pl->ex.last_err) : "no error",
		 (unsigned long long)pl->ah_st.made, pl->ah_st.create_ns / 1e6,
		 pl->ah_st.made + pl->ah_st.failed
		     ? pl->ah_st.create_ns / 1e3 / (double)(pl->ah_st.made + pl->ah_st.failed)
		     : 0.0,
		 pl->ah_st.max_ns / 1e3, (unsigned long long)pl->ah_st.lazy,
		 pl->ah_st.before_start ? ", all before the start" : ", not all before the start");
}

static void plan_step(struct probe_responder *r)
{
	struct plan_run *pl = r->plan;
	int64_t now = real_ns();

	if (!pl->sent) {
		pl->next_ns = probe_exec_step(&pl->ex, now);
		pl->sent = pl->next_ns == INT64_MAX;
	}
	if (pl->sent && probe_exec_done(&pl->ex, real_ns()))
		plan_finish(r);
}

int probe_responder_plan(struct probe_responder *r, struct probe_slice *s, char *err, size_t errlen)
{
	struct plan_run *pl;
	struct probe_link link;
	int64_t now = real_ns();
	int rc = 0;

	if (s->start_ns > now + 60000000000LL) {
		snprintf(err, errlen, "the plan starts over a minute from now (clocks apart?)");
		return -EINVAL;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_lock(&r->lock);
	if (r->plan && r->plan->running) {
		snprintf(err, errlen, "plan %016llx is running (its %llu probes, %llu sent)",
			 (unsigned long long)r->plan->s.plan, (unsigned long long)r->plan->s.n,
			 (unsigned long long)r->plan->ex.sent);
		rc = -EBUSY;
		goto out;
	}
	for (size_t k = 0; k < s->n_ports; k++) {
		for (size_t i = 0; i < r->n; i++) {
			const struct probe_port *p = probe_ep_port(r->eps[i]);

			if (!strcmp(p->device, s->ports[k].device) && p->port == s->ports[k].port)
				pl->ep_of[k] = r->eps[i];
		}
		if (!pl->ep_of[k] || strcmp(probe_ep_port(pl->ep_of[k])->gid, s->ports[k].gid)) {
			snprintf(err, errlen, "%s/%u: %s", s->ports[k].device, s->ports[k].port,
				 pl->ep_of[k]
				     ? "its GID is not the plan's (read /api/v1/probe again)"
				     : "no probe QP on this port here");
			rc = -ENODEV;
			goto out;
		}
	}
	pl->s = *s;
	memset(s, 0, sizeof(*s));
	pl->tclass = (uint8_t)(pl->s.dscp << 2 | PROBE_ECT0);
	link = (struct probe_link){ .send = plan_send, .ctx = pl };
	if (probe_exec_init(&pl->ex, &pl->s, &link) ||
	    probe_ahs_new(&pl->ahs, &pl->s, pl->ep_of, pl->tclass)) {
		*s = pl->s;
		memset(&pl->s, 0, sizeof(pl->s));
		snprintf(err, errlen, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < pl->s.n_ports; k++)
		probe_ep_on_plan_reply(pl->ep_of[k], pl->s.session, plan_reply, pl);
	pl->running = true;
	pl->next_ns = pl->s.start_ns;
	plan_free(r->plan);
	r->plan = pl;
	plan_hooks(pl, true);
	/* made in the lead before the start, off this thread; what is not, as it is needed */
	rc = probe_ahs_start(pl->ahs);
	if (rc) {
		log_warn("probe: plan %016llx: no thread to make its address handles ahead (%s): "
			 "made as the probes are due",
			 (unsigned long long)pl->s.plan, strerror(-rc));
		rc = 0;
	}
	pl = NULL;
	/* wake the thread: its next time is the plan's start */
	if (write(r->stop_pipe[1], "w", 1) < 0)
		log_warn("probe: cannot wake the responder: %s", strerror(errno));
out:
	pthread_mutex_unlock(&r->lock);
	plan_free(pl);
	return rc;
}

int probe_responder_plan_results(struct probe_responder *r, uint64_t id, struct strbuf *out)
{
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	if (!r->plan || r->plan->s.plan != id)
		rc = -ENOENT;
	else if (r->plan->running)
		rc = probe_results_encode(out, id, r->plan->s.node, false, NULL, 0, NULL);
	else
		sb_add(out, r->plan->results.buf ? r->plan->results.buf : "", r->plan->results.len);
	pthread_mutex_unlock(&r->lock);
	return rc;
}

static void *thread_main(void *arg)
{
	struct probe_responder *r = arg;
	int64_t next_check = mono_ns() + 1000000000LL;
	int64_t next_scan = mono_ns() + PROBE_RESCAN_S * 1000000000LL;
	int64_t next_round = mono_ns(), next_expire = mono_ns();

	for (;;) {
		struct pollfd pfd[MAX_EPS + 1];
		struct probe_ep *polled[MAX_EPS];
		size_t n;
		int64_t now;

		pthread_mutex_lock(&r->lock);
		n = r->n;
		for (size_t i = 0; i < n; i++) {
			polled[i] = r->eps[i];
			pfd[i] = (struct pollfd){ .fd = probe_ep_fd(r->eps[i]), .events = POLLIN };
		}
		pthread_mutex_unlock(&r->lock);
		pfd[n] = (struct pollfd){ .fd = r->stop_pipe[0], .events = POLLIN };
		int64_t timeout = 1000000000LL;
		struct timespec ts;

		if (r->n_peers) {
			int64_t until = next_round - mono_ns();

			/* wake for the next round, and a few times a second to expire probes */
			timeout = until <= 0 ? 0 : until < 200000000LL ? until : 200000000LL;
		}
		pthread_mutex_lock(&r->lock);
		if (r->plan && r->plan->running) {
			/* a plan's probes leave 125 us apart: a timeout finer than poll()'s */
			int64_t until = r->plan->sent ? 10000000LL : r->plan->next_ns - real_ns();

			if (until < timeout)
				timeout = until < 0 ? 0 : until;
		}
		pthread_mutex_unlock(&r->lock);
		ts = ns_ts(timeout);
		/* Only this thread adds or removes endpoints: polled[] stays valid. */
		if (ppoll(pfd, (nfds_t)n + 1, &ts, NULL) < 0 && errno != EINTR)
			break;
		if (pfd[n].revents) {
			char c = 'x';

			/* 'w': a plan came in, look again; anything else: stop */
			if (read(r->stop_pipe[0], &c, 1) != 1 || c != 'w')
				break;
		}
		pthread_mutex_lock(&r->lock);
		for (size_t i = 0; i < n; i++) {
			int rc;

			if (!pfd[i].revents)
				continue;
			rc = probe_ep_respond(polled[i]);
			if (rc)
				for (size_t k = 0; k < r->n; k++)
					if (r->eps[k] == polled[i]) {
						drop_ep(r, k, strerror(-rc));
						break;
					}
		}
		now = mono_ns();
		if (now >= next_check) {
			reap_removed(r);
			next_check = now + 1000000000LL;
		}
		if (now >= next_scan) {
			rescan(r, false);
			next_scan = now + PROBE_RESCAN_S * 1000000000LL;
		}
		if (r->n_peers && now >= next_round) {
			send_round(r);
			next_round += r->interval_ns;
			if (next_round <= now) /* overran: skip rounds rather than burst */
				next_round = now + r->interval_ns;
		}
		if (r->n_peers && now >= next_expire) {
			expire(r, now);
			next_expire = now + 100000000LL;
		}
		if (r->plan && r->plan->running)
			plan_step(r);
		else if (r->plan && r->plan->ahs_held)
			plan_release(r->plan);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

int probe_responder_open(struct probe_responder **out, char *err, size_t errlen)
{
	struct probe_responder *r = calloc(1, sizeof(*r));
	struct probe_port *pp = NULL;
	size_t np = 0;
	int rc;

	*out = NULL;
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->stop_pipe[0] = r->stop_pipe[1] = -1;
	pthread_mutex_init(&r->lock, NULL);
	rc = probe_ports(&pp, &np, err, errlen);
	free(pp);
	if (rc)
		goto fail;
	if (!np) {
		snprintf(err, errlen,
			 "no RoCE port with an IPv4 RoCE v2 GID (an Ethernet RDMA port whose "
			 "netdev has an IPv4 address)");
		rc = -ENODEV;
		goto fail;
	}
	if (pipe(r->stop_pipe)) {
		rc = -errno;
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	*out = r;
	return 0;
fail:
	probe_responder_stop(r);
	return rc;
}

int probe_responder_run(struct probe_responder *r, char *err, size_t errlen)
{
	int rc;

	/*
	 * Opened here, after privileges are dropped: uverbs refuses write()
	 * commands (rxe posts sends through one) from a process whose
	 * credentials differ from those that opened the device
	 * (ib_safe_file_access()), which dropping capabilities changes.
	 */
	pthread_mutex_lock(&r->lock);
	rescan(r, true);
	pthread_mutex_unlock(&r->lock);
	if (!r->n) {
		snprintf(err, errlen, "%s", r->err[0] ? r->err : "no probe QP could be opened");
		return -EIO;
	}
	rc = pthread_create(&r->thr, NULL, thread_main, r);
	if (rc) {
		snprintf(err, errlen, "probe responder thread: %s", strerror(rc));
		return -rc;
	}
	r->running = true;
	for (size_t i = 0; i < r->n; i++) {
		const struct probe_port *p = probe_ep_port(r->eps[i]);

		log_info("probe: responding on %s/%u (%s, GID %s index %d, QPN %u, Q_Key 0x%x)",
			 p->device, p->port, p->netdev, p->gid, p->gid_index,
			 probe_ep_qpn(r->eps[i]), PROBE_QKEY);
	}
	return 0;
}

void probe_responder_stop(struct probe_responder *r)
{
	if (!r)
		return;
	if (r->running) {
		if (write(r->stop_pipe[1], "x", 1) < 0)
			log_warn("probe: cannot wake the responder: %s", strerror(errno));
		pthread_join(r->thr, NULL);
	}
	for (size_t i = 0; i < r->n; i++) {
		forget_ep(r, r->eps[i]);
		probe_ep_close(r->eps[i]);
	}
	free(r->peers);
	free(r->fl);
	free(r->notes);
	plan_free(r->plan);
	if (r->stop_pipe[0] >= 0)
		close(r->stop_pipe[0]);
	if (r->stop_pipe[1] >= 0)
		close(r->stop_pipe[1]);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int probe_responder_annotate(struct probe_responder *r, const struct probe_port_note *notes,
			     size_t n, const char *host)
{
	struct probe_port_note *copy = n ? malloc(n * sizeof(*copy)) : NULL;

	if (n && !copy)
		return -ENOMEM;
	if (n)
		memcpy(copy, notes, n * sizeof(*copy));
	pthread_mutex_lock(&r->lock);
	free(r->notes);
	r->notes = copy;
	r->n_notes = n;
	snprintf(r->host, sizeof(r->host), "%s", host ? host : "");
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* A port's note into its JSON object: only what is known. */
static void note_json(const struct probe_responder *r, const struct probe_port *p, json_t *o)
{
	static const char *const cnames[] = { "link_downed", "carrier_changes", "symbol_errors" };

	for (size_t i = 0; i < r->n_notes; i++) {
		const struct probe_port_note *nt = &r->notes[i];
		const int64_t cv[] = { nt->link_downed, nt->carrier_changes, nt->symbol_errors };
		json_t *c = NULL;

		if (strcmp(nt->device, p->device) || nt->port != p->port)
			continue;
		if (nt->role[0])
			json_object_set_new(o, "role", json_string(nt->role));
		if (nt->rail[0])
			json_object_set_new(o, "rail", json_string(nt->rail));
		if (nt->leaf[0])
			json_object_set_new(o, "leaf", json_string(nt->leaf));
		for (size_t k = 0; k < 3; k++)
			if (cv[k] >= 0) {
				if (!c)
					c = json_object();
				json_object_set_new(c, cnames[k], json_integer((json_int_t)cv[k]));
			}
		if (c)
			json_object_set_new(o, "counters", c);
		return;
	}
}

/* The last plan this node took: its id, state and address handles (lock held). */
static json_t *plan_json(struct plan_run *pl)
{
	struct probe_ah_stats st = pl->ah_st;
	char id[17];
	json_t *o;

	if (pl->running)
		probe_ahs_stats(pl->ahs, &st);
	probe_plan_id_text(pl->s.plan, id);
	o = json_pack("{s:s, s:s, s:I}", "id", id, "state", pl->running ? "running" : "done",
		      "entries", (json_int_t)pl->s.n);
	if (o)
		json_object_set_new(o, "address_handles", probe_ah_stats_json(&st));
	return o;
}

json_t *probe_responder_json(struct probe_responder *r)
{
	json_t *doc = json_object(), *ports = json_array();

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n; i++) {
		const struct probe_port *p = probe_ep_port(r->eps[i]);
		struct probe_ep_stats st;

		probe_ep_stats(r->eps[i], &st);
		json_t *o = json_pack(
		    "{s:s, s:i, s:s, s:I, s:I, s:s, s:i, s:i, s:s}", "device", p->device, "port",
		    (int)p->port, "netdev", p->netdev, "qpn", (json_int_t)probe_ep_qpn(r->eps[i]),
		    "qkey", (json_int_t)PROBE_QKEY, "gid", p->gid, "gid_index", p->gid_index,
		    "active_mtu", (int)p->active_mtu, "state", p->active ? "ACTIVE" : "not active");

		/* what the responder did: echoed, dropped (no slot, over the MTU), not probes */
		json_object_set_new(o, "requests", json_integer((json_int_t)st.requests));
		json_object_set_new(o, "replies", json_integer((json_int_t)st.replies));
		json_object_set_new(o, "dropped", json_integer((json_int_t)st.dropped));
		json_object_set_new(o, "not_probes", json_integer((json_int_t)st.bad));
		json_object_set_new(o, "errors", json_integer((json_int_t)st.errors));
		note_json(r, p, o);
		json_array_append_new(ports, o);
	}
	json_object_set_new(doc, "version", json_integer(PROBE_VERSION));
	json_object_set_new(doc, "qkey", json_integer(PROBE_QKEY));
	json_object_set_new(doc, "ports", ports);
	if (r->plan)
		json_object_set_new(doc, "plan", plan_json(r->plan));
	if (r->host[0])
		json_object_set_new(doc, "host", json_string(r->host));
	if (r->err[0])
		json_object_set_new(doc, "error", json_string(r->err));
	pthread_mutex_unlock(&r->lock);
	return doc;
}

int probe_responder_render(struct probe_responder *r, struct strbuf *out)
{
	json_t *doc = probe_responder_json(r);
	char *s = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;

	json_decref(doc);
	if (!s)
		return 500;
	sb_puts(out, s);
	sb_putc(out, '\n');
	free(s);
	return 200;
}

int probe_responder_peers(struct probe_responder *r, char *const *peers, size_t n_peers,
			  const unsigned *sizes, size_t n_sizes, int64_t interval_ns, int dscp)
{
	if (!n_peers || n_peers > PROBE_CONT_MAX_PEERS || !n_sizes ||
	    n_sizes > PROBE_CONT_MAX_SIZES || interval_ns <= 0 || dscp < 0 || dscp > 63)
		return -EINVAL;
	r->peers = calloc(n_peers, sizeof(*r->peers));
	r->fl = calloc(OUT_N, sizeof(*r->fl));
	if (!r->peers || !r->fl)
		return -ENOMEM;
	for (size_t i = 0; i < n_peers; i++) {
		snprintf(r->peers[i].name, sizeof(r->peers[i].name), "%s", peers[i]);
		snprintf(r->peers[i].error, sizeof(r->peers[i].error), "probe info not read yet");
	}
	r->n_peers = n_peers;
	memcpy(r->sizes, sizes, n_sizes * sizeof(*sizes));
	r->n_sizes = n_sizes;
	r->interval_ns = interval_ns;
	r->tclass = (uint8_t)(dscp << 2 | PROBE_ECT0);
	/* replies of an earlier run of serve, still on the wire, are not counted */
	r->session = (uint32_t)(mono_ns() ^ real_ns() ^ (int64_t)getpid() << 16);
	return 0;
}

void probe_responder_peer_info(struct probe_responder *r, size_t i, const struct probe_info *pi,
			       const char *err)
{
	struct cont_peer *p;

	if (i >= r->n_peers)
		return;
	pthread_mutex_lock(&r->lock);
	p = &r->peers[i];
	if (pi) {
		p->pi = *pi;
		p->known = true;
	} else {
		/* keep probing what we knew: the node's serve may be down, its QP not */
		snprintf(p->error, sizeof(p->error), "%s", err ? err : "unknown error");
	}
	pthread_mutex_unlock(&r->lock);
}

static void peer_labels(struct strbuf *sb, const char *family, const char *peer)
{
	sb_puts(sb, family);
	sb_puts(sb, "{peer=\"");
	sb_label_escape(sb, peer);
	sb_putc(sb, '"');
}

static void rail_label(struct strbuf *sb, const char *family, const char *rail)
{
	sb_puts(sb, family);
	sb_puts(sb, "{rail=\"");
	sb_label_escape(sb, rail);
	sb_putc(sb, '"');
}

/* The fleet probe plans this node took part in (lock held). */
static void render_plan_metrics(struct strbuf *sb, const struct probe_responder *r)
{
	if (!r->plans)
		return;
	sb_puts(sb, "# HELP roce_probe_pairs_total Fleet probe pairs this node probed on its "
		    "rails (the plans it took part in), by outcome: ok, lost (no size came back), "
		    "mtu (the path-MTU size did not), paths (some flow labels did not).\n"
		    "# TYPE roce_probe_pairs_total counter\n");
	for (size_t i = 0; i < r->n_pstat; i++)
		for (int o = PROBE_OUT_OK; o <= PROBE_OUT_PATHS; o++) {
			rail_label(sb, "roce_probe_pairs_total", r->pstat[i].rail);
			sb_printf(sb, ",result=\"%s\"} %llu\n",
				  probe_outcome_name((enum probe_outcome)o),
				  (unsigned long long)r->pstat[i].pairs[o]);
		}
	sb_puts(sb, "# HELP roce_probe_plan_rtt_seconds Round trips of the last fleet probe plan "
		    "(each pair's smallest, software timestamps), by rail.\n"
		    "# TYPE roce_probe_plan_rtt_seconds summary\n");
	for (size_t i = 0; i < r->n_pstat; i++) {
		const struct plan_rail_stat *st = &r->pstat[i];

		if (st->count) {
			rail_label(sb, "roce_probe_plan_rtt_seconds", st->rail);
			sb_puts(sb, ",quantile=\"0.5\"} ");
			sb_double(sb, (double)st->p50_ns / 1e9);
			sb_putc(sb, '\n');
			rail_label(sb, "roce_probe_plan_rtt_seconds", st->rail);
			sb_puts(sb, ",quantile=\"0.99\"} ");
			sb_double(sb, (double)st->p99_ns / 1e9);
			sb_putc(sb, '\n');
		}
		rail_label(sb, "roce_probe_plan_rtt_seconds_sum", st->rail);
		sb_puts(sb, "} ");
		sb_double(sb, st->sum_s);
		sb_putc(sb, '\n');
		rail_label(sb, "roce_probe_plan_rtt_seconds_count", st->rail);
		sb_printf(sb, "} %llu\n", (unsigned long long)st->count);
	}
	sb_puts(sb, "# HELP roce_probe_plans_total Fleet probe plans this node ran to the end.\n"
		    "# TYPE roce_probe_plans_total counter\n");
	sb_printf(sb, "roce_probe_plans_total %llu\n", (unsigned long long)r->plans);
	sb_puts(sb, "# HELP roce_probe_plan_last_timestamp_seconds When the last fleet probe plan "
		    "this node took part in ended.\n"
		    "# TYPE roce_probe_plan_last_timestamp_seconds gauge\n"
		    "roce_probe_plan_last_timestamp_seconds ");
	sb_double(sb, (double)r->last_plan_ns / 1e9);
	sb_putc(sb, '\n');
}

void probe_responder_render_metrics(struct strbuf *sb, void *arg)
{
	struct probe_responder *r = arg;
	static const char *const counters[][2] = {
		{ "roce_probe_sent_total", "RDMA probes sent to the peer (serve --probe.peers), by "
					   "payload size in bytes." },
		{ "roce_probe_lost_total", "RDMA probes to the peer without an intact reply within "
					   "1 s, by payload size in bytes." },
	};

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	render_plan_metrics(sb, r);
	if (!r->n_peers) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	sb_puts(sb, "# HELP roce_probe_peer_up 1 while the peer's probe QP is known and an "
		    "address handle to it exists, else 0.\n# TYPE roce_probe_peer_up gauge\n");
	for (size_t i = 0; i < r->n_peers; i++) {
		peer_labels(sb, "roce_probe_peer_up", r->peers[i].name);
		sb_printf(sb, "} %d\n", r->peers[i].known && r->peers[i].ah ? 1 : 0);
	}
	for (size_t c = 0; c < 2; c++) {
		sb_printf(sb, "# HELP %s %s\n# TYPE %s counter\n", counters[c][0], counters[c][1],
			  counters[c][0]);
		for (size_t i = 0; i < r->n_peers; i++)
			for (size_t k = 0; k < r->n_sizes; k++) {
				const struct cont_stat *st = &r->peers[i].st[k];

				peer_labels(sb, counters[c][0], r->peers[i].name);
				sb_printf(sb, ",size=\"%u\"} %llu\n", r->sizes[k],
					  (unsigned long long)(c ? st->lost : st->sent));
			}
	}
	sb_puts(sb, "# HELP roce_probe_rtt_seconds Round-trip time of RDMA probes to the peer "
		    "(software timestamps), by payload size in bytes.\n"
		    "# TYPE roce_probe_rtt_seconds histogram\n");
	for (size_t i = 0; i < r->n_peers; i++)
		for (size_t k = 0; k < r->n_sizes; k++) {
			const struct cont_stat *st = &r->peers[i].st[k];
			uint64_t cum = 0;

			for (size_t b = 0; b <= N_LE; b++) {
				cum += st->bucket[b];
				peer_labels(sb, "roce_probe_rtt_seconds_bucket", r->peers[i].name);
				if (b < N_LE)
					sb_printf(sb, ",size=\"%u\",le=\"%g\"} %llu\n", r->sizes[k],
						  rtt_le[b], (unsigned long long)cum);
				else
					sb_printf(sb, ",size=\"%u\",le=\"+Inf\"} %llu\n",
						  r->sizes[k], (unsigned long long)cum);
			}
			peer_labels(sb, "roce_probe_rtt_seconds_sum", r->peers[i].name);
			sb_printf(sb, ",size=\"%u\"} ", r->sizes[k]);
			sb_double(sb, st->sum);
			sb_putc(sb, '\n');
			peer_labels(sb, "roce_probe_rtt_seconds_count", r->peers[i].name);
			sb_printf(sb, ",size=\"%u\"} %llu\n", r->sizes[k],
				  (unsigned long long)st->received);
		}
	pthread_mutex_unlock(&r->lock);
}
