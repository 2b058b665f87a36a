// SPDX-License-Identifier: MIT
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <gnutls/x509.h>

#include "util.h"
#include "webtls.h"

#define TLS_MAX_CHAIN 16

enum {
	TF_CERT,
	TF_KEY,
	TF_CA,
	TF__COUNT
};

static const char *const tf_keys[TF__COUNT] = { "cert_file", "key_file", "client_ca_file" };

struct stamp {
	bool present;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct web_tls_gen {
	int refs; /* connections holding it, plus 1 while it is the current one */
	gnutls_pcert_st pcert[TLS_MAX_CHAIN];
	unsigned int n_pcert;
	gnutls_privkey_t key;
	gnutls_x509_trust_list_t trust; /* client CAs; NULL when none */
};

struct web_tls {
	const struct web_config *wc;
	char prio[1024];
	pthread_mutex_t lock; /* cur */
	struct web_tls_gen *cur;
	struct stamp st[TF__COUNT];
	unsigned long generation;
};

static const char *tf_path(const struct web_config *wc, int f)
{
	return f == TF_CERT ? wc->cert_file : f == TF_KEY ? wc->key_file : wc->client_ca_file;
}

static const char *tf_inline(const struct web_config *wc, int f)
{
	return f == TF_CERT ? wc->cert : f == TF_KEY ? wc->key : wc->client_ca;
}

static void stamp_of(const char *path, struct stamp *s)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (!path || stat(path, &st))
		return;
	*s = (struct stamp){ .present = true,
			     .dev = st.st_dev,
			     .ino = st.st_ino,
			     .size = st.st_size,
			     .mtime = st.st_mtim,
			     .ctime = st.st_ctim };
}

static bool stamp_eq(const struct stamp *a, const struct stamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static void gen_free(struct web_tls_gen *g)
{
	if (!g)
		return;
	for (unsigned int i = 0; i < g->n_pcert; i++)
		gnutls_pcert_deinit(&g->pcert[i]);
	if (g->key)
		gnutls_privkey_deinit(g->key);
	if (g->trust)
		gnutls_x509_trust_list_deinit(g->trust, 1);
	free(g);
}

void web_tls_put(struct web_tls_gen *g)
{
	if (g && !__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL))
		gen_free(g);
}

/* File or inline PEM into d (malloc'ed, NUL-terminated). */
static int read_pem(const struct web_config *wc, int f, gnutls_datum_t *d, char *err, size_t errlen)
{
	const char *path = tf_path(wc, f), *text = tf_inline(wc, f);
	char *buf = NULL;
	size_t len = 0;
	int r;

	d->data = NULL;
	d->size = 0;
	if (path) {
		r = read_file_all(path, &buf, &len);
		if (r) {
			snprintf(err, errlen, "%s: tls_server_config.%s: %s: %s", wc->file,
				 tf_keys[f], path, strerror(-r));
			return r;
		}
	} else if (text) {
		buf = strdup(text);
		if (!buf)
			return -ENOMEM;
		len = strlen(buf);
	} else {
		return 0;
	}
	if (len > 1 << 20 || len == 0) {
		snprintf(err, errlen, "%s: tls_server_config.%s%s%s: %s", wc->file,
			 path ? tf_keys[f]
			      : (f == TF_CERT  ? "cert"
				 : f == TF_KEY ? "key"
					       : "client_ca"),
			 path ? ": " : "", path ? path : "", len ? "larger than 1 MiB" : "empty");
		free(buf);
		return -EINVAL;
	}
	d->data = (unsigned char *)buf;
	d->size = (unsigned int)len;
	return 0;
}

static const char *what_of(const struct web_config *wc, int f, char *buf, size_t len)
{
	if (tf_path(wc, f))
		snprintf(buf, len, "tls_server_config.%s: %s", tf_keys[f], tf_path(wc, f));
	else
		snprintf(buf, len, "tls_server_config.%s",
			 f == TF_CERT  ? "cert"
			 : f == TF_KEY ? "key"
				       : "client_ca");
	return buf;
}

