// SPDX-License-Identifier: MIT
/* The field table is the contract between collectors, rules and exporters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <regex.h>

#include <cmocka.h>

#include "fields.h"
#include "vendors.h"

static void every_field_has_a_path_unique_in_its_kind(void **state)
{
	(void)state;
	for (int i = 0; i < F__COUNT; i++) {
		if (!fields[i].path)
			fail_msg("field %d has no path (missing table row?)", i);
		assert_int_equal(field_lookup(fields[i].obj, fields[i].path), i);
		for (int j = i + 1; j < F__COUNT; j++)
			if (fields[j].obj == fields[i].obj &&
			    !strcmp(fields[i].path, fields[j].path))
				fail_msg("fields %d and %d share path %s", i, j, fields[i].path);
	}
}

static void metric_families_are_adjacent_and_consistent(void **state)
{
	regex_t re;

	(void)state;
	assert_int_equal(regcomp(&re, "^(roce|rocewatch)_[a-z0-9_]+$", REG_EXTENDED | REG_NOSUB),
			 0);
	for (int i = 0; i < F__COUNT; i++) {
		const struct field_desc *d = &fields[i];
		bool first_of_family;

		if (d->mtype == MT_NONE) {
			assert_null(d->metric);
			continue;
		}
		assert_non_null(d->metric);
		if (regexec(&re, d->metric, 0, NULL, 0))
			fail_msg("bad metric name %s", d->metric);
		first_of_family =
		    i == 0 || !fields[i - 1].metric || strcmp(fields[i - 1].metric, d->metric);
		if (first_of_family) {
			if (!d->help || !*d->help)
				fail_msg("%s: first row of a family needs HELP", d->metric);
			/* No other run of rows may use this name. */
			for (int j = i + 1; j < F__COUNT; j++) {
				if (!fields[j].metric || strcmp(fields[j].metric, d->metric))
					continue;
				if (strcmp(fields[j - 1].metric ? fields[j - 1].metric : "",
					   d->metric))
					fail_msg("%s: rows %d and %d are not adjacent", d->metric,
						 i, j);
			}
		} else {
			assert_int_equal(fields[i - 1].mtype, d->mtype);
			assert_int_equal(fields[i - 1].obj, d->obj);
		}
		if (d->mtype == MT_COUNTER) {
			size_t n = strlen(d->metric);

			if (n < 6 || strcmp(d->metric + n - 6, "_total"))
				fail_msg("counter %s must end in _total", d->metric);
		}
		if (d->mtype == MT_INFO && d->type == VT_STR && !d->label)
			fail_msg("info field %s needs a label", d->path);
		if ((d->type == VT_PRIO_ARRAY || d->type == VT_PRIOSET || d->type == VT_DSCP_MAP) &&
		    !d->label)
			fail_msg("%s needs the label carrying the priority/dscp", d->path);
	}
	regfree(&re);
}

/* Every fact has one collector that fills it; the blank-on-failure lists derive from that. */
static void every_field_has_its_source(void **state)
{
	(void)state;
	for (int i = 0; i < F__COUNT; i++) {
		if (i == F_NETDEV_RDMA) { /* the model sets it from the port links */
			assert_int_equal(fields[i].src, SRC_NONE);
			continue;
		}
		/* a job's settings (check --nccl), judged by nccl.c: job.* and nothing else */
		if ((fields[i].src == SRC_JOB) != !strncmp(fields[i].path, "job.", 4))
			fail_msg("%s: job.* facts and only they come from the job", fields[i].path);
		if (fields[i].src <= SRC_NONE || fields[i].src >= SRC__COUNT)
			fail_msg("%s: no source collector", fields[i].path);
	}
}

