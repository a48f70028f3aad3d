/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The node file: what dc-agent leaves on each node and dc-merge reads.
 *
 *   header   struct dc_node_header, once, at offset 0
 *   chunk*   struct dc_chunk_header + payload, appended as the trace goes
 *
 * Chunk payloads are arrays of fixed-size records (processes, counters,
 * functions, per-CPU statistics, ranks), events packed (event_pack.h), or,
 * for STRINGS, NUL-terminated strings whose ids count up from 1 in file
 * order. A reader hands out every record as its struct, events too. A chunk only refers to
 * strings of earlier chunks. Every chunk carries a CRC32 of its header and
 * one of its payload, so a reader keeps everything up to the last whole
 * chunk of a file whose writer was killed, and names what it dropped.
 * All numbers are little-endian (the byte order of the hosts we run on).
 */
#ifndef DC_NODEFILE_H
#define DC_NODEFILE_H

#include <linux/types.h>
#include <stddef.h>
#include <stdio.h>
#include "dc_event.h"

#define DC_NODE_MAGIC "DCNODE\r\n"
/*
 * The format's version: it changes when a reader of the previous version
 * would misread a file of this one. 2: RANKS records of kind
 * DC_RANK_SLURM_TASK. 3: EVENTS chunks packed (event_pack.h), rec_size 0;
 * before, arrays of struct dc_event as it was then (DC_EVENT_V2_SIZE
 * bytes, without fd2 and path2). 4: events carry a second file. Readers
 * take every version up to their own. A new
 * bit in a flags field (DC_FUNC_KFUNC) or a new record kind that readers
 * skip does not change it; a record's size or a field's meaning does.
 */
#define DC_NODE_VERSION 4
/* An event as versions 1 and 2 stored it: struct dc_event up to fd2. */
#define DC_EVENT_V2_SIZE 72
_Static_assert(offsetof(struct dc_event, fd2) == DC_EVENT_V2_SIZE, "versions 1 and 2 stored the fields before fd2");
#define DC_CHUNK_MAGIC 0x4b434344u /* "DCCK" */
#define DC_NODE_SUFFIX ".dcnode"
/* Bounds a reader trusts: larger claims are corruption, not data. */
#define DC_CHUNK_MAX_PAYLOAD (64u << 20)

enum dc_chunk_type {
	DC_CHUNK_STRINGS = 1,
	DC_CHUNK_FUNCS,
	DC_CHUNK_PROCS,
	DC_CHUNK_EVENTS,
	DC_CHUNK_COUNTERS,
	DC_CHUNK_STATS,
	DC_CHUNK_END, /* written by a clean close; its absence means the agent died */
	DC_CHUNK_RANKS,
	DC_CHUNK_TYPE_MAX,
};

struct dc_node_header {
	char magic[8];
	__u32 version;
	__u32 header_size;
	char job_id[64];
	char hostname[64];
	char boot_id[40];
	/* CLOCK_MONOTONIC (the BPF clock) and CLOCK_REALTIME read back to back:
	 * wall time of an event = realtime_ref + (ts - monotonic_ref). */
	__u64 monotonic_ref_ns;
	__u64 realtime_ref_ns;
	__u32 agent_pid;
	__u32 mode; /* 0 trace, 1 profile */
	__u32 interval_ms;
	__u32 uid;
	__u32 ncpus;
	__u32 pad;
	char topology[256]; /* hwloc summary */
	char agent_version[32];
	__u32 crc; /* of this header with crc = 0 */
	__u32 pad2;
};

struct dc_chunk_header {
	__u32 magic;
	__u16 type;
	__u16 rec_size; /* in the file: 0 for STRINGS, and for EVENTS from version 3 */
	__u32 count;    /* records (or strings) */
	__u32 payload_len; /* in the file */
	__u64 min_ts;   /* EVENTS: earliest entry, for an ordered merge */
	__u64 max_ts;
	__u32 payload_crc;
	__u32 header_crc; /* of this header with header_crc = 0 */
};

/* A function the agent probed: a FUNCS record. */
struct dc_func {
	__u32 id;       /* the value of dc_event.func */
	__u32 name;     /* string id */
	__u32 category; /* string id: posix, stdio, syscall, mpiio, hdf5, ... */
	__u32 flags;    /* DC_EV_SYSCALL, DC_EV_KERNEL, DC_FUNC_KFUNC or DC_FUNC_WRAPPER: how it is observed */
};

/* The function table by id, as FUNCS chunks build it. */
struct dc_functable {
	struct dc_func *v; /* v[id].id == id where the id is known */
	size_t n;
};

int dc_functable_take(struct dc_functable *t, const struct dc_func *recs, __u32 count);
/* NULL for an id no FUNCS record named. */
const struct dc_func *dc_functable_get(const struct dc_functable *t, __u32 id);
void dc_functable_free(struct dc_functable *t);

