/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The shared-memory ring between an MPI rank (libdcpmpi.so, the producer)
 * and its node's dc-agent (the consumer): MPI-IO and HDF5 calls recorded
 * in the rank without entering the kernel.
 *
 * The rank creates a memfd, lays out a header and nslots slots, seals it
 * against shrinking (so no mapping of it can fault) and passes it to the
 * agent with its registration (SCM_RIGHTS). A record takes one slot, and
 * a path, when it has one, the slots after it. Producers (any thread of
 * the rank) reserve slots by compare-and-swap on head and publish a record
 * by storing its commit word last; the agent copies each committed record
 * out, checks the copy, zeroes the commit words it consumed and moves its
 * own tail, which it publishes for the producers' fullness test. A full
 * ring drops the record and counts it in lost: the rank never waits.
 *
 * Everything in the region is the rank's to write at any time: the agent
 * keeps its own copy of the geometry and of tail, reads head once per
 * drain and never trusts a record it has not copied and checked. What the
 * rank can do to the ring is done to its own records only.
 *
 * This is not the on-disk record: the agent turns each into a struct
 * dc_event. A change here changes DC_RING_VERSION, not the node format.
 */
#ifndef DC_RANK_RING_H
#define DC_RANK_RING_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "dc_event.h"

#define DC_RING_MAGIC 0x474e5244u /* "DRNG" */
#define DC_RING_VERSION 5 /* 2: HDF5 calls, a parent handle, a 64-bit ret; 3: H5Oopen, H5Oclose, H5Dflush;
			     4: H5Idec_ref, 128 functions, STDIO calls, DC_RING_REC_NAMES;
			     5: the _FORTIFY_SOURCE STDIO calls */
/* The header's room: slots start on the page after it. */
#define DC_RING_HEAD_SIZE 4096
/* The memfd's name: the agent leaves the calls on it out of the trace
 * (the rank made them to record, not for its own I/O). */
#define DC_RING_MEMFD_NAME "datacrumbs-ring"
#define DC_RING_SLOTS_DEFAULT (1u << 15) /* 2.5 MiB of records */
#define DC_RING_SLOTS_MAX (1u << 20)
/* Set in a record's commit word once the record and its path are whole. */
#define DC_RING_COMMITTED 0x80000000u
#define DC_RING_MAX_FUNCS 128 /* wrapper_funcs.h's list fits */
/* A set of the wrapper's functions (enum dc_wrapper_func): bit f % 64 of
 * word f / 64. */
struct dc_funcs {
	__u64 w[DC_RING_MAX_FUNCS / 64];
};

static inline bool dc_funcs_has(const struct dc_funcs *s, unsigned f)
{
	return f < DC_RING_MAX_FUNCS && (s->w[f / 64] >> (f % 64) & 1);
}

static inline void dc_funcs_add(struct dc_funcs *s, unsigned f)
{
	if (f < DC_RING_MAX_FUNCS)
		s->w[f / 64] |= 1ull << (f % 64);
}

static inline bool dc_funcs_any(const struct dc_funcs *s)
{
	for (unsigned i = 0; i < DC_RING_MAX_FUNCS / 64; i++)
		if (s->w[i])
			return true;
	return false;
}
/* Records of the ring are in the rank's mode: the agent sets it. */
enum dc_ring_mode {
	DC_RING_OFF = 0,     /* the agent takes nothing from this rank */
	DC_RING_TRACE = 1,   /* every call a record */
	DC_RING_PROFILE = 2, /* totals per function in the header, no records */
};

/* One slot; a record's path fills the next DC_RING_PATH_SLOTS(path_len). */
struct dc_ring_rec {
	__u32 commit;   /* DC_RING_COMMITTED | slots taken (this one and the path's) */
	__u32 tid;
	__u16 func;     /* enum dc_wrapper_func */
	__u16 cpu;
	__u16 path_len; /* bytes of path that follow, with the NUL; 0 for none */
	__u16 flags;    /* DC_RING_REC_* */
	__s64 ret;      /* the MPI return code; HDF5's herr_t or the hid_t made */
	__u64 ts;       /* entry, CLOCK_MONOTONIC ns (the BPF side's clock) */
	__u64 dur;
	__u64 req;      /* bytes asked for: count x the datatype's size (HDF5:
			   the selection's elements x the memory type's size) */
	__u64 bytes;    /* bytes moved, from the call's status (HDF5: req once
			   the call succeeded) */
	__s64 offset;   /* the offset argument, in etypes of the view */
	__u64 handle;   /* the MPI_File or hid_t the call named or made */
	__u64 parent;   /* HDF5: the file or group a dataset or group is made or
			   opened in (its loc_id); 0 for none */
};
#define DC_RING_REC_OFFSET 0x1 /* offset is set */
/* path is the kernel's name of a stream's descriptor, one the wrapper saw
 * no open of (stdout): the handle goes by it from this call on. */
