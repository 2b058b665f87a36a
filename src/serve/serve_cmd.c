// SPDX-License-Identifier: MIT
/*
 * rocewatch serve: the fast loop polls counters, the slow loop (and netlink
 * notifications) re-read configuration.  A poll only marks /metrics stale:
 * the first scrape after it renders the page (once, however many scrapers
 * ask), so polling ten times a second costs no rendering between scrapes.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "http.h"
#include "nfd.h"
#include "recorder.h"
#include "webconfig.h"
#include "webtls.h"
#include "cli.h"
#include "engine_opts.h"
#include "serve_cmd.h"
#include "daemon.h"
#include "job_serve.h"
#include "privdrop.h"
#include "probe_responder.h"
#include "probe_serve.h"
#include "recorder_rules.h"
#include "alerts_serve.h"
#include "rules_json.h"
#include "rules_serve.h"
#include "status_serve.h"
#include "snapshot.h"
#include "util.h"

enum {
	DOC_METRICS,
	/* rendered on the first request after each poll, then shared (http.h) */
	DOC_STATE,
	DOC_CHECKS,
	DOC_ALERTS,
	DOC_STATUS,
};

struct serve {
	struct rw_config cfg;
	struct daemon *d;
	struct http_server *http;
	struct prom_renderer pr;
	struct recorder *rec;
	struct recorder_opts rec_opts;
	struct serve_regex {
		regex_t re;
		bool has;
	} rec_ethtool; /* --record.ethtool-include */
	struct recorder_rules rr;
	struct rules_serve rules;
	struct alerts_serve alerts;
	struct status_serve status;
	struct job_serve jobs;
	const char *telemetry_path; /* --web.telemetry-path */
	/* --nfd.feature-file: rewritten when it changes or half its expiry is gone */
	const char *nfd_path;
	struct strbuf nfd_body, nfd_file;
	int64_t nfd_written_ns;
	struct web_config web;
	bool has_web;
	bool capture_api;
	int64_t capture_min_interval_ns;
	int64_t last_api_capture_ns; /* monotonic, under capture_lock */
	pthread_mutex_t capture_lock;
	struct http_opts hopts;
	const char *user;
	bool probe, probe_api;
	struct probe_responder *responder;
	struct probe_serve ps;
	/* from the command line */
	const char *listen_addr, *web_file;
	struct http_route routes[11];
	char caps[128]; /* the capabilities the privilege drop kept, for the log */
};

/* How long NFD keeps the labels without a rewrite: several slow polls, at least 5 min. */
static int64_t nfd_ttl_ns(const struct serve *s)
{
	int64_t t = 4 * daemon_config(s->d)->config_interval_ns;

	return t > 300000000000LL ? t : 300000000000LL;
}

/* A daemon hook after the rules' own: the feature file of this poll's results. */
static void nfd_after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct serve *s = arg;
	int64_t now = real_ns(), ttl = nfd_ttl_ns(s);
	struct strbuf body = { 0 };
	int r;

	(void)what;
	/* no file before the first verdict: NFD then has no rocewatch label, not "ready" */
	if (!s->rules.e || !rules_evaluations(s->rules.e))
		return;
	nfd_render(&body, s->rules.e, m, 0);
	if (!body.oom && s->nfd_written_ns && now - s->nfd_written_ns < ttl / 2 &&
	    s->nfd_body.len == body.len && !memcmp(s->nfd_body.buf, body.buf, body.len)) {
		sb_free(&body);
		return;
	}
	sb_free(&s->nfd_body);
	s->nfd_body = body;
	sb_reset(&s->nfd_file);
	nfd_render(&s->nfd_file, s->rules.e, m, (now + ttl) / 1000000000LL);
	r = s->nfd_file.oom ? -ENOMEM : nfd_write_file(s->nfd_path, &s->nfd_file);
	if (r) {
		rw_log_once(LOG_LVL_ERROR, "nfd", "--nfd.feature-file: %s: %s (said once)",
			    s->nfd_path, strerror(-r));
		return;
	}
	rw_log_once_reset("nfd");
	s->nfd_written_ns = now;
}

static int render_state(void *arg, struct strbuf *out)
{
	struct serve *s = arg;
	/* the probe QPs other nodes send to, beside the model (docs/snapshot.md) */
	struct json_t *probe = s->responder ? probe_responder_json(s->responder) : NULL;
	struct node_model *m;
	int r;

	json_t *members = json_object();

	m = daemon_model_lock(s->d);
	if (members && probe)
		json_object_set(members, "probe", probe);
	/* the node's health verdict beside the model (docs/snapshot.md) */
	if (members && s->rules.e)
		json_object_set_new(members, "health", rules_health_json(s->rules.e));
	json_decref(probe);
	r = snapshot_write_members(out, m, 1, members);
	daemon_model_unlock(s->d);
	return r ? 500 : 200;
}

/* GET /api/v1/probe: where `rocewatch probe` on another node sends its probes. */
static int render_probe(void *arg, struct strbuf *out)
{
	struct serve *s = arg;

	if (!s->responder) {
		sb_puts(out, "{\"error\":\"the probe responder is off: start serve with "
			     "--probe\"}\n");
		return 404;
	}
	return probe_responder_render(s->responder, out);
}

