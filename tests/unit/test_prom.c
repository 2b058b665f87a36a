// SPDX-License-Identifier: MIT
/* Exposition: golden output, escaping, ordering, absent fields. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helpers.h"
#include "process.h"
#include "prom.h"

static char golden_path[512];

static void render(struct node_model *m, struct strbuf *out)
{
	struct prom_renderer pr = { 0 };
	struct poll_stats st = { .fast_polls = 3,
				 .slow_polls = 1,
				 .start_ns = 1764672000000000000LL,
				 .last_poll_ns = 1764672001000000000LL };
	/* this build's revision and compiler vary; the golden text pins them */
	struct prom_input in = {
		.m = m, .stats = &st, .revision = "0123456789ab", .compiler = "gcc 12.2.0"
	};

	assert_int_equal(prom_render(&pr, out, &in), 0);
	prom_renderer_free(&pr);
}

static void matches_golden(void **state)
{
	struct node_model m;
	struct strbuf out = { 0 };
	char *want;

	(void)state;
	build_model(&m);
	render(&m, &out);
	if (getenv("UPDATE_GOLDEN")) {
		FILE *f = fopen(golden_path, "w");

		assert_non_null(f);
		fwrite(out.buf, 1, out.len, f);
		fclose(f);
	}
	want = slurp(golden_path);
	assert_non_null(want);
	assert_string_equal(out.buf, want);
	free(want);
	sb_free(&out);
	model_free(&m);
}

static void stable_and_sorted(void **state)
{
	struct node_model m;
	struct strbuf a = { 0 }, b = { 0 };

	(void)state;
	build_model(&m);
	render(&m, &a);
	render(&m, &b);
	assert_string_equal(a.buf, b.buf);
	/* eth2 was added after eth3 but comes first */
	assert_true(strstr(a.buf, "roce_netdev_mtu_bytes{device=\"eth2\",rdma_device=\"mlx5_0\"} "
				  "9000\nroce_netdev_mtu_bytes{device=\"eth3\"} 1500\n") != NULL);
	sb_free(&a);
	sb_free(&b);
	model_free(&m);
}

static void absent_is_not_zero(void **state)
{
	struct node_model m;
	struct strbuf a = { 0 };

	(void)state;
	build_model(&m);
	render(&m, &a);
	/* eth3 has PFC absent (unsupported): no sample at all */
	assert_null(strstr(a.buf, "roce_pfc_enabled{device=\"eth3\""));
	assert_non_null(strstr(
	    a.buf, "roce_pfc_enabled{device=\"eth2\",rdma_device=\"mlx5_0\",priority=\"3\"} 1\n"));
	assert_non_null(strstr(
	    a.buf, "roce_pfc_enabled{device=\"eth2\",rdma_device=\"mlx5_0\",priority=\"0\"} 0\n"));
	/* priorities the driver did not report are not rendered */
	assert_null(strstr(a.buf, "roce_pfc_pause_frames_total{device=\"eth2\",rdma_device=\"mlx5_"
				  "0\",direction=\"rx\",priority=\"0\"}"));
	/* escaping of label values */
	assert_non_null(strstr(a.buf, "kind=\"we\\\"ird\\\\kind\""));
	/* units: microseconds exported as seconds, 4-byte words as bytes */
	assert_non_null(strstr(
	    a.buf, "roce_pfc_pause_duration_seconds_total{device=\"eth2\",rdma_device=\"mlx5_0\","
		   "direction=\"rx\",priority=\"3\"} 1.5\n"));
	assert_non_null(strstr(a.buf, "roce_rdma_port_transmit_bytes_total{device=\"mlx5_0\",port="
				      "\"1\",netdev=\"eth2\",rdma_device=\"mlx5_0\"} 4000\n"));
	/* uncurated hw counters keep their own (sanitised) name */
	assert_non_null(strstr(a.buf, "roce_rdma_hw_vendor_thing_total{device=\"mlx5_0\",port="
				      "\"1\",netdev=\"eth2\",rdma_device=\"mlx5_0\"} 3\n"));
	sb_free(&a);
	model_free(&m);
}

