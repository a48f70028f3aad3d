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

/* Reads a call's second name (DC_SLOT_PATH2, at name in the process)
 * after its first, whose path_len bytes are in m->path: whether it is a
 * relative one. */
static __always_inline bool dc_second_name(struct dc_msg_call *m, __u64 name)
{
	__u32 at = m->path_len;
	long n;

	if (at > DC_PATH_MAX)
		return false;
	n = bpf_probe_read_user_str(m->path + at, DC_PATH_MAX, (const void *)name);
	if (n <= 0)
		return false;
	if (n > DC_PATH_MAX)
		n = DC_PATH_MAX;
	m->path2_len = n;
	return n > 1 && m->path[at] != '/';
}

static __always_inline struct dc_naming *dc_naming_job(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&dc_naming_scratch, &zero);
}

/* Sends the path of file (identity inode), which dc_path_walk left at off
 * (none for -1), and notes that the agent has it. ts: where the agent's
 * merge of the rings puts it, before the call that needs it. */
static __always_inline void dc_file_send(__u64 file, __u64 inode, int off, __u64 ts)
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
	m->ts = ts;
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
	/* The call's clock starts again after this (its time is its end's). */
	if (nm->job == DC_NAME_TELL)
		dc_file_send(nm->file, nm->inode, dc_file_walk(nm->file, false, 0), dc_now());
}

/* A call's exit namer: the call made in dc_path_scratch, sent with the
 * path of its new file or of the folder its relative name is in; with its
 * second name and the folder of the first relative one (and then, in a
 * second turn of this namer, the second's, when that is another: one walk
 * a turn, so that the verifier checks one); or after the path of the file
 * an empty name stands for; or with the bytes its iovec array asks for.
 * namers: the program array this namer is in, ctx its own. */
static __always_inline void dc_namer_exit(void *ctx, void *namers)
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
	if (nm->job == DC_NAME_IOV) {
		m->ev.req = dc_iov_bytes(nm->file, nm->dirfd);
		dc_send_call(ring, m);
		return;
	}
	/* The file data came from: still open at the return, as the call
	 * held it; told first if the agent has no name for it. */
	if (nm->job == DC_NAME_FD2) {
		m->ev.fd2 = nm->dirfd;
		m->file2 = dc_fd_file(nm->dirfd);
		m->inode2 = m->file2 ? dc_file_inode(m->file2) : 0;
		if (!m->file2 || dc_file_known(m->file2, m->inode2)) {
			dc_send_call(ring, m);
			return;
		}
		nm->job = DC_NAME_TELL;
		nm->file = m->file2;
		nm->inode = m->inode2;
	}
	if (nm->job == DC_NAME_SECOND) {
		bool rel = m->path_len > 1 && m->path[0] != '/', rel2 = dc_second_name(m, nm->file);

		if (!rel && !rel2) {
			dc_send_call(ring, m);
			return;
		}
		/* The first relative name's folder below; the second's in a
		 * second turn only when it is another. */
		nm->job = DC_NAME_FOLDER;
		if (!rel)
			nm->dirfd = nm->dirfd2;
		if (!rel || !rel2 || nm->dirfd2 == nm->dirfd)
			nm->dirfd2 = DC_NO_FOLDER;
	}
	/* Where the kernel's name goes: after the names the call gave, and
	 * in the second turn after the first folder's. */
	n = m->path_len + m->path2_len;
	if (nm->job == DC_NAME_FOLDER2)
		n += m->kpath_len;
	if (n > 3 * DC_PATH_MAX)
		return;
	off = dc_file_walk(nm->file, nm->job == DC_NAME_FOLDER || nm->job == DC_NAME_FOLDER2, nm->dirfd);
	if (nm->job == DC_NAME_TELL) {
		/* Just before the call's end, its time in the merge. */
		dc_file_send(nm->file, nm->inode, off, m->ev.ts + m->ev.dur - (m->ev.dur > 0));
	} else if (nm->job == DC_NAME_FOLDER2) {
		m->kpath2_len = dc_path_copy(off, m->path + n);
	} else {
		m->kpath_len = dc_path_copy(off, m->path + n);
		/* The agent keeps the new file's path whatever came: none
		 * resets what it had for the file. */
		if (nm->job == DC_NAME_OPENED)
			dc_file_note(nm->file, nm->inode);
		if (nm->job == DC_NAME_FOLDER && nm->dirfd2 != DC_NO_FOLDER) {
			nm->job = DC_NAME_FOLDER2;
			nm->dirfd = nm->dirfd2;
			nm->dirfd2 = DC_NO_FOLDER;
			bpf_tail_call(ctx, namers, DC_NAMER_EXIT);
		}
	}
	dc_send_call(ring, m);
}

#endif /* DC_NAMERS_BPF_H */