static void datum_free(gnutls_datum_t *d)
{
	if (d->data) {
		explicit_bzero(d->data, d->size);
		free(d->data);
	}
	d->data = NULL;
}

static int gen_load(const struct web_config *wc, struct web_tls_gen **out, char *err, size_t errlen)
{
	gnutls_datum_t pem[TF__COUNT] = { { 0 } };
	gnutls_certificate_credentials_t check = NULL;
	struct web_tls_gen *g = calloc(1, sizeof(*g));
	char what[512], what2[512];
	int r, gr;

	if (!g)
		return -ENOMEM;
	for (int f = 0; f < TF__COUNT; f++) {
		r = read_pem(wc, f, &pem[f], err, errlen);
		if (r)
			goto out;
	}
	/* The pairing check GnuTLS makes when it loads a key for a certificate. */
	r = -EINVAL;
	if (gnutls_certificate_allocate_credentials(&check)) {
		r = -ENOMEM;
		goto out;
	}
	gr = gnutls_certificate_set_x509_key_mem2(check, &pem[TF_CERT], &pem[TF_KEY],
						  GNUTLS_X509_FMT_PEM, NULL, 0);
	if (gr < 0) {
		if (gr == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
			snprintf(err, errlen, "%s: %s does not belong to the certificate in %s",
				 wc->file, what_of(wc, TF_KEY, what, sizeof(what)),
				 what_of(wc, TF_CERT, what2, sizeof(what2)));
		else
			snprintf(err, errlen, "%s: %s / %s: %s", wc->file,
				 what_of(wc, TF_CERT, what, sizeof(what)),
				 what_of(wc, TF_KEY, what2, sizeof(what2)), gnutls_strerror(gr));
		goto out;
	}
	g->n_pcert = TLS_MAX_CHAIN;
	gr = gnutls_pcert_list_import_x509_raw(g->pcert, &g->n_pcert, &pem[TF_CERT],
					       GNUTLS_X509_FMT_PEM, 0);
	if (gr < 0 || !g->n_pcert) {
		g->n_pcert = 0;
		snprintf(err, errlen, "%s: %s: %s", wc->file,
			 what_of(wc, TF_CERT, what, sizeof(what)),
			 gr < 0 ? gnutls_strerror(gr) : "no certificate");
		goto out;
	}
	if (gnutls_privkey_init(&g->key) < 0) {
		r = -ENOMEM;
		goto out;
	}
	gr = gnutls_privkey_import_x509_raw(g->key, &pem[TF_KEY], GNUTLS_X509_FMT_PEM, NULL, 0);
	if (gr < 0) {
		snprintf(err, errlen, "%s: %s: %s", wc->file,
			 what_of(wc, TF_KEY, what, sizeof(what)), gnutls_strerror(gr));
		goto out;
	}
	if (pem[TF_CA].data) {
		if (gnutls_x509_trust_list_init(&g->trust, 0) < 0) {
			r = -ENOMEM;
			goto out;
		}
		gr = gnutls_x509_trust_list_add_trust_mem(g->trust, &pem[TF_CA], NULL,
							  GNUTLS_X509_FMT_PEM, 0, 0);
		if (gr <= 0) {
			snprintf(err, errlen, "%s: %s: %s", wc->file,
				 what_of(wc, TF_CA, what, sizeof(what)),
				 gr < 0 ? gnutls_strerror(gr) : "no CA certificate in it");
			goto out;
		}
	}
	g->refs = 1;
	*out = g;
	g = NULL;
	r = 0;
out:
	if (check)
		gnutls_certificate_free_credentials(check);
	for (int f = 0; f < TF__COUNT; f++)
		datum_free(&pem[f]);
	gen_free(g);
	return r;
}

int web_tls_new(struct web_tls **out, const struct web_config *wc, char *err, size_t errlen)
{
	struct web_tls *t = calloc(1, sizeof(*t));
	gnutls_priority_t prio;
	const char *pos = NULL;
	int r;

	if (!t)
		return -ENOMEM;
	t->wc = wc;
	if (web_config_priorities(wc, t->prio, sizeof(t->prio))) {
		snprintf(err, errlen, "%s: tls_server_config: too many cipher suites or curves",
			 wc->file);
		free(t);
		return -EINVAL;
	}
	r = gnutls_priority_init(&prio, t->prio, &pos);
	if (r < 0) {
		snprintf(err, errlen,
			 "%s: tls_server_config: GnuTLS cannot use these versions, cipher suites "
			 "and curves (priority string '%s', at '%s'): %s",
			 wc->file, t->prio, pos ? pos : "?", gnutls_strerror(r));
		free(t);
		return -EINVAL;
	}
	gnutls_priority_deinit(prio);
	for (int f = 0; f < TF__COUNT; f++)
		stamp_of(tf_path(wc, f), &t->st[f]);
	r = gen_load(wc, &t->cur, err, errlen);
	if (r) {
		free(t);
		return r;
	}
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

void web_tls_free(struct web_tls *t)
{
	if (!t)
		return;
	web_tls_put(t->cur);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

const char *web_tls_priorities(const struct web_tls *t)
{
	return t->prio;
}

unsigned long web_tls_generation(const struct web_tls *t)
{
	return __atomic_load_n(&t->generation, __ATOMIC_RELAXED);
}

int web_tls_refresh(struct web_tls *t, char *err, size_t errlen)
{
	struct stamp now[TF__COUNT];
	struct web_tls_gen *g, *old;
	bool changed = false;
	int r;

	for (int f = 0; f < TF__COUNT; f++) {
		stamp_of(tf_path(t->wc, f), &now[f]);
		changed |= !stamp_eq(&now[f], &t->st[f]);
	}
	if (!changed)
		return 0;
	r = gen_load(t->wc, &g, err, errlen);
	if (r)
		return r; /* stamps kept: the next refresh tries again */
	memcpy(t->st, now, sizeof(now));
	pthread_mutex_lock(&t->lock);
	old = t->cur;
	t->cur = g;
	pthread_mutex_unlock(&t->lock);
	__atomic_add_fetch(&t->generation, 1, __ATOMIC_RELAXED);
	web_tls_put(old);
	return 1;
}

int web_tls_select(struct web_tls *t, gnutls_session_t session, struct web_tls_gen **held,
		   gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey,
		   gnutls_certificate_verify_function *verify)
{
	static const gnutls_certificate_request_t req[] = {
		[WEB_CLIENT_NONE] = GNUTLS_CERT_IGNORE,
		[WEB_CLIENT_REQUEST] = GNUTLS_CERT_REQUEST,
		[WEB_CLIENT_REQUIRE_ANY] = GNUTLS_CERT_REQUIRE,
		[WEB_CLIENT_VERIFY_IF_GIVEN] = GNUTLS_CERT_REQUEST,
		[WEB_CLIENT_REQUIRE_AND_VERIFY] = GNUTLS_CERT_REQUIRE,
	};
	struct web_tls_gen *g;

	pthread_mutex_lock(&t->lock);
	g = t->cur;
	__atomic_add_fetch(&g->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&t->lock);
	if (*held)
		web_tls_put(*held);
	*held = g;
	/*
	 * The certificate request goes out after the server picks its
	 * certificate, so setting the policy here still counts for this
	 * handshake (and needs no trust list in MHD's own credentials).
	 */
	gnutls_certificate_server_set_request(session, req[t->wc->client_auth]);
	if (t->wc->client_auth != WEB_CLIENT_NONE)
		gnutls_session_set_verify_function(session, verify);
	*pcert = g->pcert;
	*pcert_length = g->n_pcert;
	*pkey = g->key;
	return 0;
}

/* Does any SAN of the leaf equal one of client_allowed_sans (exactly, as Go compares)? */
static bool san_allowed(const struct web_config *wc, gnutls_x509_crt_t leaf)
{
	for (unsigned int i = 0;; i++) {
		char san[1024];
		size_t len = sizeof(san) - 1;
		int type = gnutls_x509_crt_get_subject_alt_name(leaf, i, san, &len, NULL);

		if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			return false;
		if (type < 0)
			continue; /* too long or unreadable: cannot be one we allow */
		if (type == GNUTLS_SAN_IPADDRESS) {
			char txt[64];
			const char *s = NULL;

			if (len == 4)
				s = inet_ntop(AF_INET, san, txt, sizeof(txt));
			else if (len == 16)
				s = inet_ntop(AF_INET6, san, txt, sizeof(txt));
			if (!s)
				continue;
			strlcpy0(san, s, sizeof(san));
		} else if (type == GNUTLS_SAN_DNSNAME || type == GNUTLS_SAN_RFC822NAME ||
			   type == GNUTLS_SAN_URI) {
			san[len] = '\0';
		} else {
			continue;
		}
		for (size_t k = 0; k < wc->n_sans; k++)
			if (!strcmp(san, wc->client_allowed_sans[k]))
				return true;
	}
}

int web_tls_verify(struct web_tls *t, struct web_tls_gen *g, gnutls_session_t session)
{
	const struct web_config *wc = t->wc;
	gnutls_x509_crt_t chain[TLS_MAX_CHAIN];
	const gnutls_datum_t *raw;
	unsigned int n_raw = 0, n = 0, status = 0;
	bool verify = wc->client_auth == WEB_CLIENT_VERIFY_IF_GIVEN ||
		      wc->client_auth == WEB_CLIENT_REQUIRE_AND_VERIFY;
	int r = -1;

	raw = gnutls_certificate_get_peers(session, &n_raw);
	if (!raw || !n_raw)
		/* GnuTLS itself refuses an empty certificate when the policy requires one */
		return wc->client_auth == WEB_CLIENT_REQUIRE_ANY ||
			       wc->client_auth == WEB_CLIENT_REQUIRE_AND_VERIFY
			   ? -1
			   : 0;
	if (n_raw > TLS_MAX_CHAIN)
		n_raw = TLS_MAX_CHAIN;
	for (; n < n_raw; n++) {
		if (gnutls_x509_crt_init(&chain[n]) < 0)
			goto out;
		if (gnutls_x509_crt_import(chain[n], &raw[n], GNUTLS_X509_FMT_DER) < 0) {
			n++;
			goto out;
		}
	}
	if (verify) {
		gnutls_typed_vdata_st purpose = { .type = GNUTLS_DT_KEY_PURPOSE_OID,
						  .data = (void *)GNUTLS_KP_TLS_WWW_CLIENT };

		if (!g || !g->trust)
			goto out;
		if (gnutls_x509_trust_list_verify_crt2(g->trust, chain, n, &purpose, 1, 0, &status,
						       NULL) < 0 ||
		    status) {
			if (log_get_level() >= LOG_LVL_DEBUG) {
				gnutls_datum_t why = { 0 };

				if (!gnutls_certificate_verification_status_print(
					status, GNUTLS_CRT_X509, &why, 0)) {
					log_debug("TLS: client certificate refused: %s", why.data);
					gnutls_free(why.data);
				}
			}
			goto out;
		}
	}
	if (wc->n_sans && !san_allowed(wc, chain[0])) {
		log_debug("TLS: client certificate has none of client_allowed_sans");
		goto out;
	}
	r = 0;
out:
	for (unsigned int i = 0; i < n; i++)
		gnutls_x509_crt_deinit(chain[i]);
	return r;
}
