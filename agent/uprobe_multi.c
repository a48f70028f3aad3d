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
	return dc_uprobe_multi_link(bpf_program__fd(prog), path, offsets, cookies, n, retprobe);
}

int dc_uprobe_multi_link(int prog_fd, const char *path, const unsigned long *offsets, const __u64 *cookies,
			 size_t n, bool retprobe)
{
	struct uprobe_multi_attr attr = {
		.prog_fd = prog_fd,
		.attach_type = DC_BPF_TRACE_UPROBE_MULTI,
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offsets,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = n,
		.multi_flags = retprobe ? DC_BPF_F_UPROBE_MULTI_RETURN : 0,
	};
	int fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));

	return fd < 0 ? -errno : fd;
}
