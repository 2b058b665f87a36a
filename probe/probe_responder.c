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

#include "probe_responder.h"
#include "probe_ud.h"
#include "util.h"

#define MAX_EPS 64

struct probe_responder {
	pthread_t thr;
	bool running;
	int stop_pipe[2];
	pthread_mutex_t lock; /* eps and err: the thread changes them, render reads them */
	struct probe_ep *eps[MAX_EPS];
	size_t n;
	char err[256]; /* the last rescan's problem, "" when none */
};

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

static void *thread_main(void *arg)
{
	struct probe_responder *r = arg;
	int64_t next_check = mono_ns() + 1000000000LL;
	int64_t next_scan = mono_ns() + PROBE_RESCAN_S * 1000000000LL;

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
		/* Only this thread adds or removes endpoints: polled[] stays valid. */
		if (poll(pfd, (nfds_t)n + 1, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[n].revents)
			break;
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
	for (size_t i = 0; i < r->n; i++)
		probe_ep_close(r->eps[i]);
	if (r->stop_pipe[0] >= 0)
		close(r->stop_pipe[0]);
	if (r->stop_pipe[1] >= 0)
		close(r->stop_pipe[1]);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int probe_responder_render(struct probe_responder *r, struct strbuf *out)
{
	json_t *doc = json_object(), *ports = json_array();
	char *s;

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
		json_array_append_new(ports, o);
	}
	json_object_set_new(doc, "version", json_integer(PROBE_VERSION));
	json_object_set_new(doc, "qkey", json_integer(PROBE_QKEY));
	json_object_set_new(doc, "ports", ports);
	if (r->err[0])
		json_object_set_new(doc, "error", json_string(r->err));
	pthread_mutex_unlock(&r->lock);
	s = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	if (!s)
		return 500;
	sb_puts(out, s);
	sb_putc(out, '\n');
	free(s);
	return 200;
}
