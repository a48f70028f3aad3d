// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The node file format: what is written is read back, and damage is named. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>

#include "crc32.h"
#include "nodefile.h"
#include "nodefile_int.h"

static char dir[] = "/tmp/dc-unit.XXXXXX";
static char path[256];

static int setup(void **state)
{
	static int n;

	snprintf(path, sizeof(path), "%s/node%d.dcnode", dir, n++);
	return 0;
}

static struct dc_node_header header(void)
{
	struct dc_node_header h = { 0 };

	snprintf(h.job_id, sizeof(h.job_id), "job42");
	snprintf(h.hostname, sizeof(h.hostname), "node007");
	h.monotonic_ref_ns = 1000;
	h.realtime_ref_ns = 1700000000000000000ull;
	h.ncpus = 2;
	return h;
}

static struct dc_event event(__u64 ts, __u32 func, __u32 path_id)
{
	struct dc_event e = { .ts = ts, .dur = 10, .pid = 7, .tid = 8, .func = func, .ret = 4096,
			      .req = 4096, .bytes = 4096, .fd = 3, .path = path_id, .flags = DC_EV_FD,
			      .fd2 = -1 };
	return e;
}

/* Writes n events in chunks of `per_flush`, with a function table and a process. */
static void write_file(int n, int per_flush)
{
	struct dc_node_header h = header();
	char err[256];
	struct dc_writer *w = dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err));
	__u32 name, cat, file;

	assert_non_null(w);
	name = dc_writer_string(w, "write");
	cat = dc_writer_string(w, "posix");
	assert_int_equal(dc_writer_string(w, "write"), name); /* interned */
	struct dc_func f = { .id = 0, .name = name, .category = cat };
	assert_int_equal(dc_writer_func(w, &f), 0);
	struct dc_proc p = { .ts = 5, .pid = 7, .kind = DC_PROC_START, .comm = "app" };
	assert_int_equal(dc_writer_proc(w, &p), 0);
	file = dc_writer_string(w, "/data/out.dat");
	for (int i = 0; i < n; i++) {
		/* Out of order on purpose: chunks come out sorted. */
		struct dc_event e = event(1000 + (i ^ 1), 0, file);

		assert_int_equal(dc_writer_event(w, &e), 0);
		if (per_flush && (i + 1) % per_flush == 0)
			assert_int_equal(dc_writer_flush(w), 0);
	}
	unsigned long long written;
	assert_int_equal(dc_writer_close(w, &written), 0);
	assert_int_equal(written, n);
}

struct counts {
	int events, funcs, procs, chunks;
	__u64 last_ts;
	int unordered;
};

static enum dc_read_status read_file(struct counts *c, char *problem, size_t len)
{
	char err[256];
	struct dc_reader *r = dc_reader_open(path, err, sizeof(err));
	struct dc_chunk ch;
	enum dc_read_status st;

	assert_non_null(r);
	memset(c, 0, sizeof(*c));
	assert_string_equal(dc_reader_header(r)->job_id, "job42");
	assert_string_equal(dc_reader_header(r)->hostname, "node007");
	while ((st = dc_reader_next(r, &ch)) == DC_READ_OK) {
		c->chunks++;
		if (ch.hdr.type == DC_CHUNK_FUNCS) {
			const struct dc_func *f = ch.data;

			c->funcs += ch.hdr.count;
			assert_string_equal(dc_reader_string(r, f->name), "write");
			assert_string_equal(dc_reader_string(r, f->category), "posix");
		}
		if (ch.hdr.type == DC_CHUNK_PROCS)
			c->procs += ch.hdr.count;
		if (ch.hdr.type != DC_CHUNK_EVENTS)
			continue;
		c->last_ts = 0;
		for (__u32 i = 0; i < ch.hdr.count; i++) {
			const struct dc_event *e = (const struct dc_event *)ch.data + i;

			assert_string_equal(dc_reader_string(r, e->path), "/data/out.dat");
			assert_int_equal(e->bytes, 4096);
			assert_int_equal(e->fd, 3);
			assert_int_equal(e->fd2, -1);
			assert_int_equal(e->path2, 0);
			if (e->ts < c->last_ts)
				c->unordered++;
			c->last_ts = e->ts;
		}
		c->events += ch.hdr.count;
	}
	snprintf(problem, len, "%s", dc_reader_problem(r));
	dc_reader_close(r);
	return st;
}

