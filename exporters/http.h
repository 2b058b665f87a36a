/* SPDX-License-Identifier: MIT */
/*
 * The HTTP server (libmicrohttpd).  Routes are a table: each serves either a
 * published document (rendered once per poll, swapped in atomically and
 * reference-counted so a slow client never blocks the poll loop) or a
 * render callback.
 */
#ifndef ROCEWATCH_HTTP_H
#define ROCEWATCH_HTTP_H

#include <stddef.h>

#include "strbuf.h"

enum http_method {
	HTTP_GET,
	HTTP_POST
};

struct http_route {
	const char *path;
	enum http_method method;
	const char *content_type;
	int doc; /* >= 0: a published document; -1: use render */
	/* Fill out; return the HTTP status. */
	int (*render)(void *arg, struct strbuf *out);
	void *arg;
};

#define HTTP_MAX_DOCS 4

struct http_server;

int http_start(struct http_server **out, const char *listen_addr, const struct http_route *routes,
	       size_t n_routes, char *err, size_t errlen);
/*
 * Publish a new version of a document.  The content of *sb is taken and sb
 * is handed back a spare buffer to render into next time (no allocation in
 * steady state).
 */
void http_publish(struct http_server *s, int doc, struct strbuf *sb);
/* The port actually bound (useful with port 0). */
int http_port(const struct http_server *s);
void http_stop(struct http_server *s);

/* Parse "[HOST]:PORT" / "HOST:PORT" / ":PORT". */
int http_parse_listen(const char *s, char *host, size_t hostlen, int *port);

#endif
