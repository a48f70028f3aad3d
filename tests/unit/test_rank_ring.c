// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The MPI-IO ring between a rank and the agent: order, paths, wrap-around,
 * a full ring, producers on many threads, and a ring its rank damages. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "wrapper_funcs.h"
#include "rank_ring.h"

static struct dc_ring_rec rec_for(unsigned i)
{
	struct dc_ring_rec r = { 0 };

	r.tid = 1000 + i;
	r.func = i % DC_WRAPPER_NFUNCS;
	r.cpu = i % 7;
	r.ret = i % 5 ? (long long)i - 3 : (0x0100000000000000ll | i); /* an hid_t */
	r.ts = 1000000ull * i;
	r.dur = i;
	r.req = 4096ull * i;
	r.bytes = 4096ull * i + 1;
	r.offset = -(long long)i;
	r.handle = 0xabc000 + i;
	r.parent = i % 4 ? 0 : 0x0200000000000000ull + i;
	r.flags = i & 1 ? DC_RING_REC_OFFSET : 0;
	return r;
}

/* A path of a length that takes 0 to 3 slots beyond the record's own. */
static void path_for(unsigned i, char *p, size_t *len)
{
	size_t n = (i * 37) % (3 * DC_RING_SLOT_SIZE);

	if (i % 3 == 0) {
		*len = 0;
		return;
	}
	for (size_t k = 0; k < n; k++)
		p[k] = 'a' + (i + k) % 26;
	p[n] = 0;
	*len = n + 1;
}

static void expect_rec(struct dc_ring_reader *rd, unsigned i)
{
	struct dc_ring_rec want = rec_for(i), got;
	char path[DC_PATH_MAX], wpath[DC_PATH_MAX];
	size_t wlen;

	path_for(i, wpath, &wlen);
	assert_int_equal(dc_ring_reader_next(rd, &got, path), DC_RING_RECORD);
	assert_int_equal(got.tid, want.tid);
	assert_int_equal(got.func, want.func);
	assert_int_equal(got.ts, want.ts);
	assert_int_equal(got.bytes, want.bytes);
	assert_int_equal(got.offset, want.offset);
	assert_int_equal(got.handle, want.handle);
	assert_int_equal(got.parent, want.parent);
	assert_int_equal(got.ret, want.ret);
	assert_int_equal(got.flags, want.flags);
	assert_int_equal(got.path_len, wlen);
	if (wlen)
		assert_string_equal(path, wpath);
}

static struct dc_ring_reader *pair(unsigned nslots, struct dc_ring_head **h)
{
	char why[160];
	int fd;
	struct dc_ring_reader *rd;

	*h = dc_ring_create(nslots, &fd);
	assert_non_null(*h);
	rd = dc_ring_reader_open(fd, why, sizeof(why));
	assert_non_null(rd);
	dc_ring_reader_start(rd, DC_RING_TRACE, &(struct dc_funcs){ .w = { ~0ull, ~0ull } });
	assert_int_equal((*h)->mode, DC_RING_TRACE);
	return rd;
}

static void put_rec(struct dc_ring_head *h, unsigned i, int expect)
{
	struct dc_ring_rec r = rec_for(i);
	char p[DC_PATH_MAX];
	size_t len;

	path_for(i, p, &len);
	assert_int_equal(dc_ring_put(h, &r, len ? p : NULL, len), expect);
}

/* n puts of r without a path, each answered expect. */
static void put_n(struct dc_ring_head *h, const struct dc_ring_rec *r, unsigned n, int expect)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(dc_ring_put(h, r, NULL, 0), expect);
}

/* n records taken, whatever they hold. */
static void take_n(struct dc_ring_reader *rd, unsigned n)
{
	struct dc_ring_rec r;
	char path[DC_PATH_MAX];

	for (unsigned i = 0; i < n; i++)
		assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_RECORD);
}

static void test_order_and_wrap(void **state)
{
	struct dc_ring_head *h;
	struct dc_ring_reader *rd = pair(64, &h);
	struct dc_ring_rec r;
	char path[DC_PATH_MAX];

	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_EMPTY);
	/* Batches of 5 written, then read: the slots wrap many times over. */
	for (unsigned i = 0; i < 2000; i += 5) {
		for (unsigned k = i; k < i + 5; k++)
			put_rec(h, k, 0);
		for (unsigned k = i; k < i + 5; k++)
			expect_rec(rd, k);
		assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_EMPTY);
	}
	assert_int_equal(dc_ring_reader_taken(rd), 2000);
	assert_int_equal(dc_ring_reader_lost(rd), 0);
	dc_ring_reader_free(rd);
	dc_ring_destroy(h);
}

