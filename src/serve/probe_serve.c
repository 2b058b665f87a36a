// SPDX-License-Identifier: MIT
/* serve --probe.peers: the peers' probe info, read in the background (probe_serve.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "client.h"
#include "probe_info.h"
#include "probe_serve.h"
#include "util.h"

#define PEER_PORT  9479
#define REFRESH_NS 30000000000LL /* the peers' QPNs change only when their serve restarts */
#define RETRY_NS   5000000000LL
static const unsigned sizes[] = { 64, 1024, 4096 };

void probe_serve_init(struct probe_serve *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->interval_ns = 1000000000LL;
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->cond, NULL);
	ps->inited = true;
}

/* --probe.peers: the peers' names, each with serve's port unless it has one. */
static int opt_peers(const struct cli_opt *o, void *member, const char *arg)
{
	struct hostlist *peers = member;
	char err[512];
	size_t before = peers->n;
	int r;

	r = hostlist_expand(peers, arg, err, sizeof(err));
	if (!r && peers->n > PROBE_CONT_MAX_PEERS) {
		snprintf(err, sizeof(err), "more than %d peers", PROBE_CONT_MAX_PEERS);
		r = -E2BIG;
	}
	if (r) {
		fprintf(stderr, "rocewatch serve: --%s: %s\n", o->name,
			r == -ENOMEM ? "out of memory" : err);
		return -EINVAL;
	}
	/* "host" -> "host:9479", as fleet check and probe name them */
	for (size_t i = before; i < peers->n; i++) {
		size_t len = strlen(peers->names[i]) + 8;
		char *w = malloc(len);

		if (!w)
			return -ENOMEM;
		hostlist_with_port(peers->names[i], PEER_PORT, w, len);
		free(peers->names[i]);
		peers->names[i] = w;
	}
	return 0;
}

const struct cli_opt probe_serve_opts[] = {
	{ .name = "probe.peers",
	  CLI_CALL_AT(struct probe_serve, peers, opt_peers),
	  .metavar = "LIST",
	  .help = "with --probe: also probe these nodes (host[:port],\n"
		  "hostlists, comma-separated; repeatable) every\n"
		  "--probe.interval: roce_probe_* metrics" },
	{ .name = "probe.interval",
	  CLI_DURATION_AT(struct probe_serve, interval_ns),
	  .min = 100000000LL,
	  .bad = "a duration of at least 100ms",
	  .metavar = "DURATION",
	  .help = "one probe of each size (64, 1024, 4096) to each\n"
		  "peer this often (default 1s, at least 100ms)" },
	{ 0 },
};

int probe_profile_dscp(const struct rules_engine *e, int *dscp, const char **bad)
{
	for (size_t p = 0; e && p < rules_profile_count(e); p++)
		for (size_t i = 0; i < rules_profile(e, p)->n_params; i++) {
			const char *name, *value;
			uint64_t v;

			rules_profile_param(e, p, i, &name, &value);
			if (strcmp(name, "roce_dscp"))
				continue;
			if (parse_u64(value, &v) || v > 63) {
				if (bad)
					*bad = rules_profile(e, p)->name;
				return -EINVAL;
			}
			*dscp = (int)v;
			return 0;
		}
	return -ENOENT;
}

int probe_serve_setup(struct probe_serve *ps, struct probe_responder *r, int dscp)
{
	int rc;

	if (!ps->peers.n)
		return 0;
	rc = probe_responder_peers(r, ps->peers.names, ps->peers.n, sizes,
				   sizeof(sizes) / sizeof(sizes[0]), ps->interval_ns, dscp);
	if (rc)
		return rc;
	ps->r = r;
	return 0;
}

/* Read every peer's /api/v1/probe once; true when all could be read. */
static bool fetch_all(struct probe_serve *ps)
{
	struct client_http_opts ho;
	struct client_req *reqs = calloc(ps->peers.n, sizeof(*reqs));
	char(*urls)[400] = calloc(ps->peers.n, sizeof(*urls));
	bool all = true;

	if (!reqs || !urls) {
		free(reqs);
		free(urls);
		return false;
	}
	client_http_defaults(&ho);
	for (size_t i = 0; i < ps->peers.n; i++) {
		snprintf(urls[i], sizeof(urls[i]), "http://%s/api/v1/probe", ps->peers.names[i]);
		reqs[i].url = urls[i];
	}
	if (client_http_run(reqs, ps->peers.n, &ho, NULL, NULL))
		all = false;
	for (size_t i = 0; i < ps->peers.n; i++) {
		struct probe_info pi;
		char err[600], why[256];

		if (reqs[i].err) {
			snprintf(err, sizeof(err), "cannot read %s: %s", urls[i],
				 reqs[i].http_code == 404 ? "404: its serve runs without --probe"
							  : reqs[i].errmsg);
			probe_responder_peer_info(ps->r, i, NULL, err);
			rw_log_once(LOG_LVL_WARN, urls[i], "probe: %s", err);
			all = false;
		} else if (probe_info_parse(reqs[i].body, reqs[i].len, &pi, why, sizeof(why))) {
			snprintf(err, sizeof(err), "%s: %s", urls[i], why);
			probe_responder_peer_info(ps->r, i, NULL, err);
			rw_log_once(LOG_LVL_WARN, urls[i], "probe: %s", err);
			all = false;
		} else {
			probe_responder_peer_info(ps->r, i, &pi, NULL);
			rw_log_once_reset(urls[i]);
		}
		client_req_free(&reqs[i]);
	}
	free(reqs);
	free(urls);
	return all;
}

