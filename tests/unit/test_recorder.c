// SPDX-License-Identifier: MIT
/*
 * The flight recorder: models written poll by poll come back identical from
 * the database (values, configuration, counter sets, objects that vanish),
 * restarts continue the numbering from a keyframe, and `export` names every
 * series exactly as /metrics does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "commands.h"
#include "helpers.h"
#include "prom.h"
#include "recorder.h"
#include "recording.h"
#include "report.h"
#include "snapshot.h"

static char dir[] = "/tmp/rocewatch-rec-XXXXXX";

static regex_t rx_stats;

static void cleanup_dir(void);

static void open_rec(struct recorder **r, const regex_t *ethtool)
{
	struct recorder_opts o = {
		.ethtool_include = ethtool,
		.dir = dir,
		.interval_ns = 100000000,
		.retention_ns = 3650LL * 86400 * 1000000000LL, /* the model is dated 2025 */
		.max_size = REC_DEFAULT_MAX_SIZE,
		.capture_before_ns = REC_DEFAULT_CAPTURE_BEFORE_NS,
		.capture_after_ns = REC_DEFAULT_CAPTURE_AFTER_NS,
	};
	char err[512] = "";
	int rc = recorder_open(r, &o, err, sizeof(err));

	if (rc)
		fail_msg("recorder_open: %s", err);
}

/* The present values and counter sets of every object, as snapshot JSON. */
static json_t *facts(const struct node_model *m)
{
	struct strbuf sb = { 0 };
	json_t *root, *out = json_object();

	assert_int_equal(snapshot_write(&sb, m, 0), 0);
	root = json_loads(sb.buf, 0, NULL);
	assert_non_null(root);
	json_object_set(out, "node", json_object_get(json_object_get(root, "node"), "fields"));
	for (int k = 0; k < 2; k++) {
		json_t *arr = json_object_get(root, k ? "rdma_ports" : "netdevs"), *o;
		size_t i;

		json_array_foreach(arr, i, o)
		{
			char key[128];

			snprintf(key, sizeof(key), "%s/%s/%lld", k ? "port" : "netdev",
				 json_string_value(json_object_get(o, k ? "device" : "name")),
				 (long long)json_integer_value(json_object_get(o, "port")));
			json_object_set_new(out, key,
					    json_pack("{s:O,s:O}", "fields",
						      json_object_get(o, "fields"), "counters",
						      json_object_get(o, "counters")));
		}
	}
	json_decref(root);
	sb_free(&sb);
	return out;
}

struct replay {
	struct node_model m;
	json_t *expect[8];
	int n_polls;
	int mismatches;
	int nulls, gone;
};

static void rp_sample(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const struct rec_value *v)
{
	struct replay *rp = arg;

	(void)p;
	rp->nulls += !v->present;
	rec_model_sample(&rp->m, s, v);
}

static void rp_config(void *arg, const struct rec_poll *p, const struct rec_series *s,
		      const char *json, const char *absent)
{
	struct replay *rp = arg;
	char err[256];

	(void)p;
	rp->gone += absent && !strcmp(absent, "gone");
	assert_int_equal(rec_model_config(&rp->m, s, json, absent, err, sizeof(err)), 0);
}

static void drop_vanished(struct node_model *m)
{
	/* Objects whose every series went absent are gone from the recording. */
	model_begin(m, OBJ_NETDEV);
	for (size_t i = 0; i < m->n_netdevs; i++) {
		struct object *o = m->netdevs[i];

		for (int f = 0; f < F__COUNT; f++)
			if (fields[f].obj == OBJ_NETDEV && o->f[f].state == ABS_NONE)
				o->seen = true;
	}
	model_sweep(m, OBJ_NETDEV);
}

static void rp_poll_end(void *arg, const struct rec_poll *p)
{
	struct replay *rp = arg;
	json_t *got;

	drop_vanished(&rp->m);
	model_link_ports(&rp->m);
	got = facts(&rp->m);
	assert_true(rp->n_polls < 8);
	if (!json_equal(got, rp->expect[rp->n_polls])) {
		char *a = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
		char *b = json_dumps(rp->expect[rp->n_polls], JSON_SORT_KEYS | JSON_COMPACT);

		print_error("poll %d (seq %lld):\n got    %s\n wanted %s\n", rp->n_polls,
			    (long long)p->seq, a, b);
		free(a);
		free(b);
		rp->mismatches++;
	}
	json_decref(got);
	rp->n_polls++;
}

