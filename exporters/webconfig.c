// SPDX-License-Identifier: MIT
/*
 * --web.config.file: the exporter-toolkit format, strictly.  Like Go's
 * yaml.UnmarshalStrict there, an unknown or repeated key is an error, so a
 * typo in "basic_auth_users" cannot silently leave the exporter open.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "bounded.h"
#include "util.h"
#include "webconfig.h"

/* A web config is a few hundred bytes; refuse what cannot be one. */

/* Go's tls.CipherSuites() names and the GnuTLS keywords of their parts. */
static const struct suite {
	const char *name;
	const char *kx, *cipher, *mac; /* kx NULL: a TLS 1.3 suite */
} suites[] = {
	{ "TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM", "AEAD" },
	{ "TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM", "AEAD" },
	{ "TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305",
	  "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD" },
	{ "TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD" },
	{ "TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1" },
};

static const struct curve {
	const char *name, *group;
} curves[] = {
	{ "CurveP256", "GROUP-SECP256R1" },
	{ "CurveP384", "GROUP-SECP384R1" },
	{ "CurveP521", "GROUP-SECP521R1" },
	{ "X25519", "GROUP-X25519" },
};

static const char *const versions[] = {
	[WEB_TLS10] = "TLS10", [WEB_TLS11] = "TLS11", [WEB_TLS12] = "TLS12", [WEB_TLS13] = "TLS13"
};
static const char *const gnutls_versions[] = { [WEB_TLS10] = "VERS-TLS1.0",
					       [WEB_TLS11] = "VERS-TLS1.1",
					       [WEB_TLS12] = "VERS-TLS1.2",
					       [WEB_TLS13] = "VERS-TLS1.3" };

static const char *const client_auths[] = {
	[WEB_CLIENT_NONE] = "NoClientCert",
	[WEB_CLIENT_REQUEST] = "RequestClientCert",
	[WEB_CLIENT_REQUIRE_ANY] = "RequireAnyClientCert",
	[WEB_CLIENT_VERIFY_IF_GIVEN] = "VerifyClientCertIfGiven",
	[WEB_CLIENT_REQUIRE_AND_VERIFY] = "RequireAndVerifyClientCert",
};

/* The headers the exporter-toolkit lets a site set, and the values it allows (NULL: any). */
static const char *const header_names[WEB_MAX_HEADERS] = {
	"Content-Security-Policy", "X-Frame-Options",		"X-Content-Type-Options",
	"X-XSS-Protection",	   "Strict-Transport-Security",
};
static const char *const header_allowed[WEB_MAX_HEADERS][3] = {
	[1] = { "deny", "sameorigin", NULL },
	[2] = { "nosniff", NULL },
};

enum {
	TK_CERT,
	TK_KEY,
	TK_CLIENT_CA,
	TK_CERT_FILE,
	TK_KEY_FILE,
	TK_CLIENT_AUTH_TYPE,
	TK_CLIENT_CA_FILE,
	TK_CLIENT_ALLOWED_SANS,
	TK_MIN_VERSION,
	TK_MAX_VERSION,
	TK_CIPHER_SUITES,
	TK_PREFER_SERVER,
	TK_CURVES,
	TK__COUNT
};

struct wparse {
	struct web_config *wc;
	const char *name;
	const char *dir;
	yaml_document_t doc;
	char *err;
	size_t errlen;
	/* where each TLS key was, for the checks that look at several together */
	const yaml_node_t *tls_at[TK__COUNT];
};

