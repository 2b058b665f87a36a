// SPDX-License-Identifier: MIT
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status_page.h"
#include "util.h"
#include "vendors.h"

/* ---- the sparklines' series (which counters make each line) ---- */

enum {
	NS_PAUSE_RX = 0,			   /* + priority: PFC pause frames received */
	NS_PAUSE_TX = NS_PAUSE_RX + RW_PRIO_COUNT, /* + priority: sent */
	NS_DISCARDS = NS_PAUSE_TX + RW_PRIO_COUNT, /* port discards, out of buffer */
	NS__COUNT,
};

/* netdev inputs: ethtool's per-priority pause, or dcbnl's where ethtool has none */
enum {
	NI_ETH_RX = 0,
	NI_DCB_RX = NI_ETH_RX + RW_PRIO_COUNT,
	NI_ETH_TX = NI_DCB_RX + RW_PRIO_COUNT,
	NI_DCB_TX = NI_ETH_TX + RW_PRIO_COUNT,
	NI_DISCARDS = NI_DCB_TX + RW_PRIO_COUNT,
};

static const enum field_id netdev_discards[] = {
	F_NETDEV_RX_DISCARDS_PHY,
	F_NETDEV_TX_DISCARDS_PHY,
	F_NETDEV_RX_OUT_OF_BUFFER,
};
#define N_NETDEV_DISCARDS (sizeof(netdev_discards) / sizeof(netdev_discards[0]))

enum {
	PS_RETRIES,
	PS_OOS,
	PS_CNP_SENT,
	PS_CNP_HANDLED,
	PS_DISCARDS,
	PS__COUNT,
};

/*
 * RDMA port inputs: the transport counters by meaning (vendors.c), so every
 * driver draws the same lines, then the classic port counters.
 */
#define PI_PORT VENDOR_N_MEANINGS

/* The series a meaning adds to, or -1. */
static int meaning_series(enum field_id f)
{
	switch (f) {
	case F_PORT_RDMA_ACK_TIMEOUTS:
	case F_PORT_RDMA_RETRIES_EXCEEDED:
	case F_PORT_RDMA_RNR_RETRIES_EXCEEDED:
	case F_PORT_RDMA_RNR_NAKS_RECEIVED:
	case F_PORT_RDMA_DUPLICATE_REQUESTS:
		return PS_RETRIES;
	case F_PORT_RDMA_SEQUENCE_NAKS_RECEIVED:
	case F_PORT_RDMA_IMPLIED_NAKS:
	case F_PORT_RDMA_OUT_OF_SEQUENCE:
		return PS_OOS;
	case F_PORT_RDMA_CNP_SENT:
		return PS_CNP_SENT;
	case F_PORT_RDMA_CNP_HANDLED:
		return PS_CNP_HANDLED;
	case F_PORT_RDMA_OUT_OF_BUFFER:
		return PS_DISCARDS;
	default:
		return -1;
	}
}

/* The series a classic port counter adds to (by its report category), or -1. */
static int port_series(const struct counter_desc *cd)
{
	return cd->rep.cat == RCAT_DISCARD ? PS_DISCARDS : -1;
}

void status_history_init(struct history *h, int64_t step_ns)
{
	struct hist_shape shape[OBJ__COUNT] = {
		[OBJ_NETDEV] = { .n_series = NS__COUNT,
				 .n_inputs = NI_DISCARDS + (unsigned)N_NETDEV_DISCARDS },
		[OBJ_RDMA_PORT] = { .n_series = PS__COUNT,
				    .n_inputs = (unsigned)(PI_PORT + n_port_counter_descs) },
	};

	history_init(h, step_ns, shape);
}

static void feed_prio(struct history *h, struct hist_obj *ho, const struct object *o,
		      enum field_id eth, enum field_id dcb, unsigned in_eth, unsigned in_dcb,
		      unsigned series)
{
	const struct field_val *fe = &o->f[eth], *fd = &o->f[dcb];

	for (int p = 0; p < RW_PRIO_COUNT; p++) {
		if (fe->state == ABS_NONE && (fe->mask & (1u << p)))
			history_feed(h, ho, in_eth + (unsigned)p, series + (unsigned)p,
				     fe->v.arr[p]);
		else if (fd->state == ABS_NONE && (fd->mask & (1u << p)))
			history_feed(h, ho, in_dcb + (unsigned)p, series + (unsigned)p,
				     fd->v.arr[p]);
	}
}

/*
 * hist_obj.cache, per counter: its index in the set, CACHE_NOT_DRAWN for one
 * no sparkline draws, or CACHE_MISSING - n when a set of n names lacked it
 * (looked for again only when the set's names change).
 */
#define CACHE_NOT_DRAWN (-2)
#define CACHE_MISSING	(-3)

/* A counter of a set by name; the index found last time is tried first. */
static bool cset_get(const struct counter_set *cs, const char *name, int32_t *cache, uint64_t *v)
{
	int i = *cache;

	if (i <= CACHE_MISSING && CACHE_MISSING - i == (int)cs->n)
		return false;
	if (i < 0 || (uint32_t)i >= cs->n || strcmp(cs->names[i], name)) {
		i = cset_find(cs, name);
		*cache = i >= 0 ? i : CACHE_MISSING - (int)cs->n;
	}
	if (i < 0 || !cs->present[i])
		return false;
	*v = cs->vals[i];
	return true;
}

