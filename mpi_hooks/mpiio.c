// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The MPI-IO level, recorded in the rank through MPI's profiling interface:
 * a wrapper for each call of mpiio_funcs.h, made from its shape, that calls
 * the PMPI version and puts one record into the shared ring the agent
 * drains (record.h).
 *
 * Sizes come from MPI itself: bytes asked are count x PMPI_Type_size_x, bytes
 * moved are what the call's status says (PMPI_Get_elements_x in MPI_BYTE),
 * so the level works with every MPI the library is built against.
 *
 * Nonblocking calls (MPI_File_i*) are recorded once, when MPI_Wait, MPI_Test
 * and their any/some/all forms see them complete (mpiio_requests.c). Each
 * call is wrapped under both its names (mpiio_int.h): Fortran programs reach
 * it through their bindings, Open MPI's calling PMPI_File_* and MPICH's
 * MPI_File_*. Not recorded: the MPI-4 large-count (_c) forms.
 */
#include "mpiio_int.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wrapper_funcs.h"

_Static_assert(sizeof(MPI_File) <= sizeof(__u64), "a file handle fits a record's handle");

__thread int dc_in_mpi __attribute__((tls_model("initial-exec")));

void *dc_mpi_real(const char *pmpi_name)
{
	void *f = dlsym(RTLD_NEXT, pmpi_name);

	if (!f) {
		fprintf(stderr, "libdcpmpi: %s not found in the MPI library loaded after this one; preload "
				"libdcpmpi.so into a program linked with the MPI it was built for\n", pmpi_name);
		abort();
	}
	return f;
}

static __u64 handle_of(MPI_File fh)
{
	__u64 h = 0;

	memcpy(&h, &fh, sizeof(fh));
	return h;
}

static __u64 type_bytes(MPI_Datatype t, int count)
{
	MPI_Count size = 0;

	if (count <= 0 || PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size <= 0)
		return 0;
	return (__u64)size * (__u64)count;
}

__u64 dc_mpiio_status_bytes(int rc, MPI_Status *st)
{
	MPI_Count n = 0;

	if (rc != MPI_SUCCESS || !st || PMPI_Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return (__u64)n;
}

/* ---- the wrappers, by shape ---- */

#define BUF_R void *
#define BUF_W const void *
#define ID(name) DC_##name

#define WRAP_IO(name, dir)                                                                         \
	int name(MPI_File fh, BUF_##dir buf, int count, MPI_Datatype dt, MPI_Status *st)           \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		MPI_Status own;                                                                    \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh, buf, count, dt, st);                           \
		if (st == MPI_STATUS_IGNORE)                                                       \
			st = &own;                                                                 \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, buf, count, dt, st);                                     \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.bytes = dc_mpiio_status_bytes(rc, st);                                           \
		c.handle = handle_of(fh);                                                          \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_IO_AT(name, dir)                                                                      \
	int name(MPI_File fh, MPI_Offset off, BUF_##dir buf, int count, MPI_Datatype dt, MPI_Status *st) \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		MPI_Status own;                                                                    \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh, off, buf, count, dt, st);                      \
		if (st == MPI_STATUS_IGNORE)                                                       \
			st = &own;                                                                 \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, off, buf, count, dt, st);                                \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.bytes = dc_mpiio_status_bytes(rc, st);                                           \
		c.has_offset = 1;                                                                  \
		c.offset = off;                                                                    \
		c.handle = handle_of(fh);                                                          \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

/* A split collective's begin asks (req); its end moves (bytes). */
#define WRAP_BEGIN(name, dir)                                                                      \
	int name(MPI_File fh, BUF_##dir buf, int count, MPI_Datatype dt)                           \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh, buf, count, dt);                               \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, buf, count, dt);                                         \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.handle = handle_of(fh);                                                          \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_BEGIN_AT(name, dir)                                                                   \
	int name(MPI_File fh, MPI_Offset off, BUF_##dir buf, int count, MPI_Datatype dt)           \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh, off, buf, count, dt);                          \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, off, buf, count, dt);                                    \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.has_offset = 1;                                                                  \
		c.offset = off;                                                                    \
		c.handle = handle_of(fh);                                                          \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_END(name, dir)                                                                        \
	int name(MPI_File fh, BUF_##dir buf, MPI_Status *st)                                       \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		MPI_Status own;                                                                    \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh, buf, st);                                      \
		if (st == MPI_STATUS_IGNORE)                                                       \
			st = &own;                                                                 \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, buf, st);                                                \
		dc_in_mpi = 0;                                                                     \
		c.bytes = dc_mpiio_status_bytes(rc, st);                                           \
		c.handle = handle_of(fh);                                                          \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_I(name, dir)                                                                          \
	int name(MPI_File fh, BUF_##dir buf, int count, MPI_Datatype dt, MPI_Request *rq)          \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh, buf, count, dt, rq);                           \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, buf, count, dt, rq);                                     \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.handle = handle_of(fh);                                                          \
		dc_mpiio_keep(&c, rc, rc == MPI_SUCCESS ? *rq : MPI_REQUEST_NULL);                 \
		return rc;                                                                         \
	}

#define WRAP_I_AT(name, dir)                                                                       \
	int name(MPI_File fh, MPI_Offset off, BUF_##dir buf, int count, MPI_Datatype dt, MPI_Request *rq) \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh, off, buf, count, dt, rq);                      \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, off, buf, count, dt, rq);                                \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.has_offset = 1;                                                                  \
		c.offset = off;                                                                    \
		c.handle = handle_of(fh);                                                          \
		dc_mpiio_keep(&c, rc, rc == MPI_SUCCESS ? *rq : MPI_REQUEST_NULL);                 \
		return rc;                                                                         \
	}

/* Handle and offset-like argument only: sync, seek, set_size. */
#define WRAP_FH(name, params, args, offset_expr)                                                   \
	int name params                                                                            \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name) args;                                              \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name) args;                                                        \
		dc_in_mpi = 0;                                                                     \
		c.handle = handle_of(fh);                                                          \
		offset_expr;                                                                       \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}
