/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dc-merge -f perfetto's writer, shared by its two files: perfetto_writer.c
 * (the calls and counters, and the writer's life) and perfetto_tracks.c (a
 * sequence's first packets, the track descriptors, the facts track).
 */
#ifndef DC_PERFETTO_INT_H
#define DC_PERFETTO_INT_H

#include <stdint.h>

#include "nodeset.h"
#include "protobuf.h"
#include "slice_ends.h"
#include "strset.h"
#include "text_out.h"

/* Field numbers (perfetto_trace.proto). */
enum {
	TRACE_PACKET = 1,
	TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
	TP_SEQ_FLAGS = 13, TP_DEFAULTS = 59, TP_TRACK_DESCRIPTOR = 60, TP_FIRST_ON_SEQ = 87,
	CS_CLOCKS = 1, CS_PRIMARY_CLOCK = 2, CLOCK_ID = 1, CLOCK_TIMESTAMP = 2, CLOCK_INCREMENTAL = 3,
	DEF_CLOCK_ID = 58, DEF_TRACK_EVENT = 11, TED_TRACK = 11,
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	TD_CHILD_ORDERING = 11, TD_SIBLING_RANK = 12, TD_DESCRIPTION = 14, TD_PROCESS_ORDERING = 19,
	PD_PID = 1, PD_NAME = 6, PD_LABELS = 8, THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	CD_UNIT = 3,
	TE_CATEGORY_IIDS = 3, TE_DEBUG = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11, TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	DA_NAME_IID = 1, DA_STRING_IID = 17,
	ID_CATEGORIES = 1, ID_NAMES = 2, ID_ANNOTATION_NAMES = 3, ID_STRINGS = 29,
	INTERNED_IID = 1, INTERNED_NAME = 2,
	TP_EXTENSION_DESCRIPTOR = 72, ED_EXTENSION_SET = 1,
	/* google.protobuf's descriptor messages, as Perfetto carries them */
	FDS_FILE = 1, FD_NAME = 1, FD_PACKAGE = 2, FD_DEPENDENCY = 3, FD_MESSAGE = 4, FD_EXTENSION = 7,
	MD_NAME = 1, MD_FIELD = 2,
	FLD_NAME = 1, FLD_EXTENDEE = 2, FLD_NUMBER = 3, FLD_LABEL = 4, FLD_TYPE = 5, FLD_TYPE_NAME = 6,
	LABEL_OPTIONAL = 1, TYPE_INT64 = 3, TYPE_MESSAGE = 11,
};
/*
 * A call's integers are DataCrumbs' own TrackEvent extension, a message
 * "io" at field TE_IO (of Perfetto's extension range 1000-9999, in its
 * unallocated part): 4 bytes for the message, then 1 byte of key and the
 * value for each field, where a debug annotation costs 5 bytes and its
 * value. The trace carries the extension's descriptor (an
 * ExtensionDescriptor packet, perfetto_tracks.c), with which
 * trace_processor and the UI show the fields as args io.fd, io.req,
 * io.bytes, io.offset, io.ret and io.fd2 (the second file's descriptor);
 * tests/perfetto/datacrumbs_io.proto is the same schema for protoc. The
 * paths stay interned debug annotations (path, and path2 for the second
 * file).
 */
#define IO_EXTENSION_NUMBER 4300
enum { TE_IO = IO_EXTENSION_NUMBER };
#define IO_FIELDS(X) X(fd, 1) X(req, 2) X(bytes, 3) X(offset, 4) X(ret, 5) X(fd2, 6)
#define IO_ENUM(name, n) IO_##name = n,
enum { IO_FIELDS(IO_ENUM) };
#undef IO_ENUM
enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3, COUNTER = 4 };
enum { SEQ_CLEARED = 1, SEQ_NEEDS = 2 };
enum { CLOCK_REALTIME_ID = 1, CLOCK_OURS = 64 };
enum { UNIT_COUNT = 2 };
/* Debug annotation names, interned in the first packet (perfetto_tracks.c). */
enum { AN_PATH = 1, AN_PATH2 };
/* Track uuids: 1 the DataCrumbs facts track, then processes, threads and
 * counters as first seen (uuids small, so each costs a byte or two). A
 * node's part (dc-merge --part) numbers from (node + 1) << PART_UUID_SHIFT
 * and is sequence 2 + node, so that parts concatenate into one trace
 * without two tracks or sequences alike; the stitch's own header is
 * sequence 1.
 * Each thread's calls are a sequence of their own, whose default track is
 * the thread's, so that no call packet names its track: in a merge
 * sequences 2, 3, ... as threads are first seen; in a node's part (node +
 * 1) << PART_SEQ_SHIFT plus 1, 2, ... (sequence ids are 32 bits: a job of
 * PART_SEQ_NODES nodes or more, or a node with more threads than its
 * range, writes the threads beyond on the file's own sequence, each
 * packet naming its track, as DC_TEST_PF_SHARED_SEQ forces in tests). */
