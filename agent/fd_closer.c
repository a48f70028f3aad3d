// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "fd_closer.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

static int queue[2] = { -1, -1 };
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *closer(void *arg)
{
	int fd;

	(void)arg;
	while (read(queue[0], &fd, sizeof(fd)) == sizeof(fd))
		close(fd);
	return NULL;
}

static void start(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;

	if (pipe2(queue, O_CLOEXEC))
		return;
	/* A full queue is a stuck thread: the agent's loop does not wait on it. */
	fcntl(queue[1], F_SETFL, O_NONBLOCK);
	/* Signals stay the loop's: the thread takes none. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (pthread_create(&t, &attr, closer, NULL)) {
		close(queue[0]);
		close(queue[1]);
		queue[0] = queue[1] = -1;
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void dc_close_later(int fd)
{
	static bool said;

	if (fd < 0)
		return;
	pthread_once(&once, start);
	if (queue[1] >= 0 && write(queue[1], &fd, sizeof(fd)) == sizeof(fd))
		return;
	if (!said)
		fprintf(stderr, "dc-agent: warning: descriptors clients passed are left open: closing them is stuck\n");
	said = true;
}
