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
#include "commands.h"
#include "daemon.h"
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

enum {
	OPT_LISTEN = OPT__COMMON_END + 1,
	OPT_INTERVAL,
	OPT_CONFIG_INTERVAL,
	OPT_RECORD,
	OPT_RECORD_RETENTION,
	OPT_RECORD_MAX_SIZE,
	OPT_RECORD_CAPTURE_BEFORE,
	OPT_RECORD_CAPTURE_AFTER,
	OPT_RECORD_ETHTOOL,
	OPT_TELEMETRY_PATH,
	OPT_VERSION,
	OPT_NFD_FILE,
	OPT_RECORD_CAPTURE_RETENTION,
	OPT_RECORD_CAPTURE_MAX_SIZE,
	OPT_RECORD_CAPTURE_MIN_INTERVAL,
	OPT_WEB_CONFIG,
	OPT_WEB_CAPTURE_API,
	OPT_WEB_READ_TIMEOUT,
	OPT_WEB_MAX_CONNECTIONS,
	OPT_USER,
	OPT_PROBE,
	OPT_PROBE_PEERS,
	OPT_PROBE_INTERVAL,
};

static const char serve_usage[] =
    "Usage: rocewatch serve [OPTIONS]\n\n"
    "Run the exporter.  Counters are polled in the background every --interval and\n"
    "configuration every --config-interval (and at once on link notifications);\n"
    "/metrics serves the values of the last poll.\n\n"
    "Options:\n"
    "  --web.listen-address [HOST]:PORT   where to listen (default :9479, every\n"
    "                             address)\n"
    "  --web.telemetry-path PATH  where the metrics are served (default /metrics)\n"
    "  --web.config.file FILE     TLS, client certificates, basic auth, headers and a\n"
    "                             rate limit, in the Prometheus exporter-toolkit\n"
    "                             format"
    " (docs/web-config.md)\n"
    "  --web.enable-capture-api   allow POST /api/v1/capture (off: 403)\n"
    "  --web.read-timeout DURATION   a request must arrive whole within this (10s)\n"
    "  --web.max-connections N    connections at once (512; a quarter per address)\n"
    "  --user NAME                run as this user after setup (started as root)\n"
    "  --interval DURATION        fast loop: counters (default 1s, at least 100ms)\n"
    "  --config-interval DURATION slow loop: configuration (default 15s)\n"
    "  --record DIR               flight recorder: keep changed counters and every\n"
    "                             configuration change in DIR/rocewatch.db\n"
    "  --record.retention DURATION   keep this much history (default 24h)\n"
    "  --record.max-size BYTES    keep the database under this size (default 256MiB)\n"
    "  --record.capture-before DURATION / --record.capture-after DURATION\n"
    "                             window of a capture around its trigger (5m / 1m)\n"
    "  --record.capture-retention DURATION / --record.capture-max-size BYTES\n"
    "                             delete capture files older than this / the oldest\n"
    "                             while they take more than this (7d / 256MiB)\n"
    "  --record.capture-min-interval DURATION  POST /api/v1/capture at most once per\n"
    "                             this (1m; 429 in between)\n"
    "  --record.ethtool-include REGEX   also record these driver stats (default: the\n"
    "                             --collector.ethtool.include ones)\n"
    "  --nfd.feature-file PATH    keep a Node Feature Discovery feature file there\n"
    "                             (roce-ready, status, ...; see check --format nfd)\n"
    "  --probe                    answer RDMA probes (`rocewatch probe`) on a UD QP\n"
    "                             of every RoCE port; its QPN and GID at\n"
    "                             /api/v1/probe (off by default)\n" PROBE_SERVE_HELP
    "  --version                  print the version and exit\n" RULES_SERVE_HELP ALERTS_SERVE_HELP
	COMMON_OPTIONS_HELP
    "\nSignals: SIGTERM/SIGINT stop; SIGHUP reloads rule files; SIGUSR1 writes a\n"
    "capture of the recording (with --record).\n"
    "Exit status: 0 stopped by a signal, 1 could not start (a collector asked for by\n"
    "name, the recording, the listen address taken), 2 bad usage.\n"
    "Endpoints: / (status page: the verdict, what fails and how to fix it, alerts,\n"
    "the last minutes of pause/retry/CNP/discard rates per RDMA port), /metrics,\n"
    "/healthz, /api/v1/state (snapshot JSON),\n"
    "/api/v1/checks (rule results JSON, see docs/rules.md), /api/v1/alerts,\n"
    "/api/v1/probe (the probe QPs, with --probe).\n";

