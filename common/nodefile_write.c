// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Writing a node file (dc-agent, and the benchmarks' synthetic ones): records
 * gathered per chunk type, written as whole checked chunks. */
#include "nodefile.h"
#include "event_pack.h"
#include "nodefile_int.h"
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashtab.h"

/* Events are cut into chunks of this many (576 KiB): small enough that a
 * killed agent loses little and that a merge, which holds a chunk of every
 * node at once, stays small; large enough that chunk headers cost nothing. */
#define DC_EVENTS_PER_CHUNK 8192

struct buf {
	char *data;
	size_t len, cap;
	__u32 count;
};

struct dc_writer {
	int fd;
	int err;
	off_t good_off; /* end of the last whole chunk */
	struct buf bufs[DC_CHUNK_TYPE_MAX];
	unsigned char *packed; /* an EVENTS chunk as the file holds it */
	size_t packed_cap;
	struct dc_hashtab *string_ids;
	char **strings; /* by id - 1, to tell hash collisions apart */
	__u32 nstrings, strings_cap;
	unsigned long long events;
};

static int buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		char *d;

		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d)
			return -1;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->count++;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		c += k;
		n -= k;
	}
	return 0;
}

/*
 * Keeps the file whole on a failed write: cut back to the last whole chunk.
 * Nothing is written after a failure, so the file is let go at once: a
 * process forked later (the agent's detaching child) must not keep a full
 * file system busy.
 */
static int fail(struct dc_writer *w, int err)
{
	if (!w->err) {
		w->err = err;
		/* Should the cut fail, the file ends in a torn chunk, which readers skip. */
		int cut = ftruncate(w->fd, w->good_off);

		(void)cut;
		close(w->fd);
		w->fd = -1;
	}
	errno = w->err;
	return -1;
}

struct dc_writer *dc_writer_create(const char *path, const struct dc_node_header *hdr, int uid, int gid,
				   unsigned mode, char *err, size_t errlen)
{
	return dc_writer_create_at(AT_FDCWD, path, hdr, uid, gid, mode, err, errlen);
}

struct dc_writer *dc_writer_create_at(int dir_fd, const char *path, const struct dc_node_header *hdr, int uid,
				      int gid, unsigned mode, char *err, size_t errlen)
{
	struct dc_node_header h = *hdr;
	struct dc_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->string_ids = dc_hashtab_new(1024))) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	w->fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0640);
	if (w->fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		goto fail;
	}
	if (((uid >= 0 || gid >= 0) && fchown(w->fd, uid, gid)) || fchmod(w->fd, mode & 0640)) {
		snprintf(err, errlen, "cannot give %s to uid %d: %s", path, uid, strerror(errno));
		goto fail_unlink;
	}
	memcpy(h.magic, DC_NODE_MAGIC, sizeof(h.magic));
	h.version = DC_NODE_VERSION;
	h.header_size = sizeof(h);
	h.crc = dc_nf_node_header_crc(h);
	if (write_all(w->fd, &h, sizeof(h))) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		goto fail_unlink;
	}
	w->good_off = sizeof(h);
	return w;

fail_unlink:
	unlinkat(dir_fd, path, 0);
	close(w->fd);
fail:
	if (w)
		dc_hashtab_free(w->string_ids);
	free(w);
	return NULL;
}

__u32 dc_writer_string(struct dc_writer *w, const char *s)
{
	uint64_t h = dc_hash_string(s), id;
	uint64_t probe = 0;

	if (!s || !*s)
		return 0;
	while (dc_hashtab_get(w->string_ids, h, probe, &id)) {
		if (strcmp(w->strings[id - 1], s) == 0)
			return id;
		probe++; /* a different string with the same hash */
	}
	if (w->nstrings == w->strings_cap) {
		__u32 cap = w->strings_cap ? w->strings_cap * 2 : 256;
		char **n = realloc(w->strings, cap * sizeof(*n));

		if (!n)
			return 0;
		w->strings = n;
		w->strings_cap = cap;
	}
	w->strings[w->nstrings] = strdup(s);
	if (!w->strings[w->nstrings] ||
	    buf_add(&w->bufs[DC_CHUNK_STRINGS], s, strlen(s) + 1) ||
	    dc_hashtab_put(w->string_ids, h, probe, w->nstrings + 1))
		return 0;
	return ++w->nstrings;
}

const char *dc_writer_string_of(const struct dc_writer *w, __u32 id)
{
	return id && id <= w->nstrings ? w->strings[id - 1] : NULL;
}

static int add_record(struct dc_writer *w, unsigned type, const void *rec)
{
	if (w->err) {
		errno = w->err;
		return -1;
	}
	if (buf_add(&w->bufs[type], rec, dc_chunk_rec_size(type)))
		return fail(w, ENOMEM);
	return 0;
}

int dc_writer_func(struct dc_writer *w, const struct dc_func *f)
{
	return add_record(w, DC_CHUNK_FUNCS, f);
}

int dc_writer_proc(struct dc_writer *w, const struct dc_proc *p)
{
	return add_record(w, DC_CHUNK_PROCS, p);
}

int dc_writer_counter(struct dc_writer *w, const struct dc_counter *c)
{
	return add_record(w, DC_CHUNK_COUNTERS, c);
}

int dc_writer_rank(struct dc_writer *w, const struct dc_rank *r)
{
	return add_record(w, DC_CHUNK_RANKS, r);
}

int dc_writer_stats(struct dc_writer *w, const struct dc_cpu_stats *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (add_record(w, DC_CHUNK_STATS, &s[i]))
			return -1;
	return 0;
}

