// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-merge -f perfetto: a native Perfetto trace (protobuf TracePackets with
 * TrackEvents), which the Perfetto UI opens at a fraction of the JSON's
 * size. Field numbers are those of Perfetto's perfetto_trace.proto; the
 * tests decode every trace with protoc against that schema.
 *
 * One packet sequence (id 1). Its first packet clears the incremental state,
 * defines clock 64 as an incremental clock in nanoseconds (every packet's
 * timestamp is a delta from the one before) tied to REALTIME, and defines
 * the debug annotation names. Event names, categories (the levels) and
 * paths are interned the first time they are used. A process is a track,
 * with its threads as child tracks; a call is a slice begin on its thread's
 * track, with fd, req (bytes asked), bytes (moved), offset, path and ret as
 * debug annotations, and a slice end, written when the merge's time passes
 * it: begins and ends go out in time order, so every delta is >= 0.
 * req and ret are left out where they equal bytes (a call that moved what
 * it asked for and returned that).
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

/* Field numbers (perfetto_trace.proto). */
enum {
	TRACE_PACKET = 1,
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
	TP_SEQ_FLAGS = 13, TP_DEFAULTS = 59, TP_TRACK_DESCRIPTOR = 60, TP_FIRST_ON_SEQ = 87,
	CS_CLOCKS = 1, CS_PRIMARY_CLOCK = 2, CLOCK_ID = 1, CLOCK_TIMESTAMP = 2, CLOCK_INCREMENTAL = 3,
	DEF_CLOCK_ID = 58,
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	TD_CHILD_ORDERING = 11, TD_SIBLING_RANK = 12, TD_DESCRIPTION = 14, TD_PROCESS_ORDERING = 19,
	PD_PID = 1, PD_NAME = 6, PD_LABELS = 8, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	CD_UNIT = 3,
	TE_CATEGORY_IIDS = 3, TE_DEBUG = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11, TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	DA_NAME_IID = 1, DA_UINT = 3, DA_INT = 4, DA_STRING_IID = 17,
	ID_CATEGORIES = 1, ID_NAMES = 2, ID_ANNOTATION_NAMES = 3, ID_STRINGS = 29,
	INTERNED_IID = 1, INTERNED_NAME = 2,
};
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
enum { CLOCK_REALTIME_ID = 1, CLOCK_OURS = 64 };
enum { UNIT_COUNT = 2 };
/* Debug annotation names, interned in the first packet. */
enum { AN_FD = 1, AN_REQ, AN_BYTES, AN_OFFSET, AN_PATH, AN_RET };
static const char *const annotation_names[] = { "", "fd", "req", "bytes", "offset", "path", "ret" };
/* Track uuids: 1 the DataCrumbs facts track, then processes, threads and
 * counters as first seen (uuids small, so each costs a byte or two). A
 * node's part (dc-merge --part) numbers from (node + 1) << PART_UUID_SHIFT
 * and is sequence 2 + node, so that parts concatenate into one trace
 * without two tracks or sequences alike; the stitch's own header is
 * sequence 1. */
#define FACTS_UUID 1
#define PART_UUID_SHIFT 20

/* ---- the writer ---- */

struct pf_writer {
	struct text_out o;           /* written on a thread of its own, as the JSON */
	const struct dc_job *job;
	uint64_t last_ns;            /* of the packet before: timestamps are deltas */
	struct pb pkt, te, sub, interned;
	struct dc_strings names, cats, paths; /* iid = index + 1 */
	/* Per node, per string id: its iid as a name, a category and a path
	 * (0: not looked up yet), so that a call costs no string hashing. */
	uint32_t **iids[3];
	struct dc_hashtab *tracks;   /* (node << 32 | id, kind) -> uuid */
	uint64_t next_uuid;
	struct dc_slice_ends ends;   /* begun, not yet written */
	uint64_t seq_id, facts_uuid; /* this file's sequence, and its facts track */
	char *const *missing;        /* stitch header: per node, why it has no part */
	unsigned long long written;
	int err;
};

enum { K_PROCESS = 1, K_THREAD, K_COUNTER };