static void *fetch_main(void *arg)
{
	struct probe_serve *ps = arg;

	pthread_mutex_lock(&ps->lock);
	while (!ps->stop) {
		bool all;
		struct timespec ts;

		pthread_mutex_unlock(&ps->lock);
		all = fetch_all(ps);
		ts = ns_ts(real_ns() + (all ? REFRESH_NS : RETRY_NS));
		pthread_mutex_lock(&ps->lock);
		while (!ps->stop && pthread_cond_timedwait(&ps->cond, &ps->lock, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&ps->lock);
	return NULL;
}

static int64_t cset_value(const struct object *o, enum cset_id c, const char *name)
{
	int k = o ? cset_find(&o->cs[c], name) : -1;

	return k >= 0 ? (int64_t)o->cs[c].vals[k] : -1;
}

static int64_t int_field(const struct object *o, enum field_id id)
{
	return o && field_present(o, id) ? o->f[id].v.i : -1;
}

/* The host's facts a host_path finding quotes, "" when none is out of the ordinary. */
static void host_facts(const struct node_model *m, char *buf, size_t len)
{
	int64_t acs = int_field(&m->node, F_NODE_PCIE_ACS_REDIRECT_GPUS);
	int64_t tr = int_field(&m->node, F_NODE_IOMMU_TRANSLATED_DEVICES);
	int64_t deg = int_field(&m->node, F_NODE_GPUS_PCIE_LINK_DEGRADED);
	size_t n = 0;

	buf[0] = 0;
	if (acs > 0)
		n += (size_t)snprintf(buf + n, len - n, "%sACS redirects %lld GPU paths",
				      n ? ", " : "", (long long)acs);
	if (tr > 0 && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%sIOMMU translates DMA of %lld devices",
				      n ? ", " : "", (long long)tr);
	if (deg > 0 && n < len)
		snprintf(buf + n, len - n, "%s%lld GPU PCIe links narrower than they allow",
			 n ? ", " : "", (long long)deg);
}

/*
 * After every poll (model locked): the ports' role, rail, leaf and link
 * counters, and the host's facts, for /api/v1/probe.  Only copies.
 */
static void probe_after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct probe_serve *ps = arg;
	struct probe_port_note notes[64];
	char host[256];
	size_t n = 0;

	(void)what;
	for (size_t i = 0; i < m->n_ports && n < sizeof(notes) / sizeof(notes[0]); i++) {
		const struct object *o = m->ports[i];
		struct probe_port_note *nt = &notes[n++];

		memset(nt, 0, sizeof(*nt));
		strlcpy0(nt->device, o->name, sizeof(nt->device));
		nt->port = o->port;
		if (field_present(o, F_PORT_ROLE))
			strlcpy0(nt->role, o->f[F_PORT_ROLE].v.s, sizeof(nt->role));
		if (field_present(o, F_PORT_RAIL))
			strlcpy0(nt->rail, o->f[F_PORT_RAIL].v.s, sizeof(nt->rail));
		if (field_present(o, F_PORT_LEAF))
			strlcpy0(nt->leaf, o->f[F_PORT_LEAF].v.s, sizeof(nt->leaf));
		nt->link_downed = cset_value(o, CSET_PORT, "link_downed");
		nt->symbol_errors = cset_value(o, CSET_PORT, "symbol_error");
		nt->carrier_changes = int_field(o->netdev, F_NETDEV_CARRIER_CHANGES);
	}
	host_facts(m, host, sizeof(host));
	if (probe_responder_annotate(ps->resp, notes, n, host))
		rw_log_once(LOG_LVL_WARN, "probe-notes", "probe: out of memory for port notes");
}

static void probe_render(struct strbuf *sb, void *arg)
{
	struct probe_serve *ps = arg;

	probe_responder_render_metrics(sb, ps->resp);
}

void probe_serve_attach(struct probe_serve *ps, struct probe_responder *r)
{
	ps->resp = r;
}

int probe_serve_start(struct probe_serve *ps, struct daemon_hook *hook, int *n_hooks)
{
	int rc;

	*n_hooks = 0;
	if (!ps->resp)
		return 0;
	*hook = (struct daemon_hook){
		.name = "probe", .after_poll = probe_after_poll, .render = probe_render, .arg = ps
	};
	*n_hooks = 1;
	if (!ps->r)
		return 0;
	rc = pthread_create(&ps->thr, NULL, fetch_main, ps);
	if (rc) {
		fprintf(stderr, "rocewatch serve: --probe.peers: thread: %s\n", strerror(rc));
		return -rc;
	}
	ps->running = true;
	return 0;
}

void probe_serve_fini(struct probe_serve *ps)
{
	if (ps->running) {
		pthread_mutex_lock(&ps->lock);
		ps->stop = true;
		pthread_cond_signal(&ps->cond);
		pthread_mutex_unlock(&ps->lock);
		pthread_join(ps->thr, NULL);
		ps->running = false;
	}
	hostlist_free(&ps->peers);
	if (ps->inited) {
		pthread_mutex_destroy(&ps->lock);
		pthread_cond_destroy(&ps->cond);
		ps->inited = false;
	}
}
