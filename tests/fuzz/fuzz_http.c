// SPDX-License-Identifier: MIT
/*
 * The HTTP request path, whole: one input is what a client sends on one
 * connection (then it half-closes).  A real server (exporters/http.c: the
 * guard's first-line check, libmicrohttpd's parser, basic auth, routing,
 * the body limits) listens on loopback; every input must get an answer or
 * a close within a few seconds, and a response must be HTTP.  A hang or a
 * crash in any server thread is a finding.
 *
 * Wiring: the harness list in tests/fuzz/meson.build ('http'), corpus
 * tests/fuzz/corpus/http/.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "webconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* htpasswd -nbBC 4 "" secret: cost 4 keeps a new credential cheap */
static const char web_yml[] =
    "basic_auth_users:\n  alice: $2y$04$fbGwg8DZpiVcEKFMLhnFGuYGIlbcPBJMHBuUX31H/z0/dZMYFTK8m\n"
    "http_server_config:\n  headers:\n    X-Frame-Options: deny\n";

static struct web_config wc;
static struct http_server *srv;
static struct http_opts opts;
static int port;

static int render_small(void *arg, struct strbuf *out)
{
	(void)arg;
	sb_puts(out, "{\"ok\":true}\n");
	return 200;
}

static const struct http_route routes[] = {
	{ "/", HTTP_GET, "text/html", -1, render_small, NULL },
	{ "/metrics", HTTP_GET, "text/plain; version=0.0.4", 0, NULL, NULL },
	{ "/api/v1/state", HTTP_GET, "application/json", 1, render_small, NULL },
	{ "/api/v1/capture", HTTP_POST, "application/json", -1, render_small, NULL },
};

static void stop(void)
{
	http_stop(srv);
	web_config_free(&wc);
}

static void start(void)
{
	struct strbuf sb = { 0 };
	char err[512];

	if (web_config_parse(&wc, "fuzz-web.yml", NULL, web_yml, sizeof(web_yml) - 1, err,
			     sizeof(err))) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		abort();
	}
	opts = (struct http_opts){ .listen_addr = "127.0.0.1:0",
				   .web = &wc,
				   .read_timeout_ns = 1000000000LL,
				   .max_connections = 64 };
	if (http_start(&srv, &opts, routes, sizeof(routes) / sizeof(routes[0]), err, sizeof(err)) ||
	    http_run(srv, err, sizeof(err))) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		abort();
	}
	port = http_port(srv);
	sb_puts(&sb, "# HELP x y\n# TYPE x gauge\nx 1\n");
	http_publish(srv, 0, &sb);
	sb_free(&sb);
	atexit(stop);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Ready for events before end (monotonic ms), however often a signal interrupts. */
static int wait_fd(int fd, short events, int64_t end)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = end - mono_ms();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)left);
		if (r == 1)
			return 1;
		if (r < 0 && errno != EINTR)
			return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char buf[65536];
	size_t got = 0, off = 0;
	int64_t end;
	int fd;

	if (!srv)
		start();
	if (size > 65536)
		return 0;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* libFuzzer's timers interrupt system calls: EINTR is no finding */
	if (fd < 0 || (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINTR)) {
		perror("fuzz_http: connect");
		abort();
	}
	if (!wait_fd(fd, POLLOUT, mono_ms() + 10000)) {
		fprintf(stderr, "fuzz_http: cannot connect within 10 s\n");
		abort();
	}
	/* Send what the server takes; it may answer (413, 400) and close before the end. */
	while (off < size) {
		ssize_t n = send(fd, data + off, size - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	end = mono_ms() + 10000;
	for (;;) {
		ssize_t n;

		/* read_timeout is 1 s; past 10 s the server has hung on this input */
		if (!wait_fd(fd, POLLIN, end)) {
			struct http_stats st;

			http_get_stats(srv, &st);
			fprintf(stderr,
				"fuzz_http: no answer and no close within 10 s (server: %llu "
				"requests, %llu timeouts, %llu refused, %llu bad requests)\n",
				(unsigned long long)st.requests, (unsigned long long)st.timeouts,
				(unsigned long long)st.refused,
				(unsigned long long)st.bad_requests);
			abort();
		}
		n = recv(fd, buf + got, sizeof(buf) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == sizeof(buf))
			got = 5; /* keep the status line's start; the rest is only drained */
	}
	if (got && (got < 5 || memcmp(buf, "HTTP/", 5))) {
		fprintf(stderr, "fuzz_http: the answer is not HTTP: '%.*s'\n",
			(int)(got < 40 ? got : 40), buf);
		abort();
	}
	if (getenv("FUZZ_HTTP_VERBOSE")) /* what each input got, for a person reading along */
		fprintf(stderr, "%.*s\n",
			(int)(memchr(buf, '\r', got) ? (char *)memchr(buf, '\r', got) - buf : 0),
			buf);
	close(fd);
	return 0;
}
