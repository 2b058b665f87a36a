// SPDX-License-Identifier: MIT
/*
 * Connections reach libmicrohttpd through our own guard thread, not MHD's
 * accept loop.  The guard accepts, waits (bounded) until the client's first
 * bytes are there and looks at them: a line that is no request line gets a
 * 400 and plain HTTP on a TLS listener gets the 400 Go's servers give,
 * where MHD 0.9.75 would just close; anything else goes to MHD with
 * MHD_add_connection().  The same thread cuts off connections whose request
 * has not arrived whole within read_timeout (MHD's own timeout only sees
 * idleness, so a client sending a byte every few seconds held a connection
 * for ever) and polls the certificate files for rotation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "http.h"
#include "util.h"
#include "webauth.h"
#include "webtls.h"

/* A response may take this long to send (a slow reader); MHD's idle timeout also applies. */
#define HTTP_WRITE_TIMEOUT_NS (60LL * 1000000000LL)
/* What the guard peeks at: a request line longer than this goes to MHD (which says 414). */
#define HTTP_PEEK_BYTES 8192
/* Per-connection thread stack: handlers render into heap buffers. */
#define HTTP_THREAD_STACK (1024 * 1024)

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
	int stale;		     /* on-demand documents: render again before serving */
	pthread_mutex_t render_lock; /* one render at a time; the others wait and reuse it */
	/*
	 * On-demand documents render here (under render_lock), and publishing
	 * hands back the buffer of the spare blob it fills: a render reuses a
	 * buffer already grown to the page, rather than growing a new one and
	 * freeing the old, which glibc keeps resident in the heap's middle.
	 */
	struct strbuf scratch;
};

/* One per TCP connection (MHD's socket context). */
struct conn {
	struct http_server *srv;
	struct conn *prev, *next;
	int fd;
	int64_t deadline; /* monotonic ns; 0: none.  Read by the guard, atomically */
	struct web_tls_gen *gen;
	size_t body; /* body bytes of the current request */
	/* a route that takes a body (render_body): it, and the body as it comes */
	const struct http_route *brt;
	char *upload;
	size_t upload_len;
	bool upload_big, checked;
	struct sockaddr_storage addr; /* the client's */
	/* between requests of a keep-alive connection since idle_ns (under conn_lock) */
	bool idle;
	int64_t idle_ns;
};

/* MHD may hold this many past max_conn: room for a new address while an idle one closes. */
#define HTTP_EVICT_SLACK 16

/* Accepted, not yet handed to MHD. */
struct pending {
	int fd;
	int64_t deadline;
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

struct http_server {
	struct MHD_Daemon *mhd;
	const char *listen_addr;
	int lfd, efd, epfd;
	pthread_t guard;
	bool guard_up;
	int port;
	const struct http_route *routes;
	size_t n_routes;
	const struct web_config *web;
	struct web_tls *tls;
	struct web_auth *auth;
	int64_t read_timeout_ns;
	unsigned int max_conn, per_ip;
	unsigned int n_conns; /* MHD's, under conn_lock */

	pthread_mutex_t lock; /* docs, refs and gzip */
	struct doc docs[HTTP_MAX_DOCS];

	pthread_mutex_t conn_lock; /* conns, st */
	struct conn *conns;
	struct http_stats st;

	/* guard thread only */
	struct pending *pend;
	size_t n_pend;
	/*
	 * Handed over, not yet STARTED: MHD starts externally added connections
	 * in its own thread, so the deadline set at accept waits here, by fd
	 * (under conn_lock; an entry MHD never started is overwritten when its
	 * fd number comes back).
	 */
	struct handover {
		int fd;
		int64_t deadline;
	} * handed;
	size_t n_handed;

