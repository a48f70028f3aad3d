/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Uprobes in the job's processes only (dc-agent --check: "uprobes placed").
 * A uprobe belongs to a library file: put there for every process, each
 * process on the node that maps the file pays a trap per probed call, traced
 * or not. Where the kernel can (uprobe_scoped, Linux 6.13), a library set's
 * probes are kept as a plan (a file, its offsets and cookies), and each
 * process of the job gets a pair of uprobe_multi links per plan for its pid:
 * the kernel puts their breakpoints in that process's address space alone.
 *
 * A process gets its links before its first instruction: the command before
 * the agent lets it exec (the links follow the process through exec), a
 * process that registers before the agent answers it, a child held stopped
 * at its fork and a process taken in at its exec held there
 * (bpf/holds.bpf.h, served by lib_files.c). The links of a process that
 * ended are let go. Past DC_SCOPE_PROCS_MAX processes of the job at once,
 * the plans go on every process, as on older kernels.
 */
#ifndef DC_UPROBE_SCOPE_H
#define DC_UPROBE_SCOPE_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "uprobe_multi.h"

/* Processes of the job with links at once, at most (each probe's hit runs
 * past every process's link: the kernel keeps them in one list). */
#define DC_SCOPE_PROCS_MAX 256

struct dc_scope;

/* Links of the programs entry_prog and exit_prog (fds); every: the
 * programs' switch to the links on every process (DC_COOKIE_EVERY). NULL
 * without memory. */
struct dc_scope *dc_scope_new(int entry_prog, int exit_prog, volatile __u32 *every, int verbose);

/*
 * A plan: offsets[0..n) of the file at path with their cookies. The kernel
 * checks each instruction when it first puts a breakpoint on it: a link for
 * the agent's own process, on its own mapping of the file, has it check
 * them now; the offsets it refuses go to refused->refused and stay out.
 * Every process linked so far gets the plan too. Adds the offsets planned
 * to *planned. 0, or -errno.
 */
int dc_scope_library(struct dc_scope *s, const char *path, const unsigned long *offsets, const __u64 *cookies,
		     size_t n, const struct dc_uprobe_sink *refused, size_t *planned);

/* Links of every plan for the process pid; one it had are let go first (a
 * thread that exec'd took the pid: the links served the task before it).
 * 0, or -errno (ESRCH: no such process). */
int dc_scope_process(struct dc_scope *s, pid_t pid);

/* Lets go of the links of processes that ended. */
void dc_scope_sweep(struct dc_scope *s);

/* Every link fd still open, each handed to keep (which then owns it: the
 * probes' detach closes them with the rest); frees s. */
void dc_scope_release(struct dc_scope *s, int (*keep)(void *ctx, int fd), void *ctx);

#endif
