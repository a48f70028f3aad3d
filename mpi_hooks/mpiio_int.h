/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Inside the MPI-IO level: what mpiio.c (the MPI-IO calls) and
 * mpiio_requests.c (nonblocking calls' completions) share. */
#ifndef DC_MPIIO_INT_H
#define DC_MPIIO_INT_H

#include <linux/types.h>
#include <mpi.h>

#include "mpiio.h"
#include "record.h"

/*
 * Both names of an MPI-IO call and of a request's completion are wrapped:
 * C programs call MPI_*, Open MPI's Fortran bindings (and other libraries)
 * PMPI_*. A wrapper goes on to the MPI's own entry, found past this library
 * by its PMPI name (RTLD_NEXT): PMPI_* called by name would be this
 * library's own again. The PMPI name is an alias of the wrapper
 * (DC_ALSO_PMPI).
 */
void *dc_mpi_real(const char *pmpi_name);
#define DC_REAL_DEF(pname)                                                                         \
	static __typeof__(&pname) real_##pname(void)                                               \
	{                                                                                          \
		static __typeof__(&pname) f;                                                       \
		__typeof__(&pname) v = __atomic_load_n(&f, __ATOMIC_RELAXED);                      \
                                                                                                   \
		if (!v) {                                                                          \
			v = (__typeof__(&pname))dc_mpi_real(#pname);                               \
			__atomic_store_n(&f, v, __ATOMIC_RELAXED);                                 \
		}                                                                                  \
		return v;                                                                          \
	}
#define DC_REAL(pname) (real_##pname())
#define DC_ALSO_PMPI(name) extern __typeof__(name) P##name __attribute__((alias(#name)));

/*
 * Set while a wrapper's call runs inside the MPI: a call the MPI makes
 * itself through a wrapped name (ROMIO calling PMPI_File_* or
 * PMPI_Waitall) is the outer call's work, not a call of the program's, and
 * is passed on unrecorded.
 */
extern __thread int dc_in_mpi __attribute__((tls_model("initial-exec")));

/* Bytes a finished call moved, from its status (0 when it failed). */
__u64 dc_mpiio_status_bytes(int rc, MPI_Status *st);
/* A nonblocking call just started: recorded when it is seen complete (now,
 * with no bytes, when too many are pending). */
void dc_mpiio_keep(const struct call *c, int rc, MPI_Request req);

#endif
