// SPDX-License-Identifier: MIT
/*
 * A fleet probe slice's address handles (probe_ahs.h).  The entries' (port,
 * peer GID) pairs are groups, each with one handle slot per flow label the
 * group's entries use; slots are in the order of the entries that first
 * need them, which is slot order, so the thread makes the first step's
 * handles first.  A slot's state is the one thing both threads touch: a
 * compare-and-swap from UNMADE to BUSY says who makes it, and READY is
 * stored with release after the handle, so a reader that sees READY sees
 * the handle.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "probe_ahs.h"
#include "probe_ud.h"
#include "util.h"

enum {
	AH_UNMADE,
	AH_BUSY,
	AH_READY,
	AH_FAILED,
	AH_GONE, /* released, or its port went */
};

struct ah_slot {
	struct ibv_ah *ah;
	uint32_t group;
	uint8_t fl;
	uint8_t state; /* AH_*, atomic */
};

struct ah_group {
	uint8_t gid[16];
	uint8_t port, n; /* n: the group's flow labels + 1 */
	uint32_t first;	 /* its first slot */
};

struct probe_ahs {
	const struct probe_slice *s;
	struct probe_ep *ep_of[PROBE_PLAN_MAX_PORTS];
	uint8_t tclass;
	struct ah_group *g;
	size_t n_g;
	uint32_t *group_of; /* [entry] */
	uint32_t *hash;	    /* group + 1, 0: empty; hmask + 1 of them */
	size_t hmask;
	struct ah_slot *sl;
	size_t n_sl;
	pthread_t thr;
	bool thr_live;
	int stop;	       /* atomic */
	int64_t arrived_ns;    /* CLOCK_REALTIME, as the slice's start */
	int64_t ready_real_ns; /* atomic: when the thread had gone through all; 0 not yet */
	/* atomic: both threads add */
	uint64_t made, failed, lazy;
	int64_t create_ns, max_ns;
	int err_taken; /* atomic: the first failure claims err */
	char err[200];
};

static uint32_t group_hash(unsigned port, const uint8_t *gid)
{
	uint64_t h = 1469598103934665603ULL ^ port;

	for (int i = 0; i < 16; i++)
		h = (h ^ gid[i]) * 1099511628211ULL;
	return (uint32_t)(h ^ h >> 32);
}

/* Group (port, gid)'s index, or -1 and *at the empty hash slot where it would go. */
static int64_t group_find(const struct probe_ahs *t, unsigned port, const uint8_t *gid, size_t *at)
{
	size_t h = group_hash(port, gid) & t->hmask;

	for (;; h = (h + 1) & t->hmask) {
		uint32_t v = t->hash[h];

		if (!v) {
			if (at)
				*at = h;
			return -1;
		}
		if (t->g[v - 1].port == port && !memcmp(t->g[v - 1].gid, gid, 16))
			return v - 1;
	}
}

static int build_groups(struct probe_ahs *t)
{
	const struct probe_slice *s = t->s;
	size_t n = s->n ? s->n : 1, cap = 16, at;

	while (cap < 2 * n)
		cap <<= 1;
	t->hmask = cap - 1;
	t->hash = calloc(cap, sizeof(*t->hash));
	t->g = calloc(n, sizeof(*t->g));
	t->group_of = calloc(n, sizeof(*t->group_of));
	if (!t->hash || !t->g || !t->group_of)
		return -ENOMEM;
	for (size_t k = 0; k < s->n; k++) {
		const struct probe_slice_entry *e = &s->e[k];
		int64_t gi = group_find(t, e->port, e->gid, &at);

		if (gi < 0) {
			gi = (int64_t)t->n_g++;
			memcpy(t->g[gi].gid, e->gid, 16);
			t->g[gi].port = e->port;
			t->hash[at] = (uint32_t)gi + 1;
		}
		if (e->labels + 1u > t->g[gi].n)
			t->g[gi].n = (uint8_t)(e->labels + 1u);
		t->group_of[k] = (uint32_t)gi;
	}
	for (size_t gi = 0; gi < t->n_g; gi++) {
		t->g[gi].first = (uint32_t)t->n_sl;
		t->n_sl += t->g[gi].n;
	}
	t->sl = calloc(t->n_sl ? t->n_sl : 1, sizeof(*t->sl));
	if (!t->sl)
		return -ENOMEM;
	for (size_t gi = 0; gi < t->n_g; gi++)
		for (unsigned fl = 0; fl < t->g[gi].n; fl++) {
			t->sl[t->g[gi].first + fl].group = (uint32_t)gi;
			t->sl[t->g[gi].first + fl].fl = (uint8_t)fl;
		}
	return 0;
}

