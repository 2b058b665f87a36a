// SPDX-License-Identifier: MIT
/*
 * The rate history behind the status page's sparklines: rates per step,
 * counter resets, absent counters (gaps, never 0), steps longer than a poll,
 * the ring wrapping, objects coming and going, and no allocation per poll.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "history.h"

#define MS(x) ((int64_t)(x)*1000000LL)

static unsigned long allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);

void *__wrap_malloc(size_t n)
{
	allocs++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	allocs++;
	return __real_calloc(n, m);
}

static const struct hist_shape shape[OBJ__COUNT] = {
	[OBJ_NETDEV] = { .n_series = 2, .n_inputs = 3 },
	[OBJ_RDMA_PORT] = { .n_series = 1, .n_inputs = 1 },
};

/* One poll of eth2: inputs 0 and 1 into series 0, input 2 into series 1 (when given). */
static void poll(struct history *h, int64_t t, uint64_t a, uint64_t b, const uint64_t *c)
{
	struct hist_obj *o;

	history_begin(h, t);
	o = history_obj(h, OBJ_NETDEV, "eth2", 0);
	history_feed(h, o, 0, 0, a);
	history_feed(h, o, 1, 0, b);
	if (c)
		history_feed(h, o, 2, 1, *c);
	history_end(h);
}

static void rates_are_sums_over_the_step(void **st)
{
	struct history h;
	const struct hist_obj *o;
	uint64_t c = 7;

	(void)st;
	history_init(&h, MS(1000), shape);
	poll(&h, MS(0), 100, 10, &c);
	assert_int_equal(history_len(&h), 0); /* one poll: nothing to compare yet */
	c = 27;
	poll(&h, MS(1000), 150, 30, &c); /* +50 +20 in 1 s; +20 */
	c = 27;
	poll(&h, MS(3000), 150, 30, &c); /* nothing moved for 2 s */
	assert_int_equal(history_len(&h), 2);
	o = history_find(&h, OBJ_NETDEV, "eth2", 0);
	assert_non_null(o);
	assert_true(fabsf(history_value(&h, o, 0, 0) - 70.0f) < 1e-3);
	assert_true(fabsf(history_value(&h, o, 1, 0) - 20.0f) < 1e-3);
	assert_true(history_value(&h, o, 0, 1) == 0.0f);
	assert_int_equal(history_time(&h, 1), MS(3000));
	history_free(&h);
}

static void reset_counts_from_zero(void **st)
{
	struct history h;

	(void)st;
	history_init(&h, MS(1000), shape);
	poll(&h, MS(0), 1000, 0, NULL);
	poll(&h, MS(1000), 5, 0, NULL); /* the driver reloaded: 5 since */
	assert_true(fabsf(history_value(&h, history_find(&h, OBJ_NETDEV, "eth2", 0), 0, 0) - 5.0f) <
		    1e-3);
	history_free(&h);
}

static void absent_is_a_gap_not_zero(void **st)
{
	struct history h;
	const struct hist_obj *o;
	uint64_t c = 1;

	(void)st;
	history_init(&h, MS(1000), shape);
	poll(&h, MS(0), 0, 0, &c);
	poll(&h, MS(1000), 0, 0, NULL); /* input 2 absent: series 1 has no point */
	c = 1000000;
	poll(&h, MS(2000), 0, 0, &c); /* back: its previous value is forgotten */
	c = 1000010;
	poll(&h, MS(3000), 0, 0, &c);
	o = history_find(&h, OBJ_NETDEV, "eth2", 0);
	assert_int_equal(history_len(&h), 3);
	assert_true(isnan(history_value(&h, o, 1, 0)));
	assert_true(isnan(history_value(&h, o, 1, 1)));
	assert_true(fabsf(history_value(&h, o, 1, 2) - 10.0f) < 1e-3);
	assert_true(history_value(&h, o, 0, 2) == 0.0f);
	history_free(&h);
}