static void werr(struct wparse *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void werr(struct wparse *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(p->err, p->errlen, "%s:%zu:%zu: %s%s%s", p->name,
			 (size_t)n->start_mark.line + 1, (size_t)n->start_mark.column + 1,
			 key ? key : "", key ? ": " : "", msg);
	else
		snprintf(p->err, p->errlen, "%s: %s%s%s", p->name, key ? key : "", key ? ": " : "",
			 msg);
}

static yaml_node_t *node(struct wparse *p, int id)
{
	return yaml_document_get_node(&p->doc, id);
}

static const char *kind_name(const yaml_node_t *n)
{
	return n->type == YAML_SEQUENCE_NODE  ? "a list"
	       : n->type == YAML_MAPPING_NODE ? "a mapping"
					      : "a value";
}

/* A plain empty scalar, "~" or "null": YAML's null, which Go reads as "not set". */
static bool is_null(const yaml_node_t *n)
{
	const char *v;

	if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	v = (const char *)n->data.scalar.value;
	return !*v || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
	       !strcmp(v, "NULL");
}

static int want_kind(struct wparse *p, const yaml_node_t *n, const char *key, yaml_node_type_t t)
{
	static const char *const want[] = { [YAML_SCALAR_NODE] = "a value",
					    [YAML_SEQUENCE_NODE] = "a list",
					    [YAML_MAPPING_NODE] = "a mapping" };

	if (n->type == t)
		return 0;
	werr(p, n, key, "must be %s, not %s", want[t], kind_name(n));
	return -EINVAL;
}

/* A string value; NUL bytes (possible with "\0" escapes) would cut it short unseen. */
static int get_string(struct wparse *p, const yaml_node_t *n, const char *key, char **out)
{
	if (want_kind(p, n, key, YAML_SCALAR_NODE))
		return -EINVAL;
	if (strlen((const char *)n->data.scalar.value) != n->data.scalar.length) {
		werr(p, n, key, "contains a NUL byte");
		return -EINVAL;
	}
	free(*out);
	*out = NULL;
	if (is_null(n))
		return 0;
	*out = strdup((const char *)n->data.scalar.value);
	return *out ? 0 : -ENOMEM;
}

/* A file name: relative ones are relative to the web config's directory, as in Go. */
static int get_path(struct wparse *p, const yaml_node_t *n, const char *key, char **out)
{
	char *s = NULL, *joined;
	int r = get_string(p, n, key, &s);

	if (r || !s)
		return r;
	if (s[0] == '/' || !p->dir || !p->dir[0]) {
		free(*out);
		*out = s;
		return 0;
	}
	if (asprintf(&joined, "%s%s%s", p->dir, p->dir[strlen(p->dir) - 1] == '/' ? "" : "/", s) <
	    0) {
		free(s);
		return -ENOMEM;
	}
	free(s);
	free(*out);
	*out = joined;
	return 0;
}

static int get_bool(struct wparse *p, const yaml_node_t *n, const char *key, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes",
					   "YES",  "on",   "On",   "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No",
					  "NO",	   "off",   "Off",   "OFF" };
	const char *v;

	if (want_kind(p, n, key, YAML_SCALAR_NODE))
		return -EINVAL;
	v = (const char *)n->data.scalar.value;
	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	werr(p, n, key, "'%s' is not true or false", v);
	return -EINVAL;
}

/* One of names[lo..hi]; the message lists them all. */
static int get_enum(struct wparse *p, const yaml_node_t *n, const char *key,
		    const char *const *names, int lo, int hi, int *out)
{
	char list[256] = "";
	const char *v;

	if (want_kind(p, n, key, YAML_SCALAR_NODE))
		return -EINVAL;
	v = (const char *)n->data.scalar.value;
	for (int i = lo; i <= hi; i++) {
		if (!strcmp(v, names[i])) {
			*out = i;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i > lo ? ", " : "", names[i]);
	}
	werr(p, n, key, "'%s' is not one of %s", v, list);
	return -EINVAL;
}

/*
 * Walk a mapping: each key must be one of keys[] and appear once; fn gets
 * the key's index and value node.
 */
typedef int (*key_fn)(struct wparse *p, int k, const yaml_node_t *v, const char *path);

