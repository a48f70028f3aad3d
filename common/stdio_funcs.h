/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The C library's STDIO calls libdcpmpi.so records in the ranks that
 * preload it (the `stdio-wrapper` set, category stdio): it defines them,
 * so that the program's calls reach it first, and calls the C library's
 * (the next definition), as Darshan's STDIO module does. One list for the
 * wrapper and the agent (wrapper_funcs.h numbers them after the HDF5
 * calls: a change here changes DC_RING_VERSION).
 *
 * X(name, shape): shapes (the stream is the record's handle):
 *   OPEN    path, mode -> FILE *            fopen (named by its path)
 *   FDOPEN  fd, mode -> FILE *              fdopen (named by the kernel's
 *                                           name of the descriptor)
 *   REOPEN  path, mode, stream -> FILE *    freopen
 *   CLOSE   stream                          fclose
 *   IO      a transfer: bytes asked and moved
 *   SEEK    stream, offset, whence          fseek (the offset given)
 *   ON      stream                          fflush, ftell, rewind, fgetpos
 */
#ifndef DC_STDIO_FUNCS_H
#define DC_STDIO_FUNCS_H

#define DC_STDIO_FUNCS(X)                                                                          \
	X(fopen, OPEN)                                                                             \
	X(fopen64, OPEN)                                                                           \
	X(fdopen, FDOPEN)                                                                          \
	X(freopen, REOPEN)                                                                         \
	X(freopen64, REOPEN)                                                                       \
	X(fclose, CLOSE)                                                                           \
	X(fread, IO)                                                                               \
	X(fwrite, IO)                                                                              \
	X(fgets, IO)                                                                               \
	X(fputs, IO)                                                                               \
	X(puts, IO)                                                                                \
	X(fprintf, IO)                                                                             \
	X(vfprintf, IO)                                                                            \
	X(printf, IO)                                                                              \
	X(vprintf, IO)                                                                             \
	X(__fprintf_chk, IO)                                                                       \
	X(__vfprintf_chk, IO)                                                                      \
	X(__printf_chk, IO)                                                                        \
	X(__fgets_chk, IO)                                                                         \
	X(__fread_chk, IO)                                                                         \
	X(fscanf, IO)                                                                              \
	X(vfscanf, IO)                                                                             \
	X(__isoc99_fscanf, IO)                                                                     \
	X(__isoc99_vfscanf, IO)                                                                    \
	X(getline, IO)                                                                             \
	X(getdelim, IO)                                                                            \
	X(fputc, IO)                                                                               \
	X(putc, IO)                                                                                \
	X(putchar, IO)                                                                             \
	X(fgetc, IO)                                                                               \
	X(getc, IO)                                                                                \
	X(getchar, IO)                                                                             \
	X(fflush, ON)                                                                              \
	X(fseek, SEEK)                                                                             \
	X(fseeko, SEEK)                                                                            \
	X(fseeko64, SEEK)                                                                          \
	X(ftell, ON)                                                                               \
	X(ftello, ON)                                                                              \
	X(ftello64, ON)                                                                            \
	X(rewind, ON)                                                                              \
	X(fgetpos, ON)                                                                             \
	X(fgetpos64, ON)                                                                           \
	X(fsetpos, ON)                                                                             \
	X(fsetpos64, ON)

#define DC_STDIO_SHAPE_OPEN 64
#define DC_STDIO_SHAPE_FDOPEN 65
#define DC_STDIO_SHAPE_REOPEN 66
#define DC_STDIO_SHAPE_CLOSE 67
#define DC_STDIO_SHAPE_IO 68
#define DC_STDIO_SHAPE_SEEK 69
#define DC_STDIO_SHAPE_ON 70

#define DC_STDIO_SHAPE_OF(shape) DC_STDIO_SHAPE_##shape

#endif
