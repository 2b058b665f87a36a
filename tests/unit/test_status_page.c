// SPDX-License-Identifier: MIT
/*
 * The status page without a browser (tests/web/test-status-page.sh renders
 * it in Chromium): the verdict, a failing rule with its fix for the device,
 * sparklines once counters moved, "no data" where a counter is absent (not a
 * flat 0), a failed reload as a banner, and names from the machine escaped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "history.h"
#include "nfd.h"
#include "status_page.h"
#include "vendors.h"

#define EVIL "<b>x&y\"</b>"

static const char rules_yaml[] = "profile: t\n"
				 "params: { min_mtu: 4200 }\n"
				 "rules:\n"
				 "  - name: netdev_mtu\n"
				 "    scope: netdev\n"
				 "    expr: mtu >= $min_mtu\n"
				 "    severity: critical\n"
				 "    action: fix-config\n"
				 "    summary: \"MTU {mtu}\"\n"
				 "    doc: |\n"
				 "      Fix: `ip link set dev IF mtu 9000`\n"
				 "      on <every> node.\n";

static void poll_model(struct node_model *m, struct history *h, int64_t t, uint64_t pause)
{
	struct object *nd = model_netdev(m, EVIL), *p = model_port(m, "mlx5_0", 1);

	field_set_prio(nd, F_NETDEV_PFC_RX_PAUSE, 3, pause);
	cset_set(&p->cs[CSET_HW], "np_cnp_sent", pause * 2);
	vendor_fill_port(p, NULL, false); /* as the rdma collector does after each read */
	status_history_feed(h, m, t);
}

static void renders_verdict_fix_sparklines_and_escapes(void **st)
{
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	struct node_model m;
	struct history h;
	struct strbuf out = { 0 };
	struct object *nd, *p;
	struct alert_table at;
	struct am_status am = { 0 };
	const char *s, *ports;

	(void)st;
	model_init(&m);
	snprintf(m.host, sizeof(m.host), "node&1");
	nd = model_add_netdev(&m, EVIL);
	field_set_int(nd, F_NETDEV_MTU, 1500);
	nd->ifindex = 4;
	p = model_add_port(&m, "mlx5_0", 1);
	p->ifindex = 4;
	field_set_str(p, F_PORT_NETDEV, EVIL);
	model_link_ports(&m);
	assert_ptr_equal(p->netdev, nd);
	if (rules_load_buffer("t.yaml", rules_yaml, strlen(rules_yaml), &spec, &e, &dg)) {
		for (size_t i = 0; i < dg.n; i++)
			print_error("%s\n", dg.d[i].msg);
		fail();
	}
	assert_int_equal(rules_evaluate(e, &m, 1000000000LL), 0);
	status_history_init(&h, 1000000000LL);
	for (int i = 0; i < 4; i++)
		poll_model(&m, &h, 1000000000LL * (i + 1), 100ULL * (uint64_t)(i * i));
	alerts_init(&at);

	assert_int_equal(status_page_render(&out,
					    &(struct status_page_input){
						.version = "0.1.0",
						.host = m.host,
						.telemetry_path = "/metrics",
						.now_ns = 5000000000LL,
						.poll_ns = 4000000000LL,
						.interval_ns = 1000000000LL,
						.m = &m,
						.e = e,
						.alerts = &at,
						.am = &am,
						.reload = { .ok = false,
							    .ns = 4500000000LL,
							    .reloads = 1,
							    .failures = 1,
							    .error = "t.yaml:3:7: <oops>" },
						.hist = &h,
					    }),
			 0);
	sb_putc(&out, '\0');
	s = out.buf;
	assert_non_null(strstr(s, "<span id=\"status\">CRITICAL</span>"));
	/* a critical configuration rule fails: the node verdict is fatal */
	assert_non_null(strstr(s, "node verdict: <span id=\"node-verdict\">fatal</span> (drain)"));
	/* issue 41: what to do, and where (the object's name escaped) */
	assert_non_null(strstr(s, "; do: <span class=\"action\">fix-config</span> on <span "
				  "class=\"object\">&lt;b&gt;x&amp;y&quot;&lt;/b&gt;</span>"));
	assert_non_null(strstr(s, "<span id=\"host\">node&amp;1</span>"));
	/* the fix with the device's name, escaped, and the doc's own markup-like text too */
	assert_non_null(
	    strstr(s, "<code>ip link set dev &lt;b&gt;x&amp;y&quot;&lt;/b&gt; mtu 9000</code>"));
	assert_non_null(strstr(s, "on &lt;every&gt; node."));
	assert_null(strstr(s, EVIL));
	assert_null(strstr(s, "<every>"));
	/* the failed reload, its error escaped */
	assert_non_null(strstr(s, "id=\"reload-failed\""));
	assert_non_null(strstr(s, "t.yaml:3:7: &lt;oops&gt;"));
	/* sparklines: pause on priority 3 moved (3 points), CNPs moved, retries absent */
	ports = strstr(s, "<section id=\"ports\">");
	assert_non_null(ports);
	assert_non_null(strstr(ports, "data-chart=\"pause-rx\""));
	assert_non_null(strstr(strstr(ports, "data-chart=\"pause-rx\""), "data-points=\"3\""));
	assert_non_null(strstr(strstr(ports, "data-chart=\"cnp\""), "<polyline"));
	{
		const char *nodata = strstr(strstr(ports, "data-chart=\"retries\""), "no data");

		/* absent counters are "no data" in their own chart, not a flat line */
		assert_non_null(nodata);
		assert_true(nodata < strstr(ports, "data-chart=\"cnp\""));
	}
	assert_non_null(strstr(s, "Alertmanager: not configured"));
	assert_non_null(strstr(s, "</html>\n"));

	sb_free(&out);
	alerts_free(&at);
	history_free(&h);
	rules_free(e);
	rules_diags_free(&dg);
	model_free(&m);
}