static int walk_map(struct wparse *p, const yaml_node_t *map, const char *prefix,
		    const char *const *keys, size_t n_keys, key_fn fn)
{
	bool seen[32] = { false };
	char path[160], list[512] = "";

	if (is_null(map))
		return 0; /* "tls_server_config:" with nothing under it */
	if (want_kind(p, map, prefix, YAML_MAPPING_NODE))
		return -EINVAL;
	for (size_t i = 0; i < n_keys; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 keys[i]);
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node(p, pr->key), *v = node(p, pr->value);
		const char *name;
		size_t i;
		int r;

		if (!k || !v)
			return -EINVAL;
		if (k->type != YAML_SCALAR_NODE) {
			werr(p, k, prefix, "a key must be a name, not %s", kind_name(k));
			return -EINVAL;
		}
		name = (const char *)k->data.scalar.value;
		snprintf(path, sizeof(path), "%s%s%s", prefix ? prefix : "", prefix ? "." : "",
			 name);
		for (i = 0; i < n_keys; i++)
			if (!strcmp(name, keys[i]))
				break;
		if (i == n_keys) {
			werr(p, k, path, "unknown key (known here: %s)", list);
			return -EINVAL;
		}
		if (seen[i]) {
			werr(p, k, path, "given twice");
			return -EINVAL;
		}
		seen[i] = true;
		r = fn(p, (int)i, v, path);
		if (r)
			return r;
	}
	return 0;
}

/* The entries of the list at key, none when it is null: 0, or -EINVAL after saying why. */
static int list_items(struct wparse *p, const yaml_node_t *n, const char *key,
		      const yaml_node_item_t **it, const yaml_node_item_t **end)
{
	*it = *end = NULL;
	if (is_null(n))
		return 0;
	if (want_kind(p, n, key, YAML_SEQUENCE_NODE))
		return -EINVAL;
	*it = n->data.sequence.items.start;
	*end = n->data.sequence.items.top;
	return 0;
}

/* Entry number i of a list, a value within the bound on every list; NULL after saying why. */
static const yaml_node_t *list_entry(struct wparse *p, int id, const char *key, size_t i)
{
	const yaml_node_t *e = node(p, id);

	if (!e || want_kind(p, e, key, YAML_SCALAR_NODE))
		return NULL;
	if (i >= WEB_MAX_LIST) {
		werr(p, e, key, "more than %d entries", WEB_MAX_LIST);
		return NULL;
	}
	return e;
}

/* A list of names from table[] (stride bytes apart, the name first): indexes into out[]. */
static int get_name_list(struct wparse *p, const yaml_node_t *n, const char *key, const void *table,
			 size_t n_table, size_t stride, const char *what, int *out, size_t *n_out)
{
	const yaml_node_item_t *it, *end;

	*n_out = 0;
	if (list_items(p, n, key, &it, &end))
		return -EINVAL;
	for (; it < end; it++) {
		const yaml_node_t *e = list_entry(p, *it, key, *n_out);
		const char *v;
		size_t i;

		if (!e)
			return -EINVAL;
		v = (const char *)e->data.scalar.value;
		for (i = 0; i < n_table; i++)
			if (!strcmp(v, *(const char *const *)((const char *)table + i * stride)))
				break;
		if (i == n_table) {
			werr(p, e, key, "unknown %s '%s'", what, v);
			return -EINVAL;
		}
		out[(*n_out)++] = (int)i;
	}
	return 0;
}

static int get_string_list(struct wparse *p, const yaml_node_t *n, const char *key, char ***out,
			   size_t *n_out)
{
	const yaml_node_item_t *it, *end;

	if (list_items(p, n, key, &it, &end))
		return -EINVAL;
	for (; it < end; it++) {
		const yaml_node_t *e = list_entry(p, *it, key, *n_out);
		char *s = NULL, **nl;
		int r;

		if (!e)
			return -EINVAL;
		r = get_string(p, e, key, &s);
		if (r)
			return r;
		if (!s) {
			werr(p, e, key, "an empty entry");
			return -EINVAL;
		}
		nl = realloc(*out, (*n_out + 1) * sizeof(**out));
		if (!nl) {
			free(s);
			return -ENOMEM;
		}
		*out = nl;
		nl[(*n_out)++] = s;
	}
	return 0;
}

