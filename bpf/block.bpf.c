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
 * device and sector. Its program is a raw tracepoint's: a tracepoint
 * program is skipped, silently, when its interrupt lands while any other
 * tracepoint or kprobe program runs on that CPU (they share one per-CPU
 * guard, bpf_prog_active) -- the issue of the request after it, a page
 * cache event -- and the request would be lost; a raw tracepoint program
 * is kept from running into itself only.
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

/* A request as older kernels (5.10) lay it out: its disk its own. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

/* Set from the kernel's BTF: block_rq_complete passes a blk_status_t
 * (newer kernels) rather than an errno (5.10). */
const volatile bool dc_rq_passes_status = true;

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

/* The device number the block tracepoints' records carry: disk_devt(). */
static __always_inline __u32 rq_dev(struct request *rq)
{
	struct gendisk *disk;

	if (bpf_core_field_exists(struct request___old, rq_disk))
		disk = BPF_CORE_READ((struct request___old *)rq, rq_disk);
	else
		disk = BPF_CORE_READ(rq, q, disk);
	if (!disk)
		return 0;
	return (__u32)BPF_CORE_READ(disk, major) << 20 | (__u32)BPF_CORE_READ(disk, first_minor);
}

/* blk_status_to_errno(): the kernel's table (block/blk-core.c blk_errors),
 * for the statuses a completion can carry; anything else is an I/O error. */
static __always_inline int status_errno(__u8 status)
{
	switch (status) {
	case 0: return 0;
	case 1: return -95;  /* NOTSUPP: EOPNOTSUPP */
	case 2: return -110; /* TIMEOUT: ETIMEDOUT */
	case 3: return -28;  /* NOSPC: ENOSPC */
	case 4: return -67;  /* TRANSPORT: ENOLINK */
	case 5: return -121; /* TARGET: EREMOTEIO */
	case 6: return -52;  /* NEXUS, RESV_CONFLICT: EBADE */
	case 7: return -61;  /* MEDIUM: ENODATA */
	case 8: return -84;  /* PROTECTION: EILSEQ */
	case 9: return -12;  /* RESOURCE: ENOMEM */
	case 12: return -11; /* AGAIN: EAGAIN */
	case 13: return -16; /* DEV_RESOURCE: EBUSY */
	case 17: return -19; /* OFFLINE: ENODEV */
	default: return -5;  /* IOERR and the rest: EIO */
	}
}

/* block_rq_complete(struct request *rq, error, unsigned int nr_bytes) */
SEC("raw_tp/block_rq_complete")
int dc_block_complete(struct bpf_raw_tracepoint_args *ctx)
{
	struct request *rq = (struct request *)ctx->args[0];
	struct rq_key k = { .dev = rq_dev(rq), .sector = BPF_CORE_READ(rq, __sector) };
	struct rq_start *v, s;
	int error;

	v = bpf_map_lookup_elem(&dc_block_rqs, &k);
	if (!v)
		return 0;
	s = *v;
	bpf_map_delete_elem(&dc_block_rqs, &k);
	error = dc_rq_passes_status ? status_errno((__u8)ctx->args[1]) : (int)ctx->args[1];
	dc_emit_kernel(DC_KFUNC_BLOCK_RQ, s.pid, s.tid, s.ts, bpf_ktime_get_ns() - s.ts, s.bytes,
		       (__s64)(k.sector << 9), error);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
