// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel level: the file system calls, through the sys_enter/sys_exit
 * tracepoints (tp_btf: typed arguments, read without helpers). dc_syscalls
 * maps a system call number to the cookie of its probe (0: not traced). Two
 * links serve every system call: they attach and detach at once, where one
 * perf-event tracepoint per call took ~30 ms each to detach. A system call
 * outside the traced set costs one array lookup; a traced one, a task
 * storage lookup more, and of a process outside the job a hash lookup more.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "emit.bpf.h"

SEC("tp_btf/sys_enter")
int BPF_PROG(dc_sys_enter, struct pt_regs *regs, long nr)
{
	__u32 key = nr;
	struct dc_sysframe *f;
	__u64 *cookie;

	/* The array first: most system calls of most processes stop there. */
	cookie = bpf_map_lookup_elem(&dc_syscalls, &key);
	if (!cookie || !*cookie || !(f = dc_traced_storage(&dc_sysframes)))
		return 0;
	/* tp_btf reads the registers directly, with no probe_read helper each. */
	f->cookie = *cookie;
	f->args[0] = regs->di;
	f->args[1] = regs->si;
	f->args[2] = regs->dx;
	f->args[3] = regs->r10; /* the fourth system call argument */
	f->args[4] = regs->r8;
	f->args[5] = regs->r9;
	f->ts = bpf_ktime_get_ns();
	return 0;
}

/* Only a traced call left a frame: no tracking lookup for anyone else. */
SEC("tp_btf/sys_exit")
int BPF_PROG(dc_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct dc_sysframe *f = bpf_task_storage_get(&dc_sysframes, task, 0, 0);
	__u64 ts;

	if (!f || !f->ts)
		return 0;
	ts = f->ts;
	f->ts = 0;
	dc_finish(task, f->cookie & ~DC_COOKIE_ON, ts, f->args, ret, 0, DC_EV_SYSCALL);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
