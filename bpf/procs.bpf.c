// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Process life of the job: children of tracked processes become tracked,
 * exec renames them, and the last thread's exit reports the wait status and
 * frees every map entry of the process, so long jobs do not fill the maps.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "thread.bpf.h"
#include "holds.bpf.h"

static __always_inline void send_proc_task(__u32 kind, __u32 pid, __u32 ppid, __s32 code, __u32 task)
{
	void *ring = dc_ring();
	struct dc_msg_proc *m;

	m = ring ? bpf_ringbuf_reserve(ring, sizeof(*m), 0) : 0;
	if (!m) {
		dc_count(DC_STAT_LOST);
		return;
	}
	m->type = DC_MSG_PROC;
	m->slurm_task = task;
	m->proc.ts = bpf_ktime_get_ns();
	m->proc.pid = pid;
	m->proc.ppid = ppid;
	m->proc.kind = kind;
	m->proc.exit_code = code;
	bpf_get_current_comm(m->proc.comm, sizeof(m->proc.comm));
	bpf_ringbuf_submit(m, 0);
}

static __always_inline void send_proc(__u32 kind, __u32 pid, __u32 ppid, __s32 code)
{
	send_proc_task(kind, pid, ppid, code, 0);
}

/*
 * Whether the current task runs with the job user's credentials alone:
 * every uid the job's, no group gained from a set-group-id program, no
 * capability (for a user other than root). What a task with more does is
 * withheld from the job's user, as the kernel withholds it from ptrace.
 */
static __always_inline bool creds_are_job(struct task_struct *task)
{
	const struct cred *c = BPF_CORE_READ(task, cred);
	__u64 caps = 0;
	__u32 gid;

	if (BPF_CORE_READ(c, uid.val) != dc_job_uid || BPF_CORE_READ(c, euid.val) != dc_job_uid ||
	    BPF_CORE_READ(c, suid.val) != dc_job_uid || BPF_CORE_READ(c, fsuid.val) != dc_job_uid)
		return false;
	gid = BPF_CORE_READ(c, gid.val);
	if (BPF_CORE_READ(c, egid.val) != gid || BPF_CORE_READ(c, sgid.val) != gid || BPF_CORE_READ(c, fsgid.val) != gid)
		return false;
	/* kernel_cap_t: 64 bits, as two words before Linux 6.3 and one since. */
	bpf_probe_read_kernel(&caps, sizeof(caps), __builtin_preserve_access_index(&c->cap_permitted));
	return dc_job_uid == 0 || caps == 0;
}

SEC("raw_tp/sched_process_fork")
int dc_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (struct task_struct *)ctx->args[0];
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u32 one = 1;

	/* A new thread shares its tgid, which is tracked already. */
	if (ctgid == ptgid)
		return 0;
	if (dc_skip_comm[0][0] && bpf_map_lookup_elem(&dc_skipped, &ptgid)) {
		bpf_map_update_elem(&dc_skipped, &ctgid, &one, BPF_ANY);
		return 0;
	}
	if (!dc_is_tracked(ptgid))
		return 0;
	if (bpf_map_update_elem(&dc_tracked, &ctgid, &one, BPF_ANY)) {
		dc_count(DC_STAT_MAP_FULL);
		return 0;
	}
	send_proc(DC_PROC_FORK, ctgid, ptgid, 0);
	return 0;
}

#define ENV_STR_MAX 4096

struct env_buf {
	char s[ENV_STR_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct env_buf);
} env_scratch SEC(".maps");

static __always_inline int same_var(const char *s)
{
	for (int i = 0; i < DC_ENV_MATCH_MAX; i++) {
		if (i == dc_env_match_len)
			return s[i] == 0; /* the whole value, not a prefix of it */
		if (s[i] != dc_env_match[i])
			return 0;
	}
	return 0;
}

