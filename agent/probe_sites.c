// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probe_sites.h"
#include "probe_sites_int.h"
#include "site_cache.h"
#include "symbols.h"
#include "dc_event.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <capstone/capstone.h>

static const char *const reason_text[] = {
#define DC_SITE_TEXT(name, text) text,
	DC_SITE_REASONS(DC_SITE_TEXT)
#undef DC_SITE_TEXT
};
_Static_assert(sizeof(reason_text) / sizeof(reason_text[0]) == DC_NR_SITE_REASONS,
	       "one text per site reason");

const char *dc_site_reason_text(enum dc_site_reason r)
{
	return r < DC_NR_SITE_REASONS ? reason_text[r] : "?";
}

const char *dc_code_build_id(const struct dc_code *c)
{
	return c ? c->build_id : "";
}

static int add_target(struct dc_code *c, uint64_t off)
{
	if (c->ntargets == c->cap_targets) {
		size_t cap = c->cap_targets ? c->cap_targets * 2 : 65536;
		uint64_t *v = realloc(c->targets, cap * sizeof(*v));

		if (!v)
			return -1;
		c->targets = v;
		c->cap_targets = cap;
	}
	c->targets[c->ntargets++] = off;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool dc_code_target_in(const struct dc_code *c, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = c->ntargets;

	while (a < b) { /* first target > lo */
		size_t m = a + (b - a) / 2;

		if (c->targets[m] <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < c->ntargets && c->targets[a] <= hi;
}

const struct segment *dc_code_segment(const struct dc_code *c, unsigned long off)
{
	for (size_t i = 0; i < c->nsegs; i++)
		if (off >= c->segs[i].start && off < c->segs[i].start + c->segs[i].size)
			return &c->segs[i];
	return NULL;
}

/*
 * The targets one instruction names: a relative jump or call, or a
 * RIP-relative operand (a function pointer taken with lea, a jump table).
 * Offsets are file offsets: decoding runs at file offsets and every target
 * that matters lies in the same executable segment.
 */
static int note_targets(struct dc_code *c, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_IMM &&
		    (cs_insn_group(c->cs, insn, CS_GRP_JUMP) || cs_insn_group(c->cs, insn, CS_GRP_CALL))) {
			if (add_target(c, (uint64_t)op->imm))
				return -1;
		} else if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP) {
			if (add_target(c, insn->address + insn->size + op->mem.disp))
				return -1;
		}
	}
	return 0;
}

/* A linear sweep of every executable segment; an undecodable byte is skipped. */
static int sweep(struct dc_code *c)
{
	cs_insn *insn = cs_malloc(c->cs);

	if (!insn)
		return -1;
	for (size_t s = 0; s < c->nsegs; s++) {
		const uint8_t *code = c->map + c->segs[s].start;
		size_t size = c->segs[s].size;
		uint64_t addr = c->segs[s].start;

		while (size) {
			if (!cs_disasm_iter(c->cs, &code, &size, &addr, insn)) {
				code++;
				size--;
				addr++;
				continue;
			}
			if (note_targets(c, insn)) {
				cs_free(insn, 1);
				return -1;
			}
		}
	}
	cs_free(insn, 1);
	return 0;
}

/* Every function symbol's start is a target too: a function that begins
 * inside another's prefix is entered there. */
static int symbol_targets(struct dc_code *c, Elf *elf)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			long off;

			if (!gelf_getsym(data, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_NOTYPE &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			if ((off = dc_elf_file_offset(elf, sym.st_value)) >= 0 && add_target(c, off))
				return -1;
		}
	}
	return 0;
}

static void read_build_id(struct dc_code *c, Elf *elf)
{
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		Elf_Data *data;
		size_t pos = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(data = elf_getdata(scn, NULL)))
			continue;
		while ((pos = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
			const unsigned char *d = (const unsigned char *)data->d_buf + desc_off;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_off, "GNU", 4))
				continue;
			for (size_t i = 0; i < nh.n_descsz && i < 20; i++)
				sprintf(c->build_id + 2 * i, "%02x", d[i]);
			return;
		}
	}
}

static int read_segments(struct dc_code *c, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	c->segs = calloc(n ? n : 1, sizeof(*c->segs));
	if (!c->segs)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) ||
		    ph.p_offset > c->map_len || ph.p_filesz > c->map_len - ph.p_offset)
			continue;
		c->segs[c->nsegs++] = (struct segment){ ph.p_offset, ph.p_filesz };
	}
	return c->nsegs ? 0 : -1;
}