/* A STATS record: one per CPU; cumulative, the last chunk wins. */
struct dc_cpu_stats {
	__u32 cpu;
	__u32 pad;
	__u64 stat[DC_NR_STATS];
};

/* ---- writing ---- */

struct dc_strtab;
struct dc_writer;

/* Creates path exclusively (never through a symlink) with mode (0600, or
 * 0640 to let the group read), owned by uid:gid (-1: unchanged). */
struct dc_writer *dc_writer_create(const char *path, const struct dc_node_header *hdr, int uid, int gid,
				   unsigned mode, char *err, size_t errlen);
/* The same, with path relative to the folder dir_fd holds (no name is
 * resolved twice: the agent creates node files in a folder it holds open). */
struct dc_writer *dc_writer_create_at(int dir_fd, const char *path, const struct dc_node_header *hdr, int uid,
				      int gid, unsigned mode, char *err, size_t errlen);
__u32 dc_writer_string(struct dc_writer *w, const char *s);
/* The string of an id dc_writer_string gave; NULL for 0 or an unknown id. */
const char *dc_writer_string_of(const struct dc_writer *w, __u32 id);
int dc_writer_func(struct dc_writer *w, const struct dc_func *f);
int dc_writer_event(struct dc_writer *w, const struct dc_event *e);
int dc_writer_proc(struct dc_writer *w, const struct dc_proc *p);
int dc_writer_counter(struct dc_writer *w, const struct dc_counter *c);
int dc_writer_rank(struct dc_writer *w, const struct dc_rank *r);
int dc_writer_stats(struct dc_writer *w, const struct dc_cpu_stats *s, unsigned n);
/* Writes every pending record as whole chunks. */
int dc_writer_flush(struct dc_writer *w);
/* Flushes, writes END, closes and frees. Returns the first error seen (an
 * errno), 0 if none; *events (if not NULL) gets the number of events written. */
int dc_writer_close(struct dc_writer *w, unsigned long long *events);
/* errno of the first failed write (ENOSPC, EIO...), 0 if none. After it the
 * file is truncated to its last whole chunk and later writes are refused. */
int dc_writer_error(const struct dc_writer *w);

/* ---- reading ---- */

struct dc_reader;

struct dc_chunk {
	struct dc_chunk_header hdr; /* as the file has it */
	const void *data;   /* hdr.count records (dc_chunk_data_size bytes), valid until the next read */
	long long offset;   /* of the chunk header in the file */
};

enum dc_read_status {
	DC_READ_OK = 0,
	DC_READ_END = 1,       /* clean end: END chunk seen */
	DC_READ_TRUNCATED = 2, /* file stops mid-chunk or without END: agent died */
	DC_READ_CORRUPT = 3,   /* bad magic, CRC mismatch, impossible sizes */
	DC_READ_IOERR = 4,
};

/* Opens and checks the header; NULL with a message naming path and problem. */
struct dc_reader *dc_reader_open(const char *path, char *err, size_t errlen);
const struct dc_node_header *dc_reader_header(const struct dc_reader *r);
/* Next non-STRINGS chunk (strings are taken in on the way). Anything but
 * DC_READ_OK ends the file; dc_reader_problem() then says what happened. */
enum dc_read_status dc_reader_next(struct dc_reader *r, struct dc_chunk *c);
/*
 * The same walk for an index: chunks whose type bit (1 << type) is in
 * skip_mask come back with their header only (data NULL), their payload
 * neither read nor checked, so a large file is indexed without reading it.
 */
enum dc_read_status dc_reader_next_index(struct dc_reader *r, struct dc_chunk *c, unsigned skip_mask);
/* Reads and checks the payload of the chunk whose header is at offset into
 * buf, as records (dc_chunk_data_size bytes). DC_READ_OK or
 * DC_READ_CORRUPT/IOERR. */
enum dc_read_status dc_reader_load(struct dc_reader *r, long long offset,
				   const struct dc_chunk_header *hdr, void *buf);
const char *dc_reader_problem(const struct dc_reader *r);
/* String by id; "" for 0 or an id the file never defined. */
const char *dc_reader_string(const struct dc_reader *r, __u32 id);
__u32 dc_reader_nstrings(const struct dc_reader *r);
void dc_reader_close(struct dc_reader *r);

const char *dc_chunk_type_name(unsigned type);
/* Record size of a chunk type as readers and writers hold it (0:
 * variable, STRINGS and END). */
size_t dc_chunk_rec_size(unsigned type);
/* The same as a file of that version stores it (0: packed or variable). */
size_t dc_chunk_file_rec_size(unsigned type, unsigned version);
/* Bytes a checked chunk's records take as structs (its payload, but for
 * packed events). */
size_t dc_chunk_data_size(const struct dc_chunk_header *h);

#endif /* DC_NODEFILE_H */