#define FACTS_UUID 1
#define PART_UUID_SHIFT 20
#define PART_SEQ_SHIFT 20
#define PART_SEQ_NODES (1u << (32 - PART_SEQ_SHIFT))

/* ---- the writer ---- */

/* Interned strings by kind: event names, categories, paths. */
enum { IID_NAME, IID_CAT, IID_PATH, IID_KINDS };

/* A set of iids: the first 64 in a word of its own (a trace's names and
 * levels, mostly), the rest in pages of PF_PAGE_BITS allocated as used: a
 * thread's set costs a pointer per page up to the highest iid it uses and
 * a page for each page it uses, not a bit for every string of the trace. */
#define PF_PAGE_BITS 512
struct pf_bits {
	uint64_t low;
	uint64_t **pages;
	size_t npages;
};

/* A packet sequence: interning and the clock's deltas are per sequence. */
struct pf_seq {
	uint64_t id;
	uint64_t last_ns;              /* of its packet before: timestamps are deltas */
	struct pf_bits defined[IID_KINDS]; /* the iids defined on this sequence */
	struct dc_slice_ends ends;     /* its slices begun, not yet ended; track: the thread's index */
};

/* A thread's track, and the sequence its calls are written on: its own
 * (the track a default) or, past the ids a file has, the file's. */
struct pf_thread {
	uint64_t uuid;
	size_t index;                  /* in w->threads */
	struct pf_seq *seq;
	struct pf_seq own;
};

struct pf_writer {
	struct text_out o;           /* written on a thread of its own, as the JSON */
	const struct dc_job *job;
	struct pb pkt, te, sub, interned;
	struct dc_strings names, cats, paths; /* iid = index + 1, one numbering per file */
	/* Per node, per string id: its iid as a name, a category and a path
	 * (0: not looked up yet), so that a call costs no string hashing. */
	uint32_t **iids[IID_KINDS];
	struct dc_hashtab *tracks;   /* (node << 32 | id, kind) -> uuid, or a thread's index */
	uint64_t next_uuid;
	struct pf_thread **threads;
	size_t nthreads, threads_cap;
	uint64_t next_seq, seq_end;  /* the threads' sequence ids: next, and past the last */
	struct pf_seq main;          /* this file's sequence: descriptors, counters, facts */
	uint64_t facts_uuid;         /* this file's facts track */
	char *const *missing;        /* stitch header: per node, why it has no part */
	unsigned long long written;
	int err;
};

enum { K_PROCESS = 1, K_THREAD, K_COUNTER };

/* Frames w->pkt as one TracePacket of the Trace and writes it. */
void pf_emit_packet(struct pf_writer *w);
/* A packet of the file's sequence at time ns (a delta from the packet before). */
void pf_begin_packet(struct pf_writer *w, uint64_t ns);
/* The interned entry (iid, text) of kind field, added to this packet. */
void pf_intern_entry(struct pf_writer *w, unsigned field, uint64_t iid, const char *text);
/* This packet's interned entries into w->pkt. */
void pf_put_interned(struct pf_writer *w);
/* The file's first packets: its sequence's state cleared, the clock, the
 * annotation names, the io extension's descriptor, and the root descriptor
 * that orders processes. */
void pf_first_packet(struct pf_writer *w);
/* A packet of one track descriptor. */
void pf_descriptor(struct pf_writer *w, const struct pb *td);
/* The track of a node's process or thread, described the first time. */
uint64_t pf_process_track(struct pf_writer *w, const struct dc_node *n, __u32 pid);
/* A node's thread: its track described, and its sequence begun, the first
 * time; NULL out of memory. */
struct pf_thread *pf_thread_track(struct pf_writer *w, const struct dc_node *n, __u32 pid, __u32 tid,
				  uint64_t ns);
/* Lost events, cut files and skipped chunks, as instants on the facts track. */
void pf_facts(struct pf_writer *w);

#endif
