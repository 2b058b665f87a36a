// SPDX-License-Identifier: MIT
/*
 * Parallel HTTP for `rocewatch fleet`: one curl multi handle, at most
 * `parallel` easy handles in flight; a finished transfer makes room for the
 * next.  Each request ends with a body or with the reason it has none, so
 * a node that does not answer is named, never dropped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded.h"
#include "curl_api.h"
#include "client.h"
#include "util.h"

void client_http_defaults(struct client_http_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->connect_timeout_ms = 2000;
	o->timeout_ms = 5000;
	o->parallel = 64;
	o->max_body = 64u << 20;
}

struct xfer {
	struct client_req *req;
	CURL *c; /* while in flight */
	struct curl_slist *headers;
	size_t cap, max;
	bool too_big;
	bool stopped; /* the request's sink refused a piece */
	/* the status line came and the body has not: curl is reading headers */
	bool in_headers;
	char errbuf[CURL_ERROR_SIZE];
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	struct client_req *r = x->req;
	size_t n = size * nmemb;

	x->in_headers = false;
	if (r->len + n > x->max) {
		x->too_big = true;
		return 0; /* aborts the transfer */
	}
	if (r->sink) {
		if (!r->sink(r, ptr, n, r->sink_arg)) {
			x->stopped = true;
			return 0;
		}
		r->len += n;
		return n;
	}
	if (r->len + n + 1 > x->cap) {
		size_t nc = x->cap ? x->cap : 16384;
		char *nb;

		while (nc < r->len + n + 1)
			nc *= 2;
		/* never more than the cap allows: doubling past it is memory for nothing */
		if (nc > x->max + 1)
			nc = x->max + 1;
		nb = realloc(r->body, nc);
		if (!nb)
			return 0;
		r->body = nb;
		x->cap = nc;
	}
	memcpy(r->body + r->len, ptr, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t n = size * nmemb;

	x->in_headers = !(n <= 2 && (n == 0 || ptr[0] == '\r' || ptr[0] == '\n'));
	return n;
}

static CURL *make_handle(const struct curl_api *cu, struct xfer *x,
			 const struct client_http_opts *o)
{
	CURL *c = cu->easy_init();
	struct client_req *r = x->req;

	if (!c)
		return NULL;
	cu->easy_setopt(c, CURLOPT_URL, r->url);
	cu->easy_setopt(c, CURLOPT_PRIVATE, x);
	cu->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	cu->easy_setopt(c, CURLOPT_TIMEOUT_MS, o->timeout_ms);
	cu->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	cu->easy_setopt(c, CURLOPT_WRITEDATA, x);
	cu->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	cu->easy_setopt(c, CURLOPT_HEADERDATA, x);
	cu->easy_setopt(c, CURLOPT_ERRORBUFFER, x->errbuf);
	cu->easy_setopt(c, CURLOPT_USERAGENT, "rocewatch-fleet/" ROCEWATCH_VERSION);
	/* only http(s), and no redirects: a node answers for itself */
	cu->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	cu->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	if (r->post) {
		cu->easy_setopt(c, CURLOPT_POSTFIELDS, r->post);
		cu->easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(r->post));
	}
	if (r->content_type) {
		char h[128];

		snprintf(h, sizeof(h), "Content-Type: %s", r->content_type);
		x->headers = cu->slist_append(NULL, h);
		if (!x->headers) {
			cu->easy_cleanup(c);
			return NULL;
		}
	}
	for (size_t i = 0; i < o->n_headers; i++) {
		struct curl_slist *l = cu->slist_append(x->headers, o->headers[i]);

		if (!l) {
			cu->slist_free_all(x->headers);
			x->headers = NULL;
			cu->easy_cleanup(c);
			return NULL;
		}
		x->headers = l;
	}
	if (x->headers)
		cu->easy_setopt(c, CURLOPT_HTTPHEADER, x->headers);
	if (o->ca_file)
		cu->easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
	if (o->cert_file)
		cu->easy_setopt(c, CURLOPT_SSLCERT, o->cert_file);
	if (o->key_file)
		cu->easy_setopt(c, CURLOPT_SSLKEY, o->key_file);
	if (o->insecure_skip_verify) {
		cu->easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		cu->easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (o->username) {
		cu->easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		cu->easy_setopt(c, CURLOPT_USERNAME, o->username);
		cu->easy_setopt(c, CURLOPT_PASSWORD, o->password ? o->password : "");
	}
	return c;
}

