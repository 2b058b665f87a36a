// SPDX-License-Identifier: MIT
/* The fleet probe's coordinator (probe_fleet.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_fleet.h"
#include "util.h"

int probe_fleet_slice(const struct probe_plan *p, const struct probe_fleet_addr *addr, size_t i,
		      const struct probe_fleet_opts *o, int64_t start_ns, struct probe_slice *s)
{
	const struct probe_plan_node *nd = &p->nodes[i];
	size_t n = probe_plan_slice_len(p, i), at = p->port_rail_at[i];
	struct probe_entry *pe = malloc((n ? n : 1) * sizeof(*pe));

	memset(s, 0, sizeof(*s));
	s->ports = calloc(nd->n_ports ? nd->n_ports : 1, sizeof(*s->ports));
	s->e = malloc((n ? n : 1) * sizeof(*s->e));
	if (!pe || !s->ports || !s->e) {
		free(pe);
		probe_slice_free(s);
		return -ENOMEM;
	}
	s->plan = o->plan_id;
	s->session = o->session;
	strlcpy0(s->node, nd->name, sizeof(s->node));
	s->start_ns = start_ns;
	s->slot_ns = p->slot_ns;
	s->probe_ns = p->probe_ns;
	s->wait_ns = p->wait_ns;
	s->n_slots = p->n_slots;
	s->repeats = p->repeats;
	s->paths = p->paths;
	s->dscp = o->dscp;
	s->n_ports = nd->n_ports;
	for (size_t k = 0; k < nd->n_ports; k++) {
		strlcpy0(s->ports[k].device, addr[at + k].device, sizeof(s->ports[k].device));
		s->ports[k].port = addr[at + k].port;
		inet_ntop(AF_INET6, addr[at + k].gid, s->ports[k].gid, sizeof(s->ports[k].gid));
	}
	s->n = probe_plan_slice(p, i, pe);
	for (size_t k = 0; k < s->n; k++) {
		const struct probe_fleet_addr *d =
		    &addr[p->port_rail_at[pe[k].dst] + pe[k].dst_port];

		s->e[k] = (struct probe_slice_entry){ .slot = pe[k].slot,
						      .mtu = pe[k].mtu,
						      .port = (uint8_t)pe[k].port,
						      .labels = pe[k].labels,
						      .kind = pe[k].kind,
						      .qpn = d->qpn };
		memcpy(s->e[k].gid, d->gid, 16);
	}
	free(pe);
	return 0;
}

void probe_fleet_out_free(struct probe_fleet_out *out, size_t n_nodes)
{
	if (!out)
		return;
	for (size_t i = 0; out->res && i < n_nodes; i++)
		free(out->res[i]);
	for (size_t i = 0; out->err && i < n_nodes; i++)
		free(out->err[i]);
	free(out->res);
	free(out->err);
	probe_findings_free(&out->f);
	memset(out, 0, sizeof(*out));
}

static int node_err(struct probe_fleet_out *out, size_t i, const char *what, const char *msg)
{
	size_t len = strlen(what) + strlen(msg) + 3;

	free(out->err[i]);
	out->err[i] = malloc(len);
	if (!out->err[i])
		return -ENOMEM;
	snprintf(out->err[i], len, "%s: %s", what, msg);
	out->failed++;
	return 0;
}

static void xfer_reset(struct probe_xfer *x, size_t m)
{
	for (size_t k = 0; k < m; k++) {
		sb_free(&x[k].body);
		x[k].err = 0;
		x[k].msg[0] = 0;
		x[k].seconds = 0;
	}
}

/* Every node its slice, a batch at a time. */
static int distribute(const struct probe_plan *p, const struct probe_fleet_addr *addr,
		      const struct probe_transport *t, const struct probe_fleet_opts *o,
		      struct probe_xfer *x, size_t batch, struct probe_fleet_out *out,
		      int64_t (*now)(void))
{
	for (size_t i0 = 0; i0 < p->n_nodes; i0 += batch) {
		size_t m = p->n_nodes - i0 < batch ? p->n_nodes - i0 : batch;
		int64_t t0 = now();

		for (size_t k = 0; k < m; k++) {
			struct probe_slice s;

			x[k].node = i0 + k;
			if (probe_fleet_slice(p, addr, i0 + k, o, out->st.start_ns, &s) ||
			    probe_slice_encode(&x[k].body, &s)) {
				probe_slice_free(&s);
				return -ENOMEM;
			}
			probe_slice_free(&s);
			out->st.slice_bytes += x[k].body.len;
		}
		out->st.encode_ns += now() - t0;
		t0 = now();
		t->post(t->ctx, x, m);
		out->st.post_ns += now() - t0;
		for (size_t k = 0; k < m; k++)
			if (x[k].err && node_err(out, i0 + k, "did not take its slice", x[k].msg))
				return -ENOMEM;
		xfer_reset(x, m);
	}
	return 0;
}