#define DC_RING_REC_NAMES 0x2
#define DC_RING_SLOT_SIZE sizeof(struct dc_ring_rec)
#define DC_RING_PATH_SLOTS(len) (((len) + DC_RING_SLOT_SIZE - 1) / DC_RING_SLOT_SIZE)
#define DC_RING_REC_MAX_SLOTS (1 + DC_RING_PATH_SLOTS(DC_PATH_MAX))
_Static_assert(DC_PATH_MAX < (1 << 16), "a path's length fits path_len");
_Static_assert(DC_RING_REC_MAX_SLOTS < 0xffff, "a record's slot count fits its commit word");

struct dc_ring_counter {
	__u64 count;
	__u64 time_ns;
	__u64 bytes;
};

struct dc_ring_head {
	/* Written by the rank once, before it passes the ring on. */
	__u32 magic;
	__u32 version;
	__u32 slot_size;
	__u32 nslots;
	/* Written by the agent when it takes the ring, before it answers. */
	__u32 mode;     /* enum dc_ring_mode */
	__u32 pad;
	struct dc_funcs funcs_on; /* record the functions in it */
	/* The rank's producers. */
	__u64 head __attribute__((aligned(64))); /* slots reserved so far */
	__u64 lost;                              /* records dropped: ring full */
	/* The producers' last reading of tail, never above it: a put reads the
	 * agent's line only when this says the ring is full. The agent never
	 * reads it; the layout of what it reads is unchanged. */
	__u64 tail_seen;
	/* The agent. */
	__u64 tail __attribute__((aligned(64))); /* slots consumed so far */
	/* PROFILE: the rank's totals per function, added to atomically. */
	struct dc_ring_counter counters[DC_RING_MAX_FUNCS] __attribute__((aligned(64)));
};
_Static_assert(sizeof(struct dc_ring_head) <= DC_RING_HEAD_SIZE, "the header fits its page");

/* ---- the rank's side ---- */

/* A new ring of nslots slots (a power of two up to DC_RING_SLOTS_MAX) in a
 * sealed memfd: the mapping, and the fd in *fd. NULL with errno set. */
struct dc_ring_head *dc_ring_create(unsigned nslots, int *fd);
/* TRACE: maps every page of the slots into the rank before its first
 * record, so that no call pays a page fault of the ring (a shared memory
 * page is allocated and zeroed on its first write). Before the first
 * dc_ring_put only. */
void dc_ring_prefault(struct dc_ring_head *h);
void dc_ring_destroy(struct dc_ring_head *h);
/* Appends r (its commit word is set here) and its path; -1 when the ring
 * has no room (counted in lost). Any thread may call it. */
int dc_ring_put(struct dc_ring_head *h, const struct dc_ring_rec *r, const char *path, size_t path_len);
/* PROFILE: adds one call to function f's totals. */
void dc_ring_count(struct dc_ring_head *h, unsigned f, __u64 time_ns, __u64 bytes);

/* ---- the agent's side ---- */

struct dc_ring_reader;

/* Takes the rank's ring from fd (kept; closed by dc_ring_reader_free):
 * checks that it is a sealed memfd of a size its header agrees with, maps
 * it. NULL with the reason in why. */
struct dc_ring_reader *dc_ring_reader_open(int fd, char *why, size_t whylen);
/* Why a ring that is no memfd, or one without the seal, is turned down. */
#define DC_RING_NOT_MEMFD "the rank's ring is not a memfd sealed against shrinking"
/* Tells the rank what to record. */
void dc_ring_reader_start(struct dc_ring_reader *r, enum dc_ring_mode mode, const struct dc_funcs *funcs_on);
enum dc_ring_next {
	DC_RING_EMPTY = 0,   /* nothing committed yet */
	DC_RING_RECORD = 1,  /* *out (and path, when path_len) filled */
	DC_RING_DAMAGED = 2, /* the ring contradicts itself: nothing more is read from it */
};
/* The next record, checked: path has room for DC_PATH_MAX bytes and ends
 * in a NUL when out->path_len is set; out->func < DC_WRAPPER_NFUNCS. */
enum dc_ring_next dc_ring_reader_next(struct dc_ring_reader *r, struct dc_ring_rec *out, char *path);
/* Whether a record is committed at the reader's tail, and when it says
 * it ended (ts + dur, as the rank wrote it, unchecked: it tells only when
 * to take the record; 0 for a ring found damaged, to be taken at once). */
bool dc_ring_reader_peek_end(struct dc_ring_reader *r, __u64 *end);
/* Whether the rank has reserved a quarter of the ring or more (or says
 * so): the agent then takes the whole ring, lest it fill before the next
 * look (a loop of buffered STDIO calls fills one in a few ms). */
bool dc_ring_reader_filling(struct dc_ring_reader *r);
/* PROFILE: the rank's totals for function f (0 for f out of range). */
struct dc_ring_counter dc_ring_reader_counter(const struct dc_ring_reader *r, unsigned f);
/* Records the rank says it dropped; records taken; why it was found damaged. */
__u64 dc_ring_reader_lost(const struct dc_ring_reader *r);
__u64 dc_ring_reader_taken(const struct dc_ring_reader *r);
const char *dc_ring_reader_problem(const struct dc_ring_reader *r);
void dc_ring_reader_free(struct dc_ring_reader *r);

#endif