static const char *const tls_keys[TK__COUNT] = {
	[TK_CERT] = "cert",
	[TK_KEY] = "key",
	[TK_CLIENT_CA] = "client_ca",
	[TK_CERT_FILE] = "cert_file",
	[TK_KEY_FILE] = "key_file",
	[TK_CLIENT_AUTH_TYPE] = "client_auth_type",
	[TK_CLIENT_CA_FILE] = "client_ca_file",
	[TK_CLIENT_ALLOWED_SANS] = "client_allowed_sans",
	[TK_MIN_VERSION] = "min_version",
	[TK_MAX_VERSION] = "max_version",
	[TK_CIPHER_SUITES] = "cipher_suites",
	[TK_PREFER_SERVER] = "prefer_server_cipher_suites",
	[TK_CURVES] = "curve_preferences",
};

static int tls_key(struct wparse *p, int k, const yaml_node_t *v, const char *path)
{
	struct web_config *wc = p->wc;
	int e, r = 0;

	p->tls_at[k] = v;
	switch (k) {
	case TK_CERT:
		return get_string(p, v, path, &wc->cert);
	case TK_KEY:
		return get_string(p, v, path, &wc->key);
	case TK_CLIENT_CA:
		return get_string(p, v, path, &wc->client_ca);
	case TK_CERT_FILE:
		return get_path(p, v, path, &wc->cert_file);
	case TK_KEY_FILE:
		return get_path(p, v, path, &wc->key_file);
	case TK_CLIENT_CA_FILE:
		return get_path(p, v, path, &wc->client_ca_file);
	case TK_CLIENT_AUTH_TYPE:
		if (is_null(v))
			return 0;
		/* RequireClientCert: the exporter-toolkit's old name for RequireAnyClientCert */
		if (v->type == YAML_SCALAR_NODE &&
		    !strcmp((const char *)v->data.scalar.value, "RequireClientCert")) {
			wc->client_auth = WEB_CLIENT_REQUIRE_ANY;
			return 0;
		}
		r = get_enum(p, v, path, client_auths, WEB_CLIENT_NONE,
			     WEB_CLIENT_REQUIRE_AND_VERIFY, &e);
		if (!r)
			wc->client_auth = (enum web_client_auth)e;
		return r;
	case TK_CLIENT_ALLOWED_SANS:
		return get_string_list(p, v, path, &wc->client_allowed_sans, &wc->n_sans);
	case TK_MIN_VERSION:
	case TK_MAX_VERSION:
		r = get_enum(p, v, path, versions, WEB_TLS10, WEB_TLS13, &e);
		if (!r)
			*(k == TK_MIN_VERSION ? &wc->min_version : &wc->max_version) =
			    (enum web_tls_version)e;
		return r;
	case TK_CIPHER_SUITES:
		return get_name_list(p, v, path, suites, ARRAY_SIZE(suites), sizeof(suites[0]),
				     "cipher suite", wc->ciphers, &wc->n_ciphers);
	case TK_PREFER_SERVER:
		return get_bool(p, v, path, &wc->prefer_server_cipher_suites);
	case TK_CURVES:
		return get_name_list(p, v, path, curves, ARRAY_SIZE(curves), sizeof(curves[0]),
				     "curve", wc->curves, &wc->n_curves);
	}
	return -EINVAL;
}

static int header_key_fn(struct wparse *p, int k, const yaml_node_t *v, const char *path)
{
	struct web_config *wc = p->wc;
	const char *const *allowed = header_allowed[k];
	char *val = NULL;
	int r = get_string(p, v, path, &val);

	if (r)
		return r;
	if (!val || !*val) {
		free(val);
		return 0; /* "Unset if blank" */
	}
	/* A line break would let a value add headers of its own. */
	for (const char *c = val; *c; c++) {
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			werr(p, v, path, "contains a control character");
			free(val);
			return -EINVAL;
		}
	}
	if (allowed[0]) {
		bool ok = false;

		for (int i = 0; allowed[i]; i++)
			ok |= !strcmp(val, allowed[i]);
		if (!ok) {
			werr(p, v, path, "'%s' is not allowed (only %s%s%s)", val, allowed[0],
			     allowed[1] ? " or " : "", allowed[1] ? allowed[1] : "");
			free(val);
			return -EINVAL;
		}
	}
	wc->headers[wc->n_headers].name = header_names[k];
	wc->headers[wc->n_headers++].value = val;
	return 0;
}