	pthread_mutex_t rate_lock;
	double tokens;
	int64_t rate_last;
};

static void count(struct http_server *s, uint64_t *field)
{
	pthread_mutex_lock(&s->conn_lock);
	(*field)++;
	pthread_mutex_unlock(&s->conn_lock);
}

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
			fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (fd < 0)
		fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "listen %s: socket: %s", addr, strerror(errno));
		goto free_res;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 256)) {
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

/* ---- request line check (the guard's, before MHD) ---- */

static bool is_tchar(unsigned char c)
{
	/* RFC 9110 token characters: what a method may be made of */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

int http_request_line_ok(const char *buf, size_t len)
{
	size_t i = 0, m;
	const char *nl;

	while (i < len && (buf[i] == '\r' || buf[i] == '\n'))
		i++;
	nl = memchr(buf + i, '\n', len - i);
	if (!nl)
		return -1;
	/* METHOD SP target ...: MHD answers everything after that itself (400, 505) */
	for (m = i; buf + m < nl && is_tchar((unsigned char)buf[m]); m++)
		;
	if (m == i || buf + m >= nl || buf[m] != ' ')
		return 0;
	for (const char *p = buf + i; p < nl; p++)
		if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\r')
			return 0; /* control characters: not a request line */
	return 1;
}

/* ---- documents ---- */

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

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static enum MHD_Result queue(struct MHD_Connection *c, int status, const char *type,
			     struct MHD_Response *resp)
{
	struct conn *cn = conn_of(c);
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	if (type)
		MHD_add_response_header(resp, "Content-Type", type);
	if (cn && cn->srv->web)
		for (size_t i = 0; i < cn->srv->web->n_headers; i++)
			MHD_add_response_header(resp, cn->srv->web->headers[i].name,
						cn->srv->web->headers[i].value);
	if (cn)
		__atomic_store_n(&cn->deadline, mono_ns() + HTTP_WRITE_TIMEOUT_NS,
				 __ATOMIC_RELAXED);
	if (status == 401)
		r = MHD_queue_basic_auth_fail_response(c, "rocewatch", resp);
	else
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

static enum MHD_Result send_blob(struct http_server *s, struct MHD_Connection *c,
				 const struct http_route *rt, struct doc *d)
{
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

struct http_args {
	struct MHD_Connection *c;
	char peer[64];
};

const char *http_arg(const struct http_args *a, const char *name)
{
	return MHD_lookup_connection_value(a->c, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_arg_peer(const struct http_args *a)
{
	return a->peer;
}

static void peer_text(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	strlcpy0(buf, "?", len);
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf,
			  (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
			  (socklen_t)len);
}

/* A route's rendered body as the answer, or 500 when it ran out of memory. */
static enum MHD_Result respond_with(struct MHD_Connection *c, const struct http_route *rt,
				    int status, struct strbuf *sb)
{
	struct MHD_Response *resp;

	if (sb->oom) {
		sb_free(sb);
		return plain(c, 500, "out of memory\n");
	}
	resp = MHD_create_response_from_buffer_with_free_callback(sb->len, sb->buf ? sb->buf : "",
								  sb->buf ? free : NULL);
	if (!resp) {
		sb_free(sb);
		return MHD_NO;
	}
	return queue(c, status, rt->content_type, resp);
}

static enum MHD_Result serve_render(struct MHD_Connection *c, const struct http_route *rt)
{
	struct strbuf sb = { 0 };
	int status;

	if (rt->render_args) {
		struct http_args a = { .c = c };

		peer_text(c, a.peer, sizeof(a.peer));
		status = rt->render_args(rt->arg, &a, &sb);
	} else {
		status = rt->render(rt->arg, &sb);
	}

	return respond_with(c, rt, status, &sb);
}

/*
 * An on-demand document: the first request after http_invalidate() renders
 * it (the render takes the model lock, as the poll does), the others wait
 * for that render and share it, so heavy requests cost one render per poll
 * however many clients ask.
 */
static enum MHD_Result serve_cached(struct http_server *s, struct MHD_Connection *c,
				    const struct http_route *rt)
{
	struct doc *d = &s->docs[rt->doc];

	pthread_mutex_lock(&d->render_lock);
	if (__atomic_load_n(&d->stale, __ATOMIC_ACQUIRE) || !d->cur) {
		struct strbuf sb;
		int status;

		/* Before rendering: an invalidation during the render must render again. */
		__atomic_store_n(&d->stale, 0, __ATOMIC_RELEASE);
		sb_reset(&d->scratch);
		status = rt->render(rt->arg, &d->scratch);
		if (status != 200 || d->scratch.oom) {
			/* the answer takes the buffer */
			sb = d->scratch;
			d->scratch = (struct strbuf){ 0 };
			pthread_mutex_unlock(&d->render_lock);
			__atomic_store_n(&d->stale, 1, __ATOMIC_RELEASE);
			if (sb.oom) {
				sb_free(&sb);
				return plain(c, 500, "out of memory\n");
			}
			struct MHD_Response *resp =
			    MHD_create_response_from_buffer_with_free_callback(
				sb.len, sb.buf ? sb.buf : "", sb.buf ? free : NULL);

			if (!resp) {
				sb_free(&sb);
				return MHD_NO;
			}
			return queue(c, status, rt->content_type, resp);
		}
		/* the spare's buffer comes back into scratch, for the next render */
		http_publish(s, rt->doc, &d->scratch);
	}
	pthread_mutex_unlock(&d->render_lock);
	return send_blob(s, c, rt, d);
}

/* ---- checks before the route: rate limit, authentication ---- */

static bool rate_ok(struct http_server *s)
{
	const struct web_config *wc = s->web;
	int64_t now;
	bool ok;

	if (!wc || !wc->rate_interval_ns)
		return true;
	pthread_mutex_lock(&s->rate_lock);
	now = mono_ns();
	s->tokens += (double)(now - s->rate_last) / (double)wc->rate_interval_ns;
	if (s->tokens > (double)wc->rate_burst)
		s->tokens = (double)wc->rate_burst;
	s->rate_last = now;
	ok = s->tokens >= 1.0;
	if (ok)
		s->tokens -= 1.0;
	pthread_mutex_unlock(&s->rate_lock);
	return ok;
}

/* The client's address (not its port) as a number: whose turn a bcrypt is (webauth.h). */
static uint64_t client_key(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	const unsigned char *b = NULL;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	size_t n = 0;

	if (sa && sa->sa_family == AF_INET) {
		b = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
		n = 4;
	} else if (sa && sa->sa_family == AF_INET6) {
		b = (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
		n = 16;
	}
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return n ? h : 0;
}

static bool authorized(struct http_server *s, struct MHD_Connection *c)
{
	char *pass = NULL, *user;
	bool ok;

	if (!s->auth)
		return true;
	user = MHD_basic_auth_get_username_password(c, &pass);
	ok = web_auth_check_from(s->auth, client_key(c), user, pass);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return ok;
}

/* The route that takes a body for this POST, or NULL. */
static const struct http_route *body_route(const struct http_server *s, const char *url,
					   const char *method)
{
	if (strcmp(method, MHD_HTTP_METHOD_POST))
		return NULL;
	for (size_t i = 0; i < s->n_routes; i++)
		if (s->routes[i].render_body && s->routes[i].method == HTTP_POST &&
		    !strcmp(s->routes[i].path, url))
			return &s->routes[i];
	return NULL;
}

static enum MHD_Result serve_body(struct MHD_Connection *c, const struct http_route *rt,
				  const char *body, size_t len)
{
	struct strbuf sb = { 0 };
	struct http_args a = { .c = c };
	int status;

	peer_text(c, a.peer, sizeof(a.peer));
	status = rt->render_body(rt->arg, &a, body ? body : "", len, &sb);
	return respond_with(c, rt, status, &sb);
}

static void upload_free(struct conn *cn)
{
	free(cn->upload);
	cn->upload = NULL;
	cn->upload_len = 0;
	cn->upload_big = false;
	cn->brt = NULL;
	cn->checked = false;
}

static enum MHD_Result route(struct http_server *s, struct MHD_Connection *c, const char *url,
			     const char *method)
{
	const struct http_route *match = NULL;
	bool is_get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool is_post = !strcmp(method, MHD_HTTP_METHOD_POST);
	bool path_known = false;

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
	if (match->doc >= 0 && match->render)
		return serve_cached(s, c, match);
	if (match->doc >= 0)
		return send_blob(s, c, match, &s->docs[match->doc]);
	return serve_render(c, match);
}

/*
 * MHD decodes the path into a C string: a %00 would cut it short, and
 * /metrics%00.txt be served as /metrics.  No route holds a NUL: leave such a
 * path (or query) undecoded, so that it matches nothing.
 */
static size_t unescape(void *cls, struct MHD_Connection *c, char *uri)
{
	(void)cls;
	(void)c;
	for (const char *p = uri; (p = strchr(p, '%')); p++)
		if (p[1] == '0' && p[2] == '0')
			return strlen(uri);
	return MHD_http_unescape(uri);
}

/* A request counted, under the rate limit and authorized; else false, its refusal in *ret. */
static bool admit(struct http_server *s, struct MHD_Connection *c, enum MHD_Result *ret)
{
	count(s, &s->st.requests);
	if (!rate_ok(s)) {
		count(s, &s->st.rate_limited);
		*ret = plain(c, 429, "too many requests\n");
		return false;
	}
	if (!authorized(s, c)) {
		count(s, &s->st.unauthorized);
		*ret = plain(c, 401, "unauthorized\n");
		return false;
	}
	return true;
}

static enum MHD_Result too_large(struct MHD_Connection *c, size_t max_body)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "request body too large (at most %zu bytes)\n", max_body);
	return plain(c, 413, msg);
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	struct http_server *s = cls;
	struct conn *cn = conn_of(c);
	enum MHD_Result ret;

	(void)version;
	(void)upload;
	if (!cn)
		return MHD_NO; /* out of memory when the connection started */
	/* First call: the headers are in.  A body that cannot fit is refused now. */
	if (!*con_cls) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		uint64_t n;

		*con_cls = cn;
		cn->body = 0;
		upload_free(cn);
		pthread_mutex_lock(&s->conn_lock);
		cn->idle = false;
		pthread_mutex_unlock(&s->conn_lock);
		cn->brt = body_route(s, url, method);
		if (cn->brt) {
			/* a body nobody may send is not read: the rate limit and credentials first
			 */
			cn->checked = true;
			if (!admit(s, c, &ret))
				return ret;
			if (cl && (parse_u64(cl, &n) || n > cn->brt->max_body))
				return too_large(c, cn->brt->max_body);
			return MHD_YES;
		}
		if (cl && (parse_u64(cl, &n) || n > HTTP_MAX_BODY))
			return too_large(c, HTTP_MAX_BODY);
		return MHD_YES;
	}
	if (cn->brt) {
		if (*upload_size) {
			size_t n = *upload_size;

			*upload_size = 0;
			if (cn->upload_big || cn->upload_len + n > cn->brt->max_body) {
				cn->upload_big = true;
				cn->body += n;
				/* a chunked body past the bound: read on a little for the 413 */
				return cn->body > cn->brt->max_body + 16 * HTTP_MAX_BODY ? MHD_NO
											 : MHD_YES;
			}
			if (!cn->upload) {
				cn->upload = malloc(cn->brt->max_body + 1);
				if (!cn->upload)
					return MHD_NO;
			}
			memcpy(cn->upload + cn->upload_len, upload, n);
			cn->upload_len += n;
			cn->upload[cn->upload_len] = 0;
			return MHD_YES;
		}
		/* The request is in: from here its time is the response's. */
		__atomic_store_n(&cn->deadline, mono_ns() + HTTP_WRITE_TIMEOUT_NS,
				 __ATOMIC_RELAXED);
		if (cn->upload_big)
			return too_large(c, cn->brt->max_body);
		return serve_body(c, cn->brt, cn->upload, cn->upload_len);
	}
	/* No route takes a body: count it (chunked ones have no length up front) and drop it. */
	if (*upload_size) {
		cn->body += *upload_size;
		*upload_size = 0;
		/*
		 * MHD takes no response in the middle of a body: read a chunked one to its
		 * end for the 413, up to a point, and close on one that goes on and on.
		 */
		return cn->body > 16 * HTTP_MAX_BODY ? MHD_NO : MHD_YES;
	}
	if (cn->body > HTTP_MAX_BODY)
		return too_large(c, HTTP_MAX_BODY);
	/* The request is in: from here its time is the response's (a render, a bcrypt). */
	__atomic_store_n(&cn->deadline, mono_ns() + HTTP_WRITE_TIMEOUT_NS, __ATOMIC_RELAXED);
	if (!admit(s, c, &ret))
		return ret;
	return route(s, c, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct conn *cn = conn_of(c);

	(void)toe;
	/* Keep-alive: the next request, idle time included, must arrive within read_timeout. */
	if (cn) {
		upload_free(cn);
		__atomic_store_n(&cn->deadline, mono_ns() + s->read_timeout_ns, __ATOMIC_RELAXED);
		pthread_mutex_lock(&s->conn_lock);
		cn->idle = true;
		cn->idle_ns = mono_ns();
		pthread_mutex_unlock(&s->conn_lock);
	}
	*con_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	struct conn *cn;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		cn = calloc(1, sizeof(*cn));
		if (!cn)
			return;
		cn->srv = s;
		cn->fd = ci ? ci->connect_fd : -1;
		{
			const union MHD_ConnectionInfo *ai =
			    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

			if (ai && ai->client_addr)
				memcpy(&cn->addr, ai->client_addr,
				       ai->client_addr->sa_family == AF_INET6
					   ? sizeof(struct sockaddr_in6)
					   : sizeof(struct sockaddr_in));
		}
		cn->deadline = mono_ns() + s->read_timeout_ns;
		pthread_mutex_lock(&s->conn_lock);
		/* The budget started when the guard accepted the socket. */
		for (size_t i = 0; i < s->n_handed; i++) {
			if (s->handed[i].fd == cn->fd) {
				cn->deadline = s->handed[i].deadline;
				s->handed[i] = s->handed[--s->n_handed];
				break;
			}
		}
		cn->next = s->conns;
		if (s->conns)
			s->conns->prev = cn;
		s->conns = cn;
		s->n_conns++;
		pthread_mutex_unlock(&s->conn_lock);
		*socket_context = cn;
		return;
	}
	/* CLOSED: MHD closes the socket after this, so the guard never sees a reused fd. */
	cn = *socket_context;
	if (!cn)
		return;
	pthread_mutex_lock(&s->conn_lock);
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		s->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	s->n_conns--;
	pthread_mutex_unlock(&s->conn_lock);
	web_tls_put(cn->gen);
	free(cn->upload);
	free(cn);
	*socket_context = NULL;
}

/* ---- TLS callbacks (GnuTLS calls them in the connection's handshake) ---- */

static struct conn *conn_of_session(gnutls_session_t session)
{
	/* MHD sets its connection as the session's pointer (daemon.c, new connections). */
	struct MHD_Connection *c = gnutls_session_get_ptr(session);

	return c ? conn_of(c) : NULL;
}

static int tls_verify_cb(gnutls_session_t session)
{
	struct conn *cn = conn_of_session(session);

	return cn ? web_tls_verify(cn->srv->tls, cn->gen, session) : -1;
}

static int tls_cert_cb(gnutls_session_t session, const gnutls_datum_t *req_ca_rdn, int nreqs,
		       const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
		       gnutls_pcert_st **pcert, unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
	struct conn *cn = conn_of_session(session);

	(void)req_ca_rdn;
	(void)nreqs;
	(void)pk_algos;
	(void)pk_algos_length;
	if (!cn)
		return -1;
	return web_tls_select(cn->srv->tls, session, &cn->gen, pcert, pcert_length, pkey,
			      tls_verify_cb);
}

/* ---- the guard thread ---- */

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
	return false;
}

static void pend_drop(struct http_server *s, size_t i)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pend[i].fd, NULL);
	close(s->pend[i].fd);
	s->pend[i] = s->pend[--s->n_pend];
}

/* Answer before MHD has the connection: read what is there, say it, close. */
static void pend_reply(struct http_server *s, size_t i, const char *status, const char *msg)
{
	char buf[4096], head[256];
	int fd = s->pend[i].fd, n;

	for (int k = 0; k < 16 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0; k++)
		;
	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
		     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		     status, strlen(msg));
	if (send(fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n)
		send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
	count(s, &s->st.bad_requests);
	pend_drop(s, i);
}

/*
 * Make room for a new connection: shut the idle keep-alive connection whose
 * address holds the most connections (the oldest idle of those); MHD sees
 * end of file and closes it (HTTP_EVICT_SLACK covers the moment between).
 * Under conn_lock; false when no connection is idle.
 */
static bool evict_idle(struct http_server *s)
{
	struct conn *best = NULL;
	unsigned best_n = 0;

	for (struct conn *cn = s->conns; cn; cn = cn->next) {
		unsigned n = 0;

		if (!cn->idle || cn->fd < 0)
			continue;
		for (struct conn *o = s->conns; o; o = o->next)
			n += same_addr(&o->addr, &cn->addr);
		if (!best || n > best_n || (n == best_n && cn->idle_ns < best->idle_ns)) {
			best = cn;
			best_n = n;
		}
	}
	if (!best)
		return false;
	shutdown(best->fd, SHUT_RDWR);
	best->idle = false; /* going: not chosen twice */
	s->st.evicted++;
	return true;
}

static void pend_handover(struct http_server *s, size_t i)
{
	struct pending p = s->pend[i];

	epoll_ctl(s->epfd, EPOLL_CTL_DEL, p.fd, NULL);
	s->pend[i] = s->pend[--s->n_pend];
	pthread_mutex_lock(&s->conn_lock);
	{
		size_t k = 0;

		while (k < s->n_handed && s->handed[k].fd != p.fd)
			k++;
		if (k == s->n_handed) {
			if (s->n_handed == s->max_conn)
				k = 0; /* full of entries MHD never started: reuse one */
			else
				s->n_handed++;
		}
		s->handed[k] = (struct handover){ p.fd, p.deadline };
	}
	/* full: the idle keep-alive connection of the address that holds the most goes */
	if (s->n_conns >= s->max_conn && !evict_idle(s)) {
		pthread_mutex_unlock(&s->conn_lock);
		close(p.fd);
		count(s, &s->st.refused);
		return;
	}
	pthread_mutex_unlock(&s->conn_lock);
	/* MHD closes the socket itself when it refuses it (its connection limits). */
	if (MHD_add_connection(s->mhd, p.fd, (const struct sockaddr *)&p.addr, p.addrlen) !=
	    MHD_YES)
		count(s, &s->st.refused);
}

static void pend_ready(struct http_server *s, size_t i, bool hup)
{
	char buf[HTTP_PEEK_BYTES];
	ssize_t n = recv(s->pend[i].fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	int ok;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		pend_drop(s, i);
		return;
	}
	if (s->tls) {
		/* A TLS record starts with 22 (handshake); "GET " does not. */
		if ((unsigned char)buf[0] == 0x16)
			pend_handover(s, i);
		else if (http_request_line_ok(buf, (size_t)n) != 0)
			pend_reply(s, i, "400 Bad Request",
				   "Client sent an HTTP request to an HTTPS server.\n");
		else
			pend_drop(s, i);
		return;
	}
	ok = http_request_line_ok(buf, (size_t)n);
	/* Not a whole line yet: the next segment wakes us (edge-triggered), unless none can come.
	 */
	if (ok < 0 && (size_t)n < sizeof(buf) && !hup)
		return;
	if (ok == 0 || (ok < 0 && (size_t)n < sizeof(buf)))
		pend_reply(s, i, "400 Bad Request", "malformed request line\n");
	else
		pend_handover(s, i);
}

static void accept_all(struct http_server *s)
{
	for (;;) {
		struct pending p = { .addrlen = sizeof(p.addr) };
		unsigned int same = 0;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | EPOLLET };

		p.fd = accept4(s->lfd, (struct sockaddr *)&p.addr, &p.addrlen,
			       SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (p.fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				/* out of descriptors: do not spin on the still-readable socket */
				struct timespec ts = { 0, 20 * 1000000L };

				nanosleep(&ts, NULL);
			}
			return;
		}
		/*
		 * Before any byte goes out: the TLS handshake's small records otherwise
		 * wait on Nagle and the peer's delayed ACK (~40 ms a handshake on loopback).
		 */
		setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
		for (size_t i = 0; i < s->n_pend; i++)
			same += same_addr(&s->pend[i].addr, &p.addr);
		if (s->n_pend >= s->max_conn || same >= s->per_ip) {
			close(p.fd);
			count(s, &s->st.refused);
			continue;
		}
		p.deadline = mono_ns() + s->read_timeout_ns;
		ev.data.fd = p.fd;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, p.fd, &ev)) {
			close(p.fd);
			continue;
		}
		s->pend[s->n_pend++] = p;
	}
}

