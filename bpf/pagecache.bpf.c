// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Page cache: pages (folios) a traced process brings into the cache (reads
 * that missed, new data written) or takes out of it (truncation, unlink).
 * The offset is the page's in the file; ret holds the file's inode number.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "emit.bpf.h"

static __always_inline int page_event(struct trace_event_raw_mm_filemap_op_page_cache *ctx, __u32 kfunc)
{
	__u64 id = bpf_get_current_pid_tgid();
	/* A folio's order, where the record has one (not 5.10's): else a page. */
	__u64 bytes = 4096ull << (bpf_core_field_exists(ctx->order) ? ctx->order & 15 : 0);

	if (!dc_is_tracked(id >> 32))
		return 0;
	dc_emit_kernel(kfunc, id >> 32, (__u32)id, bpf_ktime_get_ns(), 0, bytes, (__s64)(ctx->index << 12),
		       (__s64)ctx->i_ino);
	return 0;
}

SEC("tracepoint/filemap/mm_filemap_add_to_page_cache")
int dc_page_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	return page_event(ctx, DC_KFUNC_PAGE_ADD);
}

SEC("tracepoint/filemap/mm_filemap_delete_from_page_cache")
int dc_page_delete(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	return page_event(ctx, DC_KFUNC_PAGE_DELETE);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