/* Frames w->pkt as one TracePacket of the Trace and writes it. */
static void emit_packet(struct pf_writer *w)
{
	size_t n = w->pkt.len;
	uint8_t *o;

	if (w->pkt.oom || w->te.oom || w->sub.oom || w->interned.oom) {
		w->err = ENOMEM;
		return;
	}
	/* The packet's key and length, then the packet, straight into the
	 * output buffer. */
	if ((o = (uint8_t *)reserve(&w->o, nested_size(TRACE_PACKET, n)))) {
		o = put_key_len(o, TRACE_PACKET, n);
		memcpy(o, w->pkt.p, n);
		w->o.len = (char *)o + n - w->o.buf;
	}
	if (w->o.err && !w->err)
		w->err = w->o.err;
	pb_reset(&w->pkt);
}

/* A packet of the sequence at time ns (a delta from the packet before). */
static void begin_packet(struct pf_writer *w, uint64_t ns)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, TP_TIMESTAMP, ns - w->last_ns);
	w->last_ns = ns;
	pb_uint(&w->pkt, TP_SEQ_ID, w->seq_id);
	pb_uint(&w->pkt, TP_SEQ_FLAGS, SEQ_NEEDS);
}

/* The interned entry (iid, text) of kind field, added to this packet. */
static void intern_entry(struct pf_writer *w, unsigned field, uint64_t iid, const char *text)
{
	pb_reset(&w->sub);
	pb_uint(&w->sub, INTERNED_IID, iid);
	pb_str(&w->sub, INTERNED_NAME, text);
	pb_msg(&w->interned, field, &w->sub);
}

enum { IID_NAME, IID_CAT, IID_PATH };

static uint64_t iid_of(struct pf_writer *w, struct dc_strings *t, unsigned field, const char *text);

/* A node's empty category or path: no category, no path annotation. */
#define NO_IID UINT32_MAX

/*
 * iid of a node's string id as a name, category or path: looked up once.
 * An empty category or path is 0, known from the cache too: a call costs
 * no look at the string itself, which is seldom in the CPU's cache.
 */
static uint64_t node_iid(struct pf_writer *w, const struct dc_node *n, __u32 id, int kind)
{
	static const unsigned fields[3] = { ID_NAMES, ID_CATEGORIES, ID_STRINGS };
	struct dc_strings *t = kind == IID_NAME ? &w->names : kind == IID_CAT ? &w->cats : &w->paths;
	uint32_t *slot = &w->iids[kind][n->index][id];

	if (!*slot) {
		const char *s = dc_reader_string(n->r, id);

		*slot = kind != IID_NAME && !*s ? NO_IID : (uint32_t)iid_of(w, t, fields[kind], s);
	}
	return *slot == NO_IID ? 0 : *slot;
}

/* iid of text in table t; new ones are defined in this packet's interned data. */
static uint64_t iid_of(struct pf_writer *w, struct dc_strings *t, unsigned field, const char *text)
{
	size_t before = t->n;
	uint32_t i = dc_strings_intern(t, text);

	if (i == UINT32_MAX) {
		w->err = ENOMEM;
		return 0;
	}
	if (t->n > before)
		intern_entry(w, field, i + 1, text);
	return i + 1;
}

static void put_interned(struct pf_writer *w)
{
	if (w->interned.len)
		pb_msg(&w->pkt, TP_INTERNED, &w->interned);
	pb_reset(&w->interned);
}

/* The first packet: state cleared, the clock, the annotation names, and a
 * root descriptor that orders processes explicitly. */
