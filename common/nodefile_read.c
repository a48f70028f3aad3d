// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Reading a node file: its header and chunks, each checked (sizes, CRC32)
 * before use; a damaged chunk is skipped and said. */
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

struct dc_reader {
	int fd;
	char *path;
	struct dc_node_header hdr;
	long long off;
	char *payload;
	size_t payload_cap;
	struct dc_event *events; /* a packed chunk's events, unpacked */
	size_t events_cap;
	unsigned char *packed; /* dc_reader_load's packed payload */
	size_t packed_cap;
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
	if (h->header_size != sizeof(*h) || h->crc != dc_nf_node_header_crc(*h))
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

static bool packed(const struct dc_reader *r, const struct dc_chunk_header *h)
{
	return h->type == DC_CHUNK_EVENTS && dc_chunk_file_rec_size(h->type, r->hdr.version) == 0;
}

/* Events as a file before version 3 stored them: structs without the
 * second file, widened to this build's. */
static bool narrow(const struct dc_reader *r, const struct dc_chunk_header *h)
{
	return h->type == DC_CHUNK_EVENTS && dc_chunk_file_rec_size(h->type, r->hdr.version) == DC_EVENT_V2_SIZE;
}

/* Widens n narrow events at src into out, which may be src itself: from
 * the last, each moves up and never over one still to move. */
static void widen(const void *src, __u32 n, struct dc_event *out)
{
	for (__u32 i = n; i-- > 0;) {
		memmove(&out[i], (const char *)src + (size_t)i * DC_EVENT_V2_SIZE, DC_EVENT_V2_SIZE);
		out[i].fd2 = -1;
		out[i].path2 = 0;
	}
}

/* A packed chunk's bytes bound its count both ways, and its events as
 * structs are bounded as any chunk's payload is. */
static bool packed_sizes_ok(const struct dc_chunk_header *h)
{
	unsigned long long n = h->count;

	return n * DC_EVENT_PACKED_MIN <= h->payload_len && h->payload_len <= n * DC_EVENT_PACKED_MAX &&
	       n * sizeof(struct dc_event) <= DC_CHUNK_MAX_PAYLOAD;
}

static enum dc_read_status check_chunk(struct dc_reader *r, const struct dc_chunk_header *h)
{
	size_t rs;

	if (h->magic != DC_CHUNK_MAGIC || h->header_crc != dc_nf_chunk_header_crc(*h))
		return problem(r, DC_READ_CORRUPT, "corrupt chunk header at offset %lld", r->off);
	if (h->type == 0 || h->type >= DC_CHUNK_TYPE_MAX)
		return problem(r, DC_READ_CORRUPT, "unknown chunk type %u at offset %lld", h->type, r->off);
	rs = dc_chunk_file_rec_size(h->type, r->hdr.version);
	if (h->rec_size != rs || h->payload_len > DC_CHUNK_MAX_PAYLOAD ||
	    (rs && (unsigned long long)h->count * rs != h->payload_len) || (packed(r, h) && !packed_sizes_ok(h)))
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

static enum dc_read_status unpack(struct dc_reader *r, const struct dc_chunk_header *h, long long offset,
				  const void *payload, struct dc_event *out)
{
	if (dc_event_unpack(payload, h->payload_len, h->count, r->hdr.version, out))
		return problem(r, DC_READ_CORRUPT, "events chunk at offset %lld is not %u packed events; dropped",
			       offset, h->count);
	return DC_READ_OK;
}

enum dc_read_status dc_reader_load(struct dc_reader *r, long long offset,
				   const struct dc_chunk_header *hdr, void *out)
{
	bool pk = packed(r, hdr);
	void *buf;
	ssize_t got;
	size_t len = hdr->payload_len;

	if (pk && dc_nf_room(&r->packed, &r->packed_cap, len))
		return problem(r, DC_READ_IOERR, "out of memory for a %u-byte chunk", hdr->payload_len);
	buf = pk ? (void *)r->packed : out;
	got = pread(r->fd, buf, len, offset + sizeof(*hdr));

	if (got < 0)
		return problem(r, DC_READ_IOERR, "%s", strerror(errno));
	if ((size_t)got < len)
		return problem(r, DC_READ_TRUNCATED, "%s chunk at offset %lld is cut short",
			       dc_chunk_type_name(hdr->type), offset);
	if (dc_crc32(buf, len) != hdr->payload_crc)
		return problem(r, DC_READ_CORRUPT, "%s chunk at offset %lld fails its checksum; %u records dropped",
			       dc_chunk_type_name(hdr->type), offset, hdr->count);
	if (narrow(r, hdr))
		widen(out, hdr->count, out);
	return pk ? unpack(r, hdr, offset, buf, out) : DC_READ_OK;
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
		if (dc_nf_room(&r->payload, &r->payload_cap, h.payload_len) ||
		    ((packed(r, &h) || narrow(r, &h)) && dc_nf_room(&r->events, &r->events_cap, dc_chunk_data_size(&h))))
			return problem(r, DC_READ_IOERR, "out of memory for a %u-byte chunk", h.payload_len);
		got = read_full(r->fd, r->payload, h.payload_len);
		if (got < 0)
			return problem(r, DC_READ_IOERR, "%s", strerror(errno));
		if (got < (ssize_t)h.payload_len)
			return problem(r, DC_READ_TRUNCATED,
				       "%s chunk at offset %lld is cut short (%zd of %u bytes); %u records dropped" NO_END,
				       dc_chunk_type_name(h.type), r->off, got, h.payload_len, h.count);
		if (dc_crc32(r->payload, h.payload_len) != h.payload_crc)
			return problem(r, DC_READ_CORRUPT, "%s chunk at offset %lld fails its checksum",
				       dc_chunk_type_name(h.type), r->off);
		c->hdr = h;
		c->data = r->payload;
		c->offset = r->off;
		r->off += sizeof(h) + h.payload_len;
		if (packed(r, &h)) {
			st = unpack(r, &h, c->offset, r->payload, r->events);
			if (st != DC_READ_OK)
				return st;
			c->data = r->events;
		} else if (narrow(r, &h)) {
			widen(r->payload, h.count, r->events);
			c->data = r->events;
		}
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
	free(r->events);
	free(r->packed);
	free(r->path);
	free(r);
}
