// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* posix_write DIR COUNT SIZE: open DIR/posix_write.dat, COUNT write()s of SIZE bytes, close. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], *buf;
	long count, size;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: posix_write DIR COUNT SIZE\n");
		return 2;
	}
	count = atol(argv[2]);
	size = atol(argv[3]);
	snprintf(path, sizeof(path), "%s/posix_write.dat", argv[1]);
	buf = malloc(size);
	if (!buf)
		return 1;
	memset(buf, 'x', size);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	for (long i = 0; i < count; i++) {
		if (write(fd, buf, size) != size) {
			perror("write");
			return 1;
		}
	}
	close(fd);
	free(buf);
	return 0;
}