static void first_packet(struct pf_writer *w)
{
	struct pb *p = &w->pkt;

	pb_reset(p);
	pb_uint(p, TP_SEQ_ID, w->seq_id);
	pb_uint(p, TP_SEQ_FLAGS, SEQ_CLEARED | SEQ_NEEDS);
	pb_uint(p, TP_FIRST_ON_SEQ, 1);
	/* Clock 64: ns deltas, starting at the job's origin on REALTIME. */
	pb_reset(&w->sub);
	pb_uint(&w->sub, CLOCK_ID, CLOCK_OURS);
	pb_uint(&w->sub, CLOCK_TIMESTAMP, w->job->origin_ns);
	pb_uint(&w->sub, CLOCK_INCREMENTAL, 1);
	pb_reset(&w->te);
	pb_msg(&w->te, CS_CLOCKS, &w->sub);
	pb_reset(&w->sub);
	pb_uint(&w->sub, CLOCK_ID, CLOCK_REALTIME_ID);
	pb_uint(&w->sub, CLOCK_TIMESTAMP, w->job->origin_ns);
	pb_msg(&w->te, CS_CLOCKS, &w->sub);
	pb_uint(&w->te, CS_PRIMARY_CLOCK, CLOCK_REALTIME_ID);
	pb_msg(p, TP_CLOCK_SNAPSHOT, &w->te);
	pb_reset(&w->te);
	pb_uint(&w->te, DEF_CLOCK_ID, CLOCK_OURS);
	pb_msg(p, TP_DEFAULTS, &w->te);
	for (unsigned i = 1; i < sizeof(annotation_names) / sizeof(annotation_names[0]); i++)
		intern_entry(w, ID_ANNOTATION_NAMES, i, annotation_names[i]);
	put_interned(w);
	w->last_ns = w->job->origin_ns;
	emit_packet(w);
	/* The root track (uuid 0): processes in the order given below. */
	pb_reset(p);
	pb_uint(p, TP_SEQ_ID, w->seq_id);
	pb_reset(&w->te);
	pb_uint(&w->te, TD_UUID, 0);
	pb_uint(&w->te, TD_PROCESS_ORDERING, 1);
	pb_msg(p, TP_TRACK_DESCRIPTOR, &w->te);
	emit_packet(w);
}

static void descriptor(struct pf_writer *w, const struct pb *td)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, TP_SEQ_ID, w->seq_id);
	pb_msg(&w->pkt, TP_TRACK_DESCRIPTOR, td);
	emit_packet(w);
}

/* Ranks first, in order, then Slurm tasks, then the rest: as the JSON. */
static int64_t process_rank(const struct dc_process *p, uint64_t uuid)
{
	return p->rank >= 0 ? p->rank : p->task >= 0 ? 500000 + p->task : 1000000 + (int64_t)uuid;
}

static uint64_t process_track(struct pf_writer *w, const struct dc_node *n, __u32 pid)
{
	const struct dc_process *p = dc_node_process(n, pid);
	uint64_t key = (uint64_t)n->index << 32 | pid, uuid;
	char label[160];

	if (dc_hashtab_get(w->tracks, key, K_PROCESS, &uuid))
		return uuid;
	uuid = w->next_uuid++;
	dc_hashtab_put(w->tracks, key, K_PROCESS, uuid);
	pb_reset(&w->te);
	pb_uint(&w->te, TD_UUID, uuid);
	pb_reset(&w->sub);
	/* The pid Perfetto knows the process by is its track's: a node's own
	 * pids collide with other nodes' (the OS pid is in the labels), and
	 * its threads name the same pid (thread_track). */
	pb_uint(&w->sub, PD_PID, (uint32_t)uuid);
	if (p) {
		dc_process_label(n, p, label, sizeof(label));
		pb_str(&w->sub, PD_NAME, label);
		snprintf(label, sizeof(label), "%s pid %u", n->hdr.hostname, pid);
		pb_str(&w->sub, PD_LABELS, label);
	} else {
		snprintf(label, sizeof(label), "? (%s:%u)", n->hdr.hostname, pid);
		pb_str(&w->sub, PD_NAME, label);
	}
	pb_msg(&w->te, TD_PROCESS, &w->sub);
	pb_uint(&w->te, TD_SIBLING_RANK, (uint64_t)process_rank(p ? p : &(struct dc_process){ .rank = -1, .task = -1 }, uuid));
	descriptor(w, &w->te);
	return uuid;
}

