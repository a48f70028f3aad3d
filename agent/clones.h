/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A copy of a loaded BPF program per probe, for the probes the kernel gives
 * no attach cookie (kprobes and uprobes before 5.15, fentry/fexit): the
 * copy's DC_CLONE_COOKIE_MAGIC and DC_CLONE_NARGS_MAGIC constants
 * (dc_event.h) are replaced with the probe's cookie and its function's
 * argument count, and the copy is loaded on its own. Its maps are the
 * original's: their fds are in the instructions libbpf relocated.
 */
#ifndef DC_CLONES_H
#define DC_CLONES_H

#include <linux/types.h>
#include <stddef.h>

struct bpf_program;
struct bpf_insn;

struct dc_clone_src {
	struct bpf_insn *insns;
	size_t n;
	int type;   /* enum bpf_prog_type */
	int attach; /* enum bpf_attach_type */
	char name[16];
};

/* Takes the instructions of a loaded program: 0, or -errno. */
int dc_clone_src_take(struct dc_clone_src *src, const struct bpf_program *prog);
void dc_clone_src_free(struct dc_clone_src *src);

/* How many constants of the two kinds the instructions hold (tests). */
size_t dc_clone_count_magic(const struct bpf_insn *insns, size_t n, __u64 magic);
/* Replaces every ld_imm64 of magic with value; returns how many. */
size_t dc_clone_patch(struct bpf_insn *insns, size_t n, __u64 magic, __u64 value);

/* Loads a copy with these values (btf_id, btf_obj_fd: an fentry/fexit
 * target, else 0): the program's fd, or -errno with the verifier's last
 * line in why (may be NULL). */
int dc_clone_load(const struct dc_clone_src *src, __u64 cookie, __u64 nargs, __u32 btf_id, int btf_obj_fd,
		  char *why, size_t whylen);

#endif
