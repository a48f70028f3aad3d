/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every call libdcpmpi.so records in a rank, numbered once: the MPI-IO
 * calls (mpiio_funcs.h), then the HDF5 calls (hdf5_funcs.h), then the
 * STDIO calls (stdio_funcs.h). A ring
 * record's func is this number and a ring's function mask has one bit per
 * call, so the whole list fits DC_RING_MAX_FUNCS.
 */
#ifndef DC_WRAPPER_FUNCS_H
#define DC_WRAPPER_FUNCS_H

#include <stdbool.h>

#include "hdf5_funcs.h"
#include "mpiio_funcs.h"
#include "stdio_funcs.h"

enum dc_wrapper_func {
#define DC_MPIIO_ENUM(name, shape, dir) DC_##name,
	DC_MPIIO_FUNCS(DC_MPIIO_ENUM)
#undef DC_MPIIO_ENUM
	DC_MPIIO_NFUNCS,
	DC_WRAPPER_HDF5_FIRST = DC_MPIIO_NFUNCS,
	DC_HDF5_BEFORE_FIRST = DC_MPIIO_NFUNCS - 1,
#define DC_HDF5_ENUM(name, shape) DC_##name,
	DC_HDF5_FUNCS(DC_HDF5_ENUM)
#undef DC_HDF5_ENUM
	DC_WRAPPER_STDIO_FIRST,
	DC_STDIO_BEFORE_FIRST = DC_WRAPPER_STDIO_FIRST - 1,
#define DC_STDIO_ENUM(name, shape) DC_##name,
	DC_STDIO_FUNCS(DC_STDIO_ENUM)
#undef DC_STDIO_ENUM
	DC_WRAPPER_NFUNCS,
};

/* The level a call belongs to: the category of a wrapper set that asks for
 * all of them. */
#define DC_WRAPPER_MPIIO "mpiio"
#define DC_WRAPPER_HDF5 "hdf5"
#define DC_WRAPPER_STDIO "stdio"

/* Names and shapes (DC_MPIIO_SHAPE_* or DC_HDF5_SHAPE_*) by number. */
extern const char *const dc_wrapper_names[DC_WRAPPER_NFUNCS];
extern const unsigned char dc_wrapper_shapes[DC_WRAPPER_NFUNCS];
/* A name's number (PMPI_File_x is MPI_File_x), or -1. */
int dc_wrapper_func_id(const char *name);
/* DC_WRAPPER_MPIIO, _HDF5 or _STDIO, for f < DC_WRAPPER_NFUNCS. */
const char *dc_wrapper_level(unsigned f);
static inline bool dc_wrapper_is_hdf5(unsigned f)
{
	return f >= DC_WRAPPER_HDF5_FIRST && f < DC_WRAPPER_STDIO_FIRST;
}
static inline bool dc_wrapper_is_stdio(unsigned f)
{
	return f >= DC_WRAPPER_STDIO_FIRST && f < DC_WRAPPER_NFUNCS;
}

#endif