static uint64_t thread_track(struct pf_writer *w, const struct dc_node *n, __u32 pid, __u32 tid)
{
	uint64_t key = (uint64_t)n->index << 32 | tid, uuid, parent;
	char name[64];

	if (dc_hashtab_get(w->tracks, key, K_THREAD, &uuid))
		return uuid;
	parent = process_track(w, n, pid);
	uuid = w->next_uuid++;
	dc_hashtab_put(w->tracks, key, K_THREAD, uuid);
	pb_reset(&w->te);
	pb_uint(&w->te, TD_UUID, uuid);
	pb_uint(&w->te, TD_PARENT, parent);
	pb_reset(&w->sub);
	/* Perfetto's pids and tids are per trace: a node's own numbers could
	 * collide with another node's, so they go in the name only. */
	pb_uint(&w->sub, THD_PID, (uint32_t)parent);
	pb_uint(&w->sub, THD_TID, (uint32_t)uuid);
	snprintf(name, sizeof(name), "%s %u", tid == pid ? "main" : "thread", tid);
	pb_str(&w->sub, THD_NAME, name);
	pb_msg(&w->te, TD_THREAD, &w->sub);
	descriptor(w, &w->te);
	return uuid;
}

/* Every call packet begins so: its timestamp (a delta from the packet
 * before), the sequence, and its flags. */
static inline unsigned head_size(const struct pf_writer *w, uint64_t ns)
{
	return field_size(TP_TIMESTAMP, ns - w->last_ns) + field_size(TP_SEQ_ID, w->seq_id) +
	       field_size(TP_SEQ_FLAGS, SEQ_NEEDS);
}

/* Room for a call packet of pkt bytes, and its key, length and head. */
static inline uint8_t *put_head(struct pf_writer *w, uint64_t ns, unsigned pkt)
{
	uint8_t *o = (uint8_t *)reserve(&w->o, nested_size(TRACE_PACKET, pkt));

	if (!o) {
		w->err = w->o.err;
		return NULL;
	}
	o = put_key_len(o, TRACE_PACKET, pkt);
	o = put_field(o, TP_TIMESTAMP, ns - w->last_ns);
	o = put_field(o, TP_SEQ_ID, w->seq_id);
	o = put_field(o, TP_SEQ_FLAGS, SEQ_NEEDS);
	w->last_ns = ns;
	return o;
}

/* A slice end on track at ns: the head, and a TrackEvent of its type and
 * track. */
static void end_packet(struct pf_writer *w, uint64_t ns, uint64_t track)
{
	unsigned te = field_size(TE_TYPE, SLICE_END) + field_size(TE_TRACK, track);
	uint8_t *o = put_head(w, ns, head_size(w, ns) + nested_size(TP_TRACK_EVENT, te));

	if (!o)
		return;
	o = put_key_len(o, TP_TRACK_EVENT, te);
	o = put_field(o, TE_TYPE, SLICE_END);
	o = put_field(o, TE_TRACK, track);
	w->o.len = (char *)o - w->o.buf;
}

/* Every slice that ends by ns, ended. */
static void flush_ends(struct pf_writer *w, uint64_t ns)
{
	struct dc_slice_end e;

	while (dc_slice_ends_pop_by(&w->ends, ns, &e))
		end_packet(w, e.ns, e.track);
}

/* ---- events ---- */

/* A debug annotation: an integer, or an interned string's iid. */
struct annotation {
	unsigned name, field;
	uint64_t v;
};

static inline unsigned annotation_size(const struct annotation *a)
{
	return field_size(DA_NAME_IID, a->name) + field_size(a->field, a->v);
}

