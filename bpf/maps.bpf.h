/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Maps shared by every DataCrumbs BPF program. Each .bpf.c includes this
 * header; the definitions are weak so that `bpftool gen object` links them
 * into one map of each name.
 */
#ifndef DC_MAPS_BPF_H
#define DC_MAPS_BPF_H

#include "dc_event.h"

#define DC_MAX_PROCS 65536

/* One user-level call open on a thread. */
struct dc_frame {
	__u64 ts;
	__u64 cookie;
	__u64 args[6];
};

struct dc_stack {
	__u32 depth;
	__u32 pad;
	struct dc_frame frames[DC_MAX_DEPTH];
};

/* A system call open on a thread: they never nest. */
struct dc_sysframe {
	__u64 ts;
	__u64 cookie;
	__u64 args[6];
};

/*
 * Set by dc-agent before load and read-only after it, so that the verifier
 * drops the code a setting turns off (libbpf-tools' targ_pid idiom).
 */
const volatile __u32 dc_mode __weak = DC_MODE_TRACE;
/* Where an MPI datatype object holds its size in bytes (0: unknown). */
const volatile __u32 dc_dtype_size_offset __weak = 0;
/* A program started with this NAME=VALUE in its environment joins the job
 * (Slurm tasks: SLURM_JOB_ID=ID); length 0: off. */
const volatile __u32 dc_env_match_len __weak = 0;
const volatile char dc_env_match[DC_ENV_MATCH_MAX] __weak = {};
/* The node, as the kernel knows it: the agent's network namespace. One
 * kernel may hold several nodes (containers, the test cluster), each with
 * its agent; a program joins by its environment only on its own node. */
const volatile __u32 dc_netns_ino __weak = 0;
/* Programs --match-env leaves out, by file name (dc-prolog, dc-epilog); "" unused. */
const volatile char dc_skip_comm[DC_SKIP_COMMS][DC_COMM_LEN] __weak = {};

/* Thread group ids of the job's processes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DC_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} dc_tracked SEC(".maps") __weak;

/* A traced thread's open user-level calls, in the task itself: found
 * without hashing, freed with the task, and no limit on threads. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dc_stack);
} dc_stacks SEC(".maps") __weak;

/* Per thread, in the task itself: found without hashing, freed with the task. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct dc_sysframe);
} dc_sysframes SEC(".maps") __weak;

/* System call number -> cookie | DC_COOKIE_ON; 0 for calls not traced. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, DC_MAX_SYSCALLS);
	__type(key, __u32);
	__type(value, __u64);
} dc_syscalls SEC(".maps") __weak;

struct {
	/* Per CPU: a call adds to its own CPU's totals, with no atomics. */
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct dc_profile_key);
	__type(value, struct dc_profile_val);
} dc_profile SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DC_NR_STATS);
	__type(key, __u32);
	__type(value, __u64);
} dc_stats SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dc_config);
} dc_config SEC(".maps") __weak;

/* A call with a path is built here, then copied into the ring buffer with
 * only the bytes of the path it has: a reservation would take 4 KiB each. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dc_msg_call);
} dc_path_scratch SEC(".maps") __weak;

/* Size set by dc-agent before load (--ringbuf-mb). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} dc_events SEC(".maps") __weak;

/* Processes --skip-program left out, and their children: never joined by
 * their environment, whatever they exec next (#!/usr/bin/env bash). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} dc_skipped SEC(".maps") __weak;

static __always_inline int dc_is_tracked(__u32 tgid)
{
	return bpf_map_lookup_elem(&dc_tracked, &tgid) != 0;
}

static __always_inline void dc_count(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&dc_stats, &stat);

	if (v)
		*v += 1;
}

/*
 * This thread's entry of a task-storage map (its call stack, its system
 * call frame) if its process is traced, else NULL. Only a traced process's
 * threads get one, and a process leaves the job only by ending: a thread
 * with an entry is traced, with no hash lookup. The others look dc_tracked
 * up each time (a process joins by exec, --pid or registering, and is
 * found then).
 */
static __always_inline void *dc_traced_storage(void *map)
{
	struct task_struct *task = bpf_get_current_task_btf();
	void *v = bpf_task_storage_get(map, task, 0, 0);

	/* The process is looked up only for a thread with none. */
	if (v || !dc_is_tracked(task->tgid))
		return v;
	v = bpf_task_storage_get(map, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!v)
		dc_count(DC_STAT_STACK_FULL);
	return v;
}

static __always_inline struct dc_config *dc_settings(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&dc_config, &zero);
}

#endif /* DC_MAPS_BPF_H */
