/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The namers: where a file's path is walked (files.bpf.h), once per hook
 * kind. A program that finds a file the agent has no path for leaves the
 * job in dc_naming_scratch and ends in a tail call to its hook's namer
 * (emit.bpf.h: dc_ask_namer). A namer is a program of the caller's own
 * kind, as a tail call must be; calls.bpf.c and syscalls.bpf.c define
 * theirs from these bodies and the agent puts them in the callers'
 * program arrays (agent/bpf_load.c).
 */
#ifndef DC_NAMERS_BPF_H
#define DC_NAMERS_BPF_H

#include "emit.bpf.h"

/* A system call's iovec array, read whole (a helper call) and summed.
 * The sum and the place reached live here, not in registers: read back,
 * they are any numbers to the verifier, so the states after each turn are
 * alike and what follows the loop is checked once, not once per turn. */
struct dc_iovs {
	__u64 sum;
	__u32 i, n;
	__u64 w[2 * DC_IOV_MAX]; /* iov_base, iov_len, ... */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dc_iovs);
} dc_iov_scratch SEC(".maps") __weak;

/* The bytes the n entries of the iovec array at iov ask for; 0 where the
 * array cannot be read, or past DC_IOV_MAX entries (the kernel refuses
 * the call then). */
static __always_inline __u64 dc_iov_bytes(__u64 iov, __u64 n)
{
	struct dc_iovs *b;
	__u32 zero = 0;

	b = bpf_map_lookup_elem(&dc_iov_scratch, &zero);
	if (!b || n == 0 || n > DC_IOV_MAX)
		return 0;
	n = DC_MASKED(n - 1, DC_IOV_MAX - 1) + 1;
	if (bpf_probe_read_user(b->w, n * 16, (const void *)iov))
		return 0;
	b->sum = 0;
	b->i = 0;
	b->n = n;
	for (int k = 0; k < DC_IOV_MAX; k++) {
		__u32 i = b->i;

		if (i >= b->n)
			break;
		b->sum += b->w[DC_MASKED(2 * i + 1, 2 * DC_IOV_MAX - 1)];
		b->i = i + 1;
	}
	return b->sum;
}

static __always_inline struct dc_naming *dc_naming_job(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&dc_naming_scratch, &zero);
}

/* Sends the path of file (identity inode), which dc_path_walk left at off
 * (none for -1), and notes that the agent has it. */
static __always_inline void dc_file_send(__u64 file, __u64 inode, int off)
{
	struct dc_msg_file *m;
	__u32 zero = 0, size;
	void *ring;

	m = bpf_map_lookup_elem(&dc_file_scratch, &zero);
	ring = dc_ring();
	if (!m || !ring)
		return;
	m->type = DC_MSG_FILE;
	m->file = file;
	m->inode = inode;
	m->ts = dc_now();
	m->path_len = dc_path_copy(off, m->path);
	size = DC_MSG_FILE_BASE + m->path_len;
	if (size > sizeof(*m))
		return;
	if (bpf_ringbuf_output(ring, m, size, dc_wakeup(ring, size))) {
		dc_count(DC_STAT_LOST);
		return;
	}
	dc_file_note(file, m->inode);
}

/* A call's entry namer: tells the file of its descriptor. */
static __always_inline void dc_namer_entry(struct dc_naming *nm)
{
	if (nm->job == DC_NAME_TELL)
		dc_file_send(nm->file, nm->inode, dc_file_walk(nm->file, false, 0));
}

/* A call's exit namer: the call made in dc_path_scratch, sent with the
 * path of its new file or of the folder its relative name is in, or after
 * the path of the file an empty name stands for; or with the bytes its
 * iovec array asks for. */
static __always_inline void dc_namer_exit(void)
{
	struct dc_naming *nm = dc_naming_job();
	struct dc_msg_call *m;
	__u32 zero = 0, n;
	void *ring;
	int off;

	m = bpf_map_lookup_elem(&dc_path_scratch, &zero);
	ring = dc_ring();
	if (!nm || !m || !ring)
		return;
	n = m->path_len;
	if (n > DC_PATH_MAX)
		return;
	if (nm->job == DC_NAME_IOV) {
		m->ev.req = dc_iov_bytes(nm->file, nm->dirfd);
		dc_send_call(ring, m);
		return;
	}
	off = dc_file_walk(nm->file, nm->job == DC_NAME_FOLDER, nm->dirfd);
	if (nm->job == DC_NAME_TELL) {
		dc_file_send(nm->file, nm->inode, off);
	} else {
		m->kpath_len = dc_path_copy(off, m->path + n);
		/* The agent keeps the new file's path whatever came: none
		 * resets what it had for the file. */
		if (nm->job == DC_NAME_OPENED)
			dc_file_note(nm->file, nm->inode);
	}
	dc_send_call(ring, m);
}

#endif /* DC_NAMERS_BPF_H */
