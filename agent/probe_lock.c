// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probe_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "control_proto.h"

#define LOCK_FILE DC_CTL_SOCKET_DIR "/probes.lock"

static int open_lock(void)
{
	/* The folder is root's (the agent makes it 0755); the file is not
	 * followed if someone put a link there. */
	if (mkdir(DC_CTL_SOCKET_DIR, 0755) && errno != EEXIST)
		return -1;
	return open(LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int dc_probe_lock_take(const char *who)
{
	struct timespec pause = { 0, 50 * 1000000 };
	int fd = open_lock();

	if (fd < 0) {
		fprintf(stderr, "dc-agent: warning: cannot open %s: %s; %s goes on without it\n", LOCK_FILE,
			strerror(errno), who);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	fprintf(stderr, "dc-agent: waiting for another dc-agent to finish with its probes (%s, up to %d s)\n",
		LOCK_FILE, DC_PROBE_LOCK_WAIT_S);
	for (int i = 0; i < DC_PROBE_LOCK_WAIT_S * 20; i++) {
		nanosleep(&pause, NULL);
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
	}
	fprintf(stderr, "dc-agent: warning: %s is still held after %d s; %s goes on without it\n", LOCK_FILE,
		DC_PROBE_LOCK_WAIT_S, who);
	close(fd);
	return -1;
}

void dc_probe_lock_drop(int fd)
{
	if (fd >= 0)
		close(fd); /* the lock goes with its last descriptor */
}
