// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Block level: a request from issue to completion, for the process that
 * submitted its data: a traced process's direct I/O and the writeback its
 * fsync starts; background writeback by kernel threads (the flusher,
 * jbd2) is not the job's and is not attributed. A request is issued in its
 * submitter's context, or later by a kblockd worker when the device's
 * queue was full: so the submitter of each bio is noted as it is queued,
 * and a request a worker issues is the submitter's of its first bio.
 * Completion runs in interrupt context: the request is found again by
 * device and sector.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "emit.bpf.h"

/* block_bio_queue's record, as older kernels (5.10) name it. */
struct trace_event_raw_block_bio_queue___old {
	__u32 dev;
	__u64 sector;
} __attribute__((preserve_access_index));

/* block_rq_complete's record, as older kernels (5.10) name and lay it out. */
struct trace_event_raw_block_rq_complete___old {
	__u32 dev;
	__u64 sector;
	int error;
} __attribute__((preserve_access_index));

struct rq_key {
	__u32 dev;
	__u32 pad;
	__u64 sector;
};

struct rq_start {
	__u64 ts;
	__u64 bytes;
	__u32 pid, tid;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rq_key);
	__type(value, struct rq_start);
} dc_block_rqs SEC(".maps");

struct owner {
	__u32 pid, tid;
};

/* Who queued the bio at (device, sector): the traced submitters only, and
 * the oldest forgotten first (the later bios of a merged request are never
 * looked up). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rq_key);
	__type(value, struct owner);
} dc_block_owners SEC(".maps");

SEC("tracepoint/block/block_bio_queue")
int dc_block_queue(struct trace_event_raw_block_bio *ctx)
{
	struct trace_event_raw_block_bio_queue___old *old = (void *)ctx;
	__u64 id = bpf_get_current_pid_tgid();
	struct owner o = { id >> 32, (__u32)id };
	struct rq_key k = {};

	if (!dc_is_tracked(id >> 32))
		return 0;
	if (bpf_core_type_exists(struct trace_event_raw_block_bio)) {
		k.dev = BPF_CORE_READ(ctx, dev);
		k.sector = BPF_CORE_READ(ctx, sector);
	} else {
		k.dev = BPF_CORE_READ(old, dev);
		k.sector = BPF_CORE_READ(old, sector);
	}
	bpf_map_update_elem(&dc_block_owners, &k, &o, BPF_ANY);
	return 0;
}

/* A bio split to the queue's limits: its tail is a request of its own,
 * which a worker may issue, so its sector gets the same owner. */
SEC("tracepoint/block/block_split")
int dc_block_split(struct trace_event_raw_block_split *ctx)
{
	struct rq_key k = { .dev = BPF_CORE_READ(ctx, dev), .sector = BPF_CORE_READ(ctx, sector) };
	__u64 id = bpf_get_current_pid_tgid();
	struct owner o = { id >> 32, (__u32)id }, *known;

	known = bpf_map_lookup_elem(&dc_block_owners, &k);
	if (known)
		o = *known;
	else if (!dc_is_tracked(id >> 32))
		return 0;
	k.sector = BPF_CORE_READ(ctx, new_sector);
	bpf_map_update_elem(&dc_block_owners, &k, &o, BPF_ANY);
	return 0;
}

SEC("tracepoint/block/block_rq_issue")
int dc_block_issue(struct trace_event_raw_block_rq *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rq_key k = { .dev = ctx->dev, .sector = ctx->sector };
	struct rq_start v = { .bytes = (__u64)ctx->nr_sector << 9, .pid = id >> 32, .tid = (__u32)id };
	struct owner *o;

	if (!v.bytes)
		return 0;
	/* Issued by its submitter, or by a worker for a traced submitter. */
	o = bpf_map_lookup_elem(&dc_block_owners, &k);
	if (o) {
		v.pid = o->pid;
		v.tid = o->tid;
		bpf_map_delete_elem(&dc_block_owners, &k);
	} else if (!dc_is_tracked(id >> 32)) {
		return 0;
	}
	v.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&dc_block_rqs, &k, &v, BPF_ANY))
		dc_count(DC_STAT_MAP_FULL);
	return 0;
}

SEC("tracepoint/block/block_rq_complete")
int dc_block_complete(struct trace_event_raw_block_rq_completion *ctx)
{
	struct trace_event_raw_block_rq_complete___old *old = (void *)ctx;
	struct rq_key k;
	struct rq_start *v, s;
	int error;

	/* Read through helpers: the two layouts' offsets are not ctx loads the
	 * verifier takes once clang shares the address arithmetic. */
	if (bpf_core_type_exists(struct trace_event_raw_block_rq_completion)) {
		k = (struct rq_key){ .dev = BPF_CORE_READ(ctx, dev), .sector = BPF_CORE_READ(ctx, sector) };
		error = BPF_CORE_READ(ctx, error);
	} else {
		k = (struct rq_key){ .dev = BPF_CORE_READ(old, dev), .sector = BPF_CORE_READ(old, sector) };
		error = BPF_CORE_READ(old, error);
	}
	v = bpf_map_lookup_elem(&dc_block_rqs, &k);

	if (!v)
		return 0;
	s = *v;
	bpf_map_delete_elem(&dc_block_rqs, &k);
	dc_emit_kernel(DC_KFUNC_BLOCK_RQ, s.pid, s.tid, s.ts, bpf_ktime_get_ns() - s.ts, s.bytes,
		       (__s64)(k.sector << 9), error);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
