/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One probe per function through the kernel's perf events: the uprobes of
 * kernels without uprobe_multi links (before 6.6), and kprobes. Each probe
 * is a perf event that runs a BPF program: through a BPF link that carries
 * the probe's attach cookie where the kernel has them (5.15), else through
 * the older ioctl, with a program of its own per probe (agent/clones.c).
 * Thousands are attached side by side on threads: opening a uprobe event
 * writes the breakpoint into every process that maps the library. Events
 * are opened disabled and stay so (perf_probes.c says why).
 */
#ifndef DC_PERF_PROBES_H
#define DC_PERF_PROBES_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

enum dc_perf_kind { DC_PERF_UPROBE, DC_PERF_KPROBE };

/* 0 when the kernel has the perf event type (its PMU in sysfs), else -errno. */
int dc_perf_kind_supported(enum dc_perf_kind kind);

/* A probe to attach: a library and file offset (uprobe) or a function name (kprobe). */
struct dc_perf_req {
	const char *target;
	unsigned long offset;
	bool retprobe;
	int prog_fd;
	__u64 cookie;
	int fd; /* out: what holds the probe (close it to detach), or -errno */
};

/* Attaches each request on up to nthreads threads; with_cookie: BPF links
 * with cookies, else the ioctl. Returns how many attached. */
size_t dc_perf_attach_all(enum dc_perf_kind kind, struct dc_perf_req *reqs, size_t n, bool with_cookie,
			  int nthreads);

/* One probe, as above: the holding fd, or -errno. */
int dc_perf_attach_one(enum dc_perf_kind kind, const char *target, unsigned long offset, bool retprobe,
		       int prog_fd, __u64 cookie, bool with_cookie);

#endif
