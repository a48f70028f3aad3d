/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel functions a kernel: probe set may name: those the kernel lets
 * be traced (tracefs' available_filter_functions: not notrace, not inlined
 * away; /proc/kallsyms where that list cannot be read), and each one's BTF
 * (vmlinux's or its module's), which fentry/fexit need.
 */
#ifndef DC_KSYMS_H
#define DC_KSYMS_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

#include "config.h"

struct dc_ksyms;

/* fentry's trampolines take this many arguments on every kernel we run on. */
#define DC_FENTRY_MAX_ARGS 6

/* NULL with err set when no list of the kernel's functions can be read. */
struct dc_ksyms *dc_ksyms_open(char *err, size_t errlen);
void dc_ksyms_free(struct dc_ksyms *k);

/* Calls fn for every traceable function fn_spec selects (a name, glob or
 * regex), once each, in name order; returns how many. */
size_t dc_ksyms_select(const struct dc_ksyms *k, const struct dc_fn_spec *spec,
		       int (*fn)(void *ctx, const char *name), void *ctx);

/* Where fentry/fexit find a function: its BTF id in vmlinux (btf_fd 0) or
 * in its module's BTF (btf_fd that BTF's fd), and its argument count. */
struct dc_kbtf {
	__u32 btf_id;
	int btf_fd;
	int nargs;
};

/* 0 and where, or -1 when the function has no BTF here. */
int dc_ksyms_btf(struct dc_ksyms *k, const char *name, struct dc_kbtf *out);

/* The first function of the kernel sets that fentry can take (BTF, at
 * most max_args arguments): 0 and its name in out, or -1. */
int dc_ksyms_first_fentry(struct dc_ksyms *k, const struct dc_probe_set *sets, int nsets, int max_args, char *out,
			  size_t outlen);

#endif
