/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Maps shared by every DataCrumbs BPF program. Each .bpf.c includes this
 * header; the definitions are weak so that `bpftool gen object` links them
 * into one map of each name.
 */
#ifndef DC_MAPS_BPF_H
#define DC_MAPS_BPF_H

#include "dc_event.h"

/* Processes of the job alive at once on a node. The table is preallocated
 * (a tracing program may not allocate on 5.10), at about 0.2 ms per 1,000
 * entries of the agent's start; a node's ranks and their children are far
 * fewer, and one more is counted as a full map (DC_STAT_MAP_FULL). */
#define DC_MAX_PROCS 16384

/*
 * Set by dc-agent before load and read-only after it, so that the verifier
 * drops the code a setting turns off (libbpf-tools' targ_pid idiom).
 */
const volatile __u32 dc_mode __weak = DC_MODE_TRACE;
/* Where an MPI datatype object holds its size in bytes (0: unknown). */
const volatile __u32 dc_dtype_size_offset __weak = 0;
/* Where a C library stream (FILE) keeps its descriptor (DC_COOKIE_STREAM). */
const volatile __u32 dc_fileno_offset __weak = 0;
/* A program started with this NAME=VALUE in its environment joins the job
 * (Slurm tasks: SLURM_JOB_ID=ID); length 0: off. */
const volatile __u32 dc_env_match_len __weak = 0;
const volatile char dc_env_match[DC_ENV_MATCH_MAX] __weak = {};
/* The node, as the kernel knows it: the agent's network namespace. One
 * kernel may hold several nodes (containers, the test cluster), each with
 * its agent; a program joins by its environment only on its own node. */
const volatile __u32 dc_netns_ino __weak = 0;
/* The job's user: only its processes, with no privileges gained, are
 * traced (a job of root's is root's to read whatever it runs). */
const volatile __u32 dc_job_uid __weak = 0;
/* Programs --match-env leaves out, by file name (dc-prolog, dc-epilog); "" unused. */
const volatile char dc_skip_comm[DC_SKIP_COMMS][DC_COMM_LEN] __weak = {};

/*
 * The time at a call's entry and return. A benchmark build without the
 * clock (DC_BENCH_WITHOUT, bench/probe_cost.sh) measures what the rest of
 * a traced call costs: its events last 0 ns.
 */
static __always_inline __u64 dc_now(void)
{
#ifdef DC_BENCH_WITHOUT_CLOCK
	return 1;
#else
	return bpf_ktime_get_ns();
#endif
}

/*
 * What this kernel offers, from dc-agent's feature probes (agent/kernel_features.c).
 * Code behind a false one is never reached, and the verifier drops it
 * unread, so an older kernel never meets a helper or map type it lacks.
 */
/* Task storage and bpf_get_current_task_btf (Linux 5.11): else per-thread
 * state is a hash by thread id and ids come from bpf_get_current_pid_tgid. */
const volatile bool dc_has_task_storage __weak = true;
/* bpf_get_attach_cookie in kprobe and uprobe programs (5.15): else each
 * probe has a program of its own with its cookie in an instruction. */
const volatile bool dc_has_cookie __weak = true;

/* Set by dc-agent when the trace ends, before it detaches: calls that
 * begin after it are not seen, whatever detaching then costs. */
volatile __u32 dc_stopped __weak = 0;
/* Set by the agent as uprobes go from the job's processes to every process
 * (DC_COOKIE_EVERY): whether a probe of a call counts. */
volatile __u32 dc_uprobes_every __weak = 0;

static __always_inline bool dc_uprobe_counts(__u64 cookie)
{
	return !(cookie & DC_COOKIE_EVERY) == !dc_uprobes_every;
}

/* Thread group ids of the job's processes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DC_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} dc_tracked SEC(".maps") __weak;

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

/*
 * One ring buffer per CPU: a single ring shared by every CPU serializes
 * them on its lock and producer position, and HPC nodes run a rank on
 * every core. dc-agent creates dc_nrings of them (their size from
 * --ringbuf-mb) and merges them in time order (agent/event_rings.c). A
 * ring wakes the agent past each 1 << dc_wakeup_shift bytes (emit.bpf.h),
 * half of it; the agent's timer collects the rest.
 */
const volatile __u32 dc_nrings __weak = 1;
const volatile __u32 dc_wakeup_shift __weak = 18;
/* Test builds (DC_TEST_RING_SCATTER): each record to a ring at random, so
 * that only the agent's merge puts a thread's records back in order. */
const volatile bool dc_ring_scatter __weak = false;

struct dc_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10); /* a template: dc-agent sizes the rings */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* dc_nrings, set by dc-agent before load */
	__type(key, __u32);
	__array(values, struct dc_ring);
} dc_rings SEC(".maps") __weak;

/* This CPU's ring (the last CPUs share where there are more than
 * DC_MAX_RINGS); NULL only if dc-agent left it out. */
static __always_inline void *dc_ring(void)
{
	__u32 i = dc_ring_scatter ? bpf_get_prandom_u32() : bpf_get_smp_processor_id();

	if (i >= dc_nrings)
		i %= dc_nrings;
	return bpf_map_lookup_elem(&dc_rings, &i);
}

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

static __always_inline struct dc_config *dc_settings(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&dc_config, &zero);
}

#endif /* DC_MAPS_BPF_H */
