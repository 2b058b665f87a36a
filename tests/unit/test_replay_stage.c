// SPDX-License-Identifier: MIT
/*
 * Replay's promise -- when the alerts would have fired -- is serve's: a
 * recording is played through serve's own stages (the daemon over the
 * recording source, the rules hook and the alerts hook of serve) and
 * through `replay`, and both must give the same alert transitions, with the
 * same names, objects, states and times.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "alerts_serve.h"
#include "daemon.h"
#include "helpers.h"
#include "model_source.h"
#include "recorder.h"
#include "replay.h"
#include "rules_serve.h"

static char dir[] = "/tmp/rocewatch-stage-XXXXXX";
static char profile[4200];

/* One rule that fires at once, one after a `for:`, both over what the recording changes. */
static const char profile_text[] = "profile: stage-test\n"
				   "description: the rules the replay-against-serve test moves\n"
				   "params: {}\n"
				   "rules:\n"
				   "  - name: jumbo_mtu\n"
				   "    scope: netdev\n"
				   "    expr: mtu >= 4000\n"
				   "    severity: critical\n"
				   "    summary: \"MTU {mtu}\"\n"
				   "  - name: jumbo_mtu_held\n"
				   "    scope: netdev\n"
				   "    expr: mtu >= 4000\n"
				   "    for: 2s\n"
				   "    severity: warning\n"
				   "    summary: \"MTU {mtu} for a while\"\n";

#define T0	1764672000LL /* the recording's first poll, s */
#define N_POLLS 12

/* Ten polls a second apart: eth2's MTU drops at the 4th and comes back at the 8th. */
static void make_recording(void)
{
	struct recorder_opts o;
	struct recorder *r;
	struct node_model m;
	char err[512] = "";
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(profile, sizeof(profile), "%s/stage-test.yaml", dir);
	f = fopen(profile, "w");
	assert_non_null(f);
	fputs(profile_text, f);
	fclose(f);
	recorder_opts_defaults(&o);
	o.dir = dir;
	o.interval_ns = 1000000000;
	o.retention_ns = 3650LL * 86400 * 1000000000LL; /* the polls are dated 2025 */
	if (recorder_open(&r, &o, err, sizeof(err)))
		fail_msg("recorder_open: %s", err);
	build_model(&m);
	for (int i = 0; i < N_POLLS; i++) {
		struct object *eth2 = model_netdev(&m, "eth2");

		if (i == 3)
			field_set_int(eth2, F_NETDEV_MTU, 1500);
		if (i == 8)
			field_set_int(eth2, F_NETDEV_MTU, 9000);
		m.time.tv_sec = T0 + i;
		m.time.tv_nsec = 0;
		recorder_after_poll(r, &m, COLLECT_FAST | COLLECT_SLOW);
	}
	recorder_flush(r);
	recorder_close(r);
	model_free(&m);
}

/* A transition as one comparable line. */
static void add_line(json_t *lines, const char *state, int64_t t_ms, const char *alertname,
		     const char *rule, const char *device, const char *port)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%lld %s %s(%s) %s/%s", (long long)t_ms, state, alertname, rule,
		 device, port);
	json_array_append_new(lines, json_string(buf));
}

/* ---- through replay ---- */

static json_t *through_replay(void)
{
	struct rules_spec spec = { 0 };
	struct rules_diags dg = { 0 };
	struct rules_engine *e;
	struct replay_opts o = { .db = dir, .since_ms = INT64_MIN, .until_ms = INT64_MAX };
	struct replay *rp;
	json_t *root, *tr, *x, *lines = json_array();
	char err[512] = "", *text = NULL;
	size_t len = 0, i;
	FILE *f;

	assert_int_equal(rules_spec_add_profile(&spec, profile), 0);
	assert_int_equal(rules_load(&spec, &e, &dg), 0);
	rules_diags_free(&dg);
	o.e = e;
	if (replay_run(&rp, &o, err, sizeof(err)))
		fail_msg("replay: %s", err);
	f = open_memstream(&text, &len);
	assert_int_equal(replay_write(rp, true, f), 0);
	fclose(f);
	replay_free(rp);
	rules_free(e);
	rules_spec_free(&spec);
	root = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(root);
	tr = json_object_get(root, "transitions");
	json_array_foreach(tr, i, x)
	{
		const char *port = json_string_value(json_object_get(x, "port"));

		add_line(lines, json_string_value(json_object_get(x, "state")),
			 json_integer_value(json_object_get(x, "time_unix_ms")),
			 json_string_value(json_object_get(x, "alertname")),
			 json_string_value(json_object_get(x, "rule")),
			 json_string_value(json_object_get(x, "device")), port ? port : "");
	}
	json_decref(root);
	return lines;
}

/* ---- through serve's stages ---- */

struct watch {
	struct alerts_serve *as;
	json_t *lines;
	char firing[64][256]; /* the alerts firing after the last poll */
	size_t n_firing;
};

