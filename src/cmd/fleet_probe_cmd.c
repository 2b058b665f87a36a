// SPDX-License-Identifier: MIT
/*
 * rocewatch fleet probe: prove every rail between a job's nodes before it
 * starts.  Every node's `serve --probe` publishes its probe QPs at
 * /api/v1/probe; the plan (src/probe/probe_plan.h) is made from them, each node
 * is handed its slice with POST /api/v1/probe/plan (serve
 * --web.enable-probe-api, behind its web config), all start at one time,
 * the results come back from GET /api/v1/probe/plan?id=ID, and the
 * localizer (src/probe/probe_locate.h) names the faults.  The coordinator
 * (src/probe/probe_fleet.c) is the same code the benchmark runs over a
 * simulated fabric; this file is its HTTP transport, the command line and
 * the report.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "client_opts.h"
#include "commands.h"
#include "engine.h"
#include "client.h"
#include "hostlist.h"
#include "probe_fleet.h"
#include "probe_info.h"
#include "probe_pkt.h"
#include "probe_plan.h"
#include "probe_ud.h"
#include "term.h"
#include "util.h"

#define FP_DEFAULT_PORT 9479

struct fp_node {
	char *name;
	char base[600]; /* scheme://host:port */
	bool answered;
	char err[640];
	struct probe_doc doc;
	struct probe_plan_port ports[PROBE_INFO_MAX_PORTS];
	char keys[PROBE_INFO_MAX_PORTS][8]; /* position order, where the node has no rail fact */
	char names[PROBE_INFO_MAX_PORTS][80];
	size_t doc_at[PROBE_INFO_MAX_PORTS]; /* each planned port's place in doc */
	size_t n_ports;
	bool guessed;	/* its rails are positions */
	size_t in_plan; /* its index among the planned nodes */
};

struct fp_args {
	struct client_opts client;
	bool slurm, json, cross_nic, no_host_pairs;
	unsigned port;
	int64_t budget_ns, lead_ns;
	unsigned paths, dscp, rate;
	const char *mode;
	size_t max_names;
	enum term_color color;
	/* the run */
	struct fp_node *nodes;
	size_t n, cap;
	struct probe_plan_node *pn; /* the nodes in the plan */
	size_t *pn_of;		    /* [plan index] -> node */
	size_t n_pn;
	struct probe_fleet_addr *addr;
};

static const char fp_usage[] =
    "Prove every rail between the NODEs with RDMA traffic before a job starts: read\n"
    "each node's probe QPs (http://NODE/api/v1/probe of `rocewatch serve --probe`),\n"
    "plan rail-aligned, incast-free probes between them (the full rail mesh while\n"
    "it fits --budget, else a sparse plan: +-1, powers of two and 8 random steps,\n"
    "every port heard by 3 peers at least), flow-label probes on every ECMP path of\n"
    "cross-leaf pairs, each host's cross-rail pairs and loopbacks; hand each node\n"
    "its part (POST /api/v1/probe/plan: serve --web.enable-probe-api), start all at\n"
    "once, collect, and name the faults: node_rail, leaf, spine_paths, path_mtu,\n"
    "rail_only, host_path, each with its evidence and what to do.\n\n"
    "  NODE                       host, host:port, or a Slurm hostlist (gpu[001-064])\n"
    "Options:\n";

static const char fp_usage_tail[] =
    "\n"
    "Exit codes (Nagios plugin convention, as fleet check):\n"
    "  0 OK        every node answered and no finding\n"
    "  1 WARNING   only warnings (a rail-only fabric, a slow loopback)\n"
    "  2 CRITICAL  a fault found\n"
    "  3 UNKNOWN   a node did not answer, answered garbage or left pairs untested\n"
    "              (its probes late on both passes), or bad flags\n"
    "CRITICAL > UNKNOWN > WARNING > OK.\n";

static const char *const fp_plans[] = { "auto", "full", "sparse", NULL };

