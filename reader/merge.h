/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The time-ordered walk over every event and counter of a job. Each chunk
 * is a sorted run; a run is read only when the walk reaches its first
 * timestamp and freed when it is used up, so memory holds the chunks that
 * overlap in time, whatever the size of the trace.
 */
#ifndef DC_MERGE_H
#define DC_MERGE_H

#include "nodeset.h"

struct dc_merge_item {
	const struct dc_node *node;
	unsigned type; /* DC_CHUNK_EVENTS or DC_CHUNK_COUNTERS */
	const void *rec; /* struct dc_event or struct dc_counter */
	__u64 wall_ns;   /* on the job's clock */
};

struct dc_merge;

struct dc_merge *dc_merge_new(struct dc_job *job);
/* 1 with the next item (its record valid until the next call), 0 at the
 * end, -1 when memory runs out. A chunk that fails its checksum is skipped
 * with a warning naming it. */
int dc_merge_next(struct dc_merge *m, struct dc_merge_item *it);
/* Records taken so far (for progress) and the most chunks held at once. */
unsigned long long dc_merge_done(const struct dc_merge *m);
size_t dc_merge_peak_chunks(const struct dc_merge *m);
void dc_merge_free(struct dc_merge *m);

#endif
