// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "out_file.h"
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long output into a FIFO waits for its reader. */
#define FIFO_WAIT_S 10

/* Another user who can write the folder could swap names in it. */
static int check_folder(int dir_fd, const char *dir, char *err, size_t errlen)
{
	char why[PATH_MAX + 128];

	if (dc_folder_safe(dir_fd, dir, why, sizeof(why)) == 0)
		return 0;
	snprintf(err, errlen,
		 "%s: as root, output goes only into a folder owned by root or you and not writable by others (or "
		 "sticky); name another output path",
		 why);
	return -1;
}

static int open_in_place(struct dc_out_file *o, const struct stat *before, const char *path, char *err,
			 size_t errlen)
{
	const char *what = S_ISFIFO(before->st_mode) ? "FIFO" : "device";
	struct stat st;
	int flags;

	/* Another user's FIFO would hand them the trace (and hang us until they
	 * read); another user's device is not ours to write. */
	if (before->st_uid != 0 && before->st_uid != geteuid())
		return snprintf(err, errlen,
				"%s is a %s of uid %u: dc-merge writes in place only into a FIFO or device that root or "
				"you own",
				path, what, (unsigned)before->st_uid),
		       -1;
	/* Never blocks in open: a FIFO's reader is looked for every 20 ms, for
	 * FIFO_WAIT_S at most (the reader a user starts beside dc-merge may
	 * come a moment later), and none by then is an error. */
	for (int i = 0; i < FIFO_WAIT_S * 50; i++) {
		o->fd = openat(o->dir_fd, o->name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (o->fd >= 0 || errno != ENXIO)
			break;
		nanosleep(&(struct timespec){ 0, 20 * 1000000 }, NULL);
	}
	if (o->fd < 0 && errno == ENXIO)
		return snprintf(err, errlen, "%s is a FIFO that no one read within %d s: start its reader first", path,
				FIFO_WAIT_S),
		       -1;
	if (o->fd < 0)
		return snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1;
	/* Writes then wait for a slow reader, as writes to a pipe do. */
	if ((flags = fcntl(o->fd, F_GETFL)) >= 0)
		fcntl(o->fd, F_SETFL, flags & ~O_NONBLOCK);
	/* The same object that was checked, not one swapped in since. */
	if (fstat(o->fd, &st) || st.st_dev != before->st_dev || st.st_ino != before->st_ino) {
		snprintf(err, errlen, "%s changed while it was being opened", path);
		close(o->fd);
		o->fd = -1;
		return -1;
	}
	o->in_place = true;
	return 0;
}

static int create_tmp(struct dc_out_file *o, const char *path, char *err, size_t errlen)
{
	for (int tries = 0; tries < 100; tries++) {
		unsigned long long r = 0;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (unsigned long long)getpid() * 2654435761u + tries;
		snprintf(o->tmp, sizeof(o->tmp), "%.200s.tmp.%012llx", o->name, r & 0xffffffffffffull);
		o->fd = openat(o->dir_fd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0) {
			snprintf(o->tmp_path, sizeof(o->tmp_path), "/proc/self/fd/%d/%s", o->dir_fd, o->tmp);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	snprintf(err, errlen, "cannot create a temporary file beside %s: %s", path, strerror(errno));
	o->tmp[0] = 0;
	return -1;
}

int dc_out_file_open(struct dc_out_file *o, const char *path, bool named, bool need_file, char *err,
		     size_t errlen)
{
	char dir_buf[PATH_MAX], name_buf[PATH_MAX];
	const char *dir, *name;
	struct stat st;

	*o = (struct dc_out_file){ .dir_fd = -1, .fd = -1 };
	if (strcmp(path, "-") == 0) {
		if (need_file)
			return snprintf(err, errlen, "HDF5 output needs a file, not standard output"), -1;
		o->fd = STDOUT_FILENO;
		o->in_place = true;
		return 0;
	}
	if (strlen(path) >= sizeof(dir_buf) || !*path)
		return snprintf(err, errlen, "output path too long or empty"), -1;
	strcpy(dir_buf, path);
	strcpy(name_buf, path);
	dir = dirname(dir_buf);
	name = basename(name_buf);
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, "/") || strlen(name) > 200)
		return snprintf(err, errlen, "%s: not a file name to write to", path), -1;
	snprintf(o->name, sizeof(o->name), "%s", name);
	o->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (o->dir_fd < 0)
		return snprintf(err, errlen, "cannot open the folder %s: %s", dir, strerror(errno)), -1;
	if (check_folder(o->dir_fd, dir, err, errlen))
		goto fail;
	if (fstatat(o->dir_fd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			snprintf(err, errlen, "%s is a symbolic link: dc-merge follows none; name the file it points to",
				 path);
			goto fail;
		}
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
			if (!named || need_file) {
				snprintf(err, errlen, "%s is a %s, not a regular file: %s", path,
					 S_ISFIFO(st.st_mode) ? "FIFO" : "device",
					 need_file ? "HDF5 output needs a regular file"
						   : "name it with -o to write to it in place");
				goto fail;
			}
			if (open_in_place(o, &st, path, err, errlen))
				goto fail;
			return 0;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a regular file, a character device or a FIFO", path);
			goto fail;
		}
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (create_tmp(o, path, err, errlen))
		goto fail;
	return 0;
fail:
	close(o->dir_fd);
	o->dir_fd = -1;
	return -1;
}

int dc_out_file_publish(struct dc_out_file *o, bool group_read, char *err, size_t errlen)
{
	if (o->in_place)
		return 0;
	if (group_read && fchmod(o->fd, 0640))
		return snprintf(err, errlen, "cannot make %s group-readable: %s", o->name, strerror(errno)), -1;
	if (renameat(o->dir_fd, o->tmp, o->dir_fd, o->name))
		return snprintf(err, errlen, "cannot rename %s to %s: %s", o->tmp, o->name, strerror(errno)), -1;
	o->tmp[0] = 0;
	return 0;
}

void dc_out_file_close(struct dc_out_file *o, bool keep)
{
	if (!keep && o->tmp[0] && o->dir_fd >= 0)
		unlinkat(o->dir_fd, o->tmp, 0);
	if (o->fd > STDERR_FILENO)
		close(o->fd);
	if (o->dir_fd >= 0)
		close(o->dir_fd);
	o->fd = o->dir_fd = -1;
}
