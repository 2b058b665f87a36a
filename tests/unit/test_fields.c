// SPDX-License-Identifier: MIT
/* The field table is the contract between collectors, rules and exporters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <regex.h>

#include <cmocka.h>

#include "fields.h"

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
			assert_string_not_equal(hw_counter_descs[i].metric,
						hw_counter_descs[j].metric);
		}
	for (size_t i = 0; i < n_port_counter_descs; i++)
		for (int f = 0; f < F__COUNT; f++)
			if (fields[f].metric)
				assert_string_not_equal(port_counter_descs[i].metric,
							fields[f].metric);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_has_a_path_unique_in_its_kind),
		cmocka_unit_test(metric_families_are_adjacent_and_consistent),
		cmocka_unit_test(curated_counter_names_are_unique),
		cmocka_unit_test(every_field_has_its_source),
		cmocka_unit_test(report_rows_are_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
