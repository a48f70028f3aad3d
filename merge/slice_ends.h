/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The slices a packet sequence has begun and not yet ended, by end time: a
 * writer whose format has no complete events (Perfetto's TrackEvent)
 * writes a call's begin when it comes and its end once no earlier packet
 * of its sequence can follow, so that every timestamp delta is >= 0. Ties
 * go to the slice begun last: a nested call ends before the call around
 * it. Most hold a call or two (a thread's), so they start at two.
 */
#ifndef DC_SLICE_ENDS_H
#define DC_SLICE_ENDS_H

#include <stddef.h>
#include <stdint.h>

struct dc_slice_end {
	uint64_t ns, seq, track;
};

/* A min-heap; zero-initialised is empty. */
struct dc_slice_ends {
	struct dc_slice_end *v;
	size_t n, cap;
	uint64_t seq; /* pushes so far: the order of begins */
};

/* 0, or -1 out of memory. */
int dc_slice_ends_push(struct dc_slice_ends *h, uint64_t ns, uint64_t track);
/* Takes the first end at or before ns into *out: 1, or 0 when there is none. */
int dc_slice_ends_pop_by(struct dc_slice_ends *h, uint64_t ns, struct dc_slice_end *out);
void dc_slice_ends_free(struct dc_slice_ends *h);

#endif
