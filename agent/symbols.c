// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbols.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hashtab.h"

/* ---- library lookup ---- */

static bool try_dir(const char *dir, size_t len, const char *name, char *out, size_t outlen)
{
	char path[PATH_MAX];

	if (!len || (size_t)snprintf(path, sizeof(path), "%.*s/%s", (int)len, dir, name) >= sizeof(path))
		return false;
	if (access(path, R_OK) != 0 || !realpath(path, out) || strlen(out) >= outlen)
		return false;
	return true;
}

static bool try_dir_list(const char *list, const char *seps, const char *name, char *out, size_t outlen)
{
	for (const char *d = list; d && *d;) {
		size_t len = strcspn(d, seps);

		if (try_dir(d, len, name, out, outlen))
			return true;
		d += len;
		d += strspn(d, seps);
	}
	return false;
}

/* ld.so.conf: one directory a line, `include GLOB` lines, # comments. */
static bool try_ld_conf(const char *conf, const char *name, char *out, size_t outlen, int depth)
{
	char line[PATH_MAX];
	bool found = false;
	FILE *f;

	if (depth > 4 || !(f = fopen(conf, "r")))
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");

		s[strcspn(s, "#\r\n")] = 0;
		if (strncmp(s, "include", 7) == 0 && (s[7] == ' ' || s[7] == '\t')) {
			glob_t g;

			s += 8 + strspn(s + 8, " \t");
			if (glob(s, 0, NULL, &g) == 0)
				for (size_t i = 0; !found && i < g.gl_pathc; i++)
					found = try_ld_conf(g.gl_pathv[i], name, out, outlen, depth + 1);
			globfree(&g);
			continue;
		}
		found = try_dir_list(s, " \t,:", name, out, outlen);
	}
	fclose(f);
	return found;
}

int dc_find_library(const char *name, char *out, size_t outlen)
{
	static const char defaults[] =
		"/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib";

	if (strchr(name, '/')) {
		if (access(name, R_OK) != 0 || !realpath(name, out))
			return -1;
		return 0;
	}
	if (try_dir_list(getenv("LD_LIBRARY_PATH"), ":;", name, out, outlen) ||
	    try_ld_conf("/etc/ld.so.conf", name, out, outlen, 0) ||
	    try_dir_list(defaults, ":", name, out, outlen))
		return 0;
	return -1;
}

/* ---- symbols ---- */

struct sym {
	char *name;
	long offset;
};

struct dc_elf_syms {
	struct sym *syms;
	size_t n, cap;
	size_t exported; /* syms[0..exported) came from .dynsym */
	struct dc_hashtab *by_name; /* (hash, probe) -> index */
};

static int add_sym(struct dc_elf_syms *s, const char *name, long offset)
{
	uint64_t h = dc_hash_string(name), probe = 0, idx;

	while (dc_hashtab_get(s->by_name, h, probe, &idx)) {
		if (strcmp(s->syms[idx].name, name) == 0)
			return 0; /* first definition wins (.dynsym is read first) */
		probe++;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct sym *v = realloc(s->syms, cap * sizeof(*v));

		if (!v)
			return -1;
		s->syms = v;
		s->cap = cap;
	}
	if (!(s->syms[s->n].name = strdup(name)))
		return -1;
	s->syms[s->n].offset = offset;
	return dc_hashtab_put(s->by_name, h, probe, s->n++);
}

long dc_elf_file_offset(Elf *elf, GElf_Addr addr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz)
			return addr - ph.p_vaddr + ph.p_offset;
	}
	return -1;
}

static int read_symtab(struct dc_elf_syms *s, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < count; i++) {
		GElf_Sym sym;
		const char *name;
		int type;
		long off;

		if (!gelf_getsym(data, i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		/* An IFUNC symbol is its resolver, run once at load: not the call. */
		if (type != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_BIND(sym.st_info) == STB_LOCAL || sym.st_value == 0)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		/* _init/_fini are the loader's hooks, run outside any call of the library's API. */
		if (!name || !*name || !strcmp(name, "_init") || !strcmp(name, "_fini") ||
		    (off = dc_elf_file_offset(elf, sym.st_value)) < 0)
			continue;
		if (add_sym(s, name, off))
			return -1;
	}
	return 0;
}

static int read_symbols(struct dc_elf_syms *s, Elf *elf)
{
	/* .dynsym first: its names are what a program links against. */
	static const Elf64_Word kinds[] = { SHT_DYNSYM, SHT_SYMTAB };

	for (size_t k = 0; k < 2; k++) {
		for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == kinds[k] && read_symtab(s, elf, scn, &sh))
				return -1;
		}
		if (k == 0)
			s->exported = s->n;
	}
	return 0;
}

struct dc_elf_syms *dc_elf_open(const char *path, char *err, size_t errlen)
{
	struct dc_elf_syms *s = calloc(1, sizeof(*s));
	Elf *elf = NULL;
	int fd = -1;

	if (!s || !(s->by_name = dc_hashtab_new(4096))) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		goto fail;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		goto fail;
	}
	if (read_symbols(s, elf)) {
		snprintf(err, errlen, "%s: out of memory reading symbols", path);
		goto fail;
	}
	elf_end(elf);
	close(fd);
	return s;
fail:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	dc_elf_close(s);
	return NULL;
}

long dc_elf_offset(const struct dc_elf_syms *s, const char *name)
{
	uint64_t h = dc_hash_string(name), probe = 0, idx;

	while (dc_hashtab_get(s->by_name, h, probe, &idx)) {
		if (strcmp(s->syms[idx].name, name) == 0)
			return s->syms[idx].offset;
		probe++;
	}
	return -1;
}

size_t dc_elf_count(const struct dc_elf_syms *s)
{
	return s->exported;
}

const char *dc_elf_name(const struct dc_elf_syms *s, size_t i)
{
	return i < s->exported ? s->syms[i].name : NULL;
}

void dc_elf_close(struct dc_elf_syms *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->syms[i].name);
	free(s->syms);
	dc_hashtab_free(s->by_name);
	free(s);
}

/* DT_SONAME of the dynamic section of elf, or NULL. */
static const char *soname_of(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getdyn(d, (int)i, &dyn); i++)
			if (dyn.d_tag == DT_SONAME)
				return elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
	}
	return NULL;
}

int dc_elf_soname(int fd, char *out, size_t outlen)
{
	const char *name = NULL;
	Elf *elf = NULL;

	*out = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	/* Read, not mapped: a file its owner shortens meanwhile gives an
	 * error here, not SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		name = soname_of(elf);
	if (name)
		snprintf(out, outlen, "%s", name);
	if (elf)
		elf_end(elf);
	return name ? 0 : -1;
}