#define SET_OFFSET(v) (c.has_offset = 1, c.offset = (v))
#define WRAP_SYNC(name, dir) WRAP_FH(name, (MPI_File fh), (fh), (void)0)
#define WRAP_SEEK(name, dir) WRAP_FH(name, (MPI_File fh, MPI_Offset off, int whence), (fh, off, whence), SET_OFFSET(off))
#define WRAP_SET_SIZE(name, dir) WRAP_FH(name, (MPI_File fh, MPI_Offset size), (fh, size), SET_OFFSET(size))
#define WRAP_SET_VIEW(name, dir)                                                                   \
	WRAP_FH(name,                                                                              \
		(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype ftype, const char *rep, MPI_Info info), \
		(fh, disp, etype, ftype, rep, info), SET_OFFSET(disp))

/* The path as the call named it; the handle it made, once it succeeded. */
#define WRAP_OPEN(name, dir)                                                                       \
	int name(MPI_Comm comm, const char *path, int amode, MPI_Info info, MPI_File *fh)          \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(comm, path, amode, info, fh);                      \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(comm, path, amode, info, fh);                                \
		dc_in_mpi = 0;                                                                     \
		c.path = path;                                                                     \
		c.handle = rc == MPI_SUCCESS ? handle_of(*fh) : 0;                                 \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

/* The handle as it was before the call let it go. */
#define WRAP_CLOSE(name, dir)                                                                      \
	int name(MPI_File *fh)                                                                     \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(fh);                                               \
		c.handle = handle_of(*fh);                                                         \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh);                                                         \
		dc_in_mpi = 0;                                                                     \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_DELETE(name, dir)                                                                     \
	int name(const char *path, MPI_Info info)                                                  \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !dc_wrap_want(c.f))                                                       \
			return DC_REAL(P##name)(path, info);                                       \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(path, info);                                                 \
		dc_in_mpi = 0;                                                                     \
		c.path = path;                                                                     \
		dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define DC_MPIIO_REAL(name, shape, dir) DC_REAL_DEF(P##name)
DC_MPIIO_FUNCS(DC_MPIIO_REAL)
#define DC_MPIIO_WRAP(name, shape, dir) WRAP_##shape(name, dir) DC_ALSO_PMPI(name)
DC_MPIIO_FUNCS(DC_MPIIO_WRAP)
