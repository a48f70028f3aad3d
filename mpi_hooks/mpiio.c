// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The MPI-IO level, recorded in the rank through MPI's profiling interface:
 * a wrapper for each call of mpiio_funcs.h, made from its shape, that calls
 * the PMPI version and puts one record into the shared ring the agent
 * drains (rank_ring.h). No kernel entry per call: the clock is the vDSO's
 * CLOCK_MONOTONIC (bpf_ktime_get_ns's clock) and the thread id is cached, so
 * the POSIX calls inside nest under their MPI-IO call in every output.
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
#include "path_join.h"

#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wrapper_funcs.h"
#include "rank_ring.h"

_Static_assert(sizeof(MPI_File) <= sizeof(__u64), "a file handle fits a record's handle");

static struct dc_ring_head *ring;
static __u64 funcs_on;
static __thread __u32 my_tid;
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

/* ---- recording ---- */

static inline int want(int f)
{
	struct dc_ring_head *h = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);

	return h && (funcs_on >> f & 1) && __atomic_load_n(&h->mode, __ATOMIC_RELAXED) != DC_RING_OFF;
}

int dc_wrap_want(int f)
{
	return want(f);
}

/* The kernel's thread id, asked once per thread (a fork's child asks anew). */
static __u32 tid(void)
{
	if (!my_tid)
		my_tid = syscall(SYS_gettid);
	return my_tid;
}

