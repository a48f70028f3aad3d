// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Packed events (the node file's, from version 3): every value comes back
 * exactly, and bytes that are not packed events are refused. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "event_pack.h"
#include "nodefile.h"

#define V4 4

static unsigned char buf[64 * DC_EVENT_PACKED_MAX];

static void round_trip(const struct dc_event *ev, __u32 n)
{
	struct dc_event back[65];
	size_t len = dc_event_pack(ev, n, buf);

	assert_true(len >= n * DC_EVENT_PACKED_MIN && len <= n * DC_EVENT_PACKED_MAX);
	memset(back, 0xa5, sizeof(back));
	assert_int_equal(dc_event_unpack(buf, len, n, V4, back), 0);
	assert_memory_equal(back, ev, n * sizeof(*ev));
	/* One event fewer or more than packed is not these bytes. */
	if (n)
		assert_int_equal(dc_event_unpack(buf, len, n - 1, V4, back), -1);
	assert_int_equal(dc_event_unpack(buf, len, n + 1, V4, back), -1);
}

static void test_extremes(void **state)
{
	struct dc_event ev[6] = {
		{ .ts = UINT64_MAX, .dur = UINT64_MAX, .pid = UINT32_MAX, .tid = UINT32_MAX, .func = UINT32_MAX,
		  .cpu = UINT16_MAX, .depth = UINT8_MAX, .flags = UINT8_MAX, .ret = INT64_MIN, .req = UINT64_MAX,
		  .bytes = 0, .offset = INT64_MAX, .fd = INT32_MIN, .path = UINT32_MAX, .fd2 = INT32_MIN,
		  .path2 = UINT32_MAX },
		{ 0 }, /* every field down to zero at once; fd2 0 is a descriptor */
		{ .ts = 1, .ret = INT64_MAX, .req = 0, .bytes = UINT64_MAX, .offset = INT64_MIN, .fd = INT32_MAX,
		  .fd2 = INT32_MAX, .path2 = 0 },
		{ .ts = 0, .ret = -1, .fd = -1, .offset = -1, .bytes = 1, .fd2 = -1, .path2 = 7 }, /* time going back */
		{ .ts = 5, .dur = 3, .pid = 1, .tid = 1, .func = 1, .cpu = 1, .ret = 4096, .req = 4096, .bytes = 4096,
		  .fd2 = -1 },
		{ .ts = 6, .dur = 3, .pid = 1, .tid = 1, .func = 1, .cpu = 1, .ret = 4096, .req = 4096, .bytes = 4096,
		  .fd2 = -1 },
	};

	round_trip(ev, 6);
	round_trip(ev, 1);
	round_trip(ev, 0);
}

/* A thread's run of writes: the bytes the format is for. */
static void test_a_run_of_writes_is_small(void **state)
{
	struct dc_event ev[64];

	for (int i = 0; i < 64; i++)
		ev[i] = (struct dc_event){ .ts = 1700000000000ull + 2000 * i, .dur = 900 + i % 7, .pid = 4242,
					   .tid = 4243, .func = 17, .cpu = 1, .flags = 3, .ret = 4096, .req = 4096,
					   .bytes = 4096, .offset = 4096ll * i, .fd = 5, .path = 12, .fd2 = -1 };
	round_trip(ev, 64);
	/* After the first, one byte a field but two each for the time's step,
	 * the duration and the size, and one for no second file: 18 bytes,
	 * where the struct takes 80. */
	assert_int_equal(dc_event_pack(ev, 64, buf) - dc_event_pack(ev, 1, buf), 63 * 18);
}