void status_history_feed(struct history *h, const struct node_model *m, int64_t t_ns)
{
	history_begin(h, t_ns);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		const struct object *o = m->netdevs[i];
		struct hist_obj *ho;

		/* RoCE netdevs only: a management port's pauses are no one's question here */
		if (!field_present(o, F_NETDEV_RDMA) || !o->f[F_NETDEV_RDMA].v.i)
			continue;
		ho = history_obj(h, OBJ_NETDEV, o->name, 0);
		if (!ho)
			continue;
		feed_prio(h, ho, o, F_NETDEV_PFC_RX_PAUSE, F_NETDEV_PFC_INDICATIONS, NI_ETH_RX,
			  NI_DCB_RX, NS_PAUSE_RX);
		feed_prio(h, ho, o, F_NETDEV_PFC_TX_PAUSE, F_NETDEV_PFC_REQUESTS, NI_ETH_TX,
			  NI_DCB_TX, NS_PAUSE_TX);
		for (size_t k = 0; k < N_NETDEV_DISCARDS; k++)
			if (field_present(o, netdev_discards[k]))
				history_feed(h, ho, NI_DISCARDS + (unsigned)k, NS_DISCARDS,
					     (uint64_t)o->f[netdev_discards[k]].v.i);
	}
	for (size_t i = 0; i < m->n_ports; i++) {
		const struct object *o = m->ports[i];
		struct hist_obj *ho = history_obj(h, OBJ_RDMA_PORT, o->name, o->port);
		uint64_t v;

		if (!ho)
			continue;
		for (int k = 0; k < VENDOR_N_MEANINGS; k++) {
			enum field_id f = (enum field_id)(F_PORT_RDMA_ACK_TIMEOUTS + k);
			int s = meaning_series(f);

			if (s >= 0 && field_present(o, f))
				history_feed(h, ho, (unsigned)k, (unsigned)s,
					     (uint64_t)o->f[f].v.i);
		}
		for (size_t k = 0; k < n_port_counter_descs; k++) {
			const struct counter_desc *cd = &port_counter_descs[k];
			int s;

			if (ho->cache[PI_PORT + k] == CACHE_NOT_DRAWN)
				continue;
			s = port_series(cd);
			if (s < 0) {
				/* asked once per port, not every poll */
				ho->cache[PI_PORT + k] = CACHE_NOT_DRAWN;
				continue;
			}
			if (cset_get(&o->cs[CSET_PORT], cd->name, &ho->cache[PI_PORT + k], &v))
				history_feed(h, ho, (unsigned)(PI_PORT + k), (unsigned)s, v);
		}
	}
	history_end(h);
}

/* ---- the page ---- */

struct page {
	struct strbuf *out;
	const struct status_page_input *in;
	const struct rule_result *res;
	size_t n;
};

static void esc(struct page *pg, const char *s)
{
	sb_html_escape(pg->out, s);
}

static void puts_(struct page *pg, const char *s)
{
	sb_puts(pg->out, s);
}

/* "12 s ago", "4 min ago", "3 h ago", "2 d ago" */
static void ago(char *buf, size_t len, int64_t now, int64_t t)
{
	int64_t s = (now - t) / 1000000000LL;

	if (s < 2)
		snprintf(buf, len, "just now");
	else if (s < 120)
		snprintf(buf, len, "%lld s ago", (long long)s);
	else if (s < 7200)
		snprintf(buf, len, "%lld min ago", (long long)(s / 60));
	else if (s < 172800)
		snprintf(buf, len, "%lld h ago", (long long)(s / 3600));
	else
		snprintf(buf, len, "%lld d ago", (long long)(s / 86400));
}

/* <time datetime="RFC 3339" title="RFC 3339">4 min ago</time> */
static void when(struct page *pg, const char *prefix, int64_t t)
{
	char ts[40], rel[32];

	format_rfc3339(t, ts, sizeof(ts));
	ago(rel, sizeof(rel), pg->in->now_ns, t);
	sb_printf(pg->out, "<time datetime=\"%s\" title=\"%s\">%s%s</time>", ts, ts, prefix, rel);
}

static const char *status_class(enum rules_status s)
{
	return s == RULES_OK	     ? "ok"
	       : s == RULES_WARNING  ? "warning"
	       : s == RULES_CRITICAL ? "critical"
				     : "unknown";
}

static const char css[] =
    ":root{--ok:#1a7f37;--warning:#9a6700;--critical:#cf222e;--unknown:#8250df;"
    "--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--card:#f6f8fa}"
    "*{box-sizing:border-box}"
    "body{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;"
    "color:var(--fg);background:var(--bg)}"
    "main,header>div{max-width:1240px;margin:0 auto;padding:0 16px}"
    "header{color:#fff;padding:14px 0 12px}"
    "header.ok{background:var(--ok)}header.warning{background:var(--warning)}"
    "header.critical{background:var(--critical)}header.unknown{background:var(--unknown)}"
    "header h1{margin:0;font-size:30px;line-height:1.2;overflow-wrap:anywhere}"
    "header h1 #status{font-weight:800;letter-spacing:.02em;margin-right:.4em}"
    "header p{margin:4px 0 0}header a,header time{color:#fff;font-size:inherit}"
    "h2{font-size:19px;margin:22px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}"
    "h3{font-size:16px;margin:0 0 4px;overflow-wrap:anywhere}"
    "code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;"
    "background:rgba(175,184,193,.2);padding:0 3px;border-radius:4px;overflow-wrap:anywhere}"
    ".banner{margin:12px 0;padding:10px 12px;border-radius:6px;border:1px solid var(--critical);"
    "background:#ffebe9}"
    ".problem{border:1px solid var(--line);border-left:6px solid var(--unknown);"
    "border-radius:6px;padding:10px 12px;margin:0 0 10px;background:var(--bg)}"
    ".problem.critical{border-left-color:var(--critical)}"
    ".problem.warning{border-left-color:var(--warning)}"
    ".problem.info{border-left-color:var(--muted)}"
    ".tag{display:inline-block;font-size:12px;font-weight:700;text-transform:uppercase;"
    "padding:1px 6px;border-radius:10px;color:#fff;background:var(--unknown);margin-right:6px}"
    ".tag.critical{background:var(--critical)}.tag.warning{background:var(--warning)}"
    ".tag.info,.tag.skip{background:var(--muted)}.tag.pass{background:var(--ok)}"
    ".prof{color:var(--muted);font-weight:400;font-size:13px}"
    ".objects{margin:4px 0;padding-left:18px}.objects li{margin:2px 0}"
    "li,p,h3{overflow-wrap:anywhere}td{overflow-wrap:break-word}"
    ".alerts{padding-left:18px}.alerts li{margin:3px 0}"
    "time,.muted{color:var(--muted);font-size:13px}"
    ".doc{color:#31363c;font-size:14px}.doc p{margin:6px 0}"
    ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:12px}"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:6px;"
    "padding:10px 12px;min-width:0}"
    ".chart{margin:8px 0 0}.chart .t{font-size:13px;display:flex;justify-content:space-between;"
    "gap:8px}.chart svg{display:block;width:100%;height:44px;background:var(--bg);"
    "border:1px solid var(--line);border-radius:3px}"
    ".lg{font-size:12px;color:var(--muted)}.lg span{margin-right:10px;white-space:nowrap}"
    ".lg i{display:inline-block;width:10px;height:3px;vertical-align:middle;margin-right:3px}"
    ".nodata{font-size:12px;color:var(--muted);font-style:italic}"
    ".tw{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:14px}"
    "th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;"
    "vertical-align:top}th{font-weight:600;background:var(--card)}"
    "td.fail,td.failed{color:var(--critical)}td.ok,td.pass{color:var(--ok)}"
    "td.disabled,td.skip{color:var(--muted)}td.unknown,td.pending{color:var(--unknown)}"
    "details{margin:8px 0}summary{cursor:pointer;font-weight:600}"
    "footer{max-width:1240px;margin:24px auto;padding:0 16px;color:var(--muted);font-size:13px}"
    "@media (max-width:600px){body{font-size:14px}header h1{font-size:24px}"
    ".cards{grid-template-columns:1fr}th,td{padding:3px 5px}}";

