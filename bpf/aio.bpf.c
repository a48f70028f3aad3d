// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Linux AIO requests (the aio set): each read, write, fsync... a traced
 * process submits with io_submit is one event at the aio level, from the
 * submission's start to the io_getevents (or io_pgetevents) that reaps
 * it: the kernel has no tracepoint at their completion, so their time is
 * until the program learns of it. Charged to the thread that submitted it,
 * on the file of its descriptor then, with its result as ret and, for
 * reads and writes, its bytes.
 *
 * The system call's exit program (syscalls.bpf.c) ends in a tail call to
 * these programs when the call's cookie has DC_COOKIE_AIO; the requests of
 * the call are walked with bpf_loop (Linux 5.17). The files of the
 * requests that the agent has no path for are noted there, and their
 * paths walked after it, one a turn of this program (a tail call to
 * itself): the verifier checks a path walk inside a loop's body many times
 * over (240,000 instructions), and once here.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "namers.bpf.h"

/* The user's struct iocb and struct io_event (linux/aio_abi.h: a stable ABI). */
struct dc_iocb {
	__u64 data;
	__u32 key, rw_flags;
	__u16 opcode;
	__s16 reqprio;
	__u32 fd;
	__u64 buf, nbytes;
	__s64 offset;
	__u64 reserved2;
	__u32 flags, resfd;
};

struct dc_io_event {
	__u64 data, obj;
	__s64 res, res2;
};

struct aio_key {
	__u32 pid, pad;
	__u64 iocb; /* the request's struct iocb, in the process */
};

struct aio_start {
	__u64 ts, file, inode;
	__s64 offset;
	__u32 tid;
	__u16 op;
};

/* Requests submitted and not reaped yet. LRU: one never reaped (its
 * context destroyed) is pushed out, not kept. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct aio_key);
	__type(value, struct aio_start);
} dc_aio_reqs SEC(".maps");

/* One system call's requests, for the loop's body. */
struct aio_walk {
	__u64 id;  /* dc_task_id */
	__u64 ts;  /* the call's start */
	__u64 arr; /* io_submit's struct iocb *[], or io_getevents' struct io_event [] */
};

/* Files a submission's requests are on that the agent has no path for,
 * told after its loop, one a turn (DC_AIO_NAMES at most, the rest named
 * by a later submission). */
#define DC_AIO_NAMES 8
struct aio_names {
	__u64 ts; /* the submission's start */
	__u32 n, naming;
	__u64 file[DC_AIO_NAMES], inode[DC_AIO_NAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct aio_names);
} dc_aio_names SEC(".maps");

static __always_inline struct aio_names *aio_names(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&dc_aio_names, &zero);
}

/* Notes file to be told after the loop, once. */
static __always_inline void note_unknown(__u64 file, __u64 inode)
{
	struct aio_names *nm = aio_names();
	__u32 n;

	if (!nm)
		return;
	n = nm->n;
	for (int i = 0; i < DC_AIO_NAMES; i++)
		if (i < n && nm->file[i] == file)
			return;
	if (n < DC_AIO_NAMES) {
		nm->file[n] = file;
		nm->inode[n] = inode;
		nm->n = n + 1;
	}
}

static long submitted(__u32 i, void *ctx)
{
	struct aio_walk *w = ctx;
	struct aio_key key = { .pid = w->id >> 32 };
	struct aio_start s = { .ts = w->ts, .tid = (__u32)w->id };
	struct dc_iocb cb;

	if (bpf_probe_read_user(&key.iocb, sizeof(key.iocb), (const void *)(w->arr + 8 * (__u64)i)) ||
	    bpf_probe_read_user(&cb, sizeof(cb), (const void *)key.iocb))
		return 1;
	s.op = cb.opcode;
	s.offset = cb.offset;
	if (dc_mode == DC_MODE_TRACE) {
		s.file = dc_fd_file((int)cb.fd);
		s.inode = s.file ? dc_file_inode(s.file) : 0;
		if (s.file && !dc_file_known(s.file, s.inode))
			note_unknown(s.file, s.inode);
	}
	if (bpf_map_update_elem(&dc_aio_reqs, &key, &s, BPF_ANY))
		dc_count(DC_STAT_MAP_FULL);
	return 0;
}

