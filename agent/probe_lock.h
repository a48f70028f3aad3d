/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One agent at a time registers or releases per-function probes on a node.
 *
 * Without uprobe_multi and kprobe_multi (before Linux 6.6 and 5.18) each
 * function is a perf event or an fentry link of its own, and the kernel
 * takes them in and out one by one under global locks. On 5.10, uprobes
 * registered from two places at once while processes fork can hang every
 * later fork of the node (dup_mmap_sem); the next job's agent starting
 * while the last one's detaching child is still at work is such a case.
 * So both hold this lock, a file in the control socket's folder.
 */
#ifndef DC_PROBE_LOCK_H
#define DC_PROBE_LOCK_H

/* How long an agent waits for another's probes before going on anyway. */
#define DC_PROBE_LOCK_WAIT_S 120

/* Takes the lock, waiting up to DC_PROBE_LOCK_WAIT_S (one line on stderr
 * when it has to wait). The fd to drop it with; -1 (after a warning) when
 * it cannot be had, and the caller goes on without it. */
int dc_probe_lock_take(const char *who);
void dc_probe_lock_drop(int fd);

#endif
