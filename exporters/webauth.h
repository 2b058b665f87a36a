/* SPDX-License-Identifier: MIT */
/*
 * Basic authentication against the web config's bcrypt hashes.
 *
 * A bcrypt costs tens of milliseconds by design, and Prometheus sends the
 * same credentials every scrape, so outcomes are cached, keyed by an HMAC
 * (a random per-process key, SHA-256) of "user:password": a scrape costs a
 * hash, not a bcrypt.  Accepted and refused credentials are kept apart so
 * a flood of wrong passwords cannot evict Prometheus's entry.  An unknown
 * user is checked against a dummy hash of the same cost, so the time taken
 * does not tell which users exist.  bcrypts run a few at a time (one less
 * than the CPUs, at most WEB_AUTH_PARALLEL), handed out by client address in
 * turn, so a queue of wrong passwords from one address holds another's
 * first login for one bcrypt at most, and they never take every
 * core from the poll loop.  The cost of a hash is bounded by the web config
 * (WEB_BCRYPT_MAX_COST), so one check is at most about a second of CPU, and
 * web_auth_stop() sends checks still waiting away, so a server stops at once.
 */
#ifndef ROCEWATCH_WEBAUTH_H
#define ROCEWATCH_WEBAUTH_H

#include <stdbool.h>
#include <stdint.h>

#include "webconfig.h"

#define WEB_AUTH_PARALLEL 4

struct web_auth;

struct web_auth_stats {
	uint64_t bcrypts;    /* bcrypt computations (crypt_rn) */
	uint64_t cache_hits; /* answered from the cache */
	unsigned waiting;    /* checks queued for a bcrypt work area now */
	unsigned running;    /* bcrypts being computed now */
};

/*
 * wc must outlive the result.  -ENOMEM, or -ELIBACC with err saying so when
 * libcrypt (opened here, on the first web config with users) is missing.
 */
int web_auth_new(struct web_auth **out, const struct web_config *wc, char *err, size_t errlen);
/* true when user/password match a configured user (user or pass NULL: false). */
bool web_auth_check(struct web_auth *a, const char *user, const char *pass);
/*
 * The same for a request from client (a hash of its address, 0 unknown):
 * bcrypts are handed out fairly, to the address served longest ago.
 */
bool web_auth_check_from(struct web_auth *a, uint64_t client, const char *user, const char *pass);
void web_auth_stats(struct web_auth *a, struct web_auth_stats *st);
/* Checks waiting for a bcrypt slot, and any later, fail (without caching): the server is stopping.
 */
void web_auth_stop(struct web_auth *a);
void web_auth_free(struct web_auth *a);

#endif
