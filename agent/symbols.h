/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finding libraries the way ld.so does, and function offsets in them with libelf. */
#ifndef DC_SYMBOLS_H
#define DC_SYMBOLS_H

#include <gelf.h>
#include <stddef.h>

/*
 * A name with a slash is taken as a path; a soname is looked for in
 * LD_LIBRARY_PATH, the directories of /etc/ld.so.conf (with its includes),
 * then the default directories. Returns 0 and the real path, or -1.
 */
int dc_find_library(const char *name, char *out, size_t outlen);

struct dc_elf_syms;

/* Opens an ELF shared object and reads its function symbols. */
struct dc_elf_syms *dc_elf_open(const char *path, char *err, size_t errlen);
/* File offset of a defined function (what a uprobe attaches to), or -1. */
long dc_elf_offset(const struct dc_elf_syms *s, const char *name);
/* Defined, exported functions, for `functions: all`. */
size_t dc_elf_count(const struct dc_elf_syms *s);
const char *dc_elf_name(const struct dc_elf_syms *s, size_t i);
void dc_elf_close(struct dc_elf_syms *s);
/* The shared object's own name (DT_SONAME) of the file open at fd into
 * out: 0, or -1 for none. */
int dc_elf_soname(int fd, char *out, size_t outlen);

/* A uprobe takes a file offset: that of addr in the executable loadable
 * segment holding it, or -1. */
long dc_elf_file_offset(Elf *elf, GElf_Addr addr);

#endif
