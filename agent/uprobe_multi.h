/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * uprobe_multi links (Linux 6.6): every chosen function of a library with
 * one link, detached with one RCU wait, where per-function perf-event uprobes
 * wait ~100 ms each on detach. Debian 12's UAPI headers and libbpf 1.1
 * predate them, so the link is made with the raw bpf() call.
 */
#ifndef DC_UPROBE_MULTI_H
#define DC_UPROBE_MULTI_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct bpf_program;

/* The kernel's attach type for them (include/uapi/linux/bpf.h, Linux 6.6). */
#define DC_BPF_TRACE_UPROBE_MULTI 48

/* Before load: the program will be attached with uprobe_multi links. */
int dc_uprobe_multi_prepare(struct bpf_program *prog);
/* A link fd (close it to detach), or -errno. */
int dc_uprobe_multi_attach(struct bpf_program *prog, const char *path, const unsigned long *offsets,
			   const __u64 *cookies, size_t n, bool retprobe);
/* The same with a program's fd, for the process pid only (0: every process
 * that maps the file; a link for one process puts its breakpoints in that
 * process's address space alone, and serves that process alone). */
int dc_uprobe_multi_link(int prog_fd, const char *path, const unsigned long *offsets, const __u64 *cookies,
			 size_t n, bool retprobe, pid_t pid);

/* Where dc_uprobe_multi_pairs puts what it made. */
struct dc_uprobe_sink {
	/* Each link made: 0, or -1 to stop (out of memory). */
	int (*keep)(void *ctx, int fd);
	/* Each offset the kernel would not probe (its index), left out. */
	void (*refused)(void *ctx, size_t i);
	void *ctx;
};

/*
 * An entry and a return link (entry_prog, exit_prog) on offsets[0..n) of
 * path, for pid (0: every process). uprobe_multi attaches all or nothing,
 * and the kernel refuses a whole link for one instruction it will not
 * probe: halving what failed finds those few, which go to sink->refused;
 * the rest attach. Adds the offsets attached to *attached. 0, or -errno
 * when nothing more can attach (ENOMEM, EPERM, ENOENT; ESRCH: pid is gone).
 */
int dc_uprobe_multi_pairs(int entry_prog, int exit_prog, const char *path, const unsigned long *offsets,
			  const __u64 *cookies, size_t n, pid_t pid, const struct dc_uprobe_sink *sink,
			  size_t *attached);

#endif