static int http_key(struct wparse *p, int k, const yaml_node_t *v, const char *path)
{
	if (k == 0)
		return get_bool(p, v, path, &p->wc->http2);
	return walk_map(p, v, path, header_names, WEB_MAX_HEADERS, header_key_fn);
}

static int rate_key(struct wparse *p, int k, const yaml_node_t *v, const char *path)
{
	const char *s;

	if (want_kind(p, v, path, YAML_SCALAR_NODE))
		return -EINVAL;
	s = (const char *)v->data.scalar.value;
	if (k == 0) {
		if (parse_duration(s, &p->wc->rate_interval_ns) || p->wc->rate_interval_ns < 0) {
			werr(p, v, path, "'%s' is not a duration (e.g. 1s, 100ms)", s);
			return -EINVAL;
		}
		return 0;
	}
	if (parse_i64(s, &p->wc->rate_burst) || p->wc->rate_burst < 0 ||
	    p->wc->rate_burst > 1000000) {
		werr(p, v, path, "'%s' is not a number of requests (0 to 1000000)", s);
		return -EINVAL;
	}
	return 0;
}

/* bcrypt, as crypt(5) spells it: $2a$/$2b$/$2y$, a two-digit cost, 53 characters of base64. */
static bool is_bcrypt(const char *h)
{
	int cost;

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] != '$')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (int i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
			    h[i]))
			return false;
	return true;
}

static int load_users(struct wparse *p, const yaml_node_t *map)
{
	struct web_config *wc = p->wc;

	if (is_null(map))
		return 0;
	if (want_kind(p, map, "basic_auth_users", YAML_MAPPING_NODE))
		return -EINVAL;
	for (yaml_node_pair_t *pr = map->data.mapping.pairs.start; pr < map->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = node(p, pr->key), *v = node(p, pr->value);
		char path[160], *hash = NULL;
		struct web_user *nu;
		const char *name;
		int r;

		if (!k || !v)
			return -EINVAL;
		if (want_kind(p, k, "basic_auth_users", YAML_SCALAR_NODE))
			return -EINVAL;
		name = (const char *)k->data.scalar.value;
		snprintf(path, sizeof(path), "basic_auth_users.%s", name);
		/* RFC 7617: the user-id cannot contain a colon; it would never match. */
		if (!*name || strchr(name, ':') || strlen(name) != k->data.scalar.length) {
			werr(p, k, path, "a user name must be non-empty, without ':' or NUL");
			return -EINVAL;
		}
		if (web_config_user_hash(wc, name)) {
			werr(p, k, path, "given twice");
			return -EINVAL;
		}
		r = get_string(p, v, path, &hash);
		if (r)
			return r;
		if (!hash || !is_bcrypt(hash)) {
			werr(p, v, path,
			     "not a bcrypt hash ($2y$10$ and 53 more characters; make one with "
			     "htpasswd -nBC 10 \"\" | tr -d ':\\n')");
			free(hash);
			return -EINVAL;
		}
		/*
		 * exporter-toolkit (Go's bcrypt) takes costs up to 31; each step doubles
		 * the work, and a check at 31 is days of CPU for one request.  14 is
		 * about a second on a current core: the most a login can spend.
		 */
		if ((hash[4] - '0') * 10 + (hash[5] - '0') > WEB_BCRYPT_MAX_COST) {
			werr(p, v, path,
			     "bcrypt cost %c%c is past %d (each step doubles a check's CPU time; "
			     "cost %d is about a second); hash it again with htpasswd -nBC 10",
			     hash[4], hash[5], WEB_BCRYPT_MAX_COST, WEB_BCRYPT_MAX_COST);
			free(hash);
			return -EINVAL;
		}
		nu = realloc(wc->users, (wc->n_users + 1) * sizeof(*nu));
		if (!nu) {
			free(hash);
			return -ENOMEM;
		}
		wc->users = nu;
		nu[wc->n_users].hash = hash;
		nu[wc->n_users].name = strdup(name);
		if (!nu[wc->n_users].name) {
			free(hash);
			return -ENOMEM;
		}
		wc->n_users++;
	}
	return 0;
}

