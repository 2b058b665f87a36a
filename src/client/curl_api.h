/* SPDX-License-Identifier: MIT */
/*
 * libcurl, opened the first time an outbound request is made (fleet, probe
 * --peers, check --serve, the Alertmanager push), not when rocewatch starts.
 *
 * Why: libcurl brings OpenSSL, Kerberos, LDAP, SASL, libssh2, librtmp and
 * nghttp2 with it, about 3 MiB of resident pages mapped and relocated at
 * start-up in every process, while a node's `serve` without an Alertmanager
 * never makes a request.  systemd opens its optional libraries the same way
 * (dlopen_many_sym_or_warn() in its src/shared/).
 *
 * The types come from <curl/curl.h> at build time; the library is looked up
 * by its soname, so the package must depend on it explicitly (debian/control:
 * libcurl4), which dpkg-shlibdeps cannot see.
 */
#ifndef ROCEWATCH_CURL_API_H
#define ROCEWATCH_CURL_API_H

#include <stddef.h>

#include <curl/curl.h>

#define CURL_API_SONAME "libcurl.so.4"

struct curl_api {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption opt, ...);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *m, CURLMoption opt, ...);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *c);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *c);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd fds[], unsigned nfds, int timeout_ms,
				int *ret);
	CURLMcode (*multi_cleanup)(CURLM *m);
};

/*
 * The functions, the library opened on the first call (thread-safe; never
 * closed).  NULL when it cannot be: err says which library and why, for
 * every caller.
 */
const struct curl_api *curl_api(char *err, size_t errlen);

#endif
