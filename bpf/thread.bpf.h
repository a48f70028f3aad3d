/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-thread state of the traced threads: their open user-level calls,
 * their open system call, their open kernel functions. Where the kernel has
 * task storage (5.11) it lives in the task itself, found without hashing
 * and freed with it; elsewhere in hash maps by thread id that procs.bpf.c
 * empties as each thread exits. Either way only a thread of a traced
 * process gets an entry, and a process leaves the job only by ending, so a
 * thread with an entry is traced: the dc_tracked lookup is made once per
 * thread.
 */
#ifndef DC_THREAD_BPF_H
#define DC_THREAD_BPF_H

#include "maps.bpf.h"

/* Threads with state at once, where it is a hash (no task storage). */
#define DC_MAX_THREADS 262144

/* The six argument registers, and two zeroes that dc_arg reads for an
 * empty slot: a masked index, no branch, bounded for every verifier. */
#define DC_FRAME_ARGS 8

/* The file a thread's last call on a descriptor was found on, with its
 * inode then, already told to the agent (emit.bpf.h: dc_file_untold):
 * most calls are on the file the call before was, and this spares them
 * the lookup in dc_named_files. */
struct dc_told {
	__u64 file;
	__u64 inode;
};

/* One user-level call open on a thread. file: the struct file its
 * descriptor named at entry (files.bpf.h), 0 for none; inode: that file's
 * inode, which tells it from a later file at the same address. */
struct dc_frame {
	__u64 ts;
	__u64 cookie;
	__u64 file;
	__u64 inode;
	__u64 args[DC_FRAME_ARGS];
};

struct dc_stack {
	__u32 depth;
	__u32 pad;
	struct dc_told told;
	struct dc_frame frames[DC_MAX_DEPTH];
};

/* A call whose bytes come from below keeps, in args[DC_FRAME_NESTED]
 * (no argument slot reads it), its thread's moved total at entry, and
 * at its return the difference. */
#define DC_FRAME_NESTED 6

/* A system call open on a thread: they never nest. moved: the bytes the
 * thread's traced read-kind and write-kind system calls moved, in all. */
struct dc_sysframe {
	__u64 ts;
	__u64 cookie;
	__u64 file;
	__u64 inode;
	__u64 args[DC_FRAME_ARGS];
	__u64 moved[2];
	struct dc_told told;
};

/* A kernel function open on a thread (a kernel: probe set). */
struct dc_kframe {
	__u64 ts;
	__u64 cookie;
};

struct dc_kstack {
	__u32 depth;
	__u32 pad;
	struct dc_kframe frames[DC_MAX_KDEPTH];
};

#define DC_THREAD_MAPS(name, value_type)                                                           \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);                                           \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                              \
		__type(key, int);                                                                  \
		__type(value, value_type);                                                         \
	} name SEC(".maps") __weak;                                                                \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(map_flags, BPF_F_NO_PREALLOC);                                              \
		__uint(max_entries, DC_MAX_THREADS);                                               \
		__type(key, __u32);                                                                \
		__type(value, value_type);                                                         \
	} name##_tid SEC(".maps") __weak

/* dc-agent creates one map of each pair (agent/bpf_load.c). */
DC_THREAD_MAPS(dc_stacks, struct dc_stack);
DC_THREAD_MAPS(dc_sysframes, struct dc_sysframe);
DC_THREAD_MAPS(dc_kstacks, struct dc_kstack);

/* Zeroes to start a hash entry with: a dc_stack is too large for the stack. */
struct dc_zero {
	char b[sizeof(struct dc_stack)];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dc_zero);
} dc_zero SEC(".maps") __weak;

/* The current task where the kernel types it for us (5.11), else NULL. */
static __always_inline struct task_struct *dc_task(void)
{
	return dc_has_task_storage ? bpf_get_current_task_btf() : 0;
}

/* tgid << 32 | tid of the current thread: loads from the task where we
 * hold it, else a helper call. */
static __always_inline __u64 dc_task_id(struct task_struct *task)
{
	if (dc_has_task_storage)
		return (__u64)task->tgid << 32 | (__u32)task->pid;
	return bpf_get_current_pid_tgid();
}

/* This thread's entry of a pair of DC_THREAD_MAPS, made when create is set. */
static __always_inline void *dc_thread_get(void *task_map, void *tid_map, struct task_struct *task, __u64 id,
					   bool create)
{
	__u32 tid = (__u32)id, zero = 0;
	void *v, *z;

	if (dc_has_task_storage)
		return bpf_task_storage_get(task_map, task, 0, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	v = bpf_map_lookup_elem(tid_map, &tid);
	if (v || !create || !(z = bpf_map_lookup_elem(&dc_zero, &zero)))
		return v;
	bpf_map_update_elem(tid_map, &tid, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(tid_map, &tid);
}

/*
 * This thread's entry if its process is traced, else NULL: made for a
 * traced thread that has none yet, counted when the kernel has no memory.
 */
static __always_inline void *dc_traced_get(void *task_map, void *tid_map, struct task_struct *task, __u64 id)
{
	void *v = dc_thread_get(task_map, tid_map, task, id, false);

	/* The process is looked up only for a thread with none. */
	if (v || !dc_is_tracked(id >> 32))
		return v;
	v = dc_thread_get(task_map, tid_map, task, id, true);
	if (!v)
		dc_count(DC_STAT_STACK_FULL);
	return v;
}

/* At a thread's exit: its hash entries go with it (task storage goes by itself). */
static __always_inline void dc_thread_forget(__u32 tid)
{
	if (dc_has_task_storage)
		return;
	bpf_map_delete_elem(&dc_stacks_tid, &tid);
	bpf_map_delete_elem(&dc_sysframes_tid, &tid);
	bpf_map_delete_elem(&dc_kstacks_tid, &tid);
}

/* When the current thread's process leaves the job while it lives on: its
 * state goes now, or the thread would still be taken as traced. */
static __always_inline void dc_thread_drop(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (dc_has_task_storage) {
		struct task_struct *task = bpf_get_current_task_btf();

		bpf_task_storage_delete(&dc_stacks, task);
		bpf_task_storage_delete(&dc_sysframes, task);
		bpf_task_storage_delete(&dc_kstacks, task);
		return;
	}
	dc_thread_forget(tid);
}

/*
 * The probe's cookie: the attach cookie where the kernel has them, else a
 * constant that dc-agent wrote into this program's copy for the probe
 * (agent/clones.c), which it finds by DC_CLONE_COOKIE_MAGIC.
 */
static __always_inline __u64 dc_clone_cookie(void)
{
	__u64 c;

	asm volatile("%0 = " DC_STR(DC_CLONE_COOKIE_MAGIC) " ll" : "=r"(c));
	return c;
}

static __always_inline __u64 dc_probe_cookie(void *ctx)
{
	return dc_has_cookie ? bpf_get_attach_cookie(ctx) : dc_clone_cookie();
}

#endif /* DC_THREAD_BPF_H */