static void test_full(void **state)
{
	struct dc_ring_head *h;
	struct dc_ring_reader *rd = pair(64, &h);
	struct dc_ring_rec r = rec_for(2);
	char path[DC_PATH_MAX];

	/* 64 one-slot records fit; the next ones are dropped and counted. */
	put_n(h, &r, 64, 0);
	put_n(h, &r, 10, -1);
	assert_int_equal(dc_ring_reader_lost(rd), 10);
	take_n(rd, 64);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_EMPTY);
	/* Room again once drained. */
	assert_int_equal(dc_ring_put(h, &r, NULL, 0), 0);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_RECORD);
	/* A path longer than the longest path is put without it. */
	char *big = malloc(DC_PATH_MAX + 2);
	memset(big, 'x', DC_PATH_MAX + 1);
	big[DC_PATH_MAX + 1] = 0;
	assert_int_equal(dc_ring_put(h, &r, big, DC_PATH_MAX + 2), 0);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_RECORD);
	assert_int_equal(r.path_len, 0);
	free(big);
	dc_ring_reader_free(rd);
	dc_ring_destroy(h);
}

static long minor_faults(void)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	return u.ru_minflt;
}

/* Minor page faults while n one-slot records fill a new ring of n slots. */
static long faults_filling(unsigned n, bool prefault)
{
	struct dc_ring_rec r = rec_for(4);
	struct dc_ring_head *h;
	long before, faults;
	int fd;

	h = dc_ring_create(n, &fd);
	assert_non_null(h);
	if (prefault)
		dc_ring_prefault(h);
	before = minor_faults();
	for (unsigned i = 0; i < n; i++)
		dc_ring_put(h, &r, NULL, 0);
	faults = minor_faults() - before;
	assert_int_equal(h->head, n);
	dc_ring_destroy(h);
	close(fd);
	return faults;
}

/* A traced rank's calls pay no page fault of the ring: its pages are mapped
 * before the first record. Without that, a first pass faults each page. */
static void test_prefault(void **state)
{
	unsigned n = 4096;
	long pages = (long)(n * DC_RING_SLOT_SIZE / sysconf(_SC_PAGESIZE));

	assert_true(faults_filling(n, false) >= pages);
	assert_int_equal(faults_filling(n, true), 0);
}

/* The agent shows the rank its tail once it has caught up (or past each
 * eighth of the ring), not after every record; the rank reads it only when
 * its last reading says the ring is full. */
static void test_tail_per_drain(void **state)
{
	struct dc_ring_head *h;
	struct dc_ring_reader *rd = pair(64, &h);
	struct dc_ring_rec r = rec_for(1);
	char path[DC_PATH_MAX];

	put_n(h, &r, 20, 0);
	take_n(rd, 7);
	assert_int_equal(h->tail, 0);
	take_n(rd, 1);
	assert_int_equal(h->tail, 8);
	take_n(rd, 12);
	assert_int_equal(h->tail, 16);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_EMPTY);
	assert_int_equal(h->tail, 20);
	/* The rank had no reason to look at tail yet: 44 slots still free by its reading. */
	assert_int_equal(h->tail_seen, 0);
	put_n(h, &r, 44, 0);
	assert_int_equal(h->tail_seen, 0);
	/* The 65th slot: its reading of 0 says full, the agent's 20 says not. */
	assert_int_equal(dc_ring_put(h, &r, NULL, 0), 0);
	assert_int_equal(h->tail_seen, 20);
	assert_int_equal(dc_ring_reader_lost(rd), 0);
	dc_ring_reader_free(rd);
	dc_ring_destroy(h);
}

/* What the agent asks before it takes a record: whether one is committed
 * and when it ended; and whether the ring is half full. */