static void add_ah(struct probe_fleet_out *out, const struct probe_ah_stats *ah)
{
	struct probe_ah_stats *t = &out->ah;

	if (!out->ah_nodes++) {
		*t = *ah;
		t->known = true;
	} else {
		t->made += ah->made;
		t->failed += ah->failed;
		t->lazy += ah->lazy;
		t->create_ns += ah->create_ns;
		t->max_ns = ah->max_ns > t->max_ns ? ah->max_ns : t->max_ns;
		t->ready_ns = t->ready_ns < 0 || ah->ready_ns < 0 ? -1
			      : ah->ready_ns > t->ready_ns	  ? ah->ready_ns
								  : t->ready_ns;
		t->before_start &= ah->before_start;
	}
	out->ah_late += !ah->before_start;
}

/* Every node that took its slice, its results. */
static int gather(const struct probe_plan *p, const struct probe_transport *t,
		  const struct probe_fleet_opts *o, struct probe_xfer *x, size_t batch,
		  struct probe_fleet_out *out, int64_t (*now)(void))
{
	for (size_t i0 = 0; i0 < p->n_nodes; i0 += batch) {
		size_t m = 0, lim = p->n_nodes - i0 < batch ? p->n_nodes - i0 : batch;
		int64_t t0 = now();

		for (size_t k = 0; k < lim; k++)
			if (!out->err[i0 + k])
				x[m++].node = i0 + k;
		if (!m)
			continue;
		t->collect(t->ctx, x, m, out->st.ready_ns, out->st.deadline_ns);
		out->st.collect_ns += now() - t0;
		t0 = now();
		for (size_t k = 0; k < m; k++) {
			size_t i = x[k].node, n = probe_plan_slice_len(p, i);
			struct probe_ah_stats ah;
			char err[256];
			int r;

			out->st.result_bytes += x[k].body.len;
			if (x[k].err) {
				if (node_err(out, i, "no results", x[k].msg))
					return -ENOMEM;
				continue;
			}
			out->res[i] = malloc((n ? n : 1) * sizeof(**out->res));
			if (!out->res[i])
				return -ENOMEM;
			r = probe_results_decode(x[k].body.buf ? x[k].body.buf : "", x[k].body.len,
						 o->plan_id, n, out->res[i], &ah, err, sizeof(err));
			if (r == -ENOMEM)
				return r;
			if (r) {
				free(out->res[i]);
				out->res[i] = NULL;
				if (node_err(out, i, r > 0 ? "no results" : "results",
					     r > 0 ? "still running at the deadline" : err))
					return -ENOMEM;
			} else if (ah.known) {
				add_ah(out, &ah);
			}
		}
		out->st.decode_ns += now() - t0;
		xfer_reset(x, m);
	}
	return 0;
}

int probe_fleet_run(const struct probe_plan *p, const struct probe_fleet_addr *addr,
		    const struct probe_transport *t, const struct probe_fleet_opts *o,
		    struct probe_fleet_out *out)
{
	int64_t (*now)(void) = o->now ? o->now : real_ns;
	size_t batch = o->batch ? o->batch : 64;
	struct probe_xfer *x = calloc(batch, sizeof(*x));
	int64_t t0;
	int r = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->res = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*out->res));
	out->err = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*out->err));
	if (!x || !out->res || !out->err)
		goto out;
	out->st.start_ns = now() + p->lead_ns;
	out->st.ready_ns = out->st.start_ns + (int64_t)p->n_slots * p->slot_ns + p->wait_ns;
	out->st.deadline_ns = out->st.ready_ns + p->collect_ns + o->grace_ns;
	if ((r = distribute(p, addr, t, o, x, batch, out, now)) ||
	    (r = gather(p, t, o, x, batch, out, now)))
		goto out;
	t0 = now();
	r = probe_locate(p, (const struct probe_result *const *)out->res, &o->locate, &out->f);
	out->st.locate_ns = now() - t0;
out:
	if (x)
		xfer_reset(x, batch);
	free(x);
	return r;
}
