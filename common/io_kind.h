/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which functions read and which write, by name: the one rule behind
 * dc-summary's read and write figures, the io column of a merged HDF5
 * file's /functions, which the Python package reads (python/datacrumbs),
 * and the agent's DC_COOKIE_READS and DC_COOKIE_WRITES bits.
 * "read" anywhere in the name but readdir, readlink and readahead reads;
 * "write" writes; case is ignored (H5Dwrite, MPI_File_read_at, fwrite,
 * pread64). The calls that move data from one descriptor to another are
 * recorded on the one the data goes to, and so write. The C library's
 * text calls say neither: they are listed (fprintf writes, fgets and
 * fscanf read, and their kin, the _FORTIFY_SOURCE forms too).
 */
#ifndef DC_IO_KIND_H
#define DC_IO_KIND_H

#include <ctype.h>
#include <string.h>
#include <strings.h>

enum dc_io_kind { DC_IO_NONE, DC_IO_READ, DC_IO_WRITE };

static inline enum dc_io_kind dc_io_kind(const char *name)
{
	static const char *const writers[] = { "copy_file_range", "sendfile", "sendfile64", "splice", "vmsplice", "tee",
					       "fprintf", "vfprintf", "printf", "vprintf", "dprintf", "vdprintf",
					       "__fprintf_chk", "__vfprintf_chk", "__printf_chk",
					       "fputs", "puts", "fputc", "putc", "_IO_putc", "putchar", "putw" };
	static const char *const readers[] = { "fgets", "__fgets_chk", "fgetc", "getc", "_IO_getc", "getchar", "getw", "fscanf",
					       "vfscanf", "__isoc99_fscanf", "__isoc99_vfscanf", "scanf", "__isoc99_scanf",
					       "getline", "getdelim" };
	char low[128];
	size_t i;

	for (i = 0; name[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)name[i]);
	low[i] = 0;
	for (i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (strcasecmp(name, writers[i]) == 0)
			return DC_IO_WRITE;
	for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
		if (strcasecmp(name, readers[i]) == 0)
			return DC_IO_READ;
	if (strstr(low, "read") && !strstr(low, "readdir") && !strstr(low, "readlink") && !strstr(low, "readahead"))
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
