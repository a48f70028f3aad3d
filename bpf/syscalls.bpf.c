// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel level: the file system calls, through the sys_enter/sys_exit
 * tracepoints: tp_btf (typed arguments, read without helpers) where the
 * kernel has it, else raw_tp (registers read through a helper). dc-agent
 * loads one of the two pairs. dc_syscalls maps a system call number to the
 * cookie of its probe (0: not traced). Two links serve every system call:
 * they attach and detach at once, where one perf-event tracepoint per call
 * took ~30 ms each to detach. A system call outside the traced set costs
 * one array lookup; a traced one, a thread-state lookup more, and of a
 * process outside the job a hash lookup more.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "namers.bpf.h"

/* The namers of system calls (namers.bpf.h), in arrays of the callers'
 * kind: tp_btf programs of sys_enter and of sys_exit each take only their
 * own tracepoint's, raw tracepoints any. The exit arrays also hold the
 * walk of AIO requests (DC_NAMER_AIO, aio.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} dc_sys_enter_namer SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u32);
} dc_sys_exit_namer SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u32);
} dc_sys_raw_namers SEC(".maps");

/* typed: regs is a BTF pointer the program may load from directly. */
static __always_inline int sys_enter(void *ctx, struct pt_regs *regs, long nr, bool typed)
{
	struct task_struct *task;
	struct dc_sysframe *f;
	__u32 key = nr;
	__u64 *cookie;

	/* The array first: most system calls of most processes stop there. */
	cookie = bpf_map_lookup_elem(&dc_syscalls, &key);
	if (!cookie || !*cookie || dc_stopped)
		return 0;
	task = dc_task();
	f = dc_traced_get(&dc_sysframes, &dc_sysframes_tid, task, dc_task_id(task));
	if (!f)
		return 0;
	f->cookie = *cookie;
	if (typed) {
		f->args[0] = regs->di;
		f->args[1] = regs->si;
		f->args[2] = regs->dx;
		f->args[3] = regs->r10; /* the fourth system call argument */
		f->args[4] = regs->r8;
		f->args[5] = regs->r9;
	} else {
		f->args[0] = BPF_CORE_READ(regs, di);
		f->args[1] = BPF_CORE_READ(regs, si);
		f->args[2] = BPF_CORE_READ(regs, dx);
		f->args[3] = BPF_CORE_READ(regs, r10);
		f->args[4] = BPF_CORE_READ(regs, r8);
		f->args[5] = BPF_CORE_READ(regs, r9);
	}
	f->file = dc_entry_file(f->cookie, f->args);
	f->inode = f->file ? dc_file_inode(f->file) : 0;
	f->ts = dc_now();
	if (dc_file_untold(f->file, f->inode, &f->told))
		dc_ask_namer(ctx, typed ? (void *)&dc_sys_enter_namer : (void *)&dc_sys_raw_namers, DC_NAMER_ENTRY,
			     DC_NAME_TELL, f->file, f->inode, 0, DC_NO_FOLDER, 0);
	return 0;
}

/* Only a traced call left a frame: no tracking lookup for anyone else. */
static __always_inline int sys_exit(void *ctx, long ret, bool typed)
{
	struct task_struct *task = dc_task();
	__u64 id = dc_task_id(task);
	struct dc_sysframe *f = dc_thread_get(&dc_sysframes, &dc_sysframes_tid, task, id, false);
	__u64 ts;

	if (!f || !f->ts)
		return 0;
	ts = f->ts;
	f->ts = 0;
	/* Counted toward the thread's open calls whose bytes come from below. */
	if (ret > 0 && DC_COOKIE_RET(f->cookie) == DC_RET_BYTES) {
		if (f->cookie & DC_COOKIE_WRITES)
			f->moved[1] += ret;
		else if (f->cookie & DC_COOKIE_READS)
			f->moved[0] += ret;
	}
	dc_finish(ctx, typed ? (void *)&dc_sys_exit_namer : (void *)&dc_sys_raw_namers, &f->told, id, f->cookie & ~DC_COOKIE_ON,
		  ts, f->args, ret, 0, DC_EV_SYSCALL, f->file, f->inode);
	/* The AIO requests it submitted or reaped, walked by another program. */
	if (f->cookie & DC_COOKIE_AIO) {
		f->args[DC_FRAME_NESTED] = ts;
		bpf_tail_call(ctx, typed ? (void *)&dc_sys_exit_namer : (void *)&dc_sys_raw_namers, DC_NAMER_AIO);
	}
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(dc_sys_enter, struct pt_regs *regs, long nr)
{
	return sys_enter(ctx, regs, nr, true);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(dc_sys_exit, struct pt_regs *regs, long ret)
{
	return sys_exit(ctx, ret, true);
}

SEC("raw_tp/sys_enter")
int dc_sys_enter_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return sys_enter(ctx, (struct pt_regs *)ctx->args[0], ctx->args[1], false);
}

SEC("raw_tp/sys_exit")
int dc_sys_exit_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return sys_exit(ctx, ctx->args[1], false);
}

/* Tells the file of a call's descriptor; the call's clock starts again
 * after it, so that the walk is not counted in the call's time. */
static __always_inline int name_sys_entry(void)
{
	struct dc_naming *nm = dc_naming_job();
	struct task_struct *task;
	struct dc_sysframe *f;

	if (!nm)
		return 0;
	dc_namer_entry(nm);
	task = dc_task();
	f = dc_thread_get(&dc_sysframes, &dc_sysframes_tid, task, dc_task_id(task), false);
	if (f && f->ts && f->file == nm->file)
		f->ts = dc_now();
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(dc_name_sys_enter)
{
	return name_sys_entry();
}

SEC("tp_btf/sys_exit")
int BPF_PROG(dc_name_sys_exit)
{
	dc_namer_exit(ctx, &dc_sys_exit_namer);
	return 0;
}

SEC("raw_tp/sys_enter")
int dc_name_sys_enter_raw(void *ctx)
{
	return name_sys_entry();
}

SEC("raw_tp/sys_exit")
int dc_name_sys_exit_raw(void *ctx)
{
	dc_namer_exit(ctx, &dc_sys_raw_namers);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