static const struct cli_opt fp_opts[] = {
	{ .name = "slurm",
	  CLI_FLAG_AT(struct fp_args, slurm),
	  .help = "the nodes of $SLURM_JOB_NODELIST (PrologSlurmctld)" },
	{ .name = "budget",
	  CLI_DURATION_AT(struct fp_args, budget_ns),
	  .min = 2000000000LL,
	  .max = 600000000000LL,
	  .bad = "a duration from 2s to 10m",
	  .metavar = "DURATION",
	  .help = "the plan's modelled time from start to verdict\n"
		  "(default 5s): the full rail mesh while it fits" },
	{ .name = "lead",
	  CLI_DURATION_AT(struct fp_args, lead_ns),
	  .min = 100000000LL,
	  .max = 60000000000LL,
	  .bad = "a duration from 100ms to 1m",
	  .metavar = "DURATION",
	  .help = "from the plan to its common start: every node's\n"
		  "slice handed out, clocks apart (default 1s)" },
	{ .name = "rate",
	  CLI_COUNT_AT(struct fp_args, rate),
	  .min = 10,
	  .max = PROBE_REPLY_RATE,
	  .bad = "a number of probes per second from 10 to 10000",
	  .metavar = "N",
	  .help = "probes a second each port sends (default 8000;\n"
		  "the responders answer 10000 a port)" },
	{ .name = "plan",
	  CLI_STRING_AT(struct fp_args, mode),
	  .words = fp_plans,
	  .metavar = "auto|full|sparse",
	  .help = "which plan (default auto: by --budget)" },
	{ .name = "paths",
	  CLI_COUNT_AT(struct fp_args, paths),
	  .max = PROBE_PLAN_MAX_PATHS,
	  .bad = "a number of flow labels from 0 to 32",
	  .metavar = "N",
	  .help = "flow labels (ECMP paths) per cross-leaf pair\n"
		  "(default 8)" },
	{ .name = "dscp",
	  CLI_COUNT_AT(struct fp_args, dscp),
	  .max = 63,
	  .bad = "a DSCP from 0 to 63",
	  .metavar = "N",
	  .help = "the probes' DSCP (default 26, RoCE's), ECN ECT(0)" },
	{ .name = "cross-nic",
	  CLI_FLAG_AT(struct fp_args, cross_nic),
	  .help = "the job sets NCCL_CROSS_NIC=1: a rail-only fabric\n"
		  "is critical, not a warning" },
	{ .name = "no-host-pairs",
	  CLI_FLAG_AT(struct fp_args, no_host_pairs),
	  .help = "leave out the cross-rail pairs inside each host\n"
		  "(no rail_only finding then)" },
	CLI_TEXT_ROW("\n"
		     "Client (the nodes' serve):\n"),
	CLI_OPT_NODE_PORT(struct fp_args, port),
	{ 0 },
};

static const struct cli_opt fp_output_opts[] = {
	CLI_TEXT_ROW("\n"
		     "Output:\n"),
	{ .name = "format",
	  CLI_FORMAT_AT(struct fp_args, json),
	  .metavar = "text|json",
	  .help = "report format (default text; -j is json)" },
	{ .name = "", .short_name = 'j', CLI_FLAG_AT(struct fp_args, json) },
	{ .name = "max-names",
	  CLI_COUNT_AT(struct fp_args, max_names),
	  .max = 100000,
	  .bad = "a number",
	  .metavar = "N",
	  .help = "nodes named per finding in the text report\n"
		  "(default 10; JSON names all)" },
	TERM_OPT_COLOR(struct fp_args, color),
	CLI_OPT_HELP,
	{ 0 },
};

const struct cli_cmd fleet_probe_cli = {
	.name = "fleet probe",
	.synopsis = "[OPTIONS] NODE... | --slurm",
	.head = fp_usage,
	.tail = fp_usage_tail,
	.tables = { CLI_TABLE(fp_opts), CLI_SUB(client_cli_opts, struct fp_args, client),
		    CLI_TABLE(fp_output_opts) },
};

/* ---- the nodes and their probe QPs ---- */

static int add_node(void *arg, const char *name, const char *hostport)
{
	struct fp_args *a = arg;
	struct fp_node *nd;

	for (size_t k = 0; k < a->n; k++)
		if (!strcmp(a->nodes[k].name, name))
			return 0; /* named twice */
	if (array_grow(&a->nodes, &a->cap, a->n, sizeof(*a->nodes), 16))
		return -ENOMEM;
	nd = &a->nodes[a->n];
	memset(nd, 0, sizeof(*nd));
	nd->name = strdup(name);
	if (!nd->name)
		return -ENOMEM;
	snprintf(nd->base, sizeof(nd->base), "%s://%s", client_opts_scheme(&a->client), hostport);
	a->n++;
	return 0;
}

static int add_nodes(struct fp_args *a, const char *expr)
{
	return hostlist_each("fleet probe", expr, (int)a->port, add_node, a);
}