/* Cut off what ran out of time; the earliest deadline left, or 0. */
static int64_t expire(struct http_server *s, int64_t now)
{
	int64_t next = 0;

	for (size_t i = 0; i < s->n_pend;) {
		if (s->pend[i].deadline <= now) {
			count(s, &s->st.timeouts);
			pend_drop(s, i);
			continue;
		}
		if (!next || s->pend[i].deadline < next)
			next = s->pend[i].deadline;
		i++;
	}
	pthread_mutex_lock(&s->conn_lock);
	for (struct conn *cn = s->conns; cn; cn = cn->next) {
		int64_t d = __atomic_load_n(&cn->deadline, __ATOMIC_RELAXED);

		if (!d)
			continue;
		if (d <= now) {
			/*
			 * Under conn_lock, which CLOSED takes before MHD closes the fd: the
			 * descriptor is still this connection's.  MHD sees end of file and
			 * closes it.
			 */
			if (cn->fd >= 0)
				shutdown(cn->fd, SHUT_RDWR);
			__atomic_store_n(&cn->deadline, 0, __ATOMIC_RELAXED);
			s->st.timeouts++;
			continue;
		}
		if (!next || d < next)
			next = d;
	}
	pthread_mutex_unlock(&s->conn_lock);
	return next;
}