/* A finished transfer: its outcome in the request. */
static void done(const struct curl_api *cu, CURL *c, CURLcode code,
		 const struct client_http_opts *o)
{
	struct xfer *x = NULL;
	struct client_req *r;
	double secs = 0;

	cu->easy_getinfo(c, CURLINFO_PRIVATE, (char **)&x);
	r = x->req;
	cu->easy_getinfo(c, CURLINFO_TOTAL_TIME, &secs);
	r->seconds = secs;
	cu->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->http_code);
	r->transfer_error = code != CURLE_OK ? cu->easy_strerror(code) : NULL;
	if (x->too_big) {
		char sz[32];

		r->err = -EFBIG;
		snprintf(r->errmsg, sizeof(r->errmsg), "answer larger than %s",
			 rw_size_text(o->max_body, sz, sizeof(sz)));
	} else if (x->stopped) {
		r->err = -ECANCELED;
		snprintf(r->errmsg, sizeof(r->errmsg), "stopped by its reader");
	} else if ((code == CURLE_OUT_OF_MEMORY || (int)code == 100) && x->in_headers) {
		/*
		 * libcurl refuses a header line past CURL_MAX_HTTP_HEADER (100 KB) as
		 * "Out of memory" (7.x; CURLE_TOO_LARGE, 100, from 8.6): it is the
		 * node's answer that is wrong, not this machine's memory.
		 */
		r->err = -EMSGSIZE;
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "an HTTP header of the answer is too large (libcurl's limit is 100 KB)");
		r->transfer_error = r->errmsg;
	} else if (code == CURLE_OPERATION_TIMEDOUT) {
		r->err = -ETIMEDOUT;
		snprintf(r->errmsg, sizeof(r->errmsg), "timed out after %.1f s (%.200s)", secs,
			 x->errbuf[0] ? x->errbuf : cu->easy_strerror(code));
	} else if (code != CURLE_OK) {
		r->err = code == CURLE_COULDNT_CONNECT	      ? -ECONNREFUSED
			 : code == CURLE_COULDNT_RESOLVE_HOST ? -EHOSTUNREACH
							      : -EIO;
		snprintf(r->errmsg, sizeof(r->errmsg), "%s",
			 x->errbuf[0] ? x->errbuf : cu->easy_strerror(code));
	} else if (r->any_2xx && r->http_code >= 200 && r->http_code < 300) {
		/* a push: accepted, whatever the answer's body */
	} else if (r->http_code != 200) {
		r->err = -EPROTO;
		snprintf(r->errmsg, sizeof(r->errmsg), "HTTP %ld%s", r->http_code,
			 r->http_code == 401   ? " (unauthorized: check the basic auth options)"
			 : r->http_code == 404 ? " (not found: is it a rocewatch serve?)"
					       : "");
	} else if (!r->len && !r->any_2xx) {
		r->err = -ENODATA;
		snprintf(r->errmsg, sizeof(r->errmsg), "empty answer");
	}
	if (r->err) {
		free(r->body);
		r->body = NULL;
		r->len = 0;
	}
}

int client_http_run(struct client_req *reqs, size_t n, const struct client_http_opts *o,
		    void (*on_done)(struct client_req *r, void *arg), void *arg)
{
	size_t next = 0, running = 0, par = o->parallel > 0 ? (size_t)o->parallel : 1;
	struct xfer *xs = calloc(n ? n : 1, sizeof(*xs));
	char why[256];
	const struct curl_api *cu = curl_api(why, sizeof(why));
	CURLM *multi;
	int ret = 0;

	if (!xs)
		return -ENOMEM;
	if (!cu) {
		/* every request says why, as when the machinery fails */
		for (size_t i = 0; i < n; i++) {
			reqs[i].err = -ELIBACC;
			strlcpy0(reqs[i].errmsg, why, sizeof(reqs[i].errmsg));
			if (on_done)
				on_done(&reqs[i], arg);
		}
		rw_log_once(LOG_LVL_ERROR, "curl", "%s", why);
		free(xs);
		return -ELIBACC;
	}
	if (cu->global_init(CURL_GLOBAL_DEFAULT)) {
		free(xs);
		return -EIO;
	}
	multi = cu->multi_init();
	if (!multi) {
		ret = -ENOMEM;
		goto global;
	}
	/* a new connection per node: they are different hosts anyway */
	cu->multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)par);
	while (next < n || running) {
		CURLMsg *msg;
		int still, left;

		while (running < par && next < n) {
			struct xfer *x = &xs[next];
			CURL *c;

			x->req = &reqs[next++];
			x->max = o->max_body;
			x->req->err = 0;
			x->req->errmsg[0] = '\0';
			c = make_handle(cu, x, o);
			if (!c || cu->multi_add_handle(multi, c) != CURLM_OK) {
				if (c)
					cu->easy_cleanup(c);
				cu->slist_free_all(x->headers);
				x->headers = NULL;
				x->req->err = -ENOMEM;
				snprintf(x->req->errmsg, sizeof(x->req->errmsg), "out of memory");
				if (on_done)
					on_done(x->req, arg);
				continue;
			}
			x->c = c;
			running++;
		}
		if (cu->multi_perform(multi, &still) != CURLM_OK) {
			ret = -EIO;
			break;
		}
		while ((msg = cu->multi_info_read(multi, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			struct xfer *x = NULL;

			cu->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
			done(cu, msg->easy_handle, msg->data.result, o);
			cu->multi_remove_handle(multi, msg->easy_handle);
			cu->easy_cleanup(msg->easy_handle);
			cu->slist_free_all(x->headers);
			x->headers = NULL;
			x->c = NULL;
			running--;
			if (on_done)
				on_done(x->req, arg);
		}
		if (running && cu->multi_poll(multi, NULL, 0, 100, NULL) != CURLM_OK) {
			ret = -EIO;
			break;
		}
	}
	if (ret) {
		/* the machinery failed: whatever is in flight has no answer */
		for (size_t i = 0; i < next; i++) {
			if (!xs[i].c)
				continue;
			cu->multi_remove_handle(multi, xs[i].c);
			cu->easy_cleanup(xs[i].c);
			cu->slist_free_all(xs[i].headers);
			free(xs[i].req->body);
			xs[i].req->body = NULL;
			xs[i].req->len = 0;
			xs[i].req->err = -EIO;
			snprintf(xs[i].req->errmsg, sizeof(xs[i].req->errmsg), "transfer aborted");
		}
		/* and those never started */
		for (size_t i = next; i < n; i++) {
			reqs[i].err = -EIO;
			snprintf(reqs[i].errmsg, sizeof(reqs[i].errmsg), "transfer aborted");
		}
		for (size_t i = 0; on_done && i < n; i++)
			if (reqs[i].err == -EIO && !strcmp(reqs[i].errmsg, "transfer aborted"))
				on_done(&reqs[i], arg);
	}
	cu->multi_cleanup(multi);
global:
	cu->global_cleanup();
	free(xs);
	return ret;
}

void client_req_free(struct client_req *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}