static void object_label(char *buf, size_t len, const struct rule_result *x)
{
	if (x->kind == OBJ_NODE)
		snprintf(buf, len, "node");
	else if (x->kind == OBJ_NETDEV)
		snprintf(buf, len, "netdev %s", x->device);
	else
		snprintf(buf, len, "rdma_port %s/%u%s%s%s", x->device, x->port,
			 x->netdev[0] ? " (" : "", x->netdev, x->netdev[0] ? ")" : "");
}

/* Where no fatal link-health rule can watch a device's link: one line each (check's too). */
static void coverage_lines(struct page *pg, const struct rules_engine *e)
{
	struct rule_coverage *c;
	size_t n;

	if (rules_coverage(e, &c, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		char text[RULE_COVERAGE_NAMES * 2 + 160];

		if (!rules_coverage_text(&c[i], text, sizeof(text)))
			continue;
		puts_(pg, "</p>\n<p class=\"coverage\">coverage: ");
		esc(pg, text);
	}
	free(c);
}

static void profiles_line(struct page *pg)
{
	const struct rules_engine *e = pg->in->e;

	for (size_t p = 0; p < rules_profile_count(e); p++) {
		const struct rules_profile_info *pi = rules_profile(e, p);

		puts_(pg, p ? "; " : "");
		puts_(pg, "profile <b>");
		esc(pg, pi->name);
		puts_(pg, "</b>");
		for (size_t i = 0; i < pi->n_params; i++) {
			const char *k, *v;

			rules_profile_param(e, p, i, &k, &v);
			puts_(pg, i ? " " : " (");
			esc(pg, k);
			puts_(pg, "=");
			esc(pg, v);
			if (i + 1 == pi->n_params)
				puts_(pg, ")");
		}
	}
}

static void head(struct page *pg, enum rules_status st, const size_t cnt[RULE__OUTCOMES + 1],
		 size_t crit, size_t warn)
{
	const struct status_page_input *in = pg->in;
	const char *stname = in->e ? rules_status_name(st) : "NO RULES";
	char iv[32];

	sb_printf(pg->out,
		  "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		  "<meta http-equiv=\"refresh\" content=\"%d\">\n<title>",
		  in->refresh_s > 0 ? in->refresh_s : STATUS_PAGE_REFRESH_S);
	esc(pg, stname);
	puts_(pg, " - ");
	esc(pg, in->host);
	puts_(pg, " - rocewatch</title>\n<style>");
	puts_(pg, css);
	puts_(pg, "</style>\n</head>\n<body>\n");
	sb_printf(pg->out, "<header id=\"verdict\" class=\"%s\"><div>\n<h1><span id=\"status\">",
		  in->e ? status_class(st) : "unknown");
	esc(pg, stname);
	puts_(pg, "</span><span id=\"host\">");
	esc(pg, in->host);
	puts_(pg, "</span></h1>\n<p id=\"counts\">");
	if (in->e)
		sb_printf(pg->out,
			  "%zu failing (%zu critical, %zu warning), %zu unknown, %zu passing, "
			  "%zu skipped",
			  cnt[RULE_FAIL], crit, warn, cnt[RULE_UNKNOWN], cnt[RULE_PASS],
			  cnt[RULE_SKIP]);
	else
		puts_(pg, "no rules are loaded");
	if (in->e) {
		/* the health verdict and what to do, from the failing rules' declared actions */
		const struct rule_result *res;
		size_t n = rules_results(in->e, &res);
		enum node_verdict v = rules_verdict(in->e);
		bool seen[RACT__COUNT] = { false };
		int k = 0;

		for (size_t i = 0; i < n; i++)
			if (res[i].outcome == RULE_FAIL)
				seen[res[i].rule->action] = true;
		puts_(pg, "</p>\n<p id=\"health\">node verdict: <span id=\"node-verdict\">");
		esc(pg, node_verdict_name(v));
		puts_(pg, "</span>");
		if (v == VERDICT_FATAL)
			puts_(pg, " (drain)");
		for (int a = 1; a < RACT__COUNT; a++) {
			size_t named = 0, more = 0;

			if (!seen[a])
				continue;
			puts_(pg, k++ ? "; " : "; do: ");
			puts_(pg, "<span class=\"action\">");
			esc(pg, rule_action_name((enum rule_action)a));
			puts_(pg, "</span>");
			/* where: "reseat-or-replace-cable on mlx5_0/1", at most three objects */
			for (size_t i = 0; i < n; i++) {
				const struct rule_result *x = &res[i];
				char obj[RW_NAME_MAX + 16];
				bool dup = false;

				if (x->outcome != RULE_FAIL ||
				    x->rule->action != (enum rule_action)a)
					continue;
				for (size_t j = 0; j < i && !dup; j++)
					dup = res[j].outcome == RULE_FAIL &&
					      res[j].rule->action == (enum rule_action)a &&
					      res[j].kind == x->kind && res[j].port == x->port &&
					      !strcmp(res[j].device, x->device);
				if (dup)
					continue;
				if (named == 3) {
					more++;
					continue;
				}
				if (x->kind == OBJ_RDMA_PORT)
					snprintf(obj, sizeof(obj), "%s/%u", x->device, x->port);
				else
					snprintf(obj, sizeof(obj), "%s",
						 x->kind == OBJ_NODE ? "the node" : x->device);
				puts_(pg, named++ ? ", " : " on ");
				puts_(pg, "<span class=\"object\">");
				esc(pg, obj);
				puts_(pg, "</span>");
			}
			if (more)
				sb_printf(pg->out, " +%zu more", more);
		}
		coverage_lines(pg, in->e);
	}
	puts_(pg, "</p>\n<p id=\"profile\">");
	if (in->e)
		profiles_line(pg);
	puts_(pg, "</p>\n<p id=\"poll\">");
	rules_format_duration(in->interval_ns, iv, sizeof(iv));
	if (in->poll_ns)
		when(pg, "last poll ", in->poll_ns);
	else
		puts_(pg, "no poll yet");
	sb_printf(pg->out,
		  ", every %s%s; this page refreshes every %d s</p>\n</div></header>\n<main>\n", iv,
		  in->replay ? " (replaying a snapshot file, not this machine)" : "",
		  in->refresh_s > 0 ? in->refresh_s : STATUS_PAGE_REFRESH_S);
	/* old rules still run: said where nobody can miss it */
	if (in->reload.reloads && !in->reload.ok) {
		puts_(pg, "<div class=\"banner\" id=\"reload-failed\"><b>Rule reload failed</b> ");
		when(pg, "", in->reload.ns);
		puts_(pg, ": the previous rules are still in force. ");
		if (in->reload.error && in->reload.error[0]) {
			puts_(pg, "<code>");
			esc(pg, in->reload.error);
			puts_(pg, "</code>");
		}
		puts_(pg, "</div>\n");
	}
}

/* A rule's doc: paragraphs at blank lines, `spans` as code. */
static void doc_html(struct page *pg, const char *doc)
{
	const char *p = doc;
	bool code = false;

	puts_(pg, "<div class=\"doc\"><p>");
	while (*p) {
		size_t n = strcspn(p, "`\n");

		sb_html_escape_n(pg->out, p, n);
		p += n;
		if (*p == '`') {
			puts_(pg, code ? "</code>" : "<code>");
			code = !code;
			p++;
		} else if (*p == '\n') {
			size_t nl = strspn(p, "\n");

			/* a blank line ends a paragraph (a span, too: it never runs over one) */
			if (nl > 1 && p[nl]) {
				puts_(pg, code ? "</code></p><p>" : "</p><p>");
				code = false;
			} else {
				sb_putc(pg->out, ' ');
			}
			p += nl;
		}
	}
	puts_(pg, code ? "</code></p></div>\n" : "</p></div>\n");
}

static int rank(const struct rule_result *x)
{
	if (x->outcome == RULE_FAIL)
		return (int)rule_result_severity(x); /* 0 critical, 1 warning, 2 info */
	return x->outcome == RULE_UNKNOWN ? 3 : -1;
}

/* One rule that is not OK on some objects: each object's summary, the fix once. */
static void problem(struct page *pg, size_t first, size_t end, int rk)
{
	const struct rule_result *x0 = NULL;
	char label[RW_NAME_MAX * 2 + 32], doc[4096];
	size_t shown = 0;

	for (size_t i = first; i < end; i++) {
		const struct rule_result *x = &pg->res[i];

		if (rank(x) != rk)
			continue;
		if (!x0) {
			x0 = x;
			sb_printf(pg->out, "<article class=\"problem %s\" data-rule=\"",
				  rk == 3 ? "unknown"
					  : rule_severity_name(rule_result_severity(x)));
			esc(pg, x->rule->name);
			sb_printf(pg->out, "\">\n<h3><span class=\"tag %s\">%s %s</span><code>",
				  rk == 3 ? "unknown" : rule_severity_name(rule_result_severity(x)),
				  rule_outcome_name(x->outcome),
				  rule_severity_name(rule_result_severity(x)));
			esc(pg, x->rule->name);
			puts_(pg, "</code> <span class=\"prof\">");
			esc(pg, x->rule->profile);
			puts_(pg, "</span></h3>\n<ul class=\"objects\">\n");
		}
		object_label(label, sizeof(label), x);
		puts_(pg, "<li><b class=\"obj\">");
		esc(pg, label);
		puts_(pg, "</b>: <span class=\"summary\">");
		esc(pg, x->outcome == RULE_UNKNOWN ? x->reason : x->summary);
		puts_(pg, "</span> ");
		if (x->since_ns)
			when(pg, "since ", x->since_ns);
		puts_(pg, "</li>\n");
		shown++;
	}
	if (!x0)
		return;
	puts_(pg, "</ul>\n");
	if (rk == 3) {
		/* unknown: what could not be read, once per reason; never the failure's fix */
		for (size_t i = first; i < end; i++) {
			const struct rule_result *x = &pg->res[i];
			bool said = false;

			if (rank(x) != rk)
				continue;
			for (size_t j = first; j < i && !said; j++)
				said = rank(&pg->res[j]) == rk &&
				       !strcmp(pg->res[j].reason, x->reason);
			if (said)
				continue;
			rules_unknown_hint(x, doc, sizeof(doc));
			doc_html(pg, doc);
		}
	} else if (x0->rule->doc[0]) {
		rules_doc_for(x0, pg->in->m, doc, sizeof(doc));
		doc_html(pg, doc);
		if (shown > 1) {
			object_label(label, sizeof(label), x0);
			puts_(pg, "<p class=\"muted\">The fix is shown for ");
			esc(pg, label);
			puts_(pg, "; the same applies to the others with their names.</p>\n");
		}
	}
	puts_(pg, "</article>\n");
}

static void problems(struct page *pg, size_t nprob)
{
	sb_printf(pg->out, "<section id=\"problems\">\n<h2>Not OK (%zu)</h2>\n", nprob);
	if (!nprob)
		puts_(pg, "<p>Every rule that applies passes.</p>\n");
	/* worst first; within a rank, rules in profile order, their objects together */
	for (int rk = 0; rk <= 3; rk++) {
		for (size_t i = 0; i < pg->n;) {
			size_t j = i;

			while (j < pg->n && pg->res[j].rule == pg->res[i].rule)
				j++;
			problem(pg, i, j, rk);
			i = j;
		}
	}
	if (pg->in->e) {
		for (size_t p = 0; p < rules_profile_count(pg->in->e); p++) {
			const struct rules_profile_info *pi = rules_profile(pg->in->e, p);

			for (int k = 0; k < OBJ__COUNT; k++) {
				if (!pi->requires[k] || pi->requirements_met)
					continue;
				puts_(pg,
				      "<article class=\"problem unknown\"><h3><span class=\"tag\">"
				      "unknown</span>profile <code>");
				esc(pg, pi->name);
				sb_printf(pg->out, "</code> requires an %s",
					  obj_kind_name((enum obj_kind)k));
				if (pi->applies_src[k]) {
					puts_(pg, " where <code>");
					esc(pg, pi->applies_src[k]);
					puts_(pg, "</code>");
				}
				puts_(pg, " and this node has none</h3></article>\n");
			}
		}
	}
	puts_(pg, "</section>\n");
}

static bool is_unknown_alert(const struct alert *a)
{
	return !strcmp(a->alertname, ALERT_UNKNOWN_NAME);
}

static int sev_rank(const char *sev)
{
	return !strcmp(sev, "critical") ? 0 : !strcmp(sev, "warning") ? 1 : 2;
}

static void alert_object(struct page *pg, const struct alert *a)
{
	esc(pg, a->device[0] ? a->device : "the node");
	if (a->port[0]) {
		puts_(pg, "/");
		esc(pg, a->port);
	}
}

static void alert_line(struct page *pg, const struct alert *a)
{
	bool firing = a->state == ALERT_FIRING;

	sb_printf(pg->out, "<li class=\"%s\"><span class=\"tag %s\">%s</span>",
		  firing ? "firing" : "pending", firing ? "critical" : "unknown",
		  firing ? "firing" : "pending");
	puts_(pg, "<b>");
	esc(pg, a->alertname);
	puts_(pg, "</b> ");
	esc(pg, a->severity);
	puts_(pg, " on ");
	alert_object(pg, a);
	puts_(pg, " ");
	when(pg, "since ", firing ? a->fired_at : a->active_since);
	puts_(pg, ": ");
	esc(pg, a->summary);
	puts_(pg, "</li>\n");
}

static bool same_unknown(const struct alert *a, const struct alert *b)
{
	return a->state == b->state && is_unknown_alert(b) && !strcmp(a->rule, b->rule) &&
	       !strcmp(a->profile, b->profile) && !strcmp(a->value, b->value);
}

/* RoceRuleUnknown alerts of one rule, reason and state: one line, at the first of them. */
static void unknown_group(struct page *pg, const struct alert_table *t, size_t first)
{
	const struct alert *a = &t->a[first];
	bool firing = a->state == ALERT_FIRING;
	int64_t since = firing ? a->fired_at : a->active_since;
	size_t n = 0;

	for (size_t i = 0; i < first; i++)
		if (same_unknown(a, &t->a[i]))
			return; /* listed with an earlier one */
	sb_printf(pg->out,
		  "<li class=\"%s unknown\"><span class=\"tag unknown\">%s</span>"
		  "<b>" ALERT_UNKNOWN_NAME "</b> <code>",
		  firing ? "firing" : "pending", firing ? "firing" : "pending");
	esc(pg, a->rule);
	puts_(pg, "</code> cannot be decided on ");
	for (size_t i = first; i < t->n; i++) {
		const struct alert *b = &t->a[i];
		int64_t bs = firing ? b->fired_at : b->active_since;

		if (i != first && !same_unknown(a, b))
			continue;
		if (bs < since)
			since = bs;
		if (n++ < 8) {
			puts_(pg, n > 1 ? ", " : "");
			alert_object(pg, b);
		}
	}
	if (n > 8)
		sb_printf(pg->out, " and %zu more", n - 8);
	puts_(pg, " ");
	when(pg, "since ", since);
	puts_(pg, ": ");
	esc(pg, a->value);
	puts_(pg, "</li>\n");
}

static void alerts(struct page *pg)
{
	const struct alert_table *t = pg->in->alerts;
	const struct am_status *am = pg->in->am;
	size_t firing = t ? alerts_count(t, ALERT_FIRING) : 0;
	size_t pending = t ? alerts_count(t, ALERT_PENDING) : 0;

	sb_printf(pg->out,
		  "<section id=\"alerts\">\n<h2>Alerts</h2>\n<p id=\"alert-summary\">%zu firing, "
		  "%zu pending (<a href=\"/api/v1/alerts\">/api/v1/alerts</a>).</p>\n",
		  firing, pending);
	if (firing + pending) {
		puts_(pg, "<ul class=\"alerts\" id=\"alert-list\">\n");
		/*
		 * what fails first (firing, then pending, worst severity first), then
		 * what cannot be decided, one line per rule and reason naming its
		 * objects: eight NICs without a counter must not drown one failure
		 */
		for (int s = ALERT_FIRING; s >= ALERT_PENDING; s--)
			for (int sev = 0; sev < 3; sev++)
				for (size_t i = 0; i < t->n; i++)
					if ((int)t->a[i].state == s &&
					    !is_unknown_alert(&t->a[i]) &&
					    sev_rank(t->a[i].severity) == sev)
						alert_line(pg, &t->a[i]);
		for (int s = ALERT_FIRING; s >= ALERT_PENDING; s--)
			for (size_t i = 0; i < t->n; i++)
				if ((int)t->a[i].state == s && is_unknown_alert(&t->a[i]))
					unknown_group(pg, t, i);
		puts_(pg, "</ul>\n");
	}
	puts_(pg, "<p id=\"alertmanager\">Alertmanager: ");
	if (!am || !am->n_urls)
		puts_(pg, "not configured (<code>--alertmanager.url</code>); alerts are on "
			  "<code>/metrics</code> for Prometheus.");
	for (int u = 0; am && u < am->n_urls; u++) {
		const struct am_url_status *s = &am->u[u];
		bool failing = s->last_error_ns > s->last_success_ns;

		puts_(pg, u ? "<br>" : "");
		puts_(pg, "<code>");
		esc(pg, s->url);
		sb_printf(pg->out, "</code>: <span class=\"%s\">", failing ? "fail" : "ok");
		if (s->last_success_ns)
			when(pg, "last delivery ", s->last_success_ns);
		else
			puts_(pg, "nothing delivered yet");
		puts_(pg, "</span>");
		sb_printf(pg->out, ", %llu batches sent, %llu errors", (unsigned long long)s->sent,
			  (unsigned long long)s->errors);
		if (s->last_error_ns) {
			puts_(pg, " (last: ");
			esc(pg, s->last_error);
			puts_(pg, ", ");
			when(pg, "", s->last_error_ns);
			puts_(pg, ")");
		}
	}
	if (am && am->n_urls)
		sb_printf(pg->out, "; %zu batch%s queued, %llu dropped", am->queued,
			  am->queued == 1 ? "" : "es", (unsigned long long)am->dropped);
	puts_(pg, "</p>\n</section>\n");
}

/* ---- sparklines ---- */

#define SPARK_W 300
#define SPARK_H 44

struct line {
	const struct hist_obj *o;
	unsigned series;
	const char *label;
	const char *color;
};

static const char *const prio_colors[RW_PRIO_COUNT] = {
	"#6e7781", "#8250df", "#bf3989", "#cf222e", "#1a7f37", "#0969da", "#bc4c00", "#116329",
};

static void human(char *buf, size_t len, double v)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.1fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.0fk", v / 1e3);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v >= 10 || v == 0)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.2g", v);
}

