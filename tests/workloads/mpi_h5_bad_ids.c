// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mpi_h5_bad_ids ERRFILE: one H5Dwrite on ids that are none, as a buggy
 * program makes it; HDF5's diagnostics (stderr) go to ERRFILE, so that a
 * run with the wrapper can be seen to print exactly what HDF5 printed.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	double buf[4] = { 0 };
	herr_t rc;

	if (argc != 2 || !freopen(argv[1], "w", stderr))
		return 2;
	MPI_Init(&argc, &argv);
	H5open();
	rc = H5Dwrite((hid_t)12345, (hid_t)67890, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
	MPI_Finalize();
	return rc < 0 ? 0 : 1;
}
