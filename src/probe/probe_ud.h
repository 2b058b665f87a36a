/* SPDX-License-Identifier: MIT */
/*
 * A probe endpoint: one UD QP on one RoCE port (libibverbs), with receives
 * posted, able to answer probes (the responder in `serve --probe`) and to
 * send them and collect the replies (`rocewatch probe`).
 *
 * UD facts this rests on (ibv_post_send(3), ibv_post_recv(3), the IBA
 * spec): a UD message must fit one packet, so a payload larger than the
 * port's active_mtu cannot be sent (rxe fails the send and moves the QP to
 * the error state: it is refused here before it is posted); the receive
 * buffer of a UD QP starts with the 40-byte GRH, then the payload; a RoCE
 * address handle is global (is_global = 1) with the peer's GID, the local
 * GID's index as sgid_index and traffic_class = DSCP << 2 | ECN.
 */
#ifndef ROCEWATCH_PROBE_UD_H
#define ROCEWATCH_PROBE_UD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_pkt.h"

#define PROBE_GRH_LEN 40
/* The most replies a responder sends per second and port; requests over it are dropped. */
#define PROBE_REPLY_RATE 10000
/* ECN-capable transport, ECT(0): what DCQCN senders mark (RFC 3168). */
#define PROBE_ECT0 2

/* A RoCE port that can probe: Ethernet link layer with an IPv4-mapped RoCE v2 GID. */
struct probe_port {
	char device[64];
	unsigned port;
	char netdev[32];
	char gid[48]; /* "::ffff:10.99.0.1" as inet_ntop writes it */
	uint8_t gid_raw[16];
	int gid_index;
	unsigned active_mtu; /* bytes */
	bool active;	     /* port state ACTIVE */
	char dev_path[256];  /* the uverbs device's sysfs path: gone when it is removed */
};

/*
 * Every such port of every RDMA device, in device order.  0 (possibly none);
 * -ENODEV when there is no RDMA device at all (err says so), -errno else.
 * *out is malloc'ed.
 */
int probe_ports(struct probe_port **out, size_t *n, char *err, size_t errlen);

struct probe_ep;

/* Open a QP on dev/port; err names the device and what failed. */
int probe_ep_open(struct probe_ep **out, const struct probe_port *p, char *err, size_t errlen);
void probe_ep_close(struct probe_ep *ep);
uint32_t probe_ep_qpn(const struct probe_ep *ep);
const struct probe_port *probe_ep_port(const struct probe_ep *ep);
/* Take new facts of the same port (its GID or MTU changed). */
void probe_ep_update(struct probe_ep *ep, const struct probe_port *p);
/* The completion channel's descriptor: readable when there is work. */
int probe_ep_fd(const struct probe_ep *ep);
/* 1 if the device has completion timestamps (ibv_query_device_ex), else 0. */
int probe_ep_hw_timestamps(const struct probe_ep *ep);

struct probe_ep_stats {
	uint64_t requests, replies, dropped, bad, errors;
};
void probe_ep_stats(const struct probe_ep *ep, struct probe_ep_stats *st);

/*
 * Responder: answer every request that has arrived (re-arming the channel);
 * returns without blocking.  0, or -errno when the device failed (the
 * endpoint should be closed).
 */
int probe_ep_respond(struct probe_ep *ep);

/*
 * Continuous probing from a responder's endpoint (serve --probe.peers): an
 * address handle per peer, probes sent to it, and the replies of session
 * handed to on_reply from probe_ep_respond().  An address handle must be
 * destroyed before its endpoint is closed, and not while sends may still
 * use it (probe_ep_sends_out() == 0).
 */
struct ibv_ah;
struct ibv_ah *probe_ep_ah_create(struct probe_ep *ep, const uint8_t gid[16], uint8_t traffic_class,
				  char *err, size_t errlen);
/*
 * The same with GRH flow label fl (0: the device's default UDP source port):
 * NULL with errno set when it cannot be made.  Safe from another thread
 * than the one polling ep (libibverbs' verbs are), as a fleet plan's
 * handles are made ahead of its start (probe_ahs.h).
 */
struct ibv_ah *probe_ep_ah_make(struct probe_ep *ep, const uint8_t gid[16], uint8_t traffic_class,
				uint32_t fl);
void probe_ep_ah_destroy(struct ibv_ah *ah);
unsigned probe_ep_sends_out(const struct probe_ep *ep);
int probe_ep_send_to(struct probe_ep *ep, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey,
		     struct probe_hdr *h);
/* A reply to one of our probes: its header, whether its payload was intact, when it came. */
typedef void probe_reply_fn(void *arg, const struct probe_hdr *h, bool intact, int64_t t_ns);

void probe_ep_on_reply(struct probe_ep *ep, uint32_t session, probe_reply_fn *on_reply, void *arg);

/*
 * Before the responder makes a reply's address handle, it asks fn for one to
 * (gid, tclass) on ep (a fleet plan's, made ahead: probe_ahs_find()); NULL:
 * none, it makes its own.  fn NULL: none asked.  A handle fn gave must stay
 * until probe_ep_sends_out(ep) is 0 after fn is taken away.
 */
typedef struct ibv_ah *probe_ah_find_fn(void *arg, const struct probe_ep *ep, const uint8_t gid[16],
					uint8_t tclass);
void probe_ep_set_ah_find(struct probe_ep *ep, probe_ah_find_fn *fn, void *arg);
/* Replies of a plan's session go to on_reply (NULL: none), beside continuous mode's. */
void probe_ep_on_plan_reply(struct probe_ep *ep, uint32_t session, probe_reply_fn *on_reply,
			    void *arg);

/* Prober: where the probes go. */
int probe_ep_set_peer(struct probe_ep *ep, const uint8_t gid[16], uint32_t qpn, uint32_t qkey,
		      uint8_t traffic_class, char *err, size_t errlen);
/* Send one request of h->size bytes (h->t_send_ns is set here).  0 or -errno. */
int probe_ep_send(struct probe_ep *ep, struct probe_hdr *h);
/*
 * Wait up to timeout_ms for completions and hand each reply of this session
 * to on_reply (its header, whether its payload was intact, the receive time).
 * Returns the number of replies, or -errno; *send_err gets the status of a
 * failed send completion.
 */
int probe_ep_poll(struct probe_ep *ep, uint32_t session, int timeout_ms, probe_reply_fn *on_reply,
		  void *arg, int *send_err);

#endif