static int write_event(void *wp, const struct dc_node *n, const struct dc_event *e, __u64 wall_ns)
{
	struct pf_writer *w = wp;
	const struct dc_func *f = dc_node_func(n, e->func);
	__u32 nstrings = dc_reader_nstrings(n->r);
	struct annotation ann[6];
	uint64_t track, name, cat = 0, path = 0;
	unsigned na = 0, te, pkt;
	uint8_t *o;

	flush_ends(w, wall_ns);
	track = thread_track(w, n, e->pid, e->tid);
	/* Interned first: a string new to the trace is defined in this packet. */
	name = f && f->name <= nstrings ? node_iid(w, n, f->name, IID_NAME) : iid_of(w, &w->names, ID_NAMES, "unknown");
	if (f && f->category <= nstrings)
		cat = node_iid(w, n, f->category, IID_CAT);
	if (e->path && e->path <= nstrings)
		path = node_iid(w, n, e->path, IID_PATH);
	/* req and ret only where they differ from bytes: a call that moved
	 * what it asked for, and returned that, costs two annotations less. */
	if (e->flags & DC_EV_FD)
		ann[na++] = (struct annotation){ AN_FD, DA_INT, (uint64_t)(int64_t)e->fd };
	if (e->req != e->bytes)
		ann[na++] = (struct annotation){ AN_REQ, DA_INT, e->req };
	ann[na++] = (struct annotation){ AN_BYTES, DA_INT, e->bytes };
	if (e->flags & DC_EV_OFFSET)
		ann[na++] = (struct annotation){ AN_OFFSET, DA_INT, (uint64_t)e->offset };
	if (path)
		ann[na++] = (struct annotation){ AN_PATH, DA_STRING_IID, path };
	if (e->ret != (int64_t)e->bytes)
		ann[na++] = (struct annotation){ AN_RET, DA_INT, (uint64_t)e->ret };
	if (w->interned.oom) {
		w->err = ENOMEM;
		return -1;
	}

	te = field_size(TE_TYPE, SLICE_BEGIN) + field_size(TE_TRACK, track) + field_size(TE_NAME_IID, name);
	if (cat)
		te += field_size(TE_CATEGORY_IIDS, cat);
	for (unsigned i = 0; i < na; i++)
		te += nested_size(TE_DEBUG, annotation_size(&ann[i]));
	pkt = head_size(w, wall_ns) + nested_size(TP_TRACK_EVENT, te);
	if (w->interned.len)
		pkt += nested_size(TP_INTERNED, w->interned.len);
	if (!(o = put_head(w, wall_ns, pkt)))
		return -1;
	if (w->interned.len) {
		o = put_key_len(o, TP_INTERNED, w->interned.len);
		o = (uint8_t *)emit((char *)o, (const char *)w->interned.p, w->interned.len);
		pb_reset(&w->interned);
	}
	o = put_key_len(o, TP_TRACK_EVENT, te);
	o = put_field(o, TE_TYPE, SLICE_BEGIN);
	o = put_field(o, TE_TRACK, track);
	o = put_field(o, TE_NAME_IID, name);
	if (cat)
		o = put_field(o, TE_CATEGORY_IIDS, cat);
	for (unsigned i = 0; i < na; i++) {
		o = put_key_len(o, TE_DEBUG, annotation_size(&ann[i]));
		o = put_field(o, DA_NAME_IID, ann[i].name);
		o = put_field(o, ann[i].field, ann[i].v);
	}
	w->o.len = (char *)o - w->o.buf;
	if (dc_slice_ends_push(&w->ends, wall_ns + e->dur, track))
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

	flush_ends(w, wall_ns);
	if (!dc_hashtab_get(w->tracks, key ^ ((uint64_t)c->func << 20), K_COUNTER, &uuid)) {
		uint64_t parent = process_track(w, n, c->pid);

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
		descriptor(w, &w->te);
	}
	begin_packet(w, wall_ns);
	pb_reset(&w->te);
	pb_uint(&w->te, TE_TYPE, COUNTER);
	pb_uint(&w->te, TE_TRACK, uuid);
	pb_uint(&w->te, TE_COUNTER_VALUE, c->count);
	pb_msg(&w->pkt, TP_TRACK_EVENT, &w->te);
	emit_packet(w);
	w->written++;
	return w->err ? -1 : 0;
}

/* What a user should see first: lost events, files cut short, skipped
 * chunks, as instants on the DataCrumbs track at the job's start. */