static void step(struct recorder *r, struct node_model *m, json_t **expect, int *n, int64_t t_s)
{
	m->time.tv_sec = t_s;
	m->time.tv_nsec = 0;
	recorder_after_poll(r, m, 3);
	expect[(*n)++] = facts(m);
}

static void round_trip(void **state)
{
	struct recorder *r;
	struct node_model m;
	struct replay rp = { 0 };
	struct rec_reader rd;
	struct rec_scan_ops ops = { .sample = rp_sample,
				    .config = rp_config,
				    .poll_end = rp_poll_end };
	char err[512] = "";
	int n = 0;
	int8_t map[RW_DSCP_COUNT];
	struct object *eth2, *eth3, *port;

	(void)state;
	build_model(&m);
	eth2 = model_netdev(&m, "eth2");
	port = model_port(&m, "mlx5_0", 1);
	/* driver stats named rx_*: both of build_model's (the rest of ethtool -S is not kept) */
	assert_int_equal(regcomp(&rx_stats, "^rx_", REG_EXTENDED | REG_NOSUB), 0);
	open_rec(&r, &rx_stats);
	step(r, &m, rp.expect, &n, 1764672000); /* everything: a keyframe */
	/* counters move, a setting changes, a counter goes away */
	field_set_prio(eth2, F_NETDEV_PFC_RX_PAUSE, 3, 1334);
	cset_set(&port->cs[CSET_HW], "out_of_sequence", 40);
	field_set_int(eth2, F_NETDEV_MTU, 4200);
	memset(map, -1, sizeof(map));
	map[26] = 3;
	map[48] = 6;
	map[46] = 5;
	field_set_dscp_map(eth2, F_NETDEV_DSCP_MAP, map);
	port->cs[CSET_HW].present[cset_find(&port->cs[CSET_HW], "vendor_thing")] = 0;
	step(r, &m, rp.expect, &n, 1764672001);
	/* nothing changes */
	step(r, &m, rp.expect, &n, 1764672002);
	/* a setting becomes unsupported; a new priority starts counting */
	field_absent(eth2, F_NETDEV_PFC_ENABLED, ABS_UNSUPPORTED, 95);
	field_set_prio(eth2, F_NETDEV_PFC_RX_PAUSE, 4, 9);
	step(r, &m, rp.expect, &n, 1764672003);
	/* eth3 disappears */
	model_begin(&m, OBJ_NETDEV);
	eth2->seen = true;
	model_sweep(&m, OBJ_NETDEV);
	eth3 = model_netdev(&m, "eth3");
	assert_null(eth3);
	step(r, &m, rp.expect, &n, 1764672004);
	recorder_flush(r);
	{
		struct recorder_counters c;

		recorder_get_counters(r, &c);
		assert_int_equal(c.polls, 5);
		assert_int_equal(c.dropped, 0);
		assert_int_equal(c.last_seq, 5);
	}
	recorder_close(r);

	assert_int_equal(rec_open(&rd, dir, err, sizeof(err)), 0);
	assert_int_equal(rec_load(&rd, INT64_MIN, INT64_MAX, err, sizeof(err)), 0);
	assert_int_equal(rd.n_polls, 5);
	assert_true(rd.polls[0].keyframe);
	assert_false(rd.polls[2].keyframe);
	assert_int_equal(rd.polls[2].n_samples + rd.polls[2].n_config, 0); /* nothing changed */
	assert_string_equal(rd.host, "gpu-node-07");
	model_init(&rp.m);
	assert_int_equal(rec_scan(&rd, &ops, &rp, err, sizeof(err)), 0);
	assert_int_equal(rp.n_polls, 5);
	assert_int_equal(rp.mismatches, 0);
	assert_true(rp.nulls >= 1); /* vendor_thing went absent */
	assert_true(rp.gone >= 3);  /* eth3's configuration */
	rec_close(&rd);
	model_free(&rp.m);

	/* A restart: numbering continues, the first poll is a keyframe again. */
	open_rec(&r, &rx_stats);
	m.time.tv_sec = 1764672100;
	recorder_after_poll(r, &m, 3);
	/* the clock stepped back: recorded 1 ms after the last poll, not lost */
	m.time.tv_sec = 1764672000;
	recorder_after_poll(r, &m, 1);
	recorder_flush(r);
	recorder_close(r);
	assert_int_equal(rec_open(&rd, dir, err, sizeof(err)), 0);
	assert_int_equal(rec_load(&rd, INT64_MIN, INT64_MAX, err, sizeof(err)), 0);
	assert_int_equal(rd.n_polls, 7);
	assert_int_equal(rd.polls[5].seq, 6);
	assert_true(rd.polls[5].keyframe);
	assert_int_equal(rd.polls[6].t_ms, 1764672100001LL);
	assert_int_not_equal(rd.polls[5].run, rd.polls[4].run);
	rec_close(&rd);
	for (int i = 0; i < n; i++)
		json_decref(rp.expect[i]);
	model_free(&m);
	regfree(&rx_stats);
}

