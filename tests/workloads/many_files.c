// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* many_files DIR N: opens, writes 4 bytes to and closes N distinct files DIR/f_I. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	int n = argc > 2 ? atoi(argv[2]) : 20000;

	for (int i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f_%d", argv[1], i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "abc\n", 4) != 4 || close(fd))
			return 1;
	}
	return 0;
}