static void facts(struct pf_writer *w)
{
	const struct dc_node *part = w->job->part;
	char text[1024];

	pb_reset(&w->te);
	pb_uint(&w->te, TD_UUID, w->facts_uuid);
	if (part)
		snprintf(text, sizeof(text), "DataCrumbs: %s: lost events and damaged files", part->hdr.hostname);
	pb_str(&w->te, TD_NAME, part ? text : "DataCrumbs: lost events and damaged files");
	pb_uint(&w->te, TD_SIBLING_RANK, 0);
	descriptor(w, &w->te);
	for (size_t i = 0; i < w->job->nnodes; i++) {
		const struct dc_node *n = &w->job->nodes[i];
		int k = 0;

		if (part && n != part)
			continue;
		if (w->missing) { /* the stitch's header: only the nodes without a part */
			if (w->missing[i])
				k += snprintf(text, sizeof(text), "%s: %s; its calls are not in this trace. ",
					      n->hdr.hostname, w->missing[i]);
		} else {
		if (n->lost)
			k += snprintf(text + k, sizeof(text) - k, "%s: %llu events lost (ring buffer full). ",
				      n->hdr.hostname, n->lost);
		if (n->problem && k < (int)sizeof(text))
			k += snprintf(text + k, sizeof(text) - k, "%s: incomplete: %s. ", n->hdr.hostname, n->problem);
		if (n->skipped && k < (int)sizeof(text))
			k += snprintf(text + k, sizeof(text) - k, "%s: %llu events skipped: %s. ", n->hdr.hostname,
				      n->skipped, n->skip_reason ? n->skip_reason : "");
		}
		if (!k)
			continue;
		begin_packet(w, w->last_ns);
		pb_reset(&w->te);
		pb_uint(&w->te, TE_TYPE, INSTANT);
		pb_uint(&w->te, TE_TRACK, w->facts_uuid);
		pb_str(&w->te, TE_NAME, text);
		pb_msg(&w->pkt, TP_TRACK_EVENT, &w->te);
		emit_packet(w);
	}
}

static void free_writer(struct pf_writer *w)
{
	for (int k = 0; k < 3; k++) {
		for (size_t i = 0; w->iids[k] && w->job && i < w->job->nnodes; i++)
			free(w->iids[k][i]);
		free(w->iids[k]);
	}
	struct pb *bufs[] = { &w->pkt, &w->te, &w->sub, &w->interned };

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		free(bufs[i]->p);
	dc_strings_free(&w->names);
	dc_strings_free(&w->cats);
	dc_strings_free(&w->paths);
	dc_hashtab_free(w->tracks);
	dc_slice_ends_free(&w->ends);
	free(w);
}

static void *open_writer(const char *path, int fd, const struct dc_job *job, bool deflated, char *err,
			 size_t errlen)
{
	struct pf_writer *w = calloc(1, sizeof(*w));
	bool ok = w && !dc_strings_init(&w->names, 256) && !dc_strings_init(&w->cats, 16) &&
		  !dc_strings_init(&w->paths, 4096) && (w->tracks = dc_hashtab_new(1024));

	if (w)
		w->job = job;
	for (int k = 0; ok && k < 3; k++) {
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
	w->seq_id = job->part ? 2 + (uint64_t)job->part->index : 1;
	w->facts_uuid = job->part ? ((uint64_t)job->part->index + 1) << PART_UUID_SHIFT : FACTS_UUID;
	w->next_uuid = w->facts_uuid + 1;
	return w;
}

static void *start_trace(const char *path, int fd, const struct dc_job *job, bool deflated, char *err,
			 size_t errlen)
{
	struct pf_writer *w = open_writer(path, fd, job, deflated, err, errlen);

	if (w) {
		first_packet(w);
		facts(w);
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

	if (ok)
		flush_ends(w, UINT64_MAX);
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
	first_packet(w);
	facts(w);
	return close_writer(w, 1, err, errlen);
}

const struct dc_output_ops dc_perfetto_output = {
	"perfetto", ".pftrace", open_trace, write_event, write_counter, close_writer,
};

const struct dc_output_ops dc_perfetto_raw_output = {
	"perfetto", ".pftrace", open_raw_trace, write_event, write_counter, close_writer,
};