static void test_round_trip(void **state)
{
	struct counts c;
	char problem[512];

	write_file(50000, 0);
	assert_int_equal(read_file(&c, problem, sizeof(problem)), DC_READ_END);
	assert_int_equal(c.events, 50000);
	assert_int_equal(c.funcs, 1);
	assert_int_equal(c.procs, 1);
	assert_int_equal(c.unordered, 0);
}

/* Events in the order a chunk must not keep: each chunk still reads back
 * in start order, the outer of two calls that start together first, and
 * nothing is lost or doubled. Backwards is far from sorted (qsort); a long
 * call arriving after the calls inside it is near (the insertion sort). */
static void test_chunks_sorted_whatever_the_arrival(void **state)
{
	struct dc_node_header h = header();
	char err[256];
	struct dc_writer *w = dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err));
	struct dc_reader *r;
	struct dc_chunk ch;
	__u64 sum = 0, want = 0;
	int events = 0, unordered = 0, ties = 0;

	assert_non_null(w);
	for (int i = 0; i < 20000; i++) { /* backwards */
		struct dc_event e = event(100000 - i, 0, 0);

		want += e.ts;
		assert_int_equal(dc_writer_event(w, &e), 0);
	}
	assert_int_equal(dc_writer_flush(w), 0);
	for (int i = 0; i < 20000; i++) { /* every 4th an outer call, ending after its 3 inner ones */
		struct dc_event e = event(200000 + i - (i % 4 == 3 ? 3 : 0), 0, 0);

		e.dur = i % 4 == 3 ? 10 : 1;
		want += e.ts;
		assert_int_equal(dc_writer_event(w, &e), 0);
	}
	assert_int_equal(dc_writer_close(w, NULL), 0);
	r = dc_reader_open(path, err, sizeof(err));
	assert_non_null(r);
	while (dc_reader_next(r, &ch) == DC_READ_OK) {
		if (ch.hdr.type != DC_CHUNK_EVENTS)
			continue;
		for (__u32 i = 0; i < ch.hdr.count; i++) {
			const struct dc_event *e = (const struct dc_event *)ch.data + i, *p = e - 1;

			sum += e->ts;
			events++;
			if (i && (e->ts < p->ts || (e->ts == p->ts && e->dur > p->dur)))
				unordered++;
			if (i && e->ts == p->ts && p->dur == 10)
				ties++;
		}
	}
	dc_reader_close(r);
	assert_int_equal(events, 40000);
	assert_int_equal(sum, want);
	assert_int_equal(unordered, 0);
	assert_int_equal(ties, 5000); /* each outer call just before the inner one it starts with */
}

static void test_new_file_is_private_and_exclusive(void **state)
{
	struct dc_node_header h = header();
	struct stat st;
	char err[256];

	write_file(1, 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* An existing file is never overwritten. */
	assert_null(dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err)));
	assert_int_equal(errno, EEXIST);
}

static void test_symlink_is_refused(void **state)
{
	struct dc_node_header h = header();
	char target[300], err[256];

	snprintf(target, sizeof(target), "%s.target", path);
	assert_int_equal(symlink(target, path), 0);
	assert_null(dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err)));
	assert_int_equal(access(target, F_OK), -1); /* nothing created through the link */
}

/* The last events chunk's payload length, through the reader. */
static __u32 last_events_payload(void)
{
	char err[256];
	struct dc_reader *r = dc_reader_open(path, err, sizeof(err));
	struct dc_chunk ch;
	__u32 len = 0;

	assert_non_null(r);
	while (dc_reader_next(r, &ch) == DC_READ_OK)
		if (ch.hdr.type == DC_CHUNK_EVENTS)
			len = ch.hdr.payload_len;
	dc_reader_close(r);
	assert_true(len > 0);
	return len;
}

static void truncate_by(off_t cut)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - cut), 0);
}

static void test_truncated_keeps_whole_chunks(void **state)
{
	struct counts c;
	char problem[512];

	write_file(1000, 100); /* 10 event chunks of 100 */
	/* Remove the end mark and half of the last event chunk. */
	truncate_by(sizeof(struct dc_chunk_header) + last_events_payload() / 2);
	assert_int_equal(read_file(&c, problem, sizeof(problem)), DC_READ_TRUNCATED);
	assert_int_equal(c.events, 900);
	assert_non_null(strstr(problem, "cut short"));
	assert_non_null(strstr(problem, "100 records dropped"));
}

