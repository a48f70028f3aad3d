// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * hdf5_loop FILE N: one MPI rank makes N H5Dwrite calls of 512 doubles
 * (4 KiB) into a dataset of 1 MiB in FILE, each its own hyperslab of the
 * dataset, through parallel HDF5 with its default (POSIX) driver, and
 * prints the wall time per call in ns (the hyperslab's selection included:
 * every tool pays it alike).
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define XFER 512  /* doubles a call */
#define SPAN 256  /* calls a pass: the dataset's 1 MiB */

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	static double buf[XFER];
	long n = argc > 2 ? atol(argv[2]) : 0;
	hsize_t dims = (hsize_t)XFER * SPAN, count = XFER, start;
	hid_t f, fs, ms, d;
	double a, b;

	if (argc != 3 || n <= 0) {
		fprintf(stderr, "usage: hdf5_loop FILE N\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	fs = H5Screate_simple(1, &dims, NULL);
	ms = H5Screate_simple(1, &count, NULL);
	d = f < 0 ? -1 : H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (d < 0) {
		fprintf(stderr, "hdf5_loop: cannot create %s\n", argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	a = now_ns();
	for (long i = 0; i < n; i++) {
		start = (hsize_t)(i % SPAN) * XFER;
		if (H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
		    H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf) < 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	b = now_ns();
	H5Dclose(d);
	H5Sclose(ms);
	H5Sclose(fs);
	H5Fclose(f);
	printf("%.1f\n", (b - a) / n);
	MPI_Finalize();
	return 0;
}
