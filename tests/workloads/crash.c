// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* crash DIR N: N write()s of 10 bytes to DIR/crash.dat, then a segfault. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	volatile int *nowhere = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/crash.dat", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; fd >= 0 && i < atoi(argv[2]); i++)
		if (write(fd, "crashing\n\n", 10) != 10)
			return 1;
	return *nowhere;
}
