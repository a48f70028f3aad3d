// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* sync_write DIR MIB [direct]: writes MIB MiB to DIR/sync.dat in 1 MiB
 * writes, then fsync, so that the writeback (block requests) runs in this
 * process; with "direct", through O_DIRECT, so that every byte goes to the
 * disk from the write itself. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 20] __attribute__((aligned(4096)));
	char path[4096];
	int fd, n = atoi(argv[2]), direct = argc > 3 && strcmp(argv[3], "direct") == 0;

	memset(buf, 'b', sizeof(buf));
	snprintf(path, sizeof(path), "%s/sync.dat", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (direct ? O_DIRECT : 0), 0644);
	for (int i = 0; fd >= 0 && i < n; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	return fd < 0 || fsync(fd) || close(fd);
}
