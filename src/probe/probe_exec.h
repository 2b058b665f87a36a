/* SPDX-License-Identifier: MIT */
/*
 * A node's part of a fleet probe: its slice (probe_slice.h) run against the
 * common clock, above a link that sends one probe (the UD endpoints of
 * `serve --probe`, or the simulated fabric of tests/bench/bench_probe.c: the
 * same code either way).  Event-driven, so it runs on the responder's
 * thread: probe_exec_step() sends what is due and says when to call again;
 * probe_exec_reply() counts a reply.
 *
 * Schedule: probe m of an entry in slot s leaves at start + s * slot_ns +
 * m * probe_ns; an entry's probes are, in order, `repeats` of each of its
 * sizes (probe_plan_sizes()), then one 64-byte probe per flow label 1 ..
 * labels.  A probe that could not leave within one slot of its time is not
 * sent then (a late one would land in another step and break the one-
 * sender-per-port rule) and is not counted as sent.  It has one more chance:
 * when the schedule is over and some were late, a second pass runs the
 * slots that had late probes again, slot s at start + (n_slots + s) *
 * slot_ns, sending only those probes; every node's second pass keeps the
 * same steps, so the rule holds there too.  One that is late again is given
 * up (`late`).  A thread held up once (a busy host, a virtual CPU
 * descheduled) costs the pass, not the pairs.  Sequence numbers are entry
 * << 8 | m, so a reply names its entry and probe without a table.
 */
#ifndef ROCEWATCH_PROBE_EXEC_H
#define ROCEWATCH_PROBE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_pkt.h"
#include "probe_plan.h"
#include "probe_slice.h"

struct probe_link {
	/*
	 * Send h (size, session and seq set; t_send_ns is the link's to set, in
	 * the clock of the t_recv_ns it hands probe_exec_reply()) from local port
	 * e->port to e's peer with GRH flow label fl.  0; -ENOBUFS: no room now,
	 * asked again soon; another -errno: not sent.
	 */
	int (*send)(void *ctx, size_t entry, const struct probe_slice_entry *e, unsigned fl,
		    struct probe_hdr *h);
	void *ctx;
};

struct probe_exec {
	const struct probe_slice *s;
	struct probe_link link;
	struct probe_result *res;
	uint64_t *got;	     /* [entry]: bit m: probe m answered (or came back damaged) */
	uint64_t *out;	     /* [entry]: bit m: probe m sent */
	uint64_t *skip;	     /* [entry]: bit m: probe m was late on the first pass */
	size_t *slot_first;  /* [slot + 1]: the slot's first entry */
	uint8_t *sizes;	     /* [entry]: how many sizes */
	uint32_t slot, m, k; /* the cursor: slot, probe index, entry */
	uint8_t slot_m;	     /* probes of the slot's longest entry */
	uint8_t pass;	     /* 0: the schedule; 1: the late probes again; 2: over */
	int64_t last_due_ns;
	/* late: not sent for being late on both passes; retried: sent on the second */
	uint64_t sent, replied, late, retried, send_errors;
	int last_err;
};

/* 0 or -ENOMEM; ex is safe to free after a failure.  s must outlive ex. */
int probe_exec_init(struct probe_exec *ex, const struct probe_slice *s, const struct probe_link *l);
void probe_exec_free(struct probe_exec *ex);
/* Send what is due at now (the slice's clock): when to call again, INT64_MAX when all left. */
int64_t probe_exec_step(struct probe_exec *ex, int64_t now_ns);
/* A reply of the slice's session (the link checks the session). */
void probe_exec_reply(struct probe_exec *ex, const struct probe_hdr *h, bool intact,
		      int64_t t_recv_ns);
/* Everything sent, and every reply in or the wait after the last probe over. */
bool probe_exec_done(const struct probe_exec *ex, int64_t now_ns);
/* The results, one per entry (labels_sent 0 where a label probe could not leave). */
const struct probe_result *probe_exec_results(struct probe_exec *ex);

#endif
