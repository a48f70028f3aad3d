// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* dc-merge -f perfetto's deflated batches (merge/pf_deflate.c): each
 * batch is one packet of compressed_packets under Perfetto's 512 KiB, and
 * inflating them (with zlib, as trace_processor does) and keeping the rest
 * gives back every packet in order, on one thread or two. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "pf_deflate.h"
#include "protobuf.h"

enum { TRACE_PACKET = 1, COMPRESSED_PACKETS = 50, BIG = 300 << 10 };

struct bytes {
	uint8_t *p;
	size_t n, cap;
};

static void append(struct bytes *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static int collect(void *ctx, const void *p, size_t n)
{
	append(ctx, p, n);
	return 0;
}

/* A packet of n bytes, text-like so that it deflates. */
static void packet(struct bytes *b, size_t n, unsigned *seed)
{
	uint8_t head[16], *h = put_key_len(head, TRACE_PACKET, n);

	append(b, head, (size_t)(h - head));
	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)('a' + rand_r(seed) % 4);

		append(b, &c, 1);
	}
}

static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t c = *(*p)++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	fail_msg("a varint runs past the end");
	return 0;
}

/* Inflates n bytes of zlib's format onto out. */
static void inflate_onto(struct bytes *out, const uint8_t *p, size_t n)
{
	z_stream z = { 0 };
	uint8_t buf[65536];
	int rc;

	assert_int_equal(inflateInit(&z), Z_OK);
	z.next_in = (uint8_t *)p;
	z.avail_in = (uInt)n;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		rc = inflate(&z, Z_NO_FLUSH);
		assert_true(rc == Z_OK || rc == Z_STREAM_END);
		append(out, buf, sizeof(buf) - z.avail_out);
	} while (rc != Z_STREAM_END);
	assert_int_equal(z.avail_in, 0);
	inflateEnd(&z);
}

static void round_trip(int helper)
{
	struct bytes in = { 0 }, out = { 0 }, back = { 0 };
	unsigned seed = 7, batches = 0, raw = 0;
	struct dc_pf_deflater *d;

	if (helper)
		setenv("DC_TEST_PF_HELPER", "1", 1);
	else
		unsetenv("DC_TEST_PF_HELPER");
	while (in.n < (3u << 20)) {
		packet(&in, 1 + (size_t)rand_r(&seed) % 3000, &seed);
		if (in.n > (1u << 20) && !raw++)
			packet(&in, BIG, &seed); /* over a batch: kept as it is */
	}
	assert_non_null(d = dc_pf_deflater_new());
	assert_int_equal(dc_pf_deflate(d, in.p, in.n, collect, &out), 0);
	dc_pf_deflater_free(d);

	raw = 0;
	for (const uint8_t *p = out.p, *end = out.p + out.n; p < end;) {
		const uint8_t *start = p, *body;
		uint64_t len;

		assert_int_equal(varint(&p, end), TRACE_PACKET << 3 | 2);
		len = varint(&p, end);
		assert_true(len <= (uint64_t)(end - p));
		body = p;
		p += len;
		if (len > 2 && body[0] == (uint8_t)(COMPRESSED_PACKETS << 3 | 2 | 0x80) && body[1] == 0x03) {
			const uint8_t *q = body + 2;
			uint64_t n = varint(&q, p);

			assert_true(q + n == p);
			assert_true(len < 512 << 10);
			inflate_onto(&back, q, n);
			batches++;
		} else {
			append(&back, start, (size_t)(p - start));
			raw++;
		}
	}
	assert_int_equal(back.n, in.n);
	assert_memory_equal(back.p, in.p, in.n);
	assert_int_equal(raw, 1);
	assert_true(batches >= in.n / (256 << 10));
	assert_true(out.n * 2 < in.n); /* 2 bits of 8 a byte, and a packet as it is */
	free(in.p);
	free(out.p);
	free(back.p);
}

static void test_one_thread(void **state)
{
	round_trip(0);
}

static void test_two_threads(void **state)
{
	round_trip(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_thread),
		cmocka_unit_test(test_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
