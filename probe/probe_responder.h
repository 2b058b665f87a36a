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
/* Stop the thread, close every QP and device. */
void probe_responder_stop(struct probe_responder *r);
/* The /api/v1/probe document (JSON): the ports, their QPN, Q_Key, GID, GID index. */
int probe_responder_render(struct probe_responder *r, struct strbuf *out);

#endif