/* An absent fact of an info family has no label at all, never label="". */
static void info_without_absent_labels(void **state)
{
	struct node_model m;
	struct strbuf a = { 0 };

	(void)state;
	build_model(&m);
	field_set_str(m.ports[0], F_PORT_LINK_LAYER, "Ethernet");
	field_set_str(m.ports[0], F_PORT_FW, "22.39.1002");
	field_absent(m.ports[0], F_PORT_NODE_GUID, ABS_UNSUPPORTED, 0);
	field_set_str(m.ports[0], F_PORT_BOARD_ID, "MT_0000000359");
	field_set_str(m.ports[0], F_PORT_HCA_TYPE, "MT4125");
	render(&m, &a);
	assert_non_null(strstr(
	    a.buf,
	    "roce_rdma_port_info{device=\"mlx5_0\",port=\"1\",netdev="
	    "\"eth2\",rdma_device=\"mlx5_0\",link_layer=\"Ethernet\",firmware=\"22.39.1002\","
	    "board_id=\"MT_0000000359\",hca_type=\"MT4125\"} 1\n"));
	assert_null(strstr(a.buf, "=\"\""));
	sb_free(&a);
	model_free(&m);
}

/* Disabled is not failed: only enabled collectors have self metrics (as node_exporter). */
static void disabled_collector_has_no_series(void **state)
{
	struct node_model m;
	struct strbuf a = { 0 };

	(void)state;
	build_model(&m);
	strlcpy0(m.coll[1].name, "wire", sizeof(m.coll[1].name));
	m.coll[1].enabled = false;
	strlcpy0(m.coll[2].name, "dcb", sizeof(m.coll[2].name));
	m.coll[2].enabled = m.coll[2].ran = true;
	m.coll[2].err = -EIO;
	m.coll[2].failures = 3;
	render(&m, &a);
	assert_null(strstr(a.buf, "collector=\"wire\""));
	assert_non_null(strstr(a.buf, "rocewatch_collector_success{collector=\"link\"} 1\n"));
	assert_non_null(strstr(a.buf, "rocewatch_collector_success{collector=\"dcb\"} 0\n"));
	assert_non_null(
	    strstr(a.buf, "rocewatch_collector_consecutive_failures{collector=\"dcb\"} 3\n"));
	sb_free(&a);
	model_free(&m);
}

static void every_family_has_help_and_type_once(void **state)
{
	struct node_model m;
	struct strbuf a = { 0 };
	char *save, *line, *copy;
	char seen[256][96];
	int n = 0;

	(void)state;
	build_model(&m);
	render(&m, &a);
	copy = strdup(a.buf);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[96];

		if (strncmp(line, "# TYPE ", 7))
			continue;
		sscanf(line + 7, "%95s", name);
		for (int i = 0; i < n; i++)
			if (!strcmp(seen[i], name))
				fail_msg("family %s declared twice", name);
		assert_true(n < 256);
		strlcpy0(seen[n++], name, sizeof(seen[0]));
	}
	assert_true(n > 10);
	free(copy);
	sb_free(&a);
	model_free(&m);
}

/* /proc/PID/stat as the kernel formats it (fs/proc/array.c), with a comm that has ") (" */
static const char stat_text[] =
    "4242 (rw ) (x)) S 1 4242 4242 0 -1 4194560 812 0 0 0 250 150 0 0 20 0 5 0 123400 "
    "187432960 2573 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
static const char proc_stat_text[] = "cpu  1 2 3 4\nintr 5\nctxt 6\nbtime 1764670000\n"
				     "processes 7\n";
static const char limits_text[] =
    "Limit                     Soft Limit           Hard Limit           Units     \n"
    "Max address space         unlimited            unlimited            bytes     \n"
    "Max open files            1024                 524288               files     \n";

static void process_metrics(void **state)
{
	struct process_stats ps;
	struct strbuf sb = { 0 };

	(void)state;
	assert_int_equal(process_parse(&ps, stat_text, proc_stat_text, limits_text, 100, 4096), 0);
	assert_true(ps.cpu_seconds == 4.0);		    /* (250 + 150) / 100 */
	assert_true(ps.start_time_seconds == 1764671234.0); /* btime + 123400 / 100 */
	assert_int_equal(ps.resident_bytes, 2573ULL * 4096);
	assert_int_equal(ps.virtual_bytes, 187432960ULL);
	assert_true(ps.has_max_fds && ps.max_fds == 1024);
	ps.open_fds = 9;
	process_render(&sb, &ps);
	assert_non_null(strstr(sb.buf, "# TYPE process_cpu_seconds_total counter\n"
				       "process_cpu_seconds_total 4\n"));
	assert_non_null(strstr(sb.buf, "process_max_fds 1024\n"));
	assert_non_null(strstr(sb.buf, "process_open_fds 9\n"));
	assert_non_null(strstr(sb.buf, "process_resident_memory_bytes 10539008\n"));
	assert_non_null(strstr(sb.buf, "process_start_time_seconds 1764671234\n"));
	assert_non_null(
	    strstr(sb.buf, "process_virtual_memory_max_bytes 1.8446744073709552e+19\n"));
	/* a truncated stat line, or no btime, is refused rather than rendered as zeros */
	assert_int_equal(process_parse(&ps, "4242 (rw) S 1 2", proc_stat_text, NULL, 100, 4096),
			 -EINVAL);
	assert_int_equal(process_parse(&ps, stat_text, "cpu 1\n", NULL, 100, 4096), -EINVAL);
	/* this process: something plausible */
	assert_int_equal(process_read_self(&ps), 0);
	assert_true(ps.resident_bytes > 0 && ps.open_fds >= 3 && ps.start_time_seconds > 1e9);
	sb_free(&sb);
}

