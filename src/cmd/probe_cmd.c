// SPDX-License-Identifier: MIT
/*
 * rocewatch probe: prove the path to other nodes with RDMA traffic itself.
 * Each peer's `serve --probe` publishes its probe QP at /api/v1/probe; we
 * send UD probes of several sizes to it from this node's RoCE port, with
 * the profile's traffic class, and count what comes back (probe/).
 *
 * Peers are probed one after the other, each size in turn, one probe per
 * --probe-interval at most: the load a pre-flight puts on the fabric is
 * bounded by the flags, whatever the number of peers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "engine_opts.h"
#include "commands.h"
#include "engine.h"
#include "client.h"
#include "client_opts.h"
#include "hostlist.h"
#include "probe_info.h"
#include "probe_pkt.h"
#include "probe_serve.h"
#include "probe_ud.h"
#include "util.h"

#define PROBE_DEFAULT_PORT 9479
#define MAX_SIZES	   8

static const char probe_usage[] =
    "Send RDMA probes (UD, over verbs) of several sizes to each NODE's `rocewatch\n"
    "serve --probe` and report, per node and size, probes sent, received, loss and\n"
    "round-trip time (min/p50/p99/max), with a diagnosis: unreachable, the MTU on\n"
    "the path, loss, RTT outliers.\n\n"
    "  NODE                       host, host:port, [v6addr]:port, or a Slurm hostlist\n"
    "                             (gpu[001-064]); its probe QP is read from\n"
    "                             http://NODE/api/v1/probe (port 9479 unless given)\n"
    "Options:\n";

static const char probe_usage_tail[] =
    "\n"
    "Exit status (Nagios): 0 OK, 1 WARNING, 2 CRITICAL (a node unreachable over RDMA,\n"
    "the MTU on the path, loss over --loss-critical), 3 UNKNOWN (a node's probe info\n"
    "cannot be read, no RDMA device here, bad flags); the worst node decides,\n"
    "CRITICAL over UNKNOWN over WARNING.\n";

struct peer {
	char name[300];
	char url[400];
	enum probe_verdict verdict;
	char error[1024]; /* why it could not be probed */
	/* its probe port, from /api/v1/probe */
	char device[64], gid[48];
	unsigned port, active_mtu;
	uint8_t gid_raw[16];
	uint32_t qpn, qkey;
	bool probed;
	struct probe_size_result res[MAX_SIZES];
	struct probe_diagnosis diag;
};

struct probe_run {
	struct peer *peers;
	size_t n, cap;
	unsigned sizes[MAX_SIZES];
	size_t n_sizes;
	unsigned count;
	int64_t interval_ns, wait_ns;
	int dscp;
	struct probe_thresholds th;
	bool json;
	uint32_t session;
	uint64_t seq;
};

/* One batch (a peer and a size) while it is in flight. */
struct batch {
	uint64_t first_seq;
	unsigned count, size;
	uint8_t *seen;
	int64_t *rtt;
	unsigned received, damaged;
};

static void on_reply(void *arg, const struct probe_hdr *h, bool intact, int64_t t_ns)
{
	struct batch *b = arg;
	uint64_t k;

	/* a late reply to an earlier batch is neither received nor lost twice */
	if (h->seq < b->first_seq || h->seq >= b->first_seq + b->count || h->size != b->size)
		return;
	k = h->seq - b->first_seq;
	if (b->seen[k])
		return;
	b->seen[k] = 1;
	if (!intact) {
		b->damaged++;
		return;
	}
	b->rtt[b->received++] = t_ns - (int64_t)h->t_send_ns;
}