int dc_writer_event(struct dc_writer *w, const struct dc_event *e)
{
	if (add_record(w, DC_CHUNK_EVENTS, e))
		return -1;
	if (w->bufs[DC_CHUNK_EVENTS].count >= DC_EVENTS_PER_CHUNK)
		return dc_writer_flush(w);
	return 0;
}

/* Start order; the outer call first when two start together. */
static inline bool starts_before(const struct dc_event *x, const struct dc_event *y)
{
	return x->ts < y->ts || (x->ts == y->ts && x->dur > y->dur);
}

static int by_ts(const void *a, const void *b)
{
	const struct dc_event *x = a, *y = b;

	return starts_before(x, y) ? -1 : starts_before(y, x);
}

/*
 * Events arrive as calls end and a chunk is kept in start order. Arrival
 * order is nearly that already: a call is out of place only by the calls
 * that ended while it ran (those it contains, and other threads' and
 * CPUs'), so an insertion sort does a chunk in one pass and a few moves,
 * where qsort took a quarter of the agent's time. A chunk far from sorted
 * (a call that ran through thousands of others, many times) goes to qsort
 * once the moves pass a few per event.
 */
static void sort_events(struct dc_event *ev, __u32 n)
{
	size_t moves = 0, budget = 8 * (size_t)n;

	for (__u32 i = 1; i < n; i++) {
		struct dc_event x;
		__u32 j = i;

		if (!starts_before(&ev[i], &ev[i - 1]))
			continue;
		x = ev[i];
		while (j > 0 && starts_before(&x, &ev[j - 1]))
			j--;
		moves += i - j;
		if (moves > budget) {
			qsort(ev, n, sizeof(*ev), by_ts);
			return;
		}
		memmove(&ev[j + 1], &ev[j], (size_t)(i - j) * sizeof(*ev));
		ev[j] = x;
	}
}

/* The chunk's events, sorted, packed into w->packed: its length, or -1. */
static ssize_t pack_events(struct dc_writer *w, struct dc_chunk_header *h, struct buf *b)
{
	struct dc_event *ev = (struct dc_event *)b->data;

	if (dc_nf_room(&w->packed, &w->packed_cap, (size_t)b->count * DC_EVENT_PACKED_MAX))
		return -1;
	/* Sorted chunks let dc-merge merge by time with bounded memory. */
	sort_events(ev, b->count);
	h->min_ts = ev[0].ts;
	for (__u32 i = 0; i < b->count; i++)
		if (ev[i].ts + ev[i].dur > h->max_ts)
			h->max_ts = ev[i].ts + ev[i].dur;
	return (ssize_t)dc_event_pack(ev, b->count, w->packed);
}

static int write_chunk(struct dc_writer *w, unsigned type, struct buf *b)
{
	struct dc_chunk_header h = {
		.magic = DC_CHUNK_MAGIC,
		.type = type,
		.rec_size = dc_chunk_file_rec_size(type, DC_NODE_VERSION),
		.count = b->count,
		.payload_len = b->len,
	};
	const void *payload = b->data;

	if (type == DC_CHUNK_EVENTS && b->count) {
		ssize_t n = pack_events(w, &h, b);

		if (n < 0)
			return fail(w, ENOMEM);
		payload = w->packed;
		h.payload_len = (__u32)n;
	}
	if (type == DC_CHUNK_COUNTERS && b->count) {
		/* Snapshots are appended in time order. */
		const struct dc_counter *c = (const void *)b->data;

		h.min_ts = c[0].ts;
		h.max_ts = c[b->count - 1].ts;
	}
	h.payload_crc = dc_crc32(payload, h.payload_len);
	h.header_crc = dc_nf_chunk_header_crc(h);
	if (write_all(w->fd, &h, sizeof(h)) || write_all(w->fd, payload, h.payload_len))
		return fail(w, errno);
	w->good_off += sizeof(h) + h.payload_len;
	if (type == DC_CHUNK_EVENTS)
		w->events += b->count;
	b->len = 0;
	b->count = 0;
	return 0;
}

int dc_writer_flush(struct dc_writer *w)
{
	/* Strings first: later chunks refer to them by id. */
	static const unsigned order[] = { DC_CHUNK_STRINGS, DC_CHUNK_FUNCS, DC_CHUNK_PROCS, DC_CHUNK_RANKS,
					  DC_CHUNK_EVENTS, DC_CHUNK_COUNTERS, DC_CHUNK_STATS };

	if (w->err) {
		errno = w->err;
		return -1;
	}
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct buf *b = &w->bufs[order[i]];

		if (b->count && write_chunk(w, order[i], b))
			return -1;
	}
	return 0;
}

int dc_writer_close(struct dc_writer *w, unsigned long long *events)
{
	struct buf end = { 0 };
	int err;

	if (!dc_writer_flush(w))
		write_chunk(w, DC_CHUNK_END, &end);
	if (!w->err && fsync(w->fd) && errno != EINVAL)
		fail(w, errno);
	err = w->err;
	if (events)
		*events = w->events;
	if (w->fd >= 0)
		close(w->fd);
	for (unsigned i = 0; i < DC_CHUNK_TYPE_MAX; i++)
		free(w->bufs[i].data);
	free(w->packed);
	for (__u32 i = 0; i < w->nstrings; i++)
		free(w->strings[i]);
	free(w->strings);
	dc_hashtab_free(w->string_ids);
	free(w);
	return err;
}

int dc_writer_error(const struct dc_writer *w)
{
	return w->err;
}

