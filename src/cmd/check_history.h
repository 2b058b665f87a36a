/* SPDX-License-Identifier: MIT */
/*
 * check --serve: counter rules (rate/increase/delta over minutes) cannot be
 * decided on the 100 ms between check's two samples.  A serve running on
 * the node evaluates the same rules over its own history; check_serve_merge()
 * takes serve's result for every counter rule whose definition, parameters
 * and object match and whose history is longer, and says what the verdict
 * rests on either way.
 */
#ifndef ROCEWATCH_CHECK_HISTORY_H
#define ROCEWATCH_CHECK_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

#define CHECK_SERVE_DEFAULT_URL "http://127.0.0.1:9479"
/* An evaluation older than this is not taken: serve has stalled or gone. */
#define CHECK_SERVE_MAX_AGE_NS (30LL * 1000000000LL)

struct check_history {
	const char *source; /* "serve", "local" (this check's samples), "snapshot" (--from) */
	const char *url;    /* the serve asked, or NULL */
	size_t counter_results, from_serve;
	char note[640];
};

/*
 * Ask the serve at url (its /api/v1/checks) and adopt its counter-rule
 * results into e for the objects of host.  explicit_url: --serve was given
 * (only changes the wording); ho: the client (TLS, auth, timeouts).  Never fails: an unreachable or
 * unsuitable serve leaves e as it is, with the reason in h->note.
 */
struct client_http_opts;
void check_serve_merge(struct check_history *h, struct rules_engine *e, const char *url,
		       const struct client_http_opts *ho, bool explicit_url, const char *host,
		       int64_t now_ns);
/* check's own client defaults: a serve on the node answers at once (500 ms, 2 s, 16 MiB). */
void check_serve_client_defaults(struct client_http_opts *ho);

/* h for a check without serve: "local" (with the span the rules had) or "snapshot". */
void check_history_local(struct check_history *h, const struct rules_engine *e, bool snapshot,
			 const char *why);

#endif