static void test_missing_end_mark(void **state)
{
	struct counts c;
	char problem[512];

	write_file(300, 100);
	truncate_by(sizeof(struct dc_chunk_header)); /* just the END chunk */
	assert_int_equal(read_file(&c, problem, sizeof(problem)), DC_READ_TRUNCATED);
	assert_int_equal(c.events, 300);
	assert_non_null(strstr(problem, "without an end mark"));
}

static void flip_byte(off_t from_end)
{
	int fd = open(path, O_RDWR);
	struct stat st;
	unsigned char b;

	assert_true(fd >= 0);
	fstat(fd, &st);
	assert_int_equal(pread(fd, &b, 1, st.st_size - from_end), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, st.st_size - from_end), 1);
	close(fd);
}

static void test_corrupt_payload_is_named(void **state)
{
	struct counts c;
	char problem[512];

	write_file(300, 100);
	/* A byte inside the last event chunk's payload. */
	flip_byte(sizeof(struct dc_chunk_header) + 10);
	assert_int_equal(read_file(&c, problem, sizeof(problem)), DC_READ_CORRUPT);
	assert_int_equal(c.events, 200);
	assert_non_null(strstr(problem, "fails its checksum"));
}

static void test_corrupt_chunk_header(void **state)
{
	struct counts c;
	char problem[512];

	write_file(300, 100);
	flip_byte(sizeof(struct dc_chunk_header) + last_events_payload() + 12);
	assert_int_equal(read_file(&c, problem, sizeof(problem)), DC_READ_CORRUPT);
	assert_non_null(strstr(problem, "corrupt chunk header"));
}

static void test_bad_header(void **state)
{
	char err[256];
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, "hello, not a node file", 22), 22);
	close(fd);
	assert_null(dc_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "not a DataCrumbs node file"));

	unlink(path);
	write_file(1, 0);
	fd = open(path, O_RDWR);
	__u32 v = 99;
	assert_int_equal(pwrite(fd, &v, sizeof(v), offsetof(struct dc_node_header, version)), 4);
	close(fd);
	assert_null(dc_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "format version 99"));
}

static void test_empty_file(void **state)
{
	char err[256];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	close(fd);
	assert_null(dc_reader_open(path, err, sizeof(err)));
	assert_non_null(strstr(err, "not a DataCrumbs node file"));
}

/* A write that fails half-way (here: over RLIMIT_FSIZE, as a full disk would)
 * leaves the file cut back to its last whole chunk. */
/* Appends a chunk of the records at p as a version-2 writer did. */
static void append_chunk(int fd, unsigned type, const void *p, __u32 count, size_t rec, size_t len)
{
	struct dc_chunk_header h = { .magic = DC_CHUNK_MAGIC, .type = type, .rec_size = rec,
				     .count = count, .payload_len = len };

	if (type == DC_CHUNK_EVENTS && count) {
		/* Each record starts with its time. */
		memcpy(&h.min_ts, p, sizeof(h.min_ts));
		memcpy(&h.max_ts, (const char *)p + (count - 1) * rec, sizeof(h.max_ts));
	}
	h.payload_crc = dc_crc32(p, h.payload_len);
	h.header_crc = dc_nf_chunk_header_crc(h);
	assert_int_equal(write(fd, &h, sizeof(h)), sizeof(h));
	assert_int_equal(write(fd, p, h.payload_len), h.payload_len);
}

/* Files of version 2 (events as plain structs, without the second file)
 * read as they always did, with no second file. */
