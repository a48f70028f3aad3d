// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where a function's uprobe goes (probe_sites.h): its first instructions
 * are followed until one the kernel emulates, while rsp, the arguments
 * read and the return address's slot are unchanged and no branch lands
 * between.
 */
#include "probe_sites.h"
#include "probe_sites_int.h"

#include <stdio.h>
#include <string.h>

/* How far into a function a site is looked for. */
#define PREFIX_INSNS 12
#define PREFIX_BYTES 64

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
 * An instruction Linux's x86 uprobe code refuses to probe at all: one with
 * a lock prefix or an ES, CS, SS or DS segment override (arch/x86/kernel/
 * uprobes.c: is_prefix_bad). uprobe_multi refuses a whole link for one,
 * so such a function is left out before the kernel is asked.
 */
static bool refused_by_kernel(const cs_insn *insn)
{
	for (int i = 0; i < 4; i++)
		switch (insn->detail->x86.prefix[i]) {
		case X86_PREFIX_LOCK:
		case X86_PREFIX_ES:
		case X86_PREFIX_CS:
		case X86_PREFIX_SS:
		case X86_PREFIX_DS:
			return true;
		default:
			break;
		}
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

	if (dc_code_target_in(c, entry, insn->address)) {
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
	const struct segment *seg = c ? dc_code_segment(c, entry) : NULL;
	const uint8_t *code;
	size_t size;
	uint64_t addr = entry;
	struct arg_regs args;
	bool entry_refused = false;
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
		if (n == 0) {
			describe(out, insn);
			entry_refused = refused_by_kernel(insn);
		}
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
	if (entry_refused && out->offset == entry)
		out->reason = DC_SITE_UNPROBEABLE;
	cs_free(insn, 1);
}

