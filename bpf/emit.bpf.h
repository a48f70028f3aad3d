/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Turns a finished call (its entry frame and return value) into an event in
 * TRACE mode or into per-(pid, function) totals in PROFILE mode. Shared by the
 * user-level and the system-call programs so both levels report alike.
 */
#ifndef DC_EMIT_BPF_H
#define DC_EMIT_BPF_H

#include "files.bpf.h"
#include "thread.bpf.h"

/* The slots whose calls take the way with names (and a namer). */
#define DC_SLOT_BITS_OF(s) (DC_SLOT_MASK << DC_SLOT_SHIFT(s))
#define DC_SLOTS_NAMED                                                                             \
	(DC_SLOT_BITS_OF(DC_SLOT_PATH) | DC_SLOT_BITS_OF(DC_SLOT_IOV) | DC_SLOT_BITS_OF(DC_SLOT_FD2) |       \
	 DC_SLOT_BITS_OF(DC_SLOT_PATH2))

static __always_inline __u32 dc_slot(__u64 cookie, int slot)
{
	return DC_COOKIE_SLOT(cookie, slot);
}

/* Argument slot 1-6 is args[0-5]; 0 (absent) reads args[7], always 0. The
 * mask bounds the index where a verifier loses a computed one's (6.1). */
static __always_inline __u64 dc_arg(__u64 cookie, const __u64 *args, int slot)
{
	return args[(dc_slot(cookie, slot) - 1) & (DC_FRAME_ARGS - 1)];
}

static __always_inline __u32 dc_retkind(__u64 cookie)
{
	return DC_COOKIE_RET(cookie);
}

/* Size of one item: 1, or an MPI datatype's size read from the process. */
static __always_inline __u64 dc_item_size(__u64 cookie, const __u64 *args)
{
	__u64 size = 0;

	if (!dc_slot(cookie, DC_SLOT_DTYPE))
		return 1;
	if (!dc_dtype_size_offset)
		return 0;
	bpf_probe_read_user(&size, sizeof(size),
			    (const char *)dc_arg(cookie, args, DC_SLOT_DTYPE) + dc_dtype_size_offset);
	return size;
}

/* The bytes a call asks for. An iovec array's (DC_SLOT_IOV) are summed by
 * the exit namer (namers.bpf.h: dc_iov_bytes): the sum's 1,024 turns, in
 * an exit program, were checked once for each way into it (past a million
 * instructions on raw tracepoints). */
static __always_inline __u64 dc_requested(__u64 cookie, const __u64 *args)
{
	__u64 n;

	if (dc_slot(cookie, DC_SLOT_IOV))
		return 0;
	/* A string's length, measured at the return (calls.bpf.c); puts
	 * adds its newline. */
	if (cookie & DC_COOKIE_TEXT)
		return args[DC_FRAME_NESTED] + (dc_retkind(cookie) == DC_RET_LINE);
	if (dc_retkind(cookie) == DC_RET_CHAR)
		return 1;
	n = dc_arg(cookie, args, DC_SLOT_BYTES);
	if (dc_slot(cookie, DC_SLOT_MUL))
		n *= dc_arg(cookie, args, DC_SLOT_MUL);
	return n * dc_item_size(cookie, args);
}

static __always_inline __u64 dc_moved(__u64 cookie, const __u64 *args, long ret, __u64 req)
{
	if (cookie & DC_COOKIE_BYTES_NESTED)
		return args[DC_FRAME_NESTED];
	/* A string moved when the call succeeded: a pointer returned, or a
	 * C int not negative. */
	if (cookie & DC_COOKIE_TEXT)
		return (dc_retkind(cookie) == DC_RET_PLAIN ? ret != 0 : ret >= 0) ? req : 0;
	switch (dc_retkind(cookie)) {
	case DC_RET_CHAR:
		return ret != -1;
	case DC_RET_BYTES:
	case DC_RET_INT_BYTES:
		return ret > 0 ? ret : 0;
	case DC_RET_ITEMS:
		return ret > 0 ? ret * dc_arg(cookie, args, DC_SLOT_BYTES) : 0;
	case DC_RET_STATUS:
		return ret == 0 ? req : 0;
	default:
		return 0;
	}
}

