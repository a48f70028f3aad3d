// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Block level: a request from issue to completion. Issue runs in the
 * context of whoever submits it, which is the traced process for direct
 * I/O and for the writeback its fsync starts; background writeback by
 * kernel threads is not the job's and is not attributed. Completion runs
 * in interrupt context: the request is found again by device and sector.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "emit.bpf.h"

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

SEC("tracepoint/block/block_rq_issue")
int dc_block_issue(struct trace_event_raw_block_rq *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rq_key k = { .dev = ctx->dev, .sector = ctx->sector };
	struct rq_start v = { .bytes = (__u64)ctx->nr_sector << 9, .pid = id >> 32, .tid = (__u32)id };

	if (!dc_is_tracked(id >> 32) || !v.bytes)
		return 0;
	v.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&dc_block_rqs, &k, &v, BPF_ANY))
		dc_count(DC_STAT_MAP_FULL);
	return 0;
}

SEC("tracepoint/block/block_rq_complete")
int dc_block_complete(struct trace_event_raw_block_rq_completion *ctx)
{
	struct rq_key k = { .dev = ctx->dev, .sector = ctx->sector };
	struct rq_start *v = bpf_map_lookup_elem(&dc_block_rqs, &k), s;

	if (!v)
		return 0;
	s = *v;
	bpf_map_delete_elem(&dc_block_rqs, &k);
	dc_emit_kernel(DC_KFUNC_BLOCK_RQ, s.pid, s.tid, s.ts, bpf_ktime_get_ns() - s.ts, s.bytes,
		       (__s64)(k.sector << 9), ctx->error);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
