/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server (libmicrohttpd).  Routes are a table: each serves either a
 * published document (rendered once per poll, swapped in atomically and
 * reference-counted so a slow client never blocks the poll loop), a cached
 * document rendered on the first request after each poll, or a render
 * callback.
 *
 * Bounds: every connection has its own thread (up to max_connections, a
 * quarter of them per client address), so /metrics never waits behind a
 * heavy request; a request must arrive whole within read_timeout of the
 * connection opening or of the previous response (a trickling client is
 * cut off, not only an idle one); bodies over 4 KiB get 413 (over a body
 * route's own bound, for the routes that take one); a request line
 * that is not one gets 400, and so does plain HTTP sent to a TLS listener.
 * With a web config: TLS, client certificates, basic auth, extra headers
 * and a rate limit (webconfig.h).
 */
#ifndef ROCEWATCH_HTTP_H
#define ROCEWATCH_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "strbuf.h"
#include "webconfig.h"

enum http_method {
	HTTP_GET,
	HTTP_POST
};

struct http_args;

struct http_route {
	const char *path;
	enum http_method method;
	const char *content_type;
	/*
	 * >= 0: a document slot.  Without render it is published by
	 * http_publish(); with render it is rendered on demand and reused
	 * until http_invalidate() (a 200 only; other statuses are not kept).
	 * -1: render on every request.
	 */
	int doc;
	/* Fill out; return the HTTP status. */
	int (*render)(void *arg, struct strbuf *out);
	void *arg;
	/*
	 * Instead of render, for a request with query arguments (doc must be -1):
	 * http_arg() reads them, NULL when absent.
	 */
	int (*render_args)(void *arg, const struct http_args *a, struct strbuf *out);
	/*
	 * A POST that takes a body of up to max_body bytes (doc -1, render
	 * NULL): body is NUL-terminated.  The rate limit and the credentials
	 * are checked when the headers are in, so a body no one may send is
	 * not read; one over max_body is 413.
	 */
	size_t max_body;
	int (*render_body)(void *arg, const struct http_args *a, const char *body, size_t len,
			   struct strbuf *out);
};

/* The query arguments of one request (?rule=x&object=y), as the server parsed them. */
struct http_args;
const char *http_arg(const struct http_args *a, const char *name);
/* The client's address as text ("127.0.0.1"), for a log line. */
const char *http_arg_peer(const struct http_args *a);

#define HTTP_MAX_DOCS 6

#define HTTP_DEFAULT_READ_TIMEOUT_NS (10LL * 1000000000LL)
#define HTTP_DEFAULT_MAX_CONNECTIONS 512
#define HTTP_MAX_BODY		     4096

struct http_opts {
	const char *listen_addr;
	const struct web_config *web; /* NULL: plain HTTP, no authentication */
	int64_t read_timeout_ns;      /* 0: HTTP_DEFAULT_READ_TIMEOUT_NS */
	unsigned int max_connections; /* 0: HTTP_DEFAULT_MAX_CONNECTIONS */
};

struct http_stats {
	uint64_t requests;
	uint64_t timeouts;     /* connections cut off by read_timeout */
	uint64_t refused;      /* over a connection limit */
	uint64_t bad_requests; /* 400 before MHD saw them */
	uint64_t unauthorized; /* 401 */
	uint64_t rate_limited; /* 429 */
	uint64_t evicted;      /* idle keep-alive connections closed for a new one */
	unsigned long tls_reloads;
};

struct http_server;

/*
 * Bind the listener and load the TLS files, as the privileged setup may;
 * nothing is served (and no thread exists) until http_run().  o and routes
 * must outlive the server.
 */
int http_start(struct http_server **out, const struct http_opts *o, const struct http_route *routes,
	       size_t n_routes, char *err, size_t errlen);
int http_run(struct http_server *s, char *err, size_t errlen);
/*
 * Publish a new version of a document.  The content of *sb is taken and sb
 * is handed back a spare buffer to render into next time (no allocation in
 * steady state).
 */
void http_publish(struct http_server *s, int doc, struct strbuf *sb);
/* The next request of an on-demand document renders it again. */
void http_invalidate(struct http_server *s, int doc);
/* The port actually bound (useful with port 0). */
int http_port(const struct http_server *s);
bool http_tls(const struct http_server *s);
void http_get_stats(struct http_server *s, struct http_stats *st);
void http_stop(struct http_server *s);
/* The connections the server tracks, with their peers and deadlines (tests, the fuzz harness). */
void http_debug_dump(struct http_server *s, FILE *f);

/* Parse "[HOST]:PORT" / "HOST:PORT" / ":PORT". */
int http_parse_listen(const char *s, char *host, size_t hostlen, int *port);

/*
 * Is the first line of what a client sent a request line MHD can take?
 * 1 yes, 0 no (answer 400), -1 not a whole line yet.  Leading empty lines
 * are skipped, as MHD does.  (Exposed for the fuzz harness and tests.)
 */
int http_request_line_ok(const char *buf, size_t len);

#endif