/* What a report looks at is an integer (per priority or not) with a name and a unit. */
static void report_rows_are_counters(void **state)
{
	const struct counter_desc *sets[] = { hw_counter_descs, port_counter_descs };
	const size_t n[] = { n_hw_counter_descs, n_port_counter_descs };
	int rows = 0;

	(void)state;
	for (int i = 0; i < F__COUNT; i++) {
		const struct report_desc *r = &fields[i].rep;

		if (r->cat == RCAT_NONE)
			continue;
		rows++;
		if ((fields[i].type != VT_INT && fields[i].type != VT_PRIO_ARRAY) || !r->what ||
		    !r->unit)
			fail_msg("%s: a report row must be an integer with what and unit",
				 fields[i].path);
	}
	for (size_t s = 0; s < 2; s++)
		for (size_t j = 0; j < n[s]; j++) {
			const struct report_desc *r = &sets[s][j].rep;

			if (r->cat == RCAT_NONE)
				continue;
			rows++;
			if (r->cat >= RCAT__COUNT || !r->what || !r->unit)
				fail_msg("%s: report row without what or unit", sets[s][j].name);
		}
	assert_true(rows >= 40);
}

static void curated_counter_names_are_unique(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_hw_counter_descs; i++)
		for (size_t j = i + 1; j < n_hw_counter_descs; j++) {
			assert_string_not_equal(hw_counter_descs[i].name, hw_counter_descs[j].name);
			if (hw_counter_descs[i].metric && hw_counter_descs[j].metric)
				assert_string_not_equal(hw_counter_descs[i].metric,
							hw_counter_descs[j].metric);
		}
	/* a curated raw name never takes a family of the field table (the semantic ones) */
	for (size_t i = 0; i < n_hw_counter_descs; i++)
		for (int f = 0; f < F__COUNT; f++)
			if (fields[f].metric && hw_counter_descs[i].metric)
				assert_string_not_equal(hw_counter_descs[i].metric,
							fields[f].metric);
	for (size_t i = 0; i < n_port_counter_descs; i++)
		for (int f = 0; f < F__COUNT; f++)
			if (fields[f].metric)
				assert_string_not_equal(port_counter_descs[i].metric,
							fields[f].metric);
}

/*
 * The driver table: every row names a meaning family; one name of one driver
 * means one thing; every driver the issue names has rows.
 */
static void vendor_rows_are_sound(void **state)
{
	static const char *const drivers[] = { "mlx5_core", "bnxt_en", "ice",	  "ionic",
					       "hns3",	    "mana",    "rdma_rxe" };

	(void)state;
	for (size_t i = 0; i < n_vendor_hw_rows; i++) {
		const struct vendor_hw_row *r = &vendor_hw_rows[i];

		assert_true(r->field >= F_PORT_RDMA_ACK_TIMEOUTS &&
			    r->field <= F_PORT_RDMA_OUT_OF_BUFFER);
		assert_int_equal(fields[r->field].mtype, MT_COUNTER);
		assert_non_null(r->kernels);
		for (size_t j = i + 1; j < n_vendor_hw_rows; j++)
			if (!strcmp(r->driver, vendor_hw_rows[j].driver) &&
			    !strcmp(r->name, vendor_hw_rows[j].name))
				fail_msg("%s %s: two meanings", r->driver, r->name);
	}
	for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++)
		assert_true(vendor_known_driver(drivers[d]));
	assert_false(vendor_known_driver("mlx4_core"));
	assert_false(vendor_known_driver(NULL));
}

