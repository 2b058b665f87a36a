// SPDX-License-Identifier: MIT
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "http.h"
#include "util.h"

struct blob {
	int refs; /* responses still sending it, plus 1 while current */
	struct strbuf text;
	struct strbuf gz;
	bool gz_ready;
	struct blob *next; /* spare list */
};

struct doc {
	struct blob *cur;
	struct blob *spare;
};

struct http_server {
	struct MHD_Daemon *mhd;
	int fd;
	int port;
	const struct http_route *routes;
	size_t n_routes;
	pthread_mutex_t lock; /* docs, refs and gzip */
	struct doc docs[HTTP_MAX_DOCS];
};

int http_parse_listen(const char *s, char *host, size_t hostlen, int *port)
{
	const char *colon;
	char *end;
	long p;

	if (!s || !*s)
		return -EINVAL;
	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':' || (size_t)(rb - s - 1) >= hostlen)
			return -EINVAL;
		memcpy(host, s + 1, (size_t)(rb - s - 1));
		host[rb - s - 1] = '\0';
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || (size_t)(colon - s) >= hostlen)
			return -EINVAL;
		memcpy(host, s, (size_t)(colon - s));
		host[colon - s] = '\0';
		if (strchr(host, ':'))
			return -EINVAL; /* bare IPv6 needs brackets */
	}
	errno = 0;
	p = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || p < 0 || p > 65535)
		return -EINVAL;
	*port = (int)p;
	return 0;
}

static int open_listener(const char *addr, int *port_out, char *err, size_t errlen)
{
	char host[256];
	int port, fd = -1, one = 1, r;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char portstr[8];
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (http_parse_listen(addr, host, sizeof(host), &port)) {
		snprintf(err, errlen, "--web.listen-address: '%s' is not [HOST]:PORT", addr);
		return -EINVAL;
	}
	snprintf(portstr, sizeof(portstr), "%d", port);
	if (!host[0]) {
		/* All addresses: one dual-stack IPv6 socket where the host has IPv6. */
		hints.ai_family = AF_INET6;
		r = getaddrinfo(NULL, portstr, &hints, &res);
		if (!r) {
			fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd >= 0) {
				int zero = 0;

				setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
			}
		}
		if (fd < 0) {
			if (res)
				freeaddrinfo(res);
			res = NULL;
			hints.ai_family = AF_INET;
			r = getaddrinfo(NULL, portstr, &hints, &res);
		}
	} else {
		hints.ai_family = AF_UNSPEC;
		r = getaddrinfo(host, portstr, &hints, &res);
	}
	if (r) {
		snprintf(err, errlen, "--web.listen-address: cannot resolve '%s': %s", host,
			 gai_strerror(r));
		return -EINVAL;
	}
	if (fd < 0)
		fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "listen %s: socket: %s", addr, strerror(errno));
		goto free_res;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64)) {
		r = -errno;
		snprintf(err, errlen, "listen %s: %s", addr, strerror(errno));
		close(fd);
		fd = -1;
		goto free_res;
	}
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		*port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							   : ((struct sockaddr_in *)&ss)->sin_port);
	r = fd;
free_res:
	freeaddrinfo(res);
	return r;
}

static void blob_release(void *cls)
{
	struct blob *b = cls;

	__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
}

static int gzip_into(struct strbuf *out, const char *in, size_t len)
{
	z_stream zs = { 0 };
	int r;

	/* windowBits 15 + 16: a gzip wrapper, which is what Accept-Encoding: gzip wants. */
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	sb_reset(out);
	if (sb_reserve(out, deflateBound(&zs, len))) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out->buf;
	zs.avail_out = (uInt)(out->cap - 1);
	r = deflate(&zs, Z_FINISH);
	out->len = zs.total_out;
	deflateEnd(&zs);
	return r == Z_STREAM_END ? 0 : -EIO;
}

static bool accepts_gzip(struct MHD_Connection *c)
{
	const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding");

	/* Good enough for Prometheus and curl: they send "gzip" verbatim. */
	return ae && strstr(ae, "gzip");
}

static enum MHD_Result queue(struct MHD_Connection *c, int status, const char *type,
			     struct MHD_Response *resp)
{
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	if (type)
		MHD_add_response_header(resp, "Content-Type", type);
	r = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result plain(struct MHD_Connection *c, int status, const char *msg)
{
	struct MHD_Response *resp =
	    MHD_create_response_from_buffer(strlen(msg), (void *)msg, MHD_RESPMEM_MUST_COPY);

	return queue(c, status, "text/plain; charset=utf-8", resp);
}

static enum MHD_Result serve_doc(struct http_server *s, struct MHD_Connection *c,
				 const struct http_route *rt)
{
	struct doc *d = &s->docs[rt->doc];
	struct MHD_Response *resp;
	struct blob *b;
	bool gz = accepts_gzip(c);
	const struct strbuf *body;

	pthread_mutex_lock(&s->lock);
	b = d->cur;
	if (!b) {
		pthread_mutex_unlock(&s->lock);
		return plain(c, 503, "no data yet: the first poll has not finished\n");
	}
	if (gz && !b->gz_ready) {
		if (!gzip_into(&b->gz, b->text.buf, b->text.len))
			b->gz_ready = true;
		else
			gz = false;
	}
	b->refs++;
	pthread_mutex_unlock(&s->lock);

	body = gz ? &b->gz : &b->text;
	resp = MHD_create_response_from_buffer_with_free_callback_cls(body->len, body->buf,
								      blob_release, b);
	if (!resp) {
		__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
		return MHD_NO;
	}
	if (gz)
		MHD_add_response_header(resp, "Content-Encoding", "gzip");
	MHD_add_response_header(resp, "Vary", "Accept-Encoding");
	return queue(c, 200, rt->content_type, resp);
}

static enum MHD_Result serve_render(struct MHD_Connection *c, const struct http_route *rt)
{
	struct strbuf sb = { 0 };
	struct MHD_Response *resp;
	int status = rt->render(rt->arg, &sb);

