// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mpi_io DIR N: every rank writes N ints at offset rank*N*4 of DIR/shared.dat
 * with one collective MPI_File_write_at_all. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	char path[4096];
	int rank, n = argc > 2 ? atoi(argv[2]) : 1024, *buf;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	buf = malloc(n * sizeof(int));
	for (int i = 0; i < n; i++)
		buf[i] = rank;
	snprintf(path, sizeof(path), "%s/shared.dat", argc > 1 ? argv[1] : ".");
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) ||
	    MPI_File_write_at_all(fh, (MPI_Offset)rank * n * sizeof(int), buf, n, MPI_INT, MPI_STATUS_IGNORE) ||
	    MPI_File_close(&fh))
		MPI_Abort(MPI_COMM_WORLD, 1);
	free(buf);
	MPI_Finalize();
	return 0;
}