static int root_key(struct wparse *p, int k, const yaml_node_t *v, const char *path)
{
	static const char *const http_keys[] = { "http2", "headers" };
	static const char *const rate_keys[] = { "interval", "burst" };

	switch (k) {
	case 0:
		return walk_map(p, v, path, tls_keys, ARRAY_SIZE(tls_keys), tls_key);
	case 1:
		return walk_map(p, v, path, http_keys, ARRAY_SIZE(http_keys), http_key);
	case 2:
		return load_users(p, v);
	case 3:
		return walk_map(p, v, path, rate_keys, ARRAY_SIZE(rate_keys), rate_key);
	}
	return -EINVAL;
}

/* The checks Go's ConfigToTLSConfig makes, and the ones GnuTLS needs answered up front. */
static int check_tls(struct wparse *p)
{
	struct web_config *wc = p->wc;
	const char *T = "tls_server_config";

	wc->tls = wc->cert || wc->key || wc->cert_file || wc->key_file || wc->client_ca ||
		  wc->client_ca_file || p->tls_at[TK_CLIENT_AUTH_TYPE];
	if (!wc->tls) {
		/* TLS settings without a certificate would be silently unused. */
		for (size_t i = 0; i < ARRAY_SIZE(tls_keys); i++) {
			if (p->tls_at[i] && !is_null(p->tls_at[i])) {
				werr(p, p->tls_at[i], T, "%s is set but TLS is not (no cert_file)",
				     tls_keys[i]);
				return -EINVAL;
			}
		}
		return 0;
	}
	if (wc->cert && wc->cert_file) {
		werr(p, p->tls_at[TK_CERT], T, "cert and cert_file are both set; give one");
		return -EINVAL;
	}
	if (wc->key && wc->key_file) {
		werr(p, p->tls_at[TK_KEY], T, "key and key_file are both set; give one");
		return -EINVAL;
	}
	if (wc->client_ca && wc->client_ca_file) {
		werr(p, p->tls_at[TK_CLIENT_CA], T,
		     "client_ca and client_ca_file are both set; give one");
		return -EINVAL;
	}
	if (!wc->cert && !wc->cert_file) {
		werr(p, NULL, T, "missing cert_file (or cert)");
		return -EINVAL;
	}
	if (!wc->key && !wc->key_file) {
		werr(p, NULL, T, "missing key_file (or key)");
		return -EINVAL;
	}
	if ((wc->client_ca || wc->client_ca_file) && wc->client_auth == WEB_CLIENT_NONE) {
		werr(p, p->tls_at[wc->client_ca ? TK_CLIENT_CA : TK_CLIENT_CA_FILE], T,
		     "a client CA is set without a client_auth_type that uses it "
		     "(RequireAndVerifyClientCert)");
		return -EINVAL;
	}
	if ((wc->client_auth == WEB_CLIENT_VERIFY_IF_GIVEN ||
	     wc->client_auth == WEB_CLIENT_REQUIRE_AND_VERIFY) &&
	    !wc->client_ca && !wc->client_ca_file) {
		werr(p, p->tls_at[TK_CLIENT_AUTH_TYPE], T,
		     "client_auth_type %s needs client_ca_file (the CA that signs client "
		     "certificates)",
		     client_auths[wc->client_auth]);
		return -EINVAL;
	}
	if (wc->n_sans && wc->client_auth == WEB_CLIENT_NONE) {
		werr(p, p->tls_at[TK_CLIENT_ALLOWED_SANS], T,
		     "client_allowed_sans is set but client certificates are not asked for");
		return -EINVAL;
	}
	if (wc->min_version > wc->max_version) {
		werr(p,
		     p->tls_at[TK_MIN_VERSION] ? p->tls_at[TK_MIN_VERSION]
					       : p->tls_at[TK_MAX_VERSION],
		     T, "min_version %s is above max_version %s", versions[wc->min_version],
		     versions[wc->max_version]);
		return -EINVAL;
	}
	return 0;
}