/* The largest value of a line (NaN: it has no point at all). */
static double line_max(const struct history *h, const struct line *l)
{
	double mx = NAN;

	for (size_t i = 0; l->o && i < history_len(h); i++) {
		float v = history_value(h, l->o, l->series, i);

		if (!isnan(v) && (isnan(mx) || v > mx))
			mx = v;
	}
	return mx;
}

static float line_last(const struct history *h, const struct line *l)
{
	for (size_t i = history_len(h); l->o && i > 0; i--) {
		float v = history_value(h, l->o, l->series, i - 1);

		if (!isnan(v))
			return v;
	}
	return NAN;
}

/*
 * One chart: the lines that moved (all of them flat at 0 if none did), on a
 * common scale, new points entering from the right; a gap where a counter
 * was absent.  data-points says how many points are drawn.
 */
static void chart(struct page *pg, const char *id, const char *title, const char *what,
		  struct line *lines, size_t n, bool only_moving)
{
	const struct history *h = pg->in->hist;
	size_t len = h ? history_len(h) : 0, off = HIST_POINTS - len, drawn = 0;
	double mx = 0, m[RW_PRIO_COUNT * 2];
	bool any_data = false, any_moving = false;
	char v[32];

	for (size_t k = 0; k < n; k++) {
		m[k] = h ? line_max(h, &lines[k]) : NAN;
		any_data |= !isnan(m[k]);
		any_moving |= !isnan(m[k]) && m[k] > 0;
		if (!isnan(m[k]) && m[k] > mx)
			mx = m[k];
	}
	sb_printf(pg->out, "<div class=\"chart\" data-chart=\"%s\"><div class=\"t\"><span>", id);
	esc(pg, title);
	puts_(pg, "</span>");
	if (any_data) {
		human(v, sizeof(v), mx);
		sb_printf(pg->out, "<span class=\"muted\">max %s/s</span>", v);
	}
	puts_(pg, "</div>\n");
	if (!any_data) {
		/* absent is not 0: these counters do not exist here */
		puts_(pg, "<div class=\"nodata\">no data: the counters are not available "
			  "here</div></div>\n");
		return;
	}
	sb_printf(pg->out,
		  "<svg class=\"spark\" viewBox=\"0 0 %d %d\" preserveAspectRatio=\"none\" "
		  "role=\"img\" aria-label=\"",
		  SPARK_W, SPARK_H);
	esc(pg, title);
	puts_(pg, ", ");
	esc(pg, what);
	puts_(pg, "\"");
	/* the count is written after the lines, as an element the test can read */
	puts_(pg, "><title>");
	esc(pg, title);
	puts_(pg, ", ");
	esc(pg, what);
	puts_(pg, "</title>");
	for (size_t k = 0; k < n; k++) {
		bool open = false;

		if (isnan(m[k]) || (only_moving && any_moving && m[k] <= 0))
			continue;
		for (size_t i = 0; i < len; i++) {
			float y = history_value(h, lines[k].o, lines[k].series, i);
			double x = (double)(off + i) * SPARK_W / (HIST_POINTS - 1);

			if (isnan(y)) {
				if (open)
					puts_(pg, "\"/>");
				open = false;
				continue;
			}
			if (!open)
				sb_printf(
				    pg->out,
				    "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
				    "vector-effect=\"non-scaling-stroke\" points=\"",
				    lines[k].color);
			else
				sb_putc(pg->out, ' ');
			open = true;
			sb_printf(pg->out, "%.1f,%.1f", x,
				  SPARK_H - 2 - (mx > 0 ? y / mx : 0) * (SPARK_H - 4));
			drawn++;
		}
		if (open)
			puts_(pg, "\"/>");
		if (!any_moving)
			break; /* all at 0: one flat line says it */
	}
	sb_printf(pg->out, "</svg><div class=\"lg\" data-points=\"%zu\">", drawn);
	for (size_t k = 0; k < n; k++) {
		float last;

		if (isnan(m[k]) || (only_moving && any_moving && m[k] <= 0))
			continue;
		if (!any_moving && only_moving) {
			puts_(pg, "<span>all 0/s</span>");
			break;
		}
		last = line_last(h, &lines[k]);
		human(v, sizeof(v), last);
		sb_printf(pg->out, "<span><i style=\"background:%s\"></i>", lines[k].color);
		esc(pg, lines[k].label);
		sb_printf(pg->out, " %s/s</span>", v);
	}
	puts_(pg, "</div></div>\n");
}

