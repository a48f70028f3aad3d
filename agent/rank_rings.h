/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The MPI-IO rings of the ranks on this node (rank_ring.h): taken when a
 * rank registers, drained into the node file as the agent runs, counters
 * snapshotted in profile mode, let go when the rank finalizes. A ring that
 * contradicts itself is dropped with one line on stderr; records a rank
 * could not fit are counted and reported.
 */
#ifndef DC_RANK_RINGS_H
#define DC_RANK_RINGS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct dc_recorder;
struct dc_writer;
struct dc_rank_rings;

/* mode: enum dc_mode; mask and ids as dc_probes_wrapper() gives them
 * (mask 0: no wrapper set, every ring is turned down). */
struct dc_rank_rings *dc_rank_rings_new(struct dc_recorder *rec, struct dc_writer *w, int mode, __u64 mask,
					const __u32 *ids);
/* Takes pid's ring from fd (closed when it is turned down): 0, with what
 * the rank is told in note; -1 with why (the registration itself stands). */
int dc_rank_rings_add(struct dc_rank_rings *rr, __u32 pid, int fd, char *note, size_t len);
/* Whether any rank's ring is held (the agent then polls more often). */
bool dc_rank_rings_active(const struct dc_rank_rings *rr);
/* Everything committed in every ring, into the node file. */
void dc_rank_rings_drain(struct dc_rank_rings *rr);
/* Profile mode: each rank's totals per function, as counters at ts. */
void dc_rank_rings_snapshot(struct dc_rank_rings *rr, __u64 ts);
/* pid finalized: its ring drained (and counted) a last time and let go. */
void dc_rank_rings_finish(struct dc_rank_rings *rr, __u32 pid, __u64 ts);
/* Drains and reports every ring left (ranks that never finalized). */
void dc_rank_rings_free(struct dc_rank_rings *rr, __u64 ts);

#endif
