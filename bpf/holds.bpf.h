/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Processes held stopped (SIGSTOP) until the agent has done what must come
 * before their next instruction: put the sets' uprobes on a library file
 * they map (libs.bpf.c), or, where uprobes are placed per process (Linux
 * 6.13: uprobe_multi links for one process, bpf_send_signal_task), make a
 * new process's links, at its fork or its exec into the job. The agent
 * reads the map when the bell rings, and continues each process it holds
 * (agent/lib_files.c), that very process: the entry has its start.
 */
#ifndef DC_HOLDS_BPF_H
#define DC_HOLDS_BPF_H

#include "maps.bpf.h"

#define DC_SIGSTOP 19

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DC_LIB_STOPS_MAX);
	__type(key, struct dc_lib_stop);
	__type(value, __u8);
} dc_lib_stops SEC(".maps") __weak;

/* Rings the agent's bell: the stops map is what it reads. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} dc_lib_bell SEC(".maps") __weak;

/* Set by the agent where uprobes go on the job's processes only: each new
 * process of the job is held for its links. */
volatile __u32 dc_scope_on __weak = 0;

/* Notes the hold: false when the map is full (the process runs on). */
static __always_inline bool dc_hold_note(const struct dc_lib_stop *s)
{
	__u8 one = 1;

	if (bpf_map_update_elem(&dc_lib_stops, s, &one, BPF_NOEXIST)) {
		dc_count(DC_STAT_MAP_FULL);
		return false;
	}
	return true;
}

static __always_inline void dc_hold_ring(__u32 pid)
{
	bpf_ringbuf_output(&dc_lib_bell, &pid, sizeof(pid), BPF_RB_FORCE_WAKEUP);
}

/* The calling process, stopped as it returns to user space. */
static __always_inline void dc_hold_current(struct dc_lib_stop *s)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	s->pid = bpf_get_current_pid_tgid() >> 32;
	s->start = BPF_CORE_READ(task, group_leader, start_boottime);
	if (!dc_hold_note(s))
		return;
	bpf_send_signal(DC_SIGSTOP);
	dc_hold_ring(s->pid);
}

#endif