/* Sorted, each once, and only those inside the object (a prefix lies
 * there): what the cache keeps. */
static void sort_targets(struct dc_code *c)
{
	size_t out = 0;

	qsort(c->targets, c->ntargets, sizeof(*c->targets), cmp_u64);
	for (size_t i = 0; i < c->ntargets && c->targets[i] < c->map_len; i++)
		if (!out || c->targets[i] != c->targets[out - 1])
			c->targets[out++] = c->targets[i];
	c->ntargets = out;
}

static int analyse(struct dc_code *c, const char *cache_dir, char *err, size_t errlen, const char *path)
{
	Elf *elf = elf_memory((char *)c->map, c->map_len);
	GElf_Ehdr eh;
	int rc = -1;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) {
		snprintf(err, errlen, "%s: not an x86-64 ELF object", path);
		goto out;
	}
	if (read_segments(c, elf)) {
		snprintf(err, errlen, "%s: no executable segment", path);
		goto out;
	}
	read_build_id(c, elf);
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &c->cs) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone cannot decode x86-64");
		goto out;
	}
	cs_option(c->cs, CS_OPT_DETAIL, CS_OPT_ON);
	/* The whole object's decode is kept per build (site_cache.c). */
	if (dc_site_cache_load(cache_dir, c->build_id, c->map_len, &c->targets, &c->ntargets) == 0) {
		c->cap_targets = c->ntargets;
		rc = 0;
		goto out;
	}
	if (sweep(c) || symbol_targets(c, elf)) {
		snprintf(err, errlen, "%s: out of memory decoding its code", path);
		goto out;
	}
	sort_targets(c);
	dc_site_cache_store(cache_dir, c->build_id, c->map_len, c->targets, c->ntargets);
	rc = 0;
out:
	if (elf)
		elf_end(elf);
	return rc;
}

struct dc_code *dc_code_open(const char *path, const char *cache_dir, char *err, size_t errlen)
{
	struct dc_code *c = calloc(1, sizeof(*c));
	struct stat st;
	int fd;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		free(c);
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		snprintf(err, errlen, "%s: %s", path, fd < 0 ? strerror(errno) : "not a regular, non-empty file");
		if (fd >= 0)
			close(fd);
		free(c);
		return NULL;
	}
	c->map_len = st.st_size;
	/*
	 * Shared, not private: the kernel puts every registered uprobe's int3
	 * into each private mapping of the file that may execute, and a
	 * read-only private one may. While another agent's probes are on the
	 * library (its job, or its detach still under way) the bytes decoded
	 * would be its breakpoints. A shared mapping is the file as it is.
	 */
	c->map = mmap(NULL, c->map_len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (c->map == MAP_FAILED) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(c);
		return NULL;
	}
	if (analyse(c, cache_dir, err, errlen, path)) {
		dc_code_free(c);
		return NULL;
	}
	return c;
}

void dc_code_free(struct dc_code *c)
{
	if (!c)
		return;
	if (c->cs)
		cs_close(&c->cs);
	if (c->map && c->map != MAP_FAILED)
		munmap(c->map, c->map_len);
	free(c->segs);
	free(c->targets);
	free(c);
}

/* ---- a probe's cookie and its site ---- */

/* The C argument registers a probe reads at entry (bit i-1 for position i). */
unsigned dc_site_argregs(__u64 slots)
{
	unsigned regs = 0;

	for (int s = 0; s < DC_NR_SLOTS; s++) {
		unsigned pos = DC_COOKIE_SLOT(slots, s);

		if (pos >= 1 && pos <= 6)
			regs |= 1u << (pos - 1);
	}
	return regs;
}

/* The cookie's argument positions, as the site finds them (a prefix may move
 * an argument to another register before the site). */
__u64 dc_site_slots(__u64 slots, const struct dc_site *site)
{
	for (int s = 0; s < DC_NR_SLOTS; s++) {
		unsigned pos = DC_COOKIE_SLOT(slots, s);

		if (pos >= 1 && pos <= 6)
			slots = DC_COOKIE_SET_SLOT(slots, s, site->argpos[pos - 1]);
	}
	return slots;
}
