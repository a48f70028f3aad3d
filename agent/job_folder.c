// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "job_folder.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Parents of the output folder, as mkdir -p makes them. */
static int make_parents(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/*
 * The job folder, held open: created 0750 and given to the job's user
 * through its descriptor. One that exists must be a real folder (no
 * symlink), owned by root or the job's user: another user who made it
 * ahead of the job could replace the node file later, so it is refused.
 */
static int open_job(const char *base, const char *job, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	int base_fd, fd;
	struct stat st;
	bool made;

	base_fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base_fd < 0)
		return snprintf(err, errlen, "cannot open output folder %s: %s", base, strerror(errno)), -1;
	made = mkdirat(base_fd, job, 0750) == 0;
	if (!made && errno != EEXIST) {
		snprintf(err, errlen, "cannot create output folder %s/%s: %s", base, job, strerror(errno));
		close(base_fd);
		return -1;
	}
	fd = openat(base_fd, job, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(base_fd);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "cannot create output folder %s/%s: %s", base, job,
			 errno == ELOOP || errno == ENOTDIR ? "it is a symbolic link or not a folder; refused"
							    : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!made && st.st_uid != 0 && st.st_uid != uid) {
		snprintf(err, errlen,
			 "output folder %s/%s already exists and belongs to uid %u, not to the job's user (uid %u) "
			 "or root: refused, as its owner could replace the trace; remove it and start again",
			 base, job, (unsigned)st.st_uid, (unsigned)uid);
		close(fd);
		return -1;
	}
	/* On the descriptor: a name swapped meanwhile changes nothing here. */
	if (fchown(fd, uid, gid) && geteuid() == 0)
		fprintf(stderr, "dc-agent: warning: cannot give %s/%s to uid %u: %s\n", base, job, (unsigned)uid,
			strerror(errno));
	if ((st.st_mode & 07777) != 0750 && fchmod(fd, 0750) == 0 && !made)
		fprintf(stderr, "dc-agent: note: output folder %s/%s had mode %04o; set to 0750\n", base, job,
			(unsigned)(st.st_mode & 07777));
	return fd;
}

int dc_job_folder_open(char *base, const char *job, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	if (make_parents(base) || (mkdir(base, 0755) && errno != EEXIST)) {
		snprintf(err, errlen, "cannot create output folder %s: %s", base, strerror(errno));
		return -1;
	}
	return open_job(base, job, uid, gid, err, errlen);
}

void dc_job_default_id(char *out, size_t len)
{
	const char *slurm = getenv("SLURM_JOB_ID");
	time_t t = time(NULL);
	struct tm tm;

	if (slurm && *slurm) {
		snprintf(out, len, "%s", slurm);
		return;
	}
	localtime_r(&t, &tm);
	snprintf(out, len, "local-%04d%02d%02d-%02d%02d%02d-%d", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid());
}

int dc_job_id_valid(const char *id)
{
	if (!*id || strlen(id) >= 64 || id[0] == '.')
		return 0;
	return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(id);
}
