// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mpi_crash DIR: every rank writes DIR/rank_R.dat; rank 1 then aborts
 * (SIGABRT) without MPI_Finalize, the others finalize. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	int rank, fd;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(path, sizeof(path), "%s/rank_%d.dat", argc > 1 ? argv[1] : ".", rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "before the crash\n", 17) != 17 || close(fd))
		return 1;
	if (rank == 1)
		abort();
	MPI_Finalize();
	return 0;
}
