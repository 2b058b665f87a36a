/* SPDX-License-Identifier: MIT */
/*
 * TLS for the HTTP server: the web config's certificate, key and client CA
 * turned into GnuTLS objects, re-read when their files change.
 *
 * Each load is a generation.  A handshake takes a reference on the current
 * one (it signs with that key and checks the client against that CA) and
 * the connection keeps it until it closes, so a rotation never frees what a
 * handshake in flight still uses.  A new pair that does not load (a key
 * written before its certificate, a typo) leaves the old one serving and is
 * tried again on the next refresh.
 */
#ifndef ROCEWATCH_WEBTLS_H
#define ROCEWATCH_WEBTLS_H

#include <stddef.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "webconfig.h"

struct web_tls;
struct web_tls_gen;

/* Load everything once and check the priority string.  wc must outlive it. */
int web_tls_new(struct web_tls **out, const struct web_config *wc, char *err, size_t errlen);
void web_tls_free(struct web_tls *t);
/* For MHD_OPTION_HTTPS_PRIORITIES. */
const char *web_tls_priorities(const struct web_tls *t);
/*
 * Re-read the files if any changed since the last load: 1 when a new
 * generation is serving, 0 when nothing changed, -errno (err says which file
 * and why) when the new files are not usable and the old ones stay.
 */
int web_tls_refresh(struct web_tls *t, char *err, size_t errlen);
/* How many times a changed set of files was loaded (for tests and metrics). */
unsigned long web_tls_generation(const struct web_tls *t);

/*
 * In a handshake (a gnutls_certificate_retrieve_function2): hand GnuTLS the
 * current certificate and key, set the session's client-certificate policy
 * and verify callback.  *held is the connection's reference (replaced if it
 * already held one); drop it with web_tls_put() when the connection closes.
 */
int web_tls_select(struct web_tls *t, gnutls_session_t session, struct web_tls_gen **held,
		   gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey,
		   gnutls_certificate_verify_function *verify);
/* The verify callback's work: 0 to go on, negative to fail the handshake. */
int web_tls_verify(struct web_tls *t, struct web_tls_gen *g, gnutls_session_t session);
void web_tls_put(struct web_tls_gen *g);

#endif
