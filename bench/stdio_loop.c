// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * stdio_loop FILE N fwrite|fprintf: one MPI rank makes N calls to a
 * buffered stream on FILE (the C library reaches the kernel every 4 KiB),
 * fwrite of 16 bytes or fprintf of a short line, and prints the wall time
 * per call in ns.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	int print = argc > 3 && strcmp(argv[3], "fprintf") == 0;
	double a, b;
	FILE *f;

	if (argc != 4 || n <= 0) {
		fprintf(stderr, "usage: stdio_loop FILE N fwrite|fprintf\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	if (!(f = fopen(argv[1], "w"))) {
		perror(argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	a = now_ns();
	for (long i = 0; i < n; i++)
		if (print ? fprintf(f, "%ld %d\n", i, 42) < 0 : fwrite("0123456789abcde\n", 1, 16, f) != 16)
			MPI_Abort(MPI_COMM_WORLD, 1);
	b = now_ns();
	fclose(f);
	printf("%.1f\n", (b - a) / n);
	MPI_Finalize();
	return 0;
}
