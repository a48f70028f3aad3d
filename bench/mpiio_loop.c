// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mpiio_loop FILE N: one MPI rank makes N MPI_File_write_at calls of 4 KiB
 * (IOR's MPIIO transfer) over the first MiB of FILE, so that they stay in
 * the page cache, and prints the wall time per call in ns.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define XFER 4096
#define SPAN 256 /* transfers: 1 MiB */

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	static char buf[XFER];
	long n = argc > 2 ? atol(argv[2]) : 0;
	MPI_Status st;
	MPI_File fh;
	double a, b;

	if (argc != 3 || n <= 0) {
		fprintf(stderr, "usage: mpiio_loop FILE N\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	if (MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
	    MPI_SUCCESS) {
		fprintf(stderr, "mpiio_loop: cannot open %s\n", argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	a = now_ns();
	for (long i = 0; i < n; i++)
		if (MPI_File_write_at(fh, (MPI_Offset)(i % SPAN) * XFER, buf, XFER, MPI_BYTE, &st) != MPI_SUCCESS)
			MPI_Abort(MPI_COMM_WORLD, 1);
	b = now_ns();
	MPI_File_close(&fh);
	printf("%.1f\n", (b - a) / n);
	MPI_Finalize();
	return 0;
}
