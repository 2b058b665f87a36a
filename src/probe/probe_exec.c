// SPDX-License-Identifier: MIT
/* A node's part of a fleet probe (probe_exec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe_exec.h"

/* How soon to try again when the link has no room (a send queue a few probes deep). */
#define RETRY_NS 20000

static unsigned n_sizes(const struct probe_slice_entry *e)
{
	unsigned sz[PROBE_PLAN_MAX_SIZES];

	return (unsigned)probe_plan_sizes(e->mtu, sz);
}

static unsigned count_of(const struct probe_exec *ex, size_t k)
{
	return ex->sizes[k] * ex->s->repeats + ex->s->e[k].labels;
}

static unsigned size_of(const struct probe_exec *ex, size_t k, unsigned m)
{
	unsigned sz[PROBE_PLAN_MAX_SIZES];
	unsigned main = ex->sizes[k] * ex->s->repeats;

	if (m >= main)
		return 64;
	probe_plan_sizes(ex->s->e[k].mtu, sz);
	return sz[m / ex->s->repeats];
}

void probe_exec_free(struct probe_exec *ex)
{
	if (!ex)
		return;
	free(ex->res);
	free(ex->got);
	free(ex->out);
	free(ex->skip);
	free(ex->slot_first);
	free(ex->sizes);
	memset(ex, 0, sizeof(*ex));
}

int probe_exec_init(struct probe_exec *ex, const struct probe_slice *s, const struct probe_link *l)
{
	size_t n = s->n ? s->n : 1;

	memset(ex, 0, sizeof(*ex));
	ex->s = s;
	ex->link = *l;
	ex->res = calloc(n, sizeof(*ex->res));
	/* got: any reply (dedupe), out: sent; the intact ones are in the upper half of got[] */
	ex->got = calloc(2 * n, sizeof(*ex->got));
	ex->out = calloc(n, sizeof(*ex->out));
	ex->skip = calloc(n, sizeof(*ex->skip));
	ex->slot_first = calloc((size_t)s->n_slots + 2, sizeof(*ex->slot_first));
	ex->sizes = calloc(n, 1);
	if (!ex->res || !ex->got || !ex->out || !ex->skip || !ex->slot_first || !ex->sizes) {
		probe_exec_free(ex);
		return -ENOMEM;
	}
	for (size_t k = 0; k < s->n; k++) {
		ex->res[k].rtt_ns = PROBE_RTT_NONE;
		ex->sizes[k] = (uint8_t)n_sizes(&s->e[k]);
	}
	/* entries are in slot order (probe_slice_decode() checks it) */
	for (size_t k = 0, slot = 0; slot <= s->n_slots; slot++) {
		ex->slot_first[slot] = k;
		while (k < s->n && s->e[k].slot == slot)
			k++;
	}
	ex->slot_first[s->n_slots] = s->n;
	ex->last_due_ns = s->start_ns;
	return 0;
}

/* The probes of entry k this pass may send: all on the first, the late ones on the second. */
static uint64_t todo_of(const struct probe_exec *ex, size_t k)
{
	unsigned c = count_of(ex, k);

	if (ex->pass)
		return ex->skip[k];
	return c >= 64 ? UINT64_MAX : (1ULL << c) - 1;
}

/* Enter the cursor's slot: how many probe times it takes; 0: nothing to send this pass. */
static void enter_slot(struct probe_exec *ex)
{
	uint64_t any = 0;

	for (size_t k = ex->slot_first[ex->slot]; k < ex->slot_first[ex->slot + 1]; k++)
		any |= todo_of(ex, k);
	ex->slot_m = 0;
	while (ex->slot_m < 64 && any >> ex->slot_m)
		ex->slot_m++;
}

/* The schedule is over: the second pass when some probes were late, else the end. */
static bool next_pass(struct probe_exec *ex)
{
	if (ex->pass == 0 && ex->late) {
		ex->pass = 1;
		ex->slot = 0;
		ex->m = 0;
		ex->k = (uint32_t)ex->slot_first[0];
		return true;
	}
	ex->pass = 2;
	return false;
}

