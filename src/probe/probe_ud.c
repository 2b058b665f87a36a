// SPDX-License-Identifier: MIT
/*
 * The probe endpoint (probe_ud.h): one UD QP, one CQ with a completion
 * channel, one registered buffer cut into receive and send slots.
 *
 * The responder builds the reply's address handle from the received
 * headers itself instead of ibv_create_ah_from_wc(): that call looks for
 * our own GID's index by walking the GID table (1024 slots on rxe) for
 * every reply, while the index is already known.  What it reads is what
 * ibv_init_ah_from_wc() reads (rdma-core libibverbs/verbs.c): for RoCE v2
 * over IPv4 the 40 bytes before the payload end with the IPv4 header
 * (source address at 20 + 12, TOS at 20 + 1); otherwise they are a GRH
 * (IPv6 layout: source GID at 8, traffic class across bytes 0-1).  The
 * reply keeps the request's traffic class.
 *
 * libibverbs is opened on first use (src/core/verbs_lazy.c says why):
 * probe_ports() and probe_ep_open() are the two ways in that take no
 * endpoint, and each opens it first, so that without the library the
 * responder, `probe` and the fleet probe's slices fail with it named;
 * everything else takes an endpoint, which only an opened library gives.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "probe_ud.h"
#include "util.h"
#include "verbs_lazy.h"

#define N_RECV	 32
#define N_SEND	 32
#define SLOT	 (PROBE_GRH_LEN + PROBE_MAX_SIZE + 24) /* 4160: 64-byte aligned slots */
#define N_AH	 16
#define HOPLIMIT 64

struct ah_entry {
	struct ibv_ah *ah;
	uint8_t gid[16];
	uint8_t tclass;
};

/* Where the replies of one session go: continuous mode's or a fleet plan's. */
struct reply_sink {
	uint32_t session;
	probe_reply_fn *fn;
	void *arg;
};

struct probe_ep {
	struct probe_port port;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	bool send_busy[N_SEND];
	unsigned sends_out;
	int hw_ts;
	/* responder: reply address handles by (source GID, traffic class) */
	struct ah_entry ahs[N_AH];
	size_t n_ah, next_ah;
	/* responder: where replies to its own probes go (serve --probe.peers) */
	struct reply_sink reply;
	/* prober: the peer */
	struct ibv_ah *peer_ah;
	uint32_t peer_qpn, peer_qkey;
	struct probe_ep_stats st;
	/* fleet probe: where its replies go, its handles to reply with first */
	struct reply_sink plan_reply;
	probe_ah_find_fn *ah_find;
	void *ah_find_arg;
	/* responder: replies in the current 100 ms window (PROBE_REPLY_RATE) */
	int64_t window_ns;
	unsigned window_replies;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

static bool sink_take(const struct reply_sink *s, const struct probe_hdr *h, bool intact)
{
	if (!s->fn || h->session != s->session)
		return false;
	s->fn(s->arg, h, intact, now_ns());
	return true;
}

static unsigned mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

static bool gid_is_v4mapped(const uint8_t *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g, pfx, sizeof(pfx));
}

/* The port's IPv4-mapped RoCE v2 GID with the lowest index; false if none. */
static bool pick_gid(const struct ibv_gid_entry *e, ssize_t n, unsigned port, struct probe_port *p)
{
	bool found = false;

	for (ssize_t i = 0; i < n; i++) {
		if (e[i].port_num != port || e[i].gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    !gid_is_v4mapped(e[i].gid.raw))
			continue;
		if (found && (int)e[i].gid_index >= p->gid_index)
			continue;
		found = true;
		p->gid_index = (int)e[i].gid_index;
		memcpy(p->gid_raw, e[i].gid.raw, 16);
		inet_ntop(AF_INET6, e[i].gid.raw, p->gid, sizeof(p->gid));
		if (!e[i].ndev_ifindex || !if_indextoname(e[i].ndev_ifindex, p->netdev))
			p->netdev[0] = 0;
	}
	return found;
}