static __always_inline void dc_profile_add(__u32 tgid, __u64 cookie, __u64 dur, __u64 bytes)
{
	struct dc_profile_key key = { .pid = tgid, .func = cookie & (DC_MAX_FUNCS - 1) };
	struct dc_profile_val *v = bpf_map_lookup_elem(&dc_profile, &key);

	if (!v) {
		struct dc_profile_val init = {};

		/* EEXIST from a racing CPU is fine: the lookup below finds its entry. */
		bpf_map_update_elem(&dc_profile, &key, &init, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&dc_profile, &key);
		if (!v) {
			dc_count(DC_STAT_MAP_FULL);
			return;
		}
	}
	/* This CPU's copy: no other CPU writes it, and a BPF program is not
	 * preempted by another on its CPU that could touch the same entry. */
	v->count += 1;
	v->time_ns += dur;
	v->bytes += bytes;
}

/* A call message's head, before its event: no names, handle or file yet.
 * Ring-buffer memory comes as the last records left it. */
static __always_inline void dc_msg_head(struct dc_msg_call *m)
{
	m->type = DC_MSG_CALL;
	m->path_len = 0;
	m->kpath_len = 0;
	m->path2_len = 0;
	m->kpath2_len = 0;
	m->handle = 0;
	m->parent = 0;
	m->file = 0;
	m->inode = 0;
	m->file2 = 0;
	m->inode2 = 0;
}

static __always_inline void dc_fill(struct dc_msg_call *m, __u64 id, __u64 cookie,
				    __u64 ts, __u64 now, const __u64 *args, long ret,
				    __u64 req, __u64 moved, __u32 depth, __u8 flags)
{
	__u32 rk = dc_retkind(cookie);

	dc_msg_head(m);
	m->ev.ts = ts;
	m->ev.dur = now - ts;
	m->ev.pid = id >> 32;
	m->ev.tid = (__u32)id;
	m->ev.func = cookie & (DC_MAX_FUNCS - 1);
	m->ev.cpu = bpf_get_smp_processor_id();
	m->ev.depth = depth;
	m->ev.ret = ret;
	m->ev.req = req;
	m->ev.bytes = moved;
	m->ev.offset = 0;
	m->ev.fd = -1;
	m->ev.path = 0;
	m->ev.fd2 = -1; /* set by the namer (DC_NAME_FD2) */
	m->ev.path2 = 0;
	if (dc_slot(cookie, DC_SLOT_FD)) {
		m->ev.fd = (__s32)dc_arg(cookie, args, DC_SLOT_FD);
		flags |= DC_EV_FD;
	} else if (rk == DC_RET_FD && ret >= 0) {
		m->ev.fd = ret;
		flags |= DC_EV_FD;
	}
	if (dc_slot(cookie, DC_SLOT_OFFSET)) {
		m->ev.offset = dc_arg(cookie, args, DC_SLOT_OFFSET);
		flags |= DC_EV_OFFSET;
	}
	if (dc_slot(cookie, DC_SLOT_HANDLE)) {
		m->handle = dc_arg(cookie, args, DC_SLOT_HANDLE);
		flags |= DC_EV_HANDLE;
	} else if (rk == DC_RET_HANDLE && ret) {
		m->handle = ret;
		flags |= DC_EV_HANDLE | DC_EV_NEW_HANDLE;
	} else if (dc_slot(cookie, DC_SLOT_HANDLE_OUT) && ret == 0) {
		/* The call succeeded and stored its new handle where told. */
		__u64 h = 0;

		bpf_probe_read_user(&h, sizeof(h), (const void *)dc_arg(cookie, args, DC_SLOT_HANDLE_OUT));
		m->handle = h;
		flags |= DC_EV_HANDLE | DC_EV_NEW_HANDLE;
	}
	m->parent = dc_slot(cookie, DC_SLOT_PARENT) ? dc_arg(cookie, args, DC_SLOT_PARENT) : 0;
	/* A handle of references (H5Idec_ref) is released at the last. */
	if ((cookie & DC_COOKIE_CLOSES) && (rk != DC_RET_REFS || ret == 0))
		flags |= DC_EV_CLOSES;
	m->ev.flags = flags;
}

/*
 * Waking the reader for each event costs more than the event: wake it only
 * when this record takes its ring past a multiple of 1 << dc_wakeup_shift
 * bytes (asked before the record is added); its poll timer collects the
 * rest. Past a mark, not above it: a ring that stays above the mark must
 * not wake the agent again for every record (agent/event_rings.h).
 */
static __always_inline __u64 dc_wakeup(void *ring, __u64 size)
{
	__u64 avail = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA);

	return avail >> dc_wakeup_shift != (avail + size + 8) >> dc_wakeup_shift ? BPF_RB_FORCE_WAKEUP
										     : BPF_RB_NO_WAKEUP;
}

/* Sends a call made in this CPU's dc_path_scratch, with its names. */
static __always_inline void dc_send_call(void *ring, struct dc_msg_call *m)
{
	__u32 size = DC_MSG_CALL_SIZE(m);

	if (size > sizeof(*m))
		return;
	if (bpf_ringbuf_output(ring, m, size, dc_wakeup(ring, size)))
		dc_count(DC_STAT_LOST);
}

