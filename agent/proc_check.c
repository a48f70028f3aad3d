// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "proc_check.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "test_hooks.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int dc_pid_open(pid_t pid)
{
	if (pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The socket's peer as a pidfd, or -1 with errno. */
static int peer_pidfd(int sock)
{
	int fd = -1;
	socklen_t len = sizeof(fd);

	return getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &fd, &len) == 0 && fd >= 0 ? fd : -1;
}

int dc_peer_pidfd(int sock, pid_t pid)
{
	int fd;

	/* A test build can take SO_PEERPIDFD away (DC_TEST_FEATURES_OFF=peer_pidfd). */
	if (dc_test_feature_off("peer_pidfd"))
		return dc_pid_open(pid);
	if ((fd = peer_pidfd(sock)) >= 0)
		return fd;
	/* The kernel has it, and the process that connected is gone. */
	if (errno != ENOPROTOOPT) {
		errno = ESRCH;
		return -1;
	}
	return dc_pid_open(pid);
}

bool dc_peer_pidfd_works(void)
{
	int p[2], fd;

	if (dc_test_feature_off("peer_pidfd") || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
		return false;
	fd = peer_pidfd(p[0]);
	if (fd >= 0)
		close(fd);
	close(p[0]);
	close(p[1]);
	return fd >= 0;
}

bool dc_pidfd_running(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	/* A pidfd turns readable once its process has exited. */
	return poll(&p, 1, 0) == 0;
}

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. */
static int started_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* After the name, which may hold anything but ends at the last ')'. */
	if (!(p = strrchr(buf, ')')))
		return -1;
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p && sscanf(p + 1, "%llu", ticks) == 1 ? 0 : -1;
}

int dc_pid_open_started(pid_t pid, unsigned long long boot_ns)
{
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ticks;
	/* Taken first: if what /proc shows after is that process, the pidfd is
	 * it (a pid is not reused while a pidfd's process still holds it). */
	int fd = dc_pid_open(pid);

	if (fd < 0)
		return -1;
	if (hz <= 0 || started_ticks(pid, &ticks) || ticks != boot_ns / (1000000000ull / (unsigned long long)hz)) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	return fd;
}

/* The four ids of a "Uid:" or "Gid:" line of /proc/PID/status. */
static int ids_of(const char *status, const char *key, unsigned long ids[4])
{
	const char *p = strstr(status, key);

	return p && sscanf(p + strlen(key), "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2], &ids[3]) == 4 ? 0 : -1;
}

static int read_status(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return 0;
}

int dc_proc_check_owner(int pidfd, pid_t pid, uid_t uid, char *why, size_t len)
{
	unsigned long u[4], g[4];
	uint64_t cap_prm = 0;
	char buf[4096], path[64];
	const char *cap;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (read_status(pid, buf, sizeof(buf)) || stat(path, &st) || ids_of(buf, "\nUid:", u) ||
	    ids_of(buf, "\nGid:", g) || !dc_pidfd_running(pidfd)) {
		snprintf(why, len, "pid %d is not a running process", (int)pid);
		return ESRCH;
	}
	if ((cap = strstr(buf, "\nCapPrm:")))
		sscanf(cap + 8, "%" SCNx64, &cap_prm);
	for (int i = 0; i < 4; i++) {
		if (u[i] != uid) {
			snprintf(why, len, "pid %d runs as uid %lu, not as uid %u alone", (int)pid, u[i], (unsigned)uid);
			return EACCES;
		}
		if (g[i] != g[0]) {
			snprintf(why, len, "pid %d gained group %lu from a set-group-id program", (int)pid, g[i]);
			return EACCES;
		}
	}
	if (uid != 0 && cap_prm) {
		snprintf(why, len, "pid %d holds capabilities (%" PRIx64 ") its user has not", (int)pid, cap_prm);
		return EACCES;
	}
	/* A process that is not dumpable (it gained privileges, or said so) has
	 * its /proc folder owned by root. */
	if (st.st_uid != uid) {
		snprintf(why, len, "pid %d is not dumpable: it gained or gave up privileges", (int)pid);
		return EACCES;
	}
	return 0;
}

int dc_proc_check_caller(int pidfd, pid_t pid, char *why, size_t len)
{
	char owner[200];
	int err;

	if (getuid() == 0)
		return 0;
	err = dc_proc_check_owner(pidfd, pid, getuid(), owner, sizeof(owner));
	if (err)
		snprintf(why, len, "%s: only root traces another user's processes", owner);
	return err;
}