static int device_ports(struct ibv_device *dev, struct probe_port **out, size_t *n, size_t *cap)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_device_attr da;
	struct ibv_gid_entry *ge = NULL;
	ssize_t ng;
	size_t max = 0;
	int r = 0;

	if (!ctx)
		return errno ? -errno : -EIO;
	if (ibv_query_device(ctx, &da)) {
		r = -EIO;
		goto close;
	}
	for (unsigned p = 1; p <= da.phys_port_cnt; p++) {
		struct ibv_port_attr pa;

		if (!ibv_query_port(ctx, (uint8_t)p, &pa))
			max += (size_t)pa.gid_tbl_len;
	}
	ge = calloc(max ? max : 1, sizeof(*ge));
	if (!ge) {
		r = -ENOMEM;
		goto close;
	}
	ng = max ? ibv_query_gid_table(ctx, ge, max, 0) : 0;
	if (ng < 0)
		ng = 0;
	for (unsigned p = 1; p <= da.phys_port_cnt; p++) {
		struct ibv_port_attr pa;
		struct probe_port pp = { .port = p };

		if (ibv_query_port(ctx, (uint8_t)p, &pa) ||
		    pa.link_layer != IBV_LINK_LAYER_ETHERNET)
			continue;
		if (!pick_gid(ge, ng, p, &pp))
			continue;
		snprintf(pp.device, sizeof(pp.device), "%s", ibv_get_device_name(dev));
		snprintf(pp.dev_path, sizeof(pp.dev_path), "%s", dev->dev_path);
		pp.active_mtu = mtu_bytes(pa.active_mtu);
		pp.active = pa.state == IBV_PORT_ACTIVE;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 4;
			struct probe_port *t = realloc(*out, nc * sizeof(*t));

			if (!t) {
				r = -ENOMEM;
				goto close;
			}
			*out = t;
			*cap = nc;
		}
		(*out)[(*n)++] = pp;
	}
close:
	free(ge);
	ibv_close_device(ctx);
	return r;
}

int probe_ports(struct probe_port **out, size_t *n, char *err, size_t errlen)
{
	struct ibv_device **list;
	size_t cap = 0;
	int num = 0, opened = 0, first_err = 0, r;
	const char *first_dev = "";

	*out = NULL;
	*n = 0;
	r = verbs_lazy_open(err, errlen);
	if (r)
		return r;
	list = ibv_get_device_list(&num);
	if (!list || !num) {
		if (list)
			ibv_free_device_list(list);
		snprintf(err, errlen, "no RDMA device (libibverbs finds none)");
		return -ENODEV;
	}
	for (int i = 0; i < num; i++) {
		r = device_ports(list[i], out, n, &cap);
		if (r == -ENOMEM) {
			ibv_free_device_list(list);
			snprintf(err, errlen, "out of memory");
			return r;
		}
		if (!r) {
			opened++;
		} else if (!first_err) {
			first_err = r;
			first_dev = ibv_get_device_name(list[i]);
			snprintf(err, errlen, "cannot open RDMA device %s: %s%s", first_dev,
				 strerror(-r),
				 r == -EACCES || r == -EPERM
				     ? " (no access to /dev/infiniband/uverbs*: run as root or "
				       "grant the device)"
				     : "");
		}
	}
	ibv_free_device_list(list);
	/* Devices we could not open at all are the error only if none opened. */
	return opened ? 0 : first_err;
}

static uint8_t *slot_recv(struct probe_ep *ep, unsigned i)
{
	return ep->buf + (size_t)i * SLOT;
}

static uint8_t *slot_send(struct probe_ep *ep, unsigned j)
{
	return ep->buf + (size_t)(N_RECV + j) * SLOT;
}

static int post_recv(struct probe_ep *ep, unsigned i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot_recv(ep, i),
		.length = PROBE_GRH_LEN + PROBE_MAX_SIZE,
		.lkey = ep->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	return -ibv_post_recv(ep->qp, &wr, &bad);
}

