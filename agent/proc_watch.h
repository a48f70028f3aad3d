/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The processes the agent put in the tracked set itself (a registration,
 * --pid), each by a pidfd: its entry goes when the process does, even where
 * the process ended before the entry was made (the BPF side's exit program
 * then saw nothing to take away), so a pid that a later process of any user
 * gets is never traced for it.
 */
#ifndef DC_PROC_WATCH_H
#define DC_PROC_WATCH_H

#include <sys/types.h>

/* Processes watched at once: registrations past it are refused. */
#define DC_PROC_WATCH_MAX 4096

struct dc_proc_watch;

/* tracked_fd: the BPF map of tracked thread group ids. */
struct dc_proc_watch *dc_proc_watch_new(int tracked_fd);
/* An epoll fd, readable when a watched process has ended. */
int dc_proc_watch_fd(const struct dc_proc_watch *w);

/*
 * Puts pid in the tracked set, tied to the process pidfd names (taken over,
 * closed on failure). 0, or an errno: ESRCH when the process had already
 * exited by the time its entry was made (the entry is taken away again),
 * EMFILE past DC_PROC_WATCH_MAX.
 */
int dc_proc_watch_track(struct dc_proc_watch *w, int pidfd, pid_t pid);

/* The entries of the processes that ended since the last call go. */
void dc_proc_watch_serve(struct dc_proc_watch *w);
void dc_proc_watch_free(struct dc_proc_watch *w);

#endif
