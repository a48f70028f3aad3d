/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The MPI-IO level (mpiio.c), as dcpmpi.c sees it: its records go
 * through record.h, like the HDF5 and STDIO levels'. */
#ifndef DC_MPIIO_H
#define DC_MPIIO_H

/* Nonblocking calls not yet seen complete are recorded now, with no
 * bytes, MPI_ERR_PENDING (before the session ends). */
void dc_mpiio_flush_pending(void);

#endif