static int to_state(struct probe_ep *ep, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };
	int mask = IBV_QP_STATE;

	if (s == IBV_QPS_INIT) {
		a.pkey_index = 0;
		a.port_num = (uint8_t)ep->port.port;
		a.qkey = PROBE_QKEY;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
	} else if (s == IBV_QPS_RTS) {
		a.sq_psn = 0;
		mask |= IBV_QP_SQ_PSN;
	}
	return -ibv_modify_qp(ep->qp, &a, mask);
}

int probe_ep_open(struct probe_ep **out, const struct probe_port *p, char *err, size_t errlen)
{
	struct probe_ep *ep = calloc(1, sizeof(*ep));
	struct ibv_device **list = NULL;
	struct ibv_device_attr_ex dax;
	const char *what = "";
	int num = 0, r = 0, fl;

	*out = NULL;
	if (!ep) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r = verbs_lazy_open(err, errlen);
	if (r) {
		free(ep);
		return r;
	}
	ep->port = *p;
	list = ibv_get_device_list(&num);
	for (int i = 0; list && i < num; i++)
		if (!strcmp(ibv_get_device_name(list[i]), p->device)) {
			ep->ctx = ibv_open_device(list[i]);
			if (!ep->ctx)
				r = errno ? -errno : -EIO;
			break;
		}
	if (list)
		ibv_free_device_list(list);
	if (!ep->ctx) {
		what = "ibv_open_device";
		r = r ? r : -ENODEV;
		goto fail;
	}
	memset(&dax, 0, sizeof(dax));
	if (!ibv_query_device_ex(ep->ctx, NULL, &dax))
		ep->hw_ts = dax.completion_timestamp_mask != 0;
	if (posix_memalign((void **)&ep->buf, 4096, (size_t)(N_RECV + N_SEND) * SLOT)) {
		r = -ENOMEM;
		what = "buffer";
		goto fail;
	}
	memset(ep->buf, 0, (size_t)(N_RECV + N_SEND) * SLOT);
#define STEP(call, name)                           \
	do {                                       \
		if (!(call)) {                     \
			r = errno ? -errno : -EIO; \
			what = name;               \
			goto fail;                 \
		}                                  \
	} while (0)
	STEP(ep->pd = ibv_alloc_pd(ep->ctx), "ibv_alloc_pd");
	STEP(ep->ch = ibv_create_comp_channel(ep->ctx), "ibv_create_comp_channel");
	STEP(ep->cq = ibv_create_cq(ep->ctx, N_RECV + N_SEND, NULL, ep->ch, 0), "ibv_create_cq");
	/* memlock: a quarter MiB, under Debian's default 8 MiB limit */
	STEP(ep->mr = ibv_reg_mr(ep->pd, ep->buf, (size_t)(N_RECV + N_SEND) * SLOT,
				 IBV_ACCESS_LOCAL_WRITE),
	     "ibv_reg_mr");
	{
		struct ibv_qp_init_attr qa = {
			.send_cq = ep->cq,
			.recv_cq = ep->cq,
			.qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = N_SEND,
				 .max_recv_wr = N_RECV,
				 .max_send_sge = 1,
				 .max_recv_sge = 1 },
		};

		STEP(ep->qp = ibv_create_qp(ep->pd, &qa), "ibv_create_qp");
	}
#undef STEP
	if ((r = to_state(ep, IBV_QPS_INIT)) || (r = to_state(ep, IBV_QPS_RTR)) ||
	    (r = to_state(ep, IBV_QPS_RTS))) {
		what = "ibv_modify_qp";
		goto fail;
	}
	for (unsigned i = 0; i < N_RECV; i++)
		if ((r = post_recv(ep, i))) {
			what = "ibv_post_recv";
			goto fail;
		}
	fl = fcntl(ep->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ep->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		r = -errno;
		what = "fcntl";
		goto fail;
	}
	if ((r = -ibv_req_notify_cq(ep->cq, 0))) {
		what = "ibv_req_notify_cq";
		goto fail;
	}
	*out = ep;
	return 0;
