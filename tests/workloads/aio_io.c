// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Linux AIO through the system calls themselves (what libaio wraps):
 *   aio_io DIR N SIZE
 * DIR/aio.dat: N writes of SIZE bytes in one io_submit, reaped with
 * io_getevents; N reads of them the same way, reaped with io_pgetevents;
 * then one pwritev of two buffers (16 bytes), an fsync of DIR/aio2.dat and
 * an fdsync of DIR/aio3.dat, submitted together (two files new to the
 * trace in one call) and reaped one io_getevents at a time. Exits 1 if
 * any request did not do what it was asked.
 */
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static long reap(aio_context_t ctx, long n, struct io_event *ev, int pget)
{
	long got = 0;

	while (got < n) {
		/* All of them in one call, unless a signal cuts it short. */
		long r = pget ? syscall(SYS_io_pgetevents, ctx, n - got, n - got, ev + got, NULL, NULL)
			      : syscall(SYS_io_getevents, ctx, n - got, n - got, ev + got, NULL);

		if (r <= 0)
			return -1;
		got += r;
	}
	return got;
}

static int check(const struct io_event *ev, long n, long long want)
{
	for (long i = 0; i < n; i++)
		if (ev[i].res != want) {
			fprintf(stderr, "aio_io: a request returned %lld, not %lld\n", (long long)ev[i].res, want);
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0, size = argc > 3 ? atol(argv[3]) : 0;
	struct iovec iov[2] = { { "01234567", 8 }, { "89abcdef", 8 } };
	struct iocb *cbs, **ptrs;
	struct io_event *ev;
	aio_context_t ctx = 0;
	char path[4096], *buf;
	int fd, fd2, fd3;

	if (argc != 4 || n < 1 || size < 1) {
		fprintf(stderr, "usage: aio_io DIR N SIZE\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/aio.dat", argv[1]);
	cbs = calloc(n + 2, sizeof(*cbs));
	ptrs = calloc(n + 2, sizeof(*ptrs));
	ev = calloc(n + 2, sizeof(*ev));
	buf = malloc(n * size);
	if (!cbs || !ptrs || !ev || !buf || (fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0 ||
	    syscall(SYS_io_setup, n + 2, &ctx)) {
		perror(path);
		return 1;
	}
	memset(buf, 'a', n * size);
	for (int pass = 0; pass < 2; pass++) {
		for (long i = 0; i < n; i++) {
			memset(&cbs[i], 0, sizeof(cbs[i]));
			cbs[i].aio_lio_opcode = pass ? IOCB_CMD_PREAD : IOCB_CMD_PWRITE;
			cbs[i].aio_fildes = fd;
			cbs[i].aio_buf = (__u64)(unsigned long)(buf + i * size);
			cbs[i].aio_nbytes = size;
			cbs[i].aio_offset = i * size;
			ptrs[i] = &cbs[i];
		}
		if (syscall(SYS_io_submit, ctx, n, ptrs) != n || reap(ctx, n, ev, pass) != n || check(ev, n, size))
			return 1;
	}
	snprintf(path, sizeof(path), "%s/aio2.dat", argv[1]);
	fd2 = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	snprintf(path, sizeof(path), "%s/aio3.dat", argv[1]);
	fd3 = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd2 < 0 || fd3 < 0) {
		perror(path);
		return 1;
	}
	memset(&cbs[0], 0, 3 * sizeof(cbs[0]));
	cbs[0].aio_lio_opcode = IOCB_CMD_PWRITEV;
	cbs[0].aio_fildes = fd;
	cbs[0].aio_buf = (__u64)(unsigned long)iov;
	cbs[0].aio_nbytes = 2;
	cbs[0].aio_offset = n * size;
	cbs[1].aio_lio_opcode = IOCB_CMD_FSYNC;
	cbs[1].aio_fildes = fd2;
	cbs[2].aio_lio_opcode = IOCB_CMD_FDSYNC;
	cbs[2].aio_fildes = fd3;
	ptrs[0] = &cbs[0];
	ptrs[1] = &cbs[1];
	ptrs[2] = &cbs[2];
	if (syscall(SYS_io_submit, ctx, 3, ptrs) != 3 || reap(ctx, 1, ev, 0) != 1 || reap(ctx, 2, ev + 1, 0) != 2 ||
	    ev[0].res + ev[1].res + ev[2].res != 16)
		return 1;
	syscall(SYS_io_destroy, ctx);
	close(fd);
	close(fd2);
	close(fd3);
	return 0;
}