struct env_walk {
	unsigned long p, end;
	struct env_buf *buf;
	int found;
	int in_long; /* the walk is inside a variable longer than the buffer */
	int stuck;   /* a variable could not be read */
	__u32 task;  /* SLURM_PROCID + 1, 0 until seen */
};

/* SLURM_PROCID=N: the task, named in the trace by it and its node. */
static __always_inline void take_task(struct env_walk *w)
{
	static const char key[] = "SLURM_PROCID=";
	const char *s = w->buf->s;
	__u32 v = 0;

	for (int i = 0; i < sizeof(key) - 1; i++)
		if (s[i] != key[i])
			return;
	for (int i = sizeof(key) - 1; i < sizeof(key) - 1 + 9; i++) {
		if (s[i] < '0' || s[i] > '9')
			break;
		v = v * 10 + (s[i] - '0');
	}
	w->task = v + 1;
}

/* One variable per call: bpf_loop's callback, so the verifier checks it
 * once; without bpf_loop (before 5.17), the body of a bounded loop. */
static long env_step(__u32 i, void *arg)
{
	struct env_walk *w = arg;
	long n;

	if (w->p >= w->end)
		return 1;
	n = bpf_probe_read_user_str(w->buf->s, ENV_STR_MAX, (const void *)w->p);
	if (n <= 0) {
		w->stuck = 1;
		return 1;
	}
	/* A long variable (a PATH, an exported function): stepped over a
	 * buffer at a time. It is never the one matched, which is short; a
	 * read that starts on its last NUL ends it. */
	if (n >= ENV_STR_MAX) {
		w->p += ENV_STR_MAX - 1;
		w->in_long = 1;
		return 0;
	}
	if (w->in_long) {
		w->in_long = 0;
		w->p += n;
		return 0;
	}
	if (same_var(w->buf->s))
		w->found = 1;
	else if (!w->task)
		take_task(w);
	w->p += n;
	/* Once matched, the rest is read only for the task's number. */
	return w->found && w->task ? 1 : 0;
}

/*
 * Whether the file just exec'd is one --skip-program names, by the last
 * DC_COMM_LEN - 1 bytes of its path (what a script is run as: its comm
 * is the interpreter's when a shell runs it).
 */
static __always_inline int skipped_program(struct trace_event_raw_sched_process_exec *ctx)
{
	struct env_buf *buf;
	__u32 zero = 0;
	long n;

	if (!dc_skip_comm[0][0] || !(buf = bpf_map_lookup_elem(&env_scratch, &zero)))
		return 0;
	n = bpf_probe_read_kernel_str(buf->s, ENV_STR_MAX, (char *)ctx + (ctx->__data_loc_filename & 0xffff));
	if (n <= 1)
		return 0;
	for (int k = 0; k < DC_SKIP_COMMS; k++) {
		int len = 0, same;

		while (len < DC_COMM_LEN && dc_skip_comm[k][len])
			len++;
		if (!len || len + 1 > n)
			continue;
		/* "/.../NAME": the path ends with NAME after a slash, or is NAME. */
		same = len + 1 == n || buf->s[(n - len - 2) & (ENV_STR_MAX - 1)] == '/';
		for (int i = 0; same && i < DC_COMM_LEN - 1 && i < len; i++)
			if (buf->s[(n - 1 - len + i) & (ENV_STR_MAX - 1)] != dc_skip_comm[k][i])
				same = 0;
		if (same)
			return 1;
	}
	return 0;
}

/*
 * Whether the program just exec'd has NAME=VALUE in its environment: 1, 0,
 * or -1 where the walk ended before the environment did (a variable that
 * could not be read, or more than the walk's steps) without a match.
 */
static __always_inline int env_matches(__u32 *slurm_task, bool loop)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 zero = 0;
	struct env_walk w = {
		.p = BPF_CORE_READ(task, mm, env_start),
		.end = BPF_CORE_READ(task, mm, env_end),
		.buf = bpf_map_lookup_elem(&env_scratch, &zero),
	};

	if (!w.buf)
		return 0;
	if (loop) {
		bpf_loop(DC_ENV_MAX_STEPS, env_step, &w, 0);
	} else {
		for (__u32 i = 0; i < DC_ENV_MAX_STEPS_BOUNDED; i++)
			if (env_step(i, &w))
				break;
	}
	*slurm_task = w.task;
	if (w.found)
		return 1;
	return w.stuck || w.p < w.end ? -1 : 0;
}