fail:
	snprintf(err, errlen, "%s/%u: %s: %s%s", p->device, p->port, what, strerror(-r),
		 r == -EACCES || r == -EPERM ? " (no access to /dev/infiniband/uverbs*)"
		 : r == -ENOMEM && !strcmp(what, "ibv_reg_mr")
		     ? " (RLIMIT_MEMLOCK too small? `ulimit -l`)"
		     : "");
	probe_ep_close(ep);
	return r;
}

void probe_ep_close(struct probe_ep *ep)
{
	if (!ep)
		return;
	if (ep->qp)
		ibv_destroy_qp(ep->qp);
	for (size_t i = 0; i < ep->n_ah; i++)
		ibv_destroy_ah(ep->ahs[i].ah);
	if (ep->peer_ah)
		ibv_destroy_ah(ep->peer_ah);
	if (ep->mr)
		ibv_dereg_mr(ep->mr);
	if (ep->cq)
		ibv_destroy_cq(ep->cq);
	if (ep->ch)
		ibv_destroy_comp_channel(ep->ch);
	if (ep->pd)
		ibv_dealloc_pd(ep->pd);
	if (ep->ctx)
		ibv_close_device(ep->ctx);
	free(ep->buf);
	free(ep);
}

uint32_t probe_ep_qpn(const struct probe_ep *ep)
{
	return ep->qp->qp_num;
}

const struct probe_port *probe_ep_port(const struct probe_ep *ep)
{
	return &ep->port;
}

void probe_ep_update(struct probe_ep *ep, const struct probe_port *p)
{
	ep->port = *p;
}

int probe_ep_fd(const struct probe_ep *ep)
{
	return ep->ch->fd;
}

int probe_ep_hw_timestamps(const struct probe_ep *ep)
{
	return ep->hw_ts;
}

void probe_ep_stats(const struct probe_ep *ep, struct probe_ep_stats *st)
{
	*st = ep->st;
}

static int free_send_slot(struct probe_ep *ep)
{
	for (unsigned j = 0; j < N_SEND; j++)
		if (!ep->send_busy[j])
			return (int)j;
	return -1;
}

static int post_send(struct probe_ep *ep, unsigned j, uint32_t len, struct ibv_ah *ah, uint32_t qpn,
		     uint32_t qkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)slot_send(ep, j),
			       .length = len,
			       .lkey = ep->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = N_RECV + j,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int r;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	r = ibv_post_send(ep->qp, &wr, &bad);
	if (r)
		return -r;
	ep->send_busy[j] = true;
	ep->sends_out++;
	return 0;
}

/* The sender's GID and traffic class from the 40 bytes before the payload (see the top). */
static bool source_of(const uint8_t *grh, uint8_t gid[16], uint8_t *tclass)
{
	const uint8_t *ip4 = grh + 20;

	if ((ip4[0] >> 4) == 4) {
		static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		memcpy(gid, pfx, 12);
		memcpy(gid + 12, ip4 + 12, 4);
		*tclass = ip4[1];
		return true;
	}
	if ((grh[0] >> 4) == 6) {
		memcpy(gid, grh + 8, 16);
		*tclass = (uint8_t)((grh[0] & 0x0f) << 4 | grh[1] >> 4);
		return true;
	}
	return false;
}

static struct ibv_ah *make_ah_fl(struct probe_ep *ep, const uint8_t gid[16], uint8_t tclass,
				 uint32_t fl)
{
	/* mlx5 takes the RoCE v2 UDP source port from a non-zero flow label (probe_plan.h) */
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = (uint8_t)ep->port.port,
		.grh = { .sgid_index = (uint8_t)ep->port.gid_index,
			 .hop_limit = HOPLIMIT,
			 .traffic_class = tclass,
			 .flow_label = fl & 0xfffff },
	};

	memcpy(a.grh.dgid.raw, gid, 16);
	return ibv_create_ah(ep->pd, &a);
}

static struct ibv_ah *make_ah(struct probe_ep *ep, const uint8_t gid[16], uint8_t tclass)
{
	return make_ah_fl(ep, gid, tclass, 0);
}

