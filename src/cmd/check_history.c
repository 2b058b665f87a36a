// SPDX-License-Identifier: MIT
/*
 * check --serve (check_history.h).  Only counter rules are taken from serve:
 * configuration is what check has just read itself, while serve's view of
 * it may be a slow loop (15 s) old.  A result is taken only for the same
 * profile, rule, object and fingerprint (the definition and the parameter
 * values it uses), and only when serve's history is longer than check's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check_history.h"
#include "client.h"
#include "util.h"

/* GET URL/api/v1/checks into *req; 0, or -1 with why. */
static int fetch(const char *url, const struct client_http_opts *ho, struct client_req *req,
		 char *why, size_t whylen)
{
	char full[1024];
	size_t n = strlen(url);

	while (n && url[n - 1] == '/')
		n--;
	snprintf(full, sizeof(full), "%.*s/api/v1/checks", (int)n, url);
	req->url = full;
	if (client_http_run(req, 1, ho, NULL, NULL)) {
		snprintf(why, whylen, "cannot start an HTTP client");
		return -1;
	}
	req->url = NULL;
	if (req->err == -EFBIG)
		snprintf(why, whylen, "the reply is larger than %zu MiB", ho->max_body >> 20);
	else if (req->transfer_error)
		snprintf(why, whylen, "%s", req->transfer_error);
	else if (req->err == -EPROTO)
		snprintf(why, whylen, "GET /api/v1/checks: HTTP %ld", req->http_code);
	else if (req->err)
		snprintf(why, whylen, "GET /api/v1/checks: %s", req->errmsg);
	return req->err ? -1 : 0;
}

void check_serve_client_defaults(struct client_http_opts *ho)
{
	client_http_defaults(ho);
	/* a serve on the node answers at once; a pre-flight must not hang on one that does not */
	ho->connect_timeout_ms = 500;
	ho->timeout_ms = 2000;
	ho->max_body = 16u << 20;
	ho->parallel = 1;
}

