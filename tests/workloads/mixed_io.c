// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mixed_io DIR: one of each, with known arguments, on DIR/mixed.dat:
 * mkdir DIR/sub; open; pwrite 4096 at 8192; lseek to 100; read 50 (back of
 * a hole: 50 zero bytes); pread 1000 at 8192; fsync; ftruncate 5000;
 * close; rename to DIR/sub/moved.dat; unlink it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], sub[4096], moved[4096], buf[4096];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: mixed_io DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/mixed.dat", argv[1]);
	snprintf(sub, sizeof(sub), "%s/sub", argv[1]);
	snprintf(moved, sizeof(moved), "%s/sub/moved.dat", argv[1]);
	memset(buf, 'm', sizeof(buf));
	if (mkdir(sub, 0755))
		return 1;
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || pwrite(fd, buf, 4096, 8192) != 4096 || lseek(fd, 100, SEEK_SET) != 100 ||
	    read(fd, buf, 50) != 50 || pread(fd, buf, 1000, 8192) != 1000 || fsync(fd) ||
	    ftruncate(fd, 5000) || close(fd) || rename(path, moved) || unlink(moved)) {
		perror("mixed_io");
		return 1;
	}
	return 0;
}