static struct ibv_ah *reply_ah(struct probe_ep *ep, const uint8_t gid[16], uint8_t tclass)
{
	struct ah_entry *e;
	struct ibv_ah *ah;

	/* a fleet plan's peer probes us on the rail it probes us on: its handle is made already */
	if (ep->ah_find && (ah = ep->ah_find(ep->ah_find_arg, ep, gid, tclass)))
		return ah;
	for (size_t i = 0; i < ep->n_ah; i++)
		if (ep->ahs[i].tclass == tclass && !memcmp(ep->ahs[i].gid, gid, 16))
			return ep->ahs[i].ah;
	/* A full cache is recycled only while no send can still be using an entry. */
	if (ep->n_ah == N_AH && ep->sends_out)
		return NULL;
	ah = make_ah(ep, gid, tclass);
	if (!ah)
		return NULL;
	if (ep->n_ah < N_AH) {
		e = &ep->ahs[ep->n_ah++];
	} else {
		e = &ep->ahs[ep->next_ah];
		ep->next_ah = (ep->next_ah + 1) % N_AH;
		ibv_destroy_ah(e->ah);
	}
	e->ah = ah;
	memcpy(e->gid, gid, 16);
	e->tclass = tclass;
	return ah;
}

static void answer(struct probe_ep *ep, const struct ibv_wc *wc, uint8_t *slot)
{
	uint32_t len = wc->byte_len - PROBE_GRH_LEN;
	struct probe_hdr h;
	uint8_t gid[16], tc;
	struct ibv_ah *ah;
	int j, r = probe_pkt_decode(slot + PROBE_GRH_LEN, len, &h);

	/* A damaged pattern is echoed as it came: the prober is the one to count it. */
	if ((r && r != -EILSEQ) || h.type != PROBE_REQUEST || !(wc->wc_flags & IBV_WC_GRH) ||
	    !source_of(slot, gid, &tc)) {
		ep->st.bad++;
		return;
	}
	ep->st.requests++;
	/* A reflector for whoever can reach the port, but a bounded one. */
	if (now_ns() - ep->window_ns >= 100000000LL) {
		ep->window_ns = now_ns();
		ep->window_replies = 0;
	}
	/* Larger than our port can send: posting it would put the QP in the error state. */
	if (len > ep->port.active_mtu || ep->window_replies >= PROBE_REPLY_RATE / 10 ||
	    (j = free_send_slot(ep)) < 0 || !(ah = reply_ah(ep, gid, tc))) {
		ep->st.dropped++;
		return;
	}
	memcpy(slot_send(ep, (unsigned)j), slot + PROBE_GRH_LEN, len);
	probe_pkt_make_reply(slot_send(ep, (unsigned)j));
	r = post_send(ep, (unsigned)j, len, ah, wc->src_qp, PROBE_QKEY);
	if (r) {
		char key[96];

		snprintf(key, sizeof(key), "probe:reply:%s/%u", ep->port.device, ep->port.port);
		rw_log_once(LOG_LVL_WARN, key, "probe: %s/%u: reply to QPN %u: ibv_post_send: %s",
			    ep->port.device, ep->port.port, wc->src_qp, strerror(-r));
		ep->st.errors++;
	} else {
		ep->st.replies++;
		ep->window_replies++;
	}
}

struct poll_ctx {
	bool responder;
	uint32_t session;
	void (*on_reply)(void *arg, const struct probe_hdr *h, bool intact, int64_t t_ns);
	void *arg;
	int send_err;
	int replies;
};

