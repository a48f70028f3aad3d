/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF side's records: one ring buffer per CPU (bpf/maps.bpf.h's
 * dc_rings), read by dc-agent in time order: each ring is in the order its
 * CPU wrote it, and the agent merges the rings where they lie, in place,
 * handing on the oldest head of all, so nothing is copied or sorted.
 * Order matters to the recorder: an fd names the file of the open that
 * came last before it, so a read must not be handled before the open of
 * its file, nor after a later close and reopen of the fd, however the
 * threads moved between CPUs.
 */
#ifndef DC_EVENT_RINGS_H
#define DC_EVENT_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct dc_event_rings;

/* Each record, in time order; data is the ring's (read-only), good until
 * the call returns; time is time_of's for it. */
typedef void (*dc_event_fn)(void *ctx, void *data, size_t len, __u64 time);

/* How many rings and each one's size for ncpus CPUs and --ringbuf-mb
 * (the whole, shared out; each at least DC_RING_MIN_BYTES). */
#define DC_RING_MIN_BYTES (256u << 10)

/*
 * A ring wakes the agent when a record takes it past 1/DC_RING_WAKE_SHARE
 * of its size (bpf/emit.bpf.h), and then the agent takes all it holds;
 * below that the agent's timer takes what is old enough. A lower mark
 * woke it for little: it took only the records past the merge's slack,
 * the ring stayed at the mark, and the next record woke it again
 * (700-1,400 wake-ups a second on two write loops, against 20).
 */
#define DC_RING_WAKE_SHARE 2

/*
 * How long a record may take between its program's clock read and its
 * commit (the program preempted, or its virtual CPU stopped): records stay
 * in their ring until they are this old, so that one still in the making
 * on another CPU goes before them. The ranks' rings are taken to the same
 * horizon, so that both kinds reach the node file in step.
 */
#define DC_RING_SLACK_NS (20 * 1000 * 1000ull)
void dc_event_rings_size(int ringbuf_mb, int ncpus, __u32 *nrings, __u32 *bytes);

/*
 * Creates the rings and puts them into the loaded outer map (its fd), so
 * that a program finds its CPU's ring from the first event. Each record
 * goes to handle(ctx, data, len) in time order; time_of tells a record's
 * time. NULL with the reason in err.
 */
struct dc_event_rings *dc_event_rings_new(int outer_fd, __u32 nrings, __u32 bytes,
					  __u64 (*time_of)(const void *data, size_t len), dc_event_fn handle,
					  void *ctx, char *err, size_t errlen);
void dc_event_rings_free(struct dc_event_rings *r);

/* Adds each ring (readable past its wake-up mark) to epfd. */
int dc_event_rings_watch(struct dc_event_rings *r, int epfd);

/*
 * Hands on, in time order, at most max records (all: every one, the end of
 * the trace) of those no ring can still hold an older one than: records
 * stay in their ring until they are DC_RING_SLACK_NS old. Returns how many.
 */
long dc_event_rings_consume(struct dc_event_rings *r, bool all, unsigned max);

/* Records handed on after a newer one (a ring out of order where its
 * writer was preempted between its clock read and its commit). */
unsigned long long dc_event_rings_late(const struct dc_event_rings *r);

#endif