static void port_card(struct page *pg, const struct object *p)
{
	const struct history *h = pg->in->hist;
	const struct hist_obj *ho = h ? history_find(h, OBJ_RDMA_PORT, p->name, p->port) : NULL;
	const struct hist_obj *nd =
	    h && p->netdev ? history_find(h, OBJ_NETDEV, p->netdev->name, 0) : NULL;
	struct line l[RW_PRIO_COUNT * 2];
	char what[RW_NAME_MAX * 2 + 32], lab[RW_PRIO_COUNT][4];
	size_t n;

	snprintf(what, sizeof(what), "%s/%u%s%s", p->name, p->port, p->netdev ? " " : "",
		 p->netdev ? p->netdev->name : "");
	puts_(pg, "<article class=\"card\" data-port=\"");
	esc(pg, p->name);
	sb_printf(pg->out, "/%u\"><h3>", p->port);
	esc(pg, p->name);
	sb_printf(pg->out, "/%u", p->port);
	if (p->netdev) {
		puts_(pg, " <span class=\"prof\">netdev</span> ");
		esc(pg, p->netdev->name);
	}
	puts_(pg, "</h3>\n<div class=\"muted\">");
	if (field_present(p, F_PORT_STATE))
		esc(pg, p->f[F_PORT_STATE].v.s);
	if (field_present(p, F_PORT_LINK_LAYER)) {
		puts_(pg, ", ");
		esc(pg, p->f[F_PORT_LINK_LAYER].v.s);
	}
	if (field_present(p, F_PORT_ACTIVE_MTU))
		sb_printf(pg->out, ", active_mtu %lld", (long long)p->f[F_PORT_ACTIVE_MTU].v.i);
	puts_(pg, "</div>\n");

	for (int dir = 0; dir < 2; dir++) {
		for (int q = 0; q < RW_PRIO_COUNT; q++) {
			snprintf(lab[q], sizeof(lab[q]), "p%d", q);
			l[q] = (struct line){ nd, (unsigned)((dir ? NS_PAUSE_TX : NS_PAUSE_RX) + q),
					      lab[q], prio_colors[q] };
		}
		chart(pg, dir ? "pause-tx" : "pause-rx",
		      dir ? "PFC pause frames sent /s" : "PFC pause frames received /s", what, l,
		      RW_PRIO_COUNT, true);
	}
	n = 0;
	l[n++] = (struct line){ ho, PS_RETRIES, "retries, timeouts", "#cf222e" };
	l[n++] = (struct line){ ho, PS_OOS, "out of sequence", "#0969da" };
	chart(pg, "retries", "Retries and out-of-sequence /s", what, l, n, false);
	n = 0;
	l[n++] = (struct line){ ho, PS_CNP_SENT, "sent", "#8250df" };
	l[n++] = (struct line){ ho, PS_CNP_HANDLED, "handled", "#bc4c00" };
	chart(pg, "cnp", "CNPs sent and handled /s", what, l, n, false);
	n = 0;
	l[n++] = (struct line){ nd, NS_DISCARDS, "netdev", "#cf222e" };
	l[n++] = (struct line){ ho, PS_DISCARDS, "RDMA", "#6e7781" };
	chart(pg, "discards", "Discards /s", what, l, n, false);
	puts_(pg, "</article>\n");
}

