// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* write_loop N: N one-byte write()s to /dev/null; prints the time per call.
 * write_loop --clock N: N reads of CLOCK_MONOTONIC in the process (the
 * vDSO's, as Darshan times a call), the time per read. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e9 + (b->tv_nsec - a->tv_nsec);
}

int main(int argc, char **argv)
{
	int clock_only = argc > 1 && strcmp(argv[1], "--clock") == 0;
	long n = argc > 1 + clock_only ? atol(argv[1 + clock_only]) : 100000;
	int fd = open("/dev/null", O_WRONLY);
	struct timespec a, b, t;
	char c = 'x';

	if (fd < 0 || n <= 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		if (clock_only)
			clock_gettime(CLOCK_MONOTONIC, &t);
		else if (write(fd, &c, 1) != 1)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ns_between(&a, &b) / n);
	return 0;
}