/*
 * A file's path is walked by a namer (namers.bpf.h), a program of the
 * calling hook's kind that the calling program ends in with a tail call,
 * so that the verifier checks the walk once per namer rather than in every
 * program, and per-function copy, that takes a file. The job is left in
 * this CPU's dc_naming_scratch just before the call.
 */
enum dc_name_job {
	DC_NAME_TELL = 1, /* send file's path at a call's entry (DC_MSG_FILE) */
	DC_NAME_OPENED,	  /* a new descriptor's file: its path after the call's name */
	DC_NAME_FOLDER,	  /* the folder a relative name is in, after the name */
	DC_NAME_SECOND,	  /* a second name (DC_SLOT_PATH2), then the folders */
	DC_NAME_FOLDER2,  /* then the second name's folder, when it is another */
	DC_NAME_IOV,	  /* not a name: the bytes an iovec array asks for */
	DC_NAME_FD2,	  /* the file data came from (DC_SLOT_FD2), told if new */
};
/* No folder to walk: not a descriptor (an int) nor DC_AT_FDCWD. */
#define DC_NO_FOLDER (-(1ll << 40))
struct dc_naming {
	__u64 file;  /* DC_NAME_TELL, DC_NAME_OPENED; DC_NAME_IOV: the array;
		      * DC_NAME_SECOND: the name, in the process */
	__u64 inode; /* DC_NAME_TELL, DC_NAME_OPENED: file's identity (dc_file_inode) */
	__s64 dirfd; /* DC_NAME_FOLDER: the folder's descriptor, or DC_AT_FDCWD;
		      * DC_NAME_IOV: the number of its entries; DC_NAME_FD2:
		      * the descriptor */
	__s64 dirfd2; /* DC_NAME_SECOND: the second name's folder, walked in
		       * a second turn (DC_NAME_FOLDER2) when it is another */
	__u32 job;
	__u32 depth; /* at a user call's entry: its frame on the thread's stack */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dc_naming);
} dc_naming_scratch SEC(".maps") __weak;

/* Hands a job to slot of namers; returns only if the tail call did not
 * happen (the caller then goes on without the name). */
static __always_inline void dc_ask_namer(void *ctx, void *namers, __u32 slot, __u32 job, __u64 file, __u64 inode,
					 long dirfd, long dirfd2, __u32 depth)
{
	struct dc_naming *nm;
	__u32 zero = 0;

	nm = bpf_map_lookup_elem(&dc_naming_scratch, &zero);
	if (!nm)
		return;
	nm->job = job;
	nm->file = file;
	nm->inode = inode;
	nm->dirfd = dirfd;
	nm->dirfd2 = dirfd2;
	nm->depth = depth;
	bpf_tail_call(ctx, namers, slot);
}

/* Whether the agent wants file's path told: the first call on a file
 * opened some other way than by a traced open (dup, fork, a descriptor
 * passed over a socket, one open before tracing), or after its entry went
 * from dc_named_files. inode: the file's. told: the thread's last file
 * found told, kept. */
static __always_inline bool dc_file_untold(__u64 file, __u64 inode, struct dc_told *told)
{
	if (!file)
		return false;
	if (file == told->file && inode == told->inode)
		return false;
	if (!dc_file_known(file, inode))
		return true;
	told->file = file;
	told->inode = inode;
	return false;
}

/* The file behind a C library stream's descriptor; 0 for a stream on
 * memory (fmemopen), whose descriptor is -1. */
static __always_inline __u64 dc_stream_file(__u64 stream)
{
	int fd = -1;

	if (!stream || bpf_probe_read_user(&fd, sizeof(fd), (const char *)stream + dc_fileno_offset))
		return 0;
	return dc_fd_file(fd);
}

/* The file a call's descriptor or stream names, taken at the call's entry
 * (a close has let go of it by its return); 0 for a call on neither, and
 * in PROFILE mode, which names nothing. */
static __always_inline __u64 dc_entry_file(__u64 cookie, const __u64 *args)
{
	if (dc_mode != DC_MODE_TRACE)
		return 0;
	if (dc_slot(cookie, DC_SLOT_FD))
		return dc_fd_file((int)dc_arg(cookie, args, DC_SLOT_FD));
	if (cookie & DC_COOKIE_STD)
		return dc_fd_file(cookie & DC_COOKIE_READS ? 0 : 1);
	/* A stream's file (not one the call makes anew: freopen's). */
	if ((cookie & DC_COOKIE_STREAM) && dc_slot(cookie, DC_SLOT_HANDLE) && dc_retkind(cookie) != DC_RET_HANDLE)
		return dc_stream_file(dc_arg(cookie, args, DC_SLOT_HANDLE));
	return 0;
}

