// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "wrapper_funcs.h"

#include <string.h>

const char *const dc_wrapper_names[DC_WRAPPER_NFUNCS] = {
#define DC_MPIIO_NAME(name, shape, dir) #name,
	DC_MPIIO_FUNCS(DC_MPIIO_NAME)
#undef DC_MPIIO_NAME
#define DC_HDF5_NAME(name, shape) #name,
	DC_HDF5_FUNCS(DC_HDF5_NAME)
#undef DC_HDF5_NAME
#define DC_STDIO_NAME(name, shape) #name,
	DC_STDIO_FUNCS(DC_STDIO_NAME)
#undef DC_STDIO_NAME
};

const unsigned char dc_wrapper_shapes[DC_WRAPPER_NFUNCS] = {
#define DC_MPIIO_SHAPE(name, shape, dir) DC_MPIIO_SHAPE_OF(shape),
	DC_MPIIO_FUNCS(DC_MPIIO_SHAPE)
#undef DC_MPIIO_SHAPE
#define DC_HDF5_SHAPE(name, shape) DC_HDF5_SHAPE_OF(shape),
	DC_HDF5_FUNCS(DC_HDF5_SHAPE)
#undef DC_HDF5_SHAPE
#define DC_STDIO_SHAPE(name, shape) DC_STDIO_SHAPE_OF(shape),
	DC_STDIO_FUNCS(DC_STDIO_SHAPE)
#undef DC_STDIO_SHAPE
};

int dc_wrapper_func_id(const char *name)
{
	if (strncmp(name, "PMPI_", 5) == 0)
		name++; /* PMPI_File_x is MPI_File_x */
	for (int i = 0; i < DC_WRAPPER_NFUNCS; i++)
		if (strcmp(name, dc_wrapper_names[i]) == 0)
			return i;
	return -1;
}

const char *dc_wrapper_level(unsigned f)
{
	return dc_wrapper_is_stdio(f) ? DC_WRAPPER_STDIO : dc_wrapper_is_hdf5(f) ? DC_WRAPPER_HDF5 : DC_WRAPPER_MPIIO;
}