/*
 * Series of an exposition (name{labels} as rendered) -> value, minus self
 * metrics; for OpenMetrics the last sample of each series (they come in time
 * order), without its timestamp.
 */
static json_t *series_values(const char *text, bool om)
{
	json_t *set = json_object();
	char *copy = strdup(text), *save = NULL;

	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *end;

		if (l[0] == '#' || !strncmp(l, "rocewatch_", 10))
			continue;
		if (om) {
			/* export adds the labels a scrape adds first: instance and job */
			char *in = strstr(l, "{instance=\""),
			     *job = in ? strstr(in, "job=\"rocewatch\"") : NULL;

			assert_non_null(job);
			job += strlen("job=\"rocewatch\"");
			if (*job == ',')
				memmove(in + 1, job + 1, strlen(job + 1) + 1);
			else /* '}': no labels of its own */
				memmove(in, job + 1, strlen(job + 1) + 1);
			end = strrchr(l, ' ');
			assert_non_null(end);
			*end = '\0';
		}
		end = strrchr(l, ' ');
		assert_non_null(end);
		*end = '\0';
		json_object_set_new(set, l, json_string(end + 1));
	}
	free(copy);
	return set;
}

/*
 * Export the recording of model m and render m's /metrics: the same series
 * with the same final values.  ethtool: the driver stats both take (NULL:
 * none, as without --collector.ethtool.include).
 */
static void check_export_matches(struct node_model *m, const regex_t *ethtool)
{
	struct recorder *r;
	struct prom_renderer pr = { 0 };
	struct strbuf text = { 0 };
	struct prom_input in = { .m = m, .ethtool_include = ethtool };
	char out[600], *om;
	json_t *a, *b;
	const char *k;
	json_t *v;
	int bad = 0;

	cleanup_dir();
	assert_int_equal(mkdir(dir, 0700), 0);
	open_rec(&r, ethtool);
	recorder_after_poll(r, m, 3);
	m->time.tv_sec++;
	recorder_after_poll(r, m, 1);
	recorder_flush(r);
	recorder_close(r);
	snprintf(out, sizeof(out), "%s/export.om", dir);
	{
		/* the recorded series only: rule results are replay's business */
		char *argv[] = { "export", "--db", dir, "--no-rules", "--instance",
				 "n1",	   "-o",   out, NULL };

		assert_int_equal(cmd_export(8, argv), 0);
	}
	om = slurp(out);
	assert_non_null(om);
	assert_non_null(strstr(om, "\n# EOF\n"));
	assert_int_equal(prom_render(&pr, &text, &in), 0);
	a = series_values(text.buf, false);
	b = series_values(om, true);
	json_object_foreach(a, k, v)
	{
		json_t *w = json_object_get(b, k);

		if (!w)
			print_error("not exported: %s\n", k), bad++;
		else if (!json_equal(v, w))
			print_error("%s: exported %s, /metrics %s\n", k, json_string_value(w),
				    json_string_value(v)),
			    bad++;
	}
	json_object_foreach(b, k, v) if (!json_object_get(a, k))
	    print_error("not on /metrics: %s\n", k),
	    bad++;
	assert_int_equal(bad, 0);
	assert_true(json_object_size(a) >= 20);
	json_decref(a);
	json_decref(b);
	free(om);
	prom_renderer_free(&pr);
	sb_free(&text);
}

