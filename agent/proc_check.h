/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which live process the agent is told about, and whether it is the job
 * user's own. The kernel is asked, never the agent's bookkeeping: a pidfd
 * names one process for its whole life (a pid number is reused once the
 * process is gone), and the process's credentials are read from /proc while
 * the pidfd shows it still running, so that what was read was that process.
 */
#ifndef DC_PROC_CHECK_H
#define DC_PROC_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A pidfd of the process at the other end of a connected unix socket: the
 * one that connected, whatever became of its pid since (SO_PEERPIDFD, Linux
 * 6.5), else of the process that has pid now (pidfd_open, 5.3), which
 * dc_proc_check_owner then vets like any other. -1 with errno.
 */
int dc_peer_pidfd(int sock, pid_t pid);

/* Whether the kernel names a socket's peer by a pidfd (SO_PEERPIDFD), as
 * a socket pair of this process shows (and a test build can take away). */
bool dc_peer_pidfd_works(void);

/* A pidfd of the process that has pid now; -1 with errno (ESRCH: none). */
int dc_pid_open(pid_t pid);

/* Whether the process has not exited yet (false once it is a zombie). */
bool dc_pidfd_running(int pidfd);

/* A pidfd of the process that has pid and started at boot_ns (ns since
 * boot, as the kernel's task->start_boottime): none, -1, once that process
 * is gone, even if another has its pid now. */
int dc_pid_open_started(pid_t pid, unsigned long long boot_ns);

/*
 * 0 when the process (pidfd, which has pid) runs with uid's own
 * credentials, as the kernel asks of a tracer without privileges that
 * would attach to it (ptrace, perf): every uid is uid, no group gained
 * through a set-group-id file, no capability (for a uid other than 0), and
 * dumpable (its /proc folder is uid's). Else an errno, with why.
 */
int dc_proc_check_owner(int pidfd, pid_t pid, uid_t uid, char *why, size_t len);

/* 0 when this process may trace that one: run by root, or the same check
 * for the caller's uid (an agent given capabilities, run by a user). */
int dc_proc_check_caller(int pidfd, pid_t pid, char *why, size_t len);

#endif
