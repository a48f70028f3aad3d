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

struct bpf_program;

/* The kernel's attach type for them (include/uapi/linux/bpf.h, Linux 6.6). */
#define DC_BPF_TRACE_UPROBE_MULTI 48

/* Before load: the program will be attached with uprobe_multi links. */
int dc_uprobe_multi_prepare(struct bpf_program *prog);
/* A link fd (close it to detach), or -errno. */
int dc_uprobe_multi_attach(struct bpf_program *prog, const char *path, const unsigned long *offsets,
			   const __u64 *cookies, size_t n, bool retprobe);
/* The same with a program's fd (the feature probe's test program). */
int dc_uprobe_multi_link(int prog_fd, const char *path, const unsigned long *offsets, const __u64 *cookies,
			 size_t n, bool retprobe);

#endif
