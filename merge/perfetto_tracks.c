// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dc-merge -f perfetto: what a trace says once, not per call: the packet
 * framing, a sequence's first packets (its clock, defaults and annotation
 * names), the track descriptors of processes and threads (ranks first),
 * and the facts track (lost events, cut files) at the top.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "perfetto_int.h"
#include "test_hooks.h"

/* By AN_* value. */
static const char *const annotation_names[] = { "", "path", "path2" };

/* Frames w->pkt as one TracePacket of the Trace and writes it. */
void pf_emit_packet(struct pf_writer *w)
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

void pf_begin_packet(struct pf_writer *w, uint64_t ns)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, TP_TIMESTAMP, ns - w->main.last_ns);
	w->main.last_ns = ns;
	pb_uint(&w->pkt, TP_SEQ_ID, w->main.id);
	pb_uint(&w->pkt, TP_SEQ_FLAGS, SEQ_NEEDS);
}

/* The interned entry (iid, text) of kind field, added to this packet. */
void pf_intern_entry(struct pf_writer *w, unsigned field, uint64_t iid, const char *text)
{
	pb_reset(&w->sub);
	pb_uint(&w->sub, INTERNED_IID, iid);
	pb_str(&w->sub, INTERNED_NAME, text);
	pb_msg(&w->interned, field, &w->sub);
}

void pf_put_interned(struct pf_writer *w)
{
	if (w->interned.len)
		pb_msg(&w->pkt, TP_INTERNED, &w->interned);
	pb_reset(&w->interned);
}

/* A field of the io extension's descriptor, into b. */
static void io_field(struct pb *b, struct pb *f, const char *name, unsigned number)
{
	pb_reset(f);
	pb_str(f, FLD_NAME, name);
	pb_uint(f, FLD_NUMBER, number);
	pb_uint(f, FLD_LABEL, LABEL_OPTIONAL);
	pb_uint(f, FLD_TYPE, TYPE_INT64);
	pb_msg(b, MD_FIELD, f);
}

/* The io extension's schema, as a FileDescriptorSet in an
 * ExtensionDescriptor packet: what trace_processor decodes its fields with. */
static void io_descriptor_packet(struct pf_writer *w)
{
	struct pb file = { 0 }, msg = { 0 }, field = { 0 };

	pb_reset(&w->te);
#define IO_DESCRIBE(name, n) io_field(&msg, &field, #name, n);
	pb_str(&msg, MD_NAME, "Io");
	IO_FIELDS(IO_DESCRIBE)
#undef IO_DESCRIBE
	pb_str(&file, FD_NAME, "datacrumbs/io.proto");
	pb_str(&file, FD_PACKAGE, "datacrumbs");
	pb_str(&file, FD_DEPENDENCY, "protos/perfetto/trace/track_event/track_event.proto");
	pb_msg(&file, FD_MESSAGE, &msg);
	pb_reset(&field);
	pb_str(&field, FLD_NAME, "io");
	pb_str(&field, FLD_EXTENDEE, ".perfetto.protos.TrackEvent");
	pb_uint(&field, FLD_NUMBER, TE_IO);
	pb_uint(&field, FLD_LABEL, LABEL_OPTIONAL);
	pb_uint(&field, FLD_TYPE, TYPE_MESSAGE);
	pb_str(&field, FLD_TYPE_NAME, ".datacrumbs.Io");
	pb_msg(&file, FD_EXTENSION, &field);
	pb_reset(&msg);
	pb_msg(&msg, FDS_FILE, &file);
	pb_msg(&w->te, ED_EXTENSION_SET, &msg);
	if (file.oom || msg.oom || field.oom)
		w->err = ENOMEM;
	free(file.p);
	free(msg.p);
	free(field.p);
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, TP_SEQ_ID, w->main.id);
	pb_msg(&w->pkt, TP_EXTENSION_DESCRIPTOR, &w->te);
	pf_emit_packet(w);
}

/* A sequence's first packet's head: its state cleared; clock 64 is ns
 * deltas from ns on REALTIME (a sequence's own clock, as Perfetto's clocks
 * 64-127 are), the clock of every packet after unless it names another;
 * the sequence's next delta counts from ns. */
static void sequence_head(struct pf_writer *w, struct pf_seq *s, uint64_t ns, bool primary)
{
	struct pb *p = &w->pkt;

	s->last_ns = ns;
	pb_reset(p);
	pb_uint(p, TP_SEQ_ID, s->id);
	pb_uint(p, TP_SEQ_FLAGS, SEQ_CLEARED | SEQ_NEEDS);
	pb_uint(p, TP_FIRST_ON_SEQ, 1);
	pb_reset(&w->sub);
	pb_uint(&w->sub, CLOCK_ID, CLOCK_OURS);
	pb_uint(&w->sub, CLOCK_TIMESTAMP, ns);
	pb_uint(&w->sub, CLOCK_INCREMENTAL, 1);
	pb_reset(&w->te);
	pb_msg(&w->te, CS_CLOCKS, &w->sub);
	pb_reset(&w->sub);
	pb_uint(&w->sub, CLOCK_ID, CLOCK_REALTIME_ID);
	pb_uint(&w->sub, CLOCK_TIMESTAMP, ns);
	pb_msg(&w->te, CS_CLOCKS, &w->sub);
	if (primary)
		pb_uint(&w->te, CS_PRIMARY_CLOCK, CLOCK_REALTIME_ID);
	pb_msg(p, TP_CLOCK_SNAPSHOT, &w->te);
}

/* The defaults (clock 64, and the track unless it is 0) and the annotation
 * names, into the sequence's first packet, which is then written. */
