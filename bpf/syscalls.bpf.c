// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel level: the file system calls, through the raw sys_enter/sys_exit
 * tracepoints. dc_syscalls maps a system call number to the cookie of its
 * probe (0: not traced). Two links serve every system call: they attach and
 * detach at once, where one perf-event tracepoint per call took ~30 ms each
 * to detach. A process outside the job pays one map lookup per system call.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "emit.bpf.h"

SEC("raw_tp/sys_enter")
int dc_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, nr = ctx->args[1];
	struct dc_sysframe f;
	__u64 *cookie;

	if (!dc_is_tracked(id >> 32))
		return 0;
	cookie = bpf_map_lookup_elem(&dc_syscalls, &nr);
	if (!cookie || !*cookie)
		return 0;
	f.cookie = *cookie;
	f.args[0] = PT_REGS_PARM1_CORE_SYSCALL(regs);
	f.args[1] = PT_REGS_PARM2_CORE_SYSCALL(regs);
	f.args[2] = PT_REGS_PARM3_CORE_SYSCALL(regs);
	f.args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
	f.args[4] = PT_REGS_PARM5_CORE_SYSCALL(regs);
	f.args[5] = BPF_CORE_READ(regs, r9);
	f.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&dc_sysframes, &tid, &f, BPF_ANY))
		dc_count(DC_STAT_STACK_FULL);
	return 0;
}

SEC("raw_tp/sys_exit")
int dc_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct dc_sysframe *f;
	__u64 ts;

	if (!dc_is_tracked(id >> 32))
		return 0;
	f = bpf_map_lookup_elem(&dc_sysframes, &tid);
	if (!f || !f->ts)
		return 0;
	ts = f->ts;
	f->ts = 0;
	dc_finish(f->cookie & ~DC_COOKIE_ON, ts, f->args, ctx->args[1], 0, DC_EV_SYSCALL);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