static int members(struct fp_args *a, int n, char **args)
{
	for (int i = 0; i < n; i++)
		if (add_nodes(a, args[i]))
			return -EINVAL;
	if (a->slurm) {
		const char *nl = getenv("SLURM_JOB_NODELIST");

		if (!nl || !*nl)
			nl = getenv("SLURM_NODELIST");
		if (!nl || !*nl) {
			fprintf(stderr, "rocewatch fleet probe: --slurm: SLURM_JOB_NODELIST is not "
					"set (run it from PrologSlurmctld, salloc or sbatch)\n");
			return -EINVAL;
		}
		if (add_nodes(a, nl))
			return -EINVAL;
	}
	if (!a->n) {
		fprintf(stderr, "rocewatch fleet probe: no nodes given (NODE or --slurm; see "
				"--help)\n");
		return -EINVAL;
	}
	return 0;
}

/* The ports a plan takes from a node's document: ACTIVE compute ports, rocewatch's Q_Key. */
static void take_ports(struct fp_node *nd)
{
	size_t pos = 0;

	for (size_t k = 0; k < nd->doc.n && nd->n_ports < PROBE_INFO_MAX_PORTS; k++) {
		const struct probe_info *pi = &nd->doc.ports[k];
		struct probe_plan_port *pp = &nd->ports[nd->n_ports];

		if (!pi->active || (pi->role[0] && strcmp(pi->role, "compute")) ||
		    pi->qkey != PROBE_QKEY || !pi->active_mtu)
			continue;
		snprintf(nd->keys[nd->n_ports], sizeof(nd->keys[0]), "#%zu", pos++);
		snprintf(nd->names[nd->n_ports], sizeof(nd->names[0]), "%s/%u", pi->device,
			 pi->port);
		if (!pi->rail[0])
			nd->guessed = true;
		nd->doc_at[nd->n_ports] = k;
		*pp = (struct probe_plan_port){ .rail =
						    pi->rail[0] ? pi->rail : nd->keys[nd->n_ports],
						.leaf = pi->leaf,
						.active_mtu = pi->active_mtu,
						.name = nd->names[nd->n_ports],
						.link_downed = pi->link_downed,
						.carrier_changes = pi->carrier_changes,
						.symbol_errors = pi->symbol_errors };
		nd->n_ports++;
	}
}

static void read_doc(struct fp_node *nd, struct client_req *rq)
{
	char why[512];

	if (rq->err) {
		snprintf(nd->err, sizeof(nd->err), "%s: %s", rq->url,
			 rq->http_code == 404 ? "404: its serve runs without --probe" : rq->errmsg);
		return;
	}
	if (probe_info_parse_all(rq->body, rq->len, &nd->doc, why, sizeof(why))) {
		snprintf(nd->err, sizeof(nd->err), "%s: %s", rq->url, why);
		return;
	}
	take_ports(nd);
	if (!nd->n_ports) {
		snprintf(nd->err, sizeof(nd->err),
			 "%s: no ACTIVE compute RoCE port with rocewatch's Q_Key (%zu listed)",
			 rq->url, nd->doc.n);
		return;
	}
	nd->answered = true;
}

static int fetch_docs(struct fp_args *a)
{
	struct client_req *reqs = calloc(a->n, sizeof(*reqs));
	char(*urls)[640] = calloc(a->n, sizeof(*urls));
	int r = -ENOMEM;

	if (!reqs || !urls)
		goto out;
	for (size_t i = 0; i < a->n; i++) {
		snprintf(urls[i], sizeof(urls[i]), "%s/api/v1/probe", a->nodes[i].base);
		reqs[i].url = urls[i];
	}
	/* a probe document is a few KB: a node that sends megabytes is not one */
	{
		struct client_http_opts ho = a->client.ho;

		if (!ho.max_body || ho.max_body > (1u << 20))
			ho.max_body = 1u << 20;
		r = client_http_run(reqs, a->n, &ho, NULL, NULL);
	}
	for (size_t i = 0; i < a->n; i++) {
		if (!r)
			read_doc(&a->nodes[i], &reqs[i]);
		client_req_free(&reqs[i]);
	}
out:
	free(reqs);
	free(urls);
	if (r)
		fprintf(stderr, "rocewatch fleet probe: %s\n",
			r == -ENOMEM ? "out of memory" : "the HTTP client failed");
	return r;
}

/* ---- the HTTP transport of probe_fleet_run() ---- */

struct http_tr {
	struct fp_args *a;
	uint64_t plan;
};