static void test_version_2_events_read(void **state)
{
	struct dc_node_header h = header();
	struct dc_event ev[3];
	char narrow[3 * DC_EVENT_V2_SIZE];
	struct counts c;
	char problem[512];
	int fd;

	h.version = 2;
	h.header_size = sizeof(h);
	memcpy(h.magic, DC_NODE_MAGIC, sizeof(h.magic));
	h.crc = dc_nf_node_header_crc(h);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, &h, sizeof(h)), sizeof(h));
	static const char strings[] = "write\0posix\0/data/out.dat";

	append_chunk(fd, DC_CHUNK_STRINGS, strings, 3, 0, sizeof(strings));
	struct dc_func f = { .id = 0, .name = 1, .category = 2 };
	append_chunk(fd, DC_CHUNK_FUNCS, &f, 1, sizeof(f), sizeof(f));
	for (int i = 0; i < 3; i++) {
		ev[i] = event(2000 + i, 0, 3);
		memcpy(narrow + i * DC_EVENT_V2_SIZE, &ev[i], DC_EVENT_V2_SIZE);
	}
	append_chunk(fd, DC_CHUNK_EVENTS, narrow, 3, DC_EVENT_V2_SIZE, sizeof(narrow));
	append_chunk(fd, DC_CHUNK_END, NULL, 0, 0, 0);
	close(fd);
	assert_int_equal(read_file(&c, problem, sizeof(problem)), DC_READ_END);
	assert_int_equal(c.events, 3);
	assert_int_equal(c.last_ts, 2002);
}

static void test_failed_write_keeps_file_valid(void **state)
{
	struct dc_node_header h = header();
	struct rlimit old, lim;
	char err[256], problem[512];
	struct counts c;
	struct stat st;
	int rc = 0;

	struct dc_writer *w = dc_writer_create(path, &h, -1, -1, 0600, err, sizeof(err));
	assert_non_null(w);
	__u32 name = dc_writer_string(w, "write"), cat = dc_writer_string(w, "posix");
	struct dc_func f = { .id = 0, .name = name, .category = cat };
	dc_writer_func(w, &f);
	__u32 file = dc_writer_string(w, "/data/out.dat");
	for (int i = 0; i < 200; i++) {
		struct dc_event e = event(i, 0, file);
		dc_writer_event(w, &e);
	}
	assert_int_equal(dc_writer_flush(w), 0);

	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	assert_int_equal(stat(path, &st), 0);
	/* Room for a few hundred bytes more, not a chunk of 100 events. */
	assert_true(last_events_payload() > 600);
	lim.rlim_cur = st.st_size + 300;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (int i = 0; i < 1000 && rc == 0; i++) {
		struct dc_event e = event(1000 + i, 0, file);
		rc = dc_writer_event(w, &e);
		if (rc == 0 && i % 100 == 99)
			rc = dc_writer_flush(w);
	}
	assert_int_equal(rc, -1);
	assert_int_equal(dc_writer_error(w), EFBIG);
	assert_int_equal(dc_writer_close(w, NULL), EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);

	assert_int_equal(read_file(&c, problem, sizeof(problem)), DC_READ_TRUNCATED);
	assert_int_equal(c.events, 200);
	assert_non_null(strstr(problem, "without an end mark"));
}

/* The format's checksums are zlib's and gzip's CRC-32, whichever library
 * computes them: its check value, and zlib's own result at every length
 * from 0 to 3,000 bytes and every alignment a vector path could take. */
static void test_crc_is_zlibs(void **state)
{
	static unsigned char buf[3000 + 64];

	assert_int_equal(dc_crc32("123456789", 9), 0xcbf43926u);
	srand(7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)rand();
	for (size_t n = 0; n <= 3000; n++) {
		size_t at = n % 64;

		assert_int_equal(dc_crc32(buf + at, n), crc32(0, buf + at, (uInt)n));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_round_trip, setup),
		cmocka_unit_test_setup(test_chunks_sorted_whatever_the_arrival, setup),
		cmocka_unit_test_setup(test_new_file_is_private_and_exclusive, setup),
		cmocka_unit_test_setup(test_symlink_is_refused, setup),
		cmocka_unit_test_setup(test_truncated_keeps_whole_chunks, setup),
		cmocka_unit_test_setup(test_missing_end_mark, setup),
		cmocka_unit_test_setup(test_corrupt_payload_is_named, setup),
		cmocka_unit_test_setup(test_corrupt_chunk_header, setup),
		cmocka_unit_test_setup(test_bad_header, setup),
		cmocka_unit_test_setup(test_empty_file, setup),
		cmocka_unit_test_setup(test_failed_write_keeps_file_valid, setup),
		cmocka_unit_test_setup(test_version_2_events_read, setup),
		cmocka_unit_test(test_crc_is_zlibs),
	};
	int rc;

	if (!mkdtemp(dir))
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	if (!rc) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	}
	return rc;
}