/*
 * An incident with a failure and a rule undecided on three netdevs: the failing
 * alert comes first, the unknowns are one line naming the rule, its reason and
 * the objects; the unknown rule says what could not be read, never its fix.
 */
static const char two_yaml[] = "profile: t\n"
			       "rules:\n"
			       "  - name: netdev_mtu\n    scope: netdev\n    severity: critical\n"
			       "    expr: mtu >= 4200\n    summary: \"MTU {mtu}\"\n"
			       "  - name: pfc_on\n    scope: netdev\n    severity: warning\n"
			       "    expr: pfc.enabled == {3}\n"
			       "    doc: \"Fix: `dcb pfc set dev IF prio-pfc 3:on`.\"\n";

static void unknowns_grouped_below_failures(void **st)
{
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	struct node_model m;
	struct history h;
	struct strbuf out = { 0 };
	struct alert_table at;
	struct am_status am = { 0 };
	const char *s, *list, *fail, *unk;

	(void)st;
	model_init(&m);
	snprintf(m.host, sizeof(m.host), "n1");
	field_set_int(model_add_netdev(&m, "eth1"), F_NETDEV_MTU, 1500);
	field_set_int(model_add_netdev(&m, "eth2"), F_NETDEV_MTU, 9000);
	field_set_int(model_add_netdev(&m, "eth3"), F_NETDEV_MTU, 9000);
	assert_int_equal(rules_load_buffer("t.yaml", two_yaml, strlen(two_yaml), NULL, &e, &dg), 0);
	assert_int_equal(rules_evaluate(e, &m, 1000000000LL), 0);
	status_history_init(&h, 1000000000LL);
	alerts_init(&at);
	at.unknown_for_ns = 0;
	alerts_feed_rules(&at, e, 1000000000LL);
	assert_int_equal(status_page_render(&out,
					    &(struct status_page_input){
						.version = "0.1.0",
						.host = m.host,
						.telemetry_path = "/metrics",
						.now_ns = 2000000000LL,
						.poll_ns = 1000000000LL,
						.interval_ns = 1000000000LL,
						.m = &m,
						.e = e,
						.alerts = &at,
						.am = &am,
						.reload = { .ok = true },
						.hist = &h,
					    }),
			 0);
	sb_putc(&out, '\0');
	s = out.buf;
	list = strstr(s, "id=\"alert-list\"");
	assert_non_null(list);
	fail = strstr(list, "<b>netdev_mtu</b>");
	unk = strstr(list, "<b>RoceRuleUnknown</b> <code>pfc_on</code> cannot be decided on eth1, "
			   "eth2, eth3");
	assert_non_null(fail);
	assert_non_null(unk);
	assert_true(fail < unk);
	/* one line for the three */
	assert_null(strstr(unk + 1, "<b>RoceRuleUnknown</b>"));
	assert_non_null(strstr(unk, "pfc.enabled absent: not_collected"));
	/* the problem: what could not be read, not the fix */
	assert_null(strstr(s, "dcb pfc set"));
	assert_non_null(strstr(s, "Not decided (nothing was seen to fail): pfc.enabled was not "
				  "collected"));
	sb_free(&out);
	alerts_free(&at);
	history_free(&h);
	rules_free(e);
	rules_diags_free(&dg);
	model_free(&m);
}

/* NFD: no label before the first verdict (a node is never "ready" nobody decided) */
static void nfd_no_label_before_first_verdict(void **st)
{
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e = NULL;
	struct node_model m;
	struct strbuf out = { 0 };

	(void)st;
	model_init(&m);
	field_set_int(model_add_netdev(&m, "eth2"), F_NETDEV_MTU, 9000);
	assert_int_equal(
	    rules_load_buffer("t.yaml", rules_yaml, strlen(rules_yaml), &spec, &e, &dg), 0);
	nfd_render(&out, e, &m, 0);
	assert_non_null(strstr(out.buf, "no verdict yet"));
	assert_null(strstr(out.buf, "roce-ready"));
	assert_null(strstr(out.buf, "status="));
	sb_reset(&out);
	assert_int_equal(rules_evaluate(e, &m, 1000000000LL), 0);
	nfd_render(&out, e, &m, 0);
	assert_non_null(strstr(out.buf, "rocewatch.roce-ready=true\n"));
	sb_free(&out);
	rules_free(e);
	rules_diags_free(&dg);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(renders_verdict_fix_sparklines_and_escapes),
		cmocka_unit_test(unknowns_grouped_below_failures),
		cmocka_unit_test(nfd_no_label_before_first_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
