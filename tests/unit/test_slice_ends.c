// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Pending slice ends come out by time, inner slices first on a tie. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "slice_ends.h"

static void test_empty(void **state)
{
	struct dc_slice_ends h = { 0 };
	struct dc_slice_end e;

	assert_int_equal(dc_slice_ends_pop_by(&h, UINT64_MAX, &e), 0);
	dc_slice_ends_free(&h);
}

/* Only ends at or before the time asked for, and each once. */
static void test_by_time(void **state)
{
	struct dc_slice_ends h = { 0 };
	struct dc_slice_end e;

	assert_int_equal(dc_slice_ends_push(&h, 30, 3), 0);
	assert_int_equal(dc_slice_ends_push(&h, 10, 1), 0);
	assert_int_equal(dc_slice_ends_push(&h, 20, 2), 0);
	assert_int_equal(dc_slice_ends_pop_by(&h, 9, &e), 0);
	assert_int_equal(dc_slice_ends_pop_by(&h, 20, &e), 1);
	assert_int_equal(e.ns, 10);
	assert_int_equal(e.track, 1);
	assert_int_equal(dc_slice_ends_pop_by(&h, 20, &e), 1);
	assert_int_equal(e.ns, 20);
	assert_int_equal(dc_slice_ends_pop_by(&h, 20, &e), 0);
	assert_int_equal(dc_slice_ends_pop_by(&h, 30, &e), 1);
	assert_int_equal(e.track, 3);
	assert_int_equal(dc_slice_ends_pop_by(&h, UINT64_MAX, &e), 0);
	dc_slice_ends_free(&h);
}

/* fwrite -> write -> pwrite ending at one nanosecond: the innermost, begun
 * last, ends first. */
static void test_nested_tie(void **state)
{
	struct dc_slice_ends h = { 0 };
	struct dc_slice_end e;

	for (uint64_t track = 1; track <= 3; track++)
		assert_int_equal(dc_slice_ends_push(&h, 100, track), 0);
	for (uint64_t track = 3; track >= 1; track--) {
		assert_int_equal(dc_slice_ends_pop_by(&h, 100, &e), 1);
		assert_int_equal(e.track, track);
	}
	dc_slice_ends_free(&h);
}

/* Many ends in a shuffled order, past the first growth: sorted by (time,
 * later begin first), as a reference sort gives them. */
static int by_time_then_later(const void *a, const void *b)
{
	const struct dc_slice_end *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->seq < y->seq ? 1 : x->seq > y->seq ? -1 : 0;
}

static void test_many(void **state)
{
	enum { N = 5000 };
	struct dc_slice_end *want = calloc(N, sizeof(*want)), e;
	struct dc_slice_ends h = { 0 };

	assert_non_null(want);
	srand(7);
	for (size_t i = 0; i < N; i++) {
		want[i] = (struct dc_slice_end){ (uint64_t)(rand() % 600), i, 1000 + i };
		assert_int_equal(dc_slice_ends_push(&h, want[i].ns, want[i].track), 0);
	}
	qsort(want, N, sizeof(*want), by_time_then_later);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(dc_slice_ends_pop_by(&h, UINT64_MAX, &e), 1);
		assert_int_equal(e.ns, want[i].ns);
		assert_int_equal(e.track, want[i].track);
	}
	assert_int_equal(dc_slice_ends_pop_by(&h, UINT64_MAX, &e), 0);
	dc_slice_ends_free(&h);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_by_time),
		cmocka_unit_test(test_nested_tie),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
