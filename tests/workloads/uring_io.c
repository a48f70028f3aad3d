// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * io_uring with known numbers (liburing): in DIR, N writes of SIZE bytes
 * to uring.dat, an fsync, N reads of it back, a readv of two buffers, then
 * a write and a read through a registered (fixed) file, a statx, an openat
 * of the file and a close of what it opened, and a close of the first
 * descriptor; then, in DIR as the working directory, a mkdirat of uring.d,
 * a renameat of it to uring.e and an unlinkat of that, by relative names;
 * a linkat of uring.dat to uring.lnk in the folder uring.s (made by
 * mkdir(2), its descriptor the new name's folder), a renameat of that by
 * its absolute name to uring.mv relative to the same descriptor, and an
 * unlinkat of it (where the kernel has them: Linux 5.15); every request
 * is waited for. "sqpoll" as a fourth argument: the
 * ring is polled by the kernel's SQPOLL thread, which submits instead of
 * the program. Exits 1 with the reason if a request fails or moves less.
 *
 *   uring_io DIR N SIZE [sqpoll]
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static struct io_uring ring;

/* Submits what is queued and waits for one completion: its result, which
 * must be want (or anything >= 0 for want < 0); -EINVAL too when unknown
 * is set (an operation older kernels do not have). */
static int complete_or(const char *what, int want, int unknown)
{
	struct io_uring_cqe *cqe;
	int res, rc;

	rc = io_uring_submit_and_wait(&ring, 1);
	if (rc < 0 || (rc = io_uring_wait_cqe(&ring, &cqe)) < 0) {
		fprintf(stderr, "uring_io: %s: %s\n", what, strerror(-rc));
		exit(1);
	}
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	if (unknown && res == -EINVAL)
		return res;
	if (res < 0 || (want >= 0 && res != want)) {
		fprintf(stderr, "uring_io: %s: %d, not %d%s%s\n", what, res, want, res < 0 ? ": " : "",
			res < 0 ? strerror(-res) : "");
		exit(1);
	}
	return res;
}

static int complete(const char *what, int want)
{
	return complete_or(what, want, 0);
}

static struct io_uring_sqe *sqe(void)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);

	if (!s) {
		fprintf(stderr, "uring_io: the submission queue is full\n");
		exit(1);
	}
	return s;
}

/* A rename's and a link's new names, relative to another folder than the
 * old name's, and after an absolute old name. */
static int links(const char *dir)
{
	char moved[4096];
	int sub;

	if (mkdir("uring.s", 0755) || (sub = open("uring.s", O_RDONLY | O_DIRECTORY)) < 0) {
		perror("uring.s");
		return 1;
	}
	io_uring_prep_linkat(sqe(), AT_FDCWD, "uring.dat", sub, "uring.lnk", 0);
	complete("linkat", 0);
	snprintf(moved, sizeof(moved), "%s/uring.s/uring.lnk", dir);
	io_uring_prep_renameat(sqe(), AT_FDCWD, moved, sub, "uring.mv", 0);
	complete("renameat", 0);
	io_uring_prep_unlinkat(sqe(), sub, "uring.mv", 0);
	complete("unlinkat", 0);
	close(sub);
	if (rmdir("uring.s")) {
		perror("uring.s");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *s;
	struct statx stx;
	struct iovec iov[2];
	char path[4096], *buf;
	int n, size, fd, fd2, rc;

	if (argc < 4 || (n = atoi(argv[2])) <= 0 || (size = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: uring_io DIR N SIZE [sqpoll]\n");
		return 2;
	}
	if (argc > 4 && strcmp(argv[4], "sqpoll") == 0) {
		p.flags = IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 2000;
	}
	if ((rc = io_uring_queue_init_params(8, &ring, &p)) < 0) {
		fprintf(stderr, "uring_io: io_uring_queue_init: %s\n", strerror(-rc));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/uring.dat", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	buf = malloc(size);
	if (fd < 0 || !buf) {
		perror(path);
		return 1;
	}
	memset(buf, 'u', size);
	for (int i = 0; i < n; i++) {
		io_uring_prep_write(sqe(), fd, buf, size, (__u64)i * size);
		complete("write", size);
	}
	io_uring_prep_fsync(sqe(), fd, 0);
	complete("fsync", 0);
	for (int i = 0; i < n; i++) {
		io_uring_prep_read(sqe(), fd, buf, size, (__u64)i * size);
		complete("read", size);
	}
	iov[0] = (struct iovec){ buf, 10 };
	iov[1] = (struct iovec){ buf + 10, 6 };
	io_uring_prep_readv(sqe(), fd, iov, 2, 0);
	complete("readv", 16);
	/* A registered file: the request names index 0, not a descriptor. */
	if ((rc = io_uring_register_files(&ring, &fd, 1)) < 0) {
		fprintf(stderr, "uring_io: io_uring_register_files: %s\n", strerror(-rc));
		return 1;
	}
	s = sqe();
	io_uring_prep_write(s, 0, buf, 100, 0);
	io_uring_sqe_set_flags(s, IOSQE_FIXED_FILE);
	complete("fixed write", 100);
	s = sqe();
	io_uring_prep_read(s, 0, buf, 100, 0);
	io_uring_sqe_set_flags(s, IOSQE_FIXED_FILE);
	complete("fixed read", 100);
	io_uring_unregister_files(&ring);
	io_uring_prep_statx(sqe(), AT_FDCWD, path, 0, STATX_SIZE, &stx);
	complete("statx", 0);
	io_uring_prep_openat(sqe(), AT_FDCWD, path, O_RDONLY, 0);
	fd2 = complete("openat", -1);
	io_uring_prep_close(sqe(), fd2);
	complete("close", 0);
	io_uring_prep_close(sqe(), fd);
	complete("close", 0);
	if (chdir(argv[1])) {
		perror(argv[1]);
		return 1;
	}
	/* (Linux 5.15 and later: older rings refuse the operation.) */
	io_uring_prep_mkdirat(sqe(), AT_FDCWD, "uring.d", 0755);
	if (complete_or("mkdirat", 0, 1) == 0) {
		io_uring_prep_renameat(sqe(), AT_FDCWD, "uring.d", AT_FDCWD, "uring.e", 0);
		complete("renameat", 0);
		io_uring_prep_unlinkat(sqe(), AT_FDCWD, "uring.e", AT_REMOVEDIR);
		complete("unlinkat", 0);
		if (links(argv[1]))
			return 1;
	}
	io_uring_queue_exit(&ring);
	free(buf);
	return 0;
}
