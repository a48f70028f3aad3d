// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-merge -f perfetto: a native Perfetto trace (protobuf TracePackets with
 * TrackEvents), which the Perfetto UI opens at a fraction of the JSON's
 * size. Field numbers are those of Perfetto's perfetto_trace.proto; the
 * tests decode every trace with protoc against that schema.
 *
 * The file's own packet sequence (id 1) holds what is not a thread's call.
 * Its first packet clears the incremental state, defines clock 64 as an
 * incremental clock in nanoseconds (every packet's timestamp is a delta
 * from the sequence's packet before) tied to REALTIME, and defines the
 * debug annotation names; the next describes the io extension
 * (perfetto_int.h). A process is a track, with its threads as child
 * tracks. Each thread's calls are a sequence of their own, begun as the
 * file's (its own clock 64) with the thread's track as the default, so that
 * no call names its track (perfetto_tracks.c). Event names, categories (the
 * levels) and paths are numbered once per file and interned on each
 * sequence the first time it uses them. A call is a slice begin with fd,
 * req (bytes asked), bytes (moved), offset and ret in its io message and
 * the path as a debug annotation, and a slice end, written when its
 * sequence's next packet comes later than it (or at the end of the file):
 * each sequence's packets go out in time order, so every delta is >= 0,
 * and trace_processor sorts the sequences' packets together as it reads
 * (a file has no flush marks, so it sorts the whole file). req and ret
 * are left out where they equal bytes (a call that moved what it asked
 * for and returned that).
 * PROFILE totals are counter tracks (calls per process and function).
 * Lost events and incomplete node files are instants on a "DataCrumbs"
 * track, where a user sees them first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashtab.h"
#include "protobuf.h"
#include "slice_ends.h"
#include "output.h"
#include "strset.h"
#include "text_out.h"

#include "perfetto_int.h"


static const unsigned iid_fields[IID_KINDS] = { ID_NAMES, ID_CATEGORIES, ID_STRINGS };

static struct dc_strings *strings_of(struct pf_writer *w, int kind)
{
	return kind == IID_NAME ? &w->names : kind == IID_CAT ? &w->cats : &w->paths;
}

/* iid of text as a kind of string (0 out of memory). */
static uint64_t iid_of(struct pf_writer *w, int kind, const char *text)
{
	uint32_t i = dc_strings_intern(strings_of(w, kind), text);

	if (i == UINT32_MAX) {
		w->err = ENOMEM;
		return 0;
	}
	return i + 1;
}

/* A node's empty category or path: no category, no path annotation. */
#define NO_IID UINT32_MAX

/*
 * iid of a node's string id as a name, category or path: looked up once.
 * An empty category or path is 0, known from the cache too: a call costs
 * no look at the string itself, which is seldom in the CPU's cache.
 */
static uint64_t node_iid(struct pf_writer *w, const struct dc_node *n, __u32 id, int kind)
{
	uint32_t *slot = &w->iids[kind][n->index][id];

	if (!*slot) {
		const char *s = dc_reader_string(n->r, id);

		*slot = kind != IID_NAME && !*s ? NO_IID : (uint32_t)iid_of(w, kind, s);
	}
	return *slot == NO_IID ? 0 : *slot;
}

/* Adds iid to b: 1 if it was not there, 0 if it was, -1 out of memory. */
static int bits_add(struct pf_bits *b, uint64_t iid)
{
	size_t page = iid / PF_PAGE_BITS, word = iid % PF_PAGE_BITS / 64;
	uint64_t bit = 1ull << iid % 64;

	if (iid < 64) {
		if (b->low & bit)
			return 0;
		b->low |= bit;
		return 1;
	}
	if (page >= b->npages) {
		size_t n = b->npages ? b->npages : 1;
		uint64_t **v;

		while (n <= page)
			n *= 2;
		if (!(v = realloc(b->pages, n * sizeof(*v))))
			return -1;
		memset(v + b->npages, 0, (n - b->npages) * sizeof(*v));
		b->pages = v;
		b->npages = n;
	}
	if (!b->pages[page] && !(b->pages[page] = calloc(PF_PAGE_BITS / 64, sizeof(uint64_t))))
		return -1;
	if (b->pages[page][word] & bit)
		return 0;
	b->pages[page][word] |= bit;
	return 1;
}

/* iid, defined on sequence s (in this packet's interned data) the first
 * time s uses it. */
static uint64_t on_seq(struct pf_writer *w, struct pf_seq *s, int kind, uint64_t iid)
{
	int added;

	if (!iid)
		return 0;
	if ((added = bits_add(&s->defined[kind], iid)) < 0) {
		w->err = ENOMEM;
		return 0;
	}
	if (added)
		pf_intern_entry(w, iid_fields[kind], iid, strings_of(w, kind)->v[iid - 1]);
	return iid;
}

/* The track a thread's packets name: none on its own sequence, whose
 * default it is. */
static inline uint64_t named_track(const struct pf_thread *t)
{
	return t->seq == &t->own ? 0 : t->uuid;
}

/* Every call packet begins so: its timestamp (a delta from its sequence's
 * packet before), the sequence, and, for a slice begin, which names
 * interned strings, its flags. A slice end uses no interned data (as
 * Perfetto's own examples write it): its flags would say nothing a reader
 * needs, in a sequence whose state was cleared at its first packet and
 * never lost. */
static inline unsigned head_size(const struct pf_seq *s, uint64_t ns, bool interned)
{
	return field_size(TP_TIMESTAMP, ns - s->last_ns) + field_size(TP_SEQ_ID, s->id) +
	       (interned ? field_size(TP_SEQ_FLAGS, SEQ_NEEDS) : 0);
}

/* Room for a call packet of pkt bytes, and its key, length and head. */
static inline uint8_t *put_head(struct pf_writer *w, struct pf_seq *s, uint64_t ns, bool interned, unsigned pkt)
{
	uint8_t *o = (uint8_t *)reserve(&w->o, nested_size(TRACE_PACKET, pkt));

	if (!o) {
		w->err = w->o.err;
		return NULL;
	}
	o = put_key_len(o, TRACE_PACKET, pkt);
	o = put_field(o, TP_TIMESTAMP, ns - s->last_ns);
	o = put_field(o, TP_SEQ_ID, s->id);
	if (interned)
		o = put_field(o, TP_SEQ_FLAGS, SEQ_NEEDS);
	s->last_ns = ns;
	return o;
}

/* A slice end of thread t at ns: the head, and a TrackEvent of its type
 * (and track, on a shared sequence). */
static void end_packet(struct pf_writer *w, uint64_t ns, struct pf_thread *t)
{
	uint64_t track = named_track(t);
	unsigned te = field_size(TE_TYPE, SLICE_END) + (track ? field_size(TE_TRACK, track) : 0);
	uint8_t *o = put_head(w, t->seq, ns, false, head_size(t->seq, ns, false) + nested_size(TP_TRACK_EVENT, te));

	if (!o)
		return;
	o = put_key_len(o, TP_TRACK_EVENT, te);
	o = put_field(o, TE_TYPE, SLICE_END);
	if (track)
		o = put_field(o, TE_TRACK, track);
	w->o.len = (char *)o - w->o.buf;
}

/* Every slice of sequence s that ends by ns, ended: before s's next
 * packet at ns. A thread's own sequence holds a call or two open at a
 * time, where one heap for the file held one for every thread. */
static void flush_ends(struct pf_writer *w, struct pf_seq *s, uint64_t ns)
{
	struct dc_slice_end e;

	while (dc_slice_ends_pop_by(&s->ends, ns, &e))
		end_packet(w, e.ns, w->threads[e.track]);
}

/* ---- events ---- */

/* A field of the call's io message (perfetto_int.h). */
struct io_field {
	unsigned field;
	uint64_t v;
};

static int write_event(void *wp, const struct dc_node *n, const struct dc_event *e, __u64 wall_ns)
{
	struct pf_writer *w = wp;
	const struct dc_func *f = dc_node_func(n, e->func);
	__u32 nstrings = dc_reader_nstrings(n->r);
	struct io_field io[6];
	struct pf_thread *t;
	struct pf_seq *s;
	uint64_t track, name, cat = 0, path = 0, path2 = 0;
	unsigned nio = 0, io_len = 0, path_len = 0, path2_len = 0, te, pkt;
	uint8_t *o;

	if (!(t = pf_thread_track(w, n, e->pid, e->tid, wall_ns))) {
		w->err = ENOMEM;
		return -1;
	}
	s = t->seq;
	flush_ends(w, s, wall_ns);
	track = named_track(t);
	/* Interned first: a string new to the sequence is defined in this packet. */
	name = on_seq(w, s, IID_NAME,
		      f && f->name <= nstrings ? node_iid(w, n, f->name, IID_NAME) : iid_of(w, IID_NAME, "unknown"));
	if (f && f->category <= nstrings)
		cat = on_seq(w, s, IID_CAT, node_iid(w, n, f->category, IID_CAT));
	if (e->path && e->path <= nstrings)
		path = on_seq(w, s, IID_PATH, node_iid(w, n, e->path, IID_PATH));
	if (e->path2 && e->path2 <= nstrings)
		path2 = on_seq(w, s, IID_PATH, node_iid(w, n, e->path2, IID_PATH));
	/* req and ret only where they differ from bytes: a call that moved
	 * what it asked for, and returned that, costs two fields less. */
	if (e->flags & DC_EV_FD)
		io[nio++] = (struct io_field){ IO_fd, (uint64_t)(int64_t)e->fd };
	if (e->req != e->bytes)
		io[nio++] = (struct io_field){ IO_req, e->req };
	io[nio++] = (struct io_field){ IO_bytes, e->bytes };
	if (e->flags & DC_EV_OFFSET)
		io[nio++] = (struct io_field){ IO_offset, (uint64_t)e->offset };
	if (e->ret != (int64_t)e->bytes)
		io[nio++] = (struct io_field){ IO_ret, (uint64_t)e->ret };
	if (e->fd2 != -1)
		io[nio++] = (struct io_field){ IO_fd2, (uint64_t)(int64_t)e->fd2 };
	if (w->err)
		return -1;
	if (w->interned.oom) {
		w->err = ENOMEM;
		return -1;
	}

	for (unsigned i = 0; i < nio; i++)
		io_len += field_size(io[i].field, io[i].v);
	te = field_size(TE_TYPE, SLICE_BEGIN) + (track ? field_size(TE_TRACK, track) : 0) +
	     field_size(TE_NAME_IID, name) + nested_size(TE_IO, io_len);
	if (cat)
		te += field_size(TE_CATEGORY_IIDS, cat);
	if (path) {
		path_len = field_size(DA_NAME_IID, AN_PATH) + field_size(DA_STRING_IID, path);
		te += nested_size(TE_DEBUG, path_len);
	}
	if (path2) {
		path2_len = field_size(DA_NAME_IID, AN_PATH2) + field_size(DA_STRING_IID, path2);
		te += nested_size(TE_DEBUG, path2_len);
	}
	pkt = head_size(s, wall_ns, true) + nested_size(TP_TRACK_EVENT, te);
	if (w->interned.len)
		pkt += nested_size(TP_INTERNED, w->interned.len);
	if (!(o = put_head(w, s, wall_ns, true, pkt)))
		return -1;
	if (w->interned.len) {
		o = put_key_len(o, TP_INTERNED, w->interned.len);
		o = (uint8_t *)emit((char *)o, (const char *)w->interned.p, w->interned.len);
		pb_reset(&w->interned);
	}
	o = put_key_len(o, TP_TRACK_EVENT, te);
	o = put_field(o, TE_TYPE, SLICE_BEGIN);
	if (track)
		o = put_field(o, TE_TRACK, track);
	o = put_field(o, TE_NAME_IID, name);
	if (cat)
		o = put_field(o, TE_CATEGORY_IIDS, cat);
	o = put_key_len(o, TE_IO, io_len);
	for (unsigned i = 0; i < nio; i++)
		o = put_field(o, io[i].field, io[i].v);
	if (path) {
		o = put_key_len(o, TE_DEBUG, path_len);
		o = put_field(o, DA_NAME_IID, AN_PATH);
		o = put_field(o, DA_STRING_IID, path);
	}
	if (path2) {
		o = put_key_len(o, TE_DEBUG, path2_len);
		o = put_field(o, DA_NAME_IID, AN_PATH2);
		o = put_field(o, DA_STRING_IID, path2);
	}
	w->o.len = (char *)o - w->o.buf;
	if (dc_slice_ends_push(&s->ends, wall_ns + e->dur, t->index))
		w->err = ENOMEM;
	if (w->o.err && !w->err) /* the writing thread's failure (a full disk) */
		w->err = w->o.err;
	w->written++;
	return w->err ? -1 : 0;
}

/* PROFILE totals: a counter track per process and function (its calls). */
static int write_counter(void *wp, const struct dc_node *n, const struct dc_counter *c, __u64 wall_ns)
{
	struct pf_writer *w = wp;
	const struct dc_func *f = dc_node_func(n, c->func);
	uint64_t key = (uint64_t)n->index << 32 | c->pid, uuid;
	char name[128];

	flush_ends(w, &w->main, wall_ns);
	if (!dc_hashtab_get(w->tracks, key ^ ((uint64_t)c->func << 20), K_COUNTER, &uuid)) {
		uint64_t parent = pf_process_track(w, n, c->pid);

		uuid = w->next_uuid++;
		dc_hashtab_put(w->tracks, key ^ ((uint64_t)c->func << 20), K_COUNTER, uuid);
		pb_reset(&w->te);
		pb_uint(&w->te, TD_UUID, uuid);
		pb_uint(&w->te, TD_PARENT, parent);
		snprintf(name, sizeof(name), "%s %s calls", f ? dc_reader_string(n->r, f->category) : "?",
			 f ? dc_reader_string(n->r, f->name) : "?");
		pb_str(&w->te, TD_NAME, name);
		pb_reset(&w->sub);
		pb_uint(&w->sub, CD_UNIT, UNIT_COUNT);
		pb_msg(&w->te, TD_COUNTER, &w->sub);
		pf_descriptor(w, &w->te);
	}
	pf_begin_packet(w, wall_ns);
	pb_reset(&w->te);
	pb_uint(&w->te, TE_TYPE, COUNTER);
	pb_uint(&w->te, TE_TRACK, uuid);
	pb_uint(&w->te, TE_COUNTER_VALUE, c->count);
	pb_msg(&w->pkt, TP_TRACK_EVENT, &w->te);
	pf_emit_packet(w);
	w->written++;
	return w->err ? -1 : 0;
}

static void free_seq(struct pf_seq *s)
{
	dc_slice_ends_free(&s->ends);
	for (int k = 0; k < IID_KINDS; k++) {
		for (size_t i = 0; i < s->defined[k].npages; i++)
			free(s->defined[k].pages[i]);
		free(s->defined[k].pages);
	}
}

static void free_writer(struct pf_writer *w)
{
	for (int k = 0; k < IID_KINDS; k++) {
		for (size_t i = 0; w->iids[k] && w->job && i < w->job->nnodes; i++)
			free(w->iids[k][i]);
		free(w->iids[k]);
	}
	struct pb *bufs[] = { &w->pkt, &w->te, &w->sub, &w->interned };

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		free(bufs[i]->p);
	for (size_t i = 0; i < w->nthreads; i++) {
		free_seq(&w->threads[i]->own);
		free(w->threads[i]);
	}
	free(w->threads);
	free_seq(&w->main);
	dc_strings_free(&w->names);
	dc_strings_free(&w->cats);
	dc_strings_free(&w->paths);
	dc_hashtab_free(w->tracks);
	free(w);
}

/* The file's sequence ids (perfetto_int.h): its own, and its threads'. */
static void number_sequences(struct pf_writer *w, const struct dc_job *job)
{
	const struct dc_node *part = job->part;

	w->main.id = part ? 2 + (uint64_t)part->index : 1;
	if (!part) {
		w->next_seq = 2;
		w->seq_end = (uint64_t)UINT32_MAX + 1;
	} else if (job->nnodes < PART_SEQ_NODES) {
		w->next_seq = (((uint64_t)part->index + 1) << PART_SEQ_SHIFT) + 1;
		w->seq_end = ((uint64_t)part->index + 2) << PART_SEQ_SHIFT;
	}
}

static void *open_writer(const char *path, int fd, const struct dc_job *job, bool deflated, char *err,
			 size_t errlen)
{
	struct pf_writer *w = calloc(1, sizeof(*w));
	bool ok = w && !dc_strings_init(&w->names, 256) && !dc_strings_init(&w->cats, 16) &&
		  !dc_strings_init(&w->paths, 4096) && (w->tracks = dc_hashtab_new(1024));

	if (w)
		w->job = job;
	for (int k = 0; ok && k < IID_KINDS; k++) {
		ok = (w->iids[k] = calloc(job->nnodes + 1, sizeof(*w->iids[k]))) != NULL;
		for (size_t i = 0; ok && i < job->nnodes; i++)
			ok = (w->iids[k][i] = calloc(dc_reader_nstrings(job->nodes[i].r) + 1, sizeof(uint32_t))) != NULL;
	}
	if (!ok) {
		snprintf(err, errlen, "out of memory");
		if (w)
			free_writer(w);
		return NULL;
	}
	if (dc_text_out_open(&w->o, fd, deflated ? DC_OUT_PERFETTO_DEFLATE : DC_OUT_PLAIN, path, err, errlen)) {
		free_writer(w);
		return NULL;
	}
	number_sequences(w, job);
	w->facts_uuid = job->part ? ((uint64_t)job->part->index + 1) << PART_UUID_SHIFT : FACTS_UUID;
	w->next_uuid = w->facts_uuid + 1;
	return w;
}

static void *start_trace(const char *path, int fd, const struct dc_job *job, bool deflated, char *err,
			 size_t errlen)
{
	struct pf_writer *w = open_writer(path, fd, job, deflated, err, errlen);

	if (w) {
		pf_first_packet(w);
		pf_facts(w);
	}
	return w;
}

static void *open_trace(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	return start_trace(path, fd, job, true, err, errlen);
}

static void *open_raw_trace(const char *path, int fd, const struct dc_job *job, char *err, size_t errlen)
{
	return start_trace(path, fd, job, false, err, errlen);
}

static int close_writer(void *wp, int ok, char *err, size_t errlen)
{
	struct pf_writer *w = wp;
	int rc = 0;

	for (size_t i = 0; ok && i < w->nthreads; i++)
		flush_ends(w, &w->threads[i]->own, UINT64_MAX);
	if (ok)
		flush_ends(w, &w->main, UINT64_MAX);
	{
		int e = dc_text_out_close(&w->o);

		if (e && !w->err)
			w->err = e;
	}
	if (w->err) {
		snprintf(err, errlen, "writing the Perfetto trace: %s", strerror(w->err));
		rc = -1;
	}
	free_writer(w);
	return rc;
}

int dc_perfetto_header(const struct dc_job *job, char *const *missing, int fd, const char *path, char *err,
		       size_t errlen)
{
	struct dc_job whole = *job;
	struct pf_writer *w;

	whole.part = NULL;
	if (!(w = open_writer(path, fd, &whole, false, err, errlen)))
		return -1;
	w->missing = missing;
	pf_first_packet(w);
	pf_facts(w);
	return close_writer(w, 1, err, errlen);
}

const struct dc_output_ops dc_perfetto_output = {
	"perfetto", ".pftrace", open_trace, write_event, write_counter, close_writer,
};

const struct dc_output_ops dc_perfetto_raw_output = {
	"perfetto", ".pftrace", open_raw_trace, write_event, write_counter, close_writer,
};
