// SPDX-License-Identifier: MIT
/* The probe's wire format, RTT percentiles and diagnosis (probe_pkt.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_pkt.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* Byte i of the payload after the header: cheap, and differs between neighbouring probes. */
static uint8_t pattern(uint64_t seq, size_t i)
{
	return (uint8_t)(i * 31u + (seq & 0xff) * 7u + 0x5a);
}

void probe_pkt_encode(uint8_t *buf, const struct probe_hdr *h)
{
	put32(buf, PROBE_MAGIC);
	buf[4] = h->version;
	buf[5] = h->type;
	buf[6] = buf[7] = 0;
	put32(buf + 8, h->size);
	put32(buf + 12, h->session);
	put64(buf + 16, h->seq);
	put64(buf + 24, h->t_send_ns);
	for (size_t i = PROBE_HDR_LEN; i < h->size; i++)
		buf[i] = pattern(h->seq, i);
}

int probe_pkt_decode(const uint8_t *buf, size_t len, struct probe_hdr *h)
{
	if (len < PROBE_HDR_LEN || get32(buf) != PROBE_MAGIC)
		return -EBADMSG;
	h->version = buf[4];
	h->type = buf[5];
	if (h->version != PROBE_VERSION)
		return -EPROTONOSUPPORT;
	if (h->type != PROBE_REQUEST && h->type != PROBE_REPLY)
		return -EBADMSG;
	h->size = get32(buf + 8);
	if (h->size != len || h->size > PROBE_MAX_SIZE)
		return -EBADMSG;
	h->session = get32(buf + 12);
	h->seq = get64(buf + 16);
	h->t_send_ns = get64(buf + 24);
	for (size_t i = PROBE_HDR_LEN; i < len; i++)
		if (buf[i] != pattern(h->seq, i))
			return -EILSEQ;
	return 0;
}

void probe_pkt_make_reply(uint8_t *buf)
{
	buf[5] = PROBE_REPLY;
}