static void test_peek(void **state)
{
	struct dc_ring_head *h;
	struct dc_ring_reader *rd = pair(64, &h);
	struct dc_ring_rec r = rec_for(3);
	char path[DC_PATH_MAX];
	__u64 end = 7;

	assert_false(dc_ring_reader_peek_end(rd, &end));
	assert_int_equal(end, 7);
	r.ts = 1000;
	r.dur = 25;
	assert_int_equal(dc_ring_put(h, &r, "/a/b", 5), 0);
	r.ts = ~0ull - 5; /* ts + dur past 2^64: as late as can be */
	assert_int_equal(dc_ring_put(h, &r, NULL, 0), 0);
	assert_true(dc_ring_reader_peek_end(rd, &end));
	assert_int_equal(end, 1025);
	/* Asking again changes nothing. */
	assert_true(dc_ring_reader_peek_end(rd, &end));
	assert_int_equal(end, 1025);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_RECORD);
	assert_int_equal(r.ts, 1000);
	assert_string_equal(path, "/a/b");
	assert_true(dc_ring_reader_peek_end(rd, &end));
	assert_int_equal(end, ~0ull);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_RECORD);
	assert_false(dc_ring_reader_peek_end(rd, &end));
	/* Reserved but not committed: nothing to take yet. */
	h->head += 1;
	assert_false(dc_ring_reader_peek_end(rd, &end));
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_EMPTY);
	h->head -= 1;
	/* A quarter of 64 slots. */
	put_n(h, &r, 15, 0);
	assert_false(dc_ring_reader_filling(rd));
	assert_int_equal(dc_ring_put(h, &r, NULL, 0), 0);
	assert_true(dc_ring_reader_filling(rd));
	take_n(rd, 16);
	assert_false(dc_ring_reader_filling(rd));
	/* A head past what the ring holds: peek says take it now, and the
	 * taking finds the ring damaged. */
	h->head += 1000;
	assert_true(dc_ring_reader_peek_end(rd, &end));
	assert_int_equal(end, 0);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_DAMAGED);
	assert_false(dc_ring_reader_peek_end(rd, &end));
	dc_ring_reader_free(rd);
	dc_ring_destroy(h);
}

static void test_counters(void **state)
{
	struct dc_ring_head *h;
	struct dc_ring_reader *rd = pair(64, &h);
	struct dc_ring_counter c;

	for (int i = 0; i < 5; i++)
		dc_ring_count(h, DC_MPI_File_write_at, 10, 4096);
	dc_ring_count(h, DC_RING_MAX_FUNCS, 1, 1); /* out of range: ignored */
	c = dc_ring_reader_counter(rd, DC_MPI_File_write_at);
	assert_int_equal(c.count, 5);
	assert_int_equal(c.time_ns, 50);
	assert_int_equal(c.bytes, 5 * 4096);
	assert_int_equal(dc_ring_reader_counter(rd, DC_RING_MAX_FUNCS).count, 0);
	/* Let go: the rank is told to stop. */
	dc_ring_reader_free(rd);
	assert_int_equal(h->mode, DC_RING_OFF);
	dc_ring_destroy(h);
}

#define THREADS 4
#define PER_THREAD 20000

static void *producer(void *arg)
{
	struct dc_ring_head *h = arg;

	for (unsigned i = 0; i < PER_THREAD; i++) {
		struct dc_ring_rec r = rec_for(i);
		char p[DC_PATH_MAX];
		size_t len;

		/* Each record checks itself: bytes and offset derive from ts. */
		r.ts = (__u64)pthread_self() ^ i;
		r.bytes = r.ts * 3;
		r.offset = (long long)(r.ts * 5);
		path_for(i, p, &len);
		dc_ring_put(h, &r, len ? p : NULL, len);
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct dc_ring_head *h;
	struct dc_ring_reader *rd = pair(256, &h);
	pthread_t t[THREADS];
	struct dc_ring_rec r;
	char path[DC_PATH_MAX];
	unsigned long got = 0;
	int done = 0;

	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, producer, h), 0);
	while (done < 2) {
		enum dc_ring_next n = dc_ring_reader_next(rd, &r, path);

		assert_int_not_equal(n, DC_RING_DAMAGED);
		if (n == DC_RING_RECORD) {
			assert_int_equal(r.bytes, r.ts * 3);
			assert_int_equal((__u64)r.offset, r.ts * 5);
			if (r.path_len)
				assert_int_equal(strlen(path) + 1, r.path_len);
			got++;
		} else if (done == 1) {
			done = 2; /* producers finished and the ring is empty */
		} else if (got + dc_ring_reader_lost(rd) == THREADS * PER_THREAD) {
			done = 1;
		}
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_EMPTY);
	assert_int_equal(got + dc_ring_reader_lost(rd), THREADS * PER_THREAD);
	assert_int_equal(dc_ring_reader_taken(rd), got);
	dc_ring_reader_free(rd);
	dc_ring_destroy(h);
}

