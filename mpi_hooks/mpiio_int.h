/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Inside the rank's recorded levels: what mpiio.c (the MPI-IO calls and
 * the records), mpiio_requests.c (nonblocking calls' completions) and
 * hdf5.c (the HDF5 calls) share. */
#ifndef DC_MPIIO_INT_H
#define DC_MPIIO_INT_H

#include <linux/types.h>
#include <mpi.h>

#include "clock.h"
#include "mpiio.h"

/* One call being recorded. */
struct call {
	int f; /* enum dc_wrapper_func */
	__u64 ts;
	__u64 req, bytes;
	int has_offset;
	MPI_Offset offset;
	__u64 handle;
	__u64 parent; /* HDF5: the loc_id a dataset or group is made or opened in */
	const char *path;
};

/* Whether the agent asked for function f: when not, a wrapper only calls on. */
int dc_wrap_want(int f);

/* Bytes a finished call moved, from its status (0 when it failed). */
__u64 dc_mpiio_status_bytes(int rc, MPI_Status *st);
/* A record of c, returning rc at end, into the ring (a count in profile mode).
 */
void dc_mpiio_put(const struct call *c, long long rc, __u64 end);
/* A nonblocking call just started: recorded when it is seen complete (now,
 * with no bytes, when too many are pending). */
void dc_mpiio_keep(const struct call *c, int rc, MPI_Request req);
/* Those never seen complete: recorded now, no bytes, MPI_ERR_PENDING. */
void dc_mpiio_flush_pending(void);

#endif