static void tr_post(void *ctx, struct probe_xfer *x, size_t n)
{
	struct http_tr *t = ctx;
	struct client_req *reqs = calloc(n, sizeof(*reqs));
	char(*urls)[640] = calloc(n, sizeof(*urls));

	if (!reqs || !urls) {
		for (size_t k = 0; k < n; k++) {
			x[k].err = -ENOMEM;
			snprintf(x[k].msg, sizeof(x[k].msg), "out of memory");
		}
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		snprintf(urls[k], sizeof(urls[k]), "%s/api/v1/probe/plan",
			 t->a->nodes[t->a->pn_of[x[k].node]].base);
		reqs[k].url = urls[k];
		reqs[k].post = x[k].body.buf ? x[k].body.buf : "";
		reqs[k].content_type = "text/plain";
		reqs[k].any_2xx = true;
	}
	client_http_run(reqs, n, &t->a->client.ho, NULL, NULL);
	for (size_t k = 0; k < n; k++) {
		if (reqs[k].err) {
			x[k].err = reqs[k].err;
			/* the node's own line when it said one (403, 409 ...) */
			if (reqs[k].http_code && reqs[k].body && reqs[k].len)
				snprintf(x[k].msg, sizeof(x[k].msg), "%ld: %.200s",
					 reqs[k].http_code, reqs[k].body);
			else
				snprintf(x[k].msg, sizeof(x[k].msg), "%s", reqs[k].errmsg);
			for (char *c = x[k].msg; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					*c = ' ';
			rstrip(x[k].msg);
		}
		client_req_free(&reqs[k]);
	}
out:
	free(reqs);
	free(urls);
}

static void sleep_until(int64_t t)
{
	int64_t now = real_ns();

	if (t > now) {
		struct timespec ts = ns_ts(t - now);

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

/* A results body that says "running" (probe_slice.h's header line). */
static bool still_running(const struct client_req *rq)
{
	return !rq->err && rq->body && strstr(rq->body, "\"state\":\"running\"") &&
	       (size_t)(strstr(rq->body, "\"state\":\"running\"") - rq->body) <
		   (memchr(rq->body, '\n', rq->len)
			? (size_t)((char *)memchr(rq->body, '\n', rq->len) - rq->body)
			: rq->len);
}

static void tr_collect(void *ctx, struct probe_xfer *x, size_t n, int64_t ready, int64_t deadline)
{
	struct http_tr *t = ctx;
	struct client_req *reqs = calloc(n, sizeof(*reqs));
	char(*urls)[700] = calloc(n, sizeof(*urls));
	bool *left = calloc(n, sizeof(*left));
	char id[17];

	if (!reqs || !urls || !left) {
		for (size_t k = 0; k < n; k++) {
			x[k].err = -ENOMEM;
			snprintf(x[k].msg, sizeof(x[k].msg), "out of memory");
		}
		goto out;
	}
	probe_plan_id_text(t->plan, id);
	sleep_until(ready);
	for (size_t k = 0; k < n; k++) {
		snprintf(urls[k], sizeof(urls[k]), "%s/api/v1/probe/plan?id=%s",
			 t->a->nodes[t->a->pn_of[x[k].node]].base, id);
		left[k] = true;
	}
	/* every node that is still running is asked again, until the deadline */
	for (;;) {
		size_t m = 0, *which = calloc(n, sizeof(*which));
		struct client_http_opts ho = t->a->client.ho;
		int64_t rest = (deadline - real_ns()) / 1000000;

		if (!which)
			break;
		for (size_t k = 0; k < n; k++)
			if (left[k]) {
				memset(&reqs[m], 0, sizeof(reqs[m]));
				reqs[m].url = urls[k];
				which[m++] = k;
			}
		if (!m) {
			free(which);
			break;
		}
		if (rest < 200)
			rest = 200; /* one last ask, short */
		if (ho.timeout_ms > rest)
			ho.timeout_ms = rest;
		if (ho.connect_timeout_ms > ho.timeout_ms)
			ho.connect_timeout_ms = ho.timeout_ms;
		client_http_run(reqs, m, &ho, NULL, NULL);
		for (size_t j = 0; j < m; j++) {
			size_t k = which[j];
			struct client_req *rq = &reqs[j];

			if (still_running(rq) && real_ns() < deadline) {
				client_req_free(rq);
				continue;
			}
			left[k] = false;
			if (rq->err) {
				x[k].err = rq->err;
				snprintf(x[k].msg, sizeof(x[k].msg), "%s", rq->errmsg);
			} else {
				sb_add(&x[k].body, rq->body, rq->len);
				if (x[k].body.oom) {
					x[k].err = -ENOMEM;
					snprintf(x[k].msg, sizeof(x[k].msg), "out of memory");
				}
			}
			client_req_free(rq);
		}
		free(which);
		if (real_ns() >= deadline) {
			for (size_t k = 0; k < n; k++)
				if (left[k]) {
					x[k].err = -ETIMEDOUT;
					snprintf(x[k].msg, sizeof(x[k].msg),
						 "still running at the deadline");
				}
			break;
		}
		sleep_until(real_ns() + 100000000LL);
	}
out:
	free(reqs);
	free(urls);
	free(left);
}

/* ---- the report ---- */

static const char *status_name(int st)
{
	static const char *const names[] = { "OK", "WARNING", "CRITICAL", "UNKNOWN" };

	return st >= 0 && st <= 3 ? names[st] : "UNKNOWN";
}

static int verdict(const struct fp_args *a, const struct probe_fleet_out *o, size_t unknown)
{
	bool crit = false, warn = false;

	for (size_t k = 0; k < o->f.n; k++) {
		crit |= o->f.f[k].severity == PROBE_SEV_CRITICAL;
		warn |= o->f.f[k].severity == PROBE_SEV_WARNING;
	}
	(void)a;
	return crit ? 2 : unknown ? 3 : warn ? 1 : 0;
}

static const char *node_name(const struct fp_args *a, uint32_t plan_idx)
{
	return a->nodes[a->pn_of[plan_idx]].name;
}

/*
 * Why node nd's part is unknown: it gave no slice or no results (its error),
 * or some pairs it returned say nothing (probes late on both passes); NULL
 * when it is known.  buf holds the second kind.
 */
static const char *node_unknown(const struct probe_plan *p, const struct probe_fleet_out *o,
				const struct fp_node *nd, char *buf, size_t len)
{
	uint32_t u;

	if (nd->err[0])
		return nd->err;
	if (!nd->answered || !o->err)
		return NULL;
	if (o->err[nd->in_plan])
		return o->err[nd->in_plan];
	u = o->f.untested ? o->f.untested[nd->in_plan] : 0;
	if (!u)
		return NULL;
	snprintf(buf, len,
		 "%u of its %zu pairs untested: their probes could not leave on time, on the "
		 "schedule or its second pass (its serve was held up; its log says how many)",
		 u, probe_plan_slice_len(p, nd->in_plan));
	return buf;
}

static void fmt_ns(int64_t ns, char *buf, size_t len)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else
		probe_fmt_ns(ns, buf, len);
}

static void rail_row(struct term *t, const char *name, const struct probe_rail_stat *rs)
{
	char p50[32], p99[32];

	fmt_ns(rs->rtt_p50_ns, p50, sizeof(p50));
	fmt_ns(rs->rtt_p99_ns, p99, sizeof(p99));
	term_printf(t, "%-14.14s %9llu %9llu %7llu %6llu %6llu %9s %9s", name,
		    (unsigned long long)rs->tested, (unsigned long long)rs->ok,
		    (unsigned long long)rs->lost, (unsigned long long)rs->mtu_short,
		    (unsigned long long)rs->path_partial, p50, p99);
	term_newline(t);
}

static void report_text(const struct fp_args *a, const struct probe_plan *p,
			const struct probe_fleet_out *o, int st)
{
	struct term t;
	struct strbuf sb = { 0 };
	size_t shown = a->max_names, answered = 0;

	for (size_t i = 0; i < a->n; i++)
		answered += !a->nodes[i].err[0] && a->nodes[i].answered && o->err &&
			    !o->err[a->nodes[i].in_plan];
	term_init(&t, stdout, a->color);
	term_printf(&t, "fleet probe: %s: %zu finding%s, %zu of %zu nodes answered",
		    status_name(st), o->f.n, o->f.n == 1 ? "" : "s", answered, a->n);
	term_newline(&t);
	if (p)
		term_printf(
		    &t, "plan: %s, %zu rails, %llu pairs, %u slots of %.2f ms, %.1f s of %.1f s",
		    p->sparse ? "sparse" : "full rail mesh", p->n_rails,
		    (unsigned long long)p->pairs, p->n_slots, (double)p->slot_ns / 1e6,
		    (double)p->duration_ns / 1e9, (double)p->budget_ns / 1e9);
	if (p)
		term_newline(&t);
	for (size_t k = 0; k < o->f.n; k++) {
		const struct probe_finding *f = &o->f.f[k];

		sb_reset(&sb);
		sb_printf(&sb, "%s %s", f->severity == PROBE_SEV_CRITICAL ? "CRITICAL" : "WARNING",
			  probe_class_name(f->cls));
		if (f->leaf[0])
			sb_printf(&sb, " leaf %s", f->leaf);
		sb_puts(&sb, " rails");
		for (size_t r = 0; r < f->n_rails; r++)
			sb_printf(&sb, "%s%s", r ? "," : " ", p->rails[f->rails[r]].key);
		sb_printf(&sb, ": %zu node%s", f->n_nodes, f->n_nodes == 1 ? "" : "s");
		for (size_t i = 0; i < f->n_nodes && i < shown; i++)
			sb_printf(&sb, "%s%s", i ? ", " : " (", node_name(a, f->nodes[i]));
		if (f->n_nodes && f->n_nodes > shown)
			sb_printf(&sb, ", +%zu more", f->n_nodes - shown);
		if (f->n_nodes && shown)
			sb_putc(&sb, ')');
		sb_printf(&sb, "; do: %s", probe_action_name(f->action));
		term_code(&t,
			  term_col(&t, f->severity == PROBE_SEV_CRITICAL ? TERM_RED : TERM_YEL));
		term_wrap(&t, 2, sb.buf, false);
		term_code(&t, term_col(&t, TERM_RESET));
		term_pad_to(&t, 4);
		term_wrap(&t, 4, f->evidence, false);
	}
	for (size_t i = 0; i < a->n; i++) {
		char why[256];
		const char *e = node_unknown(p, o, &a->nodes[i], why, sizeof(why));
		const struct fp_node *nd = &a->nodes[i];

		if (!e)
			continue;
		sb_reset(&sb);
		sb_printf(&sb, "UNKNOWN %s: %s", nd->name, e);
		term_wrap(&t, 4, sb.buf, false);
	}
	if (p) {
		term_printf(&t, "%-14s %9s %9s %7s %6s %6s %9s %9s", "rail", "pairs", "ok", "lost",
			    "mtu", "paths", "rtt p50", "rtt p99");
		term_newline(&t);
		for (size_t r = 0; r < p->n_rails && o->f.rails; r++)
			rail_row(&t, p->rails[r].key, &o->f.rails[r]);
		rail_row(&t, "inside hosts", &o->f.host);
		rail_row(&t, "loopback", &o->f.loop);
	}
	sb_free(&sb);
}

static json_t *stat_json(const struct probe_rail_stat *rs)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f}", "planned",
			 (json_int_t)rs->planned, "tested", (json_int_t)rs->tested, "ok",
			 (json_int_t)rs->ok, "lost", (json_int_t)rs->lost, "mtu",
			 (json_int_t)rs->mtu_short, "paths", (json_int_t)rs->path_partial,
			 "rtt_p50_seconds", rs->rtt_p50_ns < 0 ? 0.0 : (double)rs->rtt_p50_ns / 1e9,
			 "rtt_p99_seconds",
			 rs->rtt_p99_ns < 0 ? 0.0 : (double)rs->rtt_p99_ns / 1e9);
}