int web_config_parse(struct web_config *wc, const char *name, const char *dir, const char *text,
		     size_t len, char *err, size_t errlen)
{
	static const char *const root_keys[] = { "tls_server_config", "http_server_config",
						 "basic_auth_users", "rate_limit" };
	struct wparse p = { .wc = wc, .name = name, .dir = dir, .err = err, .errlen = errlen };
	struct yaml_scan_pos at;
	yaml_parser_t parser;
	yaml_node_t *root;
	int r = 0;

	memset(wc, 0, sizeof(*wc));
	wc->min_version = WEB_TLS12;
	wc->max_version = WEB_TLS13;
	wc->prefer_server_cipher_suites = true;
	wc->http2 = true;
	wc->file = strdup(name);
	if (!wc->file)
		return -ENOMEM;
	if (len > RW_MAX_WEBCONFIG_BYTES) {
		char sz[32];

		werr(&p, NULL, NULL, "larger than %s, the limit for a web config",
		     rw_size_text(RW_MAX_WEBCONFIG_BYTES, sz, sizeof(sz)));
		return -EFBIG;
	}
	/* libyaml's scanner is quadratic in flow nesting: count it first */
	if (yaml_flow_prescan(text, len, RW_MAX_YAML_FLOW_DEPTH, &at)) {
		snprintf(err, errlen,
			 "%s:%d:%d: not valid YAML: flow collections ([...], {...}) nested "
			 "deeper than %d",
			 name, at.line, at.col, RW_MAX_YAML_FLOW_DEPTH);
		return -EINVAL;
	}
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &p.doc)) {
		snprintf(err, errlen, "%s:%zu:%zu: not valid YAML: %s", name,
			 (size_t)parser.problem_mark.line + 1,
			 (size_t)parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "parse error");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&p.doc);
	/* An empty file is the empty config: no TLS, no authentication, as in Go. */
	if (root) {
		r = walk_map(&p, root, NULL, root_keys, ARRAY_SIZE(root_keys), root_key);
	}
	if (!r)
		r = check_tls(&p);
	if (!r && wc->rate_interval_ns && !wc->rate_burst) {
		werr(&p, NULL, "rate_limit",
		     "interval is set but burst is 0: every request would "
		     "be refused");
		r = -EINVAL;
	}
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	yaml_document_delete(&p.doc);
	yaml_parser_delete(&parser);
	return r;
}