/* Where uprobes are placed per process: held until the agent has made
 * the process's links, before the loader maps its first library. */
static __always_inline void hold_for_links(void)
{
	struct dc_lib_stop s = { .fd = -1 };

	dc_hold_current(&s);
}

/*
 * Two programs, one loaded (agent/bpf_load.c): a kernel without bpf_loop
 * refuses a program that names a callback even where it is never called.
 */
static __always_inline int on_exec(struct trace_event_raw_sched_process_exec *ctx, bool loop)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, one = 1, slurm_task = 0;
	struct task_struct *task;
	int matched;

	task = (struct task_struct *)bpf_get_current_task();
	if (dc_is_tracked(tgid)) {
		/* A job of root's keeps whatever it runs: its file is root's. */
		if (dc_job_uid == 0 || creds_are_job(task)) {
			send_proc(DC_PROC_EXEC, tgid, 0, 0);
			/* Exec'd by a thread, which took the process's pid: its
			 * links served the task that had it (holds.bpf.h). */
			if (dc_scope_on && ctx->old_pid != tgid)
				hold_for_links();
			return 0;
		}
		/* Out before its first call: its children are never taken in. */
		bpf_map_delete_elem(&dc_tracked, &tgid);
		dc_thread_drop();
		send_proc(DC_PROC_LEFT, tgid, BPF_CORE_READ(task, real_parent, tgid), DC_LEFT_PRIVILEGES);
		return 0;
	}
	if (!dc_env_match_len || !creds_are_job(task))
		return 0;
	if (dc_netns_ino && BPF_CORE_READ(task, nsproxy, net_ns, ns.inum) != dc_netns_ino)
		return 0;
	if (bpf_map_lookup_elem(&dc_skipped, &tgid))
		return 0;
	if (skipped_program(ctx)) {
		bpf_map_update_elem(&dc_skipped, &tgid, &one, BPF_ANY);
		return 0;
	}
	matched = env_matches(&slurm_task, loop);
	/* Said to the agent, never written to the node file. */
	if (matched < 0)
		send_proc(DC_PROC_ENV_UNREAD, tgid, 0, 0);
	if (matched <= 0)
		return 0;
	if (bpf_map_update_elem(&dc_tracked, &tgid, &one, BPF_ANY)) {
		dc_count(DC_STAT_MAP_FULL);
		return 0;
	}
	send_proc_task(DC_PROC_START, tgid, BPF_CORE_READ(task, real_parent, tgid), 0, slurm_task);
	if (dc_scope_on)
		hold_for_links();
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int dc_exec(struct trace_event_raw_sched_process_exec *ctx)
{
	return on_exec(ctx, true);
}

SEC("tracepoint/sched/sched_process_exec")
int dc_exec_bounded(struct trace_event_raw_sched_process_exec *ctx)
{
	return on_exec(ctx, false);
}

SEC("tracepoint/sched/sched_process_exit")
int dc_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	__s32 code;

	dc_thread_forget(tid);
	if (!dc_is_tracked(tgid)) {
		if (dc_skip_comm[0][0] && tid == tgid)
			bpf_map_delete_elem(&dc_skipped, &tgid);
		return 0;
	}
	task = (struct task_struct *)bpf_get_current_task();
	/* Only the last thread out ends the process. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	code = BPF_CORE_READ(task, exit_code);
	if (!code)
		code = BPF_CORE_READ(task, signal, group_exit_code);
	send_proc(DC_PROC_EXIT, tgid, BPF_CORE_READ(task, real_parent, tgid), code);
	bpf_map_delete_elem(&dc_tracked, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