/*
 * Reports one finished call of the thread id (tgid << 32 | tid, from
 * dc_task_id); path-taking calls carry the path string. file: the struct
 * file its descriptor named at entry (0 for none); a call that returns a
 * new descriptor names the file behind it. namers: the hook's namers
 * (NULL: none), whose exit slot sends a call that has a file or folder to
 * name; ctx: the program's, for the tail call; told: the thread's
 * (dc_file_untold); inode: file's, taken with it.
 */
static __always_inline void dc_finish(void *ctx, void *namers, struct dc_told *told, __u64 id, __u64 cookie, __u64 ts, const __u64 *args,
				      long ret, __u32 depth, __u8 flags, __u64 file, __u64 inode)
{
	__u64 now = dc_now();
	__u32 rk = dc_retkind(cookie);
	struct dc_msg_call *m;
	bool opened = false;
	__u64 req, moved;
	void *ring;

	/* A function returning int leaves the upper half of rax undefined. */
	if (rk == DC_RET_FD || rk == DC_RET_INT || rk == DC_RET_INT_BYTES || rk == DC_RET_STATUS || rk == DC_RET_CHAR ||
	    rk == DC_RET_LINE || rk == DC_RET_REFS)
		ret = (int)ret;
	req = dc_requested(cookie, args);
	moved = dc_moved(cookie, args, ret, req);
	if (dc_mode == DC_MODE_PROFILE) {
		dc_profile_add(id >> 32, cookie, now - ts, moved);
		return;
	}
	/* A new descriptor's file, or a new stream's (fopen). */
	if (!file && rk == DC_RET_FD && ret >= 0) {
		file = dc_fd_file(ret);
		opened = file != 0;
	} else if (!file && rk == DC_RET_HANDLE && (cookie & DC_COOKIE_STREAM)) {
		file = dc_stream_file(ret);
		opened = file != 0;
	}
	if (opened)
		inode = dc_file_inode(file);
#ifdef DC_BENCH_WITHOUT_RING
	/* A benchmark build: the record made in this CPU's scratch and
	 * dropped, so that only its transport is left out of the cost. */
	if (!dc_slot(cookie, DC_SLOT_PATH) && !opened) {
		__u32 zero = 0;

		m = bpf_map_lookup_elem(&dc_path_scratch, &zero);
		if (m)
			dc_fill(m, id, cookie, ts, now, args, ret, req, moved, depth, flags);
		return;
	}
#endif
	ring = dc_ring();
	if (!ring) {
		dc_count(DC_STAT_LOST);
		return;
	}
	/* Most calls: no name given, no new descriptor, no iovec array, no
	 * second file (one test of the cookie, so that the verifier follows
	 * one way into the rest, not one per slot). */
	if (!(cookie & DC_SLOTS_NAMED) && !opened) {
		__u64 wake = dc_wakeup(ring, DC_MSG_CALL_BASE);

		m = bpf_ringbuf_reserve(ring, DC_MSG_CALL_BASE, 0);
		if (!m) {
			dc_count(DC_STAT_LOST);
			return;
		}
		dc_fill(m, id, cookie, ts, now, args, ret, req, moved, depth, flags);
		m->file = file;
		m->inode = inode;
		bpf_ringbuf_submit(m, wake);
		return;
	}
	{
		__u32 zero = 0;
		long n = 0;

		m = bpf_map_lookup_elem(&dc_path_scratch, &zero);
		if (!m)
			return;
		dc_fill(m, id, cookie, ts, now, args, ret, req, moved, depth, flags);
		m->file = file;
		m->inode = inode;
		if (dc_slot(cookie, DC_SLOT_PATH)) {
			m->ev.flags |= DC_EV_PATHARG;
			n = bpf_probe_read_user_str(m->path, DC_PATH_MAX,
						    (const void *)dc_arg(cookie, args, DC_SLOT_PATH));
			if (n < 0)
				n = 0;
			if (n > DC_PATH_MAX)
				n = DC_PATH_MAX;
		}
		m->path_len = n;
		if (namers) {
			bool has_dirfd = dc_slot(cookie, DC_SLOT_DIRFD);
			long dirfd = has_dirfd ? (int)dc_arg(cookie, args, DC_SLOT_DIRFD) : DC_AT_FDCWD;
			/* The namer's job, handed over at one place (each place
			 * is a copy the verifier checks). */
			__u64 what = 0, inode = 0;
			long fd = 0, fd2 = DC_NO_FOLDER;
			__u32 job = 0;

			/* An empty name with a dirfd (fstatat's AT_EMPTY_PATH) is
			 * the dirfd's own file, told before the call. */
			if (n <= 1 && !file && has_dirfd) {
				m->file = dc_fd_file(dirfd);
				m->inode = m->file ? dc_file_inode(m->file) : 0;
				if (told && dc_file_untold(m->file, m->inode, told))
					job = DC_NAME_TELL;
				what = m->file;
				inode = m->inode;
			} else if (opened) {
				job = DC_NAME_OPENED;
				what = m->file;
				inode = m->inode;
			} else if (dc_slot(cookie, DC_SLOT_PATH2)) {
				job = DC_NAME_SECOND;
				what = dc_arg(cookie, args, DC_SLOT_PATH2);
				fd = dirfd;
				/* The second name's folder: the argument before it. */
				fd2 = has_dirfd ? (int)args[(dc_slot(cookie, DC_SLOT_PATH2) - 2) & (DC_FRAME_ARGS - 1)]
						: DC_AT_FDCWD;
			} else if (n > 1 && m->path[0] != '/') {
				job = DC_NAME_FOLDER;
				fd = dirfd;
			} else if (dc_slot(cookie, DC_SLOT_IOV)) {
				job = DC_NAME_IOV;
				what = dc_arg(cookie, args, DC_SLOT_IOV);
				fd = dc_arg(cookie, args, DC_SLOT_BYTES);
			} else if (dc_slot(cookie, DC_SLOT_FD2)) {
				job = DC_NAME_FD2;
				fd = (int)dc_arg(cookie, args, DC_SLOT_FD2);
			}
			if (job)
				dc_ask_namer(ctx, namers, DC_NAMER_EXIT, job, what, inode, fd, fd2, 0);
		}
		/* No namer, or it could not be reached: the name the call gave. */
		dc_send_call(ring, m);
	}
}

