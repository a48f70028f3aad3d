// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mpi_hdf5 DIR N [1.6|oopen]: every rank writes a dataset "data" of N
 * doubles to its own serial HDF5 file DIR/rank_R.h5. With 1.6, through
 * HDF5's 1.6 API (H5Dcreate1), as programs built with H5_USE_16_API do, in
 * a group "run" (H5Gcreate1, the dataset's name relative to it), and then
 * opens it again by its absolute name from the file (H5Dopen1(f,
 * "/run/data")) and reads it back. With oopen, opens it again as an object
 * (H5Oopen, as h5py does), reads it back, flushes it (H5Dflush) and closes
 * it (H5Oclose); then lets go of a reference of the file's it took
 * (H5Iinc_ref, H5Idec_ref: one left) and opens the dataset again to close
 * it as h5py closes ids (H5Oopen, H5Idec_ref: none left). */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	char path[4096];
	int rank, n = argc > 2 ? atoi(argv[2]) : 4096, v16 = argc > 3 && strcmp(argv[3], "1.6") == 0;
	int oopen = argc > 3 && strcmp(argv[3], "oopen") == 0;
	hsize_t dims;
	double *buf;
	hid_t f, s, d, g = -1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	buf = malloc(n * sizeof(double));
	for (int i = 0; i < n; i++)
		buf[i] = rank + i;
	dims = n;
	snprintf(path, sizeof(path), "%s/rank_%d.h5", argc > 1 ? argv[1] : ".", rank);
	f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	s = H5Screate_simple(1, &dims, NULL);
	if (v16 && (g = H5Gcreate1(f, "run", 0)) < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	d = v16 ? H5Dcreate1(g, "data", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT)
		: H5Dcreate2(f, "data", H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	if (f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ||
	    H5Dclose(d) < 0 || H5Sclose(s) < 0 || (v16 && H5Gclose(g) < 0))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (v16 && ((d = H5Dopen1(f, "/run/data")) < 0 ||
		    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 || H5Dclose(d) < 0))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (oopen && ((d = H5Oopen(f, "data", H5P_DEFAULT)) < 0 ||
		      H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 || H5Dflush(d) < 0 ||
		      H5Oclose(d) < 0 || H5Iinc_ref(f) != 2 || H5Idec_ref(f) != 1 ||
		      (d = H5Oopen(f, "data", H5P_DEFAULT)) < 0 || H5Idec_ref(d) != 0))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (H5Fclose(f) < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	free(buf);
	MPI_Finalize();
	return 0;
}
