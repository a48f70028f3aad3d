/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which functions read and which write, by name: the one rule behind
 * dc-summary's read and write figures, the io column of a merged HDF5
 * file's /functions, which the Python package reads (python/datacrumbs),
 * and the agent's DC_COOKIE_READS and DC_COOKIE_WRITES bits.
 * "read" anywhere in the name but readdir and readlink reads; "write"
 * writes; case is ignored (H5Dwrite, MPI_File_read_at, fwrite, pread64).
 */
#ifndef DC_IO_KIND_H
#define DC_IO_KIND_H

#include <ctype.h>
#include <string.h>

enum dc_io_kind { DC_IO_NONE, DC_IO_READ, DC_IO_WRITE };

static inline enum dc_io_kind dc_io_kind(const char *name)
{
	char low[128];
	size_t i;

	for (i = 0; name[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	if (strstr(low, "read") && !strstr(low, "readdir") && !strstr(low, "readlink"))
		return DC_IO_READ;
	if (strstr(low, "write"))
		return DC_IO_WRITE;
	return DC_IO_NONE;
}

/* As the io column says it. */
static inline const char *dc_io_kind_name(enum dc_io_kind k)
{
	return k == DC_IO_READ ? "read" : k == DC_IO_WRITE ? "write" : "";
}

#endif
