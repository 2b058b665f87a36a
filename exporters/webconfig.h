/* SPDX-License-Identifier: MIT */
/*
 * The web configuration file (--web.config.file) in the Prometheus
 * exporter-toolkit format: TLS server settings, extra response headers,
 * basic-auth users with bcrypt hashes and a request rate limit.  Parsed once
 * into this plain struct, which the HTTP server reads and the fleet client
 * can share; nothing here touches GnuTLS, so a parse never depends on what
 * the TLS library accepts (web_tls_* does that when the server starts).
 *
 * Errors are one line naming the file, the position (libyaml's line:col)
 * and the key: "web.yml:4:3: tls_server_config.cert_fil: unknown key ...".
 */
#ifndef ROCEWATCH_WEBCONFIG_H
#define ROCEWATCH_WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tls_server_config.client_auth_type, as Go's tls.ClientAuthType. */
enum web_client_auth {
	WEB_CLIENT_NONE,	      /* NoClientCert */
	WEB_CLIENT_REQUEST,	      /* RequestClientCert: asked for, not checked */
	WEB_CLIENT_REQUIRE_ANY,	      /* RequireAnyClientCert: must send one, not checked */
	WEB_CLIENT_VERIFY_IF_GIVEN,   /* VerifyClientCertIfGiven */
	WEB_CLIENT_REQUIRE_AND_VERIFY /* RequireAndVerifyClientCert: the secure one */
};

enum web_tls_version {
	WEB_TLS10 = 1,
	WEB_TLS11,
	WEB_TLS12,
	WEB_TLS13
};

#define WEB_MAX_HEADERS 5 /* the exporter-toolkit allows exactly these five */
#define WEB_MAX_LIST	64
/* bcrypt costs above this are refused: each step doubles a check (14: ~1 s of CPU) */
#define WEB_BCRYPT_MAX_COST 14

struct web_user {
	char *name;
	char *hash; /* bcrypt: $2a$, $2b$ or $2y$, cost 04..31 */
};

struct web_header {
	const char *name; /* canonical spelling, static */
	char *value;
};

struct web_config {
	char *file; /* as given, for messages */

	/* tls_server_config; tls is true when any TLS key is set */
	bool tls;
	char *cert_file, *key_file, *client_ca_file; /* relative paths: to the file's dir */
	char *cert, *key, *client_ca;		     /* inline PEM instead of the files */
	enum web_client_auth client_auth;
	enum web_tls_version min_version, max_version; /* TLS12 .. TLS13 by default */
	int ciphers[WEB_MAX_LIST];		       /* indexes into the suite table */
	size_t n_ciphers;
	int curves[WEB_MAX_LIST];
	size_t n_curves;
	bool prefer_server_cipher_suites;
	char **client_allowed_sans;
	size_t n_sans;

	/* http_server_config */
	bool http2; /* accepted for compatibility; rocewatch speaks HTTP/1.1 */
	struct web_header headers[WEB_MAX_HEADERS];
	size_t n_headers;

	struct web_user *users;
	size_t n_users;

	/* rate_limit: a token bucket over all requests; interval 0 = off */
	int64_t rate_interval_ns;
	int64_t rate_burst;
};

/* Read and check PATH.  0, or -errno with err saying file, line:col and key. */
int web_config_load(struct web_config *wc, const char *path, char *err, size_t errlen);
/*
 * The same from memory: name is used in messages, dir resolves relative
 * file names (NULL: leave them as written).
 */
int web_config_parse(struct web_config *wc, const char *name, const char *dir, const char *text,
		     size_t len, char *err, size_t errlen);
void web_config_free(struct web_config *wc);

/* Is basic authentication on? */
static inline bool web_config_auth(const struct web_config *wc)
{
	return wc && wc->n_users > 0;
}
/* The user's bcrypt hash, or NULL. */
const char *web_config_user_hash(const struct web_config *wc, const char *user);

/*
 * The GnuTLS priority string for the TLS settings (versions, cipher suites,
 * curves, server precedence).  GnuTLS selects key exchanges, ciphers and MACs
 * separately, so a cipher_suites list enables the combinations of what its
 * suites name; TLS 1.3 suites are always on while TLS 1.3 is, as in Go.
 * 0, or -ENOSPC.
 */
int web_config_priorities(const struct web_config *wc, char *buf, size_t len);
/* Go's name of suite index i (for messages and tests). */
const char *web_config_cipher_name(int i);

#endif
