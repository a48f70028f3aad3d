// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mpi_chain DIR: a causal chain through every rank. Rank 0 writes 100
 * bytes to DIR/chain_0.dat, then sends a token to rank 1, which receives
 * it, writes its own file, and sends on. On any clocks, each rank's write
 * begins after the write of the rank before ends.
 */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, size, token = 0, fd;
	char path[4096], buf[100];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2) {
		MPI_Abort(MPI_COMM_WORLD, 2);
		return 2;
	}
	memset(buf, 'c', sizeof(buf));
	snprintf(path, sizeof(path), "%s/chain_%d.dat", argv[1], rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank > 0)
		MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank + 1 < size)
		MPI_Send(&token, 1, MPI_INT, rank + 1, 7, MPI_COMM_WORLD);
	close(fd);
	MPI_Finalize();
	return 0;
}
