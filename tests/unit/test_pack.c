// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Packed chunks: any zlib inflater gets back HDF5's shuffle of the rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "chunk_pack.h"

/* Rows like a trace's: a counter, a few fields that seldom change, some
 * that change all the time, and constant padding. */
static void fill(unsigned char *rows, size_t n, size_t size, unsigned seed)
{
	srand(seed);
	for (size_t i = 0; i < n; i++) {
		unsigned char *r = rows + i * size;

		for (size_t k = 0; k < size; k++)
			r[k] = k % 7 == 0   ? (unsigned char)rand()
			       : k % 3 == 0 ? (unsigned char)(i / 100)
			       : k % 5 == 0 ? 0xff
					    : (unsigned char)k;
		if (size >= 8)
			memcpy(r, &(uint64_t){ 1000000ull + i * 1500 }, 8);
	}
}

/* The byte-by-byte definition of HDF5's shuffle filter. */
static void reference_shuffle(const unsigned char *in, unsigned char *out, size_t n, size_t size)
{
	for (size_t k = 0; k < size; k++)
		for (size_t i = 0; i < n; i++)
			out[k * n + i] = in[i * size + k];
}

static void check_round_trip(unsigned threads, size_t n, size_t size)
{
	size_t bytes = n * size;
	unsigned char *rows = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes + 1);
	struct dc_packer *p = dc_packer_new(threads, bytes);
	struct dc_pack_job j = { .rows = rows, .nrows = n, .row_size = size, .out_cap = dc_pack_bound(bytes, size) };
	uLongf len = bytes + 1;

	assert_non_null(p);
	j.out = malloc(j.out_cap);
	fill(rows, n, size, n * 31 + size);
	reference_shuffle(rows, want, n, size);
	dc_packer_submit(p, &j);
	dc_packer_wait(p, &j);
	if (j.err)
		print_error("threads %u, %zu rows of %zu bytes: not packed\n", threads, n, size);
	assert_int_equal(j.err, 0);
	assert_int_equal(uncompress(got, &len, j.out, j.out_len), Z_OK);
	assert_int_equal(len, bytes);
	assert_memory_equal(got, want, bytes);
	dc_packer_free(p);
	free(rows);
	free(want);
	free(got);
	free(j.out);
}

static void test_shapes(void **state)
{
	static const size_t sizes[] = { 80, 56, 77, 16, 13, 1 };
	static const size_t counts[] = { 32768, 32771, 17, 16, 15, 1 };

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			check_round_trip(2, counts[c], sizes[s]);
			check_round_trip(0, counts[c], sizes[s]);
		}
}

/* Jobs queued faster than packed come back whole, each with its own rows. */
static void test_many_jobs_in_flight(void **state)
{
	enum { JOBS = 12, N = 4096, SIZE = 80 };
	struct dc_packer *p = dc_packer_new(2, N * SIZE);
	struct dc_pack_job jobs[JOBS];
	unsigned char *rows[JOBS];

	(void)state;
	for (int i = 0; i < JOBS; i++) {
		rows[i] = malloc(N * SIZE);
		fill(rows[i], N, SIZE, i);
		jobs[i] = (struct dc_pack_job){ .rows = rows[i], .nrows = N, .row_size = SIZE,
						.out_cap = dc_pack_bound(N * SIZE, SIZE) };
		jobs[i].out = malloc(jobs[i].out_cap);
		dc_packer_submit(p, &jobs[i]);
	}
	for (int i = 0; i < JOBS; i++) {
		unsigned char want[N * SIZE], got[N * SIZE];
		uLongf len = sizeof(got);

		dc_packer_wait(p, &jobs[i]);
		assert_int_equal(jobs[i].err, 0);
		reference_shuffle(rows[i], want, N, SIZE);
		assert_int_equal(uncompress(got, &len, jobs[i].out, jobs[i].out_len), Z_OK);
		assert_memory_equal(got, want, sizeof(want));
		free(rows[i]);
		free(jobs[i].out);
	}
	dc_packer_free(p);
}

/* A chunk larger than the packer was made for is refused, not overrun. */
static void test_oversized_job(void **state)
{
	struct dc_packer *p = dc_packer_new(1, 100);
	unsigned char rows[200] = { 0 }, out[512];
	struct dc_pack_job j = { .rows = rows, .nrows = 10, .row_size = 20, .out = out, .out_cap = sizeof(out) };

	(void)state;
	dc_packer_submit(p, &j);
	dc_packer_wait(p, &j);
	assert_int_not_equal(j.err, 0);
	dc_packer_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_many_jobs_in_flight),
		cmocka_unit_test(test_oversized_job),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
