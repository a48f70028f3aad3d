// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "links.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "parallel.h"

/*
 * Removing a uprobe waits for an RCU grace period (~100 ms here), one after
 * another when done in a loop: 90 probes took 10 s. Waiters on several
 * threads share grace periods, so the probes are released side by side.
 */
#define DETACH_THREADS 64

static void destroy_link(void *links, size_t i)
{
	bpf_link__destroy(((struct bpf_link **)links)[i]);
}

static void close_fd(void *fds, size_t i)
{
	int fd = ((const int *)fds)[i];

	if (fd >= 0)
		close(fd);
}

struct both {
	struct bpf_link **links;
	size_t nlinks;
	const int *fds;
};

static void release_one(void *arg, size_t i)
{
	struct both *b = arg;

	if (i < b->nlinks)
		destroy_link(b->links, i);
	else
		close_fd((void *)b->fds, i - b->nlinks);
}

void dc_detach_all(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds)
{
	struct both b = { links, nlinks, fds };

	dc_parallel_for(nlinks + nfds, DETACH_THREADS, release_one, &b);
}

void dc_fds_close_serial(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close_fd((void *)fds, i);
}

void dc_links_destroy(struct bpf_link **links, size_t n)
{
	dc_parallel_for(n, DETACH_THREADS, destroy_link, links);
}

void dc_fds_close(const int *fds, size_t n)
{
	dc_parallel_for(n, DETACH_THREADS, close_fd, (void *)fds);
}

int dc_detached_start(struct dc_detached *d, const char *name, void (*fn)(void *), void *arg)
{
	int go[2];
	char c;

	if (pipe2(go, O_CLOEXEC))
		return -1;
	d->pid = fork();
	if (d->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_NAME, name); /* what ps shows an admin */
		setsid();
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		for (int fd = 0; fd < 3 && null >= 0; fd++)
			dup2(null, fd);
		close(go[1]);
		/* EOF once the caller has let go of its references (or died). */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		fn(arg);
		_exit(0);
	}
	close(go[0]);
	if (d->pid < 0) {
		close(go[1]);
		return -1;
	}
	d->go_fd = go[1];
	return 0;
}

void dc_detached_go(struct dc_detached *d)
{
	close(d->go_fd);
}