static void ports(struct page *pg)
{
	const struct node_model *m = pg->in->m;
	const struct history *h = pg->in->hist;
	char span[32], step[32];
	size_t len = h ? history_len(h) : 0;

	puts_(pg,
	      "<section id=\"ports\">\n<h2>RDMA ports: the last minutes</h2>\n<p class=\"muted\">");
	rules_format_duration(h ? h->step_ns * HIST_POINTS : 0, span, sizeof(span));
	rules_format_duration(h ? h->step_ns : 0, step, sizeof(step));
	if (len > 1) {
		char have[32];

		rules_format_duration(history_time(h, len - 1) - history_time(h, 0), have,
				      sizeof(have));
		sb_printf(pg->out, "Rates per second, one point per %s, up to %s (%s so far).",
			  step, span, have);
	} else {
		sb_printf(pg->out,
			  "Rates per second, one point per %s, up to %s: the first points come "
			  "after two polls.",
			  step, span);
	}
	puts_(pg, "</p>\n");
	if (!m->n_ports)
		puts_(pg, "<p>This node has no RDMA port.</p>\n");
	puts_(pg, "<div class=\"cards\">\n");
	for (size_t i = 0; i < m->n_ports; i++)
		port_card(pg, m->ports[i]);
	puts_(pg, "</div>\n</section>\n");
}