int probe_ahs_new(struct probe_ahs **out, const struct probe_slice *s,
		  struct probe_ep *const *ep_of, uint8_t tclass)
{
	struct probe_ahs *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->s = s;
	t->tclass = tclass;
	t->arrived_ns = real_ns();
	for (size_t k = 0; k < s->n_ports && k < PROBE_PLAN_MAX_PORTS; k++)
		t->ep_of[k] = ep_of[k];
	if (build_groups(t)) {
		probe_ahs_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

static void note_error(struct probe_ahs *t, const struct ah_group *g, unsigned fl, int e)
{
	char gid[48];

	if (__atomic_exchange_n(&t->err_taken, 1, __ATOMIC_ACQ_REL))
		return;
	inet_ntop(AF_INET6, g->gid, gid, sizeof(gid));
	snprintf(t->err, sizeof(t->err), "port %s/%u to GID %s flow label %u: %s",
		 t->s->ports[g->port].device, t->s->ports[g->port].port, gid, fl,
		 e ? strerror(e) : "its probe QP is gone");
}

static void add_max(int64_t *max, int64_t v)
{
	int64_t cur = __atomic_load_n(max, __ATOMIC_RELAXED);

	while (v > cur &&
	       !__atomic_compare_exchange_n(max, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Make slot i if nobody has: the state it is in after. */
static uint8_t make(struct probe_ahs *t, size_t i, bool lazy)
{
	struct ah_slot *sl = &t->sl[i];
	const struct ah_group *g = &t->g[sl->group];
	struct probe_ep *ep = t->ep_of[g->port];
	uint8_t want = AH_UNMADE, st;
	struct ibv_ah *ah = NULL;
	int64_t t0, dt;
	int e = 0;

	if (!__atomic_compare_exchange_n(&sl->state, &want, AH_BUSY, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return want;
	if (ep) {
		t0 = mono_ns();
		ah = probe_ep_ah_make(ep, g->gid, t->tclass, sl->fl);
		e = ah ? 0 : errno ? errno : EIO;
		dt = mono_ns() - t0;
		__atomic_add_fetch(&t->create_ns, dt, __ATOMIC_RELAXED);
		add_max(&t->max_ns, dt);
	}
	if (ah) {
		__atomic_add_fetch(&t->made, 1, __ATOMIC_RELAXED);
		if (lazy)
			__atomic_add_fetch(&t->lazy, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&t->failed, 1, __ATOMIC_RELAXED);
		note_error(t, g, sl->fl, e);
	}
	sl->ah = ah;
	st = ah ? AH_READY : AH_FAILED;
	__atomic_store_n(&sl->state, st, __ATOMIC_RELEASE);
	return st;
}

static void *prep_main(void *arg)
{
	struct probe_ahs *t = arg;
	size_t i;

	for (i = 0; i < t->n_sl && !__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE); i++)
		make(t, i, false);
	if (i == t->n_sl)
		__atomic_store_n(&t->ready_real_ns, real_ns(), __ATOMIC_RELEASE);
	return NULL;
}

int probe_ahs_start(struct probe_ahs *t)
{
	int rc;

	if (t->thr_live)
		return 0;
	rc = pthread_create(&t->thr, NULL, prep_main, t);
	if (rc)
		return -rc;
	t->thr_live = true;
	return 0;
}

int probe_ahs_get(struct probe_ahs *t, size_t entry, unsigned fl, struct ibv_ah **ah)
{
	const struct ah_group *g;
	size_t i;
	uint8_t st;

	if (!t || entry >= t->s->n)
		return -EHOSTUNREACH;
	g = &t->g[t->group_of[entry]];
	if (fl >= g->n)
		return -EHOSTUNREACH;
	i = g->first + fl;
	st = __atomic_load_n(&t->sl[i].state, __ATOMIC_ACQUIRE);
	if (st == AH_UNMADE)
		st = make(t, i, true);
	if (st == AH_BUSY)
		return -ENOBUFS;
	if (st != AH_READY)
		return -EHOSTUNREACH;
	*ah = t->sl[i].ah;
	return 0;
}

struct ibv_ah *probe_ahs_find(struct probe_ahs *t, unsigned k, const uint8_t gid[16],
			      uint8_t tclass)
{
	int64_t gi;
	const struct ah_slot *sl;

	if (!t || tclass != t->tclass || k >= t->s->n_ports)
		return NULL;
	gi = group_find(t, k, gid, NULL);
	if (gi < 0)
		return NULL;
	sl = &t->sl[t->g[gi].first];
	return __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) == AH_READY ? sl->ah : NULL;
}

/* Ends the thread making the handles, or waits for the one destroying them. */
void probe_ahs_stop(struct probe_ahs *t)
{
	if (!t || !t->thr_live)
		return;
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
	pthread_join(t->thr, NULL);
	t->thr_live = false;
}

/* Destroy what port k's slots (every port's when k < 0) still hold. */
static void destroy(struct probe_ahs *t, int k)
{
	for (size_t i = 0; i < t->n_sl; i++) {
		struct ah_slot *sl = &t->sl[i];

		if ((k < 0 || t->g[sl->group].port == k) && sl->ah) {
			probe_ep_ah_destroy(sl->ah);
			sl->ah = NULL;
		}
	}
}

/* The thread again, after the run: as many system calls as were made ahead. */
static void *destroy_main(void *arg)
{
	destroy(arg, -1);
	return NULL;
}

void probe_ahs_release(struct probe_ahs *t, int k)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_sl; i++)
		if (k < 0 || t->g[t->sl[i].group].port == k)
			__atomic_store_n(&t->sl[i].state, AH_GONE, __ATOMIC_RELEASE);
	for (size_t j = 0; j < PROBE_PLAN_MAX_PORTS; j++)
		if (k < 0 || (size_t)k == j)
			t->ep_of[j] = NULL;
	/* a port that goes loses its handles now, before its endpoint is closed */
	if (k >= 0 || t->thr_live || pthread_create(&t->thr, NULL, destroy_main, t))
		destroy(t, k);
	else
		t->thr_live = true;
}

void probe_ahs_free(struct probe_ahs *t)
{
	if (!t)
		return;
	probe_ahs_stop(t);
	if (t->sl)
		destroy(t, -1);
	free(t->sl);
	free(t->g);
	free(t->group_of);
	free(t->hash);
	free(t);
}

void probe_ahs_stats(struct probe_ahs *t, struct probe_ah_stats *st)
{
	int64_t ready;

	memset(st, 0, sizeof(*st));
	st->ready_ns = -1;
	if (!t)
		return;
	st->known = true;
	st->made = __atomic_load_n(&t->made, __ATOMIC_RELAXED);
	st->failed = __atomic_load_n(&t->failed, __ATOMIC_RELAXED);
	st->lazy = __atomic_load_n(&t->lazy, __ATOMIC_RELAXED);
	st->create_ns = __atomic_load_n(&t->create_ns, __ATOMIC_RELAXED);
	st->max_ns = __atomic_load_n(&t->max_ns, __ATOMIC_RELAXED);
	ready = __atomic_load_n(&t->ready_real_ns, __ATOMIC_ACQUIRE);
	if (ready) {
		st->ready_ns = ready > t->arrived_ns ? ready - t->arrived_ns : 0;
		st->before_start = ready <= t->s->start_ns && !st->lazy;
	}
}

const char *probe_ahs_error(struct probe_ahs *t)
{
	return t && __atomic_load_n(&t->err_taken, __ATOMIC_ACQUIRE) ? t->err : "";
}