int64_t probe_percentile(const int64_t *sorted, size_t n, unsigned p)
{
	size_t rank;

	if (!n)
		return 0;
	if (p > 100)
		p = 100;
	/* ceil(p * n / 100) in integers; rank 0 (p == 0) reads as the first */
	rank = ((size_t)p * n + 99) / 100;
	return sorted[rank ? rank - 1 : 0];
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

void probe_rtt_summarise(int64_t *rtt_ns, size_t n, struct probe_rtt *out)
{
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	qsort(rtt_ns, n, sizeof(*rtt_ns), cmp_i64);
	out->min_ns = rtt_ns[0];
	out->max_ns = rtt_ns[n - 1];
	out->p50_ns = probe_percentile(rtt_ns, n, 50);
	out->p99_ns = probe_percentile(rtt_ns, n, 99);
	for (size_t i = 0; i < n; i++)
		if (rtt_ns[i] > PROBE_OUTLIER_FACTOR * out->p50_ns)
			out->outliers++;
}

const char *probe_verdict_name(enum probe_verdict v)
{
	static const char *const names[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

	return (unsigned)v < 4 ? names[v] : "UNKNOWN";
}

void probe_fmt_ns(int64_t ns, char *buf, size_t len)
{
	if (ns < 1000000)
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.3g ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3g s", (double)ns / 1e9);
}

/* Severity order for the verdict: CRITICAL > UNKNOWN > WARNING > OK, as fleet check. */
static int rank_of(enum probe_verdict v)
{
	static const int rank[] = { 0, 1, 3, 2 };

	return (unsigned)v < 4 ? rank[v] : 2;
}

static void say(struct probe_diagnosis *d, enum probe_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct probe_diagnosis *d, enum probe_verdict v, const char *fmt, ...)
{
	va_list ap;

	if (rank_of(v) > rank_of(d->verdict))
		d->verdict = v;
	if (d->n == PROBE_MAX_DIAG)
		return;
	va_start(ap, fmt);
	vsnprintf(d->text[d->n++], sizeof(d->text[0]), fmt, ap);
	va_end(ap);
}

static double loss_of(const struct probe_size_result *s)
{
	return s->sent ? (double)(s->sent - s->received) / s->sent : 0;
}

void probe_diagnose(const struct probe_size_result *r, size_t n, unsigned local_mtu,
		    unsigned peer_mtu, const struct probe_thresholds *t, struct probe_diagnosis *d)
{
	const struct probe_size_result *largest_ok = NULL, *first_dead = NULL;
	bool any_sent = false, any_back = false;

	memset(d, 0, sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		if (r[i].not_sent || !r[i].sent)
			continue;
		any_sent = true;
		if (r[i].received) {
			any_back = true;
			largest_ok = &r[i];
		}
	}
	/* The first size above the largest that came back and that got nothing back. */
	for (size_t i = 0; i < n; i++)
		if (!r[i].not_sent && r[i].sent && !r[i].received &&
		    (!largest_ok || r[i].size > largest_ok->size)) {
			first_dead = &r[i];
			break;
		}

	if (any_sent && !any_back) {
		say(d, PROBE_CRITICAL,
		    "unreachable: no probe of any size came back (the peer's GID, the route "
		    "between the two addresses, or its responder)");
	} else if (largest_ok && first_dead) {
		char why[160];

		if (peer_mtu && peer_mtu < first_dead->size)
			snprintf(why, sizeof(why), "the peer's RoCE active_mtu is %u", peer_mtu);
		else
			snprintf(why, sizeof(why),
				 "both ends' active_mtu allow it: a link or switch port between "
				 "them has a smaller MTU");
		say(d, PROBE_CRITICAL,
		    "MTU on the path: %u-byte probes come back, %u-byte probes do not (%s)",
		    largest_ok->size, first_dead->size, why);
	}
	for (size_t i = 0; i < n; i++) {
		if (r[i].not_sent)
			say(d, PROBE_CRITICAL,
			    "MTU on the path: %u-byte probes cannot be sent, this port's RoCE "
			    "active_mtu is %u",
			    r[i].size, local_mtu);
		else if (r[i].send_err && !r[i].sent)
			say(d, PROBE_CRITICAL, "%u-byte probes could not be sent: %s", r[i].size,
			    strerror(r[i].send_err));
	}
	if (!any_back)
		goto done;
	for (size_t i = 0; i < n; i++) {
		double loss = loss_of(&r[i]);

		/* a size that got nothing back is the MTU finding above, not "loss" */
		if (r[i].not_sent || !r[i].sent || !r[i].received)
			continue;
		if (loss > t->loss_critical)
			say(d, PROBE_CRITICAL,
			    "loss %.1f%% at %u bytes (%u of %u lost; over %.3g%%)", loss * 100,
			    r[i].size, r[i].sent - r[i].received, r[i].sent,
			    t->loss_critical * 100);
		else if (loss > t->loss_warning)
			say(d, PROBE_WARNING,
			    "loss %.1f%% at %u bytes (%u of %u lost; over %.3g%%)", loss * 100,
			    r[i].size, r[i].sent - r[i].received, r[i].sent, t->loss_warning * 100);
		if (r[i].damaged)
			say(d, PROBE_CRITICAL, "%u probes of %u bytes came back damaged",
			    r[i].damaged, r[i].size);
	}
	for (size_t i = 0; i < n; i++) {
		const struct probe_rtt *q = &r[i].rtt;
		char a[32], b[32];

		if (!q->n)
			continue;
		if (t->rtt_warning_ns && q->p99_ns > t->rtt_warning_ns) {
			probe_fmt_ns(q->p99_ns, a, sizeof(a));
			probe_fmt_ns(t->rtt_warning_ns, b, sizeof(b));
			say(d, PROBE_WARNING, "RTT p99 %s at %u bytes (over %s)", a, r[i].size, b);
		}
		/* Said, not judged: one slow scheduler tick on a busy host makes one. */
		if (q->outliers) {
			probe_fmt_ns(q->max_ns, a, sizeof(a));
			probe_fmt_ns(q->p50_ns, b, sizeof(b));
			say(d, PROBE_OK,
			    "RTT outliers: %zu of %zu probes at %u bytes over %dx the "
			    "median %s (max %s)",
			    q->outliers, q->n, r[i].size, PROBE_OUTLIER_FACTOR, b, a);
		}
	}
done:
	if (!d->n)
		say(d, PROBE_OK, "every size came back");
}
