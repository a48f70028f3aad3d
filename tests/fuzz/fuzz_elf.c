// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer: any bytes as a library file a job maps (agent/lib_files.c):
 * its soname read from the file, its symbols from a copy.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[512], soname[256];
	struct dc_elf_syms *syms;
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		dc_elf_soname(fd, soname, sizeof(soname));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if ((syms = dc_elf_open(path, err, sizeof(err)))) {
			for (size_t i = 0; i < dc_elf_count(syms); i++)
				dc_elf_offset(syms, dc_elf_name(syms, i));
			dc_elf_close(syms);
		}
	}
	close(fd);
	return 0;
}
