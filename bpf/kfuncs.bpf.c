// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel functions named by a probe set (kernel: [vfs_write, ext4_*]):
 * entry and return of each, for the job's threads only, on a per-thread
 * stack of their own, so that a call is reported at its return with its
 * duration and its depth among the kernel functions open on the thread.
 * Three ways in, as the kernel allows (agent/kfuncs.c chooses):
 *  - kprobe_multi links: one entry and one return link for every function,
 *    the function known from the attach cookie;
 *  - fentry/fexit: a copy of the program pair per function, its cookie and
 *    argument count written into its instructions (no cookies for tracing
 *    programs before 6.?; the copy is needed anyway, one target each);
 *  - a kprobe/kretprobe perf event pair per function, with attach cookies
 *    (5.15) or, before them, a copy of the programs per function.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "emit.bpf.h"

static __always_inline int kfunc_enter(__u64 cookie)
{
	struct task_struct *task = dc_task();
	struct dc_kstack *st;
	__u32 d;

	if (dc_stopped)
		return 0;
	st = dc_traced_get(&dc_kstacks, &dc_kstacks_tid, task, dc_task_id(task));
	if (!st)
		return 0;
	d = st->depth;
	if (d >= DC_MAX_KDEPTH) {
		dc_count(DC_STAT_STACK_FULL);
		return 0;
	}
	st->frames[d].cookie = cookie;
	st->frames[d].ts = bpf_ktime_get_ns();
	st->depth = d + 1;
	return 0;
}

/*
 * Pops the call that returns: the nearest open frame of the same function.
 * Frames above it lost their returns (a kretprobe the kernel ran out of
 * instances for) and are dropped; a return with no frame is ignored.
 */
static __always_inline int kfunc_exit(__u64 cookie, long ret)
{
	struct task_struct *task = dc_task();
	__u64 id = dc_task_id(task), zero[DC_FRAME_ARGS] = {};
	struct dc_kstack *st = dc_thread_get(&dc_kstacks, &dc_kstacks_tid, task, id, false);
	__u32 depth, d = 0;

	if (!st || (depth = st->depth) == 0 || depth > DC_MAX_KDEPTH)
		return 0;
	for (int i = 0; i < DC_MAX_KDEPTH; i++) {
		if (i >= depth)
			return 0;
		/* The mask changes nothing (i < depth <= DC_MAX_KDEPTH) but
		 * bounds the index for verifiers that lose track of it (6.1). */
		d = (depth - 1 - i) & (DC_MAX_KDEPTH - 1);
		if (st->frames[d].cookie == cookie)
			break;
	}
	if (st->frames[d].cookie != cookie)
		return 0;
	st->depth = d;
	dc_finish(NULL, NULL, NULL, id, cookie, st->frames[d].ts, zero, ret, d, 0, 0, 0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(dc_kprobe_entry)
{
	return kfunc_enter(dc_probe_cookie(ctx));
}

SEC("kretprobe")
int BPF_KRETPROBE(dc_kprobe_exit, long ret)
{
	return kfunc_exit(dc_probe_cookie(ctx), ret);
}

/* The number of arguments of this copy's function. */
static __always_inline __u64 clone_nargs(void)
{
	__u64 n;

	asm volatile("%0 = " DC_STR(DC_CLONE_NARGS_MAGIC) " ll" : "=r"(n));
	return n;
}

SEC("fentry")
int dc_fentry(unsigned long long *ctx)
{
	return kfunc_enter(dc_clone_cookie());
}

/* fexit's return value follows the arguments: ctx[nargs], a constant in
 * each copy, so the verifier sees one load at a known place. */
SEC("fexit")
int dc_fexit(unsigned long long *ctx)
{
	long ret;

	switch (clone_nargs()) {
	case 0: ret = ctx[0]; break;
	case 1: ret = ctx[1]; break;
	case 2: ret = ctx[2]; break;
	case 3: ret = ctx[3]; break;
	case 4: ret = ctx[4]; break;
	case 5: ret = ctx[5]; break;
	case 6: ret = ctx[6]; break;
	default: ret = 0; break;
	}
	return kfunc_exit(dc_clone_cookie(), ret);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
