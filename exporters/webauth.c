// SPDX-License-Identifier: MIT
/*
 * basic_auth_users: bcrypt through libxcrypt's crypt_rn(), with a cache of
 * verdicts and a fair queue for the work areas.
 *
 * libcrypt is opened with the first web config that has users, not linked:
 * a serve without basic auth (most of them, behind a scraper's network
 * policy) never maps it, as with SQLite and libcurl (src/core/dl_table.h).
 * The package depends on libcrypt1 by name (debian/control).
 */
#include <crypt.h>
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "dl_table.h"
#include "util.h"
#include "webauth.h"

#define LIBCRYPT_SONAME "libcrypt.so.1"

static struct {
	char *(*rn)(const char *, const char *, void *, int);
} crypt_api;
/* the member is crypt_rn's type, as <crypt.h> declares it */
_Static_assert(__builtin_types_compatible_p(__typeof__(&crypt_rn), __typeof__(crypt_api.rn)),
	       "crypt_rn's prototype");
static char crypt_err[256];
static pthread_once_t crypt_once = PTHREAD_ONCE_INIT;

static void crypt_load(void)
{
	static const struct dl_sym syms[] = {
		{ "crypt_rn", offsetof(__typeof__(crypt_api), rn) },
	};

	dl_table_open(LIBCRYPT_SONAME, syms, 1, &crypt_api, "basic_auth_users (bcrypt)",
		      "libxcrypt", crypt_err, sizeof(crypt_err));
}

#define AUTH_OK_SLOTS	64  /* distinct valid credentials: a handful of scrapers */
#define AUTH_FAIL_SLOTS 256 /* recent wrong ones, so repeating one is cheap */
#define BCRYPT_MAX_PASS 72  /* bcrypt ignores the rest; Go's bcrypt refuses longer ones */
#define DIGEST_LEN	32

struct slot {
	uint8_t key[DIGEST_LEN];
	uint64_t used; /* 0: empty; else the tick of the last use */
};

/*
 * A check waiting for a bcrypt work area.  Areas are handed out fairly, not
 * to whichever thread wakes first: to the client address served longest ago
 * (one address flooding wrong credentials gets one area in turn, and a new
 * address -- Prometheus's first scrape -- the next one free), then the
 * oldest.  Not by whether the user exists: a queue that served configured
 * users first would tell an attacker which names are (the dummy hash is
 * there so that time does not).
 */
struct waiter {
	struct waiter *next;
	uint64_t client; /* a hash of the client's address, 0 unknown */
	uint64_t seq;
	int slot; /* -1 until granted */
};

#define FAIR_BUCKETS 64 /* addresses remembered by hash: when each was last served */

struct web_auth {
	const struct web_config *wc;
	uint8_t hmac_key[32];
	char dummy[61];	      /* a bcrypt hash nobody's password matches, same cost as the users' */
	pthread_mutex_t lock; /* the caches and stats */
	pthread_mutex_t crypt_lock; /* the work areas' busy flags, stopping */
	pthread_cond_t crypt_free;
	struct crypt_data *cd[WEB_AUTH_PARALLEL]; /* ~32 KiB each: crypt_rn's work area */
	bool busy[WEB_AUTH_PARALLEL];
	int n_cd;
	bool stopping;
	struct waiter *queue; /* under crypt_lock */
	uint64_t seq, served[FAIR_BUCKETS];
	struct slot ok[AUTH_OK_SLOTS];
	struct slot fail[AUTH_FAIL_SLOTS];
	uint64_t tick;
	struct web_auth_stats st;
};

int web_auth_new(struct web_auth **out, const struct web_config *wc, char *err, size_t errlen)
{
	struct web_auth *a;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char cost[3] = "10";

	pthread_once(&crypt_once, crypt_load);
	if (crypt_err[0]) {
		snprintf(err, errlen, "web config: %s", crypt_err);
		return -ELIBACC;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	/* one core left to the poll loop, whatever the flood */
	a->n_cd = ncpu > WEB_AUTH_PARALLEL ? WEB_AUTH_PARALLEL : ncpu > 2 ? (int)ncpu - 1 : 1;
	for (int i = 0; i < a->n_cd; i++)
		if (!(a->cd[i] = calloc(1, sizeof(*a->cd[i]))))
			goto oom;
	if (gnutls_rnd(GNUTLS_RND_KEY, a->hmac_key, sizeof(a->hmac_key)))
		goto oom;
	if (wc->n_users)
		memcpy(cost, wc->users[0].hash + 4, 2);
	/* crypt_rn only reads the setting ($2y$NN$ and 22 salt characters); the rest is filler. */
	/* 7 + 53 characters, like any bcrypt hash */
	snprintf(a->dummy, sizeof(a->dummy), "$2y$%s$%.53s", cost,
		 "rocewatchdummysaltforunknownusers.that.matches.nothing");
	a->wc = wc;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->crypt_lock, NULL);
	pthread_cond_init(&a->crypt_free, NULL);
	*out = a;
	return 0;
oom:
	for (int i = 0; i < a->n_cd; i++)
		free(a->cd[i]);
	free(a);
	return -ENOMEM;
}

static struct slot *find(struct slot *s, size_t n, const uint8_t *key)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].used && !memcmp(s[i].key, key, DIGEST_LEN))
			return &s[i];
	return NULL;
}

/* The least recently used slot (or an empty one). */
static struct slot *victim(struct slot *s, size_t n)
{
	struct slot *v = &s[0];

	for (size_t i = 0; i < n && v->used; i++)
		if (s[i].used < v->used)
			v = &s[i];
	return v;
}