static int outcome_parse(const char *s)
{
	for (int o = 0; o < RULE__OUTCOMES; o++)
		if (!strcmp(s, rule_outcome_name((enum rule_outcome)o)))
			return o;
	return -1;
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static bool same_object(const struct rule_result *x, json_t *o)
{
	json_t *port = json_object_get(o, "port");

	if (strcmp(jstr(o, "kind"), obj_kind_name(x->kind)))
		return false;
	if (x->kind == OBJ_NODE)
		return true;
	if (strcmp(jstr(o, "device"), x->device))
		return false;
	return x->kind != OBJ_RDMA_PORT ||
	       (json_is_integer(port) && json_integer_value(port) == (json_int_t)x->port);
}

/* serve's result for x (same profile, rule, fingerprint and object), or NULL */
static json_t *find(json_t *results, const struct rule_result *x)
{
	char fp[24];
	size_t i;
	json_t *r;

	snprintf(fp, sizeof(fp), "%016llx", (unsigned long long)x->rule->fingerprint);
	json_array_foreach(results, i, r)
	{
		if (!strcmp(jstr(r, "rule"), x->rule->name) &&
		    !strcmp(jstr(r, "profile"), x->rule->profile) &&
		    !strcmp(jstr(r, "fingerprint"), fp) &&
		    same_object(x, json_object_get(r, "object")))
			return r;
	}
	return NULL;
}

static bool counter_result(const struct rule_result *x)
{
	return x->window_ns > 0 && x->outcome != RULE_SKIP && x->outcome != RULE__OUTCOMES;
}

/* The shortest span and the longest window among the counter results. */
static void spans(const struct rules_engine *e, int64_t *observed, int64_t *window, size_t *n)
{
	const struct rule_result *res;
	size_t k = rules_results(e, &res);

	*observed = INT64_MAX;
	*window = 0;
	*n = 0;
	for (size_t i = 0; i < k; i++) {
		if (!counter_result(&res[i]))
			continue;
		(*n)++;
		if (res[i].observed_ns < *observed)
			*observed = res[i].observed_ns;
		if (res[i].window_ns > *window)
			*window = res[i].window_ns;
	}
	if (!*n)
		*observed = 0;
}

void check_history_local(struct check_history *h, const struct rules_engine *e, bool snapshot,
			 const char *why)
{
	int64_t obs, win;
	char so[32], sw[32];

	h->source = snapshot ? "snapshot" : "local";
	spans(e, &obs, &win, &h->counter_results);
	h->from_serve = 0;
	h->note[0] = '\0';
	if (!h->counter_results)
		return; /* no counter rule applies here: nothing rests on the samples */
	rules_format_duration(obs, so, sizeof(so));
	rules_format_duration(win, sw, sizeof(sw));
	snprintf(h->note, sizeof(h->note), "counter rules: decided on %s of samples (%s)%s%s%s%s",
		 so, snapshot ? "the snapshots" : "this check's",
		 obs < win ? ", less than their " : "", obs < win ? sw : "",
		 obs < win ? " window" : "", why && *why ? "; " : "");
	if (why && *why)
		strlcpy0(h->note + strlen(h->note), why, sizeof(h->note) - strlen(h->note));
}

void check_serve_merge(struct check_history *h, struct rules_engine *e, const char *url,
		       const struct client_http_opts *ho, bool explicit_url, const char *host,
		       int64_t now_ns)
{
	const struct rule_result *res;
	size_t n = rules_results(e, &res), taken = 0, missing = 0;
	struct client_req b = { 0 };
	json_error_t je;
	json_t *root = NULL, *results;
	char why[400] = "", local[480];
	int64_t t = 0, obs, win;

	h->url = url;
	if (fetch(url, ho, &b, why, sizeof(why)))
		goto fallback;
	root = json_loadb(b.body, b.len, 0, &je);
	if (!root || strcmp(jstr(root, "schema"), "rocewatch-check")) {
		snprintf(why, sizeof(why), "the reply is not rule results (/api/v1/checks JSON)");
		goto fallback;
	}
	if (strcmp(jstr(root, "host"), host)) {
		snprintf(why, sizeof(why), "it watches host '%s', not this one ('%s')",
			 jstr(root, "host"), host);
		goto fallback;
	}
	if (parse_rfc3339(jstr(root, "time"), &t) || now_ns - t > CHECK_SERVE_MAX_AGE_NS) {
		snprintf(why, sizeof(why), "its last evaluation (%s) is more than %lld s old",
			 jstr(root, "time")[0] ? jstr(root, "time") : "none",
			 CHECK_SERVE_MAX_AGE_NS / 1000000000LL);
		goto fallback;
	}
	results = json_object_get(root, "results");
	for (size_t i = 0; i < n; i++) {
		const struct rule_result *x = &res[i];
		json_t *r, *ob, *win_j, *ep;
		int o;

		if (!counter_result(x))
			continue;
		r = find(results, x);
		o = r ? outcome_parse(jstr(r, "outcome")) : -1;
		ob = r ? json_object_get(r, "observed_seconds") : NULL;
		win_j = r ? json_object_get(r, "window_seconds") : NULL;
		if (o < 0 || o == RULE_SKIP || !json_is_number(ob) || !json_is_number(win_j)) {
			missing++;
			continue;
		}
		if ((int64_t)(json_number_value(ob) * 1e9) <= x->observed_ns)
			continue; /* serve has not seen more than we have */
		ep = r ? json_object_get(r, "episodes") : NULL;
		rules_result_override(
		    e, i,
		    &(struct rule_override){
			.outcome = (enum rule_outcome)o,
			.summary = jstr(r, "summary"),
			.reason = jstr(r, "reason"),
			.window_ns = (int64_t)(json_number_value(win_j) * 1e9),
			.observed_ns = (int64_t)(json_number_value(ob) * 1e9),
			.episodes = json_is_integer(ep) && json_integer_value(ep) > 0
					? (unsigned int)json_integer_value(ep)
					: 0,
			.escalated = json_is_true(json_object_get(r, "escalated")),
		    });
		taken++;
	}
	json_decref(root);
	client_req_free(&b);
	h->source = taken ? "serve" : "local";
	spans(e, &obs, &win, &h->counter_results);
	h->from_serve = taken;
	{
		char so[32], sw[32];

		rules_format_duration(obs, so, sizeof(so));
		rules_format_duration(win, sw, sizeof(sw));
		if (obs >= win)
			snprintf(h->note, sizeof(h->note),
				 "counter rules: %zu of %zu from rocewatch serve at %s, decided on "
				 "its history over the last %s",
				 taken, h->counter_results, url, sw);
		else
			snprintf(h->note, sizeof(h->note),
				 "counter rules: %zu of %zu from rocewatch serve at %s, decided on "
				 "its %s of samples, less than their %s window",
				 taken, h->counter_results, url, so, sw);
		if (missing)
			snprintf(h->note + strlen(h->note), sizeof(h->note) - strlen(h->note),
				 "; %zu not evaluated there with the same rules and parameters, "
				 "decided on this check's samples",
				 missing);
	}
	return;
fallback:
	json_decref(root);
	client_req_free(&b);
	snprintf(local, sizeof(local), "no usable rocewatch serve at %s (%s)%s", url, why,
		 explicit_url ? "" : "; run `rocewatch serve` on the node, or pass --serve URL");
	check_history_local(h, e, false, local);
	if (explicit_url && !h->note[0])
		strlcpy0(h->note, local, sizeof(h->note));
}
