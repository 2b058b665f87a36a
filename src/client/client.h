/* SPDX-License-Identifier: MIT */
/*
 * The outbound HTTP client: what rocewatch fetches from other machines
 * (fleet check, probe, check --serve, serve --probe.peers) and what it pushes
 * to them (Alertmanager).
 * Many GETs (or form POSTs) in parallel over one libcurl multi handle,
 * bounded in concurrency, each with a connect and a total timeout and a
 * body size limit; TLS and basic auth as a Prometheus scrape config spells
 * them.  The Prometheus path (fleet_prom.h) is built on it.
 */
#ifndef ROCEWATCH_CLIENT_H
#define ROCEWATCH_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

struct client_http_opts {
	long connect_timeout_ms; /* default 2000 */
	long timeout_ms;	 /* whole request, default 5000 */
	int parallel;		 /* requests in flight, default 64 */
	size_t max_body;	 /* bytes, default 64 MiB */
	/* TLS (scheme https): as tls_config in a Prometheus scrape config */
	const char *ca_file, *cert_file, *key_file;
	bool insecure_skip_verify;
	/* basic_auth */
	const char *username, *password;
	/* more request headers, "Name: value" each (--prometheus.header, the bearer token) */
	const char *const *headers;
	size_t n_headers;
};

void client_http_defaults(struct client_http_opts *o);

struct client_req {
	const char *url;  /* in */
	const char *post; /* in: a form body to POST (Prometheus queries), or NULL for GET */
	const char *content_type; /* in: the POST body's type when not a form (a JSON push) */
	bool any_2xx;		  /* in: any 2xx is success, with or without a body (a push) */
	/*
	 * in: when set, the body is not kept but handed to sink piece by piece
	 * as it arrives (body stays NULL, len counts the bytes), so that an
	 * answer of any size costs what its reader keeps of it; sink returns
	 * false to stop the transfer (err -ECANCELED: the reader says why).
	 * The --max-body cap applies to the bytes counted, as to a kept body.
	 */
	bool (*sink)(struct client_req *r, const char *p, size_t n, void *arg);
	void *sink_arg;
	/* out */
	int err;	/* 0: HTTP 200 with a body; else -errno-like, errmsg says what */
	long http_code; /* 0 when no response came */
	char *body;	/* malloc'ed, NUL-terminated */
	size_t len;
	double seconds;	  /* how long the request took */
	char errmsg[256]; /* "connect: Connection refused", "timed out after 2000 ms", ... */
	const char *transfer_error; /* libcurl's short text of a failed transfer, or NULL */
};

/*
 * Run every request, at most o->parallel at a time; on_done (if not NULL) is
 * called for each as it finishes, so its body can be used and freed while
 * the others are still on the way.  0 (each request has its own outcome),
 * or -ENOMEM / -EIO when the transfer machinery itself failed.
 */
int client_http_run(struct client_req *reqs, size_t n, const struct client_http_opts *o,
		    void (*on_done)(struct client_req *r, void *arg), void *arg);
void client_req_free(struct client_req *r);

#endif
