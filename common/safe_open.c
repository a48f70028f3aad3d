// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder" : S_ISCHR(m) || S_ISBLK(m) ? "a device" : "a special file";
}

int dc_open_regular(const char *path, char *why, size_t len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(why, len, "%s is a symbolic link: not followed", path);
		else
			snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s is not a regular file (%s)", path, kind_of(st.st_mode));
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, 0);
	return fd;
}

int dc_folder_safe(int dir_fd, const char *dir, char *why, size_t len)
{
	struct stat st;

	if (fstat(dir_fd, &st))
		return snprintf(why, len, "%s: %s", dir, strerror(errno)), -1;
	if (geteuid() != 0)
		return 0;
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		snprintf(why, len, "%s can be changed by another user (owner uid %u, mode %04o)", dir,
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}