static int report_json(const struct fp_args *a, const struct probe_plan *p,
		       const struct probe_fleet_out *o, int st)
{
	json_t *doc = json_object(), *findings = json_array(), *unknown = json_array();
	json_t *pairs = json_object(), *rails = json_array();
	uint64_t tot[6] = { 0 };
	char *s;

	json_object_set_new(doc, "status", json_string(status_name(st)));
	if (p) {
		json_object_set_new(
		    doc, "plan",
		    json_pack("{s:s, s:I, s:I, s:I, s:f, s:f, s:b}", "kind",
			      p->sparse ? "sparse" : "full", "rails", (json_int_t)p->n_rails,
			      "slots", (json_int_t)p->n_slots, "pairs", (json_int_t)p->pairs,
			      "seconds", (double)p->duration_ns / 1e9, "budget_seconds",
			      (double)p->budget_ns / 1e9, "over_budget", p->over_budget));
		for (size_t r = 0; r < p->n_rails; r++) {
			const struct probe_rail_stat *rs = &o->f.rails[r];
			json_t *x = stat_json(rs);

			json_object_set_new(x, "rail", json_string(p->rails[r].key));
			json_array_append_new(rails, x);
			tot[0] += rs->planned, tot[1] += rs->tested, tot[2] += rs->ok;
			tot[3] += rs->lost, tot[4] += rs->mtu_short, tot[5] += rs->path_partial;
		}
	}
	json_object_set_new(pairs, "planned", json_integer((json_int_t)tot[0]));
	json_object_set_new(pairs, "tested", json_integer((json_int_t)tot[1]));
	json_object_set_new(pairs, "ok", json_integer((json_int_t)tot[2]));
	json_object_set_new(pairs, "lost", json_integer((json_int_t)tot[3]));
	json_object_set_new(pairs, "mtu", json_integer((json_int_t)tot[4]));
	json_object_set_new(pairs, "paths", json_integer((json_int_t)tot[5]));
	json_object_set_new(pairs, "rails", rails);
	if (p) {
		json_object_set_new(pairs, "inside_hosts", stat_json(&o->f.host));
		json_object_set_new(pairs, "loopback", stat_json(&o->f.loop));
	}
	json_object_set_new(doc, "pairs", pairs);
	if (o->ah_nodes) {
		json_t *ah = probe_ah_stats_json(&o->ah);

		json_object_set_new(ah, "nodes", json_integer((json_int_t)o->ah_nodes));
		json_object_set_new(ah, "late_nodes", json_integer((json_int_t)o->ah_late));
		json_object_set_new(doc, "address_handles", ah);
	}
	for (size_t k = 0; k < o->f.n; k++) {
		const struct probe_finding *f = &o->f.f[k];
		json_t *x = json_object(), *nodes = json_array(), *fr = json_array();

		json_object_set_new(x, "class", json_string(probe_class_name(f->cls)));
		json_object_set_new(
		    x, "severity",
		    json_string(f->severity == PROBE_SEV_CRITICAL ? "critical" : "warning"));
		for (size_t i = 0; i < f->n_nodes; i++)
			json_array_append_new(nodes, json_string(node_name(a, f->nodes[i])));
		for (size_t r = 0; r < f->n_rails; r++)
			json_array_append_new(fr, json_string(p->rails[f->rails[r]].key));
		json_object_set_new(x, "nodes", nodes);
		json_object_set_new(x, "rails", fr);
		if (f->leaf[0])
			json_object_set_new(x, "leaf", json_string(f->leaf));
		json_object_set_new(x, "evidence", json_string(f->evidence));
		json_object_set_new(x, "action", json_string(probe_action_name(f->action)));
		json_object_set_new(x, "pairs_bad", json_integer((json_int_t)f->pairs_bad));
		json_object_set_new(x, "pairs_tested", json_integer((json_int_t)f->pairs_tested));
		json_array_append_new(findings, x);
	}
	json_object_set_new(doc, "findings", findings);
	for (size_t i = 0; i < a->n; i++) {
		char why[256];
		const struct fp_node *nd = &a->nodes[i];
		const char *e = node_unknown(p, o, nd, why, sizeof(why));

		if (e)
			json_array_append_new(
			    unknown, json_pack("{s:s, s:s}", "node", nd->name, "error", e));
	}
	json_object_set_new(doc, "unknown", unknown);
	s = json_dumps(doc, JSON_INDENT(2));
	json_decref(doc);
	if (!s)
		return -ENOMEM;
	puts(s);
	free(s);
	return 0;
}