/* Rules of one outcome, folded: rule, object, summary. */
static void folded(struct page *pg, enum rule_outcome o, const char *id, const char *what,
		   size_t count)
{
	char label[RW_NAME_MAX * 2 + 32];

	if (!count)
		return;
	sb_printf(pg->out,
		  "<details id=\"%s\"><summary>%zu %s</summary>\n<div class=\"tw\"><table>"
		  "<tr><th>rule</th><th>severity</th><th>object</th><th>%s</th></tr>\n",
		  id, count, what, o == RULE_SKIP ? "why" : "summary");
	for (size_t i = 0; i < pg->n; i++) {
		const struct rule_result *x = &pg->res[i];

		if (x->outcome != o)
			continue;
		object_label(label, sizeof(label), x);
		puts_(pg, "<tr><td><code>");
		esc(pg, x->rule->name);
		sb_printf(pg->out, "</code></td><td>%s</td><td>",
			  rule_severity_name(rule_result_severity(x)));
		esc(pg, label);
		puts_(pg, "</td><td>");
		esc(pg, o == RULE_SKIP ? x->reason : x->summary);
		puts_(pg, "</td></tr>\n");
	}
	puts_(pg, "</table></div></details>\n");
}

static void service(struct page *pg)
{
	const struct status_page_input *in = pg->in;
	const struct node_model *m = in->m;
	size_t ok = 0, failed = 0, disabled = 0;

	for (int i = 0; i < RW_MAX_COLLECTORS; i++) {
		const struct collector_status *cs = &m->coll[i];

		if (!cs->name[0])
			continue;
		if (!cs->enabled)
			disabled++;
		else if (cs->ran && !cs->err)
			ok++;
		else
			failed++;
	}
	puts_(pg, "<section id=\"service\">\n<h2>rocewatch</h2>\n<p id=\"reload\">Rules: ");
	if (!in->reload.reloads) {
		when(pg, "loaded at start-up, ", in->reload.ns);
	} else {
		sb_printf(pg->out, "<span class=\"%s\">", in->reload.ok ? "ok" : "fail");
		when(pg, in->reload.ok ? "last reloaded " : "last reload FAILED ", in->reload.ns);
		puts_(pg, "</span>");
		if (!in->reload.ok && in->reload.error && in->reload.error[0]) {
			puts_(pg, ": <code>");
			esc(pg, in->reload.error);
			puts_(pg, "</code>");
		}
		sb_printf(pg->out, " (%llu reload%s, %llu failed; SIGHUP reloads)",
			  (unsigned long long)in->reload.reloads,
			  in->reload.reloads == 1 ? "" : "s",
			  (unsigned long long)in->reload.failures);
	}
	sb_printf(pg->out,
		  ".</p>\n<p>%zu netdevs, %zu RDMA ports; %llu fast and %llu slow polls.</p>\n",
		  m->n_netdevs, m->n_ports, (unsigned long long)in->fast_polls,
		  (unsigned long long)in->slow_polls);
	/* a failed collector is why rules are unknown: open when one failed */
	if (!ok && !failed && !disabled) {
		puts_(pg,
		      "<p id=\"collector-status\">Collectors: none runs while a snapshot file is "
		      "replayed.</p>\n");
		goto footer;
	}
	sb_printf(pg->out,
		  "<details id=\"collector-status\"%s><summary>Collectors: %zu ok, %zu failed, %zu "
		  "disabled</summary>\n<div class=\"tw\"><table id=\"collectors\"><tr>"
		  "<th>collector</th><th>status</th><th>duration</th><th>detail</th></tr>\n",
		  failed ? " open" : "", ok, failed, disabled);
	for (int i = 0; i < RW_MAX_COLLECTORS; i++) {
		const struct collector_status *cs = &m->coll[i];
		bool good = cs->enabled && cs->ran && !cs->err;

		if (!cs->name[0])
			continue;
		puts_(pg, "<tr><td>");
		esc(pg, cs->name);
		/* disabled is not failed: grey, not red */
		sb_printf(pg->out, "</td><td class=\"%s\">%s</td><td>%.3f ms</td><td>",
			  !cs->enabled ? "disabled"
			  : good       ? "ok"
				       : "fail",
			  !cs->enabled ? "disabled"
			  : good       ? "ok"
			  : cs->ran    ? "failed"
				       : "pending",
			  cs->duration * 1e3);
		esc(pg, cs->detail);
		puts_(pg, "</td></tr>\n");
	}
	puts_(pg, "</table></div></details>\n");
footer:
	puts_(pg, "</section>\n</main>\n<footer>rocewatch ");
	esc(pg, in->version);
	puts_(pg, " &middot; <a href=\"");
	esc(pg, in->telemetry_path);
	puts_(pg, "\">");
	esc(pg, in->telemetry_path);
	puts_(pg, "</a> &middot; <a href=\"/api/v1/checks\">/api/v1/checks</a> &middot; "
		  "<a href=\"/api/v1/state\">/api/v1/state</a> &middot; "
		  "<a href=\"/api/v1/alerts\">/api/v1/alerts</a> &middot; "
		  "<a href=\"/healthz\">/healthz</a></footer>\n</body>\n</html>\n");
}