static long reaped(__u32 i, void *ctx)
{
	struct aio_walk *w = ctx;
	struct aio_key key = { .pid = w->id >> 32 };
	struct dc_config *cfg = dc_settings();
	struct dc_io_event ev;
	struct aio_start *s, start;
	__u32 op, func;

	if (!cfg || bpf_probe_read_user(&ev, sizeof(ev), (const void *)(w->arr + sizeof(ev) * (__u64)i)))
		return 1;
	key.iocb = ev.obj;
	s = bpf_map_lookup_elem(&dc_aio_reqs, &key);
	if (!s)
		return 0; /* submitted before the trace, or by a process outside it */
	start = *s;
	bpf_map_delete_elem(&dc_aio_reqs, &key);
	op = start.op & (DC_AIO_OPS - 1);
	func = cfg->aio_func[op];
	if (func--)
		dc_emit_kernel_event(func, key.pid, start.tid, start.ts, bpf_ktime_get_ns() - start.ts,
				     ev.res > 0 && (cfg->aio_moves >> op & 1) ? ev.res : 0, start.offset, ev.res,
				     cfg->aio_moves >> op & 1 ? DC_EV_OFFSET : 0, start.file, start.inode);
	return 0;
}

/* The exit arrays this program is in (syscalls.bpf.c). */
extern struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u32);
} dc_sys_exit_namer SEC(".maps"), dc_sys_raw_namers SEC(".maps");

/* Tells one noted file, timed before the submission's requests (where the
 * agent's merge of the rings puts it first); again for the next. */
static __always_inline void tell_next(void *ctx, struct aio_names *nm, bool typed)
{
	__u32 i = nm->n - 1;

	if (i >= DC_AIO_NAMES) {
		nm->n = 0;
		return;
	}
	nm->n = i;
	dc_file_send(nm->file[i], nm->inode[i], dc_file_walk(nm->file[i], false, 0), nm->ts - 1);
	if (i)
		bpf_tail_call(ctx, typed ? (void *)&dc_sys_exit_namer : (void *)&dc_sys_raw_namers, DC_NAMER_AIO);
	nm->n = 0;
}

/* After io_submit, io_getevents or io_pgetevents returned ret requests;
 * or a turn that tells a noted file. */
static __always_inline int aio_exit(void *ctx, struct pt_regs *regs, long ret, bool typed)
{
	struct aio_names *nm = aio_names();
	struct task_struct *task;
	struct dc_sysframe *f;
	struct dc_config *cfg = dc_settings();
	struct aio_walk w;
	long nr;

	if (!nm || !cfg)
		return 0;
	if (nm->naming) {
		tell_next(ctx, nm, typed);
		nm->naming = 0;
		return 0;
	}
	task = dc_task();
	w.id = dc_task_id(task);
	f = dc_thread_get(&dc_sysframes, &dc_sysframes_tid, task, w.id, false);
	if (!f || ret <= 0)
		return 0;
	nr = typed ? regs->orig_ax : BPF_CORE_READ(regs, orig_ax);
	w.ts = f->args[DC_FRAME_NESTED]; /* the call's start, left there by sys_exit */
	if (ret > DC_AIO_BATCH)
		ret = DC_AIO_BATCH;
	if (nr == cfg->aio_submit_nr) {
		w.arr = f->args[2];
		nm->n = 0;
		bpf_loop(ret, submitted, &w, 0);
		if (nm->n) {
			nm->ts = w.ts;
			nm->naming = 1;
			tell_next(ctx, nm, typed);
			nm->naming = 0;
		}
	} else if (nr == cfg->aio_getevents_nr || nr == cfg->aio_pgetevents_nr) {
		w.arr = f->args[3];
		bpf_loop(ret, reaped, &w, 0);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(dc_aio_sys_exit, struct pt_regs *regs, long ret)
{
	return aio_exit(ctx, regs, ret, true);
}

SEC("raw_tp/sys_exit")
int dc_aio_sys_exit_raw(struct bpf_raw_tracepoint_args *ctx)
{
	return aio_exit(ctx, (struct pt_regs *)ctx->args[0], ctx->args[1], false);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