/* A fleet probe plan's slice is at most this (a 1 000-node full mesh is about 300 KB). */
#define PLAN_MAX_BODY (16u << 20)

static int plan_error(struct strbuf *out, int status, const char *what, const char *err)
{
	sb_puts(out, "{\"error\":\"");
	sb_label_escape(out, what);
	sb_label_escape(out, err);
	sb_puts(out, "\"}\n");
	return status;
}

/* The probe plan API's two gates: 0, or the answer's status (403 off, 404 no responder). */
static int plan_gate(const struct serve *s, struct strbuf *out)
{
	if (!s->probe_api)
		return plan_error(
		    out, 403, "the probe API is off: ", "start serve with --web.enable-probe-api");
	if (!s->responder)
		return plan_error(out, 404,
				  "the probe responder is off: ", "start serve with --probe");
	return 0;
}

/* POST /api/v1/probe/plan: this node's slice of a fleet probe (rocewatch fleet probe). */
static int render_plan_post(void *arg, const struct http_args *a, const char *body, size_t len,
			    struct strbuf *out)
{
	struct serve *s = arg;
	struct probe_slice sl;
	char err[512], id[17];
	size_t n;
	int r;

	if ((r = plan_gate(s, out)))
		return r;
	r = probe_slice_decode(body, len, &sl, err, sizeof(err));
	if (r)
		return plan_error(out, r == -ENOMEM ? 500 : 400, "plan: ", err);
	n = sl.n;
	probe_plan_id_text(sl.plan, id);
	r = probe_responder_plan(s->responder, &sl, err, sizeof(err));
	probe_slice_free(&sl);
	if (r)
		return plan_error(out,
				  r == -EBUSY || r == -ENODEV ? 409
				  : r == -ENOMEM	      ? 500
							      : 400,
				  "plan: ", err);
	log_info("probe: plan %s from %s: %zu pairs", id, http_arg_peer(a), n);
	sb_printf(out, "{\"status\":\"accepted\",\"plan\":\"%s\",\"entries\":%zu}\n", id, n);
	return 202;
}

/* GET /api/v1/probe/plan?id=ID: that plan's results (probe_slice.h), "running" until done. */
static int render_plan_get(void *arg, const struct http_args *a, struct strbuf *out)
{
	struct serve *s = arg;
	uint64_t id;
	int r;

	if ((r = plan_gate(s, out)))
		return r;
	if (probe_plan_id_parse(http_arg(a, "id"), &id))
		return plan_error(out, 400, "plan: ", "?id= is not 16 hex digits");
	if (probe_responder_plan_results(s->responder, id, out))
		return plan_error(out, 404, "plan: ", "not this node's last plan");
	return 200;
}

/* POST /api/v1/capture: cut a capture file around now (see recorder.h). */
static int render_capture(void *arg, struct strbuf *out)
{
	struct serve *s = arg;
	char file[4096];
	int64_t now;
	int r;

	if (!s->capture_api) {
		sb_puts(out, "{\"error\":\"the capture API is off: start serve with "
			     "--web.enable-capture-api\"}\n");
		return 403;
	}
	if (!s->rec) {
		sb_puts(out, "{\"error\":\"recording is off: start serve with --record DIR\"}\n");
		return 409;
	}
	/* Whoever can reach the port can ask: each ask costs a file, so they are spaced. */
	pthread_mutex_lock(&s->capture_lock);
	now = mono_ns();
	if (s->last_api_capture_ns && now - s->last_api_capture_ns < s->capture_min_interval_ns) {
		pthread_mutex_unlock(&s->capture_lock);
		sb_printf(out,
			  "{\"error\":\"too many captures: at most one every %.3g s "
			  "(--record.capture-min-interval)\"}\n",
			  (double)s->capture_min_interval_ns / 1e9);
		return 429;
	}
	s->last_api_capture_ns = now;
	pthread_mutex_unlock(&s->capture_lock);
	r = recorder_capture(s->rec, "api", file, sizeof(file));
	if (r) {
		sb_puts(out, "{\"error\":\"out of memory\"}\n");
		return 500;
	}
	sb_puts(out, "{\"status\":\"accepted\",\"file\":\"");
	sb_label_escape(out, file); /* escapes \\ \" and newline, as JSON wants */
	sb_printf(out, "\",\"written_after_seconds\":%.3f}\n",
		  (double)s->rec_opts.capture_after_ns / 1e9);
	return 202;
}

static int render_healthz(void *arg, struct strbuf *out)
{
	struct serve *s = arg;
	int64_t last = __atomic_load_n(&daemon_stats(s->d)->last_poll_ns, __ATOMIC_RELAXED);
	int64_t age = real_ns() - last;

	/* Stalled: no poll finished for three fast intervals. */
	if (!last || age > 3 * daemon_config(s->d)->interval_ns) {
		sb_printf(out, "stalled: last poll %.1f s ago\n", last ? (double)age / 1e9 : -1.0);
		return 503;
	}
	sb_puts(out, "ok\n");
	return 200;
}

