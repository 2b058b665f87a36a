// SPDX-License-Identifier: MIT
/*
 * The bounded queue (src/core/ring.h) the recorder and the Alertmanager
 * sender share: oldest first across the wrap, full refuses, a retry goes
 * back first in line, empty gives NULL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ring.h"

static int item[8];

static void fifo_across_the_wrap(void **state)
{
	void *slot[3];
	struct ring q;

	(void)state;
	ring_init(&q, slot, 3);
	assert_null(ring_pop(&q));
	assert_null(ring_peek(&q));
	for (int round = 0; round < 4; round++) { /* head walks round the slots */
		assert_true(ring_push(&q, &item[0]));
		assert_true(ring_push(&q, &item[1]));
		assert_true(ring_push(&q, &item[2]));
		assert_false(ring_push(&q, &item[3])); /* full */
		assert_int_equal(ring_len(&q), 3);
		assert_ptr_equal(ring_peek(&q), &item[0]);
		assert_ptr_equal(ring_pop(&q), &item[0]);
		assert_true(ring_push(&q, &item[3]));
		assert_ptr_equal(ring_pop(&q), &item[1]);
		assert_ptr_equal(ring_pop(&q), &item[2]);
		assert_ptr_equal(ring_pop(&q), &item[3]);
		assert_int_equal(ring_len(&q), 0);
	}
}

static void retry_first_in_line(void **state)
{
	struct ring q;
	void *b;

	(void)state;
	assert_int_equal(ring_alloc(&q, 2), 0);
	assert_true(ring_push(&q, &item[0]));
	assert_true(ring_push(&q, &item[1]));
	b = ring_pop(&q);			     /* taken off to send */
	assert_true(ring_push_front(&q, b));	     /* failed: back first */
	assert_false(ring_push_front(&q, &item[2])); /* full */
	assert_ptr_equal(ring_pop(&q), &item[0]);
	assert_ptr_equal(ring_pop(&q), &item[1]);
	assert_null(ring_pop(&q));
	assert_true(ring_push_front(&q, &item[4])); /* front of an empty ring */
	assert_ptr_equal(ring_peek(&q), &item[4]);
	ring_free(&q);
	assert_int_equal(ring_len(&q), 0);
}

static void no_room(void **state)
{
	struct ring q;

	(void)state;
	ring_init(&q, NULL, 0);
	assert_false(ring_push(&q, &item[0]));
	assert_false(ring_push_front(&q, &item[0]));
	assert_null(ring_pop(&q));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fifo_across_the_wrap),
		cmocka_unit_test(retry_first_in_line),
		cmocka_unit_test(no_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