static void *guard_main(void *arg)
{
	struct http_server *s = arg;
	int64_t next_tls = mono_ns() + 1000000000LL;

	for (;;) {
		struct epoll_event ev[64];
		int64_t now = mono_ns(), next = expire(s, now), wait_ns;
		int n;

		if (s->tls && now >= next_tls) {
			char err[512];
			int r = web_tls_refresh(s->tls, err, sizeof(err));

			if (r > 0) {
				log_info("TLS: certificate files changed; new connections use the "
					 "new ones");
				rw_log_once_reset("tls-reload");
			} else if (r < 0) {
				rw_log_once(LOG_LVL_ERROR, "tls-reload",
					    "TLS: %s (still serving the previous certificate)",
					    err);
			}
			next_tls = now + 1000000000LL;
		}
		if (s->tls && (!next || next > next_tls))
			next = next_tls;
		wait_ns = next ? next - now : 1000000000LL;
		if (wait_ns < 0)
			wait_ns = 0;
		n = epoll_wait(s->epfd, ev, (int)ARRAY_SIZE(ev),
			       (int)((wait_ns + 999999) / 1000000));
		for (int k = 0; k < n; k++) {
			int fd = ev[k].data.fd;

			if (fd == s->efd)
				return NULL;
			if (fd == s->lfd) {
				accept_all(s);
				continue;
			}
			for (size_t i = 0; i < s->n_pend; i++) {
				if (s->pend[i].fd == fd) {
					pend_ready(s, i, ev[k].events & (EPOLLRDHUP | EPOLLHUP));
					break;
				}
			}
		}
	}
}