/* The message of a kernel event (below): no names yet. */
static __always_inline void dc_kernel_msg(struct dc_msg_call *m, __u32 func, __u32 pid, __u32 tid, __u64 ts, __u64 dur,
					  __u64 bytes, __s64 offset, __s64 ret, __u8 flags, __u64 file, __u64 inode)
{
	dc_msg_head(m);
	m->file = file;
	m->inode = inode;
	m->ev = (struct dc_event){
		.ts = ts, .dur = dur, .pid = pid, .tid = tid, .func = func,
		.cpu = bpf_get_smp_processor_id(), .ret = ret, .req = bytes, .bytes = bytes,
		.offset = offset, .fd = -1, .fd2 = -1, .flags = DC_EV_KERNEL | flags,
	};
}

/* An event the kernel reports of a traced process that may not be the
 * current one (completions run in interrupts or other threads): function
 * func's, of thread pid/tid, flags beside DC_EV_KERNEL, on file (identity
 * inode; 0: none). */
static __always_inline void dc_emit_kernel_event(__u32 func, __u32 pid, __u32 tid, __u64 ts, __u64 dur,
						 __u64 bytes, __s64 offset, __s64 ret, __u8 flags, __u64 file,
						 __u64 inode)
{
	struct dc_msg_call *m;
	__u64 wake;
	void *ring;

	if (dc_mode == DC_MODE_PROFILE) {
		dc_profile_add(pid, func, dur, bytes);
		return;
	}
	ring = dc_ring();
	wake = ring ? dc_wakeup(ring, DC_MSG_CALL_BASE) : 0;
	m = ring ? bpf_ringbuf_reserve(ring, DC_MSG_CALL_BASE, 0) : 0;
	if (!m) {
		dc_count(DC_STAT_LOST);
		return;
	}
	dc_kernel_msg(m, func, pid, tid, ts, dur, bytes, offset, ret, flags, file, inode);
	bpf_ringbuf_submit(m, wake);
}

/* An event of the kernel's own (block request, page cache), at an offset,
 * reported under the function the agent set for kfunc. */
static __always_inline void dc_emit_kernel(__u32 kfunc, __u32 pid, __u32 tid, __u64 ts, __u64 dur,
					   __u64 bytes, __s64 offset, __s64 ret)
{
	struct dc_config *cfg = dc_settings();

	if (!cfg || kfunc >= DC_NR_KFUNCS)
		return;
	dc_emit_kernel_event(cfg->kernel_func[kfunc], pid, tid, ts, dur, bytes, offset, ret, DC_EV_OFFSET, 0, 0);
}

#endif /* DC_EMIT_BPF_H */
