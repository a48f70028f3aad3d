// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * io_uring requests: each read, write, fsync, open... that a traced process
 * puts in a ring, from its submission (io_uring_submit_req, or
 * io_uring_submit_sqe before Linux 6.3: whichever passes the request
 * first; the agent attaches to it by name) to its completion
 * (io_uring_complete), charged to the thread that
 * submitted it: the process's own, or its SQPOLL thread, which is one of
 * the process's threads. Its file is the one the kernel used (fixed files
 * too), named as a descriptor's file is; a close's, the file its
 * descriptor named at the submission; an open's, the file its new
 * descriptor names at the completion; its result is ret and, for the
 * requests that move data (the agent's dc_config.uring_moves), its bytes.
 * Raw tracepoints: io_uring_complete passes the completion's fields on
 * some kernels and the completion itself on others (dc_uring_cqe, from
 * the kernel's BTF).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "namers.bpf.h"

/* io_uring_complete's third argument is the struct io_uring_cqe *. */
const volatile bool dc_uring_cqe = false;

struct uring_start {
	__u64 ts;
	__u32 pid, tid;
	__u64 file, inode; /* a close's file, taken at the submission */
	bool fixed;        /* an open into the ring's registered files */
};

/* Requests submitted and not completed yet, by their address. LRU: one
 * that never completes (its ring torn down) is pushed out, not kept. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct uring_start);
} dc_uring_reqs SEC(".maps");

/* The name a path-based request was given (statx, unlinkat, mkdirat,
 * renameat, linkat, symlinkat's link), and a rename's or link's new one,
 * read at its submission while the request holds them, with the folders
 * relative ones are in, walked then in the submitter's own view; kept
 * until the completion, which sends them. Laid out as a call's message
 * carries them (dc_event.h): the folder of the first relative name, and
 * the second's when it is another. */
enum { UN_NAME, UN_NAME2, UN_FOLDER, UN_FOLDER2, UN_NAMES };

struct uring_name {
	__u32 len[UN_NAMES];
	char s[UN_NAMES][DC_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, struct uring_name);
} dc_uring_names SEC(".maps");

/* Where a name is made before it goes into dc_uring_names. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct uring_name);
} dc_uring_name_scratch SEC(".maps");

static __always_inline bool path_op(__u8 op)
{
	return op == IORING_OP_STATX || op == IORING_OP_UNLINKAT || op == IORING_OP_MKDIRAT ||
	       op == IORING_OP_RENAMEAT || op == IORING_OP_LINKAT || op == IORING_OP_SYMLINKAT;
}

/* A prepared path-based request's names (struct filename; 0: none) and
 * the folders they are in. */
struct request_names {
	__u64 name[2];
	long dfd[2];
};

/* Name i of the request: its folder and struct filename, from the
 * prepared command's own type. */
#define TAKE(i, type, dfd_field, name_field)                                                       \
	(n->dfd[i] = BPF_CORE_READ((struct type *)cmd, dfd_field),                                 \
	 n->name[i] = (__u64)BPF_CORE_READ((struct type *)cmd, name_field))

static __always_inline void request_names(struct io_kiocb *r, __u8 op, struct request_names *n)
{
	void *cmd = &r->cmd;

	switch (op) {
	case IORING_OP_STATX:
		TAKE(0, io_statx, dfd, filename);
		break;
	case IORING_OP_UNLINKAT:
		TAKE(0, io_unlink, dfd, filename);
		break;
	case IORING_OP_MKDIRAT:
		TAKE(0, io_mkdir, dfd, filename);
		break;
	case IORING_OP_RENAMEAT:
		TAKE(0, io_rename, old_dfd, oldpath);
		TAKE(1, io_rename, new_dfd, newpath);
		break;
	case IORING_OP_LINKAT:
		TAKE(0, io_link, old_dfd, oldpath);
		TAKE(1, io_link, new_dfd, newpath);
		break;
	case IORING_OP_SYMLINKAT: /* its old path is the link's text, not a file */
		TAKE(0, io_link, new_dfd, newpath);
		break;
	}
}
#undef TAKE

/* Keeps request req's names, and the folders of the relative ones. */
static __always_inline void keep_names(__u64 req, struct request_names *n)
{
	struct uring_name *nm;
	__u32 zero = 0;
	bool rel[2];
	long dir[2];

	nm = bpf_map_lookup_elem(&dc_uring_name_scratch, &zero);
	if (!nm)
		return;
	for (int i = 0; i < 2; i++) {
		struct filename *f = (void *)n->name[i]; /* (outside the CO-RE read: a type of ours) */
		long got = 0;

		if (f)
			got = bpf_probe_read_kernel_str(nm->s[i], DC_PATH_MAX, BPF_CORE_READ(f, name));
		nm->len[i] = got > 0 ? got : 0;
		rel[i] = got > 1 && nm->s[i][0] != '/';
	}
	/* The first relative name's folder, then the second's when it is
	 * another. (Unrolled: 6.1's verifier refuses a loop whose head
	 * follows a call, "back-edge".) */
	dir[0] = rel[0] ? n->dfd[0] : rel[1] ? n->dfd[1] : DC_NO_FOLDER;
	dir[1] = rel[0] && rel[1] && n->dfd[1] != n->dfd[0] ? n->dfd[1] : DC_NO_FOLDER;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		nm->len[UN_FOLDER + i] = 0;
		if (dir[i] != DC_NO_FOLDER)
			nm->len[UN_FOLDER + i] = dc_path_copy(dc_file_walk(0, true, dir[i]), nm->s[(UN_FOLDER + i) & 3]);
	}
	if (bpf_map_update_elem(&dc_uring_names, &req, nm, BPF_ANY))
		dc_count(DC_STAT_MAP_FULL);
}

/* Sends a path-based request's event with the names kept at its
 * submission: whether there were any. */
static __always_inline bool send_named(__u64 req, __u32 func, const struct uring_start *s, __u64 now, int res)
{
	struct uring_name *nm = bpf_map_lookup_elem(&dc_uring_names, &req);
	struct dc_msg_call *m;
	__u32 zero = 0, at = 0;
	void *ring;

	if (!nm)
		return false;
	m = bpf_map_lookup_elem(&dc_path_scratch, &zero);
	ring = dc_ring();
	if (!m || !ring) {
		bpf_map_delete_elem(&dc_uring_names, &req);
		return false;
	}
	dc_kernel_msg(m, func, s->pid, s->tid, s->ts, now - s->ts, 0, 0, res, DC_EV_PATHARG, 0, 0);
	/* path[]: the name, the second, then the folders, each after the last. */
	for (int i = 0; i < UN_NAMES; i++) {
		__u32 len = nm->len[i];

		if (len > DC_PATH_MAX || at > 3 * DC_PATH_MAX) {
			bpf_map_delete_elem(&dc_uring_names, &req);
			return false;
		}
		bpf_probe_read_kernel(m->path + at, len, nm->s[i]);
		at += len;
	}
	m->path_len = nm->len[UN_NAME];
	m->path2_len = nm->len[UN_NAME2];
	m->kpath_len = nm->len[UN_FOLDER];
	m->kpath2_len = nm->len[UN_FOLDER2];
	bpf_map_delete_elem(&dc_uring_names, &req);
	dc_send_call(ring, m);
	return true;
}

SEC("raw_tp")
int dc_uring_submit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), req = ctx->args[0];
	struct uring_start s = { .pid = id >> 32, .tid = (__u32)id };
	struct io_kiocb *r = (void *)req;
	__u8 op;

	if (dc_stopped || !dc_is_tracked(id >> 32))
		return 0;
	op = BPF_CORE_READ(r, opcode);
	/* The request is prepared: its command holds the descriptor to
	 * close, still open in the submitter's table, or where an open puts
	 * its file. */
	if (op == IORING_OP_CLOSE && dc_mode == DC_MODE_TRACE &&
	    !BPF_CORE_READ((struct io_close *)&r->cmd, file_slot)) {
		s.file = dc_fd_file(BPF_CORE_READ((struct io_close *)&r->cmd, fd));
		s.inode = s.file ? dc_file_inode(s.file) : 0;
		if (s.file && !dc_file_known(s.file, s.inode))
			dc_file_send(s.file, s.inode, dc_file_walk(s.file, false, 0), dc_now());
	} else if (op == IORING_OP_OPENAT || op == IORING_OP_OPENAT2) {
		s.fixed = BPF_CORE_READ((struct io_open *)&r->cmd, file_slot) != 0;
	} else if (dc_mode == DC_MODE_TRACE && path_op(op)) {
		struct request_names n = {};

		request_names(r, op, &n);
		if (n.name[0])
			keep_names(req, &n);
	}
	s.ts = dc_now();
	if (bpf_map_update_elem(&dc_uring_reqs, &req, &s, BPF_ANY))
		dc_count(DC_STAT_MAP_FULL);
	return 0;
}