/* A fact the collector may not read counts as partial, by reason; unsupported does not. */
/* Driver names that sanitise alike (irdma gen3 spaces, ionic firmware names) make one family. */
static void sanitized_names_do_not_collide(void **state)
{
	struct node_model m;
	struct strbuf a = { 0 };
	struct object *p;
	const char *x;

	(void)state;
	model_init(&m);
	p = model_add_port(&m, "irdma0", 1);
	cset_set(&p->cs[CSET_HW], "RNR received", 4);
	cset_set(&p->cs[CSET_HW], "rnr_received", 5);
	cset_set(&p->cs[CSET_HW], "Nak Sequence Error", 6);
	cset_set(&p->cs[CSET_HW], "nak-sequence-error", 7);
	render(&m, &a);
	/* the clean name wins; between two that needed sanitising, the first in order */
	x = strstr(a.buf, "# TYPE roce_rdma_hw_rnr_received_total counter\n");
	assert_non_null(x);
	assert_null(strstr(x + 1, "# TYPE roce_rdma_hw_rnr_received_total"));
	assert_non_null(strstr(a.buf,
			       "roce_rdma_hw_rnr_received_total{device=\"irdma0\",port=\"1\","
			       "netdev=\"\",rdma_device=\"irdma0\"} 5\n"));
	x = strstr(a.buf, "# TYPE roce_rdma_hw_nak_sequence_error_total counter\n");
	assert_non_null(x);
	assert_null(strstr(x + 1, "# TYPE roce_rdma_hw_nak_sequence_error_total"));
	assert_non_null(strstr(a.buf,
			       "roce_rdma_hw_nak_sequence_error_total{device=\"irdma0\",port="
			       "\"1\",netdev=\"\",rdma_device=\"irdma0\"} 6\n"));
	sb_free(&a);
	model_free(&m);
}

static void partial_facts_are_counted(void **state)
{
	struct node_model m;
	struct strbuf a = { 0 };
	struct object *eth2;

	(void)state;
	build_model(&m);
	strlcpy0(m.coll[1].name, "qos_sysfs", sizeof(m.coll[1].name));
	m.coll[1].enabled = m.coll[1].ran = true;
	eth2 = model_netdev(&m, "eth2");
	field_absent(eth2, F_NETDEV_ECN_NP, ABS_PERMISSION, EACCES);
	field_absent(eth2, F_NETDEV_ECN_RP, ABS_PERMISSION, EACCES);
	field_absent(eth2, F_NETDEV_CNP_DSCP, ABS_UNSUPPORTED, ENOENT);
	render(&m, &a);
	assert_non_null(strstr(
	    a.buf,
	    "\nrocewatch_collector_partial{collector=\"qos_sysfs\",reason=\"permission\"} 2\n"));
	assert_non_null(strstr(
	    a.buf, "\nrocewatch_collector_partial{collector=\"qos_sysfs\",reason=\"error\"} 0\n"));
	assert_non_null(strstr(
	    a.buf, "\nrocewatch_collector_partial{collector=\"link\",reason=\"permission\"} 0\n"));
	sb_free(&a);
	model_free(&m);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches_golden),
		cmocka_unit_test(stable_and_sorted),
		cmocka_unit_test(absent_is_not_zero),
		cmocka_unit_test(disabled_collector_has_no_series),
		cmocka_unit_test(info_without_absent_labels),
		cmocka_unit_test(every_family_has_help_and_type_once),
		cmocka_unit_test(process_metrics),
		cmocka_unit_test(partial_facts_are_counted),
		cmocka_unit_test(sanitized_names_do_not_collide),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s GOLDEN_FILE\n", argv[0]);
		return 2;
	}
	strlcpy0(golden_path, argv[1], sizeof(golden_path));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