/* ---- start, publish, stop ---- */

static void server_free(struct http_server *s)
{
	if (s->efd >= 0)
		close(s->efd);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->lfd >= 0)
		close(s->lfd);
	web_auth_free(s->auth);
	web_tls_free(s->tls);
	free(s->pend);
	free(s->handed);
	for (int i = 0; i < HTTP_MAX_DOCS; i++)
		pthread_mutex_destroy(&s->docs[i].render_lock);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->conn_lock);
	pthread_mutex_destroy(&s->rate_lock);
	free(s);
}

int http_start(struct http_server **out, const struct http_opts *o, const struct http_route *routes,
	       size_t n_routes, char *err, size_t errlen)
{
	struct http_server *s = calloc(1, sizeof(*s));
	struct epoll_event ev = { .events = EPOLLIN };
	int r;

	if (!s)
		return -ENOMEM;
	s->lfd = s->efd = s->epfd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	pthread_mutex_init(&s->rate_lock, NULL);
	for (int i = 0; i < HTTP_MAX_DOCS; i++)
		pthread_mutex_init(&s->docs[i].render_lock, NULL);
	s->listen_addr = o->listen_addr;
	s->routes = routes;
	s->n_routes = n_routes;
	s->web = o->web;
	s->read_timeout_ns =
	    o->read_timeout_ns > 0 ? o->read_timeout_ns : HTTP_DEFAULT_READ_TIMEOUT_NS;
	s->max_conn = o->max_connections ? o->max_connections : HTTP_DEFAULT_MAX_CONNECTIONS;
	/*
	 * Per address a sixth: four busy addresses (a Prometheus HA pair and
	 * two Grafanas, or an attacker) leave a third for new ones, and when
	 * all are taken an idle keep-alive connection of the fullest address
	 * makes room (evict_idle).
	 */
	s->per_ip = s->max_conn / 6 ? s->max_conn / 6 : 1;
	s->pend = calloc(s->max_conn, sizeof(*s->pend));
	s->handed = calloc(s->max_conn, sizeof(*s->handed));
	if (!s->pend || !s->handed) {
		r = -ENOMEM;
		goto fail;
	}
	if (s->web && s->web->tls) {
		r = web_tls_new(&s->tls, s->web, err, errlen);
		if (r)
			goto fail;
	}
	if (web_config_auth(s->web)) {
		r = web_auth_new(&s->auth, s->web, err, errlen);
		if (r)
			goto fail;
	}
	if (s->web && s->web->rate_interval_ns) {
		s->tokens = (double)s->web->rate_burst;
		s->rate_last = mono_ns();
	}
	r = open_listener(o->listen_addr, &s->port, err, errlen);
	if (r < 0)
		goto fail;
	s->lfd = r;
	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->efd < 0 || s->epfd < 0) {
		r = -errno;
		snprintf(err, errlen, "HTTP server: %s", strerror(errno));
		goto fail;
	}
	ev.data.fd = s->lfd;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev);
	ev.data.fd = s->efd;
	epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->efd, &ev);
	*out = s;
	return 0;
