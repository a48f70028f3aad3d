// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mpi_posix DIR: rank R makes 10*(R+1) write()s of 1000 bytes to DIR/rank_R.dat. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], buf[1000];
	int rank, fd, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(buf, 'r', sizeof(buf));
	snprintf(path, sizeof(path), "%s/rank_%d.dat", argc > 1 ? argv[1] : ".", rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	for (int i = 0; fd >= 0 && i < 10 * (rank + 1); i++)
		bad |= write(fd, buf, sizeof(buf)) != sizeof(buf);
	if (fd < 0 || close(fd) || bad)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