static int probe_size(struct probe_run *pr, struct probe_ep *ep, struct probe_size_result *out)
{
	struct batch b = { .first_seq = pr->seq, .count = pr->count, .size = out->size };
	int64_t next = mono_ns(), deadline;
	int r = 0;

	b.seen = calloc(pr->count, 1);
	b.rtt = calloc(pr->count, sizeof(*b.rtt));
	if (!b.seen || !b.rtt) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned k = 0; k < pr->count; k++) {
		struct probe_hdr h = { .size = out->size,
				       .session = pr->session,
				       .seq = pr->seq++ };
		int64_t now = mono_ns();
		int send_err = 0;

		/* Rate limit: the next probe leaves no earlier than one interval after this. */
		while (now < next) {
			r = probe_ep_poll(ep, pr->session, (int)((next - now + 999999) / 1000000),
					  on_reply, &b, &send_err);
			if (r < 0)
				goto out;
			now = mono_ns();
		}
		next = now + pr->interval_ns;
		r = probe_ep_send(ep, &h);
		if (r == -ENOBUFS) {
			/* every send slot still in flight: give completions a moment */
			probe_ep_poll(ep, pr->session, 10, on_reply, &b, &send_err);
			r = probe_ep_send(ep, &h);
		}
		if (send_err && !out->send_err)
			out->send_err = send_err;
		if (r) {
			out->send_err = -r;
			r = 0;
			continue;
		}
		out->sent++;
	}
	/* The last replies: until all are in or --wait is over. */
	deadline = mono_ns() + pr->wait_ns;
	while (b.received + b.damaged < out->sent) {
		int64_t now = mono_ns();
		int send_err = 0;

		if (now >= deadline)
			break;
		r = probe_ep_poll(ep, pr->session, (int)((deadline - now + 999999) / 1000000),
				  on_reply, &b, &send_err);
		if (r < 0)
			goto out;
		if (send_err && !out->send_err)
			out->send_err = send_err;
	}
	r = 0;
	out->received = b.received;
	out->damaged = b.damaged;
	probe_rtt_summarise(b.rtt, b.received, &out->rtt);
out:
	free(b.seen);
	free(b.rtt);
	return r;
}

struct peers_add {
	struct probe_run *pr;
	const char *scheme;
};

static int add_peer(void *arg, const char *name, const char *hostport)
{
	struct peers_add *pa = arg;
	struct probe_run *pr = pa->pr;
	struct peer *p;

	(void)name;
	if (array_grow(&pr->peers, &pr->cap, pr->n, sizeof(*pr->peers), 8))
		return -ENOMEM;
	p = &pr->peers[pr->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", hostport);
	snprintf(p->url, sizeof(p->url), "%s://%s/api/v1/probe", pa->scheme, p->name);
	return 0;
}

static int add_peers(struct probe_run *pr, const char *expr, const char *scheme, int port)
{
	struct peers_add pa = { pr, scheme };

	return hostlist_each("probe", expr, port, add_peer, &pa);
}

/* The peer's probe QP from its /api/v1/probe; false with p->error set. */
static bool parse_info(struct peer *p, const struct client_req *rq)
{
	struct probe_info pi;
	char err[256];

	if (rq->err) {
		if (rq->http_code == 404)
			snprintf(p->error, sizeof(p->error),
				 "%s: 404: its rocewatch serve runs without --probe (or is "
				 "older than the probe)",
				 p->url);
		else
			snprintf(p->error, sizeof(p->error), "cannot read %s: %s", p->url,
				 rq->errmsg);
		return false;
	}
	if (probe_info_parse(rq->body, rq->len, &pi, err, sizeof(err))) {
		snprintf(p->error, sizeof(p->error), "%s: %s", p->url, err);
		return false;
	}
	snprintf(p->gid, sizeof(p->gid), "%s", pi.gid);
	snprintf(p->device, sizeof(p->device), "%s", pi.device);
	memcpy(p->gid_raw, pi.gid_raw, sizeof(p->gid_raw));
	p->qpn = pi.qpn;
	p->qkey = pi.qkey;
	p->port = pi.port;
	p->active_mtu = pi.active_mtu;
	return true;
}

/* Both are Nagios codes: the rules' one precedence ranks the nodes too. */
_Static_assert((int)PROBE_OK == (int)RULES_OK && (int)PROBE_WARNING == (int)RULES_WARNING &&
		   (int)PROBE_CRITICAL == (int)RULES_CRITICAL &&
		   (int)PROBE_UNKNOWN == (int)RULES_UNKNOWN,
	       "probe verdicts are Nagios codes, as rules statuses are");

static enum probe_verdict verdict_worse(enum probe_verdict a, enum probe_verdict b)
{
	return (enum probe_verdict)rules_status_worse((enum rules_status)a, (enum rules_status)b);
}

static int parse_sizes(struct probe_run *pr, const char *s)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	pr->n_sizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (parse_u64(tok, &v) || v < PROBE_HDR_LEN || v > PROBE_MAX_SIZE ||
		    pr->n_sizes == MAX_SIZES || (pr->n_sizes && v <= pr->sizes[pr->n_sizes - 1])) {
			r = -EINVAL;
			break;
		}
		pr->sizes[pr->n_sizes++] = (unsigned)v;
	}
	free(copy);
	return r || !pr->n_sizes ? -EINVAL : 0;
}

