/* SPDX-License-Identifier: MIT */
/*
 * The probe responder of `serve --probe`: a UD QP on every RoCE port that
 * has an IPv4 RoCE v2 GID, on a thread of its own, echoing each probe at
 * once.  Ports that appear are picked up within PROBE_RESCAN_S; a device
 * that is removed is let go within a second (its uverbs node disappears
 * first, and a software device such as rxe cannot finish `rdma link
 * delete` while a context is open, see collectors/verbs.c); everything is
 * freed on stop.
 */
#ifndef ROCEWATCH_PROBE_RESPONDER_H
#define ROCEWATCH_PROBE_RESPONDER_H

#include <stddef.h>

#include "probe_info.h"
#include "probe_slice.h"
#include "strbuf.h"

#define PROBE_RESCAN_S 5

struct probe_responder;

/*
 * Check that there is something to answer on: -ENODEV when there is no
 * RDMA device or no RoCE port with an IPv4 RoCE v2 GID, -errno when the
 * devices cannot be opened; err is one line saying why.
 */
int probe_responder_open(struct probe_responder **out, char *err, size_t errlen);
/*
 * Open a probe QP on every port and start the thread: after privileges are
 * dropped (see probe_responder.c).  -errno when no QP could be opened.
 */
int probe_responder_run(struct probe_responder *r, char *err, size_t errlen);
/*
 * Continuous mode (serve --probe.peers): from the first ACTIVE port's QP,
 * every interval_ns one probe of each size to each peer whose probe info is
 * known; a probe without a reply within PROBE_CONT_TIMEOUT_S is lost.
 * Set before probe_responder_run(); peers are "host:port" names.
 */
#define PROBE_CONT_MAX_PEERS  256
#define PROBE_CONT_MAX_SIZES  8
#define PROBE_CONT_TIMEOUT_NS 1000000000LL
int probe_responder_peers(struct probe_responder *r, char *const *peers, size_t n_peers,
			  const unsigned *sizes, size_t n_sizes, int64_t interval_ns, int dscp);
/* A peer's probe info as just read (pi NULL: it could not be, err says why). */
void probe_responder_peer_info(struct probe_responder *r, size_t i, const struct probe_info *pi,
			       const char *err);
/* roce_probe_* families for /metrics (a daemon render hook). */
void probe_responder_render_metrics(struct strbuf *sb, void *arg);

/*
 * What serve knows of each port from its node model, which the responder
 * does not see: the port's role, rail and leaf, and the counters a fleet
 * probe quotes as evidence (-1: not known).
 */
struct probe_port_note {
	char device[64];
	unsigned port;
	char role[16], rail[64], leaf[64];
	int64_t link_downed, carrier_changes, symbol_errors;
};
/*
 * Replace the notes (copied) and the host's facts for a host_path finding
 * (host: "" for none): /api/v1/probe carries them.  Takes the responder's
 * lock only: callable from a daemon hook with the model locked.
 */
int probe_responder_annotate(struct probe_responder *r, const struct probe_port_note *notes,
			     size_t n, const char *host);

/*
 * A fleet probe plan's slice for this node (POST /api/v1/probe/plan), taken
 * over (*s is left empty): its ports are this responder's QPs by device and
 * port, its probes leave from them at the slice's times (probe_exec.h) on
 * the responder's thread, replies counted by the slice's session.  0;
 * -EBUSY: a plan is running; -ENODEV: a port of the slice has no probe QP
 * here or another GID; -EINVAL: it starts over a minute from now; err says
 * which.  A new plan replaces the last one's results.
 */
int probe_responder_plan(struct probe_responder *r, struct probe_slice *s, char *err,
			 size_t errlen);
/*
 * The last plan's results if its id is id (probe_results_encode(): "running"
 * until it is over): 0, or -ENOENT.
 */
int probe_responder_plan_results(struct probe_responder *r, uint64_t id, struct strbuf *out);

/* Stop the thread, close every QP and device. */
void probe_responder_stop(struct probe_responder *r);
/*
 * The /api/v1/probe document (JSON): every port with a probe QP: device,
 * port, netdev, QPN, Q_Key, GID, GID index, active_mtu, state, and where
 * serve knows them role, rail, leaf and counters; the host's facts.
 */
int probe_responder_render(struct probe_responder *r, struct strbuf *out);
/* The same document as a jansson value (a new reference, NULL without memory). */
struct json_t;
struct json_t *probe_responder_json(struct probe_responder *r);

#endif
