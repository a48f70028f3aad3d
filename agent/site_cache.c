// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "site_cache.h"
#include "crc32.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "DCSITES\n"
/* More targets than any library has code bytes for: a damaged file. */
#define MAX_TARGETS (16u << 20)

struct cache_header {
	char magic[8];
	uint32_t version;
	uint32_t count;     /* 32-bit file offsets that follow */
	char build_id[48];  /* hex, NUL-padded */
	uint64_t object_size;
	uint32_t crc;       /* of the offsets */
	uint32_t pad;
};

static int valid_build_id(const char *id)
{
	size_t n = strlen(id);

	if (n < 2 || n >= sizeof(((struct cache_header *)0)->build_id))
		return 0;
	return strspn(id, "0123456789abcdef") == n;
}

/* The cache folder, held, if it is ours alone: owned by us, written by no one else. */
static int open_dir(const char *dir, int create)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	if (create) {
		/* mkdir -p, each new level 0700: parents that exist are left alone. */
		snprintf(path, sizeof(path), "%s", dir);
		for (char *p = path + 1; (p = strchr(p, '/')); p++) {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
		mkdir(path, 0700);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -1;
	}
	return fd;
}

int dc_site_cache_load(const char *dir, const char *build_id, uint64_t object_size, uint64_t **targets, size_t *n)
{
	struct cache_header h;
	struct stat st;
	uint32_t *v = NULL;
	uint64_t *out = NULL;
	char name[80];
	int dfd, fd = -1, rc = -1;

	if (!dir || !valid_build_id(build_id) || (dfd = open_dir(dir, 0)) < 0)
		return -1;
	snprintf(name, sizeof(name), "%s.v%d", build_id, DC_SITE_CACHE_VERSION);
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    st.st_size < (off_t)sizeof(h) || pread(fd, &h, sizeof(h), 0) != sizeof(h))
		goto out;
	h.build_id[sizeof(h.build_id) - 1] = 0;
	if (memcmp(h.magic, MAGIC, 8) || h.version != DC_SITE_CACHE_VERSION || strcmp(h.build_id, build_id) ||
	    h.object_size != object_size || h.count > MAX_TARGETS ||
	    (uint64_t)st.st_size != sizeof(h) + (uint64_t)h.count * 4)
		goto out;
	v = malloc(h.count ? h.count * 4 : 1);
	out = malloc(h.count ? h.count * sizeof(*out) : 1);
	if (!v || !out || pread(fd, v, h.count * 4, sizeof(h)) != (ssize_t)(h.count * 4) ||
	    dc_crc32(v, h.count * 4) != h.crc)
		goto out;
	for (uint32_t i = 0; i < h.count; i++) {
		if (i && v[i] <= v[i - 1])
			goto out; /* sorted and distinct, as stored */
		out[i] = v[i];
	}
	*targets = out;
	*n = h.count;
	out = NULL;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(v);
	free(out);
	return rc;
}

void dc_site_cache_store(const char *dir, const char *build_id, uint64_t object_size, const uint64_t *targets,
			 size_t n)
{
	struct cache_header h = { .version = DC_SITE_CACHE_VERSION, .count = n, .object_size = object_size };
	char name[80], tmp[96];
	uint32_t *v;
	int dfd, fd;
	bool ok;

	if (!dir || !valid_build_id(build_id) || n > MAX_TARGETS)
		return;
	for (size_t i = 0; i < n; i++)
		if (targets[i] > UINT32_MAX || (i && targets[i] <= targets[i - 1]))
			return; /* not what the reader takes */
	if (!(v = malloc(n ? n * 4 : 1)))
		return;
	for (size_t i = 0; i < n; i++)
		v[i] = targets[i];
	memcpy(h.magic, MAGIC, 8);
	snprintf(h.build_id, sizeof(h.build_id), "%s", build_id);
	h.crc = dc_crc32(v, n * 4);
	if ((dfd = open_dir(dir, 1)) < 0) {
		free(v);
		return;
	}
	snprintf(name, sizeof(name), "%s.v%d", build_id, DC_SITE_CACHE_VERSION);
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		ok = write(fd, &h, sizeof(h)) == sizeof(h) && write(fd, v, n * 4) == (ssize_t)(n * 4) && fsync(fd) == 0;
		close(fd);
		/* Whole or not at all: renamed over the name only when written. */
		if (!ok || renameat(dfd, tmp, dfd, name))
			unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	free(v);
}