static void a_step_spans_several_polls(void **st)
{
	struct history h;
	const struct hist_obj *o;

	(void)st;
	history_init(&h, MS(1000), shape);
	for (int i = 0; i <= 20; i++) /* 100 ms polls, 10 per second each time */
		poll(&h, MS(100 * i), (uint64_t)i, 0, NULL);
	assert_int_equal(history_len(&h), 2);
	o = history_find(&h, OBJ_NETDEV, "eth2", 0);
	assert_true(fabsf(history_value(&h, o, 0, 0) - 10.0f) < 1e-3);
	assert_true(fabsf(history_value(&h, o, 0, 1) - 10.0f) < 1e-3);
	history_free(&h);
}

static void ring_keeps_the_last_points_without_allocating(void **st)
{
	struct history h;
	const struct hist_obj *o;
	unsigned long before;

	(void)st;
	history_init(&h, MS(1000), shape);
	poll(&h, 0, 0, 0, NULL);
	before = allocs;
	for (int i = 1; i <= HIST_POINTS + 50; i++)
		poll(&h, MS(1000) * i, (uint64_t)i * (uint64_t)i, 0, NULL);
	assert_int_equal(allocs, before); /* steady state: no allocation per poll */
	assert_int_equal(history_len(&h), HIST_POINTS);
	o = history_find(&h, OBJ_NETDEV, "eth2", 0);
	/* oldest kept: the point of second 51, i*i - (i-1)*(i-1) = 2i - 1 */
	assert_true(fabsf(history_value(&h, o, 0, 0) - 101.0f) < 1e-3);
	assert_int_equal(history_time(&h, 0), MS(1000) * 51);
	assert_true(fabsf(history_value(&h, o, 0, HIST_POINTS - 1) -
			  (float)(2 * (HIST_POINTS + 50) - 1)) < 1e-2);
	assert_true(isnan(history_value(&h, o, 0, HIST_POINTS)));
	history_free(&h);
}

static void objects_come_and_go(void **st)
{
	struct history h;
	struct hist_obj *p;

	(void)st;
	history_init(&h, MS(1000), shape);
	poll(&h, 0, 0, 0, NULL);
	poll(&h, MS(1000), 1, 0, NULL);
	/* mlx5_0 appears: its points before it are gaps */
	history_begin(&h, MS(2000));
	history_feed(&h, history_obj(&h, OBJ_NETDEV, "eth2", 0), 0, 0, 2);
	p = history_obj(&h, OBJ_RDMA_PORT, "mlx5_0", 1);
	history_feed(&h, p, 0, 0, 5);
	history_feed(&h, p, 7, 0, 5); /* out of the shape: ignored */
	history_end(&h);
	assert_int_equal(history_len(&h), 2);
	assert_true(isnan(history_value(&h, history_find(&h, OBJ_RDMA_PORT, "mlx5_0", 1), 0, 0)));
	assert_true(isnan(history_value(&h, history_find(&h, OBJ_RDMA_PORT, "mlx5_0", 1), 0, 1)));
	/* eth2 goes: forgotten */
	history_begin(&h, MS(3000));
	history_feed(&h, history_obj(&h, OBJ_RDMA_PORT, "mlx5_0", 1), 0, 0, 9);
	history_end(&h);
	assert_null(history_find(&h, OBJ_NETDEV, "eth2", 0));
	assert_true(fabsf(history_value(&h, history_find(&h, OBJ_RDMA_PORT, "mlx5_0", 1), 0, 2) -
			  4.0f) < 1e-3);
	assert_null(history_find(&h, OBJ_RDMA_PORT, "mlx5_0", 2));
	history_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rates_are_sums_over_the_step),
		cmocka_unit_test(reset_counts_from_zero),
		cmocka_unit_test(absent_is_a_gap_not_zero),
		cmocka_unit_test(a_step_spans_several_polls),
		cmocka_unit_test(ring_keeps_the_last_points_without_allocating),
		cmocka_unit_test(objects_come_and_go),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