/* /metrics, on demand: rendered at the first scrape after a poll, then shared. */
static int render_metrics(void *arg, struct strbuf *out)
{
	struct serve *s = arg;
	int r;

	daemon_model_lock(s->d);
	if (!daemon_started(s->d)) {
		daemon_model_unlock(s->d);
		sb_puts(out, "no data yet: the first poll has not finished\n");
		return 503;
	}
	r = daemon_render_metrics(s->d, &s->pr, out);
	daemon_model_unlock(s->d);
	if (r) {
		rw_log_once(LOG_LVL_ERROR, "render-metrics",
			    "cannot render /metrics: out of memory");
		return 500;
	}
	rw_log_once_reset("render-metrics");
	return 200;
}

/* After a poll: what the documents show is stale now. */
static void publish(struct serve *s)
{
	http_invalidate(s->http, DOC_METRICS);
	http_invalidate(s->http, DOC_STATE);
	http_invalidate(s->http, DOC_CHECKS);
	http_invalidate(s->http, DOC_ALERTS);
	http_invalidate(s->http, DOC_STATUS);
}

/*
 * Wait until deadline (monotonic ns) for a notification or a signal.  A
 * notification is acted on here, in an event pass: what it may have changed
 * is re-read and the rules that read it run, an alert is sent, and the wait
 * goes on -- the next poll stays on its tick and also re-reads the rest of
 * the configuration (*config_due), which may follow the change (an RDMA
 * port's state follows its netdev's carrier).  True when the notification
 * needs a whole configuration poll now (objects came or went); *origin_ns
 * is then when it arrived.
 */