struct serve {
	struct daemon d;
	struct http_server *http;
	struct prom_renderer pr;
	struct recorder *rec;
	struct recorder_opts rec_opts;
	regex_t rec_ethtool;
	bool has_rec_ethtool;
	struct recorder_rules rr;
	struct rules_serve rules;
	struct alerts_serve alerts;
	struct status_serve status;
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
	bool probe;
	struct probe_responder *responder;
	struct probe_serve ps;
};

/* How long NFD keeps the labels without a rewrite: several slow polls, at least 5 min. */
static int64_t nfd_ttl_ns(const struct serve *s)
{
	int64_t t = 4 * s->d.cfg->config_interval_ns;

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
	if (!s->rules.e)
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
	int r;

	json_t *members = json_object();

	pthread_mutex_lock(&s->d.lock);
	if (members && probe)
		json_object_set(members, "probe", probe);
	/* the node's health verdict beside the model (docs/snapshot.md) */
	if (members && s->rules.e)
		json_object_set_new(members, "health", rules_health_json(s->rules.e));
	json_decref(probe);
	r = snapshot_write_members(out, &s->d.m, 1, members);
	pthread_mutex_unlock(&s->d.lock);
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
	int64_t last = __atomic_load_n(&s->d.stats.last_poll_ns, __ATOMIC_RELAXED);
	int64_t age = real_ns() - last;

	/* Stalled: no poll finished for three fast intervals. */
	if (!last || age > 3 * s->d.cfg->interval_ns) {
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

	pthread_mutex_lock(&s->d.lock);
	if (!s->d.stats.fast_polls) {
		pthread_mutex_unlock(&s->d.lock);
		sb_puts(out, "no data yet: the first poll has not finished\n");
		return 503;
	}
	r = daemon_render_metrics(&s->d, &s->pr, out);
	pthread_mutex_unlock(&s->d.lock);
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

/* Wait until deadline (monotonic ns) for a notification or a signal. */
static bool wait_events(struct serve *s, int64_t deadline)
{
	struct pollfd pfd[RW_MAX_COLLECTORS];
	int fds[RW_MAX_COLLECTORS], idx[RW_MAX_COLLECTORS];
	int n = daemon_event_fds(&s->d, fds, idx, RW_MAX_COLLECTORS);
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
		for (int i = 0; r > 0 && i < n; i++)
			if (pfd[i].revents & POLLIN)
				dirty |= daemon_event(&s->d, idx[i]);
		if (dirty)
			break; /* configuration changed: poll now, not at the next tick */
	}
	return dirty;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option own[] = {
		{ "web.listen-address", required_argument, NULL, OPT_LISTEN },
		{ "web.telemetry-path", required_argument, NULL, OPT_TELEMETRY_PATH },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "nfd.feature-file", required_argument, NULL, OPT_NFD_FILE },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "config-interval", required_argument, NULL, OPT_CONFIG_INTERVAL },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "record.retention", required_argument, NULL, OPT_RECORD_RETENTION },
		{ "record.max-size", required_argument, NULL, OPT_RECORD_MAX_SIZE },
		{ "record.capture-before", required_argument, NULL, OPT_RECORD_CAPTURE_BEFORE },
		{ "record.capture-after", required_argument, NULL, OPT_RECORD_CAPTURE_AFTER },
		{ "record.ethtool-include", required_argument, NULL, OPT_RECORD_ETHTOOL },
		{ "record.capture-retention", required_argument, NULL,
		  OPT_RECORD_CAPTURE_RETENTION },
		{ "record.capture-max-size", required_argument, NULL, OPT_RECORD_CAPTURE_MAX_SIZE },
		{ "record.capture-min-interval", required_argument, NULL,
		  OPT_RECORD_CAPTURE_MIN_INTERVAL },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "web.enable-capture-api", no_argument, NULL, OPT_WEB_CAPTURE_API },
		{ "web.read-timeout", required_argument, NULL, OPT_WEB_READ_TIMEOUT },
		{ "web.max-connections", required_argument, NULL, OPT_WEB_MAX_CONNECTIONS },
		{ "user", required_argument, NULL, OPT_USER },
		{ "probe", no_argument, NULL, OPT_PROBE },
		{ "probe.peers", required_argument, NULL, OPT_PROBE_PEERS },
		{ "probe.interval", required_argument, NULL, OPT_PROBE_INTERVAL },
		RULES_SERVE_OPTIONS,
		ALERTS_SERVE_OPTIONS,
		{ 0 },
	};
	struct rw_config cfg;
	struct serve *s = calloc(1, sizeof(*s));
	struct option *opts = cli_options(own);
	const char *listen_addr = ":9479", *telemetry_path = "/metrics", *web_file = NULL;
	struct priv_needs pn;
	char err[512] = "", caps[128];
	int opt, idx, rc = 2, r;
	bool daemon_up = false;
	int64_t next_fast, next_slow;

	/*
	 * HTTP serves a thread per connection, and glibc gives threads arenas of
	 * their own (up to 8 a core), each keeping what it once held: two arenas
	 * are plenty for a poll loop and a few scrapes.
	 */
	mallopt(M_ARENA_MAX, 2);
	if (!s || !opts) {
		fprintf(stderr, "rocewatch serve: out of memory\n");
		free(s);
		free(opts);
		return 1;
	}
	struct http_route routes[] = {
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
	};

	config_defaults(&cfg);
	alerts_serve_init(&s->alerts);
	probe_serve_init(&s->ps);
	s->rec_opts = (struct recorder_opts){
		.retention_ns = REC_DEFAULT_RETENTION_NS,
		.max_size = REC_DEFAULT_MAX_SIZE,
		.capture_before_ns = REC_DEFAULT_CAPTURE_BEFORE_NS,
		.capture_after_ns = REC_DEFAULT_CAPTURE_AFTER_NS,
		.capture_retention_ns = REC_DEFAULT_CAPTURE_RETENTION_NS,
		.capture_max_size = REC_DEFAULT_CAPTURE_MAX_SIZE,
	};
	s->capture_min_interval_ns = 60LL * 1000000000LL;
	pthread_mutex_init(&s->capture_lock, NULL);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, &idx)) != -1) {
		int64_t ns;

		switch (opt) {
		case 'h':
			fputs(serve_usage, stdout);
			cli_print_collectors(stdout);
			rc = 0;
			goto free_opts;
		case OPT_VERSION:
			cli_print_version();
			rc = 0;
			goto free_opts;
		case OPT_LISTEN: {
			char host[256];
			int port;

			/* a malformed address is bad usage (2); one that cannot be bound, 1 */
			if (http_parse_listen(optarg, host, sizeof(host), &port)) {
				fprintf(stderr,
					"rocewatch serve: --web.listen-address: '%s' is not "
					"[HOST]:PORT\n",
					optarg);
				goto free_opts;
			}
			listen_addr = optarg;
			continue;
		}
		case OPT_TELEMETRY_PATH:
			if (optarg[0] != '/' || strspn(optarg, "/") == strlen(optarg) ||
			    strpbrk(optarg, "?# ")) {
				fprintf(stderr,
					"rocewatch serve: --web.telemetry-path: '%s' is not a path "
					"other than / (e.g. /metrics)\n",
					optarg);
				goto free_opts;
			}
			telemetry_path = optarg;
			continue;
		case OPT_INTERVAL:
		case OPT_CONFIG_INTERVAL:
			if (parse_duration(optarg, &ns) || ns <= 0) {
				fprintf(stderr,
					"rocewatch serve: --%s: '%s' is not a duration (e.g. 1s, "
					"500ms)\n",
					opts[idx].name, optarg);
				goto free_opts;
			}
			if (opt == OPT_INTERVAL && ns < 100000000LL) {
				fprintf(stderr,
					"rocewatch serve: --interval: %s is below the minimum of "
					"100ms\n",
					optarg);
				goto free_opts;
			}
			if (opt == OPT_INTERVAL)
				cfg.interval_ns = ns;
			else
				cfg.config_interval_ns = ns;
			continue;
		case OPT_RECORD:
			s->rec_opts.dir = optarg;
			continue;
		case OPT_NFD_FILE:
			s->nfd_path = optarg;
			continue;
		case OPT_RECORD_RETENTION:
		case OPT_RECORD_CAPTURE_BEFORE:
		case OPT_RECORD_CAPTURE_AFTER:
		case OPT_RECORD_CAPTURE_RETENTION:
		case OPT_RECORD_CAPTURE_MIN_INTERVAL:
			if (parse_duration(optarg, &ns) || ns < 0) {
				fprintf(stderr,
					"rocewatch serve: --%s: '%s' is not a duration (e.g. 24h, "
					"5m)\n",
					opts[idx].name, optarg);
				goto free_opts;
			}
			*(opt == OPT_RECORD_RETENTION		? &s->rec_opts.retention_ns
			  : opt == OPT_RECORD_CAPTURE_BEFORE	? &s->rec_opts.capture_before_ns
			  : opt == OPT_RECORD_CAPTURE_AFTER	? &s->rec_opts.capture_after_ns
			  : opt == OPT_RECORD_CAPTURE_RETENTION ? &s->rec_opts.capture_retention_ns
								: &s->capture_min_interval_ns) = ns;
			continue;
		case OPT_RECORD_CAPTURE_MAX_SIZE:
			if (parse_size(optarg, &s->rec_opts.capture_max_size)) {
				fprintf(stderr,
					"rocewatch serve: --record.capture-max-size: '%s' is not a "
					"size (e.g. 256MiB, 1G; 0 for no bound)\n",
					optarg);
				goto free_opts;
			}
			continue;
		case OPT_RECORD_MAX_SIZE:
			if (parse_size(optarg, &s->rec_opts.max_size) ||
			    s->rec_opts.max_size < REC_MIN_MAX_SIZE) {
				fprintf(
				    stderr,
				    "rocewatch serve: --record.max-size: '%s' is not a size of at "
				    "least 256KiB (e.g. 256MiB, 1G)\n",
				    optarg);
				goto free_opts;
			}
			continue;
		case OPT_RECORD_ETHTOOL:
			if (s->has_rec_ethtool)
				regfree(&s->rec_ethtool);
			s->has_rec_ethtool = false;
			if (config_regex(&s->rec_ethtool, "--record.ethtool-include", optarg))
				goto free_opts;
			s->has_rec_ethtool = true;
			continue;
		case OPT_WEB_CONFIG:
			web_file = optarg;
			continue;
		case OPT_WEB_CAPTURE_API:
			s->capture_api = true;
			continue;
		case OPT_WEB_READ_TIMEOUT:
			if (parse_duration(optarg, &ns) || ns < 100000000LL ||
			    ns > 3600000000000LL) {
				fprintf(
				    stderr,
				    "rocewatch serve: --web.read-timeout: '%s' is not a duration "
				    "from 100ms to 1h\n",
				    optarg);
				goto free_opts;
			}
			s->hopts.read_timeout_ns = ns;
			continue;
		case OPT_WEB_MAX_CONNECTIONS: {
			uint64_t n;

			if (parse_u64(optarg, &n) || n < 4 || n > 65536) {
				fprintf(
				    stderr,
				    "rocewatch serve: --web.max-connections: '%s' is not a number "
				    "from 4 to 65536\n",
				    optarg);
				goto free_opts;
			}
			s->hopts.max_connections = (unsigned int)n;
			continue;
		}
		case OPT_USER:
			s->user = optarg;
			continue;
		case OPT_PROBE:
			s->probe = true;
			continue;
		case OPT_PROBE_PEERS:
		case OPT_PROBE_INTERVAL:
			if (probe_serve_option(&s->ps, opt == OPT_PROBE_INTERVAL, optarg))
				goto free_opts;
			continue;
		case OPT_RULES_PROFILE:
		case OPT_RULES_PARAM:
		case OPT_RULES_STATE_DIR:
			if (rules_serve_option(&s->rules, opt, optarg))
				goto free_opts;
			continue;
		case OPT_AM_URL:
		case OPT_AM_RESEND:
		case OPT_AM_TIMEOUT:
		case OPT_ALERT_UNKNOWN_FOR:
			if (alerts_serve_option(&s->alerts, opt, optarg))
				goto free_opts;
			continue;
		case '?':
		case ':':
			cli_bad_option("serve", argv, optind);
			goto free_opts;
		}
		r = cli_common(&cfg, opt, optarg, opts[idx].name);
		if (r)
			goto free_opts;
	}
	if (optind < argc) {
		fprintf(stderr, "rocewatch serve: unexpected argument '%s'\n", argv[optind]);
		goto free_opts;
	}
	if (s->ps.peers.n && !s->probe) {
		fprintf(stderr, "rocewatch serve: --probe.peers needs --probe (the probes leave "
				"from the responder's QP)\n");
		goto free_opts;
	}
	if (cfg.config_interval_ns < cfg.interval_ns)
		cfg.config_interval_ns = cfg.interval_ns;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (i != 1 && !strcmp(routes[i].path, telemetry_path)) {
			fprintf(
			    stderr,
			    "rocewatch serve: --web.telemetry-path: %s is already an endpoint\n",
			    telemetry_path);
			goto free_opts;
		}
	}
	routes[1].path = s->telemetry_path = telemetry_path; /* the /metrics entry */
	/* Before anything starts: a bad web config must not leave a server half up. */
	if (web_file) {
		if (web_config_load(&s->web, web_file, err, sizeof(err))) {
			fprintf(stderr, "rocewatch serve: --web.config.file: %s\n", err);
			web_config_free(&s->web);
			rc = 2;
			goto free_opts;
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
				 web_file);
		/* The certificate, key and CA too: a bad file is a bad configuration. */
		if (s->web.tls) {
			struct web_tls *t;

			if (web_tls_new(&t, &s->web, err, sizeof(err))) {
				fprintf(stderr, "rocewatch serve: --web.config.file: %s\n", err);
				rc = 2;
				goto free_opts;
			}
			web_tls_free(t);
		}
	}
	s->hopts.listen_addr = listen_addr;

	rc = 1;
	r = daemon_init(&s->d, &cfg, err, sizeof(err));
	daemon_up = true;
	if (!r)
		r = daemon_start(&s->d, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch serve: %s\n", err[0] ? err : strerror(-r));
		goto fini;
	}
	s->d.replay_live_time = true;
	/* As root still: the port may be privileged, the key file root's own. */
	r = http_start(&s->http, &s->hopts, routes, sizeof(routes) / sizeof(routes[0]), err,
		       sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch serve: %s\n", err);
		goto fini;
	}
	/* No RDMA port to answer on is a start-up error, said before anything runs. */
	if (s->probe) {
		r = probe_responder_open(&s->responder, err, sizeof(err));
		if (r) {
			fprintf(stderr, "rocewatch serve: --probe: %s\n", err);
			goto fini;
		}
	}
	/* Setup is done and no thread exists yet: keep what the collectors still use. */
	priv_needs_of(&pn, &cfg, s->d.c_ready, s->user);
	r = priv_drop(&pn, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch serve: %s\n", err);
		goto fini;
	}
	priv_describe(&pn, caps, sizeof(caps));
	if (rules_serve_start(&s->rules, &s->d))
		goto fini;
	if (s->nfd_path) /* after the rules' hook: this poll's results */
		daemon_add_hook(&s->d, &(struct daemon_hook){
					   .name = "nfd", .after_poll = nfd_after_poll, .arg = s });
	if (s->rec_opts.dir) {
		s->rec_opts.interval_ns = cfg.interval_ns;
		s->rr.rs = &s->rules;
		s->rec_opts.rule_results = recorder_rules_results;
		s->rec_opts.rule_results_arg = &s->rr;
		s->rec_opts.ethtool_include = s->has_rec_ethtool	? &s->rec_ethtool
					      : cfg.has_ethtool_include ? &cfg.ethtool_include
									: NULL;
		r = recorder_open(&s->rec, &s->rec_opts, err, sizeof(err));
		if (r) {
			fprintf(stderr, "rocewatch serve: %s\n", err);
			goto fini;
		}
		s->rr.rec = s->rec;
		/* after the rules' hook, before the recorder's: outcome changes join this poll */
		daemon_add_hook(&s->d,
				&(struct daemon_hook){ .name = "recorder-rules",
						       .after_poll = recorder_rules_after_poll,
						       .arg = &s->rr });
		daemon_add_hook(&s->d, &(struct daemon_hook){ .name = "recorder",
							      .after_poll = recorder_after_poll,
							      .render = recorder_render,
							      .arg = s->rec });
	}
	/* before the server answers: GET / reads what it sets up */
	if (status_serve_start(&s->status, &s->d, &s->rules, &s->alerts, s->telemetry_path))
		goto fini;
	if (s->responder && s->ps.peers.n) {
		int dscp;

		/* the traffic class the jobs use: the profiles' roce_dscp */
		r = probe_profile_dscp(s->rules.e, &dscp, NULL);
		if (r || (r = probe_serve_setup(&s->ps, s->responder, dscp))) {
			fprintf(stderr, "rocewatch serve: --probe.peers: %s\n",
				r == -ENOENT ? "the profiles have no roce_dscp parameter"
					     : strerror(-r));
			goto fini;
		}
	}
	if (s->responder && probe_responder_run(s->responder, err, sizeof(err))) {
		fprintf(stderr, "rocewatch serve: --probe: %s\n", err);
		goto fini;
	}
	if (probe_serve_start(&s->ps, &s->d))
		goto fini;
	r = http_run(s->http, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rocewatch serve: %s\n", err);
		goto fini;
	}
	if (alerts_serve_start(&s->alerts, &s->d, &s->rules, s->rec, http_port(s->http)))
		goto fini;

	daemon_install_signals();
	log_info("listening on %s (port %d, %s%s), polling every %.3f s, configuration every "
		 "%.3f s; capabilities kept: %s",
		 listen_addr, http_port(s->http), http_tls(s->http) ? "https" : "http",
		 web_config_auth(s->has_web ? &s->web : NULL) ? ", basic auth" : "",
		 (double)cfg.interval_ns / 1e9, (double)cfg.config_interval_ns / 1e9, caps);

	next_fast = next_slow = mono_ns();
	bool dirty = true, early = false;
	while (!rw_sig_stop) {
		int64_t now = mono_ns();
		unsigned what = COLLECT_FAST;

		pthread_mutex_lock(&s->d.lock); /* a scrape renders the stats meanwhile */
		s->d.stats.lag_seconds = now > next_fast ? (double)(now - next_fast) / 1e9 : 0;
		pthread_mutex_unlock(&s->d.lock);
		if (dirty || now >= next_slow) {
			what |= COLLECT_SLOW;
			next_slow = now + cfg.config_interval_ns;
		}
		daemon_collect(&s->d, what);
		publish(s);
		/*
		 * A burst of connections (a thread each) leaves freed memory in the
		 * allocator, resident for good: give it back on configuration polls.
		 */
		if (what & COLLECT_SLOW)
			malloc_trim(0);
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
		/*
		 * Only a poll on the tick moves the tick: an early one (a notification) must not,
		 * or a burst of link events would push the next counter poll out by an interval
		 * per event and /healthz would call us stalled.
		 */
		if (!early)
			next_fast += cfg.interval_ns;
		now = mono_ns();
		if (next_fast <= now) {
			/* Overran: skip the missed ticks rather than bursting to catch up. */
			pthread_mutex_lock(&s->d.lock);
			s->d.stats.overruns++;
			pthread_mutex_unlock(&s->d.lock);
			next_fast = now + cfg.interval_ns;
		}
		dirty = early = wait_events(s, next_fast);
	}
	log_info("stopping");
	rules_serve_stop(&s->rules); /* a reload takes the daemon's lock: before it goes */
	rc = 0;
fini:
	http_stop(s->http);
	probe_serve_fini(&s->ps); /* its thread hands the responder peer info */
	s->ps.r = NULL;
	probe_responder_stop(s->responder); /* after HTTP: /api/v1/probe reads it */
	alerts_serve_fini(&s->alerts);	    /* the pusher thread; no poll runs any more */
	recorder_close(s->rec); /* after HTTP (POST /api/v1/capture uses it), before the model */
	recorder_rules_fini(&s->rr);
	if (daemon_up)
		daemon_fini(&s->d);
	status_serve_fini(&s->status); /* after the daemon: its hook feeds the history */
	prom_renderer_free(&s->pr);
	sb_free(&s->nfd_body);
	sb_free(&s->nfd_file);
free_opts:
	probe_serve_fini(&s->ps);    /* a no-op when done above; the peer list when not */
	rules_serve_fini(&s->rules); /* after the daemon: its hook points here */
	if (s->has_rec_ethtool)
		regfree(&s->rec_ethtool);
	if (s->has_web)
		web_config_free(&s->web); /* after the server: it reads it */
	config_free(&cfg);
	pthread_mutex_destroy(&s->capture_lock);
	free(opts);
	free(s);
	return rc;
}