fail:
	server_free(s);
	return r;
}

int http_run(struct http_server *s, char *err, size_t errlen)
{
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET;
	struct MHD_OptionItem tls_opts[3] = { { MHD_OPTION_END, 0, NULL } };
	unsigned int idle_s = (unsigned int)((s->read_timeout_ns + 999999999) / 1000000000);
	int r;

	if (s->tls) {
		flags |= MHD_USE_TLS;
		tls_opts[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_CERT_CALLBACK, 0,
						       (void *)tls_cert_cb };
		tls_opts[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						       (void *)web_tls_priorities(s->tls) };
	}
	s->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, handler, s, MHD_OPTION_CONNECTION_LIMIT,
	    s->max_conn + HTTP_EVICT_SLACK, MHD_OPTION_PER_IP_CONNECTION_LIMIT, s->per_ip,
	    MHD_OPTION_CONNECTION_TIMEOUT, idle_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)32768, MHD_OPTION_THREAD_STACK_SIZE, (size_t)HTTP_THREAD_STACK,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL, MHD_OPTION_ARRAY,
	    tls_opts, MHD_OPTION_END);
	if (!s->mhd) {
		snprintf(err, errlen, "listen %s: cannot start the HTTP server%s", s->listen_addr,
			 s->tls ? " (libmicrohttpd refused the TLS settings)" : "");
		return -EIO;
	}
	r = pthread_create(&s->guard, NULL, guard_main, s);
	if (r) {
		snprintf(err, errlen, "HTTP server: cannot start a thread: %s", strerror(r));
		MHD_stop_daemon(s->mhd);
		s->mhd = NULL;
		return -r;
	}
	s->guard_up = true;
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