static bool wait_events(struct serve *s, int64_t deadline, bool *config_due, int64_t *origin_ns)
{
	struct pollfd pfd[RW_MAX_COLLECTORS];
	int fds[RW_MAX_COLLECTORS], idx[RW_MAX_COLLECTORS];
	int n = daemon_event_fds(s->d, fds, idx, RW_MAX_COLLECTORS);
	bool dirty = false;

	for (int i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	while (!rw_sig_stop) {
		int64_t now = mono_ns(), left = deadline - now;
		int r;

		if (left <= 0)
			break;
		r = poll(pfd, (nfds_t)n, (int)((left + 999999) / 1000000));
		if (r < 0 && errno != EINTR)
			break;
		now = mono_ns(); /* the notification's arrival: where its alert's latency starts */
		for (int i = 0; r > 0 && i < n; i++) {
			if (!(pfd[i].revents & POLLIN) || !daemon_event(s->d, idx[i]))
				continue;
			if (dirty || daemon_event_pass(s->d, idx[i], now)) {
				if (!dirty)
					*origin_ns = now;
				dirty = true;
				continue;
			}
			*config_due = true;
			publish(s);
		}
		if (dirty)
			break; /* objects came or went: poll everything now, not at the next tick */
	}
	return dirty;
}

/* --web.listen-address: a malformed address is bad usage (2); one that cannot be bound, 1 */
static int opt_listen(const struct cli_opt *o, void *member, const char *arg)
{
	char host[256];
	int port;

	(void)o;
	if (http_parse_listen(arg, host, sizeof(host), &port))
		return CLI_BAD;
	*(const char **)member = arg;
	return 0;
}

static int opt_telemetry_path(const struct cli_opt *o, void *member, const char *arg)
{
	(void)o;
	if (arg[0] != '/' || strspn(arg, "/") == strlen(arg) || strpbrk(arg, "?# "))
		return CLI_BAD;
	*(const char **)member = arg;
	return 0;
}

/* --record.ethtool-include: one pattern, the last one given. */
static int opt_rec_ethtool(const struct cli_opt *o, void *member, const char *arg)
{
	struct serve_regex *r = member;
	char flag[64];

	snprintf(flag, sizeof(flag), "--%s", o->name);
	if (r->has)
		regfree(&r->re);
	r->has = false;
	if (config_regex(&r->re, flag, arg))
		return -EINVAL;
	r->has = true;
	return 0;
}

#define REC_DURATION(n, member, mv, text)                                       \
	{                                                                       \
		.name = n, CLI_DURATION_AT(struct serve, member),               \
		.bad = "a duration (e.g. 24h, 5m)", .metavar = mv, .help = text \
	}
static const struct cli_opt serve_opts[] = {
	{ .name = "web.listen-address",
	  CLI_CALL_AT(struct serve, listen_addr, opt_listen),
	  .bad = "[HOST]:PORT",
	  .metavar = "[HOST]:PORT",
	  .help = "   where to listen (default :9479, every\n"
		  "address)" },
	{ .name = "web.telemetry-path",
	  CLI_CALL_AT(struct serve, telemetry_path, opt_telemetry_path),
	  .bad = "a path other than / (e.g. /metrics)",
	  .metavar = "PATH",
	  .help = "where the metrics are served (default /metrics)" },
	{ .name = "web.config.file",
	  CLI_STRING_AT(struct serve, web_file),
	  .metavar = "FILE",
	  .help = "TLS, client certificates, basic auth, headers and a\n"
		  "rate limit, in the Prometheus exporter-toolkit\n"
		  "format (docs/web-config.md)" },
	{ .name = "web.enable-capture-api",
	  CLI_FLAG_AT(struct serve, capture_api),
	  .help = "allow POST /api/v1/capture (off: 403)" },
	{ .name = "web.enable-probe-api",
	  CLI_FLAG_AT(struct serve, probe_api),
	  .help = "with --probe: take fleet probe plans (POST\n"
		  "/api/v1/probe/plan; off: 403), behind the web\n"
		  "config's TLS and basic auth" },
	{ .name = "web.read-timeout",
	  CLI_DURATION_AT(struct serve, hopts.read_timeout_ns),
	  .min = 100000000LL,
	  .max = 3600000000000LL,
	  .bad = "a duration from 100ms to 1h",
	  .metavar = "DURATION",
	  .help = "   a request must arrive whole within this (10s)" },
	{ .name = "web.max-connections",
	  CLI_COUNT_AT(struct serve, hopts.max_connections),
	  .min = 4,
	  .max = 65536,
	  .bad = "a number from 4 to 65536",
	  .metavar = "N",
	  .help = "connections at once (512; a sixth per address;\n"
		  "when full, an idle one of the fullest address\n"
		  "makes room)" },
	{ .name = "user",
	  CLI_STRING_AT(struct serve, user),
	  .metavar = "NAME",
	  .help = "run as this user after setup (started as root)" },
	{ .name = "interval",
	  CLI_DURATION_AT(struct serve, cfg.interval_ns),
	  .min = 1,
	  .floor = 100000000LL,
	  .floor_text = "100ms",
	  .bad = "a duration (e.g. 1s, 500ms)",
	  .metavar = "DURATION",
	  .help = "fast loop: counters (default 1s, at least 100ms)" },
	{ .name = "config-interval",
	  CLI_DURATION_AT(struct serve, cfg.config_interval_ns),
	  .min = 1,
	  .bad = "a duration (e.g. 1s, 500ms)",
	  .metavar = "DURATION",
	  .help = "slow loop: configuration (default 15s)" },
	{ .name = "record",
	  CLI_STRING_AT(struct serve, rec_opts.dir),
	  .metavar = "DIR",
	  .help = "flight recorder: keep changed counters and every\n"
		  "configuration change in DIR/rocewatch.db" },
	REC_DURATION("record.retention", rec_opts.retention_ns, "DURATION",
		     "   keep this much history (default 24h)"),
	{ .name = "record.max-size",
	  CLI_SIZE_AT(struct serve, rec_opts.max_size),
	  .min = REC_MIN_MAX_SIZE,
	  .bad = "a size of at least 256KiB (e.g. 256MiB, 1G)",
	  .metavar = "BYTES",
	  .help = "keep the database under this size (default 256MiB)" },
	REC_DURATION("record.capture-before", rec_opts.capture_before_ns,
		     "DURATION / --record.capture-after DURATION",
		     "\nwindow of a capture around its trigger (5m / 1m)"),
	REC_DURATION("record.capture-after", rec_opts.capture_after_ns, NULL, NULL),
	REC_DURATION("record.capture-retention", rec_opts.capture_retention_ns,
		     "DURATION / --record.capture-max-size BYTES",
		     "\ndelete capture files older than this / the oldest\n"
		     "while they take more than this (7d / 256MiB)"),
	{ .name = "record.capture-max-size",
	  CLI_SIZE_AT(struct serve, rec_opts.capture_max_size),
	  .bad = "a size (e.g. 256MiB, 1G; 0 for no bound)" },
	REC_DURATION("record.capture-min-interval", capture_min_interval_ns, "DURATION",
		     "  POST /api/v1/capture at most once per\n"
		     "this (1m; 429 in between)"),
	{ .name = "record.ethtool-include",
	  CLI_CALL_AT(struct serve, rec_ethtool, opt_rec_ethtool),
	  .metavar = "REGEX",
	  .help = "   also record these driver stats (default: the\n"
		  "--collector.ethtool.include ones)" },
	{ .name = "nfd.feature-file",
	  CLI_STRING_AT(struct serve, nfd_path),
	  .metavar = "PATH",
	  .help = "keep a Node Feature Discovery feature file there\n"
		  "(roce-ready, status, ...; see check --format nfd)" },
	{ .name = "probe",
	  CLI_FLAG_AT(struct serve, probe),
	  .help = "answer RDMA probes (`rocewatch probe`) on a UD QP\n"
		  "of every RoCE port; its QPN and GID at\n"
		  "/api/v1/probe (off by default)" },
	{ 0 },
};

static const struct cli_opt serve_version_opt[] = {
	{ .name = "version", .kind = CLI_VERSION, .help = "print the version and exit" },
	{ 0 },
};
#undef REC_DURATION

const struct cli_cmd serve_cli = {
	.name = "serve",
	.synopsis = "[OPTIONS]",
	.head = "Run the exporter.  Counters are polled in the background every --interval and\n"
		"configuration every --config-interval (and at once on link notifications);\n"
		"/metrics serves the values of the last poll.\n\n"
		"Options:\n",
	.tail = "\nSignals: SIGTERM/SIGINT stop; SIGHUP reloads rule files; SIGUSR1 writes a\n"
		"capture of the recording (with --record).\n"
		"Exit status: 0 stopped by a signal, 1 could not start (a collector asked for by\n"
		"name, the recording, the listen address taken), 2 bad usage.\n"
		"Endpoints: / (status page: the verdict, what fails and how to fix it, alerts,\n"
		"the last minutes of pause/retry/CNP/discard rates per RDMA port), /metrics,\n"
		"/healthz, /api/v1/state (snapshot JSON),\n"
		"/api/v1/checks (rule results JSON, see docs/rules.md), /api/v1/alerts,\n"
		"/api/v1/probe (the probe QPs, with --probe), /api/v1/probe/plan (fleet probe\n"
		"plans, with --web.enable-probe-api).\n",
	.help_after = cli_print_collectors,
	.tables = { CLI_TABLE(serve_opts), CLI_SUB(probe_serve_opts, struct serve, ps),
		    CLI_SUB(job_serve_opts, struct serve, jobs), CLI_TABLE(serve_version_opt),
		    CLI_SUB(rules_serve_opts, struct serve, rules),
		    CLI_SUB(alerts_serve_opts, struct serve, alerts),
		    CLI_SUB(cli_common_opts, struct serve, cfg) },
};

/* Defaults, before the command line: 0, or -ENOMEM. */
static int serve_init(struct serve *s)
{
	config_defaults(&s->cfg);
	alerts_serve_init(&s->alerts);
	probe_serve_init(&s->ps);
	recorder_opts_defaults(&s->rec_opts);
	s->capture_min_interval_ns = 60LL * 1000000000LL;
	s->listen_addr = ":9479";
	s->telemetry_path = "/metrics";
	pthread_mutex_init(&s->capture_lock, NULL);
	return 0;
}

/* The endpoints; /metrics at --web.telemetry-path. */
static void serve_routes(struct serve *s)
{
	const struct http_route routes[] = {
		{ "/", HTTP_GET, "text/html; charset=utf-8", DOC_STATUS, status_serve_render,
		  &s->status },
		{ "/metrics", HTTP_GET, "text/plain; version=0.0.4; charset=utf-8", DOC_METRICS,
		  render_metrics, s },
		{ "/healthz", HTTP_GET, "text/plain; charset=utf-8", -1, render_healthz, s },
		{ "/api/v1/state", HTTP_GET, "application/json", DOC_STATE, render_state, s },
		{ "/api/v1/checks", HTTP_GET, "application/json", DOC_CHECKS,
		  rules_serve_render_checks, &s->rules },
		{ "/api/v1/alerts", HTTP_GET, "application/json", DOC_ALERTS,
		  alerts_serve_render_json, &s->alerts },
		{ "/api/v1/capture", HTTP_POST, "application/json", -1, render_capture, s },
		{ "/api/v1/probe", HTTP_GET, "application/json", -1, render_probe, s },
		{ "/api/v1/probe/plan", HTTP_POST, "application/json", -1, NULL, s, NULL,
		  PLAN_MAX_BODY, render_plan_post },
		{ "/api/v1/probe/plan", HTTP_GET, "text/plain; charset=utf-8", -1, NULL, s,
		  render_plan_get },
		{ "/api/v1/health/reset", HTTP_POST, "application/json", -1, NULL, &s->rules,
		  rules_serve_render_reset },
	};

	_Static_assert(sizeof(routes) == sizeof(s->routes), "serve: routes[] size");
	memcpy(s->routes, routes, sizeof(routes));
}

/* What the flags say together, and the web config: 0 or -EINVAL (printed; bad usage). */
static int serve_validate(struct serve *s)
{
	char err[512] = "";

	if (s->ps.peers.n && !s->probe) {
		fprintf(stderr, "rocewatch serve: --probe.peers needs --probe (the probes leave "
				"from the responder's QP)\n");
		return -EINVAL;
	}
	if (s->probe_api && !s->probe)
		log_warn("--web.enable-probe-api without --probe: POST /api/v1/probe/plan answers "
			 "404 (no responder to run a plan)");
	if (s->cfg.config_interval_ns < s->cfg.interval_ns)
		s->cfg.config_interval_ns = s->cfg.interval_ns;
	for (size_t i = 0; i < ARRAY_SIZE(s->routes); i++) {
		if (i != 1 && !strcmp(s->routes[i].path, s->telemetry_path)) {
			fprintf(
			    stderr,
			    "rocewatch serve: --web.telemetry-path: %s is already an endpoint\n",
			    s->telemetry_path);
			return -EINVAL;
		}
	}
	s->routes[1].path = s->telemetry_path; /* the /metrics entry */
	s->hopts.listen_addr = s->listen_addr;
	/* Before anything starts: a bad web config must not leave a server half up. */
	if (!s->web_file)
		return 0;
	if (web_config_load(&s->web, s->web_file, err, sizeof(err))) {
		fprintf(stderr, "rocewatch serve: --web.config.file: %s\n", err);
		web_config_free(&s->web);
		return -EINVAL;
	}
	s->has_web = true;
	s->hopts.web = &s->web;
	/*
	 * As in exporter-toolkit, a file that sets neither TLS nor users is valid
	 * (Go logs "TLS is disabled" at info).  But asking for a web config and
	 * getting plain HTTP open to anyone is what an empty template, a comment
	 * left in, or a bare tls_server_config: gives: say so, loudly.
	 */
	if (!s->web.tls && !web_config_auth(&s->web))
		log_warn("--web.config.file %s sets neither TLS (tls_server_config with "
			 "cert_file and key_file) nor basic_auth_users: serving plain HTTP "
			 "with no authentication",
			 s->web_file);
	/* The certificate, key and CA too: a bad file is a bad configuration. */
	if (s->web.tls) {
		struct web_tls *t;

		if (web_tls_new(&t, &s->web, err, sizeof(err))) {
			fprintf(stderr, "rocewatch serve: --web.config.file: %s\n", err);
			return -EINVAL;
		}
		web_tls_free(t);
	}
	return 0;
}

/*
 * What a stage hands the daemon: its hooks, in the order they run after
 * every poll.  The pipeline adds them (serve_setup()); a stage never does.
 */
#define STAGE_MAX_HOOKS 2
struct stage_hooks {
	struct daemon_hook h[STAGE_MAX_HOOKS];
	int n;
};

/* The model source and the daemon over it; the hooks' room, sized from the pipeline. */
static int pipeline_hooks(void);

static int stage_source(struct serve *s, struct stage_hooks *out)
{
	struct model_source *src;
	char err[512] = "";
	int r;

	(void)out;
	r = model_source_open(&src, &s->cfg, err, sizeof(err));
	if (!r) {
		r = daemon_open(&s->d, &s->cfg, src);
		if (!r)
			r = daemon_start(s->d, err, sizeof(err));
	}
	if (!r && (r = daemon_reserve_hooks(s->d, pipeline_hooks())))
		snprintf(err, sizeof(err), "out of memory");
	if (r) {
		fprintf(stderr, "rocewatch serve: %s\n", err[0] ? err : strerror(-r));
		return r;
	}
	daemon_set_live_time(s->d, true);
	return 0;
}

/* The model and what reads it, after every other stage has stopped. */
static void stop_source(struct serve *s)
{
	daemon_close(s->d);
	s->d = NULL;
	status_serve_fini(&s->status); /* after the daemon: its hook feeds the history */
	prom_renderer_free(&s->pr);
	sb_free(&s->nfd_body);
	sb_free(&s->nfd_file);
}

/* As root still: the port may be privileged, the key file root's own. */
static int stage_listen(struct serve *s, struct stage_hooks *out)
{
	char err[512] = "";
	int r;

	(void)out;
	r = http_start(&s->http, &s->hopts, s->routes, ARRAY_SIZE(s->routes), err, sizeof(err));
	if (r)
		fprintf(stderr, "rocewatch serve: %s\n", err);
	return r;
}

static void stop_http(struct serve *s)
{
	http_stop(s->http);
	s->http = NULL;
}

/* No RDMA port to answer on is a start-up error, said before anything runs. */
static int stage_probe_open(struct serve *s, struct stage_hooks *out)
{
	char err[512] = "";
	int r;

	(void)out;
	if (!s->probe)
		return 0;
	r = probe_responder_open(&s->responder, err, sizeof(err));
	if (r)
		fprintf(stderr, "rocewatch serve: --probe: %s\n", err);
	return r;
}

static void stop_probe(struct serve *s)
{
	probe_serve_fini(&s->ps); /* its thread hands the responder peer info */
	s->ps.r = NULL;
	probe_responder_stop(s->responder); /* after HTTP: /api/v1/probe reads it */
	s->responder = NULL;
}

/* Setup is done and no thread exists yet: keep what the collectors still use. */
static int stage_privdrop(struct serve *s, struct stage_hooks *out)
{
	struct priv_needs pn;
	bool running[RW_MAX_COLLECTORS];
	char err[512] = "";
	int r;

	(void)out;
	daemon_running(s->d, running);
	priv_needs_of(&pn, &s->cfg, running, s->user);
	r = priv_drop(&pn, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch serve: %s\n", err);
		return r;
	}
	priv_describe(&pn, s->caps, sizeof(s->caps));
	return 0;
}

static int stage_rules(struct serve *s, struct stage_hooks *out)
{
	if (rules_serve_start(&s->rules, s->d))
		return -EIO;
	out->h[out->n++] = rules_serve_hook(&s->rules);
	return 0;
}

/* A SIGHUP reload in flight takes the daemon's lock: join it before the daemon goes. */
static void stop_rules(struct serve *s)
{
	rules_serve_stop(&s->rules);
}

/* After the rules' hook: this poll's results. */
static int stage_nfd(struct serve *s, struct stage_hooks *out)
{
	if (s->nfd_path)
		out->h[out->n++] =
		    (struct daemon_hook){ .name = "nfd", .after_poll = nfd_after_poll, .arg = s };
	return 0;
}

/* The recorder and its two hooks, after the rules' hook: 0 or -errno (printed). */
static int stage_recorder(struct serve *s, struct stage_hooks *out)
{
	char err[512] = "";
	int r;

	if (!s->rec_opts.dir)
		return 0;
	s->rec_opts.interval_ns = s->cfg.interval_ns;
	s->rr.rs = &s->rules;
	s->rec_opts.rule_results = recorder_rules_results;
	s->rec_opts.rule_results_arg = &s->rr;
	s->rec_opts.ethtool_include = s->rec_ethtool.has	   ? &s->rec_ethtool.re
				      : s->cfg.has_ethtool_include ? &s->cfg.ethtool_include
								   : NULL;
	r = recorder_open(&s->rec, &s->rec_opts, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch serve: %s\n", err);
		return r;
	}
	s->rr.rec = s->rec;
	/* after the rules' hook, before the recorder's: outcome changes join this poll */
	out->h[out->n++] = (struct daemon_hook){ .name = "recorder-rules",
						 .after_poll = recorder_rules_after_poll,
						 .arg = &s->rr };
	out->h[out->n++] = (struct daemon_hook){ .name = "recorder",
						 .after_poll = recorder_after_poll,
						 .render = recorder_render,
						 .arg = s->rec };
	return 0;
}

static void stop_recorder(struct serve *s)
{
	recorder_close(s->rec); /* after HTTP (POST /api/v1/capture uses it), before the model */
	s->rec = NULL;
	recorder_rules_fini(&s->rr);
}

/* Before the server answers: GET / reads what it sets up. */
static int stage_status(struct serve *s, struct stage_hooks *out)
{
	if (status_serve_start(&s->status, s->d, &s->rules, &s->alerts, s->telemetry_path))
		return -EIO;
	out->h[out->n++] = status_serve_hook(&s->status);
	return 0;
}

/* The probe responder and, with peers, the probes to them: 0 or -errno (printed). */
static int stage_probe(struct serve *s, struct stage_hooks *out)
{
	char err[512] = "";
	int r, dscp;

	if (s->responder && s->ps.peers.n) {
		/* the traffic class the jobs use: the profiles' roce_dscp */
		r = probe_profile_dscp(s->rules.e, &dscp, NULL);
		if (r || (r = probe_serve_setup(&s->ps, s->responder, dscp))) {
			fprintf(stderr, "rocewatch serve: --probe.peers: %s\n",
				r == -ENOENT ? "the profiles have no roce_dscp parameter"
					     : strerror(-r));
			return r;
		}
	}
	if (s->responder && probe_responder_run(s->responder, err, sizeof(err))) {
		fprintf(stderr, "rocewatch serve: --probe: %s\n", err);
		return -EIO;
	}
	probe_serve_attach(&s->ps, s->responder);
	if (probe_serve_start(&s->ps, &out->h[out->n], &r))
		return -EIO;
	out->n += r;
	return 0;
}

static int stage_alerts(struct serve *s, struct stage_hooks *out)
{
	if (alerts_serve_start(&s->alerts, s->d, &s->rules, s->rec, http_port(s->http)))
		return -EIO;
	out->h[out->n++] = alerts_serve_hook(&s->alerts);
	return 0;
}

static void stop_alerts(struct serve *s)
{
	alerts_serve_fini(&s->alerts); /* the pusher thread; no poll runs any more */
}

/* The jobs on this node (roce_job_info), read before the first scrape. */
static int stage_jobs(struct serve *s, struct stage_hooks *out)
{
	out->n += job_serve_start(&s->jobs, &out->h[out->n]);
	return 0;
}

/* Last: from here on requests are answered, and every document has its source. */
static int stage_http(struct serve *s, struct stage_hooks *out)
{
	char err[512] = "";
	int r = http_run(s->http, err, sizeof(err));

	(void)out;
	if (r)
		fprintf(stderr, "rocewatch serve: %s\n", err);
	return r;
}

/* Up: the signals are ours, and the log says how serve runs. */
static int stage_announce(struct serve *s, struct stage_hooks *out)
{
	(void)out;
	daemon_install_signals();
	log_info("listening on %s (port %d, %s%s), polling every %.3f s, configuration every "
		 "%.3f s; capabilities kept: %s",
		 s->listen_addr, http_port(s->http), http_tls(s->http) ? "https" : "http",
		 web_config_auth(s->has_web ? &s->web : NULL) ? ", basic auth" : "",
		 (double)s->cfg.interval_ns / 1e9, (double)s->cfg.config_interval_ns / 1e9,
		 s->caps);
	return 0;
}

/*
 * serve, every step in order: the source and the daemon, the listening
 * socket (as root), the probe responder's QP, the privilege drop, then the
 * stages whose hooks run after every poll in this order -- the rules first,
 * then what reads their results (the NFD file, the recorder, the status
 * page, the alerts) -- and last the server that answers.  A stage returns
 * its hooks (at most .hooks of them), and serve_setup() adds them; a hook
 * that cannot be added is said as "rocewatch serve: .hook_err: why".
 * Teardown is the table read backwards: the server stops answering first,
 * the model goes last.  Every stop is safe when its start failed or never ran.
 */
struct serve_stage {
	const char *name;
	int hooks;	      /* at most this many daemon hooks */
	const char *hook_err; /* what a hook that cannot be added is said as */
	int (*start)(struct serve *s, struct stage_hooks *out); /* 0 or -errno, said */
	void (*stop)(struct serve *s);
};

static const struct serve_stage serve_pipeline[] = {
	{ "source", 0, NULL, stage_source, stop_source },
	{ "listen", 0, NULL, stage_listen, NULL },	   /* closed by "http"'s stop */
	{ "probe-open", 0, NULL, stage_probe_open, NULL }, /* closed by "probe"'s stop */
	{ "privdrop", 0, NULL, stage_privdrop, NULL },
	{ "rules", 1, "cannot hook the rules into the poll loop", stage_rules, stop_rules },
	{ "nfd", 1, "--nfd.feature-file", stage_nfd, NULL },
	{ "recorder", 2, "recorder", stage_recorder, stop_recorder },
	{ "status", 1, "cannot hook the status page into the poll loop", stage_status, NULL },
	{ "probe", 1, "--probe", stage_probe, stop_probe },
	{ "alerts", 1, "cannot hook alerts into the poll loop", stage_alerts, stop_alerts },
	{ "jobs", 1, "--job-mapping-dir", stage_jobs, NULL },
	{ "http", 0, NULL, stage_http, stop_http },
	{ "announce", 0, NULL, stage_announce, NULL },
};

static int pipeline_hooks(void)
{
	int n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(serve_pipeline); i++)
		n += serve_pipeline[i].hooks;
	return n;
}

