// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "uprobe_multi.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

/* The kernel's UAPI (include/uapi/linux/bpf.h, Linux 6.6). */
#define DC_BPF_F_UPROBE_MULTI_RETURN 1u

struct uprobe_multi_attr { /* union bpf_attr, link_create variant */
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

int dc_uprobe_multi_prepare(struct bpf_program *prog)
{
	return bpf_program__set_expected_attach_type(prog, DC_BPF_TRACE_UPROBE_MULTI);
}

int dc_uprobe_multi_attach(struct bpf_program *prog, const char *path, const unsigned long *offsets,
			   const __u64 *cookies, size_t n, bool retprobe)
{
	return dc_uprobe_multi_link(bpf_program__fd(prog), path, offsets, cookies, n, retprobe, 0);
}

int dc_uprobe_multi_link(int prog_fd, const char *path, const unsigned long *offsets, const __u64 *cookies,
			 size_t n, bool retprobe, pid_t pid)
{
	struct uprobe_multi_attr attr = {
		.prog_fd = prog_fd,
		.attach_type = DC_BPF_TRACE_UPROBE_MULTI,
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offsets,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = n,
		.multi_flags = retprobe ? DC_BPF_F_UPROBE_MULTI_RETURN : 0,
		.pid = (__u32)pid,
	};
	int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));

	return fd < 0 ? -errno : fd;
}

struct pairs {
	int entry_prog, exit_prog;
	const char *path;
	const unsigned long *offsets;
	const __u64 *cookies;
	pid_t pid;
	const struct dc_uprobe_sink *sink;
};

static int pair(const struct pairs *q, size_t from, size_t n)
{
	int in, out;

	in = dc_uprobe_multi_link(q->entry_prog, q->path, q->offsets + from, q->cookies + from, n, false, q->pid);
	if (in < 0)
		return in;
	out = dc_uprobe_multi_link(q->exit_prog, q->path, q->offsets + from, q->cookies + from, n, true, q->pid);
	if (out < 0) {
		close(in);
		return out;
	}
	if (q->sink->keep(q->sink->ctx, in)) {
		close(in);
		close(out);
		return -ENOMEM;
	}
	return q->sink->keep(q->sink->ctx, out) ? (close(out), -ENOMEM) : 0;
}

static int some(const struct pairs *q, size_t from, size_t n, size_t *attached)
{
	int rc;

	if (!n)
		return 0;
	rc = pair(q, from, n);
	if (rc == 0) {
		*attached += n;
		return 0;
	}
	if (rc == -ENOMEM || rc == -EPERM || rc == -ENOENT || rc == -ESRCH)
		return rc;
	if (n == 1) {
		q->sink->refused(q->sink->ctx, from);
		return 0;
	}
	rc = some(q, from, n / 2, attached);
	return rc ? rc : some(q, from + n / 2, n - n / 2, attached);
}

int dc_uprobe_multi_pairs(int entry_prog, int exit_prog, const char *path, const unsigned long *offsets,
			  const __u64 *cookies, size_t n, pid_t pid, const struct dc_uprobe_sink *sink,
			  size_t *attached)
{
	const struct pairs q = { entry_prog, exit_prog, path, offsets, cookies, pid, sink };

	return some(&q, 0, n, attached);
}