static void key_of(const struct alert *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s\t%s\t%s\t%s", a->alertname, a->rule[0] ? a->rule : a->alertname,
		 a->device, a->port);
}

static void watch_line(struct watch *w, const char *state, int64_t t_ms, const char *key)
{
	char k[256], *f[4], *save = NULL;
	int n = 0;

	snprintf(k, sizeof(k), "%s", key);
	for (char *p = strtok_r(k, "\t", &save); p && n < 4; p = strtok_r(NULL, "\t", &save))
		f[n++] = p;
	while (n < 4)
		f[n++] = "";
	add_line(w->lines, state, t_ms, f[0], f[1], f[2], f[3]);
}

/* After serve's alerts hook: what fired in this poll, and what stopped firing. */
static void watch_after_poll(void *arg, struct node_model *m, unsigned what)
{
	struct watch *w = arg;
	int64_t now = ts_ns(&m->time);
	char now_firing[64][256], key[256];
	size_t n = 0;

	(void)what;
	for (size_t i = 0; i < w->as->t.n; i++) {
		const struct alert *a = &w->as->t.a[i];

		if (a->state != ALERT_FIRING)
			continue;
		key_of(a, key, sizeof(key));
		assert_true(n < 64);
		snprintf(now_firing[n++], sizeof(now_firing[0]), "%s", key);
		if (a->fired_at == now)
			watch_line(w, "firing", now / 1000000, key);
	}
	for (size_t i = 0; i < w->n_firing; i++) {
		bool still = false;

		for (size_t j = 0; j < n && !still; j++)
			still = !strcmp(w->firing[i], now_firing[j]);
		if (!still)
			watch_line(w, "resolved", now / 1000000, w->firing[i]);
	}
	memcpy(w->firing, now_firing, sizeof(now_firing));
	w->n_firing = n;
}

static json_t *through_serve(void)
{
	struct rw_config cfg = { 0 };
	struct daemon *d;
	struct model_source *src;
	struct rules_serve rs = { 0 };
	struct alerts_serve as;
	struct watch w = { .as = &as, .lines = json_array() };
	struct daemon_hook hook;
	char err[512] = "";

	unsetenv("STATE_DIRECTORY"); /* no health memory: nothing to lock or keep */
	if (recording_source_open(&src, dir, INT64_MIN, INT64_MAX, "test", err, sizeof(err)))
		fail_msg("recording source: %s", err);
	assert_int_equal(src->samples(src), N_POLLS);
	assert_int_equal(daemon_open(&d, &cfg, src), 0);
	alerts_serve_init(&as);
	assert_int_equal(rules_spec_add_profile(&rs.spec, profile), 0);
	/* serve's pipeline order: the rules, then the alerts; then this test's eyes */
	assert_int_equal(daemon_reserve_hooks(d, 3), 0);
	assert_int_equal(rules_serve_start(&rs, d), 0);
	hook = rules_serve_hook(&rs);
	assert_int_equal(daemon_add_hook(d, &hook), 0);
	assert_int_equal(alerts_serve_start(&as, d, &rs, NULL, 9100), 0);
	hook = alerts_serve_hook(&as);
	assert_int_equal(daemon_add_hook(d, &hook), 0);
	assert_int_equal(
	    daemon_add_hook(d, &(struct daemon_hook){ .after_poll = watch_after_poll, .arg = &w }),
	    0);
	for (size_t i = daemon_samples(d); i; i--)
		assert_int_equal(daemon_collect(d, COLLECT_FAST | COLLECT_SLOW), 0);
	/* past the last poll the recording says so, and the rules do not run again */
	assert_int_equal(daemon_collect(d, COLLECT_FAST | COLLECT_SLOW), -ENODATA);
	rules_serve_stop(&rs);
	daemon_close(d);
	alerts_serve_fini(&as);
	rules_serve_fini(&rs);
	return w.lines;
}

static void serve_and_replay_agree(void **state)
{
	json_t *replayed, *served;
	char *a, *b;

	(void)state;
	make_recording();
	replayed = through_replay();
	served = through_serve();
	a = json_dumps(replayed, JSON_INDENT(1));
	b = json_dumps(served, JSON_INDENT(1));
	print_message("replay and serve's stages:\n%s\n", a);
	if (!json_equal(replayed, served))
		fail_msg("replay:\n%s\nserve's stages:\n%s", a, b);
	/* eth3 fails throughout, eth2 from the 4th poll to the 8th: both rules, both ways */
	assert_int_equal(json_array_size(replayed), 6);
	free(a);
	free(b);
	json_decref(replayed);
	json_decref(served);
}

static void cleanup(void)
{
	char cmd[sizeof(dir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		print_error("cannot remove %s\n", dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(serve_and_replay_agree),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	cleanup();
	return r;
}