static void export_matches_metrics(void **state)
{
	struct node_model m;
	struct object *eth2, *port;
	regex_t all;
	char out[600], *om;

	(void)state;
	build_model(&m);
	/* counters prom.c names from their own name, and a scaled curated one */
	eth2 = model_netdev(&m, "eth2");
	port = model_port(&m, "mlx5_0", 1);
	cset_set(&eth2->cs[CSET_ETHTOOL], "Rx.Odd-Stat", 5);
	cset_set(&port->cs[CSET_HW], "Vendor.Odd-Name", 6);
	cset_set(&port->cs[CSET_PORT], "new_port_counter", 7);
	check_export_matches(&m, NULL);

	/* what the names are, not only that they agree */
	snprintf(out, sizeof(out), "%s/export.om", dir);
	om = slurp(out);
	assert_non_null(om);
	/* counters: TYPE without _total, samples with it */
	assert_non_null(strstr(om, "# TYPE roce_pfc_pause_frames counter\n"));
	assert_non_null(strstr(om, "roce_pfc_pause_frames_total{instance=\"n1\",job=\"rocewatch\","
				   "device=\"eth2\",rdma_device=\"mlx5_0\",direction=\"rx\","
				   "priority=\"3\"} 1234 1764672000.250\n"));
	/* pause duration: microseconds on the wire, seconds in the exposition */
	assert_non_null(strstr(om, "roce_pfc_pause_duration_seconds_total{instance=\"n1\",job="
				   "\"rocewatch\",device=\"eth2\",rdma_device=\"mlx5_0\","
				   "direction=\"rx\",priority=\"3\"} 1.5 1764672000.250\n"));
	/* port_xmit_data counts 4-byte words */
	assert_non_null(strstr(om, "roce_rdma_port_transmit_bytes_total{instance=\"n1\",job="
				   "\"rocewatch\",device=\"mlx5_0\","
				   "port=\"1\",netdev=\"eth2\",rdma_device=\"mlx5_0\"} 4000 "));
	assert_non_null(strstr(om, "\nroce_rdma_hw_vendor_odd_name_total{instance=\"n1\","));
	assert_non_null(strstr(om, "\nroce_rdma_port_new_port_counter_total{"));
	assert_null(strstr(om, "roce_ethtool_"));
	free(om);

	/* with the driver stats: untyped, under their sanitised names */
	assert_int_equal(regcomp(&all, ".", REG_EXTENDED | REG_NOSUB), 0);
	check_export_matches(&m, &all);
	om = slurp(out);
	assert_non_null(om);
	assert_non_null(strstr(om, "# TYPE roce_ethtool_rx_odd_stat unknown\n"));
	assert_non_null(strstr(om, "\nroce_ethtool_rx_odd_stat{instance=\"n1\",job=\"rocewatch\","
				   "device=\"eth2\",rdma_device=\"mlx5_0\"} 5 "));
	free(om);
	unlink(out);
	regfree(&all);
	model_free(&m);
}

/* Every row of a counter table that has a report category is a track, and only those. */
static void check_rows(const struct report *rp, const struct counter_desc *set, size_t n,
		       enum rec_source src, uint64_t base)
{
	for (size_t i = 0; i < n; i++) {
		const struct track *hit = NULL;

		for (size_t k = 0; k < rp->n_tracks; k++)
			if (rp->tracks[k].s->src == src &&
			    !strcmp(rp->tracks[k].s->name, set[i].name))
				hit = &rp->tracks[k];
		if (set[i].rep.cat == RCAT_NONE) {
			if (hit)
				fail_msg("%s: on the report without a category", set[i].name);
			continue;
		}
		if (!hit || hit->rep != &set[i].rep || hit->n_ep != 1)
			fail_msg("%s: no episode of its own", set[i].name);
		assert_true(hit->ep[0].total == (double)(base + i));
	}
}

/*
 * `report` takes what it follows, and the unit and scale of each, from the
 * field table and the counter tables: move every counter once and each row
 * with a category must come back as one step, scaled (pause duration is
 * recorded in microseconds and reported in seconds).
 */
