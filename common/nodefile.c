// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "nodefile.h"
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "hashtab.h"

/* Events are cut into chunks of this many (576 KiB): small enough that a
 * killed agent loses little and that a merge, which holds a chunk of every
 * node at once, stays small; large enough that chunk headers cost nothing. */
#define DC_EVENTS_PER_CHUNK 8192

static const size_t rec_sizes[DC_CHUNK_TYPE_MAX] = {
	[DC_CHUNK_FUNCS] = sizeof(struct dc_func),
	[DC_CHUNK_PROCS] = sizeof(struct dc_proc),
	[DC_CHUNK_EVENTS] = sizeof(struct dc_event),
	[DC_CHUNK_COUNTERS] = sizeof(struct dc_counter),
	[DC_CHUNK_STATS] = sizeof(struct dc_cpu_stats),
	[DC_CHUNK_RANKS] = sizeof(struct dc_rank),
};

static const char *const type_names[DC_CHUNK_TYPE_MAX] = {
	[DC_CHUNK_STRINGS] = "strings", [DC_CHUNK_FUNCS] = "functions",
	[DC_CHUNK_PROCS] = "processes", [DC_CHUNK_EVENTS] = "events",
	[DC_CHUNK_COUNTERS] = "counters", [DC_CHUNK_STATS] = "statistics",
	[DC_CHUNK_END] = "end", [DC_CHUNK_RANKS] = "ranks",
};

size_t dc_chunk_rec_size(unsigned type)
{
	return type < DC_CHUNK_TYPE_MAX ? rec_sizes[type] : 0;
}

const char *dc_chunk_type_name(unsigned type)
{
	return type < DC_CHUNK_TYPE_MAX && type_names[type] ? type_names[type] : "unknown";
}

static __u32 crc_of(const void *p, size_t n)
{
	return crc32(crc32(0L, Z_NULL, 0), p, n);
}

static __u32 header_crc(struct dc_chunk_header h)
{
	h.header_crc = 0;
	return crc_of(&h, sizeof(h));
}

static __u32 node_header_crc(struct dc_node_header h)
{
	h.crc = 0;
	return crc_of(&h, sizeof(h));
}

/* ---- the function table ---- */

int dc_functable_take(struct dc_functable *t, const struct dc_func *recs, __u32 count)
{
	for (__u32 i = 0; i < count; i++) {
		__u32 id = recs[i].id;

		if (id >= DC_MAX_FUNCS)
			continue;
		if (id >= t->n) {
			struct dc_func *v = realloc(t->v, (id + 1) * sizeof(*v));

			if (!v)
				return -1;
			/* Ids no record names stay marked unknown (id != index). */
			memset(v + t->n, 0xff, (id + 1 - t->n) * sizeof(*v));
			t->v = v;
			t->n = id + 1;
		}
		t->v[id] = recs[i];
	}
	return 0;
}

const struct dc_func *dc_functable_get(const struct dc_functable *t, __u32 id)
{
	return id < t->n && t->v[id].id == id ? &t->v[id] : NULL;
}