/* A version 3 file's events, which have no second file, read as none. */
static void test_version_3_has_no_second_file(void **state)
{
	struct dc_event ev = { .ts = 9, .pid = 2, .fd = 3, .path = 4, .fd2 = -1 }, out[2];
	size_t len = dc_event_pack(&ev, 1, buf);

	/* Its last byte is version 4's "no second file". */
	assert_int_equal(buf[len - 1], 0);
	memset(out, 0xa5, sizeof(out));
	assert_int_equal(dc_event_unpack(buf, len - 1, 1, 3, out), 0);
	assert_memory_equal(&out[0], &ev, sizeof(ev));
	/* The same bytes are one byte short of a version 4 event. */
	assert_int_equal(dc_event_unpack(buf, len - 1, 1, V4, out), -1);
	/* A second file's name past 2^32 - 1, or its fd past 32 bits: refused. */
	buf[len - 1] = 0x81, buf[len] = 0x80, buf[len + 1] = 0x80, buf[len + 2] = 0x80, buf[len + 3] = 0x10;
	buf[len + 4] = 0;
	assert_int_equal(dc_event_unpack(buf, len + 5, 1, V4, out), -1);
	buf[len + 3] = 0x0f, buf[len + 4] = 1; /* path2 2^32 - 2^28, fd2 -1 */
	assert_int_equal(dc_event_unpack(buf, len + 5, 1, V4, out), 0);
	assert_int_equal(out[0].path2, (1ull << 32) - (1ull << 28));
	assert_int_equal(out[0].fd2, -1);
	buf[len] = 1, buf[len + 1] = 0x81, buf[len + 2] = 0x80, buf[len + 3] = 0x80, buf[len + 4] = 0x80,
	buf[len + 5] = 0x10; /* path2 128, fd2 zigzag 2^32 + 1 */
	assert_int_equal(dc_event_unpack(buf, len + 6, 1, V4, out), -1);
}

/* The varints themselves, in version 3's fourteen fields. */
static void test_malformed(void **state)
{
	struct dc_event ev = { .ts = 1, .pid = 2, .fd = 3, .fd2 = -1 }, out[2];
	size_t len = dc_event_pack(&ev, 1, buf) - 1; /* as version 3 packed it */
	unsigned char b[2 * DC_EVENT_PACKED_MAX];

	/* Cut anywhere: refused. */
	for (size_t cut = 0; cut < len; cut++)
		assert_int_equal(dc_event_unpack(buf, cut, 1, 3, out), -1);
	/* A byte left over: refused. */
	memcpy(b, buf, len);
	b[len] = 0;
	assert_int_equal(dc_event_unpack(b, len + 1, 1, 3, out), -1);
	/* A varint of eleven bytes, or a tenth byte over bit 63: refused. */
	memset(b, 0x80, 10);
	b[10] = 0;
	assert_int_equal(dc_event_unpack(b, 11 + 13, 1, 3, out), -1);
	memset(b, 0xff, 9);
	b[9] = 2;
	memset(b + 10, 0, 13);
	assert_int_equal(dc_event_unpack(b, 23, 1, 3, out), -1);
	b[9] = 1; /* 2^64 - 1: a time, fine */
	assert_int_equal(dc_event_unpack(b, 23, 1, 3, out), 0);
	assert_true(out[0].ts == (__u64)0 + (UINT64_MAX >> 1 ^ -(UINT64_MAX & 1)));
	/* A pid of 2^32 (zigzag 2^33): too wide for its field. */
	memset(b, 0, 23);
	b[2] = 0x80, b[3] = 0x80, b[4] = 0x80, b[5] = 0x80, b[6] = 0x20;
	assert_int_equal(dc_event_unpack(b, 18, 1, 3, out), -1);
	b[6] = 0x1f; /* zigzag 2^33 - 2^28: pid 2^32 - 2^27, fine */
	assert_int_equal(dc_event_unpack(b, 18, 1, 3, out), 0);
	assert_int_equal(out[0].pid, (1ull << 32) - (1ull << 27));
	/* An fd below INT32_MIN (zigzag 2^32 + 1 is -(2^31) - 1). */
	memset(b, 0, 23);
	b[12] = 0x81, b[13] = 0x80, b[14] = 0x80, b[15] = 0x80, b[16] = 0x10;
	assert_int_equal(dc_event_unpack(b, 18, 1, 3, out), -1);
	/* The same with a step inside the range: fine. */
	b[12] = 0x83, b[16] = 0x0f;
	assert_int_equal(dc_event_unpack(b, 18, 1, 3, out), 0);
	assert_int_equal(out[0].fd, -2013265922);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extremes),
		cmocka_unit_test(test_a_run_of_writes_is_small),
		cmocka_unit_test(test_version_3_has_no_second_file),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
