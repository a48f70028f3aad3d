/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The records a process's wrappers put into its shared ring (rank_ring.h),
 * which the agent drains: libdcpmpi.so's MPI-IO, HDF5 and STDIO calls in a
 * rank, libdcpreload.so's HDF5 and STDIO calls in any process. No MPI
 * here: the preload is for processes that have none.
 */
#ifndef DC_RECORD_H
#define DC_RECORD_H

#include <linux/types.h>

#include "clock.h"

struct dc_ring_head;

/* One call being recorded. */
struct call {
	int f; /* enum dc_wrapper_func */
	__u64 ts;
	__u64 req, bytes;
	int has_offset;
	long long offset;
	__u64 handle;
	__u64 parent; /* HDF5: the loc_id a dataset or group is made or opened in */
	const char *path;
	int names;    /* path names the handle from now on (DC_RING_REC_NAMES) */
};

/* Records into ring what the agent asked for in its header (mode and
 * functions), from now on. */
void dc_record_start(struct dc_ring_head *ring);
/* Nothing more is recorded. */
void dc_record_stop(void);
/* While nothing is recorded, the next wrapped call runs start first, once
 * (a forked child's session begins at its first call, not in fork). */
void dc_record_start_later(void (*start)(void));

/* Whether the agent asked for function f: when not, a wrapper only calls on. */
int dc_wrap_want(int f);

/* The next definition of name, after this library's (dlsym RTLD_NEXT),
 * looked up once into *cache; NULL where there is none. */
void *dc_next(const char *name, void **cache);

/* A record of c, returning rc at end, into the ring (a count in profile
 * mode). */
void dc_record_put(const struct call *c, long long rc, __u64 end);

/* After dc_record_start: the standard streams' records carry their names
 * again, and the variadic calls asked for are recorded (stdio.c). */
void dc_stdio_start(void);
/* Before dc_record_stop. */
void dc_stdio_stop(void);
/* Before a session started later (dc_record_start_later): every variadic
 * call reaches the wrappers, so that the first of them starts it. */
void dc_stdio_arm(void);

#endif