static int handle(struct probe_ep *ep, const struct ibv_wc *wc, struct poll_ctx *pc)
{
	if (wc->wr_id >= N_RECV) {
		unsigned j = (unsigned)(wc->wr_id - N_RECV);

		if (j < N_SEND && ep->send_busy[j]) {
			ep->send_busy[j] = false;
			ep->sends_out--;
		}
		if (wc->status != IBV_WC_SUCCESS) {
			ep->st.errors++;
			pc->send_err = wc->status == IBV_WC_LOC_LEN_ERR ? EMSGSIZE : EIO;
		}
		return wc->status == IBV_WC_WR_FLUSH_ERR ? -EIO : 0;
	}
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return -EIO; /* the QP went to the error state: the device is gone or reset */
	if (wc->status == IBV_WC_SUCCESS && wc->byte_len >= PROBE_GRH_LEN + PROBE_HDR_LEN) {
		uint8_t *slot = slot_recv(ep, (unsigned)wc->wr_id);

		if (pc->responder && slot[PROBE_GRH_LEN + 5] == PROBE_REPLY &&
		    (ep->reply.fn || ep->plan_reply.fn)) {
			struct probe_hdr h;
			int r = probe_pkt_decode(slot + PROBE_GRH_LEN, wc->byte_len - PROBE_GRH_LEN,
						 &h);

			if ((r && r != -EILSEQ) ||
			    (!sink_take(&ep->reply, &h, !r) && !sink_take(&ep->plan_reply, &h, !r)))
				ep->st.bad++;
		} else if (pc->responder) {
			answer(ep, wc, slot);
		} else {
			struct probe_hdr h;
			int r = probe_pkt_decode(slot + PROBE_GRH_LEN, wc->byte_len - PROBE_GRH_LEN,
						 &h);

			if (r == -EILSEQ) {
				/* the header held, the payload did not: count it as damaged */
				h.type = slot[PROBE_GRH_LEN + 5];
				r = 0;
				if (h.type == PROBE_REPLY && h.session == pc->session)
					pc->on_reply(pc->arg, &h, false, now_ns());
			} else if (!r && h.type == PROBE_REPLY && h.session == pc->session) {
				pc->on_reply(pc->arg, &h, true, now_ns());
				pc->replies++;
			} else {
				ep->st.bad++;
			}
		}
	} else {
		ep->st.bad++;
	}
	return post_recv(ep, (unsigned)wc->wr_id);
}

