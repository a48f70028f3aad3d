// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HDF5 level, recorded in the process: libdcpmpi.so (a rank) or
 * libdcpreload.so, preloaded, defines the HDF5 calls of hdf5_funcs.h, so
 * that the program's calls reach these first; each calls the next
 * definition (the HDF5 library's, record.h's dc_next: also one a dlopen'ed
 * module brought, as h5py's) and puts one record into the ring (record.c).
 * No probe and no kernel entry per call.
 *
 * Files, datasets and groups are named as the uprobe sets name them: a
 * file by its path, a dataset or group FILE:OBJECT from the loc_id it is
 * made or opened in (the record's parent) and its name, an attribute by
 * its name. H5Dwrite's and H5Dread's bytes come from HDF5 itself: the
 * elements their selection holds (the memory dataspace's, else the file
 * dataspace's, else the whole dataset's) times the memory type's size,
 * asked after the call, and only when it succeeded: then every id it named
 * is what it should be and the thread's error stack is empty, so asking
 * prints nothing and clears nothing the program may read. A failed call
 * has no bytes.
 *
 * A program that never calls HDF5 never reaches this code; one that links
 * HDF5 statically, or calls it before MPI_Init or after MPI_Finalize, is
 * not recorded here (the uprobe sets hdf5 and hdf5_openmpi see the first).
 * Built against the HDF5 1.10 headers (hid_t is 64 bits from 1.10 on).
 */
#include <dlfcn.h>
#include <hdf5.h>
#include <stdio.h>

#include "record.h"
#include "wrapper_funcs.h"

#ifdef H5_NO_DEPRECATED_SYMBOLS
#error "build libdcpmpi.so against an HDF5 with its 1.6 API (H5Dcreate1...), as programs may call it"
#endif
_Static_assert(sizeof(hid_t) == sizeof(__u64), "an hid_t fits a record's handle");

/* ---- the next definition of each call ---- */

#define DC_HDF5_NEXT(name, shape) static void *next_##name;
DC_HDF5_FUNCS(DC_HDF5_NEXT)
#undef DC_HDF5_NEXT
/* The calls that size a transfer: not recorded, only called. */
static void *next_H5Sget_select_npoints, *next_H5Tget_size, *next_H5Dget_space, *next_H5Sclose;

static long long missing(const char *name)
{
	static int said;

	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "DataCrumbs' HDF5 wrapper: %s called, but no HDF5 library is loaded\n", name);
	return -1;
}

/* name(args) of the library, or HDF5's failure (-1) when there is none. */
#define CALL(name, args)                                                                           \
	({                                                                                         \
		__typeof__(&name) fn_ = (__typeof__(&name))dc_next(#name, &next_##name);           \
		fn_ ? fn_ args : (__typeof__(name args))missing(#name);                            \
	})

/* ---- a transfer's bytes, from HDF5 ---- */

/* Whether a dataspace argument is one, not a constant that names none:
 * H5S_ALL (and 1.14's H5S_BLOCK, the memory as one block of the file
 * selection's size, and H5S_PLIST). */
static int is_space(hid_t id)
{
	if (id == H5S_ALL)
		return 0;
#ifdef H5S_BLOCK
	if (id == H5S_BLOCK || id == H5S_PLIST)
		return 0;
#endif
	return 1;
}

static hssize_t points_of(hid_t space)
{
	return CALL(H5Sget_select_npoints, (space));
}

/* Of a call that succeeded with these ids. */
static __u64 selected_bytes(hid_t dset, hid_t mem_type, hid_t mem_space, hid_t file_space)
{
	size_t size = CALL(H5Tget_size, (mem_type));
	hssize_t n;

	if (!size)
		return 0;
	if (is_space(mem_space)) {
		n = points_of(mem_space);
	} else if (is_space(file_space)) {
		n = points_of(file_space);
	} else {
		hid_t all = CALL(H5Dget_space, (dset));

		if (all < 0)
			return 0;
		n = points_of(all);
		CALL(H5Sclose, (all));
	}
	return n > 0 ? (__u64)n * size : 0;
}

/* ---- records ---- */

static __u64 handle_of(hid_t id)
{
	return id >= 0 ? (__u64)id : 0;
}

/* A call that made an id (a file, dataset, group or attribute): named by
 * name, inside parent when that is not 0. */
static hid_t made(int f, __u64 ts, hid_t parent, const char *name, hid_t id)
{
	struct call c = { f, ts };

	c.path = name;
	c.handle = handle_of(id);
	c.parent = handle_of(parent);
	dc_record_put(&c, id, dc_now_ns(CLOCK_MONOTONIC));
	return id;
}

static herr_t on(int f, __u64 ts, hid_t id, herr_t rc)
{
	struct call c = { f, ts };

	c.handle = handle_of(id);
	dc_record_put(&c, rc, dc_now_ns(CLOCK_MONOTONIC));
	return rc;
}

static herr_t moved(int f, __u64 ts, __u64 end, hid_t dset, __u64 bytes, herr_t rc)
{
	struct call c = { f, ts };

	c.handle = handle_of(dset);
	c.req = c.bytes = bytes;
	dc_record_put(&c, rc, end);
	return rc;
}

/* ---- the calls, by shape ---- */

#define NOW() dc_now_ns(CLOCK_MONOTONIC)

#define WRAP_NEW(name, params, args, parent, objname)                                              \
	hid_t name params                                                                          \
	{                                                                                          \
		__u64 ts;                                                                          \
                                                                                                   \
		if (!dc_wrap_want(DC_##name))                                                      \
			return CALL(name, args);                                                   \
		ts = NOW();                                                                        \
		return made(DC_##name, ts, parent, objname, CALL(name, args));                     \
	}

WRAP_NEW(H5Fcreate, (const char *name, unsigned flags, hid_t fcpl, hid_t fapl), (name, flags, fcpl, fapl), 0, name)
WRAP_NEW(H5Fopen, (const char *name, unsigned flags, hid_t fapl), (name, flags, fapl), 0, name)
WRAP_NEW(H5Dcreate2, (hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl),
	 (loc, name, type, space, lcpl, dcpl, dapl), loc, name)
WRAP_NEW(H5Dcreate1, (hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl), (loc, name, type, space, dcpl),
	 loc, name)
WRAP_NEW(H5Dopen2, (hid_t loc, const char *name, hid_t dapl), (loc, name, dapl), loc, name)
WRAP_NEW(H5Dopen1, (hid_t loc, const char *name), (loc, name), loc, name)
WRAP_NEW(H5Gcreate2, (hid_t loc, const char *name, hid_t lcpl, hid_t gcpl, hid_t gapl), (loc, name, lcpl, gcpl, gapl),
	 loc, name)
WRAP_NEW(H5Gcreate1, (hid_t loc, const char *name, size_t size_hint), (loc, name, size_hint), loc, name)
WRAP_NEW(H5Gopen2, (hid_t loc, const char *name, hid_t gapl), (loc, name, gapl), loc, name)
WRAP_NEW(H5Gopen1, (hid_t loc, const char *name), (loc, name), loc, name)
/* A dataset or group opened as an object (h5py opens datasets so). */
WRAP_NEW(H5Oopen, (hid_t loc, const char *name, hid_t lapl), (loc, name, lapl), loc, name)
/* An attribute keeps its own name, as the uprobe sets name it. */
WRAP_NEW(H5Acreate2, (hid_t loc, const char *name, hid_t type, hid_t space, hid_t acpl, hid_t aapl),
	 (loc, name, type, space, acpl, aapl), 0, name)
WRAP_NEW(H5Acreate1, (hid_t loc, const char *name, hid_t type, hid_t space, hid_t acpl), (loc, name, type, space, acpl),
	 0, name)

#define WRAP_ON(name, params, args, id)                                                            \
	herr_t name params                                                                         \
	{                                                                                          \
		__u64 ts;                                                                          \
                                                                                                   \
		if (!dc_wrap_want(DC_##name))                                                      \
			return CALL(name, args);                                                   \
		ts = NOW();                                                                        \
		return on(DC_##name, ts, id, CALL(name, args));                                    \
	}

WRAP_ON(H5Fclose, (hid_t id), (id), id)
WRAP_ON(H5Dclose, (hid_t id), (id), id)
WRAP_ON(H5Gclose, (hid_t id), (id), id)
WRAP_ON(H5Oclose, (hid_t id), (id), id)
WRAP_ON(H5Fflush, (hid_t id, H5F_scope_t scope), (id, scope), id)
WRAP_ON(H5Dflush, (hid_t id), (id), id)
/* How h5py closes every id: its return is the references left. */
WRAP_ON(H5Idec_ref, (hid_t id), (id), id)

#define WRAP_IO(name, buf_type)                                                                    \
	herr_t name(hid_t dset, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, buf_type buf) \
	{                                                                                          \
		__u64 ts, end;                                                                     \
		herr_t rc;                                                                         \
                                                                                                   \
		if (!dc_wrap_want(DC_##name))                                                      \
			return CALL(name, (dset, mem_type, mem_space, file_space, dxpl, buf));     \
		ts = NOW();                                                                        \
		rc = CALL(name, (dset, mem_type, mem_space, file_space, dxpl, buf));               \
		end = NOW();                                                                       \
		return moved(DC_##name, ts, end, dset,                                             \
			     rc >= 0 ? selected_bytes(dset, mem_type, mem_space, file_space) : 0, rc); \
	}

WRAP_IO(H5Dwrite, const void *)
WRAP_IO(H5Dread, void *)
