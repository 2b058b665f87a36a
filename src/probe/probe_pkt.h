/* SPDX-License-Identifier: MIT */
/*
 * The RDMA probe's wire format, RTT arithmetic and diagnosis: everything of
 * the probe that is pure computation, so it is unit-tested without a device.
 *
 * A probe is one UD SEND whose payload starts with this header, all fields
 * in network byte order:
 *
 *   0  u32 magic    PROBE_MAGIC ("RWPR")
 *   4  u8  version  PROBE_VERSION
 *   5  u8  type     PROBE_REQUEST or PROBE_REPLY
 *   6  u16 flags    0 (ignored on receipt)
 *   8  u32 size     the whole payload in bytes, header included
 *  12  u32 session  chosen by the prober per run: replies to an earlier run are not ours
 *  16  u64 seq      the prober's sequence number
 *  24  u64 t_send   the prober's CLOCK_MONOTONIC at the send, in ns; opaque to the
 *                   responder, so the RTT needs only the prober's own clock
 *
 * and the rest is a pattern derived from seq, so a payload damaged on the
 * way is told apart from a good one.  The responder echoes the payload
 * whole, with type PROBE_REPLY: both directions carry the probed size.
 */
#ifndef ROCEWATCH_PROBE_PKT_H
#define ROCEWATCH_PROBE_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_MAGIC   0x52575052u /* "RWPR" */
#define PROBE_VERSION 1
#define PROBE_HDR_LEN 32
/* The largest RoCE MTU (IBV_MTU_4096): a UD message must fit one packet. */
#define PROBE_MAX_SIZE 4096
/*
 * The Q_Key every rocewatch probe QP uses.  The high bit is clear: Q_Keys
 * with it set are "controlled" and only privileged QPs may send with them
 * (IBA 10.2.4), and the probe must work unprivileged.
 */
#define PROBE_QKEY 0x52574b31u /* "RWK1" */

enum probe_type {
	PROBE_REQUEST = 1,
	PROBE_REPLY = 2,
};

struct probe_hdr {
	uint8_t version, type;
	uint32_t size, session;
	uint64_t seq, t_send_ns;
};

/* Write a probe of h->size bytes (header + pattern) into buf (at least h->size). */
void probe_pkt_encode(uint8_t *buf, const struct probe_hdr *h);
/*
 * Parse len bytes of a received payload: 0, or -EBADMSG (not a probe: short,
 * bad magic or type, size other than len), -EPROTONOSUPPORT (another
 * version), -EILSEQ (a probe whose pattern was damaged).
 */
int probe_pkt_decode(const uint8_t *buf, size_t len, struct probe_hdr *h);
/* Turn a request (in place) into its reply: only the type byte changes. */
void probe_pkt_make_reply(uint8_t *buf);

/* Round-trip times of one (peer, size): nearest-rank percentiles. */
struct probe_rtt {
	size_t n;
	int64_t min_ns, p50_ns, p99_ns, max_ns;
	size_t outliers; /* RTTs over PROBE_OUTLIER_FACTOR times the median */
};

#define PROBE_OUTLIER_FACTOR 10

/*
 * The nearest-rank percentile p (0 < p <= 100) of n sorted values: the
 * smallest value with at least p % of the values at or below it, i.e.
 * sorted[ceil(p * n / 100) - 1].  A value that was measured, never an
 * interpolation.  0 for n == 0.
 */
int64_t probe_percentile(const int64_t *sorted, size_t n, unsigned p);
/* Sort rtt_ns (in place) and summarise it. */
void probe_rtt_summarise(int64_t *rtt_ns, size_t n, struct probe_rtt *out);

/* One probed size, as the prober counted it. */
struct probe_size_result {
	unsigned size;
	bool not_sent; /* larger than this port's active_mtu: cannot leave */
	unsigned sent, received;
	unsigned damaged; /* came back with a damaged payload (not counted as received) */
	int send_err;	  /* errno of a failed post/completion, 0 if none */
	struct probe_rtt rtt;
};

enum probe_verdict {
	PROBE_OK = 0,
	PROBE_WARNING = 1,
	PROBE_CRITICAL = 2,
	PROBE_UNKNOWN = 3,
};

struct probe_thresholds {
	double loss_warning;	/* fraction, e.g. 0.001 */
	double loss_critical;	/* fraction, e.g. 0.05 */
	int64_t rtt_warning_ns; /* p99 over this warns; 0 off */
};

#define PROBE_MAX_DIAG 8

struct probe_diagnosis {
	enum probe_verdict verdict;
	size_t n;
	char text[PROBE_MAX_DIAG][256]; /* worst first */
};

/*
 * Judge the sizes probed towards one peer (in increasing size order):
 * nothing came back at any size (unreachable: GID, route, responder),
 * small sizes came back and a larger one did not (the MTU on the path;
 * local_mtu and peer_mtu are the two ports' active_mtu, 0 when unknown,
 * and say whether an end or something between them is short), sizes this
 * port cannot send, loss over a threshold, RTT outliers and a slow p99.
 */
void probe_diagnose(const struct probe_size_result *r, size_t n, unsigned local_mtu,
		    unsigned peer_mtu, const struct probe_thresholds *t, struct probe_diagnosis *d);
const char *probe_verdict_name(enum probe_verdict v);
/* "1.23 ms", "456 us", "12.3 s" */
void probe_fmt_ns(int64_t ns, char *buf, size_t len);

#endif