static void forget_tid(void)
{
	my_tid = 0;
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

/*
 * A file's name as the call gave it, made absolute against the working
 * directory when it is relative (as the kernel names the files of every
 * other level; a ROMIO prefix kept): a file is opened or made in no
 * parent, where an HDF5 object's name is relative to its parent's. The
 * name itself where nothing is to be done or the result would not fit.
 */
static const char *absolute(const struct call *c, char *out, size_t n)
{
	char cwd[DC_PATH_MAX];
	int rc;

	if (c->parent || c->path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return c->path;
	/* HDF5 names a file as it is: a colon in it is no ROMIO prefix. */
	rc = dc_wrapper_is_hdf5(c->f) ? dc_path_join(cwd, c->path, out, n) : dc_path_absolute(cwd, c->path, out, n);
	return rc == 0 ? out : c->path;
}

void dc_mpiio_put(const struct call *c, long long rc, __u64 end)
{
	char abs[DC_PATH_MAX];
	const char *path;
	struct dc_ring_head *h = __atomic_load_n(&ring, __ATOMIC_ACQUIRE);
	struct dc_ring_rec r;
	size_t len = 0;
	int cpu;

	if (!h)
		return;
	if (__atomic_load_n(&h->mode, __ATOMIC_RELAXED) == DC_RING_PROFILE) {
		dc_ring_count(h, c->f, end - c->ts, c->bytes);
		return;
	}
	cpu = sched_getcpu();
	memset(&r, 0, sizeof(r));
	r.tid = tid();
	r.func = c->f;
	r.cpu = cpu < 0 ? 0 : cpu;
	r.flags = c->has_offset ? DC_RING_REC_OFFSET : 0;
	r.ret = rc;
	r.ts = c->ts;
	r.dur = end - c->ts;
	r.req = c->req;
	r.bytes = c->bytes;
	r.offset = c->offset;
	r.handle = c->handle;
	r.parent = c->parent;
	path = c->path ? absolute(c, abs, sizeof(abs)) : NULL;
	if (path)
		len = strnlen(path, DC_PATH_MAX - 1) + 1;
	dc_ring_put(h, &r, path, len);
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
		if (dc_in_mpi || !want(c.f))                                                       \
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
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_IO_AT(name, dir)                                                                      \
	int name(MPI_File fh, MPI_Offset off, BUF_##dir buf, int count, MPI_Datatype dt, MPI_Status *st) \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		MPI_Status own;                                                                    \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !want(c.f))                                                       \
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
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

/* A split collective's begin asks (req); its end moves (bytes). */
#define WRAP_BEGIN(name, dir)                                                                      \
	int name(MPI_File fh, BUF_##dir buf, int count, MPI_Datatype dt)                           \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !want(c.f))                                                       \
			return DC_REAL(P##name)(fh, buf, count, dt);                               \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, buf, count, dt);                                         \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.handle = handle_of(fh);                                                          \
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_BEGIN_AT(name, dir)                                                                   \
	int name(MPI_File fh, MPI_Offset off, BUF_##dir buf, int count, MPI_Datatype dt)           \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !want(c.f))                                                       \
			return DC_REAL(P##name)(fh, off, buf, count, dt);                          \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, off, buf, count, dt);                                    \
		dc_in_mpi = 0;                                                                     \
		c.req = type_bytes(dt, count);                                                     \
		c.has_offset = 1;                                                                  \
		c.offset = off;                                                                    \
		c.handle = handle_of(fh);                                                          \
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_END(name, dir)                                                                        \
	int name(MPI_File fh, BUF_##dir buf, MPI_Status *st)                                       \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		MPI_Status own;                                                                    \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !want(c.f))                                                       \
			return DC_REAL(P##name)(fh, buf, st);                                      \
		if (st == MPI_STATUS_IGNORE)                                                       \
			st = &own;                                                                 \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh, buf, st);                                                \
		dc_in_mpi = 0;                                                                     \
		c.bytes = dc_mpiio_status_bytes(rc, st);                                           \
		c.handle = handle_of(fh);                                                          \
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_I(name, dir)                                                                          \
	int name(MPI_File fh, BUF_##dir buf, int count, MPI_Datatype dt, MPI_Request *rq)          \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !want(c.f))                                                       \
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
		if (dc_in_mpi || !want(c.f))                                                       \
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
		if (dc_in_mpi || !want(c.f))                                                       \
			return DC_REAL(P##name) args;                                              \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name) args;                                                        \
		dc_in_mpi = 0;                                                                     \
		c.handle = handle_of(fh);                                                          \
		offset_expr;                                                                       \
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
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
		if (dc_in_mpi || !want(c.f))                                                       \
			return DC_REAL(P##name)(comm, path, amode, info, fh);                      \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(comm, path, amode, info, fh);                                \
		dc_in_mpi = 0;                                                                     \
		c.path = path;                                                                     \
		c.handle = rc == MPI_SUCCESS ? handle_of(*fh) : 0;                                 \
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

/* The handle as it was before the call let it go. */
#define WRAP_CLOSE(name, dir)                                                                      \
	int name(MPI_File *fh)                                                                     \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !want(c.f))                                                       \
			return DC_REAL(P##name)(fh);                                               \
		c.handle = handle_of(*fh);                                                         \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(fh);                                                         \
		dc_in_mpi = 0;                                                                     \
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define WRAP_DELETE(name, dir)                                                                     \
	int name(const char *path, MPI_Info info)                                                  \
	{                                                                                          \
		struct call c = { ID(name) };                                                      \
		int rc;                                                                            \
                                                                                                   \
		if (dc_in_mpi || !want(c.f))                                                       \
			return DC_REAL(P##name)(path, info);                                       \
		c.ts = dc_now_ns(CLOCK_MONOTONIC);                                                 \
		dc_in_mpi = 1;                                                                     \
		rc = DC_REAL(P##name)(path, info);                                                 \
		dc_in_mpi = 0;                                                                     \
		c.path = path;                                                                     \
		dc_mpiio_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));                                  \
		return rc;                                                                         \
	}

#define DC_MPIIO_REAL(name, shape, dir) DC_REAL_DEF(P##name)
DC_MPIIO_FUNCS(DC_MPIIO_REAL)
#define DC_MPIIO_WRAP(name, shape, dir) WRAP_##shape(name, dir) DC_ALSO_PMPI(name)
DC_MPIIO_FUNCS(DC_MPIIO_WRAP)

/* ---- start and stop ---- */

void dc_mpiio_start(struct dc_ring_head *h)
{
	static int atfork_set;

	if (!atfork_set++)
		pthread_atfork(NULL, NULL, forget_tid);
	funcs_on = __atomic_load_n(&h->funcs_on, __ATOMIC_ACQUIRE);
	__atomic_store_n(&ring, h, __ATOMIC_RELEASE);
}

void dc_mpiio_stop(void)
{
	dc_mpiio_flush_pending();
	__atomic_store_n(&ring, NULL, __ATOMIC_RELEASE);
}