/* Re-arm the channel and drain the CQ.  0 or -errno (the endpoint is dead). */
static int drain(struct probe_ep *ep, struct poll_ctx *pc)
{
	struct ibv_cq *cq;
	void *cqctx;
	struct ibv_wc wc[16];
	int n, r;

	while (!ibv_get_cq_event(ep->ch, &cq, &cqctx)) {
		ibv_ack_cq_events(cq, 1);
		if ((r = ibv_req_notify_cq(ep->cq, 0)))
			return -r;
	}
	/* After re-arming: a completion that raced the arm is polled here, not lost. */
	while ((n = ibv_poll_cq(ep->cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			if ((r = handle(ep, &wc[i], pc)))
				return r;
	return n < 0 ? -EIO : 0;
}

int probe_ep_respond(struct probe_ep *ep)
{
	struct poll_ctx pc = { .responder = true };

	return drain(ep, &pc);
}

static void ignore_reply(void *arg, const struct probe_hdr *h, bool intact, int64_t t)
{
	(void)arg, (void)h, (void)intact, (void)t;
}

int probe_ep_set_peer(struct probe_ep *ep, const uint8_t gid[16], uint32_t qpn, uint32_t qkey,
		      uint8_t traffic_class, char *err, size_t errlen)
{
	char g[48];

	if (ep->peer_ah) {
		/* nothing may still be on its way with the old handle */
		if (ep->sends_out) {
			struct poll_ctx pc = { .on_reply = ignore_reply };

			for (int i = 0; i < 100 && ep->sends_out; i++) {
				struct pollfd pfd = { .fd = ep->ch->fd, .events = POLLIN };

				poll(&pfd, 1, 10);
				if (drain(ep, &pc))
					break;
			}
		}
		ibv_destroy_ah(ep->peer_ah);
		ep->peer_ah = NULL;
	}
	ep->peer_ah = make_ah(ep, gid, traffic_class);
	if (!ep->peer_ah) {
		int e = errno ? errno : EIO;

		inet_ntop(AF_INET6, gid, g, sizeof(g));
		snprintf(err, errlen, "no address handle to GID %s from %s/%u GID index %d: %s", g,
			 ep->port.device, ep->port.port, ep->port.gid_index, strerror(e));
		return -e;
	}
	ep->peer_qpn = qpn;
	ep->peer_qkey = qkey;
	return 0;
}

struct ibv_ah *probe_ep_ah_create(struct probe_ep *ep, const uint8_t gid[16], uint8_t traffic_class,
				  char *err, size_t errlen)
{
	struct ibv_ah *ah = make_ah(ep, gid, traffic_class);
	char g[48];

	if (!ah) {
		int e = errno ? errno : EIO;

		inet_ntop(AF_INET6, gid, g, sizeof(g));
		snprintf(err, errlen, "no address handle to GID %s from %s/%u GID index %d: %s", g,
			 ep->port.device, ep->port.port, ep->port.gid_index, strerror(e));
	}
	return ah;
}

struct ibv_ah *probe_ep_ah_make(struct probe_ep *ep, const uint8_t gid[16], uint8_t traffic_class,
				uint32_t fl)
{
	errno = 0;
	return make_ah_fl(ep, gid, traffic_class, fl);
}

void probe_ep_ah_destroy(struct ibv_ah *ah)
{
	if (ah)
		ibv_destroy_ah(ah);
}

unsigned probe_ep_sends_out(const struct probe_ep *ep)
{
	return ep->sends_out;
}

void probe_ep_on_reply(struct probe_ep *ep, uint32_t session, probe_reply_fn *on_reply, void *arg)
{
	ep->reply = (struct reply_sink){ session, on_reply, arg };
}

/* A send slot for request h: its index, or -EINVAL (size), -EMSGSIZE (mtu), -ENOBUFS. */
static int request_slot(struct probe_ep *ep, const struct probe_hdr *h)
{
	int j;

	if (h->size < PROBE_HDR_LEN || h->size > PROBE_MAX_SIZE)
		return -EINVAL;
	if (h->size > ep->port.active_mtu)
		return -EMSGSIZE;
	j = free_send_slot(ep);
	return j < 0 ? -ENOBUFS : j;
}

/* h as a request into send slot j, stamped now: the last step before the post. */
static void encode_request(struct probe_ep *ep, unsigned j, struct probe_hdr *h)
{
	h->version = PROBE_VERSION;
	h->type = PROBE_REQUEST;
	h->t_send_ns = (uint64_t)now_ns();
	probe_pkt_encode(slot_send(ep, j), h);
}

int probe_ep_send_to(struct probe_ep *ep, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
		     struct probe_hdr *h)
{
	int j;

	j = request_slot(ep, h);
	if (j < 0)
		return j;
	encode_request(ep, (unsigned)j, h);
	return post_send(ep, (unsigned)j, h->size, ah, qpn, qkey);
}

int probe_ep_send(struct probe_ep *ep, struct probe_hdr *h)
{
	if (!ep->peer_ah)
		return -EDESTADDRREQ;
	return probe_ep_send_to(ep, ep->peer_ah, ep->peer_qpn, ep->peer_qkey, h);
}

int probe_ep_poll(struct probe_ep *ep, uint32_t session, int timeout_ms,
		  void (*on_reply)(void *arg, const struct probe_hdr *h, bool intact, int64_t t_ns),
		  void *arg, int *send_err)
{
	struct poll_ctx pc = { .session = session,
			       .on_reply = on_reply ? on_reply : ignore_reply,
			       .arg = arg };
	struct pollfd pfd = { .fd = ep->ch->fd, .events = POLLIN };
	int r;

	if (poll(&pfd, 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	r = drain(ep, &pc);
	if (send_err && pc.send_err)
		*send_err = pc.send_err;
	return r ? r : pc.replies;
}

void probe_ep_on_plan_reply(struct probe_ep *ep, uint32_t session, probe_reply_fn *on_reply,
			    void *arg)
{
	ep->plan_reply = (struct reply_sink){ session, on_reply, arg };
}

void probe_ep_set_ah_find(struct probe_ep *ep, probe_ah_find_fn *fn, void *arg)
{
	ep->ah_find = fn;
	ep->ah_find_arg = arg;
}
