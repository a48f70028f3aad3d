// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Libraries of the job that are other files than the node's: a container
 * image's libc, MPI or HDF5, or the job's own build of one. Uprobes belong
 * to a file, so the probe sets' uprobes on the node's libc do not see a
 * process that maps another libc. A traced process that maps a file for
 * execution which dc-agent has not looked at yet stops (SIGSTOP, taken as
 * the mmap returns, before the process runs a single instruction of it)
 * until the agent has put the sets' uprobes on that file too and continues
 * it (agent/lib_files.c): its first call is seen, as on the node's libc.
 *
 * Only a file named like a set's library (its stem, dc_event.h) stops a
 * process, so that a program's plugins and other libraries cost it
 * nothing; the agent notes every file it looked at in dc_lib_seen, so each
 * file stops one process once; files of the node's probe sets are in it
 * from the start.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "files.bpf.h"
#include "holds.bpf.h"

#define DC_PROT_EXEC 0x4

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DC_LIB_SEEN_MAX);
	__type(key, struct dc_lib_file);
	__type(value, __u8);
} dc_lib_seen SEC(".maps") __weak;

/* The stems of the sets' libraries (value unused). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DC_LIB_STEMS_MAX);
	__type(key, char[DC_LIB_STEM_LEN]);
	__type(value, __u8);
} dc_lib_stems SEC(".maps") __weak;

/* Set by the agent when dc_lib_seen is full, or the job's files it read
 * passed their budget: no more stops. */
volatile __u32 dc_lib_watch_off __weak = 0;

/* Whether the file's name has the stem of a set's library. */
static __always_inline bool named_like_a_set(struct file *file)
{
	char stem[DC_LIB_STEM_LEN] = {};
	bool cut = false;

	bpf_probe_read_kernel_str(stem, sizeof(stem), BPF_CORE_READ(file, f_path.dentry, d_name.name));
#pragma unroll
	for (int i = 0; i < DC_LIB_STEM_LEN; i++) {
		cut = cut || stem[i] == '.' || stem[i] == '-';
		if (cut)
			stem[i] = 0;
	}
	return bpf_map_lookup_elem(&dc_lib_stems, stem) != 0;
}

/* mmap(addr, length, prot, flags, fd, offset) */
SEC("tracepoint/syscalls/sys_enter_mmap")
int dc_lib_mmap(struct trace_event_raw_sys_enter *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct dc_lib_stop s = {};
	struct inode *inode;
	__u64 file;
	int fd = (int)ctx->args[4];

	if (!(ctx->args[2] & DC_PROT_EXEC) || fd < 0 || dc_stopped || dc_lib_watch_off || !dc_is_tracked(tgid))
		return 0;
	file = dc_fd_file(fd);
	if (!file)
		return 0;
	inode = BPF_CORE_READ((struct file *)file, f_inode);
	s.file.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	s.file.ino = BPF_CORE_READ(inode, i_ino);
	if (bpf_map_lookup_elem(&dc_lib_seen, &s.file) || !named_like_a_set((struct file *)file))
		return 0;
	s.fd = fd;
	/* No room: the process runs on, its calls of this file unseen. */
	dc_hold_current(&s);
	return 0;
}

/* Linux 6.13; on an older kernel the agent never loads the program below. */
extern int bpf_send_signal_task(struct task_struct *task, int sig, enum pid_type type, __u64 value) __ksym __weak;

/*
 * Uprobes placed per process (dc_scope_on): a new process of the job is
 * held at its fork, before its first instruction, until the agent has made
 * its links (a child runs its parent's code, whose breakpoints it shares,
 * but a link serves one process). Threads share their process's links.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(dc_scope_fork, struct task_struct *parent, struct task_struct *child)
{
	struct dc_lib_stop s = { .fd = -1 };

	if (!dc_scope_on || dc_stopped || !bpf_send_signal_task)
		return 0;
	s.pid = child->tgid;
	if (s.pid == parent->tgid || !dc_is_tracked(parent->tgid))
		return 0;
	s.start = child->start_boottime;
	if (!dc_hold_note(&s))
		return 0; /* its calls at the uprobe level unseen, counted as a full map */
	bpf_send_signal_task(child, DC_SIGSTOP, PIDTYPE_TGID, 0);
	dc_hold_ring(s.pid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