/* An unknown driver is read by mlx5's then rxe's names; a known one by its own only. */
static void vendor_fill_by_driver(void **state)
{
	struct node_model m;
	struct object *o;

	(void)state;
	model_init(&m);
	o = model_add_port(&m, "dev0", 1);
	cset_set(&o->cs[CSET_HW], "out_of_sequence", 5);
	cset_set(&o->cs[CSET_HW], "oos_drop_count", 9);
	vendor_fill_port(o, NULL, false);
	assert_int_equal(o->f[F_PORT_RDMA_OUT_OF_SEQUENCE].v.i, 5); /* no driver: mlx5 names */
	field_set_str(o, F_PORT_DRIVER, "bnxt_en");
	vendor_fill_port(o, NULL, false);
	assert_int_equal(o->f[F_PORT_RDMA_OUT_OF_SEQUENCE].v.i, 5); /* bnxt 7.2 name first */
	cset_free(&o->cs[CSET_HW]);
	cset_set(&o->cs[CSET_HW], "oos_drop_count", 9);
	vendor_fill_port(o, NULL, false);
	assert_int_equal(o->f[F_PORT_RDMA_OUT_OF_SEQUENCE].v.i, 9); /* the 6.12 name */
	/* a device-wide counter of the same name stands in (mlx5 in switchdev mode) */
	cset_free(&o->cs[CSET_HW]);
	cset_set(&o->cs[CSET_HW], "device:out_of_sequence", 11);
	vendor_fill_port(o, NULL, false);
	assert_int_equal(o->f[F_PORT_RDMA_OUT_OF_SEQUENCE].v.i, 11);
	/* a name another driver uses means nothing for this one: absent, never 0 */
	field_set_str(o, F_PORT_DRIVER, "hns3");
	vendor_fill_port(o, NULL, false);
	assert_int_equal(o->f[F_PORT_RDMA_OUT_OF_SEQUENCE].state, ABS_UNSUPPORTED);
	assert_int_equal(o->f[F_PORT_RDMA_CNP_SENT].state, ABS_UNSUPPORTED);
	model_free(&m);
}

/* The one place counter-set series get their names (/metrics and export both call it). */
static void counter_set_metric_names(void **state)
{
	struct strbuf sb = { 0 };
	struct cset_metric m;

	(void)state;
	/* a raw name whose meaning has its own family keeps the driver's name */
	assert_int_equal(cset_metric(&sb, CSET_HW, "out_of_sequence", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_hw_out_of_sequence_total");
	assert_non_null(m.cd);
	assert_string_equal(m.type, "counter");
	assert_non_null(strstr(m.help, "out_of_sequence as the driver names it: "));
	assert_non_null(strstr(m.help, m.cd->help));

	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_HW, "req_cqe_error", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_requester_cqe_errors_total");
	assert_ptr_equal(m.help, m.cd->help);

	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_HW, "Vendor.Odd-Name2", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_hw_vendor_odd_name2_total");
	assert_null(m.cd);
	assert_true(m.scale == 0);
	assert_string_equal(m.help, "RDMA counter Vendor.Odd-Name2, as of the last poll.");

	/* irdma gen3 names have spaces (verbs.c:4712-4722); mana's device-wide ones a colon */
	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_HW, "Nak Sequence Error Implied", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_hw_nak_sequence_error_implied_total");
	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_HW, "device:sent_cnps", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_hw_device_sent_cnps_total");

	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_PORT, "port_xmit_data", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_port_transmit_bytes_total");
	assert_true(m.scale == 4); /* 4-byte words */
	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_PORT, "port_new", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_port_port_new_total");
	/* a curated hw name is not curated as a port counter */
	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_PORT, "out_of_sequence", &m), 0);
	assert_string_equal(sb.buf, "roce_rdma_port_out_of_sequence_total");

	sb_reset(&sb);
	assert_int_equal(cset_metric(&sb, CSET_ETHTOOL, "rx_prio3_pause", &m), 0);
	assert_string_equal(sb.buf, "roce_ethtool_rx_prio3_pause");
	assert_string_equal(m.type, "untyped");
	assert_string_equal(m.help,
			    "Driver (ethtool -S) counter rx_prio3_pause, as of the last poll.");

	/* DCQCN parameters are one family with a label each, not a name each */
	assert_int_equal(cset_metric(&sb, CSET_CC, "rpg_gd", &m), -EINVAL);
	sb_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_has_a_path_unique_in_its_kind),
		cmocka_unit_test(metric_families_are_adjacent_and_consistent),
		cmocka_unit_test(curated_counter_names_are_unique),
		cmocka_unit_test(every_field_has_its_source),
		cmocka_unit_test(report_rows_are_counters),
		cmocka_unit_test(counter_set_metric_names),
		cmocka_unit_test(vendor_rows_are_sound),
		cmocka_unit_test(vendor_fill_by_driver),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
