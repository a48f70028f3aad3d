// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mpi_phdf5 DIR N: parallel HDF5 (MPI-IO driver), one shared file
 * DIR/shared.h5 with a dataset of N doubles per rank; each rank writes its
 * own slab with an independent H5Dwrite. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	char path[4096];
	int rank, size, n = argc > 2 ? atoi(argv[2]) : 4096;
	hsize_t dims, start, count;
	double *buf;
	hid_t fapl, f, fs, ms, d;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	buf = malloc(n * sizeof(double));
	for (int i = 0; i < n; i++)
		buf[i] = rank;
	snprintf(path, sizeof(path), "%s/shared.h5", argc > 1 ? argv[1] : ".");
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
	f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	dims = (hsize_t)n * size;
	fs = H5Screate_simple(1, &dims, NULL);
	d = H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	start = (hsize_t)n * rank;
	count = n;
	H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL);
	ms = H5Screate_simple(1, &count, NULL);
	if (f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf) < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	H5Dclose(d);
	H5Sclose(ms);
	H5Sclose(fs);
	H5Pclose(fapl);
	H5Fclose(f);
	free(buf);
	MPI_Finalize();
	return 0;
}