int status_page_render(struct strbuf *out, const struct status_page_input *in)
{
	struct page pg = { .out = out, .in = in };
	size_t cnt[RULE__OUTCOMES + 1] = { 0 }, crit = 0, warn = 0, nprob = 0;
	enum rules_status st = RULES_UNKNOWN;

	if (in->e) {
		pg.n = rules_results(in->e, &pg.res);
		st = rules_status(in->e);
	}
	for (size_t i = 0; i < pg.n; i++) {
		const struct rule_result *x = &pg.res[i];

		cnt[x->outcome]++;
		nprob += rank(x) >= 0;
		if (x->outcome == RULE_FAIL) {
			crit += rule_result_severity(x) == SEV_CRITICAL;
			warn += rule_result_severity(x) == SEV_WARNING;
		}
	}
	head(&pg, st, cnt, crit, warn);
	problems(&pg, nprob);
	alerts(&pg);
	ports(&pg);
	puts_(&pg, "<section id=\"rules\">\n<h2>Passing and skipped rules</h2>\n");
	folded(&pg, RULE_PASS, "passing", "passing", cnt[RULE_PASS]);
	folded(&pg, RULE_SKIP, "skipped", "skipped (the rule's guard is false)", cnt[RULE_SKIP]);
	if (!cnt[RULE_PASS] && !cnt[RULE_SKIP])
		puts_(&pg, "<p>None.</p>\n");
	puts_(&pg, "</section>\n");
	service(&pg);
	return out->oom ? -ENOMEM : 0;
}