void http_invalidate(struct http_server *s, int doc)
{
	__atomic_store_n(&s->docs[doc].stale, 1, __ATOMIC_RELEASE);
}

int http_port(const struct http_server *s)
{
	return s->port;
}

bool http_tls(const struct http_server *s)
{
	return s->tls != NULL;
}

void http_get_stats(struct http_server *s, struct http_stats *st)
{
	pthread_mutex_lock(&s->conn_lock);
	*st = s->st;
	pthread_mutex_unlock(&s->conn_lock);
	st->tls_reloads = s->tls ? web_tls_generation(s->tls) : 0;
}

static int peer_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (fd < 0 || getpeername(fd, (struct sockaddr *)&ss, &sl))
		return -1;
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					      : ((struct sockaddr_in *)&ss)->sin_port);
}

void http_debug_dump(struct http_server *s, FILE *f)
{
	int64_t now = mono_ns();

	/* pend is the guard's: racy here, good enough for a post-mortem of a hang */
	for (size_t i = 0; i < s->n_pend; i++)
		fprintf(f, "pending fd %d peer port %d deadline %+.3f s\n", s->pend[i].fd,
			peer_port(s->pend[i].fd), (double)(s->pend[i].deadline - now) / 1e9);
	pthread_mutex_lock(&s->conn_lock);
	for (struct conn *cn = s->conns; cn; cn = cn->next) {
		int64_t d = __atomic_load_n(&cn->deadline, __ATOMIC_RELAXED);

		fprintf(f, "conn fd %d peer port %d deadline %+.3f s\n", cn->fd, peer_port(cn->fd),
			d ? (double)(d - now) / 1e9 : 0.0);
	}
	for (size_t i = 0; i < s->n_handed; i++)
		fprintf(f, "handed fd %d peer port %d\n", s->handed[i].fd,
			peer_port(s->handed[i].fd));
	pthread_mutex_unlock(&s->conn_lock);
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
	uint64_t one = 1;

	if (!s)
		return;
	if (s->guard_up) {
		if (write(s->efd, &one, sizeof(one)) < 0)
			log_warn("HTTP server: cannot wake the guard thread: %s", strerror(errno));
		pthread_join(s->guard, NULL);
	}
	while (s->n_pend)
		pend_drop(s, 0);
	/* checks queued behind a bcrypt would hold MHD_stop_daemon's joins */
	web_auth_stop(s->auth);
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	for (int i = 0; i < HTTP_MAX_DOCS; i++) {
		free_blobs(s->docs[i].cur);
		free_blobs(s->docs[i].spare);
		sb_free(&s->docs[i].scratch);
	}
	server_free(s);
}
