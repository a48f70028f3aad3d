/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The MPI-IO calls libdcpmpi.so records through MPI's profiling interface
 * (the `mpiio` probe set, `wrapper: libdcpmpi`): one list for the wrapper,
 * which generates a wrapper per entry from its shape, and for the agent,
 * which names the records and sets their flags from it (wrapper_funcs.h
 * numbers them: a change here changes DC_RING_VERSION).
 *
 * X(name, shape, dir): dir is R (reads), W (writes) or N (neither).
 * Shapes (the arguments after the MPI_File):
 *   IO      buf, count, datatype, status        MPI_File_write
 *   IO_AT   offset, buf, count, datatype, status MPI_File_write_at
 *   BEGIN   buf, count, datatype                MPI_File_write_all_begin
 *   BEGIN_AT offset, buf, count, datatype       MPI_File_write_at_all_begin
 *   END     buf, status                         MPI_File_write_all_end
 *   I       buf, count, datatype, request       MPI_File_iwrite
 *   I_AT    offset, buf, count, datatype, request MPI_File_iwrite_at
 *   OPEN, CLOSE, DELETE, SYNC, SEEK, SET_VIEW, SET_SIZE: their own
 */
#ifndef DC_MPIIO_FUNCS_H
#define DC_MPIIO_FUNCS_H

#define DC_MPIIO_FUNCS(X)                                                                          \
	X(MPI_File_open, OPEN, N)                                                                  \
	X(MPI_File_close, CLOSE, N)                                                                \
	X(MPI_File_delete, DELETE, N)                                                              \
	X(MPI_File_sync, SYNC, N)                                                                  \
	X(MPI_File_seek, SEEK, N)                                                                  \
	X(MPI_File_seek_shared, SEEK, N)                                                           \
	X(MPI_File_set_view, SET_VIEW, N)                                                          \
	X(MPI_File_set_size, SET_SIZE, N)                                                          \
	X(MPI_File_preallocate, SET_SIZE, N)                                                       \
	X(MPI_File_read, IO, R)                                                                    \
	X(MPI_File_write, IO, W)                                                                   \
	X(MPI_File_read_at, IO_AT, R)                                                              \
	X(MPI_File_write_at, IO_AT, W)                                                             \
	X(MPI_File_read_all, IO, R)                                                                \
	X(MPI_File_write_all, IO, W)                                                               \
	X(MPI_File_read_at_all, IO_AT, R)                                                          \
	X(MPI_File_write_at_all, IO_AT, W)                                                         \
	X(MPI_File_read_shared, IO, R)                                                             \
	X(MPI_File_write_shared, IO, W)                                                            \
	X(MPI_File_read_ordered, IO, R)                                                            \
	X(MPI_File_write_ordered, IO, W)                                                           \
	X(MPI_File_read_all_begin, BEGIN, R)                                                       \
	X(MPI_File_write_all_begin, BEGIN, W)                                                      \
	X(MPI_File_read_at_all_begin, BEGIN_AT, R)                                                 \
	X(MPI_File_write_at_all_begin, BEGIN_AT, W)                                                \
	X(MPI_File_read_ordered_begin, BEGIN, R)                                                   \
	X(MPI_File_write_ordered_begin, BEGIN, W)                                                  \
	X(MPI_File_read_all_end, END, R)                                                           \
	X(MPI_File_write_all_end, END, W)                                                          \
	X(MPI_File_read_at_all_end, END, R)                                                        \
	X(MPI_File_write_at_all_end, END, W)                                                       \
	X(MPI_File_read_ordered_end, END, R)                                                       \
	X(MPI_File_write_ordered_end, END, W)                                                      \
	X(MPI_File_iread, I, R)                                                                    \
	X(MPI_File_iwrite, I, W)                                                                   \
	X(MPI_File_iread_at, I_AT, R)                                                              \
	X(MPI_File_iwrite_at, I_AT, W)                                                             \
	X(MPI_File_iread_all, I, R)                                                                \
	X(MPI_File_iwrite_all, I, W)                                                               \
	X(MPI_File_iread_at_all, I_AT, R)                                                          \
	X(MPI_File_iwrite_at_all, I_AT, W)                                                         \
	X(MPI_File_iread_shared, I, R)                                                             \
	X(MPI_File_iwrite_shared, I, W)

/* Whether a shape carries an explicit offset, names a new handle, and so on:
 * the agent turns these into the event's flags. */
#define DC_MPIIO_SHAPE_OPEN 1
#define DC_MPIIO_SHAPE_CLOSE 2
#define DC_MPIIO_SHAPE_DELETE 3
#define DC_MPIIO_SHAPE_SYNC 4
#define DC_MPIIO_SHAPE_SEEK 5
#define DC_MPIIO_SHAPE_SET_VIEW 6
#define DC_MPIIO_SHAPE_SET_SIZE 7
#define DC_MPIIO_SHAPE_IO 8
#define DC_MPIIO_SHAPE_IO_AT 9
#define DC_MPIIO_SHAPE_BEGIN 10
#define DC_MPIIO_SHAPE_BEGIN_AT 11
#define DC_MPIIO_SHAPE_END 12
#define DC_MPIIO_SHAPE_I 13
#define DC_MPIIO_SHAPE_I_AT 14

#define DC_MPIIO_SHAPE_OF(shape) DC_MPIIO_SHAPE_##shape

#endif
