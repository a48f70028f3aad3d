// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* write_loop N: N one-byte write()s to /dev/null; prints the time per call. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int fd = open("/dev/null", O_WRONLY);
	struct timespec a, b;
	char c = 'x';

	if (fd < 0 || n <= 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
