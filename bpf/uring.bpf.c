// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * io_uring requests: each read, write, fsync, open... that a traced process
 * puts in a ring, from its submission (io_uring_submit_req, or
 * io_uring_submit_sqe before Linux 6.3: whichever passes the request
 * first; the agent attaches to it by name) to its completion
 * (io_uring_complete), charged to the thread that
 * submitted it: the process's own, or its SQPOLL thread, which is one of
 * the process's threads. Its file is the one the kernel used (fixed files
 * too), named as a descriptor's file is; its result is ret and, for the
 * requests that move data (the agent's dc_config.uring_moves), its bytes.
 * Raw tracepoints: io_uring_complete passes the completion's fields on
 * some kernels and the completion itself on others (dc_uring_cqe, from
 * the kernel's BTF).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "namers.bpf.h"

/* io_uring_complete's third argument is the struct io_uring_cqe *. */
const volatile bool dc_uring_cqe = false;

struct uring_start {
	__u64 ts;
	__u32 pid, tid;
};

/* Requests submitted and not completed yet, by their address. LRU: one
 * that never completes (its ring torn down) is pushed out, not kept. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct uring_start);
} dc_uring_reqs SEC(".maps");

SEC("raw_tp")
int dc_uring_submit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), req = ctx->args[0];
	struct uring_start s = { .pid = id >> 32, .tid = (__u32)id };

	if (dc_stopped || !dc_is_tracked(id >> 32))
		return 0;
	s.ts = dc_now();
	if (bpf_map_update_elem(&dc_uring_reqs, &req, &s, BPF_ANY))
		dc_count(DC_STAT_MAP_FULL);
	return 0;
}

SEC("raw_tp")
int dc_uring_complete(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 key = ctx->args[1], now = dc_now(), file = 0, inode = 0, bytes;
	struct io_kiocb *req = (void *)key;
	struct dc_config *cfg = dc_settings();
	struct uring_start *s, start;
	__u32 op, func;
	int res;

	s = bpf_map_lookup_elem(&dc_uring_reqs, &key);
	if (!s || !cfg)
		return 0;
	start = *s;
	bpf_map_delete_elem(&dc_uring_reqs, &key);
	op = BPF_CORE_READ(req, opcode) & (DC_URING_OPS - 1);
	func = cfg->uring_func[op];
	if (!func)
		return 0; /* an operation the agent does not name */
	if (dc_uring_cqe)
		res = BPF_CORE_READ((struct io_uring_cqe *)ctx->args[2], res);
	else
		res = (int)ctx->args[3];
	bytes = res > 0 && (cfg->uring_moves >> op & 1) ? res : 0;
	/* Its file, whose path is told first if the agent has none, timed
	 * before the request's end so that the agent's merge puts it first. */
	if (dc_mode == DC_MODE_TRACE) {
		file = (__u64)BPF_CORE_READ(req, file);
		inode = file ? dc_file_inode(file) : 0;
		if (file && !dc_file_known(file, inode))
			dc_file_send(file, inode, dc_file_walk(file, false, 0), now - 1);
	}
	dc_emit_kernel_event(func, start.pid, start.tid, start.ts, now - start.ts, bytes, 0, res, 0, file, inode);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