static void report_follows_the_table(void **state)
{
	struct recorder *r;
	struct node_model m;
	struct object *eth2, *port;
	struct report rp = { 0 };
	struct report_opts ro = { .db = dir, .since_ms = INT64_MIN, .until_ms = INT64_MAX };
	char err[512] = "";
	int fields_on_report = 0;

	(void)state;
	build_model(&m);
	eth2 = model_netdev(&m, "eth2");
	port = model_port(&m, "mlx5_0", 1);
	open_rec(&r, NULL);
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0 sets every counter to 0, pass 1 moves row i by 1000 + i */
		for (int f = 0; f < F__COUNT; f++) {
			uint64_t v = pass ? 1000 + (uint64_t)f : 0;

			if (fields[f].obj != OBJ_NETDEV || fields[f].config)
				continue;
			if (fields[f].type == VT_PRIO_ARRAY)
				field_set_prio(eth2, f, 3, v);
			else if (fields[f].type == VT_INT)
				field_set_int(eth2, f, (int64_t)v);
		}
		for (size_t i = 0; i < n_hw_counter_descs; i++)
			cset_set(&port->cs[CSET_HW], hw_counter_descs[i].name, pass ? 2000 + i : 0);
		for (size_t i = 0; i < n_port_counter_descs; i++)
			cset_set(&port->cs[CSET_PORT], port_counter_descs[i].name,
				 pass ? 3000 + i : 0);
		m.time.tv_sec = 1764672000 + pass;
		recorder_after_poll(r, &m, 3);
	}
	recorder_flush(r);
	recorder_close(r);

	assert_int_equal(report_build(&rp, &ro, err, sizeof(err)), 0);
	for (int f = 0; f < F__COUNT; f++) {
		const struct track *hit = NULL;

		for (size_t k = 0; k < rp.n_tracks; k++)
			if (rp.tracks[k].s->src == REC_FIELD && rp.tracks[k].s->field == f &&
			    !strcmp(rp.tracks[k].s->device, "eth2"))
				hit = &rp.tracks[k];
		if (fields[f].rep.cat == RCAT_NONE) {
			if (hit)
				fail_msg("%s: on the report without a category", fields[f].path);
			continue;
		}
		fields_on_report++;
		if (!hit || hit->rep != &fields[f].rep || hit->n_ep != 1)
			fail_msg("%s: no episode of its own", fields[f].path);
		assert_true(hit->ep[0].total ==
			    (double)(1000 + f) * (fields[f].scale ? fields[f].scale : 1));
	}
	assert_true(fields_on_report >= 15);
	check_rows(&rp, hw_counter_descs, n_hw_counter_descs, REC_HW, 2000);
	check_rows(&rp, port_counter_descs, n_port_counter_descs, REC_PORT, 3000);
	{
		/* the text names each row's "what", in its unit: seconds for pause time */
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		char want[96];

		assert_int_equal(report_write(&rp, false, f), 0);
		fclose(f);
		snprintf(want, sizeof(want), "time paused: %.3f s paused",
			 (1000.0 + F_NETDEV_PFC_RX_PAUSE_DURATION) * 1e-6);
		assert_non_null(strstr(text, want));
		/* at 80 columns the text goes under its row (pm_row) */
		assert_non_null(strstr(text, "  retry\n      transport retries exceeded: "));
		assert_null(strstr(text, "vendor_thing"));
		free(text);
	}
	report_free(&rp);
	model_free(&m);
}

static void parse_times(void **state)
{
	int64_t t;

	(void)state;
	assert_int_equal(rec_parse_time("2026-12-02T10:00:00Z", 0, &t), 0);
	assert_int_equal(t, 1796205600000LL);
	assert_int_equal(rec_parse_time("2026-12-02T12:00:00.250+02:00", 0, &t), 0);
	assert_int_equal(t, 1796205600250LL);
	assert_int_equal(rec_parse_time("2026-12-02 05:30:00-04:30", 0, &t), 0);
	assert_int_equal(t, 1796205600000LL);
	assert_int_equal(rec_parse_time("-10m", 1000000, &t), 0);
	assert_int_equal(t, 1000000 - 600000);
	assert_int_equal(rec_parse_time("now", 42, &t), 0);
	assert_int_equal(t, 42);
	assert_int_not_equal(rec_parse_time("yesterday", 0, &t), 0);
	assert_int_not_equal(rec_parse_time("2026-12-02T10:00:00", 0, &t), 0); /* no zone */
	assert_int_not_equal(rec_parse_time("-10parsecs", 0, &t), 0);
}

static void cleanup_dir(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return;
}

static int setup(void **state)
{
	(void)state;
	cleanup_dir();
	return mkdir(dir, 0700);
}

static int teardown(void **state)
{
	(void)state;
	cleanup_dir();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(export_matches_metrics, setup, teardown),
		cmocka_unit_test_setup_teardown(report_follows_the_table, setup, teardown),
		cmocka_unit_test(parse_times),
	};

	if (!mkdtemp(dir))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
