// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * mpi_io_calls DIR N: the MPI-IO family with known counts and bytes. Every
 * rank, on DIR/calls.dat (B = 1024 ints = 4096 bytes):
 *   MPI_File_open, MPI_File_set_size (to 0)               1 each
 *   MPI_File_write_at x N (status ignored), at (rank*N+i)*B  N, N*B
 *   MPI_File_read_at x N (a real status), the same blocks    N, N*B
 *   MPI_File_iwrite_at x 2 + MPI_Waitall (statuses ignored)  2, 2*B
 *   MPI_File_iread_at + MPI_Wait, then + MPI_Waitsome        2, 2*B
 *   MPI_File_iwrite_at + MPI_Test until done                1, B
 *   MPI_File_write_at_all_begin + _end                       1 each, B asked at begin, moved at end
 *   MPI_File_seek to 0, MPI_File_set_view (MPI_INT etypes)  1 each
 *   MPI_File_write_all of B                                  1, B
 *   MPI_File_sync                                            1
 *   MPI_File_write_shared of 16 ints                         1, 64
 *   MPI_File_read_ordered of 16 ints                         1, 64
 *   MPI_File_close                                           1
 * and rank 0 alone makes DIR/gone.dat (open, close on MPI_COMM_SELF) and
 * deletes it (MPI_File_delete).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define B 1024

static void check(int rc, const char *what)
{
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "mpi_io_calls: %s failed (%d)\n", what, rc);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

int main(int argc, char **argv)
{
	char path[4096], gone[4096];
	int rank, n = argc > 2 ? atoi(argv[2]) : 4, flag = 0, buf[B];
	MPI_Request rq[2];
	MPI_Status st;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < B; i++)
		buf[i] = rank;
	snprintf(path, sizeof(path), "%s/calls.dat", argc > 1 ? argv[1] : ".");
	snprintf(gone, sizeof(gone), "%s/gone.dat", argc > 1 ? argv[1] : ".");
	check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
	check(MPI_File_set_size(fh, 0), "set_size");
	for (int i = 0; i < n; i++)
		check(MPI_File_write_at(fh, (MPI_Offset)(rank * n + i) * sizeof(buf), buf, B, MPI_INT, MPI_STATUS_IGNORE),
		      "write_at");
	for (int i = 0; i < n; i++)
		check(MPI_File_read_at(fh, (MPI_Offset)(rank * n + i) * sizeof(buf), buf, B, MPI_INT, &st), "read_at");
	for (int i = 0; i < 2; i++)
		check(MPI_File_iwrite_at(fh, (MPI_Offset)(rank * n + i) * sizeof(buf), buf, B, MPI_INT, &rq[i]),
		      "iwrite_at");
	check(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), "waitall");
	check(MPI_File_iread_at(fh, (MPI_Offset)rank * n * sizeof(buf), buf, B, MPI_INT, &rq[0]), "iread_at");
	check(MPI_Wait(&rq[0], &st), "wait");
	check(MPI_File_iread_at(fh, (MPI_Offset)rank * n * sizeof(buf), buf, B, MPI_INT, &rq[0]), "iread_at");
	for (int done = 0, got, idx[1]; !done; done += got)
		check(MPI_Waitsome(1, rq, &got, idx, MPI_STATUSES_IGNORE), "waitsome");
	check(MPI_File_iwrite_at(fh, (MPI_Offset)rank * n * sizeof(buf), buf, B, MPI_INT, &rq[0]), "iwrite_at");
	while (!flag)
		check(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE), "test");
	check(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * n * sizeof(buf), buf, B, MPI_INT), "begin");
	check(MPI_File_write_at_all_end(fh, buf, &st), "end");
	check(MPI_File_seek(fh, 0, MPI_SEEK_SET), "seek");
	check(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), "set_view");
	check(MPI_File_write_all(fh, buf, B, MPI_INT, MPI_STATUS_IGNORE), "write_all");
	check(MPI_File_sync(fh), "sync");
	check(MPI_File_write_shared(fh, buf, 16, MPI_INT, MPI_STATUS_IGNORE), "write_shared");
	check(MPI_File_read_ordered(fh, buf, 16, MPI_INT, &st), "read_ordered");
	check(MPI_File_close(&fh), "close");
	if (rank == 0) {
		check(MPI_File_open(MPI_COMM_SELF, gone, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open");
		check(MPI_File_close(&fh), "close");
		check(MPI_File_delete(gone, MPI_INFO_NULL), "delete");
	}
	MPI_Finalize();
	return 0;
}