/* Every stage in order, its hooks added after it: 0 or -errno (printed). */
static int serve_setup(struct serve *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(serve_pipeline); i++) {
		const struct serve_stage *st = &serve_pipeline[i];
		struct stage_hooks out = { .n = 0 };
		int r = st->start(s, &out);

		if (r)
			return r;
		for (int k = 0; k < out.n; k++) {
			/* more than the table says: the room was sized without them */
			r = k < st->hooks ? daemon_add_hook(s->d, &out.h[k]) : -ENOSPC;
			if (r) {
				fprintf(stderr, "rocewatch serve: %s: %s\n", st->hook_err,
					strerror(-r));
				return r;
			}
		}
	}
	return 0;
}

/* What a signal asks for between polls. */
static void serve_signals(struct serve *s)
{
	if (rw_sig_usr1) {
		rw_sig_usr1 = 0;
		if (s->rec)
			recorder_capture(s->rec, "sigusr1", NULL, 0);
		else
			log_warn("SIGUSR1: no capture without --record DIR");
	}
	if (rw_sig_hup) {
		/* parsed on its own thread: the next poll is not delayed by it */
		rw_sig_hup = 0;
		rules_serve_reload(&s->rules);
	}
}

/* The two loops, until SIGTERM/SIGINT. */
static void serve_run(struct serve *s)
{
	int64_t next_fast = mono_ns(), next_slow = next_fast, origin = 0;
	bool dirty = true, early = false, config_due = false;

	while (!rw_sig_stop) {
		int64_t now = mono_ns();
		unsigned what = COLLECT_FAST;

		daemon_model_lock(s->d); /* a scrape renders the stats meanwhile */
		daemon_stats(s->d)->lag_seconds =
		    now > next_fast ? (double)(now - next_fast) / 1e9 : 0;
		daemon_model_unlock(s->d);
		if (dirty || config_due || now >= next_slow) {
			what |= COLLECT_SLOW;
			next_slow = now + s->cfg.config_interval_ns;
		}
		config_due = false;
		daemon_collect_at(s->d, what, early ? origin : 0);
		publish(s);
		/*
		 * A burst of connections (a thread each) leaves freed memory in the
		 * allocator, resident for good: give it back on configuration polls.
		 */
		if (what & COLLECT_SLOW)
			malloc_trim(0);
		serve_signals(s);
		/*
		 * Only a poll on the tick moves the tick: an early one (a notification) must not,
		 * or a burst of link events would push the next counter poll out by an interval
		 * per event and /healthz would call us stalled.
		 */
		if (!early)
			next_fast += s->cfg.interval_ns;
		now = mono_ns();
		if (next_fast <= now) {
			/* Overran: skip the missed ticks rather than bursting to catch up. */
			daemon_model_lock(s->d);
			daemon_stats(s->d)->overruns++;
			daemon_model_unlock(s->d);
			next_fast = now + s->cfg.interval_ns;
		}
		dirty = early = wait_events(s, next_fast, &config_due, &origin);
	}
	log_info("stopping");
}