/* ---- the run ---- */

static int plan_input(struct fp_args *a)
{
	a->pn = calloc(a->n ? a->n : 1, sizeof(*a->pn));
	a->pn_of = calloc(a->n ? a->n : 1, sizeof(*a->pn_of));
	if (!a->pn || !a->pn_of)
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++) {
		struct fp_node *nd = &a->nodes[i];

		if (!nd->answered)
			continue;
		nd->in_plan = a->n_pn;
		a->pn_of[a->n_pn] = i;
		a->pn[a->n_pn++] = (struct probe_plan_node){
			.name = nd->name,
			.ports = nd->ports,
			.n_ports = nd->n_ports,
			.host_facts = nd->doc.host[0] ? nd->doc.host : NULL,
			.host_action = -1,
		};
	}
	a->addr = calloc(a->n_pn * PROBE_INFO_MAX_PORTS + 1, sizeof(*a->addr));
	return a->addr ? 0 : -ENOMEM;
}

/* The port addresses, laid out as the plan's ports. */
static void plan_addrs(struct fp_args *a, const struct probe_plan *p)
{
	for (size_t j = 0; j < a->n_pn; j++) {
		const struct fp_node *nd = &a->nodes[a->pn_of[j]];

		for (size_t t = 0; t < nd->n_ports; t++) {
			const struct probe_info *pi = &nd->doc.ports[nd->doc_at[t]];
			struct probe_fleet_addr *ad = &a->addr[p->port_rail_at[j] + t];

			strlcpy0(ad->device, pi->device, sizeof(ad->device));
			ad->port = pi->port;
			memcpy(ad->gid, pi->gid_raw, 16);
			ad->qpn = pi->qpn;
		}
	}
}

