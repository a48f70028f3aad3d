// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "proc_watch.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/types.h>

#include "proc_check.h"

struct dc_proc_watch {
	int map_fd;
	int epfd;
	int n;
};

struct dc_proc_watch *dc_proc_watch_new(int tracked_fd)
{
	struct dc_proc_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->map_fd = tracked_fd;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0) {
		free(w);
		return NULL;
	}
	return w;
}

int dc_proc_watch_fd(const struct dc_proc_watch *w)
{
	return w->epfd;
}

/* The pid in the upper half of the event's data, the pidfd in the lower. */
static __u64 pack(int pidfd, pid_t pid)
{
	return (__u64)(__u32)pid << 32 | (__u32)pidfd;
}

int dc_proc_watch_track(struct dc_proc_watch *w, int pidfd, pid_t pid)
{
	__u32 key = pid, one = 1;
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = pack(pidfd, pid) };
	int err = 0;

	if (w->n >= DC_PROC_WATCH_MAX)
		err = EMFILE;
	else if (bpf_map_update_elem(w->map_fd, &key, &one, BPF_ANY))
		err = errno;
	/* Looked at after the entry was made: had the process ended before,
	 * no exit would ever take the entry away. */
	else if (!dc_pidfd_running(pidfd))
		err = ESRCH;
	else if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, pidfd, &ev))
		err = errno;
	if (err) {
		if (err != EMFILE)
			bpf_map_delete_elem(w->map_fd, &key);
		close(pidfd);
		return err;
	}
	w->n++;
	return 0;
}

void dc_proc_watch_serve(struct dc_proc_watch *w)
{
	struct epoll_event evs[64];
	int n;

	while ((n = epoll_wait(w->epfd, evs, 64, 0)) > 0) {
		for (int i = 0; i < n; i++) {
			__u32 pid = evs[i].data.u64 >> 32;
			int pidfd = (int)(__u32)evs[i].data.u64;

			/* Usually gone already: the exit program took it. */
			bpf_map_delete_elem(w->map_fd, &pid);
			epoll_ctl(w->epfd, EPOLL_CTL_DEL, pidfd, NULL);
			close(pidfd);
			w->n--;
		}
	}
}

void dc_proc_watch_free(struct dc_proc_watch *w)
{
	if (!w)
		return;
	/* The pidfds still watched close with the agent. */
	close(w->epfd);
	free(w);
}