/* What a rank can do to its ring: the agent stops reading it, and says why. */
static void damaged(void (*spoil)(struct dc_ring_head *h), const char *why)
{
	struct dc_ring_head *h;
	struct dc_ring_reader *rd = pair(64, &h);
	struct dc_ring_rec r;
	char path[DC_PATH_MAX];

	put_rec(h, 1, 0);
	put_rec(h, 2, 0);
	spoil(h);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_DAMAGED);
	assert_non_null(strstr(dc_ring_reader_problem(rd), why));
	/* And stays so, whatever is written after. */
	h->head = h->tail;
	put_rec(h, 3, 0);
	assert_int_equal(dc_ring_reader_next(rd, &r, path), DC_RING_DAMAGED);
	dc_ring_reader_free(rd);
	dc_ring_destroy(h);
}

static struct dc_ring_rec *first(struct dc_ring_head *h)
{
	return (struct dc_ring_rec *)((char *)h + DC_RING_HEAD_SIZE);
}

static void far_head(struct dc_ring_head *h) { h->head = h->tail + 65; }
static void back_head(struct dc_ring_head *h) { h->head = h->tail - 1; }
static void big_commit(struct dc_ring_head *h) { first(h)->commit = DC_RING_COMMITTED | 0x7fff; }
static void zero_commit(struct dc_ring_head *h) { first(h)->commit = DC_RING_COMMITTED; }
static void long_path(struct dc_ring_head *h) { first(h)->path_len = 500; }
static void bad_func(struct dc_ring_head *h) { first(h)->func = DC_WRAPPER_NFUNCS; }

static void test_hostile(void **state)
{
	damaged(far_head, "head is past");
	damaged(back_head, "head is past");
	damaged(big_commit, "more slots");
	damaged(zero_commit, "more slots");
	damaged(long_path, "path length");
	damaged(bad_func, "no function the wrapper records");
}

static void refused(int fd, const char *why)
{
	char msg[160];

	assert_null(dc_ring_reader_open(fd, msg, sizeof(msg)));
	assert_non_null(strstr(msg, why));
}

static void test_refused(void **state)
{
	struct dc_ring_head *h;
	int fd, p[2];

	/* Not a memfd, or one the rank could still shrink. */
	assert_int_equal(pipe(p), 0);
	close(p[1]);
	refused(p[0], "not a memfd sealed against shrinking");
	fd = memfd_create("t", MFD_ALLOW_SEALING);
	assert_int_equal(ftruncate(fd, DC_RING_HEAD_SIZE + 64 * DC_RING_SLOT_SIZE), 0);
	refused(fd, "not a memfd sealed against shrinking");
	/* Sealed, but of another version or size than its header says. */
	h = dc_ring_create(64, &fd);
	h->version = DC_RING_VERSION + 1;
	refused(fd, "another version");
	dc_ring_destroy(h);
	h = dc_ring_create(64, &fd);
	h->nslots = 128;
	refused(fd, "does not match its size");
	h->nslots = 64;
	dc_ring_destroy(h);
	h = dc_ring_create(64, &fd);
	h->nslots = 48;
	refused(fd, "does not match its size");
	h->nslots = 64;
	dc_ring_destroy(h);
	fd = memfd_create("t", MFD_ALLOW_SEALING);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	refused(fd, "impossible size");
	/* The rank's own geometry is checked too. */
	assert_null(dc_ring_create(100, &fd));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_wrap), cmocka_unit_test(test_full), cmocka_unit_test(test_prefault),
		cmocka_unit_test(test_counters), cmocka_unit_test(test_tail_per_drain), cmocka_unit_test(test_peek),       cmocka_unit_test(test_threads),
		cmocka_unit_test(test_hostile),        cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