/* Give free work areas to the waiters that come first (struct waiter); under crypt_lock. */
static void dispatch(struct web_auth *a)
{
	for (int slot = 0; slot < a->n_cd && a->queue && !a->stopping; slot++) {
		struct waiter **best = NULL;

		if (a->busy[slot])
			continue;
		for (struct waiter **w = &a->queue; *w; w = &(*w)->next) {
			const struct waiter *x = *w, *b = best ? *best : NULL;
			uint64_t xs = a->served[x->client % FAIR_BUCKETS],
				 bs = b ? a->served[b->client % FAIR_BUCKETS] : 0;

			if (!b || xs < bs || (xs == bs && x->seq < b->seq))
				best = w;
		}
		a->busy[slot] = true;
		(*best)->slot = slot;
		a->served[(*best)->client % FAIR_BUCKETS] = ++a->seq;
		*best = (*best)->next;
	}
}

/* 1 match, 0 no match, -ECANCELED: the server is stopping (no verdict). */
static int bcrypt_matches(struct web_auth *a, const char *hash, const char *pass, uint64_t client)
{
	struct waiter me = { .client = client, .slot = -1 };
	const char *res;
	int slot;
	bool ok;

	pthread_mutex_lock(&a->crypt_lock);
	me.seq = ++a->seq;
	me.next = a->queue;
	a->queue = &me;
	dispatch(a);
	while (me.slot < 0 && !a->stopping)
		pthread_cond_wait(&a->crypt_free, &a->crypt_lock);
	if (me.slot < 0) {
		/* stopping: out of the queue, no verdict */
		for (struct waiter **w = &a->queue; *w; w = &(*w)->next)
			if (*w == &me) {
				*w = me.next;
				break;
			}
		pthread_mutex_unlock(&a->crypt_lock);
		return -ECANCELED;
	}
	slot = me.slot;
	pthread_mutex_unlock(&a->crypt_lock);

	res = crypt_api.rn(pass, hash, a->cd[slot], (int)sizeof(*a->cd[slot]));
	/* crypt_rn: NULL for a bad setting (and crypt_r is what ASan intercepts) */
	ok = res && res[0] == '$' && strlen(res) == strlen(hash) &&
	     !gnutls_memcmp(res, hash, strlen(hash));
	explicit_bzero(a->cd[slot], sizeof(*a->cd[slot]));

	pthread_mutex_lock(&a->crypt_lock);
	a->busy[slot] = false;
	dispatch(a);
	/* the one granted must see it: every waiter checks its own slot */
	pthread_cond_broadcast(&a->crypt_free);
	pthread_mutex_unlock(&a->crypt_lock);
	return ok;
}

void web_auth_stop(struct web_auth *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->crypt_lock);
	a->stopping = true;
	pthread_cond_broadcast(&a->crypt_free);
	pthread_mutex_unlock(&a->crypt_lock);
}

bool web_auth_check(struct web_auth *a, const char *user, const char *pass)
{
	return web_auth_check_from(a, 0, user, pass);
}

bool web_auth_check_from(struct web_auth *a, uint64_t client, const char *user, const char *pass)
{
	uint8_t key[DIGEST_LEN];
	const char *hash;
	size_t ulen, plen;
	char *cred;
	bool ok;
	int m;

	if (!user || !pass)
		return false;
	ulen = strlen(user);
	plen = strlen(pass);
	cred = malloc(ulen + plen + 2);
	if (!cred)
		return false;
	memcpy(cred, user, ulen);
	cred[ulen] = ':';
	memcpy(cred + ulen + 1, pass, plen + 1);
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->hmac_key, sizeof(a->hmac_key), cred,
			     ulen + plen + 1, key)) {
		explicit_bzero(cred, ulen + plen + 1);
		free(cred);
		return false;
	}
	explicit_bzero(cred, ulen + plen + 1);
	free(cred);

	pthread_mutex_lock(&a->lock);
	{
		struct slot *s = find(a->ok, AUTH_OK_SLOTS, key);
		bool known = s != NULL;

		if (!s)
			s = find(a->fail, AUTH_FAIL_SLOTS, key);
		if (s) {
			s->used = ++a->tick;
			a->st.cache_hits++;
			pthread_mutex_unlock(&a->lock);
			return known;
		}
	}
	pthread_mutex_unlock(&a->lock);

	hash = web_config_user_hash(a->wc, user);
	/* Unknown user or an over-long password: spend the same time, then refuse. */
	m = bcrypt_matches(a, hash && plen <= BCRYPT_MAX_PASS ? hash : a->dummy, pass, client);
	if (m < 0)
		return false; /* stopping: refused, and nothing learnt to cache */
	ok = m && hash && plen <= BCRYPT_MAX_PASS;

	pthread_mutex_lock(&a->lock);
	a->st.bcrypts++;
	{
		struct slot *s =
		    ok ? victim(a->ok, AUTH_OK_SLOTS) : victim(a->fail, AUTH_FAIL_SLOTS);

		memcpy(s->key, key, DIGEST_LEN);
		s->used = ++a->tick;
	}
	pthread_mutex_unlock(&a->lock);
	return ok;
}

void web_auth_stats(struct web_auth *a, struct web_auth_stats *st)
{
	pthread_mutex_lock(&a->lock);
	*st = a->st;
	pthread_mutex_unlock(&a->lock);
	pthread_mutex_lock(&a->crypt_lock);
	st->waiting = st->running = 0;
	for (const struct waiter *w = a->queue; w; w = w->next)
		st->waiting++;
	for (int i = 0; i < a->n_cd; i++)
		st->running += a->busy[i];
	pthread_mutex_unlock(&a->crypt_lock);
}

void web_auth_free(struct web_auth *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->crypt_lock);
	pthread_cond_destroy(&a->crypt_free);
	for (int i = 0; i < a->n_cd; i++)
		free(a->cd[i]);
	explicit_bzero(a, sizeof(*a));
	free(a);
}
