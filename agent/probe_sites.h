/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where to put a function's uprobe. A uprobe on an instruction the kernel
 * emulates (push reg, jmp/jcc/call rel, nop) costs one int3 trap; on any other
 * it costs the trap plus a single-step trap, four to fifteen times as much on
 * the machines measured. Many library functions begin with an instruction of
 * the second kind followed, within a few instructions, by one of the first:
 * placing the probe there, when nothing before it moved rsp or lost an
 * argument read and no branch in the object lands between the entry and it,
 * observes the same call for a fraction of the cost. An argument the prefix
 * moves to another argument register (mov rsi, rdi) is read where it went.
 * Instructions are decoded with capstone.
 */
#ifndef DC_PROBE_SITES_H
#define DC_PROBE_SITES_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

/* Why a site was chosen: X(name, text). */
#define DC_SITE_REASONS(X)                                                                       \
	X(ENTRY_EMULATED, "the entry instruction is emulated")                                   \
	X(PREFIX_EMULATED, "first emulated instruction; rsp and the arguments are unchanged")    \
	X(PREFIX_MOVED, "first emulated instruction; rsp unchanged, arguments read where the prefix moved them") \
	X(ENTRY_NO_EMULATED, "no emulated instruction before the first branch")                  \
	X(ENTRY_RSP, "rsp moves before the first emulated instruction")                          \
	X(ENTRY_ARGS, "an argument register is written before the first emulated instruction") \
	X(ENTRY_STACK, "the return address may be written before the first emulated instruction") \
	X(ENTRY_BRANCH_IN, "a branch or symbol lands inside the prefix")                         \
	X(ENTRY_UNDECODED, "the entry could not be decoded")                                     \
	X(ENTRY_NO_CODE, "the object's code could not be analysed")                              \
	X(UNPROBEABLE, "the kernel refuses to probe the entry instruction (a lock or segment prefix)")

enum dc_site_reason {
#define DC_SITE_ENUM(name, text) DC_SITE_##name,
	DC_SITE_REASONS(DC_SITE_ENUM)
#undef DC_SITE_ENUM
	DC_NR_SITE_REASONS,
};

struct dc_site {
	unsigned long offset;      /* file offset of the probe */
	enum dc_site_reason reason;
	char insn[40];             /* the instruction at the site */
	/* Where C argument i+1 is at the site: the argument register position
	 * (1-6: rdi, rsi, rdx, rcx, r8, r9) that holds it; i+1 unless the prefix
	 * moved it. Meaningful for the arguments asked for. */
	unsigned char argpos[6];
};

/* An object's executable code, decoded once: every branch target known. */
struct dc_code;

/* NULL with err set when the file is not an x86-64 ELF object or has no
 * code. cache_dir (NULL: none) keeps what the decode found per build id. */
struct dc_code *dc_code_open(const char *path, const char *cache_dir, char *err, size_t errlen);
/* The build id as hex ("" when the object has none). */
const char *dc_code_build_id(const struct dc_code *c);
/*
 * The site for the function at file offset `entry`. `argregs` has bit i-1 set
 * for each C argument position i (1-6) the probe reads at entry. With c NULL,
 * the entry.
 */
void dc_code_site(const struct dc_code *c, unsigned long entry, unsigned argregs, struct dc_site *out);
void dc_code_free(struct dc_code *c);

const char *dc_site_reason_text(enum dc_site_reason r);

/* A probe's cookie names, per slot, the C argument position (1-6) that
 * holds what the slot reads (dc_event.h). The argument registers it reads
 * (argregs for dc_code_site), and the cookie's slots rewritten to where the
 * site found each argument. */
unsigned dc_site_argregs(__u64 slots);
__u64 dc_site_slots(__u64 slots, const struct dc_site *site);

#endif