static void sequence_defaults(struct pf_writer *w, uint64_t track)
{
	pb_reset(&w->te);
	pb_uint(&w->te, DEF_CLOCK_ID, CLOCK_OURS);
	if (track) {
		pb_reset(&w->sub);
		pb_uint(&w->sub, TED_TRACK, track);
		pb_msg(&w->te, DEF_TRACK_EVENT, &w->sub);
	}
	pb_msg(&w->pkt, TP_DEFAULTS, &w->te);
	for (unsigned i = 1; i < sizeof(annotation_names) / sizeof(annotation_names[0]); i++)
		pf_intern_entry(w, ID_ANNOTATION_NAMES, i, annotation_names[i]);
	pf_put_interned(w);
	pf_emit_packet(w);
}

void pf_first_packet(struct pf_writer *w)
{
	struct pb *p = &w->pkt;

	sequence_head(w, &w->main, w->job->origin_ns, true);
	sequence_defaults(w, 0);
	io_descriptor_packet(w);
	/* The root track (uuid 0): processes in the order given below. */
	pb_reset(p);
	pb_uint(p, TP_SEQ_ID, w->main.id);
	pb_reset(&w->te);
	pb_uint(&w->te, TD_UUID, 0);
	pb_uint(&w->te, TD_PROCESS_ORDERING, 1);
	pb_msg(p, TP_TRACK_DESCRIPTOR, &w->te);
	pf_emit_packet(w);
}

/* A thread sequence's first packet, at ns: state cleared, the clock, the
 * thread's track as the default, the annotation names. */
static void thread_sequence_begin(struct pf_writer *w, struct pf_thread *t, uint64_t ns)
{
	sequence_head(w, t->seq, ns, false);
	sequence_defaults(w, t->uuid);
}

void pf_descriptor(struct pf_writer *w, const struct pb *td)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, TP_SEQ_ID, w->main.id);
	pb_msg(&w->pkt, TP_TRACK_DESCRIPTOR, td);
	pf_emit_packet(w);
}

/* Ranks first, in order, then Slurm tasks, then the rest: as the JSON. */
static int64_t process_rank(const struct dc_process *p, uint64_t uuid)
{
	return p->rank >= 0 ? p->rank : p->task >= 0 ? 500000 + p->task : 1000000 + (int64_t)uuid;
}

uint64_t pf_process_track(struct pf_writer *w, const struct dc_node *n, __u32 pid)
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
	pf_descriptor(w, &w->te);
	return uuid;
}

/* The next thread's sequence: its own, while the file has ids left. */
static void thread_sequence(struct pf_writer *w, struct pf_thread *t)
{
	t->seq = &w->main;
	if (w->next_seq < w->seq_end && !dc_test_pf_shared_seq()) {
		t->own.id = w->next_seq++;
		t->seq = &t->own;
	}
}

struct pf_thread *pf_thread_track(struct pf_writer *w, const struct dc_node *n, __u32 pid, __u32 tid,
				  uint64_t ns)
{
	uint64_t key = (uint64_t)n->index << 32 | tid, i, parent;
	struct pf_thread *t;
	char name[64];

	if (dc_hashtab_get(w->tracks, key, K_THREAD, &i))
		return w->threads[i];
	if (w->nthreads == w->threads_cap) {
		size_t cap = w->threads_cap ? 2 * w->threads_cap : 64;
		struct pf_thread **v = realloc(w->threads, cap * sizeof(*v));

		if (!v)
			return NULL;
		w->threads = v;
		w->threads_cap = cap;
	}
	if (!(t = calloc(1, sizeof(*t))))
		return NULL;
	parent = pf_process_track(w, n, pid);
	t->uuid = w->next_uuid++;
	thread_sequence(w, t);
	if (dc_hashtab_put(w->tracks, key, K_THREAD, w->nthreads)) {
		free(t);
		return NULL;
	}
	t->index = w->nthreads;
	w->threads[w->nthreads++] = t;
	pb_reset(&w->te);
	pb_uint(&w->te, TD_UUID, t->uuid);
	pb_uint(&w->te, TD_PARENT, parent);
	pb_reset(&w->sub);
	/* Perfetto's pids and tids are per trace: a node's own numbers could
	 * collide with another node's, so they go in the name only. */
	pb_uint(&w->sub, THD_PID, (uint32_t)parent);
	pb_uint(&w->sub, THD_TID, (uint32_t)t->uuid);
	snprintf(name, sizeof(name), "%s %u", tid == pid ? "main" : "thread", tid);
	pb_str(&w->sub, THD_NAME, name);
	pb_msg(&w->te, TD_THREAD, &w->sub);
	pf_descriptor(w, &w->te);
	if (t->seq == &t->own)
		thread_sequence_begin(w, t, ns);
	return t;
}

/* What a user should see first: lost events, files cut short, skipped
 * chunks, as instants on the DataCrumbs track at the job's start. */
void pf_facts(struct pf_writer *w)
{
	const struct dc_node *part = w->job->part;
	char text[1024];

	pb_reset(&w->te);
	pb_uint(&w->te, TD_UUID, w->facts_uuid);
	if (part)
		snprintf(text, sizeof(text), "DataCrumbs: %s: lost events and damaged files", part->hdr.hostname);
	pb_str(&w->te, TD_NAME, part ? text : "DataCrumbs: lost events and damaged files");
	pb_uint(&w->te, TD_SIBLING_RANK, 0);
	pf_descriptor(w, &w->te);
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
		pf_begin_packet(w, w->main.last_ns);
		pb_reset(&w->te);
		pb_uint(&w->te, TE_TYPE, INSTANT);
		pb_uint(&w->te, TE_TRACK, w->facts_uuid);
		pb_str(&w->te, TE_NAME, text);
		pb_msg(&w->pkt, TP_TRACK_EVENT, &w->te);
		pf_emit_packet(w);
	}
}