void dc_functable_free(struct dc_functable *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

/* ---- writing ---- */

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

/* Keeps the file whole on a failed write: cut back to the last whole chunk. */
static int fail(struct dc_writer *w, int err)
{
	if (!w->err) {
		w->err = err;
		if (ftruncate(w->fd, w->good_off) == 0)
			lseek(w->fd, w->good_off, SEEK_SET);
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
	h.crc = node_header_crc(h);
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

static int add_record(struct dc_writer *w, unsigned type, const void *rec)
{
	if (w->err) {
		errno = w->err;
		return -1;
	}
	if (buf_add(&w->bufs[type], rec, rec_sizes[type]))
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

static int write_chunk(struct dc_writer *w, unsigned type, struct buf *b)
{
	struct dc_chunk_header h = {
		.magic = DC_CHUNK_MAGIC,
		.type = type,
		.rec_size = rec_sizes[type],
		.count = b->count,
		.payload_len = b->len,
	};

	if (type == DC_CHUNK_EVENTS && b->count) {
		/* Sorted chunks let the collector merge by time with bounded memory. */
		const struct dc_event *ev = (const void *)b->data;

		sort_events((struct dc_event *)b->data, b->count);
		h.min_ts = ev[0].ts;
		for (__u32 i = 0; i < b->count; i++)
			if (ev[i].ts + ev[i].dur > h.max_ts)
				h.max_ts = ev[i].ts + ev[i].dur;
	}
	if (type == DC_CHUNK_COUNTERS && b->count) {
		/* Snapshots are appended in time order. */
		const struct dc_counter *c = (const void *)b->data;

		h.min_ts = c[0].ts;
		h.max_ts = c[b->count - 1].ts;
	}
	h.payload_crc = crc_of(b->data, b->len);
	h.header_crc = header_crc(h);
	if (write_all(w->fd, &h, sizeof(h)) || write_all(w->fd, b->data, b->len))
		return fail(w, errno);
	w->good_off += sizeof(h) + b->len;
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
	close(w->fd);
	for (unsigned i = 0; i < DC_CHUNK_TYPE_MAX; i++)
		free(w->bufs[i].data);
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

/* ---- reading ---- */

struct dc_reader {
	int fd;
	char *path;
	struct dc_node_header hdr;
	long long off;
	char *payload;
	size_t payload_cap;
	char **strings;
	__u32 nstrings, strings_cap;
	char problem[512];
};

static enum dc_read_status problem(struct dc_reader *r, enum dc_read_status st, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->problem, sizeof(r->problem), "%s: ", r->path);

	va_start(ap, fmt);
	vsnprintf(r->problem + n, sizeof(r->problem) - n, fmt, ap);
	va_end(ap);
	return st;
}

static ssize_t read_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, (char *)p + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += k;
	}
	return got;
}

static const char *check_header(const struct dc_node_header *h, ssize_t got)
{
	static char why[128];

	if (got < (ssize_t)sizeof(h->magic) || memcmp(h->magic, DC_NODE_MAGIC, sizeof(h->magic)))
		return "not a DataCrumbs node file (bad magic)";
	if (got < (ssize_t)sizeof(*h))
		return "truncated inside its header";
	if (h->version < 1 || h->version > DC_NODE_VERSION) {
		snprintf(why, sizeof(why), "format version %u, this build reads version %u",
			 h->version, DC_NODE_VERSION);
		return why;
	}
	if (h->header_size != sizeof(*h) || h->crc != node_header_crc(*h))
		return "corrupt header (checksum mismatch)";
	return NULL;
}

struct dc_reader *dc_reader_open(const char *path, char *err, size_t errlen)
{
	struct dc_reader *r = calloc(1, sizeof(*r));
	const char *why;
	ssize_t got;

	if (!r || !(r->path = strdup(path))) {
		snprintf(err, errlen, "%s: out of memory", path);
		free(r);
		return NULL;
	}
	r->fd = -1;
	/* No link followed (whoever owns a job folder, the job's user, must not
	 * make root open another file), no wait on a FIFO, nothing read from
	 * what is not a regular file. */
	r->fd = dc_open_regular(path, err, errlen);
	if (r->fd < 0)
		goto fail;
	got = read_full(r->fd, &r->hdr, sizeof(r->hdr));
	if (got < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	why = check_header(&r->hdr, got);
	if (why) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto fail;
	}
	r->hdr.job_id[sizeof(r->hdr.job_id) - 1] = 0;
	r->hdr.hostname[sizeof(r->hdr.hostname) - 1] = 0;
	r->hdr.boot_id[sizeof(r->hdr.boot_id) - 1] = 0;
	r->hdr.topology[sizeof(r->hdr.topology) - 1] = 0;
	r->hdr.agent_version[sizeof(r->hdr.agent_version) - 1] = 0;
	r->off = sizeof(r->hdr);
	return r;
fail:
	dc_reader_close(r);
	return NULL;
}

const struct dc_node_header *dc_reader_header(const struct dc_reader *r)
{
	return &r->hdr;
}

const char *dc_reader_problem(const struct dc_reader *r)
{
	return r->problem;
}

static int take_strings(struct dc_reader *r, const struct dc_chunk_header *h)
{
	const char *p = r->payload, *end = r->payload + h->payload_len;
	__u32 n = 0;

	if (h->payload_len && end[-1] != 0)
		return -1;
	for (const char *s = p; s < end; s += strlen(s) + 1)
		n++;
	if (n != h->count)
		return -1;
	if (r->nstrings + n > r->strings_cap) {
		__u32 cap = r->strings_cap ? r->strings_cap : 256;
		char **v;

		while (cap < r->nstrings + n)
			cap *= 2;
		v = realloc(r->strings, cap * sizeof(*v));
		if (!v)
			return -1;
		r->strings = v;
		r->strings_cap = cap;
	}
	for (const char *s = p; s < end; s += strlen(s) + 1)
		if (!(r->strings[r->nstrings++] = strdup(s)))
			return -1;
	return 0;
}

static enum dc_read_status check_chunk(struct dc_reader *r, const struct dc_chunk_header *h)
{
	size_t rs;

	if (h->magic != DC_CHUNK_MAGIC || h->header_crc != header_crc(*h))
		return problem(r, DC_READ_CORRUPT, "corrupt chunk header at offset %lld", r->off);
	if (h->type == 0 || h->type >= DC_CHUNK_TYPE_MAX)
		return problem(r, DC_READ_CORRUPT, "unknown chunk type %u at offset %lld", h->type, r->off);
	rs = rec_sizes[h->type];
	if (h->rec_size != rs || h->payload_len > DC_CHUNK_MAX_PAYLOAD ||
	    (rs && (unsigned long long)h->count * rs != h->payload_len))
		return problem(r, DC_READ_CORRUPT, "%s chunk at offset %lld has impossible sizes",
			       dc_chunk_type_name(h->type), r->off);
	return DC_READ_OK;
}

/* A file cut inside a chunk was never closed: say that too. */
#define NO_END "; the file ends there without an end mark: the agent stopped before closing it"

static enum dc_read_status skip_payload(struct dc_reader *r, const struct dc_chunk_header *h,
					struct dc_chunk *c)
{
	struct stat st;
	long long end = r->off + (long long)sizeof(*h) + h->payload_len;

	if (fstat(r->fd, &st))
		return problem(r, DC_READ_IOERR, "%s", strerror(errno));
	if (end > st.st_size)
		return problem(r, DC_READ_TRUNCATED,
			       "%s chunk at offset %lld is cut short (%lld of %u bytes); %u records dropped" NO_END,
			       dc_chunk_type_name(h->type), r->off, st.st_size - r->off - (long long)sizeof(*h),
			       h->payload_len, h->count);
	if (lseek(r->fd, end, SEEK_SET) < 0)
		return problem(r, DC_READ_IOERR, "%s", strerror(errno));
	c->hdr = *h;
	c->data = NULL;
	c->offset = r->off;
	r->off = end;
	return DC_READ_OK;
}

enum dc_read_status dc_reader_load(struct dc_reader *r, long long offset,
				   const struct dc_chunk_header *hdr, void *buf)
{
	ssize_t got = pread(r->fd, buf, hdr->payload_len, offset + sizeof(*hdr));
	size_t len = hdr->payload_len;

	if (got < 0)
		return problem(r, DC_READ_IOERR, "%s", strerror(errno));
	if ((size_t)got < len)
		return problem(r, DC_READ_TRUNCATED, "%s chunk at offset %lld is cut short",
			       dc_chunk_type_name(hdr->type), offset);
	if (crc_of(buf, len) != hdr->payload_crc)
		return problem(r, DC_READ_CORRUPT, "%s chunk at offset %lld fails its checksum; %u records dropped",
			       dc_chunk_type_name(hdr->type), offset, hdr->count);
	return DC_READ_OK;
}

enum dc_read_status dc_reader_next(struct dc_reader *r, struct dc_chunk *c)
{
	return dc_reader_next_index(r, c, 0);
}

enum dc_read_status dc_reader_next_index(struct dc_reader *r, struct dc_chunk *c, unsigned skip_mask)
{
	for (;;) {
		struct dc_chunk_header h;
		enum dc_read_status st;
		ssize_t got = read_full(r->fd, &h, sizeof(h));

		if (got < 0)
			return problem(r, DC_READ_IOERR, "%s", strerror(errno));
		if (got == 0)
			return problem(r, DC_READ_TRUNCATED,
				       "ends at offset %lld without an end mark: the agent stopped before closing it",
				       r->off);
		if (got < (ssize_t)sizeof(h))
			return problem(r, DC_READ_TRUNCATED, "cut inside a chunk header at offset %lld" NO_END, r->off);
		st = check_chunk(r, &h);
		if (st != DC_READ_OK)
			return st;
		if (skip_mask & (1u << h.type))
			return skip_payload(r, &h, c);
		if (h.payload_len > r->payload_cap) {
			char *p = realloc(r->payload, h.payload_len);

			if (!p)
				return problem(r, DC_READ_IOERR, "out of memory for a %u-byte chunk", h.payload_len);
			r->payload = p;
			r->payload_cap = h.payload_len;
		}
		got = read_full(r->fd, r->payload, h.payload_len);
		if (got < 0)
			return problem(r, DC_READ_IOERR, "%s", strerror(errno));
		if (got < (ssize_t)h.payload_len)
			return problem(r, DC_READ_TRUNCATED,
				       "%s chunk at offset %lld is cut short (%zd of %u bytes); %u records dropped" NO_END,
				       dc_chunk_type_name(h.type), r->off, got, h.payload_len, h.count);
		if (crc_of(r->payload, h.payload_len) != h.payload_crc)
			return problem(r, DC_READ_CORRUPT, "%s chunk at offset %lld fails its checksum",
				       dc_chunk_type_name(h.type), r->off);
		c->hdr = h;
		c->data = r->payload;
		c->offset = r->off;
		r->off += sizeof(h) + h.payload_len;
		if (h.type == DC_CHUNK_END)
			return DC_READ_END;
		if (h.type != DC_CHUNK_STRINGS)
			return DC_READ_OK;
		if (take_strings(r, &h))
			return problem(r, DC_READ_CORRUPT, "malformed strings chunk at offset %lld", c->offset);
	}
}

const char *dc_reader_string(const struct dc_reader *r, __u32 id)
{
	return id && id <= r->nstrings ? r->strings[id - 1] : "";
}

__u32 dc_reader_nstrings(const struct dc_reader *r)
{
	return r->nstrings;
}

void dc_reader_close(struct dc_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (__u32 i = 0; i < r->nstrings; i++)
		free(r->strings[i]);
	free(r->strings);
	free(r->payload);
	free(r->path);
	free(r);
}