int web_config_load(struct web_config *wc, const char *path, char *err, size_t errlen)
{
	char *text = NULL, *dir = NULL, *slash;
	size_t len = 0;
	int r;

	memset(wc, 0, sizeof(*wc));
	r = read_file_max(path, RW_MAX_WEBCONFIG_BYTES, &text, &len);
	if (r) {
		char why[160];

		snprintf(
		    err, errlen, "%s: %s", path,
		    read_error_text(r, RW_MAX_WEBCONFIG_BYTES, "a web config", why, sizeof(why)));
		return r;
	}
	dir = strdup(path);
	if (!dir) {
		free(text);
		return -ENOMEM;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	else
		dir[0] = '\0';
	r = web_config_parse(wc, path, dir, text, len, err, errlen);
	free(dir);
	free(text);
	return r;
}

void web_config_free(struct web_config *wc)
{
	if (!wc)
		return;
	free(wc->file);
	free(wc->cert_file);
	free(wc->key_file);
	free(wc->client_ca_file);
	free(wc->cert);
	free(wc->client_ca);
	for (size_t i = 0; i < wc->n_sans; i++)
		free(wc->client_allowed_sans[i]);
	free(wc->client_allowed_sans);
	for (size_t i = 0; i < wc->n_headers; i++)
		free(wc->headers[i].value);
	for (size_t i = 0; i < wc->n_users; i++) {
		free(wc->users[i].name);
		/* the hash is a secret of sorts: leave no copy in freed memory */
		explicit_bzero(wc->users[i].hash, strlen(wc->users[i].hash));
		free(wc->users[i].hash);
	}
	free(wc->users);
	if (wc->key)
		explicit_bzero(wc->key, strlen(wc->key));
	free(wc->key);
	memset(wc, 0, sizeof(*wc));
}

const char *web_config_user_hash(const struct web_config *wc, const char *user)
{
	for (size_t i = 0; wc && i < wc->n_users; i++)
		if (!strcmp(wc->users[i].name, user))
			return wc->users[i].hash;
	return NULL;
}

const char *web_config_cipher_name(int i)
{
	return i >= 0 && (size_t)i < ARRAY_SIZE(suites) ? suites[i].name : NULL;
}

/* Append ":+word" unless already there. */
static int add_word(char *buf, size_t len, const char *sign, const char *word)
{
	char needle[64];
	size_t n = strlen(buf);
	int w;

	snprintf(needle, sizeof(needle), ":%s%s:", sign, word);
	if (n && strstr(buf, needle))
		return 0;
	snprintf(needle, sizeof(needle), ":%s%s", sign, word);
	if (n >= strlen(needle) && !strcmp(buf + n - strlen(needle), needle))
		return 0;
	w = snprintf(buf + n, len - n, ":%s%s", sign, word);
	return w < 0 || (size_t)w >= len - n ? -ENOSPC : 0;
}

int web_config_priorities(const struct web_config *wc, char *buf, size_t len)
{
	bool tls13 = wc->max_version >= WEB_TLS13;
	int r;

	if (len < 8)
		return -ENOSPC;
	strlcpy0(buf, "NORMAL:-VERS-ALL", len);
	for (int v = wc->max_version; v >= (int)wc->min_version; v--)
		if ((r = add_word(buf, len, "+", gnutls_versions[v])))
			return r;
	if (wc->n_ciphers) {
		const char *part_sign = "-";

		if ((r = add_word(buf, len, part_sign, "KX-ALL")) ||
		    (r = add_word(buf, len, part_sign, "CIPHER-ALL")) ||
		    (r = add_word(buf, len, part_sign, "MAC-ALL")))
			return r;
		for (size_t i = 0; i < wc->n_ciphers; i++) {
			const struct suite *s = &suites[wc->ciphers[i]];

			if (!s->kx)
				continue; /* TLS 1.3: not configurable, added below */
			if ((r = add_word(buf, len, "+", s->kx)) ||
			    (r = add_word(buf, len, "+", s->cipher)) ||
			    (r = add_word(buf, len, "+", s->mac)))
				return r;
		}
		/* As in Go, the TLS 1.3 suites do not depend on cipher_suites. */
		for (size_t i = 0; tls13 && i < ARRAY_SIZE(suites) && !suites[i].kx; i++)
			if ((r = add_word(buf, len, "+", suites[i].cipher)) ||
			    (r = add_word(buf, len, "+", suites[i].mac)))
				return r;
	}
	if (wc->n_curves) {
		if ((r = add_word(buf, len, "-", "GROUP-ALL")))
			return r;
		for (size_t i = 0; i < wc->n_curves; i++)
			if ((r = add_word(buf, len, "+", curves[wc->curves[i]].group)))
				return r;
	}
	if (wc->prefer_server_cipher_suites && (r = add_word(buf, len, "%", "SERVER_PRECEDENCE")))
		return r;
	return 0;
}
