// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* write_loop N: N one-byte write()s to /dev/null; prints the time per call.
 * write_loop --clock N: N reads of CLOCK_MONOTONIC in the process (the
 * vDSO's, as Darshan times a call), the time per read.
 * write_loop --fwrite N: N 16-byte fwrite()s to a buffered stream on
 * /dev/null (the C library writes every 4 KiB), the time per call. */
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
	int buffered = argc > 1 && strcmp(argv[1], "--fwrite") == 0;
	int opt = clock_only || buffered;
	long n = argc > 1 + opt ? atol(argv[1 + opt]) : 100000;
	int fd = open("/dev/null", O_WRONLY);
	FILE *f = buffered ? fdopen(fd, "w") : NULL;
	struct timespec a, b, t;
	char c = 'x';

	if (fd < 0 || n <= 0 || (buffered && !f))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		if (clock_only)
			clock_gettime(CLOCK_MONOTONIC, &t);
		else if (buffered ? fwrite("0123456789abcde\n", 1, 16, f) != 16 : write(fd, &c, 1) != 1)
			return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ns_between(&a, &b) / n);
	return 0;
}