SEC("raw_tp")
int dc_uring_complete(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 key = ctx->args[1], now = dc_now(), file = 0, inode = 0, bytes;
	struct io_kiocb *req = (void *)key;
	struct dc_config *cfg = dc_settings();
	struct uring_start *s, start;
	__u32 op, func;
	int res;

	s = bpf_map_lookup_elem(&dc_uring_reqs, &key);
	if (!s || !cfg)
		return 0;
	start = *s;
	bpf_map_delete_elem(&dc_uring_reqs, &key);
	op = BPF_CORE_READ(req, opcode) & (DC_URING_OPS - 1);
	func = cfg->uring_func[op];
	if (!func--)
		return 0; /* an operation the agent does not name */
	if (dc_uring_cqe)
		res = BPF_CORE_READ((struct io_uring_cqe *)ctx->args[2], res);
	else
		res = (int)ctx->args[3];
	bytes = res > 0 && (cfg->uring_moves >> op & 1) ? res : 0;
	/* Its file, whose path is told first if the agent has none, timed
	 * before the request's end so that the agent's merge puts it first. */
	if (dc_mode == DC_MODE_TRACE) {
		file = (__u64)BPF_CORE_READ(req, file);
		/* A close has none left; an open's new descriptor is in the
		 * table the request's process shares (io-wq and SQPOLL
		 * threads too). */
		if (!file && start.file)
			file = start.file;
		else if (!file && res >= 0 && !start.fixed && (op == IORING_OP_OPENAT || op == IORING_OP_OPENAT2))
			file = dc_fd_file(res);
		inode = file == start.file ? start.inode : file ? dc_file_inode(file) : 0;
		if (file && !dc_file_known(file, inode))
			dc_file_send(file, inode, dc_file_walk(file, false, 0), now - 1);
	}
	if (dc_mode == DC_MODE_TRACE && path_op(op) && send_named(key, func, &start, now, res))
		return 0;
	dc_emit_kernel_event(func, start.pid, start.tid, start.ts, now - start.ts, bytes, 0, res, 0, file, inode);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
