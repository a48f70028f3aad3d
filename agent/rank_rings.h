/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rings of the ranks and preloaded processes on this node
 * (rank_ring.h): taken when one registers, drained into the node file as
 * the agent runs, counters snapshotted in profile mode, let go when the
 * rank finalizes or the process exits. A ring that
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
struct dc_funcs;

/* mode: enum dc_mode; asked and ids as dc_probes_wrapper() gives them
 * (none asked: no wrapper set, every ring is turned down). */
struct dc_rank_rings *dc_rank_rings_new(struct dc_recorder *rec, struct dc_writer *w, int mode,
					const struct dc_funcs *asked, const __u32 *ids);
/* Takes pid's ring from fd (closed when it is turned down; -1: the fd sent
 * was no shared-memory file), and pidfd, which names the process (-1: none;
 * taken over): 0, with what the process is told in note; -1 with why (the
 * registration itself stands). */
int dc_rank_rings_add(struct dc_rank_rings *rr, __u32 pid, int fd, int pidfd, char *note, size_t len);
/* Whether any rank's ring is held (the agent then polls more often). */
bool dc_rank_rings_active(const struct dc_rank_rings *rr);
/* Whether a pass took many records lately, or a ring was just taken (the
 * agent then polls more often: rings wake no one, and a full one drops
 * records). */
bool dc_rank_rings_busy(const struct dc_rank_rings *rr);
/*
 * A pass takes the records that ended by a time, in step with the BPF
 * side's records of the same span, so that the node file's chunks get
 * calls nearly in order (a chunk far from it is sorted whole):
 * dc_rank_rings_begin(), then for each BPF record dc_rank_rings_upto(its
 * end), which takes first the rank records that ended by then, then
 * dc_rank_rings_end(the pass's horizon), which takes the rest that ended
 * by it (ALL: every one). Records end later stay in their rings.
 */
void dc_rank_rings_begin(struct dc_rank_rings *rr);
void dc_rank_rings_upto(struct dc_rank_rings *rr, __u64 upto);
void dc_rank_rings_end(struct dc_rank_rings *rr, __u64 upto);
/* Profile mode: each rank's totals per function, as counters at ts. */
void dc_rank_rings_snapshot(struct dc_rank_rings *rr, __u64 ts);
/* pid finalized: its ring drained (and counted) a last time and let go. */
void dc_rank_rings_finish(struct dc_rank_rings *rr, __u32 pid, __u64 ts);
/* At most once a second, outside a pass: the rings of processes that
 * ended without a word (killed, crashed) are drained and let go. */
void dc_rank_rings_sweep(struct dc_rank_rings *rr, __u64 ts);
/* Drains and reports every ring left (ranks that never finalized). */
void dc_rank_rings_free(struct dc_rank_rings *rr, __u64 ts);

#endif
