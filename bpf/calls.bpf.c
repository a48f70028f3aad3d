// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * User-level calls: one uprobe/uretprobe pair serves every probed library
 * function. The probe's cookie names the function and its argument layout;
 * a per-thread stack pairs each return with its entry, so nested levels
 * (fwrite -> write, H5Dwrite -> MPI_File_write_at -> pwrite) stay apart.
 * Attached through uprobe_multi links, or one perf-event uprobe per function
 * on kernels without them (agent/perf_probes.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "namers.bpf.h"

/* The namers of user calls (namers.bpf.h): DC_NAMER_ENTRY, DC_NAMER_EXIT. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} dc_call_namers SEC(".maps");

/* libbpf 1.1 stops at the fifth argument; mmap's offset is the sixth. */
#if !defined(PT_REGS_PARM6) && defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) ((x)->r9)
#endif

/* The bytes the thread's traced system calls of the call's kind moved so far. */
static __always_inline __u64 dc_moved_so_far(struct task_struct *task, __u64 id, __u64 cookie)
{
	struct dc_sysframe *sf = dc_thread_get(&dc_sysframes, &dc_sysframes_tid, task, id, false);

	if (!sf)
		return 0;
	return cookie & DC_COOKIE_WRITES ? sf->moved[1] : sf->moved[0];
}

/* The length of the C string at s in the process, up to DC_TEXT_MAX
 * bytes, read a chunk a turn into the iovec scratch (namers.bpf.h), where
 * the length so far lives: read back, it is any number to the verifier, so
 * that it checks the turns as one. */
#define DC_TEXT_CHUNK 4096
#define DC_TEXT_MAX (16 * DC_TEXT_CHUNK)
_Static_assert(DC_TEXT_CHUNK <= sizeof(((struct dc_iovs *)0)->w), "a chunk fits the scratch");

static __always_inline __u64 dc_text_len(__u64 s)
{
	struct dc_iovs *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&dc_iov_scratch, &zero);
	if (!b || !s)
		return 0;
	b->sum = 0;
	for (int k = 0; k < DC_TEXT_MAX / DC_TEXT_CHUNK; k++) {
		long n = bpf_probe_read_user_str(b->w, DC_TEXT_CHUNK, (const void *)(s + b->sum));

		if (n <= 0)
			break;
		b->sum += n - 1;
		if (n < DC_TEXT_CHUNK)
			break;
	}
	return b->sum;
}

SEC("uprobe")
int BPF_KPROBE(dc_call_entry)
{
	struct task_struct *task = dc_task();
	__u64 id = dc_task_id(task), cookie = dc_probe_cookie(ctx);
	struct dc_stack *st;
	struct dc_frame *f;
	__u32 d;

	if (dc_stopped || !dc_uprobe_counts(cookie))
		return 0;
	cookie &= ~DC_COOKIE_EVERY;
	st = dc_traced_get(&dc_stacks, &dc_stacks_tid, task, id);
	if (!st)
		return 0;
	d = st->depth;
	st->depth = d + 1;
	if (d >= DC_MAX_DEPTH) {
		/* Too deep to keep: the matching return only pops the count. */
		dc_count(DC_STAT_STACK_FULL);
		return 0;
	}
	f = &st->frames[d];
	f->cookie = cookie;
	f->args[0] = PT_REGS_PARM1(ctx);
	f->args[1] = PT_REGS_PARM2(ctx);
	f->args[2] = PT_REGS_PARM3(ctx);
	f->args[3] = PT_REGS_PARM4(ctx);
	f->args[4] = PT_REGS_PARM5(ctx);
	f->args[5] = PT_REGS_PARM6(ctx);
	if (f->cookie & DC_COOKIE_BYTES_NESTED)
		f->args[DC_FRAME_NESTED] = dc_moved_so_far(task, id, f->cookie);
	f->file = dc_entry_file(f->cookie, f->args);
	f->inode = f->file ? dc_file_inode(f->file) : 0;
	f->ts = dc_now();
	if (dc_file_untold(f->file, f->inode, &st->told))
		dc_ask_namer(ctx, &dc_call_namers, DC_NAMER_ENTRY, DC_NAME_TELL, f->file, f->inode, 0, DC_NO_FOLDER, d);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(dc_call_exit, long ret)
{
	struct task_struct *task = dc_task();
	__u64 id = dc_task_id(task);
	struct dc_stack *st = dc_thread_get(&dc_stacks, &dc_stacks_tid, task, id, false);
	__u64 cookie = dc_probe_cookie(ctx);
	struct dc_frame *f;
	__u32 d;

	/* No stack: not a traced thread, or no entry seen. */
	if (!st || st->depth == 0 || !dc_uprobe_counts(cookie))
		return 0;
	cookie &= ~DC_COOKIE_EVERY;
	d = st->depth - 1;
	st->depth = d;
	if (d >= DC_MAX_DEPTH)
		return 0;
	f = &st->frames[d];
	/* A return without its entry (probe attached mid-call, longjmp): drop it. */
	if (f->cookie != cookie)
		return 0;
	if (cookie & DC_COOKIE_BYTES_NESTED)
		f->args[DC_FRAME_NESTED] = dc_moved_so_far(task, id, cookie) - f->args[DC_FRAME_NESTED];
	/* A string's length; none when a call returning one failed (fgets
	 * at the end: its buffer holds what it held). */
	if (cookie & DC_COOKIE_TEXT)
		f->args[DC_FRAME_NESTED] =
			DC_COOKIE_RET(cookie) == DC_RET_PLAIN && !ret
				? 0
				: dc_text_len(f->args[(DC_COOKIE_SLOT(cookie, DC_SLOT_BYTES) - 1) & (DC_FRAME_ARGS - 1)]);
	dc_finish(ctx, &dc_call_namers, &st->told, id, cookie, f->ts, f->args, ret, d, 0, f->file, f->inode);
	return 0;
}

/* Tells the file of a call's descriptor; the call's clock starts again
 * after it, so that the walk is not counted in the call's time. */
SEC("uprobe")
int BPF_KPROBE(dc_name_call_entry)
{
	struct dc_naming *nm = dc_naming_job();
	struct task_struct *task;
	struct dc_stack *st;
	struct dc_frame *f;

	if (!nm)
		return 0;
	dc_namer_entry(nm);
	task = dc_task();
	st = dc_thread_get(&dc_stacks, &dc_stacks_tid, task, dc_task_id(task), false);
	if (!st || nm->depth >= DC_MAX_DEPTH)
		return 0;
	f = &st->frames[nm->depth & (DC_MAX_DEPTH - 1)];
	if (f->file == nm->file)
		f->ts = dc_now();
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(dc_name_call_exit)
{
	dc_namer_exit(ctx, &dc_call_namers);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
