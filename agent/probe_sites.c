// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "probe_sites.h"
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

/* How far into a function a site is looked for. */
#define PREFIX_INSNS 12
#define PREFIX_BYTES 64

/* Executable bytes of the object, in file-offset space. */
struct segment {
	unsigned long start, size;
};

struct dc_code {
	unsigned char *map;
	size_t map_len;
	struct segment *segs;
	size_t nsegs;
	uint64_t *targets; /* sorted file offsets some branch, pointer or symbol names */
	size_t ntargets, cap_targets;
	char build_id[41];
	csh cs;
};

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

/* Whether some target lies in (lo, hi]. */
static bool target_in(const struct dc_code *c, uint64_t lo, uint64_t hi)
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

static const struct segment *segment_of(const struct dc_code *c, unsigned long off)
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
	c->map = mmap(NULL, c->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
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

/* ---- one function's prefix ---- */

/* The 16 general registers, each with its 64-, 32-, 16- and 8-bit names. */
static const x86_reg gprs[16][4] = {
	{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL },
	{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL },
	{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL },
	{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL },
	{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL },
	{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
	{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
	{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL },
	{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B },
	{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
	{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
	{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
	{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
	{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
	{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
	{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
};

/* The general registers of the C arguments 1-6 (System V x86-64): rdi, rsi,
 * rdx, rcx, r8, r9; the order the BPF programs capture them in. */
static const int arg_gpr[6] = { 5, 4, 3, 2, 8, 9 };

/* The general register a register name is part of, or -1. */
static int gpr_of(uint16_t reg)
{
	switch (reg) {
	case X86_REG_AH: return 0;
	case X86_REG_BH: return 1;
	case X86_REG_CH: return 2;
	case X86_REG_DH: return 3;
	default: break;
	}
	for (int g = 0; g < 16; g++)
		for (int k = 0; k < 4; k++)
			if (reg == gprs[g][k])
				return g;
	return -1;
}

/*
 * Where the caller's arguments are while the prefix runs: holds[g] is the C
 * argument (0-5) general register g still holds whole, or -1. A 64-bit
 * register-to-register mov carries an argument along (glibc's stat moves
 * its path from rdi to rsi before it jumps to fstatat); any other write to a
 * register loses what it held.
 */
struct arg_regs {
	signed char holds[16];
};

static void args_at_entry(struct arg_regs *a)
{
	memset(a->holds, -1, sizeof(a->holds));
	for (int i = 0; i < 6; i++)
		a->holds[arg_gpr[i]] = i;
}

static void args_step(struct arg_regs *a, const cs_insn *insn, const uint16_t *wr, int nwr)
{
	const cs_x86 *x = &insn->detail->x86;
	int carried = -1, dst = -1;

	if (insn->id == X86_INS_MOV && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG && x->operands[0].size == 8 && x->operands[1].size == 8) {
		int src = gpr_of(x->operands[1].reg);

		dst = gpr_of(x->operands[0].reg);
		carried = src >= 0 ? a->holds[src] : -1;
	}
	for (int i = 0; i < nwr; i++) {
		int g = gpr_of(wr[i]);

		if (g >= 0)
			a->holds[g] = -1;
	}
	if (dst >= 0)
		a->holds[dst] = carried;
}

/* The argument register position (1-6) holding argument i (0-5), or 0. */
static unsigned char arg_position(const struct arg_regs *a, int i)
{
	if (a->holds[arg_gpr[i]] == i)
		return i + 1;
	for (int p = 0; p < 6; p++)
		if (a->holds[arg_gpr[p]] == i)
			return p + 1;
	return 0;
}

/* Whether every argument in `argregs` is still in some register. */
static bool args_kept(const struct arg_regs *a, unsigned argregs)
{
	for (int i = 0; i < 6; i++) {
		bool found = false;

		if (!(argregs & (1u << i)))
			continue;
		for (int g = 0; g < 16; g++)
			found |= a->holds[g] == i;
		if (!found)
			return false;
	}
	return true;
}

static bool is_rsp(uint16_t reg)
{
	return reg == X86_REG_RSP || reg == X86_REG_ESP || reg == X86_REG_SP || reg == X86_REG_SPL;
}

static bool has_legacy_prefix(const cs_x86 *x)
{
	for (int i = 0; i < 4; i++)
		if (x->prefix[i])
			return true;
	return false;
}

/*
 * The instructions Linux's x86 uprobe code emulates rather than single-steps:
 * relative jmp, jcc and call, nop, and push of a register (arch/x86/kernel/
 * uprobes.c: branch_setup_xol_ops, push_setup_xol_ops). Prefixed forms are
 * left out: the kernel single-steps some of them.
 */
static bool emulated(csh cs, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	if (has_legacy_prefix(x))
		return false;
	switch (insn->id) {
	case X86_INS_NOP:
		return insn->size == 1 && insn->bytes[0] == 0x90;
	case X86_INS_PUSH:
		return x->op_count == 1 && x->operands[0].type == X86_OP_REG && x->operands[0].size == 8 &&
		       (x->rex == 0 || x->rex == 0x41);
	case X86_INS_JCXZ:
	case X86_INS_JECXZ:
	case X86_INS_JRCXZ:
		return false;
	default:
		break;
	}
	if (x->rex)
		return false;
	if (!cs_insn_group(cs, insn, CS_GRP_JUMP) && !cs_insn_group(cs, insn, CS_GRP_CALL))
		return false;
	return x->op_count == 1 && x->operands[0].type == X86_OP_IMM && insn->id != X86_INS_LOOP &&
	       insn->id != X86_INS_LOOPE && insn->id != X86_INS_LOOPNE;
}

/* Control leaves the straight line: nothing after this is reached for sure. */
static bool leaves_line(csh cs, const cs_insn *insn)
{
	return cs_insn_group(cs, insn, CS_GRP_JUMP) || cs_insn_group(cs, insn, CS_GRP_CALL) ||
	       cs_insn_group(cs, insn, CS_GRP_RET) || cs_insn_group(cs, insn, CS_GRP_INT) ||
	       cs_insn_group(cs, insn, CS_GRP_IRET) || insn->id == X86_INS_SYSCALL ||
	       insn->id == X86_INS_SYSENTER || insn->id == X86_INS_HLT || insn->id == X86_INS_UD2;
}

/* A store at or above rsp could overwrite the return address. */
static bool writes_stack_above(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM && (op->access & CS_AC_WRITE) &&
		    (op->mem.base == X86_REG_RSP || op->mem.index == X86_REG_RSP) &&
		    op->mem.disp >= 0)
			return true;
	}
	return false;
}

/* What stops the scan at a non-emulated instruction, or DC_NR_SITE_REASONS
 * if nothing; follows the arguments through it. */
static enum dc_site_reason blocker(csh cs, const cs_insn *insn, unsigned argregs, struct arg_regs *args)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (leaves_line(cs, insn))
		return DC_SITE_ENTRY_NO_EMULATED;
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return DC_SITE_ENTRY_UNDECODED;
	for (int i = 0; i < nwr; i++)
		if (is_rsp(wr[i]))
			return DC_SITE_ENTRY_RSP;
	args_step(args, insn, wr, nwr);
	if (!args_kept(args, argregs))
		return DC_SITE_ENTRY_ARGS;
	if (writes_stack_above(insn))
		return DC_SITE_ENTRY_STACK;
	return DC_NR_SITE_REASONS;
}

static void describe(struct dc_site *out, const cs_insn *insn)
{
	snprintf(out->insn, sizeof(out->insn), "%.12s%s%.26s", insn->mnemonic, insn->op_str[0] ? " " : "",
		 insn->op_str);
}

/* At an emulated instruction after the entry: the site, if every argument
 * read is in an argument register there. */
static void take_site(const struct dc_code *c, const cs_insn *insn, unsigned long entry, unsigned argregs,
		      const struct arg_regs *args, struct dc_site *out)
{
	bool moved = false;

	if (target_in(c, entry, insn->address)) {
		out->reason = DC_SITE_ENTRY_BRANCH_IN;
		return;
	}
	for (int i = 0; i < 6; i++) {
		if (!(argregs & (1u << i)))
			continue;
		if (!(out->argpos[i] = arg_position(args, i))) {
			for (int k = 0; k < 6; k++)
				out->argpos[k] = k + 1;
			out->reason = DC_SITE_ENTRY_ARGS;
			return;
		}
		moved |= out->argpos[i] != i + 1;
	}
	out->offset = insn->address;
	out->reason = moved ? DC_SITE_PREFIX_MOVED : DC_SITE_PREFIX_EMULATED;
	describe(out, insn);
}

void dc_code_site(const struct dc_code *c, unsigned long entry, unsigned argregs, struct dc_site *out)
{
	const struct segment *seg = c ? segment_of(c, entry) : NULL;
	const uint8_t *code;
	size_t size;
	uint64_t addr = entry;
	struct arg_regs args;
	cs_insn *insn;

	*out = (struct dc_site){ .offset = entry, .reason = DC_SITE_ENTRY_NO_CODE };
	for (int k = 0; k < 6; k++)
		out->argpos[k] = k + 1;
	if (!seg || !(insn = cs_malloc(c->cs)))
		return;
	code = c->map + entry;
	size = seg->start + seg->size - entry;
	if (size > PREFIX_BYTES)
		size = PREFIX_BYTES;
	args_at_entry(&args);
	out->reason = DC_SITE_ENTRY_UNDECODED;
	for (int n = 0; n < PREFIX_INSNS; n++) {
		enum dc_site_reason why;

		if (!cs_disasm_iter(c->cs, &code, &size, &addr, insn))
			break;
		if (n == 0)
			describe(out, insn);
		if (emulated(c->cs, insn)) {
			if (n == 0)
				out->reason = DC_SITE_ENTRY_EMULATED;
			else
				take_site(c, insn, entry, argregs, &args, out);
			break;
		}
		if ((why = blocker(c->cs, insn, argregs, &args)) != DC_NR_SITE_REASONS) {
			out->reason = why;
			break;
		}
		out->reason = DC_SITE_ENTRY_NO_EMULATED;
	}
	cs_free(insn, 1);
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