int64_t probe_exec_step(struct probe_exec *ex, int64_t now_ns)
{
	const struct probe_slice *s = ex->s;

	while (ex->slot < s->n_slots || next_pass(ex)) {
		size_t a = ex->slot_first[ex->slot], b = ex->slot_first[ex->slot + 1];
		int64_t due, slot = (int64_t)ex->slot + (ex->pass ? (int64_t)s->n_slots : 0);
		bool late;

		if (ex->m == 0 && ex->k == a)
			enter_slot(ex);
		if (ex->m >= ex->slot_m) {
			ex->slot++;
			ex->m = 0;
			ex->k = (uint32_t)ex->slot_first[ex->slot];
			continue;
		}
		due = s->start_ns + slot * s->slot_ns + (int64_t)ex->m * s->probe_ns;
		if (due > now_ns)
			return due;
		late = now_ns - due > s->slot_ns;
		for (; ex->k < b; ex->k++) {
			size_t k = ex->k;
			unsigned main = ex->sizes[k] * s->repeats;
			uint64_t bit = 1ULL << ex->m;
			struct probe_hdr h;
			int r;

			if (!(todo_of(ex, k) & bit))
				continue;
			if (late) {
				/* counted once: a second pass's late probe stays late */
				if (!ex->pass) {
					ex->late++;
					ex->skip[k] |= bit;
				}
				continue;
			}
			h = (struct probe_hdr){ .size = size_of(ex, k, ex->m),
						.session = s->session,
						.seq = (uint64_t)k << 8 | ex->m };
			/* marked sent first: a link may hand the reply back before it returns */
			ex->out[k] |= bit;
			r = ex->link.send(ex->link.ctx, k, &s->e[k],
					  ex->m >= main ? ex->m - main + 1 : 0, &h);
			if (r) {
				ex->out[k] &= ~bit;
				if (r == -ENOBUFS)
					return now_ns + RETRY_NS;
				ex->send_errors++;
				ex->last_err = r;
			} else {
				ex->sent++;
				if (ex->m < main)
					ex->res[k].sent[ex->m / s->repeats]++;
				ex->last_due_ns = due;
			}
			if (ex->pass) {
				ex->skip[k] &= ~bit;
				ex->late--;
				ex->retried += !r;
			}
		}
		ex->k = (uint32_t)a;
		ex->m++;
	}
	return INT64_MAX;
}

void probe_exec_reply(struct probe_exec *ex, const struct probe_hdr *h, bool intact,
		      int64_t t_recv_ns)
{
	size_t k = (size_t)(h->seq >> 8), n = ex->s->n;
	unsigned m = (unsigned)(h->seq & 0xff), main;
	struct probe_result *x;
	int64_t rtt;

	/* not one we sent, a duplicate, or a size that is not the probe's: not counted */
	if (k >= n || m >= count_of(ex, k) || !(ex->out[k] >> m & 1) || (ex->got[k] >> m & 1) ||
	    h->size != size_of(ex, k, m))
		return;
	ex->got[k] |= 1ULL << m;
	ex->replied++;
	x = &ex->res[k];
	if (!intact) {
		if (x->damaged < UINT8_MAX)
			x->damaged++;
		return;
	}
	ex->got[n + k] |= 1ULL << m;
	main = ex->sizes[k] * ex->s->repeats;
	if (m < main)
		x->recv[m / ex->s->repeats]++;
	rtt = t_recv_ns - (int64_t)h->t_send_ns;
	if (rtt >= 0 && rtt < (int64_t)x->rtt_ns)
		x->rtt_ns = (uint32_t)rtt;
}

bool probe_exec_done(const struct probe_exec *ex, int64_t now_ns)
{
	return ex->pass == 2 &&
	       (ex->replied == ex->sent || now_ns >= ex->last_due_ns + ex->s->wait_ns);
}

const struct probe_result *probe_exec_results(struct probe_exec *ex)
{
	const struct probe_slice *s = ex->s;

	for (size_t k = 0; k < s->n; k++) {
		unsigned main = ex->sizes[k] * s->repeats, labels = s->e[k].labels;
		uint64_t want = labels ? ((1ULL << labels) - 1) << main : 0;
		struct probe_result *x = &ex->res[k];

		/* a pair's paths are judged only when every label probe left */
		if (!labels || (ex->out[k] & want) != want) {
			x->labels_sent = 0;
			x->labels_lost = 0;
			continue;
		}
		x->labels_sent = (uint8_t)labels;
		x->labels_lost = (uint32_t)((~ex->got[s->n + k] & want) >> main);
	}
	return ex->res;
}