/* Undo serve_setup(): the pipeline backwards. */
static void serve_teardown(struct serve *s)
{
	for (size_t i = ARRAY_SIZE(serve_pipeline); i-- > 0;)
		if (serve_pipeline[i].stop)
			serve_pipeline[i].stop(s);
}

/* What parsing and validation hold. */
static void serve_free(struct serve *s)
{
	probe_serve_fini(&s->ps);    /* a no-op after teardown; the peer list when not */
	rules_serve_fini(&s->rules); /* after the daemon: its hook points here */
	if (s->rec_ethtool.has)
		regfree(&s->rec_ethtool.re);
	if (s->has_web)
		web_config_free(&s->web); /* after the server: it reads it */
	config_free(&s->cfg);
	pthread_mutex_destroy(&s->capture_lock);
	free(s);
}

int cmd_serve(int argc, char **argv)
{
	struct serve *s = calloc(1, sizeof(*s));
	int rc = 2, r, first;

	/*
	 * HTTP serves a thread per connection, and glibc gives threads arenas of
	 * their own (up to 8 a core), each keeping what it once held: two arenas
	 * are plenty for a poll loop and a few scrapes.
	 */
	mallopt(M_ARENA_MAX, 2);
	if (!s) {
		fprintf(stderr, "rocewatch serve: out of memory\n");
		return 1;
	}
	serve_init(s);
	serve_routes(s);
	r = cli_parse(&serve_cli, s, argc, argv, &first);
	if (r == 1)
		rc = 0;
	if (r)
		goto out;
	if (first < argc) {
		fprintf(stderr, "rocewatch serve: unexpected argument '%s'\n", argv[first]);
		goto out;
	}
	if (serve_validate(s))
		goto out;
	rc = 1;
	if (!serve_setup(s)) {
		serve_run(s);
		rc = 0;
	}
	serve_teardown(s);
out:
	serve_free(s);
	return rc;
}
