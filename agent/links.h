/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Detaching many probes at once, side by side on threads. */
#ifndef DC_LINKS_H
#define DC_LINKS_H

#include <stddef.h>
#include <sys/types.h>

struct bpf_link;

/* Destroys every link; each waits for the kernel to let go of its probe. */
void dc_links_destroy(struct bpf_link **links, size_t n);
/* Closes every fd (links and perf events; negative ones are skipped). */
void dc_fds_close(const int *fds, size_t n);
/* One after another, on this thread. */
void dc_fds_close_serial(const int *fds, size_t n);
/* Both at once, in one batch of threads. */
void dc_detach_all(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds);
/*
 * Work left to a child of its own that outlives the caller, out of its
 * session and off its standard streams. The child shares every open file
 * with the caller, and a file is released by whoever lets go of it last:
 * so the child waits, in dc_detached_start, until the caller has closed
 * its own references and called dc_detached_go; then it runs fn(arg),
 * whose closes are the last and so the slow ones, and exits.
 */
struct dc_detached {
	pid_t pid;
	int go_fd;
};

/* 0 with the child waiting, or -1 (no child: do the work here). */
int dc_detached_start(struct dc_detached *d, const char *name, void (*fn)(void *), void *arg);
void dc_detached_go(struct dc_detached *d);

#endif