	if (sb.oom) {
		sb_free(&sb);
		return plain(c, 500, "out of memory\n");
	}
	resp = MHD_create_response_from_buffer_with_free_callback(sb.len, sb.buf ? sb.buf : "",
								  sb.buf ? free : NULL);
	if (!resp) {
		sb_free(&sb);
		return MHD_NO;
	}
	return queue(c, status, rt->content_type, resp);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	const struct http_route *match = NULL;
	bool is_get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool is_post = !strcmp(method, MHD_HTTP_METHOD_POST);
	bool path_known = false;
	static int first_call_marker;

	(void)version;
	(void)upload;
	/* First call: headers only.  Bodies are ignored (no route takes one) but drained. */
	if (!*con_cls) {
		*con_cls = &first_call_marker;
		return MHD_YES;
	}
	if (*upload_size) {
		if (*upload_size > 4096)
			return plain(c, 413, "request body too large\n");
		*upload_size = 0;
		return MHD_YES;
	}
	for (size_t i = 0; i < s->n_routes; i++) {
		if (strcmp(s->routes[i].path, url))
			continue;
		path_known = true;
		if ((s->routes[i].method == HTTP_GET && is_get) ||
		    (s->routes[i].method == HTTP_POST && is_post))
			match = &s->routes[i];
	}
	if (!path_known)
		return plain(c, 404, "not found\n");
	if (!match) {
		struct MHD_Response *resp;
		const char *msg = "method not allowed\n";
		char allow[32] = "";

		for (size_t i = 0; i < s->n_routes; i++)
			if (!strcmp(s->routes[i].path, url))
				strlcpy0(allow,
					 s->routes[i].method == HTTP_GET ? "GET, HEAD" : "POST",
					 sizeof(allow));
		resp = MHD_create_response_from_buffer(strlen(msg), (void *)msg,
						       MHD_RESPMEM_PERSISTENT);
		if (resp)
			MHD_add_response_header(resp, "Allow", allow);
		return queue(c, 405, "text/plain; charset=utf-8", resp);
	}
	if (match->doc >= 0)
		return serve_doc(s, c, match);
	return serve_render(c, match);
}

int http_start(struct http_server **out, const char *listen_addr, const struct http_route *routes,
	       size_t n_routes, char *err, size_t errlen)
{
	struct http_server *s = calloc(1, sizeof(*s));
	int fd;

	if (!s)
		return -ENOMEM;
	fd = open_listener(listen_addr, &s->port, err, errlen);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->fd = fd;
	s->routes = routes;
	s->n_routes = n_routes;
	pthread_mutex_init(&s->lock, NULL);
	s->mhd =
	    MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO, 0,
			     NULL, NULL, handler, s, MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_THREAD_POOL_SIZE, 2, MHD_OPTION_CONNECTION_LIMIT, 128,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, 64, MHD_OPTION_CONNECTION_TIMEOUT,
			     10, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_END);
	if (!s->mhd) {
		snprintf(err, errlen, "listen %s: cannot start the HTTP server", listen_addr);
		close(fd);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return -EIO;
	}
	*out = s;
	return 0;
}

void http_publish(struct http_server *s, int doc, struct strbuf *sb)
{
	struct doc *d = &s->docs[doc];
	struct blob *b = NULL, **pp;

	pthread_mutex_lock(&s->lock);
	/* Reuse a spare that no response holds any more. */
	for (pp = &d->spare; *pp; pp = &(*pp)->next) {
		if (!__atomic_load_n(&(*pp)->refs, __ATOMIC_ACQUIRE)) {
			b = *pp;
			*pp = b->next;
			break;
		}
	}
	if (!b)
		b = calloc(1, sizeof(*b));
	if (!b) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	sb_swap(&b->text, sb);
	sb_reset(sb);
	b->gz_ready = false;
	b->refs = 1;
	b->next = NULL;
	if (d->cur) {
		__atomic_sub_fetch(&d->cur->refs, 1, __ATOMIC_ACQ_REL);
		d->cur->next = d->spare;
		d->spare = d->cur;
	}
	d->cur = b;
	pthread_mutex_unlock(&s->lock);
}

int http_port(const struct http_server *s)
{
	return s->port;
}

static void free_blobs(struct blob *b)
{
	while (b) {
		struct blob *n = b->next;

		sb_free(&b->text);
		sb_free(&b->gz);
		free(b);
		b = n;
	}
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->mhd);
	close(s->fd);
	for (int i = 0; i < HTTP_MAX_DOCS; i++) {
		free_blobs(s->docs[i].cur);
		free_blobs(s->docs[i].spare);
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}