/* --loss-*: "5", "5%", "0.1%" */
static int parse_percent(const char *s, double *frac)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || (*end && strcmp(end, "%")) || v < 0 || v > 100)
		return -EINVAL;
	*frac = v / 100;
	return 0;
}

/* The profile's roce_dscp (the loaded profiles, first that declares it). */
static int profile_dscp(const struct rules_spec *spec, int *dscp)
{
	struct rules_engine *e = NULL;
	struct rules_diags dg = { 0 };
	const char *bad = "?";
	int r = rules_load(spec, &e, &dg);

	for (size_t i = 0; i < dg.n; i++) {
		char line[1024];

		rules_diag_format(&dg.d[i], line, sizeof(line));
		fprintf(stderr, "rocewatch probe: %s\n", line);
	}
	rules_diags_free(&dg);
	if (r)
		return r;
	r = probe_profile_dscp(e, dscp, &bad);
	if (r == -EINVAL)
		fprintf(stderr, "rocewatch probe: profile %s: roce_dscp is not a DSCP (0-63)\n",
			bad);
	rules_free(e);
	return r;
}

static void print_text(const struct probe_run *pr, const struct probe_port *lp, int hw_ts,
		       enum probe_verdict worst)
{
	unsigned counts[4] = { 0 };

	printf("rocewatch probe from %s/%u (%s, GID %s index %d, active_mtu %u): traffic class "
	       "%d (DSCP %d, ECT(0)), Q_Key 0x%x, %u probes per size every %.3g ms\n",
	       lp->device, lp->port, lp->netdev[0] ? lp->netdev : "no netdev", lp->gid,
	       lp->gid_index, lp->active_mtu, pr->dscp << 2 | PROBE_ECT0, pr->dscp, PROBE_QKEY,
	       pr->count, (double)pr->interval_ns / 1e6);
	printf("RTT: software timestamps around post and poll (%s)\n",
	       hw_ts ? "the device has completion timestamps; not used yet"
		     : "the device has no completion timestamps");
	for (size_t i = 0; i < pr->n; i++) {
		const struct peer *p = &pr->peers[i];

		counts[p->verdict]++;
		printf("\n%s: %s\n", p->name, probe_verdict_name(p->verdict));
		if (!p->probed) {
			printf("  %s\n", p->error);
			continue;
		}
		printf("  to %s/%u GID %s QPN %u, its active_mtu %u\n", p->device, p->port, p->gid,
		       p->qpn, p->active_mtu);
		printf("  %6s %6s %6s %7s %10s %10s %10s %10s\n", "size", "sent", "recv", "loss",
		       "rtt min", "p50", "p99", "max");
		for (size_t k = 0; k < pr->n_sizes; k++) {
			const struct probe_size_result *s = &p->res[k];
			char a[32], b[32], c[32], d[32];

			if (s->not_sent) {
				printf("  %6u %6s  not sent: over this port's active_mtu %u\n",
				       s->size, "-", lp->active_mtu);
				continue;
			}
			if (!s->rtt.n) {
				printf("  %6u %6u %6u %6.1f%% %10s %10s %10s %10s\n", s->size,
				       s->sent, s->received,
				       s->sent ? 100.0 * (s->sent - s->received) / s->sent : 0.0,
				       "-", "-", "-", "-");
				continue;
			}
			probe_fmt_ns(s->rtt.min_ns, a, sizeof(a));
			probe_fmt_ns(s->rtt.p50_ns, b, sizeof(b));
			probe_fmt_ns(s->rtt.p99_ns, c, sizeof(c));
			probe_fmt_ns(s->rtt.max_ns, d, sizeof(d));
			printf("  %6u %6u %6u %6.1f%% %10s %10s %10s %10s\n", s->size, s->sent,
			       s->received, 100.0 * (s->sent - s->received) / s->sent, a, b, c, d);
		}
		for (size_t k = 0; k < p->diag.n; k++)
			printf("  %s\n", p->diag.text[k]);
	}
	printf("\n%zu node%s: %u OK, %u WARNING, %u CRITICAL, %u UNKNOWN: %s\n", pr->n,
	       pr->n == 1 ? "" : "s", counts[PROBE_OK], counts[PROBE_WARNING],
	       counts[PROBE_CRITICAL], counts[PROBE_UNKNOWN], probe_verdict_name(worst));
}

