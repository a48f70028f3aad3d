// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "mpiio_funcs.h"

#include <string.h>

const char *const dc_mpiio_names[DC_MPIIO_NFUNCS] = {
#define DC_MPIIO_NAME(name, shape, dir) #name,
	DC_MPIIO_FUNCS(DC_MPIIO_NAME)
#undef DC_MPIIO_NAME
};

const unsigned char dc_mpiio_shapes[DC_MPIIO_NFUNCS] = {
#define DC_MPIIO_SHAPE(name, shape, dir) DC_MPIIO_SHAPE_OF(shape),
	DC_MPIIO_FUNCS(DC_MPIIO_SHAPE)
#undef DC_MPIIO_SHAPE
};

int dc_mpiio_func_id(const char *name)
{
	if (name[0] == 'P')
		name++; /* PMPI_File_x is MPI_File_x */
	for (int i = 0; i < DC_MPIIO_NFUNCS; i++)
		if (strcmp(name, dc_mpiio_names[i]) == 0)
			return i;
	return -1;
}