static int run(struct fp_args *a)
{
	struct probe_plan p;
	struct probe_plan_opts po;
	struct probe_fleet_opts fo = { .dscp = a->dscp, .batch = 64 };
	struct probe_fleet_out out = { 0 };
	struct http_tr tr = { .a = a };
	struct probe_transport t = { .post = tr_post, .collect = tr_collect, .ctx = &tr };
	size_t unknown = 0;
	char err[512];
	int st, r;
	bool planned = false;

	memset(&p, 0, sizeof(p));
	if (fetch_docs(a) || plan_input(a))
		return 3;
	probe_plan_defaults(&po);
	po.budget_ns = a->budget_ns;
	po.lead_ns = a->lead_ns;
	po.rate = a->rate;
	po.no_host_pairs = a->no_host_pairs;
	/* results may come as late as one more --timeout before a node is named */
	fo.grace_ns = a->client.ho.timeout_ms * 1000000LL;
	po.paths = a->paths;
	po.mode = !strcmp(a->mode, "full")     ? PROBE_PLAN_FULL
		  : !strcmp(a->mode, "sparse") ? PROBE_PLAN_SPARSE
					       : PROBE_PLAN_AUTO;
	if (getrandom(&fo.plan_id, sizeof(fo.plan_id), 0) != sizeof(fo.plan_id))
		fo.plan_id = (uint64_t)real_ns() ^ (uint64_t)getpid() << 32;
	fo.session = (uint32_t)(fo.plan_id >> 32) ^ (uint32_t)fo.plan_id;
	po.seed = fo.plan_id;
	fo.locate.cross_nic = a->cross_nic;
	tr.plan = fo.plan_id;
	if (a->n_pn) {
		r = probe_plan_build(&p, a->pn, a->n_pn, &po, err, sizeof(err));
		if (r) {
			fprintf(stderr, "rocewatch fleet probe: plan: %s\n", err);
			return 3;
		}
		planned = true;
		plan_addrs(a, &p);
		if (probe_fleet_run(&p, a->addr, &t, &fo, &out)) {
			fprintf(stderr, "rocewatch fleet probe: out of memory\n");
			probe_fleet_out_free(&out, p.n_nodes);
			probe_plan_free(&p);
			return 3;
		}
	}
	for (size_t i = 0; i < a->n; i++) {
		char why[256];

		unknown += node_unknown(&p, &out, &a->nodes[i], why, sizeof(why)) != NULL;
	}
	st = verdict(a, &out, unknown + (a->n_pn ? 0 : 1));
	if (a->json)
		r = report_json(a, planned ? &p : NULL, &out, st);
	else {
		report_text(a, planned ? &p : NULL, &out, st);
		r = 0;
	}
	if (r || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "rocewatch fleet probe: writing the report: %s\n", strerror(errno));
		st = 3;
	}
	probe_fleet_out_free(&out, p.n_nodes);
	probe_plan_free(&p);
	return st;
}

static void args_free(struct fp_args *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->nodes[i].name);
		probe_doc_free(&a->nodes[i].doc);
	}
	free(a->nodes);
	free(a->pn);
	free(a->pn_of);
	free(a->addr);
	client_opts_free(&a->client);
}

int cmd_fleet_probe(int argc, char **argv)
{
	struct fp_args a = { .port = FP_DEFAULT_PORT,
			     .budget_ns = 5000000000LL,
			     .lead_ns = 1000000000LL,
			     .rate = PROBE_PLAN_RATE,
			     .paths = PROBE_PLAN_DEFAULT_PATHS,
			     .dscp = 26,
			     .mode = "auto",
			     .max_names = 10,
			     .color = TERM_COLOR_AUTO };
	int rc = 3, r, first;

	client_opts_init(&a.client, "fleet probe");
	r = cli_parse(&fleet_probe_cli, &a, argc, argv, &first);
	if (r == 1)
		rc = 0;
	if (r)
		goto out;
	if (client_opts_finish(&a.client) || members(&a, argc - first, argv + first))
		goto out;
	rc = run(&a);
out:
	args_free(&a);
	return rc;
}