static json_t *rtt_json(const struct probe_rtt *q)
{
	if (!q->n)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:f, s:I}", "min_seconds", (double)q->min_ns / 1e9,
			 "p50_seconds", (double)q->p50_ns / 1e9, "p99_seconds",
			 (double)q->p99_ns / 1e9, "max_seconds", (double)q->max_ns / 1e9,
			 "outliers", (json_int_t)q->outliers);
}

static int print_json(const struct probe_run *pr, const struct probe_port *lp, int hw_ts,
		      enum probe_verdict worst)
{
	json_t *doc = json_object(), *peers = json_array();
	int r;

	json_object_set_new(doc, "local",
			    json_pack("{s:s, s:i, s:s, s:s, s:i, s:i}", "device", lp->device,
				      "port", (int)lp->port, "netdev", lp->netdev, "gid", lp->gid,
				      "gid_index", lp->gid_index, "active_mtu",
				      (int)lp->active_mtu));
	json_object_set_new(doc, "traffic_class", json_integer(pr->dscp << 2 | PROBE_ECT0));
	json_object_set_new(doc, "dscp", json_integer(pr->dscp));
	json_object_set_new(doc, "qkey", json_integer(PROBE_QKEY));
	json_object_set_new(doc, "count", json_integer(pr->count));
	json_object_set_new(doc, "timestamps", json_string("software"));
	json_object_set_new(doc, "device_completion_timestamps", json_boolean(hw_ts));
	for (size_t i = 0; i < pr->n; i++) {
		const struct peer *p = &pr->peers[i];
		json_t *o = json_pack("{s:s, s:s}", "node", p->name, "status",
				      probe_verdict_name(p->verdict));
		json_t *res = json_array(), *diag = json_array();

		if (!p->probed) {
			json_object_set_new(o, "error", json_string(p->error));
			json_array_append_new(peers, o);
			json_decref(res);
			json_decref(diag);
			continue;
		}
		json_object_set_new(o, "remote",
				    json_pack("{s:s, s:i, s:s, s:I, s:I, s:i}", "device", p->device,
					      "port", (int)p->port, "gid", p->gid, "qpn",
					      (json_int_t)p->qpn, "qkey", (json_int_t)p->qkey,
					      "active_mtu", (int)p->active_mtu));
		for (size_t k = 0; k < pr->n_sizes; k++) {
			const struct probe_size_result *s = &p->res[k];
			json_t *x = json_pack(
			    "{s:i, s:b, s:i, s:i, s:i, s:f, s:o}", "size", (int)s->size, "sent_ok",
			    !s->not_sent, "sent", (int)s->sent, "received", (int)s->received,
			    "lost", (int)(s->sent - s->received), "loss",
			    s->sent ? (double)(s->sent - s->received) / s->sent : 0.0, "rtt",
			    rtt_json(&s->rtt));

			if (s->damaged)
				json_object_set_new(x, "damaged", json_integer(s->damaged));
			if (s->send_err)
				json_object_set_new(x, "send_error",
						    json_string(strerror(s->send_err)));
			json_array_append_new(res, x);
		}
		for (size_t k = 0; k < p->diag.n; k++)
			json_array_append_new(diag, json_string(p->diag.text[k]));
		json_object_set_new(o, "sizes", res);
		json_object_set_new(o, "diagnoses", diag);
		json_array_append_new(peers, o);
	}
	json_object_set_new(doc, "nodes", peers);
	json_object_set_new(doc, "status", json_string(probe_verdict_name(worst)));
	json_object_set_new(doc, "exit_code", json_integer(worst));
	r = json_dumpf(doc, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
	json_decref(doc);
	return r;
}

static int pick_local(const char *want, struct probe_port *lp, char *err, size_t errlen)
{
	struct probe_port *pp = NULL;
	size_t np = 0;
	char dev[64] = "";
	unsigned port = 0;
	int r = probe_ports(&pp, &np, err, errlen);

	if (r) {
		free(pp);
		return r;
	}
	if (want) {
		const char *c = strchr(want, ':');

		snprintf(dev, sizeof(dev), "%.*s", c ? (int)(c - want) : (int)strlen(want), want);
		port = c ? (unsigned)atoi(c + 1) : 0;
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < np; i++) {
			if (want && (strcmp(pp[i].device, dev) || (port && pp[i].port != port)))
				continue;
			/* an active port first; an inactive one only when named */
			if (!pp[i].active && (!want || !pass))
				continue;
			*lp = pp[i];
			free(pp);
			return 0;
		}
	if (want)
		snprintf(err, errlen, "--device %s: no such RoCE port with an IPv4 RoCE v2 GID",
			 want);
	else if (np)
		snprintf(err, errlen,
			 "no active RoCE port (%zu with an IPv4 RoCE v2 GID, none ACTIVE)", np);
	else
		snprintf(err, errlen,
			 "no RoCE port with an IPv4 RoCE v2 GID (an Ethernet RDMA port "
			 "whose netdev has an IPv4 address)");
	free(pp);
	return -ENODEV;
}

struct probe_args {
	struct probe_run pr;
	struct rules_spec spec;
	struct client_opts client;
	const char *device;
	uint16_t port;
};

static int opt_sizes(const struct cli_opt *o, void *member, const char *arg)
{
	(void)o;
	return parse_sizes(member, arg) ? CLI_BAD : 0;
}

/* --loss-warning / --loss-critical PERCENT: a fraction. */
static int opt_loss(const struct cli_opt *o, void *member, const char *arg)
{
	(void)o;
	return parse_percent(arg, member) ? CLI_BAD : 0;
}

#define STR_(x) #x
#define STR(x)	STR_(x)
static const struct cli_opt probe_opts[] = {
	CLI_OPT_NODE_PORT(struct probe_args, port),
	{ .name = "device",
	  CLI_STRING_AT(struct probe_args, device),
	  .metavar = "DEV[:PORT]",
	  .help = "the local RDMA port to probe from (default: the\n"
		  "first active RoCE port with an IPv4 RoCE v2 GID)" },
	{ .name = "sizes",
	  CLI_CALL_AT(struct probe_args, pr, opt_sizes),
	  .bad = "a list of up to " STR(MAX_SIZES) " increasing sizes from " STR(
	      PROBE_HDR_LEN) " to " STR(PROBE_MAX_SIZE),
	  .metavar = "LIST",
	  .help = "payload sizes in bytes, 32-4096 (default\n"
		  "64,1024,4096); sizes over this port's active_mtu\n"
		  "cannot be sent and are reported as such" },
	{ .name = "count",
	  CLI_COUNT_AT(struct probe_args, pr.count),
	  .min = 1,
	  .max = 10000,
	  .bad = "1-10000",
	  .metavar = "N",
	  .help = "probes per node and size (default 20, at most\n"
		  "10000)" },
	{ .name = "probe-interval",
	  CLI_DURATION_AT(struct probe_args, pr.interval_ns),
	  .min = 1000000LL,
	  .max = 3600000000000LL,
	  .bad = "a duration of at least 1ms",
	  .metavar = "DURATION",
	  .help = "time between two probes, at least 1ms (default\n"
		  "10ms)" },
	{ .name = "wait",
	  CLI_DURATION_AT(struct probe_args, pr.wait_ns),
	  .max = 3600000000000LL,
	  .bad = "a duration (e.g. 1s)",
	  .metavar = "DURATION",
	  .help = "how long to wait for the last replies (default 1s)" },
	{ .name = "profile",
	  CLI_RULES_AT(struct probe_args, spec, CLI_RULES_PROFILE),
	  .metavar = "NAME|FILE, --param KEY=VALUE",
	  .help = "\nthe traffic class is the profile's roce_dscp\n"
		  "(default profile lossless-roce: DSCP 26), ECN\n"
		  "ECT(0)" },
	{ .name = "param", CLI_RULES_AT(struct probe_args, spec, CLI_RULES_PARAM) },
	{ .name = "dscp",
	  CLI_COUNT_AT(struct probe_args, pr.dscp),
	  .max = 63,
	  .bad = "0-63",
	  .metavar = "N",
	  .help = "this DSCP instead of the profile's (0-63)" },
	{ .name = "loss-warning",
	  CLI_CALL_AT(struct probe_args, pr.th.loss_warning, opt_loss),
	  .bad = "a percentage (e.g. 5%)",
	  .metavar = "PERCENT",
	  .help = "loss over this is WARNING (default 0)" },
	{ .name = "loss-critical",
	  CLI_CALL_AT(struct probe_args, pr.th.loss_critical, opt_loss),
	  .bad = "a percentage (e.g. 5%)",
	  .metavar = "PERCENT",
	  .help = "loss over this is CRITICAL (default 5)" },
	{ .name = "rtt-warning",
	  CLI_DURATION_AT(struct probe_args, pr.th.rtt_warning_ns),
	  .max = 3600000000000LL,
	  .bad = "a duration (e.g. 1s)",
	  .metavar = "DURATION",
	  .help = "a p99 RTT over this is WARNING (default off)" },
	CLI_TEXT_ROW("\n"
		     "Client (reading each NODE's probe info over HTTP, as fleet check does):\n"),
	{ 0 },
};

static const struct cli_opt probe_output_opts[] = {
	CLI_TEXT_ROW("\n"),
	{ .name = "format",
	  CLI_FORMAT_AT(struct probe_args, pr.json),
	  .metavar = "text|json, -j",
	  .help = "report format (default text; -j is json)" },
	{ .name = "", .short_name = 'j', CLI_FLAG_AT(struct probe_args, pr.json) },
	CLI_OPT_HELP,
	{ 0 },
};

#undef STR
#undef STR_

const struct cli_cmd probe_cli = {
	.name = "probe",
	.synopsis = "[OPTIONS] NODE...",
	.head = probe_usage,
	.tail = probe_usage_tail,
	.tables = { CLI_TABLE(probe_opts), CLI_SUB(client_cli_opts, struct probe_args, client),
		    CLI_TABLE(probe_output_opts) },
};

/* The peers and the traffic class: 0 or -errno (printed). */
static int probe_validate(struct probe_args *a, int n, char **args)
{
	int r;

	if (!n) {
		fprintf(stderr, "rocewatch probe: no NODE given (try --help)\n");
		return -EINVAL;
	}
	if (client_opts_finish(&a->client))
		return -EINVAL;
	for (int i = 0; i < n; i++)
		if (add_peers(&a->pr, args[i], client_opts_scheme(&a->client), a->port))
			return -EINVAL;
	if (a->pr.dscp >= 0)
		return 0;
	r = profile_dscp(&a->spec, &a->pr.dscp);
	if (r == -ENOENT)
		fprintf(stderr, "rocewatch probe: the profile has no roce_dscp parameter: give "
				"--dscp\n");
	return r;
}

/* Probe every peer from this node's port and report: the exit status. */
static int probe_run_all(struct probe_args *a)
{
	struct probe_run *pr = &a->pr;
	const struct client_http_opts ho = a->client.ho;
	const char *device = a->device;
	struct client_req *reqs = NULL;
	struct probe_port lp;
	struct probe_ep *ep = NULL;
	enum probe_verdict worst = PROBE_OK;
	char err[512];
	int rc = PROBE_UNKNOWN, r, hw_ts;

	/* This node's side first: without an RDMA port there is nothing to probe from. */
	if (pick_local(device, &lp, err, sizeof(err)) ||
	    probe_ep_open(&ep, &lp, err, sizeof(err))) {
		fprintf(stderr, "rocewatch probe: %s\n", err);
		goto out;
	}
	hw_ts = probe_ep_hw_timestamps(ep);
	if (getrandom(&pr->session, sizeof(pr->session), GRND_NONBLOCK) != sizeof(pr->session))
		pr->session = (uint32_t)(mono_ns() ^ getpid());

	reqs = calloc(pr->n, sizeof(*reqs));
	if (!reqs)
		goto nomem;
	for (size_t i = 0; i < pr->n; i++)
		reqs[i].url = pr->peers[i].url;
	if (client_http_run(reqs, pr->n, &ho, NULL, NULL)) {
		fprintf(stderr, "rocewatch probe: the HTTP client failed\n");
		goto out;
	}
	for (size_t i = 0; i < pr->n; i++) {
		struct peer *p = &pr->peers[i];

		if (!parse_info(p, &reqs[i])) {
			p->verdict = PROBE_UNKNOWN;
		} else if ((r = probe_ep_set_peer(ep, p->gid_raw, p->qpn, p->qkey,
						  (uint8_t)(pr->dscp << 2 | PROBE_ECT0), err,
						  sizeof(err)))) {
			p->verdict = PROBE_CRITICAL;
			snprintf(p->error, sizeof(p->error), "unreachable: %s", err);
		} else {
			p->probed = true;
			for (size_t k = 0; k < pr->n_sizes; k++) {
				p->res[k].size = pr->sizes[k];
				if (pr->sizes[k] > lp.active_mtu) {
					p->res[k].not_sent = true;
					continue;
				}
				r = probe_size(pr, ep, &p->res[k]);
				if (r) {
					fprintf(stderr, "rocewatch probe: %s/%u: %s\n", lp.device,
						lp.port, strerror(-r));
					goto out;
				}
			}
			probe_diagnose(p->res, pr->n_sizes, lp.active_mtu, p->active_mtu, &pr->th,
				       &p->diag);
			p->verdict = p->diag.verdict;
		}
		worst = verdict_worse(worst, p->verdict);
	}
	if (pr->json ? print_json(pr, &lp, hw_ts, worst) : (print_text(pr, &lp, hw_ts, worst), 0)) {
		fprintf(stderr, "rocewatch probe: writing the report: %s\n", strerror(errno));
		goto out;
	}
	if (fflush(stdout)) {
		fprintf(stderr, "rocewatch probe: writing the report: %s\n", strerror(errno));
		goto out;
	}
	rc = (int)worst;
	goto out;
nomem:
	fprintf(stderr, "rocewatch probe: out of memory\n");
out:
	probe_ep_close(ep);
	for (size_t i = 0; reqs && i < pr->n; i++)
		client_req_free(&reqs[i]);
	free(reqs);
	return rc;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_args a = {
		.pr = {
			.sizes = { 64, 1024, 4096 },
			.n_sizes = 3,
			.count = 20,
			.interval_ns = 10000000LL,
			.wait_ns = 1000000000LL,
			.dscp = -1,
			.th = { .loss_warning = 0, .loss_critical = 0.05 },
		},
		.port = PROBE_DEFAULT_PORT,
	};
	int rc = PROBE_UNKNOWN, r, first;

	client_opts_init(&a.client, "probe");
	r = cli_parse(&probe_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	else if (!r && !probe_validate(&a, argc - first, argv + first))
		rc = probe_run_all(&a);
	free(a.pr.peers);
	rules_spec_free(&a.spec);
	client_opts_free(&a.client);
	return rc;
}
